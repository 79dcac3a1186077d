package stubborn

import (
	"fmt"
	"testing"

	"github.com/bkcheck/bkcheck/spec"
)

// Explain prints why seed's closure grows.
func (sc *Scratch) explain(s *spec.State, enabled []spec.Action, seedA spec.Action, t *testing.T) {
	r := sc.r
	keep := make([]bool, len(enabled))
	sc.Choose(s, enabled, keep)
	sc.s, sc.conf = s, r.conflicts(s)
	clear(sc.dead)
	clear(sc.live)
	clear(sc.nesKnown)
	seed := int(r.index[seedA])
	why := map[int]int{seed: -1}
	work := []int{seed}
	lines := 0
	for len(work) > 0 && lines < 40 {
		x := work[0]
		work = work[1:]
		for w, word := range sc.brings(x) {
			for ; word != 0; word &= word - 1 {
				u := w*64 + int(trailing(word))
				if _, ok := why[u]; ok {
					continue
				}
				if !sc.enabled.has(u) && sc.isDead(u) {
					continue
				}
				why[u] = x
				work = append(work, u)
				kind := "conf"
				if !sc.enabled.has(x) {
					kind = "nes"
				}
				t.Logf("   %v (en %v) <-%s- %v", r.universe[u], sc.enabled.has(u), kind, r.universe[x])
				lines++
			}
		}
	}
}

func trailing(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

func TestDebugLossy(t *testing.T) {
	p := spec.DefaultParams()
	p.Bookies, p.WriteQuorum, p.AckQuorum = 2, 1, 1
	m, _ := spec.NewModel(p)
	r, _ := New(m, nil)
	sc := r.NewScratch()
	init := m.Init()
	frontier := []spec.State{init}
	var scratch spec.State
	shown := 0
	seen := map[string]bool{}
	for depth := 0; depth < 12 && shown < 2; depth++ {
		var next []spec.State
		for i := range frontier {
			s := &frontier[i]
			var labels []spec.Action
			m.Next(s, &scratch, func(a spec.Action, n *spec.State) {
				labels = append(labels, a)
				k := string(m.Encode(nil, n))
				if !seen[k] && len(next) < 3000 {
					seen[k] = true
					var c spec.State
					c.CopyFrom(n)
					next = append(next, c)
				}
			})
			if depth >= 8 && len(labels) >= 4 && shown < 2 && i%50 == 0 {
				// look for a bookie step seed
				for _, a := range labels {
					if a.Kind <= spec.BookieSendsReadResponse && a.Lost == 0 {
						t.Logf("state depth %d, enabled %v; seed %v", depth, labels, a)
						sc.explain(s, labels, a, t)
						shown++
						break
					}
				}
			}
		}
		frontier = next
	}
	_ = fmt.Sprint
}
