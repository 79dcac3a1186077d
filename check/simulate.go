package check

import (
	"context"
	"fmt"
	"math"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/properties"
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
	// Properties answers each CEL property of the run (constraints aside),
	// in order, as far as random walks can: a probe is found (Trace: the
	// first walk that reached it, up to the first state where it holds; a
	// witness, not necessarily the shortest; WitnessSeeds names the walk)
	// or unknown (no walk reached it, which does not make it
	// unreachable); any other property is violated (by the violation) or
	// unknown (walks prove nothing). A probe never ends a walk.
	Properties   []PropertyResult
	WitnessSeeds map[string]uint64 // probe -> the walk seed of its witness
}

// Reasons a simulation gives for what it leaves unknown.
const (
	simNotReached  = "not reached by the random walks, which does not make it unreachable (a complete bkcheck check would say)"
	simNotViolated = "no walk violated it (random walks prove nothing)"
)

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
	var probes []string
	if em, ok := sm.(*eventuallyModel); ok {
		probes = em.probeNames()
	}
	opt.Goals = len(probes)
	opt.StopAtGoals = len(probes) > 0 && cfg.asksOnly()
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
	witnesses := map[string]*traces.Trace{}
	for g, w := range res.Goals {
		if w == nil {
			continue
		}
		tr, err := decode(&explorer.ViolationInfo{Invariant: probes[g], Trace: w.Trace})
		if err != nil {
			return nil, err
		}
		witnesses[probes[g]] = tr
		if rep.WitnessSeeds == nil {
			rep.WitnessSeeds = map[string]uint64{}
		}
		rep.WitnessSeeds[probes[g]] = w.WalkSeed
	}
	if err := rep.answerCEL(witnesses); err != nil {
		return nil, err
	}
	return rep, nil
}

// asksOnly reports whether c only asks questions: probes, and no property
// (built-in, CEL invariant, terminal or eventually) or deadlock to check.
func (c ModelConfig) asksOnly() bool {
	return len(c.Probe) > 0 && len(c.builtinNames()) == 0 && len(c.Invariant)+len(c.Terminal)+len(c.Eventually) == 0 && !c.CheckDeadlock
}

// answerCEL fills in r.Properties: witnesses are the probes' found.
func (r *SimReport) answerCEL(witnesses map[string]*traces.Trace) error {
	set, err := r.Config.CELProperties()
	if err != nil || set == nil {
		return err
	}
	for _, p := range set.Properties() {
		if !p.User() || p.Kind == properties.Constraint {
			continue
		}
		pr := PropertyResult{Name: p.Name, Kind: p.Kind.String(), Expression: p.Expr, Statement: p.Statement, Status: Unknown}
		switch {
		case p.Kind == properties.Probe && witnesses[p.Name] != nil:
			pr.Status, pr.Trace = Found, witnesses[p.Name]
		case p.Kind == properties.Probe:
			pr.Reason = simNotReached
		case r.Violation != nil && r.Violation.Error == nil && r.Violation.Invariant == p.Name:
			pr.Status, pr.Trace = Violated, r.Trace
		default:
			pr.Reason = simNotViolated
			if e := r.ModelError(); e != nil && e.Property == p.Name {
				pr.Reason = e.Error() // its evaluation failed
			}
		}
		r.Properties = append(r.Properties, pr)
	}
	return nil
}

// RerunCommand is the bkcheck simulate invocation that reruns the
// violating walk alone: the model, the walk's seed and how steps were
// picked.
func (r *SimReport) RerunCommand() string { return r.RerunWalk(r.WalkSeed) }

// RerunWalk is the bkcheck simulate invocation that reruns the walk with
// seed alone (a probe's witness: WitnessSeeds).
func (r *SimReport) RerunWalk(seed uint64) string {
	cmd := fmt.Sprintf("bkcheck simulate %s --seed %d --traces 1 --depth %d", r.Config.ModelConfig.Flags(), seed, r.Config.Depth)
	if r.Config.LossRate > 0 {
		cmd += fmt.Sprintf(" --loss-rate %g", r.Config.LossRate)
	}
	return cmd
}
