package check

import (
	"context"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
)

// orbits counts the distinct canonical forms among every state reachable
// without symmetry: the number of orbits the symmetric search must find.
func orbits(t *testing.T, p spec.Params, syms []spec.Symmetry) (states int, classes []int) {
	t.Helper()
	m, err := spec.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	canons := make([]*spec.Canonicalizer, len(syms))
	forms := make([]map[string]bool, len(syms))
	init := m.Init()
	for i, sym := range syms {
		canons[i] = m.NewCanonicalizer(sym)
		forms[i] = map[string]bool{string(canons[i].Canonical(&init)): true}
	}
	seen := map[string]bool{string(m.Encode(nil, &init)): true}
	queue := []spec.State{init}
	var scratch spec.State
	for i := 0; i < len(queue); i++ {
		cur := queue[i]
		m.Next(&cur, &scratch, func(_ spec.Action, s *spec.State) {
			if k := string(m.Encode(nil, s)); !seen[k] {
				seen[k] = true
				for j := range syms {
					forms[j][string(canons[j].Canonical(s))] = true
				}
				var c spec.State
				c.CopyFrom(s)
				queue = append(queue, c)
			}
		})
	}
	for j := range syms {
		classes = append(classes, len(forms[j]))
	}
	return len(seen), classes
}

// TestSymmetryOrbits: on small parameter sets, the symmetric search finds
// exactly one state per orbit of the states found without symmetry, with
// the same verdict.
func TestSymmetryOrbits(t *testing.T) {
	sets := []spec.Params{
		{Bookies: 1, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1},
		{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1},
		{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1},
		{Bookies: 3, Clients: 2, Ensemble: 3, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1}, // striped
		// Extensions: faults put per-bookie flags and budgets in the state,
		// gwq adds LAFR fields; the canonical form must relabel them all.
		{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, Reformat: 1, DataIntegrity: true, ReformatCookie: spec.CookieKept},
		{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, Reformat: 1},
		{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, Crashes: 1, ReadOnly: 1},
		{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, Variant: "gwq"},
		{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, Crashes: 1, Journal: spec.JournalNoSync},
		{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, Crashes: 1, Journal: spec.JournalDisabled, DataIntegrity: true},
		{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, DiskLoss: 1, Reformat: 1, DiskFull: 1},
		// As docs/guarantees.md asks its data-loss questions: restricted.
		{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, Reformat: 1, DataIntegrity: true,
			Exclude: []string{"ClientReceivesAddFencedResponse", "BookieSendsAddFencedResponse", "ClientResendsPendingAddOp",
				"ClientClosesLedgerSuccess", "ClientClosesLedgerFail", "ClientWritesBackEntry",
				"RecoveryClientReceivesAddConfirmedResponse", "RecoveryClientChangesEnsemble", "RecoveryClientSendsPendingAddOp"}},
	}
	if !testtier.IsLong() {
		sets = sets[:2]
	}
	for _, p := range sets {
		t.Logf("%v", p)
		var syms []spec.Symmetry
		for _, sym := range []spec.Symmetry{{Bookies: true}, {Clients: true}, {Bookies: true, Clients: true}} {
			if p.CheckSymmetry(sym) == nil {
				syms = append(syms, sym)
			}
		}
		if len(syms) == 0 {
			continue
		}
		// The states and their orbits, and the searches without symmetry,
		// once for every symmetry.
		states, orbitsOf := orbits(t, p, syms)
		plainAll, err := Run(context.Background(), Config{ModelConfig: ModelConfig{Params: p, Invariants: []string{"TypeOK"}}})
		if err != nil {
			t.Fatal(err)
		}
		plainDefault, err := Run(context.Background(), Config{ModelConfig: ModelConfig{Params: p}})
		if err != nil {
			t.Fatal(err)
		}
		for i, sym := range syms {
			classes := orbitsOf[i]
			// The whole space (TypeOK holds everywhere): one state per orbit.
			red, err := Run(context.Background(), Config{ModelConfig: ModelConfig{Params: p, Invariants: []string{"TypeOK"}, Symmetry: sym}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%v symmetry %v: %d states, %d orbits, symmetric search %d", p, sym, states, classes, red.Distinct)
			if plainAll.Status != explorer.OK || red.Status != explorer.OK || int(plainAll.Distinct) != states || int(red.Distinct) != classes {
				t.Errorf("%v %v: symmetric search %v with %d states, plain %v with %d; want %d orbits of %d states",
					p, sym, red.Status, red.Distinct, plainAll.Status, plainAll.Distinct, classes, states)
			}
			// The default invariants: the same verdict.
			red, err = Run(context.Background(), Config{ModelConfig: ModelConfig{Params: p, Symmetry: sym}})
			if err != nil {
				t.Fatal(err)
			}
			if plainDefault.Status != red.Status {
				t.Errorf("%v %v: verdict %v with symmetry, %v without", p, sym, red.Status, plainDefault.Status)
			}
		}
	}
}

// TestSymmetricCounterexampleReplays: a counterexample found under
// symmetry is a real execution: it starts in the initial state and each
// step is a transition of the model with the recorded action.
func TestSymmetricCounterexampleReplays(t *testing.T) {
	p := spec.Params{Bookies: 3, Clients: 2, Ensemble: 3, WriteQuorum: 3, AckQuorum: 2, Entries: 1, Inflight: 1, Reformat: 2, DataIntegrity: true}
	rep, err := Run(context.Background(), Config{ModelConfig: ModelConfig{Params: p, Symmetry: spec.Symmetry{Bookies: true, Clients: true},
		Invariants: []string{"AllAckedEntriesAreReadable"}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != explorer.Violation {
		t.Fatalf("status %v", rep.Status)
	}
	m, _ := spec.NewModel(p)
	tr := rep.Trace.Steps
	init := m.Init()
	if string(m.Encode(nil, &init)) != string(m.Encode(nil, specState(tr[0].State))) {
		t.Fatal("trace does not start in the initial state")
	}
	var scratch spec.State
	for i := 1; i < len(tr); i++ {
		want := string(m.Encode(nil, specState(tr[i].State)))
		found := false
		m.Next(specState(tr[i-1].State), &scratch, func(a spec.Action, s *spec.State) {
			found = found || (a == tr[i].Action && string(m.Encode(nil, s)) == want)
		})
		if !found {
			t.Fatalf("step %d (%v) is not a transition of the model", i+1, tr[i].Action)
		}
	}
	if len(tr) != 9 {
		t.Errorf("trace of %d states, want the shortest (9)", len(tr))
	}
}
