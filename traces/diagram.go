package traces

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// RenderMermaid writes the trace as a Mermaid sequence diagram: one
// participant per client, the metadata store and each bookie; a message is
// drawn as an arrow at the step it is processed, a lost message as a lost
// arrow (-x) at the step it is lost, a message still in flight at the end
// as a dotted open arrow (--)) at the step it is sent; fencing, stored entries, LAC changes,
// metadata changes and faults as notes; the violated property at the end.
// It renders on GitHub (plain identifiers, no reserved words, no '#' or ';').
func RenderMermaid(w io.Writer, t *Trace) error {
	var b strings.Builder
	parts := t.Model.Participants(t.Steps[len(t.Steps)-1].State)
	b.WriteString("sequenceDiagram\n")
	for _, p := range parts {
		if p.Label == p.ID {
			fmt.Fprintf(&b, "    participant %s\n", p.ID)
		} else {
			fmt.Fprintf(&b, "    participant %s as %s\n", p.ID, p.Label)
		}
	}
	for i := 1; i < len(t.Steps); i++ {
		fmt.Fprintf(&b, "    %%%% %d. %s\n", i+1, clean(t.Model.ActionString(t.Steps[i].Action)))
		mermaidStep(&b, t, i)
	}
	what := "violates " + t.Invariant
	switch {
	case t.Error != "":
		what = "the model failed: " + t.Error
	case t.Deadlock:
		what = "deadlock, no successor"
	case t.Kind == "probe":
		what = "satisfies the probe " + t.Invariant
	case t.Kind == "eventually" && t.Loop > 0:
		what = fmt.Sprintf("back to state %d, the cycle repeats forever, %s never holds", t.Loop, t.Invariant)
	case t.Kind == "eventually":
		what = "no successor, " + t.Invariant + " never held"
	case t.Terminal:
		what = "no successor, violates " + t.Invariant
	}
	fmt.Fprintf(&b, "    Note over %s,%s: state %d %s\n", parts[0].ID, parts[len(parts)-1].ID, len(t.Steps), clean(what))
	_, err := io.WriteString(w, b.String())
	return err
}

// clean keeps a label within what Mermaid accepts unquoted. An ensemble
// is spelt one way, a set {b1,b2} and an ordered list <<b1,b2>> (striping)
// both as (b1,b2), and runs of spaces are one: [1: {b1,b2} from e1] is
// [1 (b1,b2) from e1].
func clean(s string) string {
	s = bookieList.ReplaceAllString(s, "($1)")
	s = strings.NewReplacer("#", "", ";", ",", "{", "(", "}", ")", ":", " ", "->", " to ", "<<", "", ">>", "").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// bookieList is an ordered list of bookies, <<b1,b4,b3>>.
var bookieList = regexp.MustCompile(`<<(b[0-9]+(?:, ?b[0-9]+)*)>>`)

// stepEvents is StepEvents of step i of t, with the messages it sends
// that are never delivered.
func stepEvents(t *Trace, i int) []Event {
	prev, cur := t.Steps[i-1].State, t.Steps[i].State
	ev := t.Model.Events(t.Steps[i].Action, prev, cur)
	return append(ev, t.Model.Undelivered(prev, cur, t.Steps[len(t.Steps)-1].State)...)
}

func mermaidStep(b *strings.Builder, t *Trace, i int) {
	for _, e := range stepEvents(t, i) {
		switch e.Kind {
		case "msg":
			fmt.Fprintf(b, "    %s->>%s: %s\n", e.From, e.To, clean(e.Text))
		case "lost":
			fmt.Fprintf(b, "    %s-x%s: %s\n", e.From, e.To, clean(e.Text))
		case "pending":
			fmt.Fprintf(b, "    %s--)%s: %s\n", e.From, e.To, clean(e.Text))
		default:
			fmt.Fprintf(b, "    Note over %s: %s\n", e.From, clean(e.Text))
		}
	}
}

// RenderDOT writes the trace as a Graphviz digraph: one node per state
// with the variables that changed, edges labelled by actions, the failing
// state in red.
func RenderDOT(w io.Writer, t *Trace) error {
	var b strings.Builder
	b.WriteString("digraph trace {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n")
	var prev []Var
	for i, st := range t.Steps {
		vars := t.Model.Rows(st.State)
		lines := []string{fmt.Sprintf("state %d", i+1)}
		show := Diff(prev, vars)
		if st.Initial {
			lines[0] += " (initial)"
			show = nil
		}
		for _, v := range show {
			lines = append(lines, v.Name+" = "+v.Value)
		}
		attrs := ""
		if i == len(t.Steps)-1 {
			last := "violates " + t.Invariant
			if t.Kind == "probe" || t.Kind == "eventually" {
				last = t.What()
			}
			lines = append(lines, last)
			attrs = ", color=red, fontcolor=red"
		}
		fmt.Fprintf(&b, "  s%d [label=%s%s];\n", i+1, dotQuote(strings.Join(lines, "\\l")+"\\l"), attrs)
		if i > 0 {
			fmt.Fprintf(&b, "  s%d -> s%d [label=%s];\n", i, i+1, dotQuote(t.Model.ActionString(st.Action)))
		}
		prev = vars
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`"`, `\"`).Replace(s) + `"`
}
