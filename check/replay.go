package check

import (
	"fmt"
	"strings"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/traces"
	"github.com/bkcheck/bkcheck/vocab"
)

// ReplayError says which step of a saved trace the model does not confirm.
type ReplayError struct {
	Step   int // 1-based state index
	Reason string
}

func (e *ReplayError) Error() string { return fmt.Sprintf("step %d: %s", e.Step, e.Reason) }

// Replay checks a saved trace, of any model of the registry, against the
// model: the first state must be initial, every later state must be
// reached from the one before by a transition with the recorded action
// and parameters, no earlier state may violate the trace's invariant, and
// the last must (or, for a deadlock or a terminal-state property, must
// have no successor and fail it).
func Replay(tr *traces.Trace) error {
	if len(tr.Steps) == 0 {
		return &ReplayError{Step: 1, Reason: "the trace has no states"}
	}
	if tr.Kind != "" && tr.Error == "" {
		return replayCEL(tr)
	}
	info, err := LookupModel(tr.Model.Descriptor().Name)
	if err != nil {
		return err
	}
	c := info.config(tr.Model)
	c.Invariants = []string{tr.Invariant}
	switch {
	case tr.Error != "":
		c.Invariants = append([]string{}, tr.Checked...)
		if err := c.Settings.Add(tr.Kind, tr.Invariant, tr.Expression); err != nil {
			return fmt.Errorf("the trace's property: %w", err)
		}
	case tr.Deadlock || tr.Invariant == "":
		c.Invariants = []string{}
	}
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		return fmt.Errorf("the trace's model: %w", err)
	}
	b, err := info.bind(c)
	if err != nil {
		return fmt.Errorf("the trace's model: %w", err)
	}
	v := b.Vocabulary()
	var init []byte
	b.Init(func(enc, _ []byte) { init = append([]byte(nil), enc...) })
	if string(init) != string(b.EncodeState(tr.Steps[0].State)) {
		want, _ := b.DecodeState(init)
		return &ReplayError{Step: 1, Reason: "not the initial state: " + diffText(v, want, tr.Steps[0].State)}
	}
	exp := b.NewExpander()
	for i := range tr.Steps {
		st := &tr.Steps[i]
		if err := exp.Load(b.EncodeState(st.State)); err != nil {
			return &ReplayError{Step: i + 1, Reason: err.Error()}
		}
		last := i == len(tr.Steps)-1
		if last && tr.Error != "" {
			return checkFailure(tr, exp)
		}
		var bad string
		if failure := guarded(func() { bad = exp.Check() }); failure != "" {
			return &ReplayError{Step: i + 1, Reason: "the model fails here: " + failure}
		}
		if bad != "" && !last {
			return &ReplayError{Step: i + 1, Reason: fmt.Sprintf("%s already fails here, before the end of the trace", bad)}
		}
		if last {
			return checkEnd(tr, exp, bad)
		}
		next := &tr.Steps[i+1]
		want, label := string(b.EncodeState(next.State)), b.Label(next.Action)
		var sameAction [][]byte
		found := false
		failure := guarded(func() {
			exp.Successors(func(a explorer.Action, enc, _ []byte) {
				if a != label || found {
					return
				}
				if string(enc) == want {
					found = true
					return
				}
				sameAction = append(sameAction, append([]byte(nil), enc...))
			})
		})
		if failure != "" && !found {
			return &ReplayError{Step: i + 1, Reason: "the model fails computing this state's successors: " + failure}
		}
		if !found {
			what := v.ActionString(next.Action)
			reason := fmt.Sprintf("%s is not enabled in step %d's state", what, i+1)
			if len(sameAction) > 0 {
				got, err := b.DecodeState(sameAction[0])
				if err != nil {
					return err
				}
				reason = fmt.Sprintf("%s leads elsewhere: %s", what, diffText(v, got, next.State))
			}
			return &ReplayError{Step: i + 2, Reason: reason}
		}
	}
	return nil
}

// guarded runs f and returns what it panicked with, "" if it did not.
func guarded(f func()) (failure string) {
	defer func() {
		if r := recover(); r != nil {
			failure = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// checkFailure confirms the end of a trace of the error verdict: the
// model fails on the last state, checking it, checking it as a terminal
// state, or computing its successors.
func checkFailure(tr *traces.Trace, e explorer.Expander) error {
	succ := 0
	for _, f := range []func(){
		func() { e.Check() },
		func() { e.Successors(func(explorer.Action, []byte, []byte) { succ++ }) },
		func() {
			if succ == 0 {
				e.CheckTerminal()
			}
		},
	} {
		if guarded(f) != "" {
			return nil
		}
	}
	return &ReplayError{Step: len(tr.Steps), Reason: "the model does not fail in the last state (the trace says: " + tr.Error + ")"}
}

func checkEnd(tr *traces.Trace, e explorer.Expander, bad string) error {
	n := len(tr.Steps)
	switch {
	case tr.Deadlock || tr.Terminal:
		succ := 0
		e.Successors(func(_ explorer.Action, _, _ []byte) { succ++ })
		if succ != 0 {
			return &ReplayError{Step: n, Reason: fmt.Sprintf("the last state has %d successors, the trace says none", succ)}
		}
		if tr.Terminal && e.CheckTerminal() != tr.Invariant {
			return &ReplayError{Step: n, Reason: tr.Invariant + " holds in the last state"}
		}
	case bad != tr.Invariant:
		return &ReplayError{Step: n, Reason: tr.Invariant + " holds in the last state"}
	}
	return nil
}

// diffText names the variables in which two states differ.
func diffText(v vocab.Model, want, got any) string {
	d := traces.Diff(v.Rows(want), v.Rows(got))
	d2 := traces.Diff(v.Rows(got), v.Rows(want))
	var parts []string
	for _, r := range d2 {
		parts = append(parts, fmt.Sprintf("%s = %s (model: %s)", r.Name, valueIn(d, r.Name), r.Value))
	}
	if len(parts) == 0 {
		for _, r := range d {
			parts = append(parts, fmt.Sprintf("%s = %s (model has none)", r.Name, r.Value))
		}
	}
	if len(parts) > 4 {
		parts = append(parts[:4], fmt.Sprintf("and %d more", len(parts)-4))
	}
	return "trace has " + strings.Join(parts, "; ")
}

func valueIn(vs []traces.Var, name string) string {
	for _, v := range vs {
		if v.Name == name {
			return v.Value
		}
	}
	return "(absent)"
}
