package validate

import (
	"errors"

	"github.com/bkcheck/bkcheck/record"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// FromTrace is what an observer at the harness's place would have recorded
// of a behaviour of the model: one group per step that shows anything.
// Such a record validates by construction (the trace is a witness), which
// makes every trace of the model a test of the validator, and a mutated
// one a test that it says INVALID.
func FromTrace(tr *traces.Trace) (*record.Record, error) {
	p, ok := spec.ParamsOf(tr.Model)
	if !ok {
		return nil, errors.New("not a trace of the current model")
	}
	params, err := tr.Model.ParamsJSON()
	if err != nil {
		return nil, err
	}
	r := &record.Record{Header: record.Header{Format: record.Format, Model: "current", Params: params, Source: record.ModelTrace}}
	for i := 1; i < len(tr.Steps); i++ {
		a := tr.Steps[i].Action.(spec.Action)
		prev, cur := tr.Steps[i-1].State.(spec.State), tr.Steps[i].State.(spec.State)
		v := project(p, a, &prev, &cur)
		g := record.Group{Cause: a.String()}
		for _, s := range v.shown {
			g.Events = append(g.Events, s.ev)
		}
		for _, k := range v.consumed {
			g.Events = append(g.Events, record.Event{Kind: record.Deliver, Msg: message(k)})
		}
		if len(g.Events) > 0 {
			r.Groups = append(r.Groups, g)
		}
	}
	return r, nil
}
