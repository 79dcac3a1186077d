package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/bkcheck/bkcheck/internal/atomicfile"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/sweep"
)

// sweepSettings are the switches of bkcheck sweep.
type sweepSettings struct {
	Out    string `name:"out" unit:"DIR" help:"directory for results.md, results.csv, results.json and the traces, created if missing"`
	Shard  string `name:"shard" unit:"i/N" help:"run only slice i of N (1-based); not given: from a Slurm job array (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT), or from JOB_COMPLETION_INDEX with --shards"`
	Shards int    `name:"shards" unit:"N" help:"number of slices, the index from JOB_COMPLETION_INDEX (Kubernetes Indexed Job)"`
	Jobs   int    `name:"jobs" unit:"J" help:"points checked at once, each with cores/J workers (not given: one per core)"`
}

var sweepSchema = schema.MustOf(sweepSettings{})

const defaultSweepOut = "sweep-results"

func sweepFlags() []section {
	return []section{{"Sweep", schema.Target{S: sweepSchema, V: &sweepSettings{Out: defaultSweepOut}}}}
}

// runSweep is `bkcheck sweep FILE.toml`: exit 0 when every point has a
// verdict, exitSweepIncomplete when some have none.
func runSweep(ctx context.Context, inv *invocation) int {
	cl, stdout, stderr := inv.cl, inv.stdout, inv.stderr
	s := settingsOf[sweepSettings](cl)
	if len(cl.args) != 1 {
		cl.probs.Add("", "give one sweep file (got %d arguments)", len(cl.args))
	}
	cl.positive("jobs", s.Jobs)
	if s.Shards == 0 {
		cl.positive("shards", s.Shards) // a negative count ResolveShard reports
	}
	opt := sweep.Options{Out: s.Out, Jobs: s.Jobs}
	if opt.Jobs == 0 {
		opt.Jobs = runtime.GOMAXPROCS(0)
	}
	shard, err := sweep.ResolveShard(s.Shard, s.Shards)
	if err != nil {
		name := "shards"
		if s.Shard != "" {
			name = "shard"
		}
		cl.probs.Add(name, "%v", err)
	}
	opt.Shard = shard
	var f *sweep.File
	if len(cl.args) == 1 {
		if f, err = sweep.Load(cl.args[0]); err != nil {
			cl.probs.Merge(err) // each problem names the file
		}
	}
	if err := atomicfile.CheckDirWritable(opt.Out); err != nil {
		cl.probs.Add("out", "%v", err)
	}
	if held := sweepResults(opt.Out); len(held) > 0 {
		cl.probs.Add("out", "%s holds the results of a sweep (%s): give an empty or new directory, or remove them (a sweep never overwrites results)", opt.Out, strings.Join(held, ", "))
	}
	if code := cl.report(stderr); code != exitOK {
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
	sweepNotes(stderr, res)
	if ctx.Err() != nil {
		var stopped []int
		for _, p := range res.Points {
			if p.Reason == sweep.Interrupted {
				stopped = append(stopped, p.Index)
			}
		}
		fmt.Fprintf(stdout, "interrupted: %d of %d points finished (shard %s), %d stopped by the interrupt and unknown (points %s): results in %s/results.{md,csv,json}\n",
			len(res.Points)-len(stopped), res.Total, res.Shard, len(stopped), indexList(stopped), opt.Out)
		return exitInterrupted
	}
	fmt.Fprintf(stdout, "%d of %d points (shard %s): results in %s/results.{md,csv,json}\n", len(res.Points), res.Total, res.Shard, opt.Out)
	return sweepIncomplete(stderr, "bkcheck sweep", res)
}

// sweepResults lists the files of a sweep's results in dir: its tables
// and its points' traces.
func sweepResults(dir string) []string {
	var held []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, "results.") || strings.HasPrefix(n, "point-") && strings.HasSuffix(n, ".itf.json") {
			held = append(held, n)
		}
	}
	return held
}

// exitSweepIncomplete is bkcheck sweep's (and sweep merge's) exit code
// when every point ran but some have no verdict: unknown (a bound such as
// max-states stopped its search) or error (the run or the model failed).
// The table is written all the same; a CI job tells it from a complete
// sweep (0) by this code.
const exitSweepIncomplete = exitUnknown

// sweepIncomplete says which points of res have no verdict and returns
// exitSweepIncomplete, or exitOK when every point has one (ok, violation,
// or skipped as an invalid parameter set).
func sweepIncomplete(stderr io.Writer, cmd string, res *sweep.Result) int {
	var unknown, failed []int
	for _, p := range res.Points {
		switch p.Status {
		case "unknown":
			unknown = append(unknown, p.Index)
		case "error":
			failed = append(failed, p.Index)
		}
	}
	if len(unknown) == 0 && len(failed) == 0 {
		return exitOK
	}
	var what []string
	if len(unknown) > 0 {
		what = append(what, fmt.Sprintf("%d unknown (points %s: a bound such as max-states stopped the search; results.md gives each reason)", len(unknown), indexList(unknown)))
	}
	if len(failed) > 0 {
		what = append(what, fmt.Sprintf("%d failed (points %s: results.md gives each reason)", len(failed), indexList(failed)))
	}
	fmt.Fprintf(stderr, "%s: incomplete: of %d points, %s; exit %d\n", cmd, len(res.Points), strings.Join(what, " and "), exitSweepIncomplete)
	return exitSweepIncomplete
}

// sweepNotes says, once each, the notes of the points (settings kept
// that change nothing there, as bkcheck check says of its flags), with the
// points they concern.
func sweepNotes(stderr io.Writer, res *sweep.Result) {
	var order []string
	points := map[string][]int{}
	for _, p := range res.Points {
		for _, n := range p.Notes {
			if points[n] == nil {
				order = append(order, n)
			}
			points[n] = append(points[n], p.Index)
		}
	}
	for _, n := range order {
		which := "points "
		if len(points[n]) == 1 {
			which = "point "
		}
		fmt.Fprintf(stderr, "bkcheck sweep: note: %s%s: %s\n", which, indexList(points[n]), n)
	}
}

// sweepMergeSettings are the switches of bkcheck sweep merge.
type sweepMergeSettings struct {
	Out string `name:"out" unit:"DIR" help:"directory for the merged results, created if missing"`
}

var sweepMergeSchema = schema.MustOf(sweepMergeSettings{})

func sweepMergeFlags() []section {
	return []section{{"Merge", schema.Target{S: sweepMergeSchema, V: &sweepMergeSettings{Out: defaultSweepOut}}}}
}

// runSweepMerge joins the results of several slices into one table. A
// point that no slice holds makes it fail (exit 1) after writing what it
// has, so that a lost shard does not go unnoticed; a point without a
// verdict makes it exit exitSweepIncomplete, as bkcheck sweep does.
func runSweepMerge(_ context.Context, inv *invocation) int {
	cl, stdout, stderr := inv.cl, inv.stdout, inv.stderr
	dir := settingsOf[sweepMergeSettings](cl).Out
	if len(cl.args) == 0 {
		cl.probs.Add("", "give the directories of the slices to merge")
	}
	if code := cl.report(stderr); code != exitOK {
		return code
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
	return sweepIncomplete(stderr, "bkcheck sweep merge", merged)
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
