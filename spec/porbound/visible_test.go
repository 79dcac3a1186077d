package porbound

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
)

// project is the value in s of what r declares read: the metadata parts,
// the bookies' stores, each client's status or its class, the LAC of each
// client whose LAC the declaration reads in s, and which add requests are
// in flight.
func project(p spec.Params, r spec.PropertyReads, s *spec.State) string {
	var b strings.Builder
	if r.Meta {
		fmt.Fprint(&b, "meta", s.MetaStatus, s.MetaVersion, s.MetaDeleted, ";")
	}
	if r.Meta || r.MetaFragments {
		fmt.Fprint(&b, "frags", s.MetaFragmentList(), ";")
	}
	if r.Meta || r.MetaEnd {
		fmt.Fprint(&b, "end", s.MetaStatus == spec.StatusClosed, s.MetaLastEntry, ";")
	}
	if r.Stores {
		fmt.Fprint(&b, "stores", s.BEntries[:p.Bookies], s.BLAC[:p.Bookies], s.BLAFR[:p.Bookies], ";")
	}
	for c := range p.Clients {
		st := s.Clients[c].Status
		if r.ClientStatus {
			fmt.Fprint(&b, "status", st, ";")
		}
		if r.ClientClass {
			class := st
			if class != spec.StatusOpen && class != spec.StatusClosed && class != spec.ClientWithdrawn {
				class = spec.StatusNil
			}
			fmt.Fprint(&b, "class", class, ";")
		}
		if r.ClientLAC && st != spec.StatusNil && st != spec.StatusInRecovery && st != spec.RecoveryAborted {
			fmt.Fprint(&b, "lac", c, s.Clients[c].LAC, ";")
		}
	}
	if r.LiveAdds {
		for _, m := range s.Msgs {
			if m.Count == 1 && m.Key.Type() == spec.AddEntryRequest {
				fmt.Fprint(&b, "live", m.Key.Cid(), m.Key.Bookie(), m.Key.Entry().ID, m.Key.Recovery(), ";")
			}
		}
	}
	return b.String()
}

// TestVisibleValuesKept holds --por's visibility condition against whole
// graphs, for every property at once: a set is used only if it holds an
// enabled transition invisible to the properties (one that changes
// nothing they read), and may hold visible ones besides. The argument
// (docs/reduction.md) is that a path to a state is then matched by a
// path in the reduced graph to a state with the same values of what the
// properties read; so every such value the full graph reaches, the
// reduced graph reaches too, and any predicate over them (any invariant
// declaring those reads) is violated in both or in neither. Checked here
// for the shipped invariants' reads and for each built-in's, on every
// model of declaredModels.
func TestVisibleValuesKept(t *testing.T) {
	shipped, err := invariants.Lookup(invariants.Default)
	if err != nil {
		t.Fatal(err)
	}
	union := spec.PropertyReads{}
	for _, inv := range shipped {
		union = union.Union(*inv.Reads)
	}
	reads := map[string]spec.PropertyReads{"the shipped invariants": union}
	for _, inv := range invariants.All {
		if inv.Reads != nil && !inv.Reads.FieldWise {
			reads[inv.Name] = *inv.Reads
		}
	}
	for _, p := range declaredModels() {
		g, _ := exploreDeclared(t, p)
		states := make([]spec.State, len(g.States))
		for i, enc := range g.States {
			if err := g.Model.Decode(enc, &states[i]); err != nil {
				t.Fatal(err)
			}
		}
		for name, r := range reads {
			red := reduceDeclared(t, g, &r)
			full, kept := map[string]bool{}, map[string]bool{}
			for i := range states {
				v := project(p, r, &states[i])
				full[v] = true
				if red.Reached[i] {
					kept[v] = true
				}
			}
			missing := 0
			for v := range full {
				if !kept[v] {
					if missing++; missing <= 3 {
						t.Errorf("%s, %s: the full graph reaches %q, the reduced one does not", p.String(), name, v)
					}
				}
			}
			if missing > 0 {
				t.Errorf("%s, %s: %d of %d values missing", p.String(), name, missing, len(full))
			}
			t.Logf("%s, %s: %d values in %d states; reduced: %d states", p.String(), name, len(full), len(states), red.States)
		}
	}
}
