package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/internal/atomicfile"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/state"
	"github.com/bkcheck/bkcheck/traces"
)

// checkOnly are settings of bkcheck check alone.
type checkOnly struct {
	Resume      string `name:"resume" unit:"DIR" help:"continue the interrupted run in DIR with exactly the counts of an uninterrupted one; the model comes from DIR"`
	CPUProfile  string `name:"cpuprofile" unit:"FILE" help:"write a pprof CPU profile of the search"`
	LocalShards int    `name:"local-shards" unit:"N" help:"run the search as N shard processes on this machine sharing --dir, as --shard i/N would across machines (for trying out sharding); --memory and --workers are divided among them"`
}

var checkOnlySchema = schema.MustOf(checkOnly{})

// checkFlags are the settings of bkcheck check, with their defaults.
func checkFlags() []section {
	cfg, out := check.DefaultConfig(), defaultOutput()
	return []section{
		{"Model, search and store", schema.Target{S: check.ConfigSchema, V: &cfg}},
		{"Output", schema.Target{S: outputSchema, V: &out}},
		{"Check", schema.Target{S: checkOnlySchema, V: &checkOnly{}}},
		fileSection(),
	}
}

// checkCommand is bkcheck check's resolved command line.
type checkCommand struct {
	cfg  *check.Config
	out  *outputSettings
	only *checkOnly
	cl   *commandLine
}

// parseCheck parses and resolves the arguments of bkcheck check.
func parseCheck(args []string) *checkCommand { return resolveCheck(lookupCommand("check").parse(args)) }

// resolveCheck completes a parsed command line of bkcheck check: the
// parameter-set file, the resumed run, the defaults, and every problem.
func resolveCheck(cl *commandLine) *checkCommand {
	c := &checkCommand{cfg: settingsOf[check.Config](cl), out: settingsOf[outputSettings](cl), only: settingsOf[checkOnly](cl), cl: cl}
	c.cl.applyFile()
	if len(c.cl.args) > 0 {
		c.cl.probs.Add("", "unexpected arguments: %v", c.cl.args)
	}
	if c.only.Resume != "" {
		c.adoptRun()
	}
	cfg := schema.Target{S: check.ConfigSchema, V: c.cfg}
	c.cfg.EnsureDefaults()
	c.cl.noDefaultsOverride(cfg)
	c.cl.validate(c.cfg.Validate())
	if c.out.Progress <= 0 {
		c.cl.probs.Add("progress", "must be positive (got %v)", c.out.Progress)
	}
	c.cl.explicitZeros(c.cfg, c.out.TraceOut)
	c.out.TraceOut = c.tracePath()
	dirSt, dirErr := os.Stat(c.cfg.Dir)
	badDir := c.cfg.Dir != "" && dirErr == nil && !dirSt.IsDir()
	if badDir {
		c.cl.probs.Add("dir", "%s is a file, not a directory (give a directory for the run, new or one to continue)", c.cfg.Dir)
	} else if c.cfg.Dir != "" && !c.checkDir() {
		badDir = true
	}
	// The run directory (where the trace goes by default) is created by
	// the run itself; a trace in a --dir that is a file, or that cannot be
	// created, is reported as that.
	inDir := c.cfg.Dir != "" && filepath.Dir(c.out.TraceOut) == filepath.Clean(c.cfg.Dir)
	if c.out.TraceOut != "" && !(inDir && (os.IsNotExist(dirErr) || badDir)) {
		if err := atomicfile.CheckWritable(c.out.TraceOut); err != nil {
			c.cl.probs.Add("trace-out", "%v", err)
		}
	}
	if c.only.CPUProfile != "" {
		if err := atomicfile.CheckWritable(c.only.CPUProfile); err != nil {
			c.cl.probs.Add("cpuprofile", "%v", err)
		}
	}
	return c
}

// checkDir reports, before anything is printed or written, a --dir the
// run could not use: one it cannot create or write in, and one that holds
// a run when a fresh search of one process is asked for (a resumed run
// continues it; the shards of a sharded search share it, and a restarted
// shard continues its part). It reports whether the directory is usable
// at all (false: it cannot be created or written in).
func (c *checkCommand) checkDir() bool {
	if err := atomicfile.CheckDirWritable(c.cfg.Dir); err != nil {
		c.cl.probs.Add("dir", "%v (give a directory bkcheck can create or write in)", err)
		return false
	}
	if c.cfg.Resume || c.only.LocalShards > 1 {
		return true
	}
	if _, n, err := c.cfg.Sharding.Resolve(); err != nil || n > 1 {
		if err == nil && check.HoldsSingleRun(c.cfg.Dir) {
			c.cl.probs.Add("dir", "%s holds the run of one process, not a sharded search; continue it with --resume %s (without --shard), or choose another --dir", c.cfg.Dir, c.cfg.Dir)
		}
		return true
	}
	if check.HoldsRun(c.cfg.Dir) {
		c.cl.probs.Add("dir", "%s already holds a run; continue it with --resume %s or choose another --dir", c.cfg.Dir, c.cfg.Dir)
	}
	return true
}

// shardsIn counts the shard directories of a sharded run in dir
// (explorer.ShardDir); 0 for a run of one process.
func shardsIn(dir string) int {
	n := 0
	for {
		if st, err := os.Stat(explorer.ShardDir(dir, n)); err != nil || !st.IsDir() {
			return n
		}
		n++
	}
}

// adoptRun takes the model of the run being resumed. Model settings given
// on the command line (or in a file) must agree with it; every
// disagreement is reported, naming the setting as the user gave it.
func (c *checkCommand) adoptRun() {
	dir := c.only.Resume
	rec, err := check.ReadRunDir(dir)
	if err != nil {
		c.cl.probs.Add("resume", "%v", err)
		return
	}
	if n := shardsIn(dir); n > 0 {
		c.cl.probs.Add("resume", "%s holds a search sharded %d ways, which continues from its shards' directories, not from --resume: run the command that started it again (%s, or --shard i/%d with the same settings on each machine)",
			dir, n, "bkcheck check "+rec.Model.Flags()+" --dir "+shellJoin([]string{dir})+" --local-shards "+strconv.Itoa(n), n)
		return
	}
	given := c.cfg.ModelConfig
	given.EnsureDefaults()
	for _, f := range check.ModelSchema.Fields() {
		if _, ok := c.cl.given[f.Name]; !ok {
			continue
		}
		g, s := check.ModelSchema.Get(&given, f.Name), check.ModelSchema.Get(&rec.Model, f.Name)
		if g != s {
			c.cl.probs.Add(f.Name, "%s differs from the run's %s (a resumed run takes its model from %s; leave the setting out)", g, s, dir)
		}
	}
	if _, ok := c.cl.given["dir"]; ok && c.cfg.Dir != dir {
		c.cl.probs.Add("dir", "names another directory than --resume")
	}
	if _, ok := c.cl.given["store"]; ok && c.cfg.Store != check.StoreBadger {
		c.cl.probs.Add("store", "resuming needs --store badger")
	}
	c.cfg.AdoptRun(dir, rec)
}

// tracePath resolves --trace-out: "" for none; the run directory's
// bkcheck-trace.itf.json; else a name in the current directory that does
// not overwrite an earlier trace.
func (c *checkCommand) tracePath() string {
	return resolveTracePath(c.out.TraceOut, c.cfg.Dir)
}

func resolveTracePath(given, dir string) string {
	switch {
	case given == "none":
		return ""
	case given != "":
		return given
	case dir != "":
		return filepath.Join(dir, "bkcheck-trace.itf.json")
	}
	path := "bkcheck-trace.itf.json"
	for n := 2; ; n++ {
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			return path
		}
		path = "bkcheck-trace-" + strconv.Itoa(n) + ".itf.json"
	}
}

func runCheck(ctx context.Context, inv *invocation) int {
	c := resolveCheck(inv.cl)
	stdout, stderr := inv.stdout, inv.stderr
	c.checkLocalShards()
	if c.out.JSON {
		c.cl.jsonOut = stdout
	}
	if os.Getenv(continueEnv) != "" {
		c.cl.notes = nil // a shard of --local-shards: its coordinator said them
	}
	if code := c.cl.report(stderr); code != exitOK {
		return code
	}
	if c.only.LocalShards > 1 {
		return runLocalShards(ctx, c, inv.args, stdout, stderr)
	}
	if c.cfg.Memory > 0 {
		debug.SetMemoryLimit(int64(c.cfg.Memory))
	}
	out := newReporter(stdout, stderr, c.out.JSON)
	out.coverage = c.out.Coverage
	prog := newProgress(out, c.out.Progress, c.cfg.Symmetry)
	c.cfg.Progress, c.cfg.ProgressEvery = prog.report, prog.every()
	c.cfg.Waiting = func(depth int, missing []int, waited time.Duration) {
		_, n, _ := c.cfg.Sharding.Resolve()
		who := make([]string, len(missing))
		for i, s := range missing {
			who[i] = fmt.Sprintf("%d/%d", s+1, n)
		}
		bound := "no --shard-timeout: waiting for ever"
		if c.cfg.ShardTimeout > 0 {
			bound = fmt.Sprintf("this shard gives up once one has shown no sign of life for --shard-timeout %v", c.cfg.ShardTimeout)
		}
		fmt.Fprintf(stderr, "bkcheck check: waiting for shard %s at level %d for %s: is it running? (a shard that died continues when restarted with its command; %s)\n",
			strings.Join(who, ", "), depth, waited.Round(time.Second), bound)
	}
	if c.only.CPUProfile != "" {
		pf, err := atomicfile.Create(c.only.CPUProfile)
		if err != nil {
			fmt.Fprintf(stderr, "bkcheck check: %v\n", err)
			return exitError
		}
		defer pf.Commit()
		if err := pprof.StartCPUProfile(pf); err != nil {
			fmt.Fprintf(stderr, "bkcheck check: %v\n", err)
			return exitError
		}
		defer pprof.StopCPUProfile()
	}
	out.checkStart(*c.cfg)
	rep, err := check.Run(ctx, *c.cfg)
	prog.done()
	if te := (*explorer.ShardTimeoutError)(nil); errors.As(err, &te) {
		if notShared(c.cfg, te) {
			fmt.Fprintf(stderr, "bkcheck check: --dir %s is not shared by the tasks of this Slurm step: none of the other %d tasks, which srun started with this one, has written to %s in --shard-timeout %v (%v). Each task sees a directory of its own: give a --dir on a file system every node mounts (docs/distributed.md); if the other tasks failed to start instead, srun's output says why\n",
				c.cfg.Dir, te.Shards-1, filepath.Join(c.cfg.Dir, "sync"), te.Timeout, te)
			return exitUsage
		}
		fmt.Fprintf(stderr, "bkcheck check: %v (--shard-timeout); this shard stops. Nothing is lost: the run in %s continues when every shard is started again with its command (this one's: %s)\n",
			te, c.cfg.Dir, continueCommand())
		return exitShardAbsent
	}
	if err != nil && rep == nil {
		fmt.Fprintf(stderr, "bkcheck check: %v\n", err)
		if probs, ok := schema.AsProblems(err); ok || errors.Is(err, explorer.ErrResumeMismatch) || errors.Is(err, explorer.ErrRunExists) || errors.Is(err, state.ErrInUse) {
			if c.out.JSON {
				if !ok {
					probs = schema.Problems{{Msg: err.Error()}}
				}
				writeUsageJSON(stdout, err.Error(), probs, func(field string) string { return "--" + field })
			}
			return exitUsage
		}
		return exitError
	}
	out.dir = c.cfg.Dir
	if _, shards, _ := c.cfg.Sharding.Resolve(); shards > 1 {
		out.continueCmd = continueCommand()
	}
	return finishCheck(out, rep, err, c.out.TraceOut, ctx.Err() != nil)
}

// notShared reports whether a shard timed out because --dir is not
// shared: it is a task of a Slurm step (srun starts every task of a step
// at once, and the index came from SLURM_PROCID) and no other shard ever
// wrote to the directory. Another scheduler gives no such guarantee (the
// pods of a Kubernetes Job may wait for a node): there, silence is a
// shard not started yet, not a wrong directory.
func notShared(cfg *check.Config, te *explorer.ShardTimeoutError) bool {
	_, step := os.LookupEnv("SLURM_STEP_ID")
	_, proc := os.LookupEnv("SLURM_PROCID")
	_, job := os.LookupEnv("JOB_COMPLETION_INDEX")
	return step && proc && !job && cfg.Shards > 0 && te.Shards > 1 && len(te.Silent) == te.Shards-1
}

// finishCheck writes the counterexample (if any) to tracePath and reports
// the result. A counterexample already found is never lost: the verdict and
// the trace are printed whatever happens to the file, whose write error (or
// the store's closing error, runErr) is reported after them. The exit code
// is the verdict's, or 1 if the run was ok but something failed.
func finishCheck(out *reporter, rep *check.Report, runErr error, tracePath string, interrupted bool) int {
	var writeErr error
	if rep.Trace != nil && tracePath != "" {
		if writeErr = traces.WriteITFFile(tracePath, rep.Trace); writeErr == nil {
			out.traceFile = tracePath
		}
	}
	writeErr = errors.Join(writeErr, out.writeWitnesses(rep, tracePath))
	out.checkResult(rep, interrupted)
	for _, e := range []error{writeErr, runErr} {
		if e != nil {
			fmt.Fprintf(out.stderr, "bkcheck check: %v\n", e)
		}
	}
	code := checkExitCode(rep, interrupted)
	if code == exitOK && (writeErr != nil || runErr != nil) {
		return exitError
	}
	return code
}

// checkExitCode maps a verdict to the exit code.
func checkExitCode(rep *check.Report, interrupted bool) int {
	switch {
	case rep.Status == explorer.OK:
		return exitOK
	case rep.Status == explorer.Error:
		return errorExitCode(rep.ModelError())
	case rep.Status == explorer.Violation && rep.Violation.Deadlock:
		return exitDeadlock
	case rep.Status == explorer.Violation && (rep.Violation.Terminal || rep.Trace != nil && rep.Trace.Kind == "eventually"):
		// A terminal-state property, or an eventually property (ending
		// without it, or a cycle that never satisfies it): TLC's liveness.
		return exitTerminal
	case rep.Status == explorer.Violation:
		return exitViolation
	case interrupted:
		return exitInterrupted
	default:
		return exitUnknown
	}
}
