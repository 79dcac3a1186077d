package check

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/liveness"
	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
	"github.com/bkcheck/bkcheck/spec/specprops"
	"github.com/bkcheck/bkcheck/spec413"
	"github.com/bkcheck/bkcheck/traces"
)

// CEL properties (package properties, docs/properties.md) in a run:
//
//   - invariants and terminal properties are checked by the search itself,
//     after the built-ins, exactly like them;
//   - probes are evaluated on every state the search checks; one that
//     holds somewhere is flagged, and after the search a second search
//     that stops at the first state where it holds (the same breadth-first
//     order) gives its shortest witness. A probe never ends the search;
//   - eventually properties get a pass of their own after a complete
//     search without violation, over the product of the model with the set
//     of eventually properties not yet seen on the path (see eventually).

// noBuiltins is the --invariants value that selects no built-in property
// (to check CEL properties alone).
const noBuiltins = "none"

// builtinNames is c.Invariants without the "none" marker.
func (c ModelConfig) builtinNames() []string {
	if len(c.Invariants) == 1 && c.Invariants[0] == noBuiltins {
		return []string{}
	}
	return c.Invariants
}

// ChecksNothing reports whether a run of c checks no property at all (no
// built-in, no CEL property, no deadlock): it only counts the states, as
// TLC without invariants does.
func (c ModelConfig) ChecksNothing() bool {
	return len(c.builtinNames()) == 0 && c.Settings.Empty() && !c.CheckDeadlock
}

// validateBuiltins reports unknown names, and "none" among others.
func (c ModelConfig) validateBuiltins() error {
	if slices.Contains(c.Invariants, noBuiltins) && len(c.Invariants) > 1 {
		return fmt.Errorf("%s selects no built-in property and cannot be combined with others", noBuiltins)
	}
	_, err := invariants.Lookup(c.builtinNames())
	return err
}

// CELProperties parses and type-checks c's CEL properties against its
// parameters (EnsureDefaults first); nil when there are none. Its error is a
// schema.Problems naming each faulty property's setting.
func (c ModelConfig) CELProperties() (properties.PropertySet, error) {
	if c.Settings.Empty() {
		return nil, nil
	}
	var reserved []string
	for _, inv := range invariants.All {
		reserved = append(reserved, inv.Name)
	}
	// Every problem at once: the names, then the expressions that parse.
	var probs schema.Problems
	defs, err := c.Settings.Defs(reserved)
	probs.Merge(err)
	if len(c.Settings.Constraint) > 0 && len(c.Settings.Eventually) > 0 {
		probs.Add("constraint", "cannot be combined with --eventually (the eventually pass searches the product of the model and its properties, which has no constraint)")
	}
	if n := len(c.Settings.Eventually); n > maxEventually {
		probs.Add("eventually", "at most %d eventually properties per run (got %d)", maxEventually, n)
	}
	var set properties.PropertySet
	if c.Model == ModelV413 {
		// The model has no typed view: properties read its ITF values.
		set, err = properties.CompileModel(spec413.Vocabulary(c.Params413()), defs)
	} else {
		set, err = specprops.Compile(c.Params, defs)
	}
	probs.Merge(err)
	if err := probs.Err(); err != nil {
		return nil, err
	}
	return set, nil
}

// maxEventually bounds the eventually properties of a run: the eventually
// pass keeps one bit per property in each state.
const maxEventually = 64

// celProps is a run's CEL properties as the model checks them.
type celProps struct {
	set        properties.PropertySet
	invariants []int // indices into set.Props, by kind
	terminal   []int
	eventually []int
	probes     []int
	constraint []int         // state constraints: not claims
	probeSeen  []atomic.Bool // by position in probes: held in some state checked
	// target >= 0 makes a probe's witness search: Check reports
	// set.Properties()[target] where it holds, and nothing else is checked.
	target int
	// walkProbes leaves the probes out of Check: a random simulation's
	// walks ask them apart (eventuallyExpander.Goals), and go on.
	walkProbes bool
	leadsTo    bool // some eventually property is P ~> Q
}

func newCELProps(set properties.PropertySet) *celProps {
	if set == nil {
		return nil
	}
	cp := &celProps{set: set, target: -1}
	for i, p := range set.Properties() {
		if p.Trigger >= 0 {
			cp.leadsTo = true
		}
		switch p.Kind {
		case properties.Invariant:
			cp.invariants = append(cp.invariants, i)
		case properties.Terminal:
			cp.terminal = append(cp.terminal, i)
		case properties.Eventually:
			cp.eventually = append(cp.eventually, i)
		case properties.Probe:
			cp.probes = append(cp.probes, i)
		case properties.Constraint:
			cp.constraint = append(cp.constraint, i)
		}
	}
	cp.probeSeen = make([]atomic.Bool, len(cp.probes))
	return cp
}

// celChecker is an expander's share of the CEL properties.
type celChecker struct {
	cp *celProps
	ev properties.StateEvaluator
}

func (cp *celProps) newChecker() *celChecker {
	if cp == nil {
		return nil
	}
	ev, err := cp.set.NewStateEvaluator()
	if err != nil {
		panic(err) // the set compiled: its programs plan
	}
	return &celChecker{cp: cp, ev: ev}
}

// holds evaluates property i. An evaluation error (a missing key, a
// division by zero, an overflow) is an error in the property, not in the
// protocol: it ends the search with the error verdict naming the property
// and the CEL error, at the state where it happened, as TLC stops at an
// evaluation error (explorer.PropertyError).
func (cc *celChecker) holds(i int) bool {
	ok, err := cc.ev.Holds(i)
	if err != nil {
		panic(&explorer.PropertyError{Property: cc.cp.set.Properties()[i].Name, Err: err})
	}
	return ok
}

// check is Check's CEL part on the loaded state: the name of the first
// invariant that fails; probes that hold are flagged.
// s is the model's state (a *spec.State is read in place).
func (cc *celChecker) check(s any) string {
	cc.ev.LoadState(s)
	cp := cc.cp
	if cp.target >= 0 {
		if cc.holds(cp.target) {
			return cp.set.Properties()[cp.target].Name
		}
		return ""
	}
	for _, i := range cp.invariants {
		if !cc.holds(i) {
			return cp.set.Properties()[i].Name
		}
	}
	if cp.walkProbes {
		return ""
	}
	for j, i := range cp.probes {
		if !cp.probeSeen[j].Load() && cc.holds(i) {
			cp.probeSeen[j].Store(true)
		}
	}
	return ""
}

// inModel is InModel's CEL part on the state check loaded: whether every
// state constraint holds (an evaluation error puts the state outside, as
// it ends TLC's run; the constraint's trace explanation shows it).
func (cc *celChecker) inModel() bool {
	for _, i := range cc.cp.constraint {
		if !cc.holds(i) {
			return false
		}
	}
	return true
}

// checkTerminal is CheckTerminal's CEL part.
func (cc *celChecker) checkTerminal(s any) string {
	if cc.cp.target >= 0 {
		return ""
	}
	cc.ev.LoadState(s)
	for _, i := range cc.cp.terminal {
		if !cc.holds(i) {
			return cc.cp.set.Properties()[i].Name
		}
	}
	return ""
}

// answerChecked answers r, an invariant or terminal property the search
// itself checked: violated if the run's violation is r's, holds if the
// search completed without one, else unknown.
func answerChecked(rep *Report, r *PropertyResult) {
	switch {
	case rep.Status == explorer.Violation && rep.Violation.Invariant == r.Name:
		r.Status, r.Trace = Violated, rep.Trace
	case rep.Status == explorer.OK:
		r.Status = Holds
	default:
		r.Reason = "the search did not complete"
		if why := propertyFailure(rep, r.Name); why != "" {
			r.Reason = why
		}
	}
}

// PropertyResult is the answer for one CEL property.
type PropertyResult struct {
	Name, Kind, Expression, Statement string
	// Status: holds (invariant, terminal, eventually: on the whole
	// space), violated, found (a probe: Trace is its shortest witness),
	// not-reachable (a probe, on the whole space) or unknown (Reason).
	Status string
	Reason string
	Trace  *traces.Trace
	// Graph is, for an eventually property, the figures of the pass over
	// the behaviour graph (states paired with the properties pending).
	Graph *explorer.Stats
	// Cycles is, when the pass looked for fair cycles too (package
	// liveness: a model that may have cycles, or --fair), its figures:
	// edges, components, memory. nil otherwise.
	Cycles *liveness.Stats
}

// Property statuses.
const (
	Holds        = "holds"
	Violated     = "violated"
	Found        = "found"
	NotReachable = "not-reachable"
	Unknown      = "unknown"
)

// describeCEL fills in what the trace of a CEL property says about it,
// and the explanation of its last state.
func (m *Model) describeCEL(tr *traces.Trace) {
	if m.cel != nil {
		if i := m.cel.set.Index(tr.Invariant); i >= 0 {
			p := m.cel.set.Properties()[i]
			tr.Kind, tr.Expression, tr.Statement = p.Kind.String(), p.Expr, p.Statement
		}
	}
	if ex, err := Explain(tr); err == nil {
		tr.Explanation = ex
	}
}

// AnswerCEL implements Bound: the CEL properties' answers, probes'
// witnesses and the eventually pass (which may turn an ok into a
// violation) included.
func (m *Model) AnswerCEL(ctx context.Context, cfg Config, rep *Report) error {
	if m.cel == nil {
		return nil
	}
	return answerCEL(ctx, cfg, rep, m.cel, func(i int) (*traces.Trace, error) { return m.witness(ctx, cfg, i) },
		func(results map[string]*PropertyResult) error {
			return eventuallyPass(ctx, cfg, rep, results, m, m.cel)
		})
}

// answerCEL completes rep with a result for every CEL property of cp,
// for any model: witness finds probe i's shortest witness; eventually
// decides the eventually properties after a complete search without
// violation (nil: the model takes none).
func answerCEL(ctx context.Context, cfg Config, rep *Report, cp *celProps, witness func(i int) (*traces.Trace, error), eventually func(map[string]*PropertyResult) error) error {
	if cp == nil || ctx.Err() != nil {
		return nil
	}
	// The depth up to which every state was checked, whatever the number
	// of workers: a probe counts as found only if its witness is within
	// it, so that the answer does not depend on how far parallel workers
	// got into the level where the search stopped.
	checked := rep.Depth
	switch {
	case rep.Status == explorer.Violation, rep.Status == explorer.Error:
		checked = len(rep.Violation.Trace) - 1
	case rep.Status == explorer.Unknown && cfg.MaxDepth > 0 && rep.Depth >= cfg.MaxDepth:
		checked = cfg.MaxDepth
	case rep.Status == explorer.Unknown:
		checked = rep.Depth - 2
	}
	results := map[string]*PropertyResult{}
	for _, p := range cp.set.Properties() {
		if !p.User() || p.Kind == properties.Constraint {
			continue
		}
		results[p.Name] = &PropertyResult{Name: p.Name, Kind: p.Kind.String(), Expression: p.Expr, Statement: p.Statement, Status: Unknown}
	}
	for _, i := range append(append([]int(nil), cp.invariants...), cp.terminal...) {
		answerChecked(rep, results[cp.set.Properties()[i].Name])
	}
	for j, i := range cp.probes {
		r := results[cp.set.Properties()[i].Name]
		// A resumed run checked only the states of this session: a probe
		// not seen in it may have held before the interruption. Its own
		// search answers it.
		if cfg.Resume && !cp.probeSeen[j].Load() {
			cp.probeSeen[j].Store(true)
		}
		if !cp.probeSeen[j].Load() {
			if rep.Status == explorer.OK {
				r.Status = NotReachable
			} else {
				r.Reason = "not found in the states checked before the search stopped"
			}
			continue
		}
		tr, err := witness(i)
		if err != nil {
			return err
		}
		if tr == nil && cfg.Resume && rep.Status == explorer.OK {
			r.Status = NotReachable
			continue
		}
		if tr == nil || len(tr.Steps) > checked {
			r.Reason = "the search stopped before the level of its shortest witness was complete"
			continue
		}
		r.Status, r.Trace = Found, tr
	}
	if len(cp.eventually) > 0 {
		if rep.Status != explorer.OK {
			for _, i := range cp.eventually {
				results[cp.set.Properties()[i].Name].Reason = "checked only after a complete search without violation"
			}
		} else if err := eventually(results); err != nil {
			return err
		}
	}
	for _, p := range cp.set.Properties() {
		if p.User() && p.Kind != properties.Constraint {
			rep.Properties = append(rep.Properties, *results[p.Name])
		}
	}
	return nil
}

// witness searches for the shortest path to a state where probe i holds.
func (m *Model) witness(ctx context.Context, cfg Config, i int) (*traces.Trace, error) {
	tm := *m
	tm.invs, tm.cov = nil, &coverageLog{}
	tm.cel = &celProps{set: m.cel.set, target: i, constraint: m.cel.constraint}
	res, err := explorer.Run(ctx, &tm, searchOptions(cfg))
	if err != nil || res.Status != explorer.Violation {
		return nil, err // a model error there is the main search's to report
	}
	return tm.Trace(res.Violation)
}

// searchOptions are the options of a run's extra searches (probe
// witnesses, the eventually pass): the same workers and bounds, in memory.
func searchOptions(cfg Config) explorer.Options {
	return explorer.Options{Workers: cfg.Workers, MaxDepth: cfg.MaxDepth, MaxStates: cfg.MaxStates}
}

// eventuallyPass decides the eventually properties exactly.
//
// The reachable graph has no cycle (docs/model.md), so every behaviour
// ends in a terminal state, and "every behaviour passes through a state
// where P holds" fails exactly when some path from the initial state to a
// terminal state avoids P. Whether a state is on such a path depends on
// the path, not on the state alone: a state reached both through a
// P-state and around one must count as "P pending" for the second path.
// A flag per state set by whichever path the search happened to take
// first would be wrong (and would depend on the order of the search).
//
// The pass therefore searches the product graph whose nodes are pairs
// (state, pending): pending is the set of eventually properties owed on
// the path so far, a bit mask carried in the state's encoding. A plain
// "eventually Q" is owed from the start until a state where Q holds; a
// "P ~> Q" (leads to) becomes owed in a state where P holds and Q does not,
// and is paid by a later state where Q holds. A successor's pending is its
// parent's after the parent is evaluated; when nothing is pending and no
// property is a leads-to, the pair is not expanded (every path through it
// satisfies every property). A pair is a counterexample when its state is
// terminal and a property is still owed after the state itself is
// evaluated. The pairs reachable
// in the product are exactly the (state, set of properties unseen on
// some path to it) combinations, so the search finds a counterexample iff
// one exists, and, being the same breadth-first search, the shortest one,
// for any number of workers.
//
// b is the model with its properties cel, for any model of the registry.
//
// When b says its graph may have cycles (Cyclic), or the run has
// weak-fairness constraints (--fair), the pass is livenessPass instead
// (liveness.go), which finds fair cycles as well as terminal states.
func eventuallyPass(ctx context.Context, cfg Config, rep *Report, results map[string]*PropertyResult, b Bound, cel *celProps) error {
	fair, err := cfg.Fairness()
	if err != nil {
		return err
	}
	if len(fair) > 0 || mayCycle(b) {
		return livenessPass(ctx, cfg, rep, results, b, cel, fair)
	}
	em := &eventuallyModel{base: b, cel: cel}
	res, err := explorer.Run(ctx, em, searchOptions(cfg))
	if err != nil {
		return err
	}
	stats := res.Stats
	for _, i := range cel.eventually {
		r := results[cel.set.Properties()[i].Name]
		r.Graph = &stats
		switch res.Status {
		case explorer.OK:
			r.Status = Holds
		case explorer.Unknown:
			r.Reason = "the pass over the behaviour graph stopped early: " + res.Reason
		}
	}
	if res.Status == explorer.Unknown && rep.Status == explorer.OK {
		rep.Status, rep.Reason = explorer.Unknown, "eventually pass: "+res.Reason
	}
	if res.Status == explorer.Error {
		return em.failed(res, rep, results)
	}
	if res.Violation == nil {
		return nil
	}
	stripped := em.strip(res.Violation)
	tr, err := b.Trace(stripped)
	if err != nil {
		return err
	}
	r := results[res.Violation.Invariant]
	r.Status, r.Trace = Violated, tr
	// The other eventually properties are undecided: the pass stopped.
	for _, i := range cel.eventually {
		if o := results[cel.set.Properties()[i].Name]; o != r {
			o.Status, o.Reason = Unknown, "the pass stopped at "+r.Name+"'s counterexample"
		}
	}
	rep.Status = explorer.Violation
	rep.Violation = stripped
	rep.Trace, rep.Readable = tr, tr.Text()
	return nil
}

// eventuallyModel is the product of the model with the pending set of
// eventually properties (see eventuallyPass). A state's encoding is the
// model's followed by 8 bytes of pending mask, bit j for m.cel.eventually[j].
//
// With sim, it is the model random walks take when CEL probes or
// eventually properties are checked: every property is checked (the
// model's Check and CheckTerminal; the probes are the walks' goals,
// Goals), and a pair with nothing pending is expanded all the same.
type eventuallyModel struct {
	base Bound
	cel  *celProps // base's CEL properties
	sim  bool
}

// A stateExpander can say which state it has loaded (a value of the
// model's State type, or a pointer to one): the product's expander
// evaluates the CEL properties on it.
type stateExpander interface {
	explorer.Expander
	loaded() any
}

func (e *expander) loaded() any    { return &e.cur }
func (e *expander413) loaded() any { return &e.cur }

// SimModel implements Bound: the model bkcheck simulate walks, and how to decode its
// traces: the product with the eventually properties when the run has
// probes or eventually properties, else m itself.
func (m *Model) SimModel() (explorer.Model, func(*explorer.ViolationInfo) (*traces.Trace, error)) {
	if m.cel == nil || len(m.cel.probes)+len(m.cel.eventually) == 0 {
		return m, m.Trace
	}
	sm := *m
	sm.cov = &coverageLog{}
	cp := newCELProps(m.cel.set)
	cp.walkProbes = true
	sm.cel = cp
	em := &eventuallyModel{base: &sm, cel: cp, sim: true}
	return em, em.decodeTrace
}

const maskBytes = 8

// all is the pending mask of the initial state before it is evaluated:
// every plain eventually property (P ~> Q is pending only once P held).
func (em *eventuallyModel) all() uint64 {
	var mask uint64
	for j, i := range em.cel.eventually {
		if em.cel.set.Properties()[i].Trigger < 0 {
			mask |= 1 << uint(j)
		}
	}
	return mask
}

func withMask(dst, enc []byte, mask uint64) []byte {
	dst = append(dst[:0], enc...)
	return binary.LittleEndian.AppendUint64(dst, mask)
}

func (em *eventuallyModel) Init(emit func(enc, key []byte)) {
	em.base.Init(func(enc, key []byte) {
		var k []byte
		if key != nil {
			k = withMask(nil, key, em.all())
		}
		emit(withMask(nil, enc, em.all()), k)
	})
}

func (em *eventuallyModel) DescribeAction(a explorer.Action) string { return em.base.DescribeAction(a) }

func (em *eventuallyModel) NewExpander() explorer.Expander {
	return &eventuallyExpander{em: em, base: em.base.NewExpander().(stateExpander), cel: em.cel.newChecker()}
}

type eventuallyExpander struct {
	em      *eventuallyModel
	base    stateExpander
	cel     *celChecker
	pending uint64 // after evaluating the loaded state
	enc     []byte
	key     []byte
}

func (e *eventuallyExpander) Load(enc []byte) error {
	if len(enc) < maskBytes {
		return fmt.Errorf("eventually pass: state too short")
	}
	n := len(enc) - maskBytes
	if err := e.base.Load(enc[:n]); err != nil {
		return err
	}
	mask := binary.LittleEndian.Uint64(enc[n:])
	e.cel.ev.LoadState(e.base.loaded())
	props := e.em.cel.set.Properties()
	for j, i := range e.em.cel.eventually {
		bit := uint64(1) << uint(j)
		switch {
		case (mask&bit != 0 || props[i].Trigger >= 0) && e.cel.holds(i):
			mask &^= bit // Q holds: satisfied (until P holds again)
		case mask&bit == 0 && props[i].Trigger >= 0 && e.cel.holds(props[i].Trigger):
			mask |= bit // P holds and Q does not: Q is now owed
		}
	}
	e.pending = mask
	return nil
}

// Check: safety was checked by the main search (walks check it here).
func (e *eventuallyExpander) Check() string {
	if e.em.sim {
		return e.base.Check()
	}
	return ""
}

// Goals implements explorer.GoalExpander: which probes hold in the loaded
// state (simulation: the first walk that reaches one is its witness).
func (e *eventuallyExpander) Goals(held []bool) {
	for j, i := range e.em.cel.probes {
		held[j] = e.cel.holds(i)
	}
}

// probeNames are the names of the probes, in the order of the goals
// (Goals) walks of the model answer.
func (em *eventuallyModel) probeNames() []string {
	var out []string
	for _, i := range em.cel.probes {
		out = append(out, em.cel.set.Properties()[i].Name)
	}
	return out
}

// CheckTerminal: a terminal state with a property still pending ends a
// behaviour that never satisfied it. (A pair with nothing pending has no
// successor here either, and is fine.)
func (e *eventuallyExpander) CheckTerminal() string {
	if e.em.sim {
		if bad := e.base.CheckTerminal(); bad != "" {
			return bad
		}
	}
	for j, i := range e.em.cel.eventually {
		if e.pending&(1<<uint(j)) != 0 {
			return e.em.cel.set.Properties()[i].Name
		}
	}
	return ""
}

func (e *eventuallyExpander) Successors(emit func(explorer.Action, []byte, []byte)) {
	if e.pending == 0 && !e.em.sim && !e.em.cel.leadsTo {
		return // every path through here satisfies every property
	}
	e.base.Successors(func(a explorer.Action, enc, key []byte) {
		e.enc = withMask(e.enc, enc, e.pending)
		var k []byte
		if key != nil {
			e.key = withMask(e.key, key, e.pending)
			k = e.key
		}
		emit(a, e.enc, k)
	})
}

// strip is v with the model's encodings: the masks removed.
func (em *eventuallyModel) strip(v *explorer.ViolationInfo) *explorer.ViolationInfo {
	stripped := *v
	stripped.Trace = make([]explorer.Step, len(v.Trace))
	for i, st := range v.Trace {
		st.State = st.State[:len(st.State)-maskBytes]
		stripped.Trace[i] = st
	}
	return &stripped
}

// decodeTrace strips the masks and decodes the counterexample.
func (em *eventuallyModel) decodeTrace(v *explorer.ViolationInfo) (*traces.Trace, error) {
	return em.base.Trace(em.strip(v))
}

// replayCEL is Replay for the trace of a CEL property (the trace records
// its kind and expression): every step a transition of the model, the last
// state terminal for a terminal property, and the property's values along
// the trace as its kind requires (properties.CheckTrace, in the current
// model's typed view or another model's ITF view). An eventually
// property's counterexample ends in a state without a transition other
// than stuttering, or, a lasso (Loop), in the state it returns to, with
// the property owed throughout the cycle and the cycle fair as its
// fairness witnesses say (checkLasso).
func replayCEL(tr *traces.Trace) error {
	eventually := tr.Kind == properties.Eventually.String()
	if tr.Loop != 0 && !eventually {
		return &ReplayError{Step: len(tr.Steps), Reason: "only an eventually property's counterexample returns to an earlier state"}
	}
	plain := *tr
	plain.Kind, plain.Invariant, plain.Expression = "", "", ""
	plain.Deadlock = tr.Kind == properties.Terminal.String()
	plain.Terminal = plain.Terminal && !eventually // checked below, stuttering aside
	if err := Replay(&plain); err != nil {
		return err
	}
	checkOwed := func(t *traces.Trace) (int, error) {
		if p, current := spec.ParamsOf(t.Model); current {
			return specprops.CheckTrace(t, p)
		}
		return properties.CheckTrace(t, nil)
	}
	if step, err := checkOwed(tr); err != nil {
		if step == 0 {
			return fmt.Errorf("the trace's property: %w", err)
		}
		return &ReplayError{Step: step, Reason: err.Error()}
	}
	if !eventually {
		return nil
	}
	b, err := bindTrace(tr)
	if err != nil {
		return err
	}
	if tr.Loop != 0 {
		return checkLasso(tr, b, checkOwed)
	}
	// The behaviour stutters in the last state: it has no other move.
	n := len(tr.Steps)
	enc := b.EncodeState(tr.Steps[n-1].State)
	exp := b.NewExpander()
	if err := exp.Load(enc); err != nil {
		return &ReplayError{Step: n, Reason: err.Error()}
	}
	succ := 0
	exp.Successors(func(_ explorer.Action, next, _ []byte) {
		if string(next) != string(enc) {
			succ++
		}
	})
	if succ != 0 {
		return &ReplayError{Step: n, Reason: fmt.Sprintf("the last state has %d successors, the trace says none", succ)}
	}
	return nil
}

// bindTrace binds the model and parameters a trace records, without
// properties.
func bindTrace(tr *traces.Trace) (Bound, error) {
	info, err := LookupModel(tr.Model.Descriptor().Name)
	if err != nil {
		return nil, err
	}
	c := info.config(tr.Model)
	c.Invariants = []string{}
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("the trace's model: %w", err)
	}
	b, err := info.bind(c)
	if err != nil {
		return nil, fmt.Errorf("the trace's model: %w", err)
	}
	return b, nil
}
