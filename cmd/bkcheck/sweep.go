package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"

	"github.com/bkcheck/bkcheck/sweep"
)

const sweepUsage = "usage: bkcheck sweep FILE.toml [--out DIR] [--shard i/n | --shards n] [--jobs J]  |  bkcheck sweep merge DIR... [--out DIR]"

// runSweep is `bkcheck sweep FILE.toml` and `bkcheck sweep merge DIR...`.
func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "merge" {
		return runSweepMerge(args[1:], stdout, stderr)
	}
	cl := newCommandLine("bkcheck sweep")
	out := cl.addSwitch("out", "directory for results.md, results.csv, results.json and the traces (created if missing; default sweep-results)", false)
	shardText := cl.addSwitch("shard", "run only slice i of n (i/n, 1-based); default from JOB_COMPLETION_INDEX with --shards, or SLURM_ARRAY_TASK_ID", false)
	shards := cl.addSwitch("shards", "number of slices, for JOB_COMPLETION_INDEX", false)
	jobs := cl.addSwitch("jobs", "points checked at once, each with cores/jobs workers (default: one per core)", false)
	cl.parse(args)
	if cl.help {
		fmt.Fprintln(stdout, sweepUsage)
		cl.usage(stdout, "bkcheck sweep FILE.toml")
		return exitOK
	}
	if len(cl.args) != 1 {
		cl.probs.Add("", "give one sweep file (got %d arguments)", len(cl.args))
	}
	opt := sweep.Options{Out: "sweep-results", Jobs: runtime.GOMAXPROCS(0)}
	if out.isSet {
		opt.Out = out.value
	}
	if jobs.isSet {
		n, err := strconv.Atoi(jobs.value)
		if err != nil || n < 1 {
			cl.probs.Add("", "--jobs must be a positive integer (got %q)", jobs.value)
		}
		opt.Jobs = n
	}
	nShards := 0
	if shards.isSet {
		n, err := strconv.Atoi(shards.value)
		if err != nil || n < 1 {
			cl.probs.Add("", "--shards must be a positive integer (got %q)", shards.value)
		}
		nShards = n
	}
	if shardText.isSet {
		s, err := sweep.ParseShard(shardText.value)
		if err != nil {
			cl.probs.Add("", "--shard %v", err)
		}
		opt.Shard = s
	} else if s, ok := sweep.ShardFromEnv(nShards); ok {
		if s.I < 1 || s.I > s.N {
			cl.probs.Add("", "the scheduler's slice %s is out of range", s)
		}
		opt.Shard = s
	}
	var f *sweep.File
	if len(cl.args) == 1 {
		var err error
		if f, err = sweep.Load(cl.args[0]); err != nil {
			cl.probs.Add("", "%v", err)
		}
	}
	if code := cl.report(stderr); code != exitOK {
		fmt.Fprintln(stderr, sweepUsage)
		return code
	}
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		fmt.Fprintf(stderr, "bkcheck sweep: %v\n", err)
		return exitError
	}
	res := sweep.Run(ctx, f, opt)
	if err := sweep.Write(opt.Out, res); err != nil {
		fmt.Fprintf(stderr, "bkcheck sweep: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "%d of %d points (shard %s): results in %s/results.{md,csv,json}\n", len(res.Points), res.Total, res.Shard, opt.Out)
	if ctx.Err() != nil {
		return exitInterrupted
	}
	return exitOK
}

// runSweepMerge joins the results of several slices into one table. A
// point that no slice holds makes it fail (exit 1) after writing what it
// has, so that a lost shard does not go unnoticed.
func runSweepMerge(args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("bkcheck sweep merge")
	out := cl.addSwitch("out", "directory for the merged results (default sweep-results)", false)
	cl.parse(args)
	if cl.help || len(cl.args) == 0 {
		fmt.Fprintln(stderr, "usage: bkcheck sweep merge SHARD_DIR... [--out DIR]")
		if cl.help {
			return exitOK
		}
		return exitUsage
	}
	if code := cl.report(stderr); code != exitOK {
		return code
	}
	dir := "sweep-results"
	if out.isSet {
		dir = out.value
	}
	merged, missing, err := sweep.Merge(cl.args)
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck sweep merge: %v\n", err)
		return exitUsage
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "bkcheck sweep merge: %v\n", err)
		return exitError
	}
	if err := sweep.Write(dir, merged); err != nil {
		fmt.Fprintf(stderr, "bkcheck sweep merge: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "%d of %d points merged into %s\n", len(merged.Points), merged.Total, dir)
	if len(missing) > 0 {
		fmt.Fprintf(stderr, "bkcheck sweep merge: incomplete: %d of %d points are in no slice (points %s); run their slices and merge again\n", len(missing), merged.Total, indexList(missing))
		return exitError
	}
	return exitOK
}

// indexList renders point indices, at most 20 of them.
func indexList(ix []int) string {
	s := ""
	for i, x := range ix {
		if i == 20 {
			return s + fmt.Sprintf(", ... (%d more)", len(ix)-20)
		}
		if i > 0 {
			s += ", "
		}
		s += strconv.Itoa(x)
	}
	return s
}
