package check

import (
	"context"
	"fmt"
	"math"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
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
	pow := lossOdds(rate)
	return func(a explorer.Action) float64 {
		sa := FromLabel(a)
		if sa.Kind == spec.ClientChangesEnsemble || sa.Kind == spec.RecoveryClientChangesEnsemble {
			return 1
		}
		return pow[sa.Lost.Len()]
	}
}

// lossOdds[j] is the weight of a step that loses j messages.
func lossOdds(rate float64) [spec.MaxBookies + 1]float64 {
	odds := rate / (1 - rate)
	var pow [spec.MaxBookies + 1]float64
	for j := range pow {
		pow[j] = math.Pow(odds, float64(j))
	}
	return pow
}

// SimReport is the outcome of a simulation and, on a violation, the
// decoded walk.
type SimReport struct {
	explorer.SimResult
	Trace    *traces.Trace
	Readable *traces.Text // the walk in readable form, whatever the model
	Config   SimConfig    // as used, defaults filled in
}

// Simulate runs random walks as cfg says: it fills in defaults, validates
// (every problem at once), and decodes the violating walk if any. Finding
// nothing is Unknown, never OK.
func Simulate(ctx context.Context, cfg SimConfig) (*SimReport, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := bind(cfg.ModelConfig)
	if err != nil {
		return nil, err
	}
	opt := explorer.SimOptions{Seed: cfg.Seed, Depth: cfg.Depth, Walks: cfg.Traces, Duration: cfg.Duration, Workers: cfg.Workers, CheckDeadlock: cfg.CheckDeadlock}
	if cfg.LossRate > 0 {
		opt.Weight = m.LossBias(cfg.LossRate)
	}
	sm, decode := m.SimModel()
	res, err := explorer.Simulate(ctx, sm, opt)
	if err != nil {
		return nil, err
	}
	rep := &SimReport{SimResult: res, Config: cfg}
	if res.Violation != nil {
		if rep.Trace, err = decode(res.Violation); err != nil {
			return nil, err
		}
		rep.Readable = rep.Trace.Text()
	}
	return rep, nil
}

// RerunCommand is the bkcheck simulate invocation that reruns the
// violating walk alone: the model, the walk's seed and how steps were
// picked.
func (r *SimReport) RerunCommand() string {
	cmd := fmt.Sprintf("bkcheck simulate %s --seed %d --traces 1 --depth %d", r.Config.ModelConfig.Flags(), r.WalkSeed, r.Config.Depth)
	if r.Config.LossRate > 0 {
		cmd += fmt.Sprintf(" --loss-rate %g", r.Config.LossRate)
	}
	return cmd
}
