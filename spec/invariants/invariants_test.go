package invariants

import (
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/spec"
)

var params = spec.Params{Bookies: 3, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 2, Inflight: 2}

// closedLedger is a state in which c1 wrote entries 1 and 2 to {b1,b2} and
// closed the ledger at LAC 2: every invariant holds.
func closedLedger() spec.State {
	s := params.Init()
	f := spec.Fragment{ID: 1, Ensemble: 0b011, First: 1}
	s.MetaStatus, s.MetaVersion, s.MetaLastEntry = spec.StatusClosed, 2, 2
	s.MetaFragments[0], s.NumMetaFragments = f, 1
	for b := 0; b < 2; b++ {
		s.BEntries[b] = s.BEntries[b].Add(spec.Entry{ID: 1, Data: 1}).Add(spec.Entry{ID: 2, Data: 2})
		s.BLAC[b] = 1
	}
	c := &s.Clients[0]
	c.Status, c.MetaVersion, c.LAP, c.LAC = spec.StatusClosed, 2, 2, 2
	c.Fragments[0], c.NumFragments = f, 1
	c.Confirmed[0], c.Confirmed[1] = 0b011, 0b011
	return s
}

func TestInvariants(t *testing.T) {
	tests := []struct {
		inv    string
		mutate func(s *spec.State)
	}{
		{"TypeOK", func(s *spec.State) { s.MetaStatus = spec.ClientWithdrawn }},
		{"TypeOK", func(s *spec.State) { s.BEntries[2] = s.BEntries[2].Add(spec.Entry{ID: 3, Data: 3}) }},
		{"TypeOK", func(s *spec.State) { s.Clients[1].Fenced = 0b1000 }},
		// The writer acknowledged entry 2 but the ledger was sealed at 1: truncation.
		{"NoDivergenceBetweenClientAndMetaData", func(s *spec.State) { s.MetaLastEntry = 1 }},
		// Two clients claim to have closed the ledger.
		{"NoDivergenceBetweenClientAndMetaData", func(s *spec.State) {
			s.Clients[1].Status, s.Clients[1].LAC = spec.StatusClosed, 2
		}},
		// Entry 2 is on no bookie of its fragment any more.
		{"AllAckedEntriesAreReadable", func(s *spec.State) {
			s.BEntries[0], s.BEntries[1] = spec.EntrySet(0).Add(spec.Entry{ID: 1, Data: 1}), spec.EntrySet(0).Add(spec.Entry{ID: 1, Data: 1})
		}},
		// Entry 1 of the closed ledger is on one bookie only, Qa is 2.
		{"AllCommittedEntriesReachAckQuorum", func(s *spec.State) {
			s.BEntries[1] = spec.EntrySet(0).Add(spec.Entry{ID: 2, Data: 2})
		}},
		// Bookie b3 holds data 2 under id 1.
		{"NoOutOfOrderEntries", func(s *spec.State) { s.BEntries[2] = s.BEntries[2].Add(spec.Entry{ID: 1, Data: 2}) }},
	}
	for _, inv := range All {
		s := closedLedger()
		if !inv.Holds(&params, &s) {
			t.Errorf("%s fails on the healthy closed ledger", inv.Name)
		}
		if inv.Statement == "" || inv.Source == "" {
			t.Errorf("%s lacks a statement or source", inv.Name)
		}
	}
	for i, tc := range tests {
		invs, err := Lookup([]string{tc.inv})
		if err != nil {
			t.Fatal(err)
		}
		s := closedLedger()
		tc.mutate(&s)
		if invs[0].Holds(&params, &s) {
			t.Errorf("case %d: %s holds on a state built to violate it", i, tc.inv)
		}
	}
}

func TestLookupReportsEveryUnknownName(t *testing.T) {
	_, err := Lookup([]string{"TypeOK", "Nope", "AlsoNope"})
	if err == nil || !strings.Contains(err.Error(), "Nope") || !strings.Contains(err.Error(), "AlsoNope") {
		t.Fatalf("got %v", err)
	}
	invs, err := Lookup(Default)
	if err != nil || len(invs) != 3 {
		t.Fatalf("default: %v %v", invs, err)
	}
}
