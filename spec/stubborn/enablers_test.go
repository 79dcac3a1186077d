package stubborn

import (
	"math/bits"
	"slices"
	"testing"

	"github.com/bkcheck/bkcheck/spec"
)

// TestEnablersMatchNecessary holds the enablers Choose computes from
// NecessaryInto's list of variables to those of Footprints.Necessary, the
// set form porbound checks against whole graphs, on every disabled
// transition of the first states of a model with ensemble changes.
func TestEnablersMatchNecessary(t *testing.T) {
	m, err := spec.NewModel(spec.Params{Bookies: 4, Clients: 2, WriteQuorum: 3, AckQuorum: 2, Entries: 1, Inflight: 1})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(m, &spec.PropertyReads{Stores: true})
	if err != nil {
		t.Fatal(err)
	}
	fps, _ := m.Footprints()
	sc := r.NewScratch()
	init := m.Init()
	states := []spec.State{init}
	seen := map[string]bool{string(m.Encode(nil, &init)): true}
	var scratch spec.State
	checked := 0
	for i := 0; i < len(states) && i < 3000; i++ {
		s := &states[i]
		enabled := map[int32]bool{}
		m.Next(s, &scratch, func(a spec.Action, n *spec.State) {
			enabled[r.index[a]] = true
			if enc := m.Encode(nil, n); !seen[string(enc)] {
				seen[string(enc)] = true
				var c spec.State
				c.CopyFrom(n)
				states = append(states, c)
			}
		})
		sc.s, sc.liveVarsKnown = s, false
		clear(sc.nesKnown)
		for u := range r.universe {
			if enabled[int32(u)] {
				continue
			}
			want := make(bitset, r.words)
			for w, word := range fps.Necessary(s, r.universe[u]) {
				for ; word != 0; word &= word - 1 {
					want.or(r.writers[w*64+bits.TrailingZeros64(word)])
				}
			}
			if got := sc.enablers(u); !slices.Equal(got, want) {
				t.Fatalf("state %d, %v: enablers %x, from Necessary %x", i, r.universe[u], got, want)
			}
			checked++
		}
	}
	if checked < 10000 {
		t.Fatalf("only %d transitions checked", checked)
	}
}
