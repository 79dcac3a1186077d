package liveness

import (
	"context"
	"fmt"
	"slices"

	"github.com/bkcheck/bkcheck/explorer"
)

// inSub reports whether v is a node of property j's subgraph: expanded,
// inside the constraints, with bit j pending.
func (g *graph) inSub(v uint32, j int) bool {
	return int(v) < g.expanded && g.pending[v]&(1<<uint(j)) != 0 && !g.isOutside(v)
}

// enabled is the set of constraints some non-self transition of v takes.
func (g *graph) enabled(v uint32) [4]uint64 {
	var m [4]uint64
	for e := g.edgeStart[v]; e < g.edgeStart[v+1]; e++ {
		f := &g.fairMask[g.act[e].Kind]
		m[0], m[1], m[2], m[3] = m[0]|f[0], m[1]|f[1], m[2]|f[2], m[3]|f[3]
	}
	return m
}

// disabled is the set of constraints no transition of v takes.
func (g *graph) disabled(v uint32) [4]uint64 {
	en := g.enabled(v)
	var m [4]uint64
	for i := range m {
		m[i] = g.allFair[i] &^ en[i]
	}
	return m
}

func (g *graph) depth(v uint32) int {
	d := 0
	for u := g.parent[v]; u != noNode; u = g.parent[u] {
		d++
	}
	return d
}

type frame struct {
	v uint32
	e uint64
}

// property decides property j: its counterexample, or nil.
func (g *graph) property(ctx context.Context, j int, res *Result) (*Lasso, error) {
	n := len(g.enc)
	// A terminal state with j pending: the least deep.
	terminal := uint32(noNode)
	for v := 0; v < g.expanded; v++ {
		if g.edgeStart[v] == g.edgeStart[v+1] && g.inSub(uint32(v), j) {
			terminal = uint32(v)
			break
		}
	}
	// Fair components: iterative Tarjan over the subgraph.
	if g.index == nil {
		g.index, g.low, g.comp = make([]uint32, n), make([]uint32, n), make([]uint32, n)
		g.account()
	} else {
		clear(g.index)
		clear(g.comp)
	}
	index, low, comp := g.index, g.low, g.comp
	g.stamp = noNode
	var counter, sccID uint32
	var stack []uint32
	var calls []frame
	bestRoot, bestComp := uint32(noNode), uint32(0)
	steps := 0
	visit := func(v uint32) {
		counter++
		index[v], low[v] = counter, counter
		stack = append(stack, v)
		calls = append(calls, frame{v: v, e: g.edgeStart[v]})
	}
	for r := 0; r < g.expanded; r++ {
		if index[r] != 0 || !g.inSub(uint32(r), j) {
			continue
		}
		visit(uint32(r))
		for len(calls) > 0 {
			if steps++; steps&(1<<16-1) == 0 && ctx.Err() != nil {
				res.Status, res.Reason = explorer.Unknown, "interrupted: "+ctx.Err().Error()
				return nil, nil
			}
			f := &calls[len(calls)-1]
			v := f.v
			if f.e < g.edgeStart[v+1] {
				w := g.to[f.e]
				f.e++
				switch {
				case !g.inSub(w, j):
				case index[w] == 0:
					visit(w)
				case comp[w] == 0: // on the stack
					low[v] = min(low[v], index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				p := calls[len(calls)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			// v is the root of a component: the stack down to v.
			k := len(stack) - 1
			for stack[k] != v {
				k--
			}
			members := stack[k:]
			stack = stack[:k]
			sccID++
			for _, u := range members {
				comp[u] = sccID
			}
			if len(members) < 2 {
				continue // no self-loops: no internal edge
			}
			res.SCCs++
			var taken, disabled [4]uint64
			root := uint32(noNode)
			for _, u := range members {
				root = min(root, u)
				var en [4]uint64
				for e := g.edgeStart[u]; e < g.edgeStart[u+1]; e++ {
					fm := &g.fairMask[g.act[e].Kind]
					for i := range en {
						en[i] |= fm[i]
					}
					if comp[g.to[e]] == sccID {
						for i := range taken {
							taken[i] |= fm[i]
						}
					}
				}
				for i := range disabled {
					disabled[i] |= g.allFair[i] &^ en[i]
				}
			}
			for i := range taken {
				taken[i] |= disabled[i]
			}
			if covers(taken, g.allFair) && root < bestRoot {
				bestRoot, bestComp = root, sccID
			}
		}
	}
	var best *Lasso
	if terminal != noNode {
		steps, err := g.realize(g.stem(terminal), nil)
		if err != nil {
			return nil, err
		}
		best = &Lasso{Property: j, Steps: steps, Loop: -1}
	}
	if bestRoot != noNode && (best == nil || g.depth(bestRoot)+1 < len(best.Steps)) {
		l, err := g.lasso(j, bestRoot, bestComp)
		if err != nil {
			return nil, err
		}
		if best == nil || len(l.Steps) < len(best.Steps) {
			best = l
		}
	}
	return best, nil
}

// lasso builds the counterexample of a fair component: the stem to r and
// a cycle from r back to r inside the component (comp[v] == cid) that,
// for each constraint, takes one of its edges or visits a state where it
// is disabled.
func (g *graph) lasso(j int, r, cid uint32) (*Lasso, error) {
	inC := func(v uint32) bool { return g.comp[v] == cid }
	nc := len(g.opt.Fair)
	wit := make([]Witness, nc)
	done := make([]bool, nc)
	var cyc []step // after r
	mark := func(pos int, s step, edge bool) {
		if edge {
			fm := g.fairMask[s.act.Kind]
			for c := range nc {
				if !done[c] && fm[c/64]&(1<<(c%64)) != 0 {
					done[c], wit[c] = true, Witness{Step: pos, Taken: true}
				}
			}
		}
		dis := g.disabled(s.node)
		for c := range nc {
			if !done[c] && dis[c/64]&(1<<(c%64)) != 0 {
				done[c], wit[c] = true, Witness{Step: pos}
			}
		}
	}
	mark(0, step{node: r}, false)
	appendPath := func(p []step) {
		for _, s := range p {
			cyc = append(cyc, s)
			mark(len(cyc), s, true)
		}
	}
	cur := r
	for c := range nc {
		if done[c] {
			continue
		}
		bit := [4]uint64{}
		bit[c/64] = 1 << (c % 64)
		p := g.bfs(cur, inC, func(u uint32, e uint64) bool {
			return g.fairMask[g.act[e].Kind][c/64]&bit[c/64] != 0
		}, func(w uint32) bool {
			return g.disabled(w)[c/64]&bit[c/64] != 0
		})
		if p == nil {
			return nil, fmt.Errorf("liveness: no way to satisfy %s inside a component found fair", g.opt.Fair[c].Name)
		}
		appendPath(p)
		cur = cyc[len(cyc)-1].node
	}
	if cur != r || len(cyc) == 0 {
		p := g.bfs(cur, inC, func(_ uint32, e uint64) bool { return g.to[e] == r }, nil)
		if p == nil {
			return nil, fmt.Errorf("liveness: no way back to the cycle's start inside its component")
		}
		appendPath(p)
	}
	stem := g.stem(r)
	loop := len(stem) - 1
	path := append(stem, cyc...)
	steps, err := g.realize(path, &loop)
	if err != nil {
		return nil, err
	}
	for c := range wit {
		wit[c].Step += loop
	}
	return &Lasso{Property: j, Steps: steps, Loop: loop, Fair: wit}, nil
}

// bfs is a shortest path inside the component from cur (excluded) to the
// first edge that edgeOK accepts (the path ends with that edge) or the
// first node other than cur that nodeOK accepts; nil if none. Every path
// has at least one step. It runs after the property's Tarjan pass, whose
// arrays it reuses: index holds a stamp for each node visited by this
// search (stamps count down from the top, above every Tarjan index), low
// the node it was reached from.
func (g *graph) bfs(cur uint32, in func(uint32) bool, edgeOK func(u uint32, e uint64) bool, nodeOK func(uint32) bool) []step {
	g.stamp--
	stamp := g.stamp
	seen, from := g.index, g.low
	seen[cur] = stamp
	path := func(end uint32, last *step) []step {
		var p []step
		if last != nil {
			p = append(p, *last)
		}
		for v := end; v != cur; v = from[v] {
			u := from[v]
			s := step{node: v}
			for e := g.edgeStart[u]; e < g.edgeStart[u+1]; e++ {
				if g.to[e] == v {
					s.act = g.act[e]
					break
				}
			}
			p = append(p, s)
		}
		slices.Reverse(p)
		return p
	}
	queue := []uint32{cur}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for e := g.edgeStart[u]; e < g.edgeStart[u+1]; e++ {
			w := g.to[e]
			if !in(w) {
				continue
			}
			if edgeOK(u, e) {
				return path(u, &step{node: w, act: g.act[e]})
			}
			if seen[w] == stamp {
				continue
			}
			seen[w], from[w] = stamp, u
			if nodeOK != nil && nodeOK(w) {
				return path(w, nil)
			}
			queue = append(queue, w)
		}
	}
	return nil
}
