package porbound

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
)

// pieces are the parts of a state project puts together, each formatted
// once per state and shared by every read set's projection.
type pieces struct {
	meta, frags, end, stores, live string
	status, class, lac             []string // by client; lac "" where the invariants ignore it
}

func piecesOf(p spec.Params, s *spec.State) pieces {
	pc := pieces{
		meta:   fmt.Sprint("meta", s.MetaStatus, s.MetaVersion, s.MetaDeleted, ";"),
		frags:  fmt.Sprint("frags", s.MetaFragmentList(), ";"),
		end:    fmt.Sprint("end", s.MetaStatus == spec.StatusClosed, s.MetaLastEntry, ";"),
		stores: fmt.Sprint("stores", s.BEntries[:p.Bookies], s.BLAC[:p.Bookies], s.BLAFR[:p.Bookies], ";"),
		status: make([]string, p.Clients),
		class:  make([]string, p.Clients),
		lac:    make([]string, p.Clients),
	}
	for c := range p.Clients {
		st := s.Clients[c].Status
		pc.status[c] = fmt.Sprint("status", st, ";")
		class := st
		if class != spec.StatusOpen && class != spec.StatusClosed && class != spec.ClientWithdrawn {
			class = spec.StatusNil
		}
		pc.class[c] = fmt.Sprint("class", class, ";")
		if st != spec.StatusNil && st != spec.StatusInRecovery && st != spec.RecoveryAborted {
			pc.lac[c] = fmt.Sprint("lac", c, s.Clients[c].LAC, ";")
		}
	}
	var live strings.Builder
	for _, m := range s.Msgs {
		if m.Count == 1 && m.Key.Type() == spec.AddEntryRequest {
			fmt.Fprint(&live, "live", m.Key.Cid(), m.Key.Bookie(), m.Key.Entry().ID, m.Key.Recovery(), ";")
		}
	}
	pc.live = live.String()
	return pc
}

// project is the value in a state (its pieces pc) of what r declares
// read: the metadata parts, the bookies' stores, each client's status or
// its class, the LAC of each client whose LAC the declaration reads in
// the state, and which add requests are in flight.
func project(r spec.PropertyReads, pc *pieces) string {
	var b strings.Builder
	if r.Meta {
		b.WriteString(pc.meta)
	}
	if r.Meta || r.MetaFragments {
		b.WriteString(pc.frags)
	}
	if r.Meta || r.MetaEnd {
		b.WriteString(pc.end)
	}
	if r.Stores {
		b.WriteString(pc.stores)
	}
	for c := range pc.status {
		if r.ClientStatus {
			b.WriteString(pc.status[c])
		}
		if r.ClientClass {
			b.WriteString(pc.class[c])
		}
		if r.ClientLAC {
			b.WriteString(pc.lac[c])
		}
	}
	if r.LiveAdds {
		b.WriteString(pc.live)
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
// model of declaredModels; the default tier checks the shipped
// invariants' reads on every model and each built-in's on every other
// one. Properties declaring the same reads share one check (the
// reduction and the projection depend on the reads alone).
func TestVisibleValuesKept(t *testing.T) {
	t.Parallel() // the graphs are shared, explored once, read-only
	shipped, err := invariants.Lookup(invariants.Default)
	if err != nil {
		t.Fatal(err)
	}
	union := spec.PropertyReads{}
	for _, inv := range shipped {
		union = union.Union(*inv.Reads)
	}
	byReads := map[spec.PropertyReads][]string{union: {"the shipped invariants"}}
	for _, inv := range invariants.All {
		if inv.Reads != nil && !inv.Reads.FieldWise {
			byReads[*inv.Reads] = append(byReads[*inv.Reads], inv.Name)
		}
	}
	type readSet struct {
		name string
		r    spec.PropertyReads
	}
	var reads []readSet
	for r, names := range byReads {
		reads = append(reads, readSet{strings.Join(names, " and "), r})
	}
	slices.SortFunc(reads, func(a, b readSet) int { return strings.Compare(a.name, b.name) })
	for mi, p := range declaredModels() {
		g, _ := exploreDeclared(t, p)
		pcs := make([]pieces, len(g.States))
		var st spec.State
		for i, enc := range g.States {
			if err := g.Model.Decode(enc, &st); err != nil {
				t.Fatal(err)
			}
			pcs[i] = piecesOf(p, &st)
		}
		for ri, rs := range reads {
			name, r := rs.name, rs.r
			if !testtier.IsLong() && r != union && (mi+ri)%2 == 1 {
				continue
			}
			red := reduceDeclared(t, g, &r)
			full, kept := map[string]bool{}, map[string]bool{}
			for i := range pcs {
				v := project(r, &pcs[i])
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
			t.Logf("%s, %s: %d values in %d states; reduced: %d states", p.String(), name, len(full), len(g.States), red.States)
		}
	}
}
