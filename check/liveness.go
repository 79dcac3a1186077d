package check

import (
	"context"
	"fmt"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/liveness"
	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/traces"
)

// This file is the eventually pass on graphs that may have cycles, and
// --fair (package liveness has the semantics). The pass of properties.go
// searches the product of the model with the pending properties and
// reports a terminal state where one is still owed: exact only when the
// reachable graph has no cycle. When the model says its graph may have
// one (Cyclic), or weak-fairness constraints are given, the same product
// is built in memory by package liveness instead, which also finds the
// fair cycles along which a property stays owed.

// Cyclic is what a Bound implements when its reachable graph may have
// cycles: the eventually pass then looks for fair cycles too.
type Cyclic interface {
	Cyclic() bool
}

// Cyclic implements Cyclic: the current model's graph has cycles with
// AutoRecovery (bookies go down and up, workers take and release locks,
// retries); without it sends are bounded and statuses only move
// forward (docs/model.md).
func (m *Model) Cyclic() bool { return m.spec.P.AutoRecovery }

// mayCycle reports whether b says its graph may have cycles.
func mayCycle(b Bound) bool {
	c, ok := b.(Cyclic)
	return ok && c.Cyclic()
}

// actionKinds maps the action names of model (its vocabulary) to their
// kinds: the i-th action of the descriptor is kind i+1 in every model of
// the registry.
func actionKinds(model string) (names []string, kinds map[string]uint8, err error) {
	info, err := LookupModel(model)
	if err != nil {
		return nil, nil, err
	}
	kinds = map[string]uint8{}
	for i, a := range info.Descriptor.Actions {
		names = append(names, a.Name)
		kinds[a.Name] = uint8(i + 1)
	}
	return names, kinds, nil
}

// Fairness resolves --fair: one weak-fairness constraint per action
// named (all: per action of the model), in the order given, each once.
func (c ModelConfig) Fairness() ([]liveness.Fairness, error) {
	if len(c.Fair) == 0 {
		return nil, nil
	}
	model := c.Model
	if model == "" {
		model = ModelCurrent
	}
	names, kinds, err := actionKinds(model)
	if err != nil {
		return nil, err
	}
	var probs schema.Problems
	var out []liveness.Fairness
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, liveness.Fairness{Name: name, Kinds: []uint8{kinds[name]}})
		}
	}
	for _, name := range c.Fair {
		switch _, ok := kinds[name]; {
		case name == properties.FairAll:
			for _, n := range names {
				add(n)
			}
		case ok:
			add(name)
		default:
			probs.Add("fair", "unknown action %q (bkcheck actions --model %s lists them; or %s)", name, model, properties.FairAll)
		}
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// validateFair adds to probs what is wrong with --fair.
func (c ModelConfig) validateFair(probs *schema.Problems) {
	if len(c.Fair) == 0 {
		return
	}
	if len(c.Eventually) == 0 {
		probs.Add("fair", "constrains the behaviours --eventually properties are checked on; give one (a fairness constraint alone checks nothing)")
	}
	_, err := c.Fairness()
	probs.Merge(err)
}

// livenessPass is the eventually pass by package liveness: every
// eventually property decided on its own, a counterexample a terminal
// state or a fair cycle where it stays owed; the shortest of them is the
// run's.
func livenessPass(ctx context.Context, cfg Config, rep *Report, results map[string]*PropertyResult, b Bound, cel *celProps, fair []liveness.Fairness) error {
	em := &eventuallyModel{base: b, cel: cel}
	res, err := liveness.Check(ctx, em, liveness.Options{
		Props:     len(cel.eventually),
		Pending:   func(e explorer.Expander) uint64 { return e.(*eventuallyExpander).pending },
		Fair:      fair,
		MaxStates: cfg.MaxStates,
	})
	if err != nil {
		return err
	}
	stats := explorer.Stats{Distinct: res.States, Generated: res.Generated, Depth: res.Depth, Elapsed: res.Elapsed}
	if res.Status == explorer.Error {
		return em.failed(explorer.Result{Status: explorer.Error, Violation: res.Failure}, rep, results)
	}
	var best *traces.Trace
	var bestV *explorer.ViolationInfo
	for j, i := range cel.eventually {
		name := cel.set.Properties()[i].Name
		r := results[name]
		r.Graph, r.Cycles = &stats, &res.Stats
		l := res.Lassos[j]
		if l == nil {
			if res.Status == explorer.Unknown {
				r.Reason = "the pass over the behaviour graph stopped early: " + res.Reason
			} else {
				r.Status = Holds
			}
			continue
		}
		v := em.strip(&explorer.ViolationInfo{Invariant: name, Terminal: l.Loop < 0, Trace: l.Steps})
		tr, err := b.Trace(v)
		if err != nil {
			return err
		}
		if l.Loop >= 0 {
			tr.Terminal = false
			tr.Loop = l.Loop + 1
			for c, w := range l.Fair {
				tr.Fairness = append(tr.Fairness, traces.FairStep{Constraint: fair[c].Name, Step: w.Step + 1, Taken: w.Taken})
			}
		}
		r.Status, r.Trace = Violated, tr
		if best == nil || len(tr.Steps) < len(best.Steps) {
			best, bestV = tr, v
		}
	}
	if best == nil {
		if res.Status == explorer.Unknown && rep.Status == explorer.OK {
			rep.Status, rep.Reason = explorer.Unknown, "eventually pass: "+res.Reason
		}
		return nil
	}
	rep.Status = explorer.Violation
	rep.Violation = bestV
	rep.Trace, rep.Readable = best, best.Text()
	return nil
}

// checkLasso confirms the cycle of a lasso trace (Trace.Loop), whose
// steps Replay has confirmed: the last state is the loop's, the property
// is owed in the loop's state (so in the whole cycle, which CheckTrace
// has confirmed never satisfies it), and each fairness witness is what it
// says: the action taken at its step, or no transition of the action
// (other than a stuttering one) from its state.
func checkLasso(tr *traces.Trace, b Bound, checkOwed func(*traces.Trace) (int, error)) error {
	n := len(tr.Steps)
	if tr.Loop < 1 || tr.Loop >= n {
		return &ReplayError{Step: n, Reason: fmt.Sprintf("the loop returns to state %d, not a state before the last", tr.Loop)}
	}
	if string(b.EncodeState(tr.Steps[n-1].State)) != string(b.EncodeState(tr.Steps[tr.Loop-1].State)) {
		v := b.Vocabulary()
		return &ReplayError{Step: n, Reason: fmt.Sprintf("the last state is not state %d: %s", tr.Loop, diffText(v, tr.Steps[tr.Loop-1].State, tr.Steps[n-1].State))}
	}
	stem := *tr
	stem.Steps, stem.Loop, stem.Fairness = tr.Steps[:tr.Loop], 0, nil
	if step, err := checkOwed(&stem); err != nil {
		if step == 0 {
			step = tr.Loop
		}
		return &ReplayError{Step: step, Reason: "the cycle does not start owing the property: " + err.Error()}
	}
	_, kinds, err := actionKinds(tr.Model.Descriptor().Name)
	if err != nil {
		return err
	}
	exp := b.NewExpander()
	for _, f := range tr.Fairness {
		kind, ok := kinds[f.Constraint]
		switch {
		case !ok:
			return &ReplayError{Step: f.Step, Reason: fmt.Sprintf("fairness of %q: no such action", f.Constraint)}
		case f.Step < tr.Loop || f.Step > n || f.Taken && f.Step == tr.Loop:
			return &ReplayError{Step: f.Step, Reason: fmt.Sprintf("WF(%s): step %d is not in the cycle", f.Constraint, f.Step)}
		case f.Taken:
			if b.Label(tr.Steps[f.Step-1].Action).Kind != kind {
				return &ReplayError{Step: f.Step, Reason: fmt.Sprintf("WF(%s): the step takes another action", f.Constraint)}
			}
		default:
			enc := b.EncodeState(tr.Steps[f.Step-1].State)
			if err := exp.Load(enc); err != nil {
				return &ReplayError{Step: f.Step, Reason: err.Error()}
			}
			enabled := false
			exp.Successors(func(a explorer.Action, next, _ []byte) {
				enabled = enabled || a.Kind == kind && string(next) != string(enc)
			})
			if enabled {
				return &ReplayError{Step: f.Step, Reason: fmt.Sprintf("WF(%s): the action is enabled here, the trace says disabled", f.Constraint)}
			}
		}
	}
	return nil
}
