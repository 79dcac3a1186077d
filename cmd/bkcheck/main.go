// Command bkcheck model-checks the Apache BookKeeper replication protocol.
// It is a thin shell over package check: it turns flags and files into a
// check.Config, runs it, and turns the report into text, JSON, trace files
// and an exit code.
//
//	bkcheck check [flags]    explore every interleaving of a parameter set
//	bkcheck help             usage and exit codes
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/invariants"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec413"
)

func main() {
	os.Exit(run(interruptible(), os.Args[1:], os.Stdout, os.Stderr))
}

// interruptible returns a context cancelled by the first SIGINT or SIGTERM,
// which makes the search stop cleanly (partial statistics, resumable). The
// signals then get their default action back, so a second Ctrl-C kills the
// process at once.
func interruptible() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		cancel()
	}()
	return ctx
}

// Exit codes. Where they overlap with TLC's they are TLC's.
const (
	exitOK          = 0
	exitError       = 1   // I/O or internal error
	exitUsage       = 2   // bad flags or parameters
	exitUnknown     = 3   // a bound stopped the search: neither proved nor refuted
	exitDeadlock    = 11  // TLC: deadlock reached
	exitViolation   = 12  // TLC: safety violation
	exitTerminal    = 13  // TLC: liveness violation; here a terminal-state property
	exitInterrupted = 130 // stopped by SIGINT/SIGTERM; the verdict is unknown
)

const usageText = `bkcheck model-checks the Apache BookKeeper replication protocol.

Usage:
  bkcheck check [flags]   explore every reachable state of one parameter set
  bkcheck simulate [flags] random walks: a fast bug hunt on models too large to exhaust
  bkcheck replay FILE     re-check a saved trace (.itf.json) against the model
  bkcheck regress [DIR]   run the regression suite (testdata/regress/*.toml) and report every drift
  bkcheck sweep FILE.toml [--shard i/n]   check a grid of parameter sets; bkcheck sweep merge DIR... joins slices
  bkcheck trace render FILE --format text|mermaid|dot|html
                          render a saved trace
  bkcheck guarantees      regenerate docs/guarantees.md (what E, Qw and Qa guarantee)
  bkcheck bugs            regenerate docs/bugs.md (BookKeeper's protocol bugs, found again)
  bkcheck variants        list the protocol variants (--variant)
  bkcheck invariants      list the properties (--invariants)
  bkcheck actions         list the action names (--exclude-actions)
  bkcheck help            show this text

Run 'bkcheck check -h' (or simulate, sweep, ...) for a command's flags.

Exit codes:
  0    ok: every reachable state explored, every invariant holds
  1    error (I/O, internal; a regression drift; an incomplete sweep merge)
  2    usage: bad flags or parameters (all problems are listed)
  3    unknown: --max-depth or --max-states stopped the search first
  11   deadlock: a state without successor (only with --check-deadlock)
  12   an invariant is violated; the shortest counterexample is printed
  13   a property of terminal states fails in a state without successor
  130  interrupted (Ctrl-C / SIGTERM); partial statistics, verdict unknown
`

// run is the whole program: main is run with the process's arguments,
// streams and signals; tests call it directly.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	switch args[0] {
	case "check":
		return runCheck(ctx, args[1:], stdout, stderr)
	case "simulate":
		return runSimulate(ctx, args[1:], stdout, stderr)
	case "replay":
		return runReplay(args[1:], stdout, stderr)
	case "regress":
		return runRegress(ctx, args[1:], stdout, stderr)
	case "sweep":
		return runSweep(ctx, args[1:], stdout, stderr)
	case "guarantees":
		return runGuarantees(ctx, args[1:], stdout, stderr)
	case "bugs":
		return runBugs(ctx, args[1:], stdout, stderr)
	case "trace":
		return runTrace(args[1:], stdout, stderr)
	case "variants":
		for _, v := range spec.Variants {
			issue := ""
			if v.Issue != "" {
				issue = " (" + v.Issue + ")"
			}
			fmt.Fprintf(stdout, "%s%s\n    %s\n    source: %s\n", v.Name, issue, v.Description, v.Source)
		}
		return exitOK
	case "invariants":
		for _, inv := range invariants.All {
			kind := "invariant"
			if inv.HoldsTerminal != nil {
				kind = "invariant and terminal-state property"
			}
			fmt.Fprintf(stdout, "%s (%s)\n    %s\n    source: %s\n", inv.Name, kind, inv.Statement, inv.Source)
		}
		fmt.Fprintf(stdout, "\nWith --model %s (all of them by default, as in its shipped cfg):\n", check.ModelV413)
		for _, inv := range spec413.Invariants {
			fmt.Fprintf(stdout, "%s\n    %s\n", inv.Name, inv.Statement)
		}
		fmt.Fprintln(stdout, "\nAny other property: --invariant, --terminal, --eventually or --probe NAME=EXPR, in CEL (docs/properties.md).")
		return exitOK
	case "actions":
		for k := spec.ActionKind(1); k < spec.NumActionKinds; k++ {
			fmt.Fprintln(stdout, k)
		}
		return exitOK
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	}
	fmt.Fprintf(stderr, "bkcheck: unknown command %q\n\n%s", args[0], usageText)
	return exitUsage
}
