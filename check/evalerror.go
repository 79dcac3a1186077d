package check

import "github.com/bkcheck/bkcheck/explorer"

// The error verdict (explorer.Error): the model failed on a state — the
// spec, a built-in property or a CEL property panicked, a bug, or a
// property reported that it cannot be evaluated there — and the search
// stopped, as TLC stops at an evaluation error. A Report (a SimReport)
// carries it as it carries a violation: Status is explorer.Error,
// Violation.Error says what failed and how, and Trace and Readable are
// the path from the initial state to the state the model failed on,
// decoded as counterexamples are but naming no invariant (none when it
// failed computing the initial states). The state is the first the model
// fails on in the search's order, so the verdict is as deterministic as a
// violation's. It is final: resuming the run directory reports it again.
// Properties the failure leaves unanswered say so in their Reason; the
// one it names, if any, says how it failed.

// ModelError is how the model failed, for the error verdict; nil for any
// other.
func (r *Report) ModelError() *explorer.ModelError { return modelErrorOf(r.Violation) }

// ModelError is how the model failed on the walk, for the error verdict;
// nil for any other.
func (r *SimReport) ModelError() *explorer.ModelError { return modelErrorOf(r.Violation) }

func modelErrorOf(v *explorer.ViolationInfo) *explorer.ModelError {
	if v == nil {
		return nil
	}
	return v.Error
}

// propertyFailure is why the property name has no answer when the model
// failed evaluating it (the failure names it); "" otherwise.
func propertyFailure(rep *Report, name string) string {
	if e := rep.ModelError(); e != nil && e.Property != "" && e.Property == name {
		return e.Error()
	}
	return ""
}

// eventuallyFailed completes rep when the model failed in the eventually
// pass (res): the run's verdict becomes the error, with the trace to the
// failing state (the pass's masks removed), and the eventually
// properties stay undecided.
func (em *eventuallyModel) failed(res explorer.Result, rep *Report, results map[string]*PropertyResult) error {
	v := em.strip(res.Violation)
	tr, err := em.base.Trace(v)
	if err != nil {
		return err
	}
	for _, i := range em.cel.eventually {
		r := results[em.cel.set.Properties()[i].Name]
		r.Status, r.Reason = Unknown, "the pass over the behaviour graph stopped: "+v.Error.Error()
	}
	rep.Status, rep.Reason, rep.Violation = explorer.Error, v.Error.Error(), v
	rep.Trace, rep.Readable = tr, tr.Text()
	return nil
}
