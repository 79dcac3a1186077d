package check

import (
	"context"
	"reflect"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
)

// TestSimulationFindsTruncation: random walks find the no-recovery-fence
// truncation from a fixed seed; the walk seed reruns the same trace alone,
// and the result does not depend on the number of workers.
func TestSimulationFindsTruncation(t *testing.T) {
	p := spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, Variant: "no-recovery-fence"}
	m, err := NewModel(ModelConfig{Params: p})
	if err != nil {
		t.Fatal(err)
	}
	sim := func(seed uint64, walks int64, workers int) explorer.SimResult {
		t.Helper()
		res, err := explorer.Simulate(context.Background(), m, explorer.SimOptions{Seed: seed, Walks: walks, Depth: 40, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Seeds 421600..421676 find nothing; 421677 is the first violating walk.
	a := sim(421600, 500, 1)
	b := sim(421600, 500, 4)
	if a.Status != explorer.Violation || a.WalkSeed != 421677 || a.Violation.Invariant != "NoDivergenceBetweenClientAndMetaData" {
		t.Fatalf("got %v at walk seed %d", a.Status, a.WalkSeed)
	}
	if a.Walks != 78 || !reflect.DeepEqual(a.Violation, b.Violation) || a.Walks != b.Walks || a.States != b.States {
		t.Fatalf("1 and 4 workers differ: %d/%d walks", a.Walks, b.Walks)
	}
	alone := sim(a.WalkSeed, 1, 2)
	if !reflect.DeepEqual(alone.Violation, a.Violation) {
		t.Fatal("rerunning the walk seed alone gives another trace")
	}
	tr, err := m.Trace(alone.Violation)
	if err != nil {
		t.Fatal(err)
	}
	// The trace is a real execution of the model.
	sm := m.Spec()
	var scratch spec.State
	for i := 1; i < len(tr.Steps); i++ {
		want := string(sm.Encode(nil, specState(tr.Steps[i].State)))
		found := false
		sm.Next(specState(tr.Steps[i-1].State), &scratch, func(a spec.Action, s *spec.State) {
			found = found || (a == tr.Steps[i].Action && string(sm.Encode(nil, s)) == want)
		})
		if !found {
			t.Fatalf("step %d is not a transition", i+1)
		}
	}
	// No violation is unknown, never ok.
	if res := sim(1, 100, 2); res.Status != explorer.Unknown || res.Walks != 100 || res.MeanLength <= 1 || res.Distinct == 0 {
		t.Fatalf("quiet simulation: %+v", res)
	}
}

// TestLossBias: the weights follow independent message loss, and they make
// the difference on a deep counterexample: with five bookies, Qw 5, Qa 2
// and one blank disk loss, 40,000 uniform walks find no truncation (nor did
// a 15-million-orbit search, which reached depth 22), while the same walks
// biased to a 5% loss rate find a 28-state one.
func TestLossBias(t *testing.T) {
	w := LossBias(0.2)
	for _, c := range []struct {
		a    spec.Action
		want float64
	}{
		{spec.Action{Kind: spec.ClientSendsAddEntryRequests, Client: 0, Bookie: -1, Entry: 1}, 1},
		{spec.Action{Kind: spec.ClientSendsAddEntryRequests, Client: 0, Bookie: -1, Entry: 1, Lost: 0b101}, 0.0625},
		{spec.Action{Kind: spec.BookieSendsAddConfirmedResponse, Client: 0, Bookie: 1, Entry: 1, Lost: 0b10}, 0.25},
		{spec.Action{Kind: spec.ClientChangesEnsemble, Client: 0, Bookie: -1, Lost: 0b11}, 1},
	} {
		if got := w(ToLabel(c.a)); got < c.want*(1-1e-12) || got > c.want*(1+1e-12) {
			t.Errorf("weight of %v = %g, want %g", c.a, got, c.want)
		}
	}
	if !testtier.IsLong() {
		return // the 5-bookie walk below takes about a minute
	}
	p := spec.Params{Bookies: 5, Clients: 2, Ensemble: 5, WriteQuorum: 5, AckQuorum: 2, Entries: 1, Inflight: 1, Reformat: 1,
		Exclude: []string{"ClientReceivesAddFencedResponse", "BookieSendsAddFencedResponse", "ClientResendsPendingAddOp",
			"ClientClosesLedgerSuccess", "ClientClosesLedgerFail", "ClientWritesBackEntry",
			"RecoveryClientReceivesAddConfirmedResponse", "RecoveryClientChangesEnsemble", "RecoveryClientSendsPendingAddOp"}}
	m, err := NewModel(ModelConfig{Params: p, Invariants: []string{"AllAckedEntriesAreReadable", "NoDivergenceBetweenClientAndMetaData"}})
	if err != nil {
		t.Fatal(err)
	}
	opt := explorer.SimOptions{Seed: 1, Walks: 40_000, Depth: 60}
	uniform, err := explorer.Simulate(context.Background(), m, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Weight = LossBias(0.05)
	biased, err := explorer.Simulate(context.Background(), m, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("uniform: %v, mean length %.1f; biased: %v after %d walks, mean length %.1f", uniform.Status, uniform.MeanLength, biased.Status, biased.Walks, biased.MeanLength)
	if uniform.Status != explorer.Unknown || biased.Status != explorer.Violation || biased.Violation.Invariant != "NoDivergenceBetweenClientAndMetaData" {
		t.Fatalf("uniform %v, biased %v", uniform.Status, biased.Status)
	}
	tr, err := m.Trace(biased.Violation)
	if err != nil {
		t.Fatal(err)
	}
	if err := Replay(tr); err != nil {
		t.Fatalf("the biased walk's trace does not replay: %v", err)
	}
}
