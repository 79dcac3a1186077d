package check

import (
	"math"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
)

// LossBias weights the steps of a random simulation as if every message a
// step sends (or, for a reply, answers) were lost independently with
// probability rate, 0 < rate < 1.
//
// The model makes loss a choice at send time: a send to k bookies has 2^k
// successors, one per loss pattern, and a uniform walk therefore loses most
// of its messages, times out, changes ensembles and ends within a few steps
// (mean walk length about 8 on --bookies 2 -w 2 -a 2). Weighting the
// pattern that loses j of the k messages by (rate/(1-rate))^j gives, within
// each action, exactly the distribution of independent losses; actions stay
// about equally likely to one another. Ensemble changes record the bookies
// they replace in the same field and are not weighted.
func LossBias(rate float64) func(explorer.Action) float64 {
	odds := rate / (1 - rate)
	var pow [spec.MaxBookies + 1]float64
	for j := range pow {
		pow[j] = math.Pow(odds, float64(j))
	}
	return func(a explorer.Action) float64 {
		sa := FromLabel(a)
		if sa.Kind == spec.ClientChangesEnsemble || sa.Kind == spec.RecoveryClientChangesEnsemble {
			return 1
		}
		return pow[sa.Lost.Len()]
	}
}
