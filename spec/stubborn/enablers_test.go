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
	m, states, enabled := shippedStates(t, 3000)
	r, err := New(m, &spec.PropertyReads{Stores: true})
	if err != nil {
		t.Fatal(err)
	}
	fps, _ := m.Footprints()
	sc := r.NewScratch()
	checked := 0
	for i := range states {
		s := &states[i]
		on := map[int32]bool{}
		for _, a := range enabled[i] {
			on[r.index[a]] = true
		}
		sc.s, sc.liveVarsKnown = s, false
		clear(sc.nesKnown)
		for u := range r.universe {
			if on[int32(u)] {
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
