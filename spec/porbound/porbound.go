// Package porbound measures how much a partial-order reduction could save
// on bkcheck's model, before anyone builds one into the search.
//
// A stubborn-set (persistent-set) reduction expands, in each state, a set of
// transitions closed under two relations: dependence (two transitions that
// do not commute, or one disables the other) and enabling (which
// transitions can make a disabled one enabled). A checker declares both
// relations conservatively from what each action reads and writes; the
// tighter they are, the smaller the sets and the fewer the states. This
// package measures them exactly instead, on a model's whole reachable
// graph: a transition is an action label (kind, client, bookie, entry,
// loss pattern), two are dependent when they fail to commute in some state
// where both are enabled, and one enables another when it does so on some
// edge. Declared relations can only be coarser than these, so the states
// a reduction with the measured relations keeps are what a reduction over
// the same transitions could hope for: an estimate of its best case, not a
// promise (the set chosen in each state is the smallest of those seeded by
// one enabled transition, a greedy choice, as in practice).
//
// The measured relations are exact only for the graph they were measured
// on, so a reduced search with them proves nothing a full search has not;
// its use is the estimate, and the tests that check the stubborn-set
// algorithm against the full graph (every terminal state kept; an
// invariant violated in the reduced graph wherever it is in the full one).
package porbound

import (
	"fmt"
	"math/bits"

	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/stubborn"
)

// Graph is a model's whole reachable state graph, states numbered in
// breadth-first order from the initial state (0).
type Graph struct {
	Model  *spec.Model
	States [][]byte      // encodings, by state number
	Succ   [][]Edge      // outgoing edges, in Next's order
	Groups []spec.Action // transitions, numbered by first appearance
}

// Edge is one transition: the successor, the transition's number, and
// whether it may close a cycle (it does not increase spec.Progress: the
// edges the reduction's cycle proviso is about).
type Edge struct {
	To, Group int32
	Closing   bool
}

// Explore builds the whole graph of p; it fails past maxStates states.
func Explore(p spec.Params, maxStates int) (*Graph, error) {
	m, err := spec.NewModel(p)
	if err != nil {
		return nil, err
	}
	g := &Graph{Model: m}
	index := map[string]int32{}
	group := map[spec.Action]int32{}
	add := func(enc []byte) int32 {
		if i, ok := index[string(enc)]; ok {
			return i
		}
		i := int32(len(g.States))
		index[string(enc)] = i
		g.States = append(g.States, append([]byte(nil), enc...))
		return i
	}
	init := m.Init()
	add(m.Encode(nil, &init))
	var cur, scratch spec.State
	var buf []byte
	for i := 0; i < len(g.States); i++ {
		if len(g.States) > maxStates {
			return nil, fmt.Errorf("porbound: more than %d states", maxStates)
		}
		if err := m.Decode(g.States[i], &cur); err != nil {
			return nil, fmt.Errorf("porbound: state %d: %w", i, err)
		}
		var es []Edge
		from := spec.ProgressOf(&cur)
		m.Next(&cur, &scratch, func(a spec.Action, s *spec.State) {
			buf = m.Encode(buf[:0], s)
			to := add(buf)
			id, ok := group[a]
			if !ok {
				id = int32(len(g.Groups))
				group[a] = id
				g.Groups = append(g.Groups, a)
			}
			es = append(es, Edge{To: to, Group: id, Closing: !from.Less(spec.ProgressOf(s))})
		})
		g.Succ = append(g.Succ, es)
	}
	return g, nil
}

// Terminal reports whether state i has no successor.
func (g *Graph) Terminal(i int32) bool { return len(g.Succ[i]) == 0 }

// bitset is a set of transition numbers.
type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (b bitset) set(i int)      { b[i/64] |= 1 << uint(i%64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<uint(i%64)) != 0 }
func (b bitset) clear()         { clear(b) }
func (b bitset) count() (n int) {
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// Relations are the dependence and enabling relations measured on a graph,
// and which transitions are visible to the property checked.
type Relations struct {
	Dep     []bitset // Dep[t]: transitions dependent on t (t itself included)
	Enabler []bitset // Enabler[t]: transitions that enable t on some edge
	Visible bitset   // nil: no visibility condition (terminal states only)
}

// enabled returns the transitions enabled in state i, in a fresh set.
func (g *Graph) enabled(i int32) bitset {
	b := newBitset(len(g.Groups))
	for _, e := range g.Succ[i] {
		b.set(int(e.Group))
	}
	return b
}

// after returns the states t leads to from state i.
func (g *Graph) after(i, t int32) []int32 {
	var out []int32
	for _, e := range g.Succ[i] {
		if e.Group == t {
			out = append(out, e.To)
		}
	}
	return out
}

// Measure computes the dependence and enabling relations of g. Two
// transitions t, u enabled in a state s are independent there when t
// leaves u enabled, u leaves t enabled, and t;u and u;t reach the same
// set of states from s; they are dependent if that fails in some state.
func Measure(g *Graph) *Relations {
	n := len(g.Groups)
	r := &Relations{Dep: make([]bitset, n), Enabler: make([]bitset, n)}
	for t := range n {
		r.Dep[t], r.Enabler[t] = newBitset(n), newBitset(n)
		r.Dep[t].set(t)
	}
	for s := int32(0); s < int32(len(g.States)); s++ {
		en := g.enabled(s)
		for _, e := range g.Succ[s] {
			for w, word := range g.enabled(e.To) {
				for x := word &^ en[w]; x != 0; x &= x - 1 {
					r.Enabler[w*64+bits.TrailingZeros64(x)].set(int(e.Group))
				}
			}
		}
		var ts []int32
		for t := range n {
			if en.has(t) {
				ts = append(ts, int32(t))
			}
		}
		for x, t := range ts {
			for _, u := range ts[x+1:] {
				if r.Dep[t].has(int(u)) {
					continue
				}
				tu, okT := g.then(s, t, u)
				ut, okU := g.then(s, u, t)
				if !okT || !okU || !sameSet(tu, ut) {
					r.Dep[t].set(int(u))
					r.Dep[u].set(int(t))
				}
			}
		}
	}
	return r
}

// then returns the states reached from s by t then u, and false if some
// successor of t leaves u disabled.
func (g *Graph) then(s, t, u int32) (map[int32]bool, bool) {
	out := map[int32]bool{}
	for _, s1 := range g.after(s, t) {
		next := g.after(s1, u)
		if len(next) == 0 {
			return nil, false
		}
		for _, s2 := range next {
			out[s2] = true
		}
	}
	return out, true
}

func sameSet(a, b map[int32]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// SetVisible marks visible every transition that changes, on some edge,
// what read returns: read is what the checked properties read of a state.
func (r *Relations) SetVisible(g *Graph, read func(*spec.State) string) {
	r.Visible = newBitset(len(g.Groups))
	var a, b spec.State
	for s := range g.States {
		g.Model.Decode(g.States[s], &a)
		before := read(&a)
		for _, e := range g.Succ[s] {
			if r.Visible.has(int(e.Group)) {
				continue
			}
			g.Model.Decode(g.States[e.To], &b)
			if read(&b) != before {
				r.Visible.set(int(e.Group))
			}
		}
	}
}

// Reduced is the outcome of a reduced search.
type Reduced struct {
	Reached       []bool // by state number
	States        int    // states reached
	FullyExpanded int    // states whose stubborn set held every enabled transition
}

// Reduce searches g breadth-first, expanding in each state the smallest
// strong stubborn set seeded by one enabled transition (ties: the lowest
// transition number, so the result is deterministic):
//   - an enabled transition brings in every transition dependent on it;
//   - a disabled one brings in every transition that enables it;
//   - with visibility, the seed is an enabled invisible transition (the
//     condition --por uses; spec/stubborn gives the argument).
//
// Every terminal state of g is reached (stubborn sets preserve deadlocks);
// with visibility and an acyclic g, every invariant over what the visible
// transitions change that fails in g fails in a reached state.
func Reduce(g *Graph, r *Relations) *Reduced {
	n := len(g.Groups)
	out := &Reduced{Reached: make([]bool, len(g.States))}
	out.Reached[0] = true
	queue := []int32{0}
	set, best := newBitset(n), newBitset(n)
	var work []int
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		en := g.enabled(s)
		total := en.count()
		bestN := total + 1
		for seed := range n {
			if !en.has(seed) || r.Visible != nil && r.Visible.has(seed) {
				continue
			}
			set.clear()
			set.set(seed)
			work = append(work[:0], seed)
			k := 1
			for len(work) > 0 && k < bestN {
				t := work[len(work)-1]
				work = work[:len(work)-1]
				src := r.Enabler[t]
				if en.has(t) {
					src = r.Dep[t]
				}
				for w, word := range src {
					for x := word &^ set[w]; x != 0; x &= x - 1 {
						u := w*64 + bits.TrailingZeros64(x)
						set.set(u)
						work = append(work, u)
						if en.has(u) {
							k++
						}
					}
				}
			}
			if k < bestN {
				bestN = k
				copy(best, set)
			}
		}
		if bestN >= total {
			out.FullyExpanded++
		}
		for _, e := range g.Succ[s] {
			if bestN < total && !best.has(int(e.Group)) {
				continue
			}
			if !out.Reached[e.To] {
				out.Reached[e.To] = true
				queue = append(queue, e.To)
			}
		}
	}
	for _, r := range out.Reached {
		if r {
			out.States++
		}
	}
	return out
}

// Acyclic reports whether g has no cycle (Kahn's algorithm). The
// visibility argument needs it: on a cycle a stubborn set could put a
// transition off for ever (the ignoring problem).
func Acyclic(g *Graph) bool {
	indeg := make([]int32, len(g.States))
	for _, es := range g.Succ {
		for _, e := range es {
			indeg[e.To]++
		}
	}
	var queue []int32
	for i, d := range indeg {
		if d == 0 {
			queue = append(queue, int32(i))
		}
	}
	done := 0
	for len(queue) > 0 {
		s := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		done++
		for _, e := range g.Succ[s] {
			if indeg[e.To]--; indeg[e.To] == 0 {
				queue = append(queue, e.To)
			}
		}
	}
	return done == len(g.States)
}

// ReduceStubborn searches g breadth-first, expanding in each state the
// transitions stubborn.Scratch.Choose keeps: the reduction --por runs,
// here on a whole graph so that tests can hold it against the full one.
func ReduceStubborn(g *Graph, r *stubborn.Reducer) (*Reduced, error) {
	sc := r.NewScratch()
	out := &Reduced{Reached: make([]bool, len(g.States))}
	out.Reached[0] = true
	queue := []int32{0}
	var st spec.State
	var labels []spec.Action
	var keep, closing []bool
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if err := g.Model.Decode(g.States[s], &st); err != nil {
			return nil, err
		}
		labels, closing = labels[:0], closing[:0]
		for _, e := range g.Succ[s] {
			labels = append(labels, g.Groups[e.Group])
			closing = append(closing, e.Closing)
		}
		keep = append(keep[:0], make([]bool, len(labels))...)
		if err := sc.Choose(&st, labels, closing, keep); err != nil {
			return nil, err
		}
		all := true
		for i, e := range g.Succ[s] {
			if !keep[i] {
				all = false
				continue
			}
			if !out.Reached[e.To] {
				out.Reached[e.To] = true
				queue = append(queue, e.To)
			}
		}
		if all {
			out.FullyExpanded++
		}
	}
	for _, r := range out.Reached {
		if r {
			out.States++
		}
	}
	return out, nil
}

// FutureEnabled returns, for every state, the transitions enabled in it
// or in some state reachable from it. The graph may have cycles
// (AutoRecovery's): the states of a strongly connected component share
// their future, and components are finished in reverse topological order
// (Tarjan's algorithm, iterative).
func FutureEnabled(g *Graph) []bitset {
	n, N := len(g.Groups), len(g.States)
	index, low := make([]int32, N), make([]int32, N)
	for i := range index {
		index[i] = -1
	}
	onStack := make([]bool, N)
	var stack []int32
	fut := make([]bitset, N)
	type frame struct{ s, next int32 }
	var calls []frame
	counter := int32(0)
	for root := range N {
		if index[root] >= 0 {
			continue
		}
		calls = append(calls, frame{int32(root), 0})
		index[root], low[root] = counter, counter
		counter++
		stack = append(stack, int32(root))
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			if int(f.next) < len(g.Succ[f.s]) {
				t := g.Succ[f.s][f.next].To
				f.next++
				switch {
				case index[t] < 0:
					index[t], low[t] = counter, counter
					counter++
					stack = append(stack, t)
					onStack[t] = true
					calls = append(calls, frame{t, 0})
				case onStack[t]:
					low[f.s] = min(low[f.s], index[t])
				}
				continue
			}
			s := f.s
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				p := calls[len(calls)-1].s
				low[p] = min(low[p], low[s])
			}
			if low[s] != index[s] {
				continue
			}
			// s roots a component: its members are on the stack above
			// it, and every component they reach is finished.
			k := len(stack) - 1
			for stack[k] != s {
				k--
			}
			members := stack[k:]
			b := newBitset(n)
			for _, x := range members {
				for _, e := range g.Succ[x] {
					b.set(int(e.Group))
					if !onStack[e.To] {
						for w := range b {
							b[w] |= fut[e.To][w]
						}
					}
				}
			}
			for _, x := range members {
				onStack[x] = false
				fut[x] = b
			}
			stack = stack[:k]
		}
	}
	return fut
}
