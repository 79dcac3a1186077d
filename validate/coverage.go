package validate

import (
	"sort"
	"strings"

	"github.com/bkcheck/bkcheck/record"
	"github.com/bkcheck/bkcheck/spec"
)

// A Pair is an action of the model with an outcome: what the step showed,
// by kind (a response by its return code, a status by its value). Two
// answers of one action (a fencing read answered with the LAC, or with
// no ledger) are two pairs; so are a response that completes an add and
// one that does not.
type Pair struct {
	Action  string
	Outcome string
}

func (p Pair) String() string { return p.Action + " -> " + p.Outcome }

// outcome names what a step showed.
func outcome(shows []record.Event) string {
	seen := map[string]bool{}
	for _, e := range shows {
		o := e.Kind
		switch e.Kind {
		case record.Send:
			o = e.Msg.Type
			if e.Msg.RC != "" {
				o += " " + e.Msg.RC
			}
		case record.Status:
			o = e.Client + " " + e.Status
		case record.Meta:
			o = "meta " + e.Meta.Status
		}
		seen[o] = true
	}
	if len(seen) == 0 {
		return "silent"
	}
	var os []string
	for o := range seen {
		os = append(os, o)
	}
	sort.Strings(os)
	return strings.Join(os, " + ")
}

// Pairs are the (action, outcome) pairs of a witness.
func Pairs(w []Step) []Pair {
	var ps []Pair
	for _, s := range w {
		ps = append(ps, Pair{s.Action.Kind.String(), outcome(s.Shows)})
	}
	return ps
}

// ModelPairs are the (action, outcome) pairs of every step of the model
// within its first limit states (breadth first), and whether that was all
// of them: the pairs a record could take.
func ModelPairs(m *spec.Model, limit int) (map[Pair]bool, bool) {
	pairs := map[Pair]bool{}
	init := m.Init()
	seen := map[string]bool{string(m.Encode(nil, &init)): true}
	queue := []spec.State{init}
	var scratch spec.State
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		m.Next(&s, &scratch, func(a spec.Action, t *spec.State) {
			v := project(m.P, a, &s, t)
			var shows []record.Event
			for _, x := range v.shown {
				shows = append(shows, x.ev)
			}
			pairs[Pair{a.Kind.String(), outcome(shows)}] = true
			if k := string(m.Encode(nil, t)); !seen[k] && len(seen) < limit {
				seen[k] = true
				queue = append(queue, copyState(t))
			}
		})
	}
	return pairs, len(seen) < limit
}
