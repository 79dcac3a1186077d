package regress

import (
	"context"
	"errors"
	"fmt"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
)

// POR runs case c again with --por and symmetry sym, in memory, and
// lists how its result differs from full, c's result without --por: a
// different verdict or violated property, a counterexample that does not
// replay on the full model, or one shorter than full's (a breadth-first
// search without the reduction finds a shortest one). covered is false,
// and nothing is run, where the reduction does not cover c.
func POR(ctx context.Context, c Case, full *check.Report, sym spec.Symmetry) (rep *check.Report, drifts []string, covered bool, err error) {
	cfg := c.Config
	cfg.POR, cfg.Symmetry = true, sym
	cfg.Dir, cfg.Store, cfg.Resume = "", check.StoreMem, false
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		if onlyPOR(err) {
			return nil, nil, false, nil
		}
		return nil, nil, true, err
	}
	if rep, err = check.Run(ctx, cfg); err != nil {
		return nil, nil, true, err
	}
	if rep.Status != full.Status || violated(rep) != violated(full) {
		drifts = append(drifts, fmt.Sprintf("%s %q with --por, %s %q without", rep.Status, violated(rep), full.Status, violated(full)))
	}
	if rep.Trace != nil {
		if err := check.Replay(rep.Trace); err != nil {
			drifts = append(drifts, fmt.Sprintf("the --por counterexample does not replay: %v", err))
		}
		if full.Violation != nil && len(rep.Violation.Trace) < len(full.Violation.Trace) {
			drifts = append(drifts, fmt.Sprintf("a --por counterexample of %d states, shorter than the shortest (%d)", len(rep.Violation.Trace), len(full.Violation.Trace)))
		}
	}
	return rep, drifts, true, nil
}

// onlyPOR reports whether every problem err lists is --por's: the case
// is valid, the reduction just does not cover it.
func onlyPOR(err error) bool {
	var probs schema.Problems
	if !errors.As(err, &probs) {
		return false
	}
	for _, p := range probs {
		if p.Field != "por" {
			return false
		}
	}
	return len(probs) > 0
}

func violated(r *check.Report) string {
	if r.Violation == nil {
		return ""
	}
	return r.Violation.Invariant
}
