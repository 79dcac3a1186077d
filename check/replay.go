package check

import (
	"fmt"
	"strings"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// ReplayError says which step of a saved trace the model does not confirm.
type ReplayError struct {
	Step   int // 1-based state index
	Reason string
}

func (e *ReplayError) Error() string { return fmt.Sprintf("step %d: %s", e.Step, e.Reason) }

// Replay checks a saved trace against the model: the first state must be
// initial, every later state must be reached from the one before by a
// transition with the recorded action and parameters, no earlier state may
// violate the trace's invariant, and the last must (or, for a deadlock or a
// terminal-state property, must have no successor and fail it).
func Replay(tr *traces.Trace) error {
	if len(tr.Steps) == 0 {
		return &ReplayError{Step: 1, Reason: "the trace has no states"}
	}
	if tr.Kind != "" {
		return replayCEL(tr)
	}
	invs := []string{tr.Invariant}
	if tr.Deadlock {
		invs = []string{}
	}
	m, err := NewModel(ModelConfig{Params: tr.Params, Invariants: invs})
	if err != nil {
		return fmt.Errorf("the trace's model: %w", err)
	}
	sm := m.Spec()
	init := sm.Init()
	if string(sm.Encode(nil, &init)) != string(sm.Encode(nil, &tr.Steps[0].State)) {
		return &ReplayError{Step: 1, Reason: "not the initial state: " + diffText(tr.Params, &init, &tr.Steps[0].State)}
	}
	exp := m.NewExpander()
	var scratch spec.State
	for i := range tr.Steps {
		st := &tr.Steps[i]
		if err := exp.Load(sm.Encode(nil, &st.State)); err != nil {
			return &ReplayError{Step: i + 1, Reason: err.Error()}
		}
		last := i == len(tr.Steps)-1
		bad := exp.Check()
		if bad != "" && !last {
			return &ReplayError{Step: i + 1, Reason: fmt.Sprintf("%s already fails here, before the end of the trace", bad)}
		}
		if last {
			return checkEnd(tr, sm, exp.(*expander), bad)
		}
		next := &tr.Steps[i+1]
		want := string(sm.Encode(nil, &next.State))
		var sameAction []spec.State
		found := false
		sm.Next(&st.State, &scratch, func(a spec.Action, s *spec.State) {
			if a != next.Action || found {
				return
			}
			if string(sm.Encode(nil, s)) == want {
				found = true
				return
			}
			var c spec.State
			c.CopyFrom(s)
			sameAction = append(sameAction, c)
		})
		if !found {
			reason := fmt.Sprintf("%s is not enabled in step %d's state", next.Action, i+1)
			if len(sameAction) > 0 {
				reason = fmt.Sprintf("%s leads elsewhere: %s", next.Action, diffText(tr.Params, &sameAction[0], &next.State))
			}
			return &ReplayError{Step: i + 2, Reason: reason}
		}
	}
	return nil
}

func checkEnd(tr *traces.Trace, sm *spec.Model, e *expander, bad string) error {
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
func diffText(p spec.Params, want, got *spec.State) string {
	d := traces.Diff(traces.Vars(p, want), traces.Vars(p, got))
	d2 := traces.Diff(traces.Vars(p, got), traces.Vars(p, want))
	var parts []string
	for _, v := range d2 {
		parts = append(parts, fmt.Sprintf("%s = %s (model: %s)", v.Name, valueIn(d, v.Name), v.Value))
	}
	if len(parts) == 0 {
		for _, v := range d {
			parts = append(parts, fmt.Sprintf("%s = %s (model has none)", v.Name, v.Value))
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
