package traces

import (
	"fmt"
	"io"
	"strings"

	"github.com/bkcheck/bkcheck/spec"
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
	p := t.Params
	last := t.Steps[len(t.Steps)-1].State
	b.WriteString("sequenceDiagram\n")
	for c := 0; c < p.Clients; c++ {
		fmt.Fprintf(&b, "    participant c%d as c%d (%s)\n", c+1, c+1, clientRole(&last.Clients[c]))
	}
	b.WriteString("    participant meta as metadata store\n")
	for bk := 0; bk < p.Bookies; bk++ {
		fmt.Fprintf(&b, "    participant b%d\n", bk+1)
	}
	for i := 1; i < len(t.Steps); i++ {
		fmt.Fprintf(&b, "    %%%% %d. %s\n", i+1, clean(t.Steps[i].Action.String()))
		mermaidStep(&b, t, i)
	}
	what := "violates " + t.Invariant
	switch {
	case t.Deadlock:
		what = "deadlock, no successor"
	case t.Kind == "probe":
		what = "satisfies the probe " + t.Invariant
	case t.Kind == "eventually":
		what = "no successor, " + t.Invariant + " never held"
	case t.Terminal:
		what = "no successor, violates " + t.Invariant
	}
	fmt.Fprintf(&b, "    Note over c1,b%d: state %d %s\n", p.Bookies, len(t.Steps), clean(what))
	_, err := io.WriteString(w, b.String())
	return err
}

// clientRole names the part a client played by the end of a trace.
func clientRole(c *spec.Client) string {
	switch {
	case c.RecoveryPhase != spec.NotStarted:
		return "recovery client"
	case c.Status != spec.StatusNil:
		return "writer"
	}
	return "client"
}

// clean keeps a label within what Mermaid accepts unquoted.
func clean(s string) string {
	return strings.NewReplacer("#", "", ";", ",", "{", "(", "}", ")", ":", " ", "->", " to ", "<<", "", ">>", "").Replace(s)
}

func msgEnds(k spec.MsgKey) (from, to string) {
	c, b := fmt.Sprintf("c%d", k.Cid()+1), fmt.Sprintf("b%d", k.Bookie()+1)
	switch k.Type() {
	case spec.AddEntryRequest, spec.FenceRequest, spec.ReadRequest:
		return c, b
	}
	return b, c
}

func counts(s *spec.State) map[spec.MsgKey]int8 {
	m := make(map[spec.MsgKey]int8, len(s.Msgs))
	for _, msg := range s.Msgs {
		m[msg.Key] = msg.Count
	}
	return m
}

// Event is one thing a step shows in a sequence diagram: a message
// arrow (delivered or lost) between two participants, or a note over one.
type Event struct {
	Kind string `json:"kind"` // "msg", "lost", "pending" (sent, never delivered) or "note"
	From string `json:"from"`
	To   string `json:"to,omitempty"`
	Text string `json:"text"`
}

// StepEvents lists what the step from prev to cur shows: messages
// processed (arrows), messages lost (lost arrows), metadata, bookie and
// client changes and faults (notes).
func StepEvents(p spec.Params, a spec.Action, prev, cur *spec.State) []Event {
	var ev []Event
	before := counts(prev)
	for _, msg := range cur.Msgs {
		k := msg.Key
		old, existed := before[k]
		from, to := msgEnds(k)
		label := FormatMessage(k)
		switch {
		case existed && old == 1 && msg.Count == 0:
			ev = append(ev, Event{"msg", from, to, label})
		case !existed && msg.Count == -1:
			ev = append(ev, Event{"lost", from, to, label + " (lost)"})
		case existed && old == 1 && msg.Count == -1:
			ev = append(ev, Event{"lost", from, to, label + " (lost, bookie down)"})
		case existed && old == -1 && msg.Count == 0:
			ev = append(ev, Event{"note", from, "", "timeout acted on: " + label})
		}
	}
	if prev.MetaStatus != cur.MetaStatus || prev.MetaVersion != cur.MetaVersion || FormatFragments(prev.MetaFragmentList()) != FormatFragments(cur.MetaFragmentList()) {
		if a.Client >= 0 {
			ev = append(ev, Event{"msg", fmt.Sprintf("c%d", a.Client+1), "meta", a.Kind.String()})
		}
		note := fmt.Sprintf("%s v%d %s", cur.MetaStatus, cur.MetaVersion, FormatFragments(cur.MetaFragmentList()))
		if cur.MetaStatus == spec.StatusClosed {
			note += fmt.Sprintf(" last entry %d", cur.MetaLastEntry)
		}
		ev = append(ev, Event{"note", "meta", "", note})
	}
	for bk := 0; bk < p.Bookies; bk++ {
		var notes []string
		if !prev.BFenced.Has(bk) && cur.BFenced.Has(bk) {
			notes = append(notes, "fenced")
		}
		if prev.BEntries[bk] != cur.BEntries[bk] {
			notes = append(notes, "entries "+FormatEntries(cur.BEntries[bk]))
		}
		if prev.BLAC[bk] != cur.BLAC[bk] {
			notes = append(notes, fmt.Sprintf("lac %d", cur.BLAC[bk]))
		}
		mine := int(a.Bookie) == bk
		switch {
		case mine && a.Kind == spec.BookieLosesDisk:
			notes = append(notes, "DISK WIPED: cookie validation keeps it down")
		case mine && a.Kind == spec.BookieRejoinsEmpty:
			notes = append(notes, "re-formatted: rejoined with an EMPTY DISK")
		case prev.BDown.Has(bk) && !cur.BDown.Has(bk):
			notes = append(notes, "restarted")
		case !prev.BDown.Has(bk) && cur.BDown.Has(bk):
			notes = append(notes, "CRASHED")
		}
		if mine && a.Kind == spec.BookieSyncsJournal {
			notes = append(notes, "journal synced")
		}
		if !prev.BLimbo.Has(bk) && cur.BLimbo.Has(bk) {
			notes = append(notes, "in limbo (data-integrity check)")
		}
		if !prev.BReadOnly.Has(bk) && cur.BReadOnly.Has(bk) {
			notes = append(notes, "turned read-only")
		}
		if !prev.BDiskFull.Has(bk) && cur.BDiskFull.Has(bk) {
			notes = append(notes, "disk full")
		}
		if len(notes) > 0 {
			ev = append(ev, Event{"note", fmt.Sprintf("b%d", bk+1), "", strings.Join(notes, ", ")})
		}
	}
	for c := 0; c < p.Clients; c++ {
		pc, cc := &prev.Clients[c], &cur.Clients[c]
		var notes []string
		if pc.Status != cc.Status {
			notes = append(notes, cc.Status.String())
		}
		if pc.LAC != cc.LAC {
			notes = append(notes, fmt.Sprintf("lac %d", cc.LAC))
		}
		if pc.LastRecoverable != cc.LastRecoverable && cc.LastRecoverable != spec.Nil {
			notes = append(notes, fmt.Sprintf("last recoverable entry %d", cc.LastRecoverable))
		}
		if a.Kind == spec.ClientFailsToCreateLedger && int(a.Client) == c {
			notes = append(notes, "NotEnoughBookies")
		}
		if len(notes) > 0 {
			ev = append(ev, Event{"note", fmt.Sprintf("c%d", c+1), "", strings.Join(notes, ", ")})
		}
	}
	return ev
}

// Undelivered lists the messages the step from prev to cur sends that are
// still in flight in last, the trace's final state: sent, never delivered.
// (A message lost is drawn where it is lost, by StepEvents.)
func Undelivered(prev, cur, last *spec.State) []Event {
	before, final := counts(prev), counts(last)
	var ev []Event
	for _, msg := range cur.Msgs {
		if _, existed := before[msg.Key]; existed || msg.Count != 1 || final[msg.Key] != 1 {
			continue
		}
		from, to := msgEnds(msg.Key)
		ev = append(ev, Event{"pending", from, to, FormatMessage(msg.Key) + " (sent, never delivered)"})
	}
	return ev
}

// stepEvents is StepEvents of step i of t, with the messages it sends
// that are never delivered.
func stepEvents(t *Trace, i int) []Event {
	prev, cur := &t.Steps[i-1].State, &t.Steps[i].State
	ev := StepEvents(t.Params, t.Steps[i].Action, prev, cur)
	return append(ev, Undelivered(prev, cur, &t.Steps[len(t.Steps)-1].State)...)
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
		vars := Vars(t.Params, &st.State)
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
			fmt.Fprintf(&b, "  s%d -> s%d [label=%s];\n", i, i+1, dotQuote(st.Action.String()))
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
