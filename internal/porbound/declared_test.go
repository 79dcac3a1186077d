package porbound

import (
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/spec"
)

func footprint(a spec.Action) (fp uint64) {
	name := a.Kind.String()
	b, c := int(a.Bookie), int(a.Client)
	chAll := func(c int) uint64 { return uint64(0xff) << (16 + 8*uint(c)) }
	ch := func(c, b int) uint64 { return 1 << (16 + 8*uint(c) + uint(b)) }
	const meta, faults = 1 << 12, 1 << 13
	switch {
	case strings.HasPrefix(name, "Bookie") && c >= 0:
		fp = 1<<uint(b) | ch(c, b)
	case strings.HasPrefix(name, "Bookie"):
		fp = 1<<uint(b) | faults | meta
		for c := 0; c < 4; c++ {
			fp |= ch(c, b)
		}
	case b >= 0 && (a.Kind == spec.ClientReceivesAddConfirmedResponse || a.Kind == spec.RecoveryClientReceivesAddConfirmedResponse):
		fp = 1<<(8+uint(c)) | ch(c, b)
	case b >= 0:
		fp = 1<<(8+uint(c)) | chAll(c)
	default:
		fp = 1<<(8+uint(c)) | chAll(c) | meta
	}
	return fp
}

func declared(g *Graph, fp func(spec.Action) uint64) *Relations {
	n := len(g.Groups)
	r := &Relations{Dep: make([]bitset, n), Enabler: make([]bitset, n)}
	for t := range n {
		r.Dep[t], r.Enabler[t] = newBitset(n), newBitset(n)
		for u := range n {
			if fp(g.Groups[t])&fp(g.Groups[u]) != 0 {
				r.Dep[t].set(u)
				r.Enabler[t].set(u)
			}
		}
	}
	return r
}

func TestDeclaredExperiment(t *testing.T) {
	for _, p := range []spec.Params{params(2, 1, 1, false), params(2, 2, 1, false), params(3, 3, 2, true)} {
		g := explore(t, p)
		meas := Measure(g)
		decl := declared(g, footprint)
		miss := 0
		for x := range g.Groups {
			for y := range g.Groups {
				if meas.Dep[x].has(y) && !decl.Dep[x].has(y) {
					if miss < 5 {
						t.Logf("missed dep %v / %v", g.Groups[x], g.Groups[y])
					}
					miss++
				}
				if meas.Enabler[x].has(y) && !decl.Enabler[x].has(y) {
					if miss < 5 {
						t.Logf("missed enabler of %v: %v", g.Groups[x], g.Groups[y])
					}
					miss++
				}
			}
		}
		decl.SetVisible(g, readsDefault(p))
		meas.SetVisible(g, readsDefault(p))
		rd, rm := Reduce(g, decl), Reduce(g, meas)
		mixA := &Relations{Dep: decl.Dep, Enabler: meas.Enabler, Visible: meas.Visible}
		mixB := &Relations{Dep: meas.Dep, Enabler: decl.Enabler, Visible: meas.Visible}
		t.Logf("%d/%d/%d: %d misses; declared %d, measured %d, declDep+measEn %d, measDep+declEn %d of %d", p.Bookies, p.WriteQuorum, p.AckQuorum, miss, rd.States, rm.States, Reduce(g, mixA).States, Reduce(g, mixB).States, len(g.States))
	}
}

func TestDeclaredGap(t *testing.T) {
	p := params(3, 3, 2, true)
	g := explore(t, p)
	meas := Measure(g)
	decl := declared(g, footprint)
	type pair struct{ a, b string }
	cnt := map[pair]int{}
	for s := range g.States {
		en := g.enabled(int32(s))
		for x := range g.Groups {
			if !en.has(x) {
				continue
			}
			for y := range g.Groups {
				if y <= x || !en.has(y) {
					continue
				}
				if decl.Dep[x].has(y) && !meas.Dep[x].has(y) {
					a, b := g.Groups[x], g.Groups[y]
					same := ""
					if a.Client == b.Client {
						same += " sameC"
					}
					if a.Bookie == b.Bookie {
						same += " sameB"
					}
					cnt[pair{a.Kind.String(), b.Kind.String() + same}]++
				}
			}
		}
	}
	for k, v := range cnt {
		if v > 500 {
			t.Logf("%7d %s / %s", v, k.a, k.b)
		}
	}
}
