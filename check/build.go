package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/liveness"
	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/traces"
)

// Build makes the trace of a story told as steps, one action label per
// step as traces print them ("ClientSendsAddEntryRequests(c1) e1
// lost:{b1}"), from the model's initial state: each step must be a
// transition of the model mc names, and the trace must answer mc's one CEL
// property: an invariant (the story ends at the first state that fails
// it), an eventually property, a terminal-state property (the story ends
// in a state without successor that fails it) or a probe. With loop = K (1-based, a
// state before the last) the trace is a lasso: the last state must be
// state K, the property owed there, and the cycle fair to every --fair
// constraint (Build finds each one's witness, a step of the cycle that
// takes the action or a state of it where the action is disabled, and
// says which constraint has none). A probe's trace ends where the
// probe's expression holds, and takes no loop.
//
// It is how a story a search cannot reach (a fair-cycle search needs the
// whole behaviour graph) becomes a counterexample all the same: the
// search finds the shortest, Build checks the one a person tells. The
// trace is checked by Replay before it is returned.
func Build(mc ModelConfig, steps []string, loop int) (*traces.Trace, error) {
	if err := BuildProblems(mc, len(steps), loop); err != nil {
		return nil, err
	}
	var probs schema.Problems
	name := buildProperty(mc, loop, &probs)
	mc.EnsureDefaults()
	fair, err := mc.Fairness()
	if err != nil {
		return nil, err
	}
	info, err := LookupModel(mc.Model)
	if err != nil {
		return nil, err
	}
	b, err := info.bind(mc)
	if err != nil {
		return nil, err
	}
	path, err := walk(b, steps)
	if err != nil {
		return nil, err
	}
	tr, err := b.Trace(&explorer.ViolationInfo{Invariant: name, Trace: path})
	if err != nil {
		return nil, err
	}
	tr.Terminal = tr.Kind == properties.Terminal.String()
	if loop > 0 {
		tr.Loop = loop
		if tr.Fairness, err = fairWitnesses(b, path, loop, fair); err != nil {
			return nil, err
		}
	}
	if err := Replay(tr); err != nil {
		return nil, fmt.Errorf("the story is not a counterexample of %s: %w", name, err)
	}
	return tr, nil
}

// BuildProblems is every problem of Build's settings, for a story of n
// steps (a schema.Problems), or nil.
func BuildProblems(mc ModelConfig, n, loop int) error {
	var probs schema.Problems
	buildProperty(mc, loop, &probs)
	if mc.Symmetry.Bookies || mc.Symmetry.Clients {
		probs.Add("symmetry", "a trace is built of concrete states: leave --symmetry out")
	}
	if mc.POR {
		probs.Add("por", "a trace is built step by step: leave --por out")
	}
	if n == 0 {
		probs.Add("", "the story has no step")
	}
	if loop < 0 || loop > n {
		probs.Add("loop", "must name a state before the last, 1 to %d (got %d)", n, loop)
	}
	mc.EnsureDefaults()
	probs.Merge(mc.Validate())
	if _, err := mc.Fairness(); err != nil {
		probs.Merge(err)
	}
	return probs.Err()
}

// buildProperty is the name of mc's one property a built trace answers,
// with what is wrong with mc's properties and loop added to probs.
func buildProperty(mc ModelConfig, loop int, probs *schema.Problems) string {
	s := mc.Settings
	if len(s.Constraint) > 0 {
		probs.Add("constraint", "a built trace is the story's steps: leave --constraint out")
	}
	// finite: the trace ends where what says, so it takes no loop and no
	// fairness.
	finite := func(what string) {
		if loop != 0 {
			probs.Add("loop", "%s: leave --loop out", what)
		}
		if len(s.Fair) > 0 {
			probs.Add("fair", "only with --eventually")
		}
	}
	var prop string
	switch {
	case len(s.Invariant) == 1 && len(s.Eventually)+len(s.Probe)+len(s.Terminal) == 0:
		prop = s.Invariant[0]
		finite("an invariant's counterexample ends at the first state violating it")
	case len(s.Terminal) == 1 && len(s.Eventually)+len(s.Probe)+len(s.Invariant) == 0:
		prop = s.Terminal[0]
		finite("a terminal-state property's counterexample ends in a state without successor")
	case len(s.Eventually) == 1 && len(s.Probe)+len(s.Terminal)+len(s.Invariant) == 0:
		prop = s.Eventually[0]
		if loop == 0 {
			probs.Add("loop", "an eventually property's counterexample here is a lasso: give the state the last one returns to")
		}
	case len(s.Probe) == 1 && len(s.Eventually)+len(s.Terminal)+len(s.Invariant) == 0:
		prop = s.Probe[0]
		finite("a probe's witness ends where the probe holds")
	default:
		probs.Add("", "give one --invariant, --eventually, --terminal or --probe property for the trace to answer (got %d, %d, %d and %d)", len(s.Invariant), len(s.Eventually), len(s.Terminal), len(s.Probe))
	}
	name, _, _ := strings.Cut(prop, "=")
	return name
}

// walk takes each step's action from the state before it: the successor
// its label names. A label no successor has, or one naming successors
// that differ, is an error saying which step and what the model offers.
func walk(b Bound, steps []string) ([]explorer.Step, error) {
	v := b.Vocabulary()
	var init []byte
	b.Init(func(enc, _ []byte) {
		if init == nil {
			init = append([]byte(nil), enc...)
		}
	})
	path := []explorer.Step{{Initial: true, State: init}}
	exp := b.NewExpander()
	for i, label := range steps {
		label = strings.TrimSpace(label)
		if err := exp.Load(path[len(path)-1].State); err != nil {
			return nil, err
		}
		var next *explorer.Step
		var offered []string
		ambiguous := false
		exp.Successors(func(a explorer.Action, enc, _ []byte) {
			l := v.ActionString(b.ActionOf(a))
			switch {
			case l != label:
				offered = append(offered, l)
			case next == nil:
				next = &explorer.Step{Action: a, State: append([]byte(nil), enc...)}
			case string(next.State) != string(enc):
				ambiguous = true
			}
		})
		if next == nil {
			slices.Sort(offered)
			offered = slices.Compact(offered)
			return nil, &ReplayError{Step: i + 2, Reason: fmt.Sprintf("%s is not enabled in state %d; enabled there: %s", label, i+1, strings.Join(offered, "; "))}
		}
		if ambiguous {
			return nil, &ReplayError{Step: i + 2, Reason: fmt.Sprintf("%s names more than one successor of state %d", label, i+1)}
		}
		path = append(path, *next)
	}
	return path, nil
}

// fairWitnesses finds, for each weak-fairness constraint, how the cycle
// of path from state loop (1-based) to its end is fair to it: a step of
// the cycle that takes one of its actions, or else a state of the cycle
// where none is enabled (a stuttering transition aside). A constraint
// with neither is an unfair cycle, and an error naming it.
func fairWitnesses(b Bound, path []explorer.Step, loop int, fair []liveness.Fairness) ([]traces.FairStep, error) {
	n := len(path)
	if string(path[n-1].State) != string(path[loop-1].State) {
		return nil, &ReplayError{Step: n, Reason: fmt.Sprintf("the last state is not state %d: the story does not return to it", loop)}
	}
	enabled := make([]map[uint8]bool, n) // per state of the cycle: the kinds of its non-stuttering transitions
	exp := b.NewExpander()
	for j := loop - 1; j < n; j++ {
		if err := exp.Load(path[j].State); err != nil {
			return nil, err
		}
		enabled[j] = map[uint8]bool{}
		exp.Successors(func(a explorer.Action, enc, _ []byte) {
			if string(enc) != string(path[j].State) {
				enabled[j][a.Kind] = true
			}
		})
	}
	var out []traces.FairStep
	var unfair []string
	for _, f := range fair {
		w, ok := witness(path, loop, f.Kinds, enabled)
		if !ok {
			unfair = append(unfair, f.Name)
			continue
		}
		w.Constraint = f.Name
		out = append(out, w)
	}
	if len(unfair) > 0 {
		return nil, &ReplayError{Step: loop, Reason: fmt.Sprintf("the cycle is not fair to %s: enabled in every state of it and never taken (add a step that takes it, or end the cycle where it is disabled)", strings.Join(unfair, ", "))}
	}
	return out, nil
}

// witness is the first step of the cycle taking one of kinds, else the
// first state of it where none of kinds is enabled.
func witness(path []explorer.Step, loop int, kinds []uint8, enabled []map[uint8]bool) (traces.FairStep, bool) {
	of := func(k uint8) bool {
		for _, x := range kinds {
			if x == k {
				return true
			}
		}
		return false
	}
	for j := loop; j < len(path); j++ { // path[j] is state j+1, reached by its action
		if of(path[j].Action.Kind) {
			return traces.FairStep{Step: j + 1, Taken: true}, true
		}
	}
	for j := loop - 1; j < len(path); j++ {
		disabled := true
		for k := range enabled[j] {
			disabled = disabled && !of(k)
		}
		if disabled {
			return traces.FairStep{Step: j + 1}, true
		}
	}
	return traces.FairStep{}, false
}
