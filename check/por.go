package check

import (
	"bytes"
	"fmt"

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
	if len(c.Eventually)+len(c.Probe)+len(c.Constraint)+len(c.Fair) > 0 {
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
// fully (no stubborn set smaller than what is enabled, or no enabled
// transition invisible to the invariants to seed one).
type Reduction struct {
	States, FullyExpanded int64
	ByProviso             int64 // of FullyExpanded, those by the cycle proviso (stubborn.Scratch.Proviso)
	Transitions           int   // the transitions declared (the universe)
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
		r.ByProviso += sc.Proviso
	}
	return r
}

// porExpander expands a state's stubborn set: it collects every
// successor, checking on each edge that spec's Progress measure
// increases (the acyclicity the argument needs), asks the reducer which
// transitions to keep, and emits those. Successors are kept as copies
// until the choice is made, so only the chosen ones are encoded. With
// symmetry it is a symPORExpander.
type porExpander struct {
	*expander
	sc      *stubborn.Scratch
	labels  []spec.Action
	succs   []spec.State // the loaded state's successors, in Next's order
	keep    []bool
	closing []bool // successors whose edge does not increase spec.Progress (AutoRecovery's cycles)
	from    spec.Progress
	bad     error
	collect func(spec.Action, *spec.State)
	emitEnc func(spec.Action, *spec.State) // Successors', bound once so that a state costs no closure
}

// choose runs the model on the loaded state and marks in keep the
// successors of the stubborn set chosen in it.
func (e *porExpander) choose() {
	if e.collect == nil {
		cycles := e.m.spec.P.AutoRecovery
		e.collect = func(a spec.Action, s *spec.State) {
			closes := !e.from.Less(spec.ProgressOf(s))
			if closes && !cycles && e.bad == nil {
				e.bad = progressError(a)
			}
			e.closing = append(e.closing, closes)
			n := len(e.labels)
			if n == len(e.succs) {
				e.succs = append(e.succs, spec.State{})
			}
			e.succs[n].CopyFrom(s)
			e.labels = append(e.labels, a)
		}
	}
	e.labels, e.closing, e.from, e.bad = e.labels[:0], e.closing[:0], spec.ProgressOf(&e.cur), nil
	e.m.spec.Next(&e.cur, &e.scratch, e.collect)
	if e.bad != nil {
		panic(e.bad)
	}
	e.keep = resize(e.keep, len(e.labels))
	if err := e.sc.Choose(&e.cur, e.labels, e.closing, e.keep); err != nil {
		panic(err)
	}
}

// kept calls f on each chosen successor, in Next's order.
func (e *porExpander) kept(f func(spec.Action, *spec.State)) {
	for i, a := range e.labels {
		if e.keep[i] {
			e.fired[a.Kind]++
			f(a, &e.succs[i])
		}
	}
}

func (e *porExpander) Successors(emit func(explorer.Action, []byte, []byte)) {
	if e.emitEnc == nil {
		e.emitEnc = func(a spec.Action, s *spec.State) {
			e.buf = e.m.spec.Encode(e.buf[:0], s)
			e.emitNext(ToLabel(a), e.buf, nil)
		}
	}
	e.choose()
	e.emitNext = emit
	e.kept(e.emitEnc)
	e.emitNext = nil
}

// symPORExpander is --por with symmetry. The set is chosen in the
// canonical form of the state, so that the choice is the same for every
// state of an orbit (Emerson, Jha and Peled, "Combining partial order
// and symmetry reductions", TACAS 1997): the reduced quotient is then a
// function of the orbits. The search holds canonical forms (Init and
// every successor go out as their canonical form), so the loaded state is
// the canonical one and the model runs once on it; its chosen successors
// go out keyed by their canonical form, which is also their encoding. A
// trace of such a search steps from one orbit to the next but not from
// state to state; behaviour turns it into a behaviour of the model.
type symPORExpander struct {
	*porExpander
	emitY func(spec.Action, *spec.State)
}

// Successors emits each chosen successor's canonical form, which is both
// its encoding and its key. It is a plain Expander, not a KeyedExpander:
// the encoding is at hand, so the search can defer its table probes.
func (e *symPORExpander) Successors(emit func(explorer.Action, []byte, []byte)) {
	if e.emitY == nil {
		e.emitY = func(a spec.Action, s *spec.State) {
			key := e.canon.Canonical(s)
			e.emitNext(ToLabel(a), key, key)
		}
	}
	e.choose()
	e.emitNext = emit
	e.kept(e.emitY)
	e.emitNext = nil
}

// canonicalStates reports whether the search holds canonical forms
// rather than states (symPORExpander).
func (m *Model) canonicalStates() bool { return m.red != nil && m.sym != (spec.Symmetry{}) }

// behaviour turns a trace of canonical forms (canonicalStates), each the
// canonical form of a successor of the one before, into a behaviour of
// the model through the same orbits: it starts from the initial state
// and takes, at each step, the first successor (in Next's order, among
// all the model's transitions) whose canonical form is the next one of
// the trace. The model is symmetric, so there is one: the successor of
// the state by the relabelled transition.
func (m *Model) behaviour(steps []explorer.Step) ([]explorer.Step, error) {
	if len(steps) == 0 {
		return steps, nil
	}
	canon := m.spec.NewCanonicalizer(m.sym)
	cur, scratch := m.spec.Init(), spec.State{}
	if !bytes.Equal(canon.Canonical(&cur), steps[0].State) {
		return nil, fmt.Errorf("--por: the trace does not start in the initial state's orbit")
	}
	out := []explorer.Step{{Initial: true, State: m.spec.Encode(nil, &cur)}}
	var next spec.State
	for k, st := range steps[1:] {
		found := false
		m.spec.Next(&cur, &scratch, func(a spec.Action, s *spec.State) {
			if !found && bytes.Equal(canon.Canonical(s), st.State) {
				found = true
				next.CopyFrom(s)
				out = append(out, explorer.Step{Action: ToLabel(a), State: m.spec.Encode(nil, s)})
			}
		})
		if !found {
			return nil, fmt.Errorf("--por: trace step %d: no successor of the state in the orbit the search reached (model not symmetric?)", k+1)
		}
		cur.CopyFrom(&next)
	}
	return out, nil
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
