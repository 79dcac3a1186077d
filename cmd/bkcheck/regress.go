package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/bkcheck/bkcheck/bugs"
	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/regress"
	"github.com/bkcheck/bkcheck/schema"
)

// regressSettings are the switches of bkcheck regress.
type regressSettings struct {
	All    bool `name:"all" help:"also run the cases marked slow"`
	NoBugs bool `name:"no-bugs" help:"leave out BookKeeper's historical bugs and the open questions (docs/bugs.md, docs/findings.md), which run after DIR's cases"`
	POR    bool `name:"por" help:"also run every case the partial-order reduction covers with --por, and report a drift if its verdict or violated property differs, or its counterexample does not replay or is shorter than the shortest"`
}

var regressSchema = schema.MustOf(regressSettings{})

func regressFlags() []section {
	return []section{{"Suite", schema.Target{S: regressSchema, V: &regressSettings{}}}}
}

// porCase runs c with --por (regress.POR) and prints the outcome; it
// reports whether it ran and whether it drifted.
func porCase(ctx context.Context, w io.Writer, c regress.Case, full *check.Report) (ran, drift bool) {
	rep, drifts, covered, err := regress.POR(ctx, c, full, c.Config.Symmetry)
	switch {
	case ctx.Err() != nil || !covered:
		return false, false
	case err != nil:
		fmt.Fprintf(w, "FAIL  %s --por: %v\n", c.Label(), err)
		return true, true
	case len(drifts) > 0:
		fmt.Fprintf(w, "DRIFT %s --por: %s\n", c.Label(), strings.Join(drifts, "; "))
		return true, true
	}
	fmt.Fprintf(w, "ok    %s --por: %s, %d distinct (%.2f× fewer)\n", c.Label(), rep.Status, rep.Distinct, float64(full.Distinct)/float64(rep.Distinct))
	return true, false
}

// runRegress is `bkcheck regress [--all] [--no-bugs] [--por] [DIR | FILE.toml]`:
// every run of every *.toml file in DIR (default testdata/regress), or of
// the one file given, and every historical bug of package bugs (found
// under its configuration, and its fix's verdict) against its
// expectations; every drift is reported and makes the exit code 1. A
// file that cannot be read, or that expects what no run can have, is a
// usage error (2) before any case runs.
func runRegress(ctx context.Context, inv *invocation) int {
	cl, stdout, stderr := inv.cl, inv.stdout, inv.stderr
	s := settingsOf[regressSettings](cl)
	dir := "testdata/regress"
	switch len(cl.args) {
	case 0:
	case 1:
		dir = cl.args[0]
	default:
		cl.probs.Add("", "give at most one directory or suite file (got %v)", cl.args)
	}
	if code := cl.report(stderr); code != exitOK {
		return code
	}
	cases, err := regress.Load(dir)
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck regress: %v\n", err)
		return exitUsage
	}
	if !s.NoBugs {
		cases = append(cases, bugs.Cases()...)
		cases = append(cases, bugs.FindingCases()...)
	}
	drifts, ran, skipped, porRan := 0, 0, 0, 0
	for _, c := range cases {
		if c.Expect.Slow && !s.All {
			skipped++
			continue
		}
		if ctx.Err() != nil {
			break
		}
		ran++
		o := regress.Run(ctx, c)
		switch {
		case ctx.Err() != nil:
			fmt.Fprintf(stdout, "STOP  %s: interrupted\n", c.Label())
		case o.Err != nil:
			drifts++
			fmt.Fprintf(stdout, "FAIL  %s: %v\n", c.Label(), o.Err)
		case !o.OK():
			drifts++
			fmt.Fprintf(stdout, "DRIFT %s: %s\n", c.Label(), o.DriftText())
		default:
			fmt.Fprintf(stdout, "ok    %s: %s\n", c.Label(), o.Summary())
			if s.POR {
				if ran, drift := porCase(ctx, stdout, c, o.Report); ran {
					porRan++
					if drift {
						drifts++
					}
				}
			}
		}
	}
	note := " (--all runs them)"
	if skipped == 0 {
		note = ""
	}
	if s.POR {
		note += fmt.Sprintf("; %d of them also run with --por (the others are not covered by it)", porRan)
	}
	fmt.Fprintf(stdout, "%d cases run, %d drifted, %d slow cases skipped%s\n", ran, drifts, skipped, note)
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case drifts > 0:
		return exitError
	}
	return exitOK
}
