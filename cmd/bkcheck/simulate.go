package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// runSimulate is `bkcheck simulate`: random walks with invariants checked on
// every visited state. A violation is reported with its trace and the walk
// seed that reproduces it; no violation is reported as unknown, never ok.
func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parseFlags("simulate", args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		var ve *spec.ValidationError
		if errors.As(err, &ve) {
			fmt.Fprintf(stderr, "bkcheck simulate: %v\n", err)
		}
		return exitUsage
	}
	invNames := splitList(f.invariants)
	m, err := check.NewModel(f.params, invNames)
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck simulate: %v\n", err)
		return exitUsage
	}
	opt := explorer.SimOptions{Seed: f.seed, Depth: f.depth, Walks: f.traces, Duration: f.duration, Workers: f.workers, CheckDeadlock: f.checkDeadlock}
	pick := "uniform"
	if f.lossRate > 0 {
		opt.Weight = check.LossBias(f.lossRate)
		pick = fmt.Sprintf("loss rate %g", f.lossRate)
	}
	out := newReporter(stdout, stderr, f.json)
	if f.json {
		out.enc.Encode(map[string]any{"type": "start", "mode": "simulate", "params": toJSONParams(f.params), "invariants": invNames,
			"seed": f.seed, "depth": f.depth, "traces": f.traces, "duration_s": f.duration.Seconds(), "workers": f.workers, "loss_rate": f.lossRate})
	} else {
		fmt.Fprintf(stdout, "bkcheck: simulating %s\n  invariants: %s; seed %d, depth %d, steps %s, workers %d\n", f.params, strings.Join(invNames, ", "), f.seed, f.depth, pick, f.workers)
	}
	res, err := explorer.Simulate(ctx, m, opt)
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck simulate: %v\n", err)
		return exitError
	}
	var tr *traces.Trace
	if res.Violation != nil {
		if tr, err = m.DecodeTrace(res.Violation); err != nil {
			fmt.Fprintf(stderr, "bkcheck simulate: %v\n", err)
			return exitError
		}
	}
	traceFile := ""
	if tr != nil {
		if traceFile, err = writeTrace(f, tr); err != nil {
			fmt.Fprintf(stderr, "bkcheck simulate: writing the trace: %v\n", err)
			return exitError
		}
	}
	rate := float64(res.States) / res.Elapsed.Seconds()
	if f.json {
		r := map[string]any{"type": "result", "status": res.Status.String(), "walks": res.Walks, "states": res.States,
			"distinct": res.Distinct, "mean_length": res.MeanLength, "elapsed_s": res.Elapsed.Seconds(), "states_per_s": rate, "violation": nil}
		if tr != nil {
			r["violation"] = map[string]any{"invariant": tr.Invariant, "length": len(tr.Steps), "walk_seed": res.WalkSeed,
				"rerun": fmt.Sprintf("bkcheck simulate --seed %d --traces 1 --depth %d%s", res.WalkSeed, f.depth, lossFlag(f.lossRate)), "trace_file": traceFile}
		}
		out.enc.Encode(r)
	} else {
		if tr != nil {
			fmt.Fprintf(stdout, "Error: Invariant %s is violated in walk seed %d (rerun it alone: --seed %d --traces 1%s).\n", tr.Invariant, res.WalkSeed, res.WalkSeed, lossFlag(f.lossRate))
			traces.RenderText(stdout, tr)
			fmt.Fprintln(stdout)
			if traceFile != "" {
				fmt.Fprintf(stdout, "Trace written to %s.\n", traceFile)
			}
		} else {
			fmt.Fprintln(stdout, "No violation found; simulation proves nothing: the verdict is unknown.")
		}
		fmt.Fprintf(stdout, "%d walks, %d states visited (%d distinct), mean walk length %.1f, %s (%.0f states/s).\n",
			res.Walks, res.States, res.Distinct, res.MeanLength, res.Elapsed.Round(time.Millisecond), rate)
	}
	switch {
	case tr != nil && tr.Deadlock:
		return exitDeadlock
	case tr != nil && tr.Terminal:
		return exitTerminal
	case tr != nil:
		return exitViolation
	case ctx.Err() != nil:
		return exitInterrupted
	}
	return exitUnknown
}

// lossFlag is the --loss-rate part of a command that reruns a walk: a walk
// is reproduced by its seed and the way steps were picked.
func lossFlag(rate float64) string {
	if rate == 0 {
		return ""
	}
	return fmt.Sprintf(" --loss-rate %g", rate)
}
