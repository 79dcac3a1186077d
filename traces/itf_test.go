package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
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
	striped := spec.Params{Bookies: 4, Clients: 2, Ensemble: 3, WriteQuorum: 2, AckQuorum: 1, Entries: 2, Inflight: 2, Variant: "gwq", Crashes: 1, Reformat: 1, DataIntegrity: true, ReformatCookie: spec.CookieKept}
	out = append(out, walk(tt, striped,
		[]spec.ActionKind{spec.ClientCreatesLedger, spec.ClientSendsAddEntryRequests, spec.BookieCrashes, spec.BookieSendsAddConfirmedResponse, spec.BookieRejoinsEmpty},
		[]spec.Bookies{0, 0, 0, 0, 0}))
	return out
}

func TestITFRoundTrip(t *testing.T) {
	for _, tr := range itfTraces(t) {
		var buf bytes.Buffer
		if err := EncodeITF(&buf, tr); err != nil {
			t.Fatal(err)
		}
		got, err := DecodeITF(bytes.NewReader(buf.Bytes()), spec.ResolveTrace)
		if err != nil {
			t.Fatalf("%v: %v", tr.Model.Params(), err)
		}
		wp, _ := spec.ParamsOf(tr.Model)
		gp, _ := spec.ParamsOf(got.Model)
		if wp.Variant == "" {
			wp.Variant = "reference"
		}
		if diff := cmp.Diff(wp, gp); diff != "" {
			t.Fatalf("%v: parameters differ (-want +got):\n%s", tr.Model.Params(), diff)
		}
		want, back := *tr, *got
		want.Model, back.Model = nil, nil
		if diff := cmp.Diff(&want, &back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%v: round trip differs (-want +got):\n%s", tr.Model.Params(), diff)
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
		"empty":        "",
		"not json":     "{",
		"no states":    strings.Replace(good, `"states"`, `"nostates"`, 1),
		"bad status":   strings.Replace(good, `"STATUS_OPEN"`, `"STATUS_MAYBE"`, 1),
		"bad bookie":   strings.Replace(good, `"b2"`, `"b9"`, 1),
		"bad action":   strings.Replace(good, `"ClientCreatesLedger"`, `"ClientEatsLedger"`, 1),
		"not bkcheck":  strings.Replace(good, `"source": "bkcheck"`, `"source": "tlc"`, 1),
		"first action": strings.Replace(good, `"mbt::actionTaken": "init"`, `"mbt::actionTaken": "ClientCreatesLedger"`, 1),
	} {
		if _, err := DecodeITF(strings.NewReader(in), spec.ResolveTrace); err == nil || !errors.Is(err, ErrITF) {
			t.Errorf("%s: got %v, want an ErrITF", name, err)
		}
	}
}

// fuzzSeeds returns FuzzDecodeITF's seed corpus: small, compact ITF
// documents. The gallery's traces are 20-96 KB of indented JSON; seeded with
// them, every input that finds new coverage is a mutant of that size, and Go's
// coverage-preserving minimisation (quadratic in the input's length, up to
// -fuzzminimizetime, 60s by default, per input) then occupies the workers for
// the whole run: `-fuzztime 10s` reports "execs: N (0/sec)" and barely fuzzes.
// So each gallery trace contributes only its last two states (the richest
// ones: messages, fragments, pending ops, read responses), re-encoded
// without indentation, which keeps its parameters and an action.
func fuzzSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	add := func(t *Trace) {
		var b, c bytes.Buffer
		if err := EncodeITF(&b, t); err != nil {
			tb.Fatal(err)
		}
		if err := json.Compact(&c, b.Bytes()); err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, c.Bytes())
	}
	paths, _ := filepath.Glob("../docs/traces/*.itf.json")
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		t, err := DecodeITF(bytes.NewReader(b), spec.ResolveTrace)
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		if n := len(t.Steps); n > 2 {
			t.Steps = t.Steps[n-2:]
			t.Steps[0].Initial, t.Steps[0].Action = true, spec.Action{}
		}
		add(t)
	}
	seeds = append(seeds, []byte(emptyTraceSeed))
	m, err := spec.NewModel(spec.DefaultParams())
	if err != nil {
		tb.Fatal(err)
	}
	add(&Trace{Model: spec.Vocabulary(m.P), Invariant: "TypeOK", Steps: []Step{{Initial: true, State: m.Init()}}})
	return seeds
}

// emptyTraceSeed is an invalid document (no states) among the seeds.
const emptyTraceSeed = `{"#meta":{"source":"bkcheck"},"states":[]}`

// maxFuzzSeed bounds the size of FuzzDecodeITF's seeds (see fuzzSeeds).
const maxFuzzSeed = 8 << 10

func TestFuzzSeedsSmallAndValid(t *testing.T) {
	seeds := fuzzSeeds(t)
	if len(seeds) < 3 {
		t.Fatalf("only %d seeds", len(seeds))
	}
	for i, b := range seeds {
		if len(b) > maxFuzzSeed {
			t.Errorf("seed %d is %d bytes, want at most %d: large seeds make the fuzzer spend its time minimising", i, len(b), maxFuzzSeed)
		}
		if string(b) == emptyTraceSeed {
			continue // invalid on purpose
		}
		if _, err := DecodeITF(bytes.NewReader(b), spec.ResolveTrace); err != nil {
			t.Errorf("seed %d does not decode: %v", i, err)
		}
	}
}

// fuzzMinimize is FuzzDecodeITF's -fuzzminimizetime unless one is given.
// Go's default, 60s per input that finds new coverage, is spent in a
// minimiser that is quadratic in the input's length and whose executions are
// reported only when it finishes; on multi-KB JSON it uses the whole budget,
// so `-fuzztime 10s` showed "execs: N (0/sec)" throughout. A bounded count
// keeps minimisation to a fraction of a second per input.
const fuzzMinimize = "2000x"

func FuzzDecodeITF(f *testing.F) {
	explicit := false
	flag.Visit(func(fl *flag.Flag) { explicit = explicit || fl.Name == "test.fuzzminimizetime" })
	if !explicit && flag.Lookup("test.fuzzminimizetime") != nil {
		if err := flag.Set("test.fuzzminimizetime", fuzzMinimize); err != nil {
			f.Fatal(err)
		}
	}
	for _, b := range fuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := DecodeITF(bytes.NewReader(data), spec.ResolveTrace)
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
		tr, err := DecodeITF(bytes.NewReader(m), spec.ResolveTrace)
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

// TestDecodeLegacy: a trace written by bkcheck 0.1 (Go field names in
// #meta.params, --data-loss, no 0.2 fault counters) still decodes, with
// 0.1's data loss read as a re-format.
func TestDecodeLegacy(t *testing.T) {
	fh, err := os.Open("testdata/legacy-0.1-data-loss.itf.json")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	tr, err := DecodeITF(fh, spec.ResolveTrace)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := spec.ParamsOf(tr.Model)
	if p.Reformat != 1 || p.DataIntegrity || len(tr.Steps) != 6 {
		t.Fatalf("params %v, %d steps", p, len(tr.Steps))
	}
	found := false
	for _, st := range tr.Steps {
		a, _ := st.Action.(spec.Action)
		found = found || a.Kind == spec.BookieRejoinsEmpty
	}
	if !found {
		t.Error("0.1's BookieLosesData did not decode as BookieRejoinsEmpty")
	}
}

// TestITFReadable: a trace saved with a UTF-8 byte-order mark (as some
// Windows editors save JSON) decodes; a JSON document without "#meta" is
// said to be no trace bkcheck wrote, not a JSON error (issue 38, item 13).
func TestITFReadable(t *testing.T) {
	var buf bytes.Buffer
	if err := EncodeITF(&buf, itfTraces(t)[0]); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(doc["#meta"], &meta); err != nil {
		t.Fatal(err)
	}
	delete(meta, "invariant")
	doc["#meta"], _ = json.Marshal(meta)
	noProperty, _ := json.Marshal(doc)
	delete(doc, "#meta")
	noMeta, _ := json.Marshal(doc)
	for _, c := range []struct {
		name, in string
		err      string // "": it decodes
	}{
		{"bom", "\ufeff" + good, ""},
		{"bom and spaces", "\ufeff\n  " + good, ""},
		{"no #meta", string(noMeta), `the file has no "#meta": it is not an ITF trace written by bkcheck, so which model and settings it was checked with are unknown`},
		{"bom, no #meta", "\ufeff" + string(noMeta), `the file has no "#meta"`},
		{"not an object", `[1, 2]`, "not a JSON object"},
		{"no property", string(noProperty), "#meta names no property the last state violates"},
	} {
		tr, err := DecodeITF(strings.NewReader(c.in), spec.ResolveTrace)
		switch {
		case c.err == "" && (err != nil || len(tr.Steps) != 6):
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !errors.Is(err, ErrITF) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: got %v, want an ErrITF saying %q", c.name, err, c.err)
		}
	}
}
