package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec413"
	"github.com/bkcheck/bkcheck/traces"
	"github.com/google/go-cmp/cmp"
)

// v413Config is the two-bookie set of the release-4.13 model on which
// recovery reads that do not fence truncate the ledger (apache/bookkeeper
// #2614), in 16 states.
func v413Config() ModelConfig {
	return ModelConfig{Model: ModelV413, Params: spec.Params{Bookies: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1}}
}

// TestV413TraceReplays: the explorer's counterexample for the v4.13 model
// starts in the initial state, every step is a transition of the model
// with the recorded label, only its last state violates the invariant, and
// its readable form has a step per state.
func TestV413TraceReplays(t *testing.T) {
	rep, err := Run(context.Background(), Config{ModelConfig: v413Config()})
	if err != nil {
		t.Fatal(err)
	}
	v := rep.Violation
	if rep.Status != explorer.Violation || v == nil || v.Invariant != "NoDivergenceBetweenWriterAndMetaData" || len(v.Trace) != 16 || rep.Depth != 16 {
		t.Fatalf("status %v, violation %+v, depth %d; want NoDivergenceBetweenWriterAndMetaData in 16 states", rep.Status, v, rep.Depth)
	}
	if rep.Trace == nil || len(rep.Trace.Steps) != 16 {
		t.Fatal("a v4.13 run gives no trace")
	}
	// Its ITF form reads back as the same trace, which replays.
	path := filepath.Join(t.TempDir(), "v413.itf.json")
	if err := traces.WriteITFFile(path, rep.Trace); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Model.Descriptor().Name != ModelV413 || back.Model.Params() != rep.Trace.Model.Params() {
		t.Fatalf("read back as a trace of %s %s", back.Model.Descriptor().Name, back.Model.Params())
	}
	for i := range back.Steps {
		if !cmp.Equal(back.Steps[i], rep.Trace.Steps[i]) {
			t.Fatalf("step %d reads back differently:\n%s", i+1, cmp.Diff(rep.Trace.Steps[i], back.Steps[i]))
		}
	}
	if err := Replay(back); err != nil {
		t.Fatalf("replay: %v", err)
	}
	// A trace edited to take another path is refused at the edited step.
	edited := *back
	edited.Steps = append([]traces.Step(nil), back.Steps...)
	edited.Steps[5] = back.Steps[7]
	var re *ReplayError
	if err := Replay(&edited); !errors.As(err, &re) || re.Step > 6 {
		t.Fatalf("an edited trace replays: %v", err)
	}
	m, err := newModel413(rep.Config.ModelConfig)
	if err != nil {
		t.Fatal(err)
	}
	init := m.m.Init()
	if string(m.m.Encode(nil, &init)) != string(v.Trace[0].State) {
		t.Fatal("trace does not start in the initial state")
	}
	var prev, scratch spec413.State
	for i := 1; i < len(v.Trace); i++ {
		if err := m.m.Decode(v.Trace[i-1].State, &prev); err != nil {
			t.Fatal(err)
		}
		found := false
		m.m.Next(&prev, &scratch, func(a spec413.Action, s *spec413.State) {
			if toLabel413(a) == v.Trace[i].Action && string(m.m.Encode(nil, s)) == string(v.Trace[i].State) {
				found = true
			}
		})
		if !found {
			t.Fatalf("step %d (%s) is not a transition of the model", i+1, m.DescribeAction(v.Trace[i].Action))
		}
	}
	e := m.NewExpander()
	for i, st := range v.Trace {
		if err := e.Load(st.State); err != nil {
			t.Fatal(err)
		}
		if bad := e.Check() != ""; bad != (i == len(v.Trace)-1) {
			t.Fatalf("step %d: violation=%v", i+1, bad)
		}
	}
	tt := rep.Readable
	if tt == nil || len(tt.Steps) != 16 || !tt.Steps[0].Initial || tt.Steps[15].Action != "W2ClosesLedger" {
		t.Fatalf("readable trace %+v", tt)
	}
	var b strings.Builder
	if err := tt.Render(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Counterexample: 16 states; the last violates NoDivergenceBetweenWriterAndMetaData.",
		"Parameters: model=v4.13 bookies=2 write-quorum=2 ack-quorum=2 entries=1 recovery-reads-fence=false",
		"16. W2ClosesLedger\n     meta_status = STATUS_CLOSED",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("rendered trace lacks %q:\n%s", want, b.String())
		}
	}
}

func TestV413Validate(t *testing.T) {
	withModel := func(f func(c *ModelConfig)) ModelConfig {
		c := ModelConfig{Model: ModelV413, Params: spec.DefaultParams()}
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name string
		c    ModelConfig
		want []string // problems; none for a valid configuration
	}{
		{"the defaults", withModel(func(*ModelConfig) {}), nil},
		{"shared settings only", v413Config(), nil},
		{"the fencing option", withModel(func(c *ModelConfig) { c.RecoveryReadsFence = true }), nil},
		{"its invariants", withModel(func(c *ModelConfig) { c.Invariants = []string{"OnlyValidFragments"} }), nil},
		{"settings it lacks", withModel(func(c *ModelConfig) {
			c.Clients, c.Crashes, c.Variant, c.Symmetry = 3, 1, "gwq", spec.Symmetry{Bookies: true}
		}), []string{"clients: does not apply", "crashes: does not apply", "variant: does not apply", "symmetry: does not apply"}},
		{"the current model's invariants", withModel(func(c *ModelConfig) { c.Invariants = []string{"AllAckedEntriesAreReadable"} }),
			[]string{`invariants: unknown v4.13 invariant AllAckedEntriesAreReadable`}},
		{"too many entries", withModel(func(c *ModelConfig) { c.Entries = 5 }), []string{"entries: must be between 1 and 4"}},
		{"the option with the current model", ModelConfig{Params: spec.DefaultParams(), Options: spec413.Options{RecoveryReadsFence: true}},
			[]string{"recovery-reads-fence: is a setting of --model v4.13"}},
		{"an unknown model", ModelConfig{Model: "v4.12", Params: spec.DefaultParams()}, []string{`model: unknown model "v4.12"; known: current, v4.13`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.EnsureDefaults()
			err := c.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestV413Simulate: random walks run through the same binding; a violating
// walk comes back readable, with a rerun command naming only the model's
// settings.
func TestV413Simulate(t *testing.T) {
	cfg := SimConfig{ModelConfig: v413Config(), Seed: 1, Traces: 20000, Depth: 40, LossRate: 0.2}
	rep, err := Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != explorer.Violation || rep.Readable == nil || rep.Readable.Invariant != "NoDivergenceBetweenWriterAndMetaData" {
		t.Fatalf("status %v after %d walks, want the #2614 violation", rep.Status, rep.Walks)
	}
	want := "bkcheck simulate --model v4.13 --bookies 2 --write-quorum 2 --ack-quorum 2 --entries 1 --invariants "
	if got := rep.RerunCommand(); !strings.HasPrefix(got, want) {
		t.Errorf("rerun command %q, want it to start %q", got, want)
	}
}

// TestV413ExpandDoesNotAllocate: once its buffers have grown, an expander
// of the v4.13 model decodes, checks and expands states without allocating.
func TestV413ExpandDoesNotAllocate(t *testing.T) {
	c := ModelConfig{Model: ModelV413, Params: spec.Params{Bookies: 3, WriteQuorum: 3, AckQuorum: 2, Entries: 1}}
	c.EnsureDefaults()
	m, err := bind(c)
	if err != nil {
		t.Fatal(err)
	}
	encs, e := sampleStates(t, m, 5000)
	succ := 0
	count := func(explorer.Action, []byte, []byte) { succ++ } // made once: the callback's own allocation is not the model's
	expandAll := func() {
		for _, enc := range encs {
			if err := e.Load(enc); err != nil {
				t.Fatal(err)
			}
			e.Check()
			e.Successors(count)
		}
	}
	expandAll()
	if allocs := testing.AllocsPerRun(3, expandAll); allocs != 0 {
		t.Errorf("%v allocations per pass over %d states", allocs, len(encs))
	}
}

// TestV413CELInvariant: a CEL invariant over the v4.13 model's ITF
// variables is checked by the search; its counterexample names it, is
// explained, reads back from its ITF file and replays.
func TestV413CELInvariant(t *testing.T) {
	c := ModelConfig{Model: ModelV413, Params: spec.Params{Bookies: 3, WriteQuorum: 3, AckQuorum: 2, Entries: 1}}
	c.Settings.Invariant = []string{`W1NeverCloses=w1.status != "STATUS_CLOSED"`}
	rep, err := Run(context.Background(), Config{ModelConfig: c})
	if err != nil {
		t.Fatal(err)
	}
	tr := rep.Trace
	if rep.Status != explorer.Violation || tr == nil || tr.Invariant != "W1NeverCloses" || tr.Kind != "invariant" || len(tr.Steps) != 3 {
		t.Fatalf("status %v, trace %+v", rep.Status, tr)
	}
	if len(rep.Properties) != 1 || rep.Properties[0].Status != Violated {
		t.Fatalf("properties %+v", rep.Properties)
	}
	if tr.Explanation == nil || !strings.Contains(strings.Join(tr.Explanation.Lines, "\n"), `w1.status != "STATUS_CLOSED" is false`) {
		t.Fatalf("explanation %+v", tr.Explanation)
	}
	path := filepath.Join(t.TempDir(), "cel.itf.json")
	if err := traces.WriteITFFile(path, tr); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Replay(back); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if ex, err := Explain(back); err != nil || ex == nil || len(ex.Lines) == 0 {
		t.Fatalf("explaining the trace read back: %v %+v", err, ex)
	}
	// A probe gets its shortest witness: w1 acknowledges e1 after 6 steps
	// (create, send, two stores, two acks), on a search without violation.
	c.Settings.Invariant, c.Settings.Probe = nil, []string{"Acked=w1.lac > 0", "Never=w1.lac > 5"}
	c.RecoveryReadsFence = true
	c.Bookies, c.WriteQuorum, c.AckQuorum = 2, 2, 2
	rep, err = Run(context.Background(), Config{ModelConfig: c})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != explorer.OK || len(rep.Properties) != 2 {
		t.Fatalf("status %v, properties %+v", rep.Status, rep.Properties)
	}
	if p := rep.Properties[0]; p.Status != Found || p.Trace == nil || len(p.Trace.Steps) != 7 || p.Trace.Kind != "probe" {
		t.Fatalf("probe Acked: %+v", p)
	}
	if err := Replay(rep.Properties[0].Trace); err != nil {
		t.Fatalf("replaying the witness: %v", err)
	}
	if p := rep.Properties[1]; p.Status != NotReachable {
		t.Fatalf("probe Never: %+v", p)
	}
	// Eventually properties: "the ledger is eventually created" holds (only
	// W1CreatesLedger leaves the initial state); "w1 acknowledges e1" does
	// not (w2 may fence first), and its shortest behaviour that never
	// does replays.
	c.Settings.Probe, c.Settings.Eventually = nil, []string{`Created=meta_status != "Nil"`, "Acked=w1.lac > 0"}
	rep, err = Run(context.Background(), Config{ModelConfig: c})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Properties) != 2 {
		t.Fatalf("properties %+v", rep.Properties)
	}
	acked := rep.Properties[1]
	if acked.Status != Violated || acked.Trace == nil || acked.Trace.Kind != "eventually" {
		t.Fatalf("eventually Acked: %+v", acked)
	}
	if err := Replay(acked.Trace); err != nil {
		t.Fatalf("replaying Acked's counterexample: %v", err)
	}
	c.Settings.Eventually = []string{`Created=meta_status != "Nil"`}
	rep, err = Run(context.Background(), Config{ModelConfig: c})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != explorer.OK || rep.Properties[0].Status != Holds || rep.Properties[0].Graph == nil {
		t.Fatalf("eventually Created: status %v %+v", rep.Status, rep.Properties[0])
	}
}

// TestV413TraceMutationsNeverPanic: a v4.13 trace whose values are
// changed one at a time (numbers out of range, ids of absent bookies,
// other model values) reads back as a trace or a clear ErrITF, and
// replays or is refused, never a panic.
func TestV413TraceMutationsNeverPanic(t *testing.T) {
	rep, err := Run(context.Background(), Config{ModelConfig: v413Config()})
	if err != nil || rep.Trace == nil {
		t.Fatalf("%v %v", err, rep)
	}
	var buf bytes.Buffer
	if err := traces.EncodeITF(&buf, rep.Trace); err != nil {
		t.Fatal(err)
	}
	replacements := []any{json.Number("-1"), json.Number("99"), json.Number("0"), "b9", "w3", "Nil", true, "STATUS_BOGUS", []any{}, map[string]any{}}
	seed := uint64(7)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	// setters replaces, each, one leaf of a value in place.
	var setters []func(any)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch e.(type) {
				case map[string]any, []any:
					walk(e)
				default:
					setters = append(setters, func(r any) { x[k] = r })
				}
			}
		case []any:
			for i, e := range x {
				switch e.(type) {
				case map[string]any, []any:
					walk(e)
				default:
					setters = append(setters, func(r any) { x[i] = r })
				}
			}
		}
	}
	decoded, replayed := 0, 0
	for i := 0; i < 400; i++ {
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		states := doc["states"].([]any)
		setters = setters[:0]
		walk(states[next(len(states))])
		setters[next(len(setters))](replacements[next(len(replacements))])
		m, _ := json.Marshal(doc)
		tr, err := traces.DecodeITF(bytes.NewReader(m), ResolveTrace)
		if err != nil {
			if !errors.Is(err, traces.ErrITF) {
				t.Fatalf("mutation %d: %v does not wrap ErrITF", i, err)
			}
			continue
		}
		decoded++
		if Replay(tr) == nil {
			replayed++
		}
	}
	t.Logf("400 mutations: %d decoded, %d of them replayed", decoded, replayed)
}
