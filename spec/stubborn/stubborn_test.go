package stubborn

import (
	"testing"

	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
)

// shippedStates is a breadth-first prefix of the shipped configuration
// (4 bookies, 2 clients, Qw 3, Qa 2, one entry), each state with its
// enabled transitions in Next's order.
func shippedStates(tb testing.TB, n int) (*spec.Model, []spec.State, [][]spec.Action) {
	tb.Helper()
	m, err := spec.NewModel(spec.Params{Bookies: 4, Clients: 2, WriteQuorum: 3, AckQuorum: 2, Entries: 1, Inflight: 1})
	if err != nil {
		tb.Fatal(err)
	}
	init := m.Init()
	states := []spec.State{init}
	seen := map[string]bool{string(m.Encode(nil, &init)): true}
	var enabled [][]spec.Action
	var scratch spec.State
	for i := 0; i < len(states) && len(enabled) < n; i++ {
		var labels []spec.Action
		m.Next(&states[i], &scratch, func(a spec.Action, s *spec.State) {
			labels = append(labels, a)
			if enc := m.Encode(nil, s); !seen[string(enc)] && len(states) < 2*n {
				seen[string(enc)] = true
				var c spec.State
				c.CopyFrom(s)
				states = append(states, c)
			}
		})
		enabled = append(enabled, labels)
	}
	return m, states[:len(enabled)], enabled
}

// readsOf is what the shipped invariants read.
func readsOf(tb testing.TB, names []string) *spec.PropertyReads {
	invs, err := invariants.Lookup(names)
	if err != nil {
		tb.Fatal(err)
	}
	var r spec.PropertyReads
	for _, inv := range invs {
		r = r.Union(*inv.Reads)
	}
	return &r
}

// BenchmarkChoose measures the choice of a stubborn set alone, per state,
// on the first states of the shipped configuration with its invariants:
// with symmetry and --por it was as much of the search as the canonical
// form (docs/reduction.md, "The stubborn set's cost").
func BenchmarkChoose(b *testing.B) {
	m, states, enabled := shippedStates(b, 20000)
	r, err := New(m, readsOf(b, invariants.Default))
	if err != nil {
		b.Fatal(err)
	}
	sc := r.NewScratch()
	keep := make([]bool, 64)
	kept := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % len(states)
		k := keep[:len(enabled[j])]
		if err := sc.Choose(&states[j], enabled[j], nil, k); err != nil {
			b.Fatal(err)
		}
		for _, x := range k {
			if x {
				kept++
			}
		}
	}
	b.ReportMetric(float64(kept)/float64(b.N), "kept/state")
}
