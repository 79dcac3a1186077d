// Package traces turns a counterexample — a path of (action, state) pairs
// — into forms people and tools read. The text form shows, per step, the
// action taken and only the variables it changed, the way TLC users diff
// consecutive states of an error trace by eye, but done for them.
package traces

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/bkcheck/bkcheck/vocab"
)

// Step is one state of a trace and the action that led to it. Action and
// State are the model's own values (its Action and State types), which
// Trace.Model renders.
type Step struct {
	Initial bool // the first state; Action is unset
	Action  any  // the transition into State
	State   any
}

// Trace is a counterexample: a path from an initial state to a state that
// violates Invariant (or, with Deadlock, has no successor).
type Trace struct {
	// Model is the model and parameter set the trace is of.
	Model     vocab.Model
	Invariant string
	Statement string
	Deadlock  bool
	Terminal  bool // the last state has no successor and fails a terminal-state property
	// Error, when set, says how the model failed on the last state (the
	// error verdict: a panic, or a property that cannot be evaluated);
	// the trace then names no invariant.
	Error string
	// Checked are the built-in invariants the run checked, for a trace of
	// the error verdict (replay evaluates them again); nil otherwise.
	Checked []string
	Steps   []Step

	// Kind is the kind of a CEL property (docs/properties.md): invariant,
	// terminal, eventually (the last state is terminal and the property
	// held in no state of the trace) or probe (the trace is a witness: the
	// property holds in the last state); "" for a built-in property.
	Kind string
	// Expression is a CEL property's expression.
	Expression string
	// Explanation says which values of the last state make the property
	// fail (hold, for a probe); nil when unknown. It is derived from the
	// states, never read from a file.
	Explanation *Explanation

	// Loop is, for an eventually property's counterexample that is a
	// cycle (a lasso), the number (1-based) of the state the last state
	// equals: the behaviour goes on from there, repeating the steps after
	// it forever, and the property is owed in every state of the cycle.
	// 0 for a finite counterexample.
	Loop int
	// Fairness says, for a lasso, how its cycle is fair to each
	// weak-fairness constraint of the run (--fair), in the run's order.
	Fairness []FairStep
}

// FairStep is how a lasso's cycle satisfies one weak-fairness constraint
// (WF of an action): the action is taken at a step of the cycle, or it is
// disabled in one of the cycle's states. Either recurs forever.
type FairStep struct {
	Constraint string `json:"constraint"` // the action's name
	Step       int    `json:"step"`       // 1-based state number, within the cycle
	Taken      bool   `json:"taken"`      // Step's action is it; else it is disabled in state Step
}

// String says it in words.
func (f FairStep) String() string {
	if f.Taken {
		return fmt.Sprintf("WF(%s): taken at step %d", f.Constraint, f.Step)
	}
	return fmt.Sprintf("WF(%s): disabled in state %d", f.Constraint, f.Step)
}

// maxNamedFair is how many actions disabled in one state FairnessLines
// names; more are counted.
const maxNamedFair = 8

// FairnessLines says how a lasso's cycle is fair to each constraint, in
// few lines: each action taken in the cycle on its own line, and the
// actions disabled in one state of it together (a run with --fair all has
// dozens of those, which say little one by one).
func FairnessLines(fs []FairStep) []string {
	var lines []string
	for _, f := range fs {
		if f.Taken {
			lines = append(lines, f.String())
		}
	}
	states, disabled := disabledByState(fs)
	for _, st := range states {
		names := disabled[st]
		if len(names) == 1 {
			lines = append(lines, FairStep{Constraint: names[0], Step: st}.String())
			continue
		}
		if len(names) > maxNamedFair {
			lines = append(lines, fmt.Sprintf("WF of %d actions: each disabled in state %d (the trace file's #meta.fairness names them)", len(names), st))
			continue
		}
		lines = append(lines, fmt.Sprintf("WF of %d actions: each disabled in state %d (%s)", len(names), st, strings.Join(names, ", ")))
	}
	return lines
}

// disabledByState groups the constraints of fs that are disabled (not
// taken) by the state they are disabled in: the states in order, and each
// one's action names in fs's order.
func disabledByState(fs []FairStep) (states []int, names map[int][]string) {
	names = map[int][]string{}
	for _, f := range fs {
		if f.Taken {
			continue
		}
		if names[f.Step] == nil {
			states = append(states, f.Step)
		}
		names[f.Step] = append(names[f.Step], f.Constraint)
	}
	sort.Ints(states)
	return states, names
}

// Explanation is why a property fails (or, for a probe, holds) in the last
// state of a trace: the values it reads that decide it.
type Explanation struct {
	// Expression is what was evaluated: the property's CEL expression,
	// or for a built-in its CEL form (Equivalent).
	Expression string
	Equivalent bool
	// Lines explain the verdict part by part, indented by nesting.
	Lines []string
	// Reads are the state-table rows (Vars names) the deciding parts read,
	// with their values, in the order read.
	Reads []Var
	// OwedFrom is, for a leads-to property P ~> Q, the step (1-based) at
	// which P held and Q did not, after which Q holds at no step: where
	// the behaviour began to owe Q. 0 otherwise.
	OwedFrom int
}

// What says in words what the last state of t shows.
func (t *Trace) What() string {
	return what(t.Kind, t.Invariant, t.Error, t.Deadlock, t.Terminal, t.Loop)
}

func what(kind, invariant, failure string, deadlock, terminal bool, loop int) string {
	switch {
	case failure != "":
		return "is where the model failed: " + failure
	case deadlock:
		return "is a deadlock (no successor)"
	case kind == "probe":
		return "satisfies the probe " + invariant + " (a witness)"
	case kind == "eventually" && loop > 0:
		return fmt.Sprintf("returns to state %d: the behaviour repeats the cycle forever and never satisfies %s", loop, invariant)
	case kind == "eventually":
		return "has no successor, and the behaviour never satisfies " + invariant
	case terminal:
		return "has no successor and violates " + invariant
	}
	return "violates " + invariant
}

// Var is one variable (or one element of a function-valued variable) and
// its value rendered as text.
type Var = vocab.Row

// Event is one thing a step shows in a sequence diagram.
type Event = vocab.Event

// Diff lists the variables of next whose value differs from prev (or that
// prev lacks), in next's order.
func Diff(prev, next []Var) []Var {
	old := make(map[string]string, len(prev))
	for _, v := range prev {
		old[v.Name] = v.Value
	}
	var out []Var
	for _, v := range next {
		if o, ok := old[v.Name]; !ok || o != v.Value {
			out = append(out, v)
		}
	}
	return out
}

// RenderText writes the trace as numbered steps (Text.Render).
func RenderText(w io.Writer, t *Trace) error { return t.Text().Render(w) }

// Text is the trace in readable form: each state as its variables.
func (t *Trace) Text() *Text {
	tt := &Text{Params: t.Model.Params(), Invariant: t.Invariant, Statement: t.Statement, Deadlock: t.Deadlock, Terminal: t.Terminal, Error: t.Error,
		Kind: t.Kind, Expression: t.Expression, Explanation: ExplanationText(t), Loop: t.Loop, Fairness: t.Fairness}
	for _, st := range t.Steps {
		ts := TextStep{Initial: st.Initial, Vars: t.Model.Rows(st.State)}
		if !st.Initial {
			ts.Action = t.Model.ActionString(st.Action)
		}
		tt.Steps = append(tt.Steps, ts)
	}
	return tt
}

// ExplanationText renders t's explanation: why the last state fails the
// property (holds, for a probe), part by part, and the values that decide
// it. Empty without an explanation.
func ExplanationText(t *Trace) string {
	ex := t.Explanation
	if ex == nil {
		return ""
	}
	var b strings.Builder
	verb := "fails"
	if t.Kind == "probe" {
		verb = "satisfies"
	}
	how := ""
	if ex.Equivalent {
		how = " (a compiled property, explained through its CEL form, docs/properties.md)"
	}
	if ex.OwedFrom > 0 {
		fmt.Fprintf(&b, "%s became owed at state %d (its left side held there, its right side did not) and is satisfied in no state from there to the last.\n", t.Invariant, ex.OwedFrom)
	}
	fmt.Fprintf(&b, "Why state %d %s %s%s:\n", len(t.Steps), verb, t.Invariant, how)
	for _, l := range ex.Lines {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	if len(ex.Reads) > 0 {
		parts := make([]string, len(ex.Reads))
		for i, r := range ex.Reads {
			parts[i] = r.Name + " = " + r.Value
		}
		fmt.Fprintf(&b, "Values that decide it: %s\n", strings.Join(parts, ", "))
	}
	return b.String()
}

// indentLines indents the lines after the first.
func indentLines(s, indent string) string {
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}
