package traces

import (
	"fmt"
	"io"
	"strings"
)

// Text is a counterexample of any model in readable form: per step, the
// action taken and every variable's value. It is what the text rendering
// and bkcheck's JSON report are made from, whichever model the trace is
// of (Trace.Text for the current model; package check builds one for the
// release-4.13 model).
type Text struct {
	Params    string // the parameter set, for people
	Invariant string
	Statement string
	Deadlock  bool
	Terminal  bool
	Error     string // how the model failed on the last state (Trace.Error)
	Steps     []TextStep

	// Kind and Expression are a CEL property's (Trace.Kind); Explanation
	// is the rendered ExplanationText, "" if none.
	Kind        string
	Expression  string
	Explanation string
	// Loop and Fairness are a lasso's (Trace.Loop, Trace.Fairness).
	Loop     int
	Fairness []FairStep
}

// What says what the last state is: a violation, a deadlock or a probe's
// witness.
func (t *Text) What() string {
	return what(t.Kind, t.Invariant, t.Error, t.Deadlock, t.Terminal, t.Loop)
}

// TextStep is one state of a Text and the action that led to it.
type TextStep struct {
	Initial bool   // the first state; Action is ""
	Action  string // the transition into the state
	Vars    []Var  // the state, variable by variable in a fixed order
}

// Render writes the trace as numbered steps. The first state is shown in
// full; every later step shows its action and the variables it changed.
func (t *Text) Render(w io.Writer) error {
	var b strings.Builder
	title := "Counterexample"
	switch {
	case t.Kind == "probe":
		title = "Witness"
	case t.Error != "":
		title = "Error trace"
	}
	fmt.Fprintf(&b, "%s: %d states; the last %s.\n", title, len(t.Steps), t.What())
	if t.Statement != "" {
		fmt.Fprintf(&b, "%s: %s\n", t.Invariant, t.Statement)
	}
	if t.Expression != "" {
		fmt.Fprintf(&b, "%s (%s, CEL): %s\n", t.Invariant, t.Kind, indentLines(strings.TrimSpace(t.Expression), "    "))
	}
	fmt.Fprintf(&b, "Parameters: %s\n", t.Params)
	var prev []Var
	for i, st := range t.Steps {
		shown := st.Vars
		if st.Initial {
			fmt.Fprintf(&b, "\n%d. <Initial state>\n", i+1)
		} else {
			fmt.Fprintf(&b, "\n%d. %s\n", i+1, st.Action)
			shown = Diff(prev, st.Vars)
		}
		for _, v := range shown {
			fmt.Fprintf(&b, "     %s = %s\n", v.Name, v.Value)
		}
		prev = st.Vars
	}
	if t.Loop > 0 {
		fmt.Fprintf(&b, "\n-- the behaviour returns to state %d and repeats forever --\n", t.Loop)
		if len(t.Fairness) > 0 {
			b.WriteString("The cycle is weakly fair to every action of --fair:\n")
			for _, l := range FairnessLines(t.Fairness) {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
	}
	if t.Explanation != "" {
		b.WriteString("\n")
		b.WriteString(t.Explanation)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
