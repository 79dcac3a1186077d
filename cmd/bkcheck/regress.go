package main

import (
	"context"
	"fmt"

	"github.com/bkcheck/bkcheck/bugs"
	"github.com/bkcheck/bkcheck/regress"
	"github.com/bkcheck/bkcheck/schema"
)

// regressSettings are the switches of bkcheck regress.
type regressSettings struct {
	All    bool `name:"all" help:"also run the cases marked slow"`
	NoBugs bool `name:"no-bugs" help:"leave out BookKeeper's historical bugs and the open questions (docs/bugs.md, docs/findings.md), which run after DIR's cases"`
}

var regressSchema = schema.MustOf(regressSettings{})

func regressFlags() []section {
	return []section{{"Suite", schema.Target{S: regressSchema, V: &regressSettings{}}}}
}

// runRegress is `bkcheck regress [--all] [--no-bugs] [DIR]`: every run of
// every *.toml file in DIR (default testdata/regress) and every historical
// bug of package bugs (found under its configuration, and its fix's
// verdict) against its expectations; every drift is reported and makes
// the exit code 1.
func runRegress(ctx context.Context, inv *invocation) int {
	cl, stdout, stderr := inv.cl, inv.stdout, inv.stderr
	s := settingsOf[regressSettings](cl)
	dir := "testdata/regress"
	switch len(cl.args) {
	case 0:
	case 1:
		dir = cl.args[0]
	default:
		cl.probs.Add("", "give at most one directory (got %v)", cl.args)
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
	drifts, ran, skipped := 0, 0, 0
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
		}
	}
	note := " (--all runs them)"
	if skipped == 0 {
		note = ""
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
