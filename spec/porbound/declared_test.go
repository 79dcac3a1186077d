package porbound

import (
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
)

// coarseFootprint is the footprint a first declared reduction would give
// each transition: the components it may read or write, as bits — a
// bookie (0-7), a client (8-11), the metadata (12), the fault budgets
// (13), and the messages between one client and one bookie (16 + 8c + b).
// A bookie's step touches itself and its messages with the client; a
// fault touches the bookie, the budgets, the metadata and all its
// messages; a client receiving an add confirmation touches itself and
// that bookie's messages; every other client step touches itself, all its
// messages and the metadata.
func coarseFootprint(a spec.Action) (fp uint64) {
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

// declared is the relations footprints give: two transitions are
// dependent, and either may enable the other, when their footprints meet.
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

// TestCoarseFootprintIsConservative: the footprint relations contain the
// measured ones (every measured dependence and enabling is between
// transitions whose footprints meet), which is what a declared reduction
// must satisfy to be sound; and how many states they keep, against the
// measured relations (docs/reduction.md: coarse footprints keep all).
func TestCoarseFootprintIsConservative(t *testing.T) {
	t.Parallel() // the graphs are shared, explored once, read-only
	models := []spec.Params{params(2, 1, 1, false), params(3, 3, 2, true)}
	if testtier.IsLong() {
		models = append(models, params(2, 2, 1, false))
	}
	for _, p := range models {
		g := explore(t, p)
		meas := measure(g)
		decl := declared(g, coarseFootprint)
		for x := range g.Groups {
			for y := range g.Groups {
				if meas.Dep[x].has(y) && !decl.Dep[x].has(y) {
					t.Errorf("%d/%d/%d: %v and %v are dependent, their footprints do not meet", p.Bookies, p.WriteQuorum, p.AckQuorum, g.Groups[x], g.Groups[y])
				}
				if meas.Enabler[x].has(y) && !decl.Enabler[x].has(y) {
					t.Errorf("%d/%d/%d: %v enables %v, their footprints do not meet", p.Bookies, p.WriteQuorum, p.AckQuorum, g.Groups[y], g.Groups[x])
				}
			}
		}
		read := memoRead(g, readsDefault(p))
		decl.SetVisible(g, read)
		meas.SetVisible(g, read)
		t.Logf("%d/%d/%d reliable=%v: footprints keep %d, measured relations %d, of %d states",
			p.Bookies, p.WriteQuorum, p.AckQuorum, p.ReliableNetwork, Reduce(g, decl).States, Reduce(g, meas).States, len(g.States))
	}
}
