package check

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
	"github.com/bkcheck/bkcheck/traces"
)

// withPanickingInvariant registers, for the test, a built-in property
// whose evaluation panics in every state where the ledger is closed: a
// model bug as the command line would meet it.
func withPanickingInvariant(t *testing.T, name string) {
	t.Helper()
	saved := invariants.All
	invariants.All = append(slices.Clip(saved), invariants.Invariant{
		Name: name, Statement: "panics once the ledger is closed",
		Holds: func(_ *spec.Params, s *spec.State) bool {
			if s.MetaStatus == spec.StatusClosed {
				panic(name + ": cannot evaluate a closed ledger")
			}
			return true
		},
	})
	t.Cleanup(func() { invariants.All = saved })
}

// wantPanicTrace checks that tr leads to the first state with a closed
// ledger, and only there.
func wantPanicTrace(t *testing.T, what string, tr *traces.Text) {
	t.Helper()
	if tr == nil || len(tr.Steps) < 2 {
		t.Fatalf("%s: trace %+v", what, tr)
	}
	closed := fmt.Sprint(spec.StatusClosed)
	for i, st := range tr.Steps {
		if got := varValue(st.Vars, "meta_status"); (got == closed) != (i == len(tr.Steps)-1) {
			t.Errorf("%s: step %d of %d has meta_status %s", what, i+1, len(tr.Steps), got)
		}
	}
	if tr.Invariant != "" {
		t.Errorf("%s: the error trace names an invariant: %q", what, tr.Invariant)
	}
}

func varValue(vs []traces.Var, name string) string {
	for _, v := range vs {
		if v.Name == name {
			return v.Value
		}
	}
	return ""
}

// TestModelPanicReport: a property that panics ends the run with the
// error verdict, not a crash: the report names the call and the panic,
// and decodes the trace to the state, as a counterexample; the same for
// any number of workers and on disk, where resuming reports it again.
func TestModelPanicReport(t *testing.T) {
	withPanickingInvariant(t, "TestPanics")
	p := spec.DefaultParams()
	model := ModelConfig{Params: p, Invariants: []string{"TypeOK", "TestPanics"}}
	var first *Report
	dir := filepath.Join(t.TempDir(), "run")
	for _, c := range []struct {
		what string
		cfg  Config
	}{
		{"memory/workers=1", Config{ModelConfig: model, Parallel: Parallel{Workers: 1}}},
		{"memory/workers=2", Config{ModelConfig: model, Parallel: Parallel{Workers: 2}}},
		{"disk", Config{ModelConfig: model, Parallel: Parallel{Workers: 2}, StoreConfig: StoreConfig{Store: StoreBadger, Dir: dir}}},
		{"disk resumed", Config{Parallel: Parallel{Workers: 1}, StoreConfig: StoreConfig{Dir: dir}, Resume: true}},
	} {
		rep, err := Run(context.Background(), c.cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		e := rep.ModelError()
		if rep.Status != explorer.Error || e == nil {
			t.Fatalf("%s: status %v, want error", c.what, rep.Status)
		}
		if e.Call != explorer.CallCheck || !e.Panic || e.Message != "TestPanics: cannot evaluate a closed ledger" || !strings.Contains(e.Stack, "evalerror_test.go") {
			t.Errorf("%s: error %+v", c.what, e)
		}
		wantPanicTrace(t, c.what, rep.Readable)
		if rep.Trace == nil || len(rep.Trace.Steps) != len(rep.Readable.Steps) || rep.Depth != len(rep.Readable.Steps) {
			t.Errorf("%s: trace %d steps, readable %d, depth %d", c.what, len(rep.Trace.Steps), len(rep.Readable.Steps), rep.Depth)
		}
		// The trace file records the failure; replay finds it again at
		// the last state, and only there.
		path := filepath.Join(t.TempDir(), "error.itf.json")
		if err := traces.WriteITFFile(path, rep.Trace); err != nil {
			t.Fatal(err)
		}
		back, err := ReadTrace(path)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if back.Error != e.Error() || !strings.HasPrefix(back.What(), "is where the model failed: ") || !slices.Equal(back.Checked, []string{"TypeOK", "TestPanics"}) {
			t.Errorf("%s: read back with error %q, checked %v", c.what, back.Error, back.Checked)
		}
		if err := Replay(back); err != nil {
			t.Errorf("%s: replay: %v", c.what, err)
		}
		short := *back
		short.Steps = back.Steps[:len(back.Steps)-1]
		var re *ReplayError
		if err := Replay(&short); !errors.As(err, &re) || re.Step != len(short.Steps) {
			t.Errorf("%s: a trace cut before the failing state replays: %v", c.what, err)
		}
		if first == nil {
			first = rep
		} else if !reflect.DeepEqual(rep.Readable, first.Readable) || rep.Distinct != first.Distinct || rep.Generated != first.Generated {
			t.Errorf("%s: %d distinct, %d generated, %d steps; %s: %d, %d, %d", c.what, rep.Distinct, rep.Generated, len(rep.Readable.Steps),
				"memory/workers=1", first.Distinct, first.Generated, len(first.Readable.Steps))
		}
	}
}

// TestModelPanicSimulate: a walk on which a property panics ends the
// simulation with the error verdict and the walk up to the failing state.
func TestModelPanicSimulate(t *testing.T) {
	withPanickingInvariant(t, "TestPanics")
	cfg := DefaultSimConfig()
	cfg.Invariants, cfg.Traces, cfg.Workers, cfg.LossRate = []string{"TestPanics"}, 2000, 2, 0.1
	rep, err := Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if e := rep.ModelError(); rep.Status != explorer.Error || e == nil || e.Call != explorer.CallCheck {
		t.Fatalf("status %v, error %+v", rep.Status, rep.ModelError())
	}
	wantPanicTrace(t, "simulate", rep.Readable)
}

// TestEventuallyPassError: a model failure in the eventually pass (after
// a complete main search) turns the run's verdict into the error, with
// the pass's trace stripped of its masks, and leaves the eventually
// properties undecided, saying why.
func TestEventuallyPassError(t *testing.T) {
	mc := DefaultConfig().ModelConfig
	mc.Invariants, mc.Eventually = []string{"none"}, []string{`Closes=meta_status == "STATUS_CLOSED"`}
	mc.EnsureDefaults()
	m, err := NewModel(mc)
	if err != nil {
		t.Fatal(err)
	}
	em := &eventuallyModel{base: m, cel: m.cel}
	var init []byte
	em.Init(func(enc, _ []byte) { init = slices.Clone(enc) })
	merr := &explorer.ModelError{Call: explorer.CallLoad, Message: "boom", Panic: true}
	res := explorer.Result{Status: explorer.Error, Violation: &explorer.ViolationInfo{Trace: []explorer.Step{{Initial: true, State: init}}, Error: merr}}
	rep := &Report{Result: explorer.Result{Status: explorer.OK}}
	results := map[string]*PropertyResult{"Closes": {Name: "Closes", Status: Unknown}}
	if err := em.failed(res, rep, results); err != nil {
		t.Fatal(err)
	}
	if rep.Status != explorer.Error || rep.ModelError() != merr || rep.Readable == nil || len(rep.Readable.Steps) != 1 || len(rep.Violation.Trace[0].State) != len(init)-maskBytes {
		t.Fatalf("report %v %+v %+v", rep.Status, rep.Violation, rep.Readable)
	}
	if r := results["Closes"]; r.Status != Unknown || !strings.Contains(r.Reason, "the model panicked in Load: boom") {
		t.Errorf("result %+v", r)
	}
}
