package traces

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/bkcheck/bkcheck/spec"
)

func itfTraces(tt *testing.T) []*Trace {
	var out []*Trace
	base := spec.DefaultParams()
	out = append(out, walk(tt, base,
		[]spec.ActionKind{spec.ClientCreatesLedger, spec.ClientSendsAddEntryRequests, spec.BookieSendsAddConfirmedResponse, spec.ClientReceivesAddConfirmedResponse, spec.ClientStartsRecovery},
		[]spec.Bookies{0, 0b10, 0, 0, 0}))
	striped := spec.Params{Bookies: 4, Clients: 2, Ensemble: 3, WriteQuorum: 2, AckQuorum: 1, Entries: 2, Inflight: 2, Variant: "gwq", Crashes: 1, DataLoss: 1, DataLossMode: "limbo"}
	out = append(out, walk(tt, striped,
		[]spec.ActionKind{spec.ClientCreatesLedger, spec.ClientSendsAddEntryRequests, spec.BookieCrashes, spec.BookieSendsAddConfirmedResponse, spec.BookieLosesData},
		[]spec.Bookies{0, 0, 0, 0, 0}))
	return out
}

func TestITFRoundTrip(t *testing.T) {
	for _, tr := range itfTraces(t) {
		var buf bytes.Buffer
		if err := EncodeITF(&buf, tr); err != nil {
			t.Fatal(err)
		}
		got, err := DecodeITF(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("%v: %v", tr.Params, err)
		}
		want := *tr
		if want.Params.Variant == "" {
			want.Params.Variant = "reference"
		}
		if diff := cmp.Diff(&want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%v: round trip differs (-want +got):\n%s", tr.Params, diff)
		}
		for _, want := range []string{`"#set"`, `"#map"`, `"mbt::actionTaken"`, `"mbt::nondetPicks"`, `"#meta"`, `"vars"`} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("ITF lacks %s", want)
			}
		}
	}
}

func TestITFMalformed(t *testing.T) {
	var buf bytes.Buffer
	EncodeITF(&buf, itfTraces(t)[0])
	good := buf.String()
	for name, in := range map[string]string{
		"empty":       "",
		"not json":    "{",
		"no states":   strings.Replace(good, `"states"`, `"nostates"`, 1),
		"bad status":  strings.Replace(good, `"STATUS_OPEN"`, `"STATUS_MAYBE"`, 1),
		"bad bookie":  strings.Replace(good, `"b2"`, `"b9"`, 1),
		"bad action":  strings.Replace(good, `"ClientCreatesLedger"`, `"ClientEatsLedger"`, 1),
		"not bkcheck": strings.Replace(good, `"source": "bkcheck"`, `"source": "tlc"`, 1),
	} {
		if _, err := DecodeITF(strings.NewReader(in)); err == nil || !errors.Is(err, ErrITF) {
			t.Errorf("%s: got %v, want an ErrITF", name, err)
		}
	}
}

func FuzzDecodeITF(f *testing.F) {
	// The gallery's traces are the seeds: real bkcheck output.
	seeds, _ := filepath.Glob("../docs/traces/*.itf.json")
	for _, path := range seeds {
		if b, err := os.ReadFile(path); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"#meta":{"source":"bkcheck"},"states":[]}`))
	// A small valid trace, so mutations stay cheap.
	var small bytes.Buffer
	m, _ := spec.NewModel(spec.DefaultParams())
	init := m.Init()
	EncodeITF(&small, &Trace{Params: spec.DefaultParams(), Invariant: "TypeOK", Steps: []Step{{Initial: true, State: init}}})
	f.Add(small.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := DecodeITF(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := EncodeITF(&buf, tr); err != nil {
			t.Fatal(err)
		}
	})
}

// TestITFMutationsNeverPanic: thousands of byte-level mutations of a real
// trace decode to a trace or a clear ErrITF, never a panic; what decodes
// encodes again. (A deterministic complement to FuzzDecodeITF.)
func TestITFMutationsNeverPanic(t *testing.T) {
	b, err := os.ReadFile("../docs/traces/below-qw-ensemble-change.itf.json")
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(1)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	decoded := 0
	for i := 0; i < 3000; i++ {
		m := bytes.Clone(b)
		for k := 0; k < 1+next(4); k++ {
			m[next(len(m))] = "0123456789{}[]\",:-eE. abtfnul"[next(29)]
		}
		tr, err := DecodeITF(bytes.NewReader(m))
		if err != nil {
			if !errors.Is(err, ErrITF) {
				t.Fatalf("mutation %d: error %v does not wrap ErrITF", i, err)
			}
			continue
		}
		decoded++
		if err := EncodeITF(io.Discard, tr); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d of 3000 mutations still decoded", decoded)
}
