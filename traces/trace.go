// Package traces turns a counterexample — a path of (action, state) pairs
// — into forms people and tools read. The text form shows, per step, the
// action taken and only the variables it changed, the way TLC users diff
// consecutive states of an error trace by eye, but done for them.
package traces

import (
	"fmt"
	"io"
	"strings"

	"github.com/bkcheck/bkcheck/spec"
)

// Step is one state of a trace and the action that led to it.
type Step struct {
	Initial bool        // the first state; Action is unset
	Action  spec.Action // the transition into State
	State   spec.State
}

// Trace is a counterexample: a path from an initial state to a state that
// violates Invariant (or, with Deadlock, has no successor).
type Trace struct {
	Params    spec.Params
	Invariant string
	Statement string
	Deadlock  bool
	Terminal  bool // the last state has no successor and fails a terminal-state property
	Steps     []Step

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
}

// What says in words what the last state of t shows.
func (t *Trace) What() string { return what(t.Kind, t.Invariant, t.Deadlock, t.Terminal) }

func what(kind, invariant string, deadlock, terminal bool) string {
	switch {
	case deadlock:
		return "is a deadlock (no successor)"
	case kind == "probe":
		return "satisfies the probe " + invariant + " (a witness)"
	case kind == "eventually":
		return "has no successor, and the behaviour never satisfies " + invariant
	case terminal:
		return "has no successor and violates " + invariant
	}
	return "violates " + invariant
}

// Var is one variable (or one element of a function-valued variable) and
// its value rendered as text.
type Var struct{ Name, Value string }

// Vars flattens a state into named values in a fixed order, one per
// variable element, so two states can be compared line by line.
func Vars(p spec.Params, s *spec.State) []Var {
	var out []Var
	add := func(name, format string, args ...any) {
		out = append(out, Var{name, fmt.Sprintf(format, args...)})
	}
	add("meta_status", "%s", s.MetaStatus)
	add("meta_version", "%d", s.MetaVersion)
	add("meta_fragments", "%s", FormatFragments(s.MetaFragmentList()))
	add("meta_last_entry", "%d", s.MetaLastEntry)
	for b := 0; b < p.Bookies; b++ {
		add(fmt.Sprintf("b_entries[b%d]", b+1), "%s", FormatEntries(s.BEntries[b]))
		add(fmt.Sprintf("b_fenced[b%d]", b+1), "%s", tlaBool(s.BFenced.Has(b)))
		add(fmt.Sprintf("b_lac[b%d]", b+1), "%d", s.BLAC[b])
	}
	if p.Faulty() {
		add("b_down", "%s", spec.FormatBookies(s.BDown))
		add("b_wiped", "%s", spec.FormatBookies(s.BWiped))
		add("b_read_only", "%s", spec.FormatBookies(s.BReadOnly))
		add("b_disk_full", "%s", spec.FormatBookies(s.BDiskFull))
		add("b_limbo", "%s", spec.FormatBookies(s.BLimbo))
		add("faults_used", "crashes %d, disk losses %d, re-formats %d, read-only %d, disk full %d, corrupt reads %d",
			s.CrashesUsed, s.DiskLossUsed, s.ReformatUsed, s.ReadOnlyUsed, s.DiskFullUsed, s.CorruptUsed)
	}
	if p.DeleteLedger {
		add("meta_deleted", "%s", tlaBool(s.MetaDeleted))
		add("b_collected", "%s", spec.FormatBookies(s.BCollected))
		add("b_volatile_fence", "%s", spec.FormatBookies(s.BVolatileFence))
	}
	if splitAddCheck(p) {
		for b := 0; b < p.Bookies; b++ {
			add(fmt.Sprintf("b_checked[b%d]", b+1), "%s", FormatEntries(s.BChecked[b]))
		}
	}
	if p.LossyJournal() {
		for b := 0; b < p.Bookies; b++ {
			add(fmt.Sprintf("b_unflushed[b%d]", b+1), "%s", FormatEntries(s.BUnflushed[b]))
			add(fmt.Sprintf("b_durable_lac[b%d]", b+1), "%d", s.BDurableLAC[b])
		}
		add("b_unflushed_fence", "%s", spec.FormatBookies(s.BUnflushedFence))
	}
	if p.Variant == "gwq" {
		for b := 0; b < p.Bookies; b++ {
			add(fmt.Sprintf("b_lafr[b%d]", b+1), "%d", s.BLAFR[b])
		}
	}
	for i := 0; i < p.Clients; i++ {
		c := &s.Clients[i]
		pre := fmt.Sprintf("clients[c%d].", i+1)
		if p.Variant == "gwq" {
			add(pre+"lafr", "%d", c.LAFR)
		}
		add(pre+"status", "%s", c.Status)
		add(pre+"meta_version", "%s", nilInt(c.MetaVersion))
		add(pre+"fragments", "%s", FormatFragments(c.FragmentList()))
		add(pre+"pending_add_ops", "%s", formatPending(c.PendingList()))
		add(pre+"lap", "%d", c.LAP)
		add(pre+"lac", "%d", c.LAC)
		conf := make([]string, p.Entries)
		for e := range conf {
			conf[e] = spec.FormatBookies(c.Confirmed[e])
		}
		add(pre+"confirmed", "<<%s>>", strings.Join(conf, ", "))
		add(pre+"fenced", "%s", spec.FormatBookies(c.Fenced))
		add(pre+"recovery_ensemble", "%s", spec.FormatBookies(c.RecoveryEns))
		add(pre+"curr_read_entry", "%s", nilInt(c.CurrReadEntry))
		rs := make([]string, 0, c.NumResponses)
		for _, k := range c.Responses() {
			rs = append(rs, FormatMessage(k))
		}
		add(pre+"read_responses", "{%s}", strings.Join(rs, ", "))
		add(pre+"recovery_phase", "%d", c.RecoveryPhase)
		add(pre+"last_recoverable_entry", "%s", nilInt(c.LastRecoverable))
	}
	for _, m := range s.Msgs {
		add("messages["+FormatMessage(m.Key)+"]", "%s", deliveryState(m.Count))
	}
	return out
}

func tlaBool(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

func nilInt(v int8) string {
	if v == spec.Nil {
		return "Nil"
	}
	return fmt.Sprint(v)
}

func deliveryState(count int8) string {
	switch count {
	case 1:
		return "in flight (1)"
	case 0:
		return "processed (0)"
	case -1:
		return "lost (-1)"
	}
	return fmt.Sprint(count)
}

// FormatFragments renders a fragment sequence as <<[1: {b1,b2} from e1], ...>>.
func FormatFragments(fs []spec.Fragment) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("[%d: %s from e%d]", f.ID, spec.FormatBookies(f.Ensemble), f.First)
	}
	return "<<" + strings.Join(parts, ", ") + ">>"
}

// FormatEntries renders a bookie's entries as {e1, e2}; an entry whose data
// differs from its id shows both ({e1=2}).
func FormatEntries(es spec.EntrySet) string {
	var parts []string
	for _, e := range es.List() {
		if e.Data == e.ID {
			parts = append(parts, fmt.Sprintf("e%d", e.ID))
		} else {
			parts = append(parts, fmt.Sprintf("e%d=%d", e.ID, e.Data))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func formatPending(ops []spec.PendingAddOp) string {
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("[e%d, fragment %d, %s]", op.Entry.ID, op.FragmentID, spec.FormatBookies(op.Ensemble))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// FormatMessage renders a message record with its direction, e.g.
// "AddEntryRequest c1->b2 e1 lac=0".
func FormatMessage(k spec.MsgKey) string {
	f := k.Fields()
	c, b := fmt.Sprintf("c%d", f.Cid+1), fmt.Sprintf("b%d", f.Bookie+1)
	rec := ""
	if f.Recovery {
		rec = " recovery"
	}
	switch f.Type {
	case spec.AddEntryRequest:
		if f.LAFR > 0 {
			return fmt.Sprintf("AddEntryRequest %s->%s e%d lac=%d lafr=%d%s", c, b, f.Entry.ID, f.LAC, f.LAFR, rec)
		}
		return fmt.Sprintf("AddEntryRequest %s->%s e%d lac=%d%s", c, b, f.Entry.ID, f.LAC, rec)
	case spec.AddEntryResponse:
		res := "ok"
		switch {
		case f.Code == spec.CodeReadOnly:
			res = "read-only"
		case !f.Success:
			res = "fenced"
		}
		return fmt.Sprintf("AddEntryResponse %s->%s e%d %s%s", b, c, f.Entry.ID, res, rec)
	case spec.FenceRequest:
		return fmt.Sprintf("FenceRequest %s->%s", c, b)
	case spec.FenceResponse:
		if f.LAFR > 0 {
			return fmt.Sprintf("FenceResponse %s->%s lac=%d lafr=%d", b, c, f.LAC, f.LAFR)
		}
		return fmt.Sprintf("FenceResponse %s->%s lac=%d", b, c, f.LAC)
	case spec.ReadRequest:
		fence := ""
		if f.Fence {
			fence = " fence"
		}
		return fmt.Sprintf("ReadRequest %s->%s e%d%s", c, b, f.Entry.ID, fence)
	case spec.ReadResponse:
		code := "OK"
		switch f.Code {
		case spec.CodeNoSuchEntry:
			code = "NoSuchEntry"
		case spec.CodeUnknown:
			code = "Unknown"
		}
		return fmt.Sprintf("ReadResponse %s->%s e%d %s", b, c, f.Entry.ID, code)
	}
	return fmt.Sprintf("message %#x", uint32(k))
}

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
	tt := &Text{Params: t.Params.String(), Invariant: t.Invariant, Statement: t.Statement, Deadlock: t.Deadlock, Terminal: t.Terminal,
		Kind: t.Kind, Expression: t.Expression, Explanation: ExplanationText(t)}
	for _, st := range t.Steps {
		ts := TextStep{Initial: st.Initial, Vars: Vars(t.Params, &st.State)}
		if !st.Initial {
			ts.Action = st.Action.String()
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
