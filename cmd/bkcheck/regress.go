package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
)

// runRegress is `bkcheck regress [DIR]`: every run of every *.toml file in
// DIR (default testdata/regress) with its expected verdict, violated
// invariant, trace length, distinct count and depth; every drift is
// reported and makes the exit code 1. Runs marked slow are skipped unless
// --all is given.
func runRegress(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bkcheck regress", flag.ContinueOnError)
	fs.SetOutput(stderr)
	all := fs.Bool("all", false, "also run the cases marked slow")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	dir := "testdata/regress"
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	} else if fs.NArg() > 1 {
		fmt.Fprintln(stderr, "usage: bkcheck regress [--all] [DIR]")
		return exitUsage
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
	if len(files) == 0 {
		fmt.Fprintf(stderr, "bkcheck regress: no *.toml files in %s\n", dir)
		return exitUsage
	}
	sort.Strings(files)
	drifts, ran, skipped := 0, 0, 0
	for _, file := range files {
		cf, err := loadConfig(file)
		if err != nil {
			fmt.Fprintf(stderr, "bkcheck regress: %v\n", err)
			return exitUsage
		}
		for _, name := range cf.runNames() {
			rc, _ := cf.resolve(name)
			if rc.Slow != nil && *rc.Slow && !*all {
				skipped++
				continue
			}
			if ctx.Err() != nil {
				return exitInterrupted
			}
			ran++
			label := filepath.Base(file) + ":" + name
			code, res, stderr, err := runCheckJSON(ctx, []string{"--config", file, "--run", name, "--trace-out", "none"})
			if code == exitUsage || code == exitError || err != nil {
				fmt.Fprintf(stdout, "FAIL  %s: bkcheck check exited %d: %s %v\n", label, code, stderr, err)
				drifts++
				continue
			}
			inv, length := res.invariantAndLength()
			var bad []string
			if rc.ExpectStatus != nil && *rc.ExpectStatus != res.Status {
				bad = append(bad, fmt.Sprintf("status %s, expected %s", res.Status, *rc.ExpectStatus))
			}
			if rc.ExpectInvariant != nil && *rc.ExpectInvariant != inv {
				bad = append(bad, fmt.Sprintf("violated invariant %q, expected %q", inv, *rc.ExpectInvariant))
			}
			if rc.ExpectLength != nil && *rc.ExpectLength != length {
				bad = append(bad, fmt.Sprintf("trace length %d, expected %d", length, *rc.ExpectLength))
			}
			if rc.ExpectDistinct != nil && *rc.ExpectDistinct != res.Distinct {
				bad = append(bad, fmt.Sprintf("distinct %d, expected %d", res.Distinct, *rc.ExpectDistinct))
			}
			if rc.ExpectDepth != nil && *rc.ExpectDepth != res.Depth {
				bad = append(bad, fmt.Sprintf("depth %d, expected %d", res.Depth, *rc.ExpectDepth))
			}
			if len(bad) > 0 {
				drifts++
				fmt.Fprintf(stdout, "DRIFT %s: %s\n", label, strings.Join(bad, "; "))
			} else {
				fmt.Fprintf(stdout, "ok    %s: %s, %d distinct, depth %d%s (%.1fs)\n", label, res.Status, res.Distinct, res.Depth, violationSuffix(inv, length), res.ElapsedS)
			}
		}
	}
	fmt.Fprintf(stdout, "%d cases run, %d drifted, %d slow cases skipped%s\n", ran, drifts, skipped, map[bool]string{true: "", false: " (--all runs them)"}[skipped == 0])
	if drifts > 0 {
		return exitError
	}
	return exitOK
}

func violationSuffix(inv string, length int) string {
	if inv == "" {
		return ""
	}
	return fmt.Sprintf(", %s violated in %d states", inv, length)
}
