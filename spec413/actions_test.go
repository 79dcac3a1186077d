package spec413

import (
	"strings"
	"testing"
)

// openLedger is a state in which w1 has created the ledger on ensemble ens.
func openLedger(ens Bookies) State {
	s := Init()
	f := Fragment{ID: 1, Ensemble: ens, First: 1}
	s.MetaStatus, s.MetaVersion, s.NumFragments, s.Fragments[0] = StatusOpen, 1, 1, f
	w := &s.W[W1]
	w.Status, w.MetaVersion, w.CurrFragment = StatusOpen, 1, f
	return s
}

// successors expands s and returns, for the given action, how many
// successors it generated and how many distinct ones.
func successors(m *Model, s *State, kind ActionKind) (generated, distinct int) {
	seen := map[string]bool{}
	var scratch State
	m.Next(s, &scratch, func(a Action, n *State) {
		if a.Kind == kind {
			generated++
			seen[string(m.Encode(nil, n))] = true
		}
	})
	return generated, len(seen)
}

// TestTLCBranching pins how many times each action generates a successor
// where TLC branches inside a guard: once per disjunct that holds, once per
// witness of an existential quantifier. Distinct successors do not depend
// on it; TLC's "states generated" does.
func TestTLCBranching(t *testing.T) {
	e1, e2 := Entry{ID: 1, Data: 1}, Entry{ID: 2, Data: 2}
	b12, b23 := Bookies(0b011), Bookies(0b110)
	for _, tc := range []struct {
		name                string
		p                   Params
		state               func() State
		kind                ActionKind
		generated, distinct int
	}{
		{
			name: "recovery add to an unfenced bookie: both disjuncts of the guard hold",
			p:    Params{Bookies: 2, WriteQuorum: 2, AckQuorum: 1, SendLimit: 1},
			state: func() State {
				s := openLedger(b12)
				s.insert(AddRequest(0, e1, 0, true), 1)
				return s
			},
			kind: BookieSendsAddConfirmedResponse, generated: 4, distinct: 2,
		},
		{
			name: "recovery add to a fenced bookie: one disjunct",
			p:    Params{Bookies: 2, WriteQuorum: 2, AckQuorum: 1, SendLimit: 1},
			state: func() State {
				s := openLedger(b12)
				s.BFenced = 0b01
				s.insert(AddRequest(0, e1, 0, true), 1)
				return s
			},
			kind: BookieSendsAddConfirmedResponse, generated: 2, distinct: 2,
		},
		{
			name: "writer's add to a fenced bookie is rejected, not stored",
			p:    Params{Bookies: 2, WriteQuorum: 2, AckQuorum: 1, SendLimit: 1},
			state: func() State {
				s := openLedger(b12)
				s.BFenced = 0b01
				s.insert(AddRequest(0, e1, 0, false), 1)
				return s
			},
			kind: BookieSendsAddConfirmedResponse, generated: 0, distinct: 0,
		},
		{
			name: "ensemble change: two write timeouts of b1 times two available ensembles",
			p:    Params{Bookies: 4, WriteQuorum: 2, AckQuorum: 1, SendLimit: 2},
			state: func() State {
				s := openLedger(b12)
				s.W[W1].LAP = 2
				s.insert(AddRequest(0, e1, 0, false), -1)
				s.insert(AddRequest(0, e2, 0, false), -1)
				return s
			},
			kind: W1ChangesEnsemble, generated: 4, distinct: 1,
		},
		{
			name: "ensemble change of a bookie without a timeout: none",
			p:    Params{Bookies: 4, WriteQuorum: 2, AckQuorum: 1, SendLimit: 2},
			state: func() State {
				s := openLedger(b12)
				s.insert(AddRequest(0, e1, 0, false), 0)
				return s
			},
			kind: W1ChangesEnsemble, generated: 0, distinct: 0,
		},
		{
			name: "invalid ensemble change: a fragment starts after LAC+1",
			p:    Params{Bookies: 3, WriteQuorum: 2, AckQuorum: 1, SendLimit: 2},
			state: func() State {
				s := openLedger(b12)
				s.Fragments[1] = Fragment{ID: 2, Ensemble: 0b101, First: 2}
				s.NumFragments = 2
				s.insert(AddRequest(0, e1, 0, false), -1)
				return s
			},
			kind: W1TriesInvalidEnsembleChange, generated: 1, distinct: 1,
		},
		{
			name: "pending add op of another fragment and ensemble: both disjuncts hold",
			p:    Params{Bookies: 3, WriteQuorum: 2, AckQuorum: 1, SendLimit: 1},
			state: func() State {
				s := openLedger(b12)
				w := &s.W[W1]
				w.CurrFragment = Fragment{ID: 2, Ensemble: b23, First: 1}
				w.addPending(PendingAddOp{Entry: e1, FragmentID: 1, Ensemble: b12})
				return s
			},
			kind: W1SendsPendingAddOp, generated: 4, distinct: 2,
		},
		{
			name: "pending add op of a replaced ensemble, same fragment: one disjunct",
			p:    Params{Bookies: 3, WriteQuorum: 2, AckQuorum: 1, SendLimit: 1},
			state: func() State {
				s := openLedger(b12)
				w := &s.W[W1]
				w.CurrFragment = Fragment{ID: 1, Ensemble: b23, First: 1}
				w.addPending(PendingAddOp{Entry: e1, FragmentID: 1, Ensemble: b12})
				return s
			},
			kind: W1SendsPendingAddOp, generated: 2, distinct: 2,
		},
		{
			name: "a send to three bookies: one successor per loss pattern",
			p:    Shipped(),
			state: func() State {
				return openLedger(0b111)
			},
			kind: W1SendsAddEntryRequests, generated: 8, distinct: 8,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustModel(t, tc.p)
			s := tc.state()
			if g, d := successors(m, &s, tc.kind); g != tc.generated || d != tc.distinct {
				t.Errorf("%s: %d generated, %d distinct; want %d, %d", tc.kind, g, d, tc.generated, tc.distinct)
			}
		})
	}
}

// TestRecoveryReads pins w2's read rules where they are easy to misread:
// a NoSuchEntry answer names no entry, so its read ensemble is empty and
// timeouts are not counted; an answer with the entry counts them.
func TestRecoveryReads(t *testing.T) {
	p := Params{Bookies: 3, WriteQuorum: 3, AckQuorum: 2, SendLimit: 1}
	recovering := func() State {
		s := openLedger(0b111)
		s.MetaStatus = StatusInRecovery
		w := &s.W[W2]
		w.Status, w.CurrFragment, w.RecoveryPhase = StatusInRecovery, s.Fragments[0], PendingReadResponsePhase
		s.insert(ReadRequest(2, 1, false), -1) // b3's read timed out
		return s
	}
	e1 := Entry{ID: 1, Data: 1}
	for _, tc := range []struct {
		name     string
		state    func() State
		kind     ActionKind
		distinct int
	}{
		{
			name: "entry from b1, NoSuchEntry known from b2, b3 timed out: all in, but neither Qa copies nor Qw-Qa+1 NoSuchEntry: stuck",
			state: func() State {
				s := recovering()
				s.W[W2].NoSuchEntry = 0b010
				s.insert(ReadResponse(0, e1, false), 1)
				return s
			},
			kind: W2CompletesReadWithNoSuchEntry, distinct: 0,
		},
		{
			name: "NoSuchEntry from b1 and b2, b3 timed out: no entry answer, so the timeout is not counted and the read is not over",
			state: func() State {
				s := recovering()
				s.W[W2].NoSuchEntry = 0b001
				s.insert(ReadResponse(1, Entry{}, false), 1)
				return s
			},
			kind: W2ReceivesNonFinalRead, distinct: 1,
		},
		{
			name: "NoSuchEntry from b2, entry known from b1, b3 timed out: the timeout is not counted",
			state: func() State {
				s := recovering()
				s.W[W2].HasEntry, s.W[W2].CurrReadEntry = 0b001, e1
				s.insert(ReadResponse(1, Entry{}, false), 1)
				return s
			},
			kind: W2ReceivesNonFinalRead, distinct: 1,
		},
		{
			name: "entries from b1 and b2, b3 timed out: the read succeeds",
			state: func() State {
				s := recovering()
				s.W[W2].HasEntry, s.W[W2].CurrReadEntry = 0b001, e1
				s.insert(ReadResponse(1, e1, false), 1)
				return s
			},
			kind: W2CompletesReadSuccessfully, distinct: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustModel(t, p)
			s := tc.state()
			if _, d := successors(m, &s, tc.kind); d != tc.distinct {
				t.Errorf("%s: %d successors, want %d", tc.kind, d, tc.distinct)
			}
		})
	}
}

func TestEnsemblesInChooseOrder(t *testing.T) {
	p := Params{Bookies: 4, WriteQuorum: 2}
	var got []string
	for _, e := range p.ensembles() {
		got = append(got, FormatBookies(e))
	}
	if want := "{b1,b2} {b1,b3} {b1,b4} {b2,b3} {b2,b4} {b3,b4}"; strings.Join(got, " ") != want {
		t.Errorf("ensembles %v, want TLC's CHOOSE order %s", got, want)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		p    Params
		want string // "" for valid
	}{
		{Shipped(), ""},
		{Params{Bookies: 1, WriteQuorum: 1, AckQuorum: 1, SendLimit: 4}, ""},
		{Params{Bookies: 2, WriteQuorum: 3, AckQuorum: 2, SendLimit: 1}, "write-quorum: 3 exceeds the number of bookies 2"},
		{Params{Bookies: 3, WriteQuorum: 2, AckQuorum: 3, SendLimit: 1}, "ack-quorum: 3 exceeds the write quorum 2"},
		{Params{Bookies: 9, WriteQuorum: 2, AckQuorum: 1, SendLimit: 1}, "bookies: must be between 1 and 8"},
		{Params{Bookies: 3, WriteQuorum: 2, AckQuorum: 1, SendLimit: 5}, "entries: must be between 1 and 4"},
		{Params{Bookies: 3, WriteQuorum: 0, AckQuorum: 0, SendLimit: 1}, "ack-quorum: must be at least 1"},
	} {
		err := tc.p.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.p, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want one containing %q", tc.p, err, tc.want)
		}
	}
}
