package spec413

import (
	"fmt"
	"strings"
)

// Invariant is a named property of the specification.
type Invariant struct {
	Name      string
	Statement string // one line, for people
	Holds     func(p Params, s *State) bool
}

// Invariants are the specification's properties, in the order of the
// shipped cfg's INVARIANTS (TLC checks, and reports the first failing, in
// that order).
var Invariants = []Invariant{
	{
		Name:      "TypeOK",
		Statement: "every variable holds a value of its type; in particular every stored, pending or read entry has id and data in 1..SendLimit",
		Holds:     typeOK,
	},
	{
		Name:      "OnlyValidFragments",
		Statement: "no writer proposed a fragment starting before an existing one (status STATUS_INVALID)",
		Holds: func(_ Params, s *State) bool {
			return s.W[W1].Status != StatusInvalid && s.W[W2].Status != StatusInvalid
		},
	},
	{
		Name:      "NoOutOfOrderEntries",
		Statement: "every stored entry carries the data w1 gave its id",
		Holds:     noOutOfOrder,
	},
	{
		Name:      "NoDivergenceBetweenWriterAndMetaData",
		Statement: "once the ledger is closed, w1 has acknowledged no entry beyond its last entry",
		Holds: func(_ Params, s *State) bool {
			return s.MetaStatus != StatusClosed || s.W[W1].LAC <= s.MetaLastEntry
		},
	},
	{
		Name:      "AllCommittedEntriesReachAckQuorum",
		Statement: "once the ledger is closed, every entry up to its last entry is stored on AckQuorum bookies of its fragment's ensemble",
		Holds:     committedReachAckQuorum,
	},
}

// DefaultInvariants are those of BookKeeperProtocol_v4_13.cfg: all of them.
func DefaultInvariants() []string {
	names := make([]string, len(Invariants))
	for i, inv := range Invariants {
		names[i] = inv.Name
	}
	return names
}

// LookupInvariants returns the named invariants in the order given.
func LookupInvariants(names []string) ([]Invariant, error) {
	out := make([]Invariant, 0, len(names))
	var unknown []string
	for _, n := range names {
		found := false
		for _, inv := range Invariants {
			if inv.Name == n {
				out, found = append(out, inv), true
				break
			}
		}
		if !found {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown v4.13 invariant %s; known: %s", strings.Join(unknown, ", "), strings.Join(DefaultInvariants(), ", "))
	}
	return out, nil
}

// inEntry: e \in Entry, [id: 1..SendLimit, data: 1..SendLimit \cup {Nil}].
func inEntry(p Params, e Entry) bool {
	return e.ID >= 1 && int(e.ID) <= p.SendLimit && e.Data >= 0 && int(e.Data) <= p.SendLimit
}

// typeOK checks what can go out of type: entries (b_entries, pending ops,
// curr_read_entry). Everything else holds by construction (statuses,
// versions and LACs are in Nat or Nil, sets are of bookies, confirmed is
// a function on 1..SendLimit, phases are in 0..4).
func typeOK(p Params, s *State) bool {
	var typed EntrySet // ids and data in 1..SendLimit
	for id := 0; id < p.SendLimit; id++ {
		typed |= (1<<uint(p.SendLimit) - 1) << uint(id*MaxSendLimit)
	}
	for b := 0; b < p.Bookies; b++ {
		if s.BEntries[b]&^typed != 0 {
			return false
		}
	}
	for i := range s.W {
		w := &s.W[i]
		for _, op := range w.PendingList() {
			if !inEntry(p, op.Entry) {
				return false
			}
		}
		if w.CurrReadEntry.ID != 0 && !inEntry(p, w.CurrReadEntry) {
			return false
		}
	}
	return true
}

func noOutOfOrder(p Params, s *State) bool {
	var inOrder EntrySet // [id |-> i, data |-> i]
	for i := 0; i < MaxSendLimit; i++ {
		inOrder |= 1 << uint(i*MaxSendLimit+i)
	}
	for b := 0; b < p.Bookies; b++ {
		if s.BEntries[b]&^inOrder != 0 {
			return false
		}
	}
	return true
}

func committedReachAckQuorum(p Params, s *State) bool {
	if s.MetaStatus != StatusClosed {
		return true
	}
	for id := int8(1); id <= s.MetaLastEntry; id++ {
		f, ok := s.FragmentOfEntryId(id)
		if !ok {
			return false
		}
		var holders Bookies
		for b := 0; b < p.Bookies; b++ {
			if _, has := s.BEntries[b].WithID(id); has && f.Ensemble.Has(b) {
				holders |= bit(b)
			}
		}
		if holders.Len() < p.AckQuorum {
			return false
		}
	}
	return true
}
