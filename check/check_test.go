package check

import (
	"context"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
)

// TestViolationTraceReplays checks the #2614 counterexample of the
// no-recovery-fence variant: it starts in the initial state, every step is a
// transition of the model with the recorded action, only its last state
// violates the invariant, and no shorter trace exists (BFS depth).
func TestViolationTraceReplays(t *testing.T) {
	p := spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, Variant: "no-recovery-fence"}
	rep, err := Run(context.Background(), Config{ModelConfig: ModelConfig{Params: p}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != explorer.Violation || rep.Trace == nil {
		t.Fatalf("status %v, want a violation", rep.Status)
	}
	tr := rep.Trace
	if tr.Invariant != "NoDivergenceBetweenClientAndMetaData" || len(tr.Steps) != 14 || rep.Depth != 14 {
		t.Fatalf("got %s with %d steps at depth %d", tr.Invariant, len(tr.Steps), rep.Depth)
	}
	m, err := NewModel(ModelConfig{Params: p})
	if err != nil {
		t.Fatal(err)
	}
	sm := m.Spec()
	init := sm.Init()
	if sm.Encode(nil, &init) == nil || string(sm.Encode(nil, &init)) != string(sm.Encode(nil, specState(tr.Steps[0].State))) {
		t.Fatal("trace does not start in the initial state")
	}
	var scratch spec.State
	for i := 1; i < len(tr.Steps); i++ {
		want := string(sm.Encode(nil, specState(tr.Steps[i].State)))
		found := false
		prev := tr.Steps[i-1].State.(spec.State)
		sm.Next(&prev, &scratch, func(a spec.Action, s *spec.State) {
			if a == tr.Steps[i].Action && string(sm.Encode(nil, s)) == want {
				found = true
			}
		})
		if !found {
			t.Fatalf("step %d (%s) is not a transition of the model", i+1, tr.Steps[i].Action)
		}
	}
	for i, st := range tr.Steps {
		e := m.NewExpander()
		if err := e.Load(sm.Encode(nil, specState(st.State))); err != nil {
			t.Fatal(err)
		}
		bad := e.Check() != ""
		if bad != (i == len(tr.Steps)-1) {
			t.Fatalf("step %d: violation=%v", i+1, bad)
		}
	}
}
