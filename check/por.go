package check

import (
	"fmt"
	"slices"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/stubborn"
)

// This file is --por: the search expands, in each state, a strong
// stubborn set of its enabled transitions (spec/stubborn) instead of all
// of them. Terminal states are all kept, so deadlocks and terminal-state
// properties get the same verdict; invariants get it too, through the
// visibility condition, from what each one declares it reads
// (invariants.Invariant.Reads). A counterexample is a real behaviour of
// the full model, but not necessarily the shortest one: the reduction
// leaves out interleavings, some of which may have been shorter.

// validatePOR adds to probs what keeps c from a reduced search.
func (c ModelConfig) validatePOR(probs *schema.Problems) {
	if !c.POR {
		return
	}
	if len(c.Eventually)+len(c.Probe)+len(c.Constraint) > 0 {
		probs.Add("por", "keeps terminal states and invariant violations, not what --eventually, --probe or --constraint ask about")
	}
	m, err := spec.NewModel(c.Params)
	if err != nil {
		return // Params.Validate reports it
	}
	if err := stubborn.Covers(m); err != nil {
		probs.Add("por", "%v", err)
	}
}

// porReads is what the invariants c checks read: nil when it checks
// only terminal states (and deadlock), everything when one of them does
// not declare what it reads (a CEL invariant; a built-in without Reads,
// such as the probes over faults).
func (c ModelConfig) porReads(m *Model) *spec.PropertyReads {
	var reads *spec.PropertyReads
	union := func(r spec.PropertyReads) {
		if reads == nil {
			reads = &spec.PropertyReads{}
		}
		*reads = reads.Union(r)
	}
	for _, inv := range m.invs {
		switch {
		case inv.Holds == nil:
		case inv.Reads == nil:
			union(spec.PropertyReads{All: true})
		default:
			union(*inv.Reads)
		}
	}
	if len(c.Invariant) > 0 {
		union(spec.PropertyReads{All: true})
	}
	return reads
}

// Reduction is what --por did: states expanded, and those expanded
// fully (no stubborn set smaller than what is enabled, or a visible
// transition in every one).
type Reduction struct {
	States, FullyExpanded int64
	Transitions           int // the transitions declared (the universe)
}

// reduction sums the expanders' figures; nil without --por.
func (m *Model) reduction() *Reduction {
	if m.red == nil {
		return nil
	}
	m.cov.mu.Lock()
	defer m.cov.mu.Unlock()
	r := &Reduction{Transitions: m.red.Size()}
	for _, sc := range m.cov.scratches {
		r.States += sc.States
		r.FullyExpanded += sc.Full
	}
	return r
}

// porExpander expands a state's stubborn set: it collects every
// successor, asks the reducer which transitions to keep, and emits
// those, checking on every edge it emits that spec's Progress measure
// increases (the acyclicity of the reduced graph, which the argument
// needs). With symmetry the set
// is chosen in the canonical form of the state and relabelled back, so
// that the choice is the same for every state of an orbit (Emerson, Jha
// and Peled, "Combining partial order and symmetry reductions", TACAS
// 1997): the reduced quotient is then a function of the orbits, whichever
// state of one the search holds.
type porExpander struct {
	*expander
	sc      *stubborn.Scratch
	labels  []spec.Action
	ends    []int // end of each successor's encoding in arena
	arena   []byte
	keep    []bool
	from    spec.Progress
	bad     error
	collect func(spec.Action, *spec.State)

	// With symmetry: the canonical form of the loaded state, its
	// transitions, those chosen, and the relabelling to it.
	canonical                 spec.State
	canonLabels, kept         []spec.Action
	rl                        spec.Relabelling
	collectCanon, collectKept func(spec.Action, *spec.State)
}

func (e *porExpander) Successors(emit func(explorer.Action, []byte, []byte)) {
	if e.canon != nil {
		e.symmetricSuccessors(emit)
		return
	}
	if e.collect == nil {
		e.collect = func(a spec.Action, s *spec.State) {
			if e.bad == nil && !e.from.Less(spec.ProgressOf(s)) {
				e.bad = progressError(a)
			}
			e.labels = append(e.labels, a)
			e.arena = e.m.spec.Encode(e.arena, s)
			e.ends = append(e.ends, len(e.arena))
		}
	}
	e.labels, e.ends, e.arena, e.bad = e.labels[:0], e.ends[:0], e.arena[:0], nil
	e.from = spec.ProgressOf(&e.cur)
	e.m.spec.Next(&e.cur, &e.scratch, e.collect)
	if e.bad != nil {
		panic(e.bad)
	}
	e.keep = resize(e.keep, len(e.labels))
	if err := e.sc.Choose(&e.cur, e.labels, e.keep); err != nil {
		panic(err)
	}
	start := 0
	for i, a := range e.labels {
		end := e.ends[i]
		if e.keep[i] {
			e.fired[a.Kind]++
			emit(ToLabel(a), e.arena[start:end], nil)
		}
		start = end
	}
}

// symmetricSuccessors is Successors under symmetry: the set is chosen
// in the canonical form Y = π(X) of the loaded state X, and X's
// successors by the transitions π⁻¹ of those chosen go out (the model is
// symmetric, so they are what Y's chosen successors are to Y). Running
// the model on X as well costs less than relabelling Y's successors back.
func (e *porExpander) symmetricSuccessors(emit func(explorer.Action, []byte, []byte)) {
	if e.collectCanon == nil {
		e.collectCanon = func(a spec.Action, _ *spec.State) { e.canonLabels = append(e.canonLabels, a) }
		e.collectKept = func(a spec.Action, s *spec.State) {
			if !slices.Contains(e.kept, e.rl.Action(a)) {
				return // not chosen: neither encoded nor canonicalised
			}
			if e.bad == nil && !e.from.Less(spec.ProgressOf(s)) {
				e.bad = progressError(a)
			}
			e.fired[a.Kind]++
			e.buf = e.m.spec.Encode(e.buf[:0], s)
			e.emitNext(ToLabel(a), e.buf, e.canon.Canonical(s))
		}
	}
	if err := e.m.spec.Decode(e.canon.Canonical(&e.cur), &e.canonical); err != nil {
		panic(err)
	}
	e.rl = e.canon.Last()
	e.canonLabels = e.canonLabels[:0]
	e.m.spec.Next(&e.canonical, &e.scratch, e.collectCanon)
	e.keep = resize(e.keep, len(e.canonLabels))
	if err := e.sc.Choose(&e.canonical, e.canonLabels, e.keep); err != nil {
		panic(err)
	}
	e.kept = e.kept[:0]
	for i, a := range e.canonLabels {
		if e.keep[i] {
			e.kept = append(e.kept, a)
		}
	}
	e.from, e.bad, e.emitNext = spec.ProgressOf(&e.cur), nil, emit
	e.m.spec.Next(&e.cur, &e.scratch, e.collectKept)
	e.emitNext = nil
	if e.bad != nil {
		panic(e.bad)
	}
}

func progressError(a spec.Action) error {
	return fmt.Errorf("--por: %v does not increase the progress measure, so the state graph may have a cycle and the reduction is not sound for it", a)
}

// resize returns b with length n, reusing its array when large enough.
func resize(b []bool, n int) []bool {
	if cap(b) < n {
		return make([]bool, n)
	}
	return b[:n]
}
