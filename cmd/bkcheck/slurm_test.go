package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bkcheck/bkcheck/internal/testtier"
)

// slurmPort is the controller's port of the tests' cluster (slurmd takes
// the next): not the script's default, so that a cluster a developer
// keeps up with scripts/slurm-local.sh is not disturbed.
const slurmPort = "16917"

// slurmCluster is a one-host Slurm cluster of scripts/slurm-local.sh,
// started for one test and stopped at its end.
type slurmCluster struct {
	dir string   // the script's state directory
	env []string // the environment of Slurm's client commands
}

// startSlurm starts a cluster (installing Slurm and munge if missing) and
// registers its stop, which runs on every exit path of the test: it
// cancels the jobs, stops the daemons, and fails the test if any daemon
// outlives it.
func startSlurm(t *testing.T) *slurmCluster {
	t.Helper()
	testtier.Slurm(t)
	if runtime.GOOS != "linux" {
		t.Skip("scripts/slurm-local.sh sets up Slurm on Debian")
	}
	script, err := filepath.Abs("../../scripts/slurm-local.sh")
	if err != nil {
		t.Fatal(err)
	}
	c := &slurmCluster{dir: filepath.Join(t.TempDir(), "slurm")}
	env := append(os.Environ(), "BKCHECK_SLURM_DIR="+c.dir, "BKCHECK_SLURM_PORT="+slurmPort)
	c.env = append(env, "SLURM_CONF="+filepath.Join(c.dir, "slurm.conf"))
	sh := func(arg string) (string, error) {
		cmd := exec.Command(script, arg)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() {
		var pids []string
		for _, d := range []string{"slurmd", "slurmctld", "munged"} {
			if b, err := os.ReadFile(filepath.Join(c.dir, d+".pid")); err == nil {
				pids = append(pids, d+":"+strings.TrimSpace(string(b)))
			}
		}
		if out, err := sh("down"); err != nil {
			t.Errorf("slurm-local.sh down: %v\n%s", err, out)
		}
		for _, p := range pids {
			name, pid, _ := strings.Cut(p, ":")
			if st, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
				t.Errorf("%s (pid %s) outlived slurm-local.sh down", name, pid)
			}
		}
	})
	if out, err := sh("up"); err != nil {
		t.Fatalf("slurm-local.sh up: %v\n%s", err, out)
	}
	return c
}

// run runs a Slurm client command and returns its output.
func (c *slurmCluster) run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// slurmJob is one batch job: its script's srun starts the tasks, each
// writing its stdout and stderr to out/task-R-T.{out,err} (R: the job's
// restart count, T: the task).
type slurmJob struct {
	id  string
	out string
}

// submit writes a batch script (body, if given, else one whose srun runs
// shell command cmd in n tasks (--overcommit: more tasks than the node's CPUs share them;
// --kill-on-bad-exit: a task that dies ends the step, as a lost node
// does)) and submits it with n tasks; with wait, it waits for the job to end and
// returns the job's exit code (srun's: the highest of its tasks'). It
// polls scontrol itself: sbatch --wait polls at intervals growing to
// ten seconds, which would be most of a small job's time.
func (c *slurmCluster) submit(t *testing.T, n int, cmd string, wait bool, body ...string) (*slurmJob, int) {
	t.Helper()
	dir := t.TempDir()
	j := &slurmJob{out: dir}
	script := filepath.Join(dir, "job.sh")
	if body == nil {
		task := filepath.Join(dir, "task-${SLURM_RESTART_COUNT:-0}-%t")
		// Each task records its exit code (task-R-T.code) and exits with it.
		wrapped := cmd + `; rc=$?; echo $rc > ` + shellJoin([]string{dir}) + `/task-${SLURM_RESTART_COUNT:-0}-$SLURM_PROCID.code; exit $rc`
		body = []string{fmt.Sprintf("#!/bin/bash\nexec srun --kill-on-bad-exit=1 --output=%s.out --error=%s.err bash -c %s\n", task, task, shellJoin([]string{wrapped}))}
	}
	if err := os.WriteFile(script, []byte(body[0]), 0o755); err != nil {
		t.Fatal(err)
	}
	out := c.run(t, "sbatch", "--parsable", "-n", strconv.Itoa(n), "--overcommit", "--requeue", "-o", filepath.Join(dir, "job-%j.out"), script)
	j.id, _, _ = strings.Cut(out, ";")
	if !wait {
		return j, 0
	}
	c.waitEnded(t, j.id)
	_, code, _ := strings.Cut(c.run(t, "scontrol", "show", "job", "-o", j.id), " ExitCode=")
	code, _, _ = strings.Cut(code, ":")
	n, err := strconv.Atoi(code)
	if err != nil {
		t.Fatalf("job %s: exit code %q", j.id, code)
	}
	return j, n
}

// code is task i's exit code in the job's attempt restart (-1: none
// recorded, the task did not end by itself).
func (j *slurmJob) code(restart, i int) int {
	b, err := os.ReadFile(filepath.Join(j.out, fmt.Sprintf("task-%d-%d.code", restart, i)))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// task returns task i's stdout and stderr of the job's attempt restart.
func (j *slurmJob) task(t *testing.T, restart, i int) (stdout, stderr string) {
	t.Helper()
	o, _ := os.ReadFile(filepath.Join(j.out, fmt.Sprintf("task-%d-%d.out", restart, i)))
	e, _ := os.ReadFile(filepath.Join(j.out, fmt.Sprintf("task-%d-%d.err", restart, i)))
	return string(o), string(e)
}

// state is the job's state in scontrol (RUNNING, COMPLETED, FAILED, ...).
func (c *slurmCluster) state(t *testing.T, id string) string {
	t.Helper()
	_, st, _ := strings.Cut(c.run(t, "scontrol", "show", "job", "-o", id), "JobState=")
	st, _, _ = strings.Cut(st, " ")
	return st
}

// waitEnded polls the job until it has ended and returns its state.
func (c *slurmCluster) waitEnded(t *testing.T, id string) string {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		switch st := c.state(t, id); st {
		case "PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "REQUEUED":
		default:
			return st
		}
	}
	t.Fatalf("job %s has not ended within 3 minutes", id)
	return ""
}

// searchCmd is bkcheck check as every task of a sharded search runs it.
func searchCmd(bin, dir string, model []string, extra ...string) string {
	args := append([]string{bin, "check", "--json", "--trace-out", "none", "--dir", dir, "--shards", "$SLURM_NTASKS", "--workers", "1", "--memory", "256MiB", "--progress", "1h"}, model...)
	return strings.Replace(shellJoin(append(args, extra...)), "'$SLURM_NTASKS'", `"$SLURM_NTASKS"`, 1)
}

// TestSlurm runs sharded searches as the tasks of real Slurm jobs on a
// one-host cluster: with 1, 2 and 4 tasks (4 on 2 cores: --overcommit),
// with and without a violation, every task reports exactly the one
// process's verdict, figures and counterexample; a task killed with
// SIGKILL fails the job, which, requeued, continues the search to the same
// result; docs/distributed.md's batch script, a task killed, runs the
// step again and ends with that result; and bad input (a --dir not shared by the tasks, SLURM_NTASKS
// other than --shards, a task with other model settings, a second run in
// the directory) is refused with exit 2 naming the problem, leaving the
// run intact.
func TestSlurm(t *testing.T) {
	c := startSlurm(t)
	bin := buildBinary(t)
	okModel := []string{"--bookies", "2", "-w", "2", "-a", "1"}
	badModel := []string{"--model", "v4.13", "--bookies", "2", "-w", "2", "-a", "2"}
	want := map[string]map[string]any{}
	for name, model := range map[string][]string{"ok": okModel, "violation": badModel} {
		out, _ := exec.Command(bin, append([]string{"check", "--json", "--trace-out", "none"}, model...)...).Output()
		want[name] = resultOf(t, out)
	}
	if want["ok"]["status"] != "ok" || want["violation"]["status"] != "violation" {
		t.Fatalf("the one-process baselines: %v, %v", want["ok"]["status"], want["violation"]["status"])
	}
	base := t.TempDir()

	// The same result for 1, 2 and 4 tasks.
	for _, m := range []struct {
		name  string
		model []string
		code  int
	}{{"ok", okModel, exitOK}, {"violation", badModel, exitViolation}} {
		for _, n := range []int{1, 2, 4} {
			run := filepath.Join(base, fmt.Sprintf("%s-%d", m.name, n))
			start := time.Now()
			j, code := c.submit(t, n, searchCmd(bin, run, m.model), true)
			if code != m.code {
				o, e := j.task(t, 0, 0)
				t.Fatalf("%s, %d tasks: job exit %d, want %d\n%s%s", m.name, n, code, m.code, o, e)
			}
			for i := range n {
				o, _ := j.task(t, 0, i)
				sameFigures(t, fmt.Sprintf("%s, task %d of %d", m.name, i, n), lastJSON(t, o), want[m.name])
			}
			t.Logf("%s, %d tasks: %v", m.name, n, time.Since(start).Round(time.Millisecond))
		}
	}

	// One task killed: the step ends, the job fails; requeued, it
	// continues the search.
	run := filepath.Join(base, "killed")
	j, _ := c.submit(t, 4, searchCmd(bin, run, okModel), false)
	waitForCheckpoint(t, filepath.Join(run, "shard-002"), 8)
	killTask(t, run, 2)
	if st := c.waitEnded(t, j.id); st != "FAILED" {
		t.Fatalf("job %s with a task killed: %s, want FAILED", j.id, st)
	}
	c.run(t, "scontrol", "requeue", j.id)
	// A requeued job is eligible only after two minutes (Slurm's own
	// delay); the test does not wait for it.
	c.run(t, "scontrol", "update", "JobId="+j.id, "StartTime=now")
	if st := c.waitEnded(t, j.id); st != "COMPLETED" {
		o, e := j.task(t, 1, 0)
		t.Fatalf("job %s requeued: %s, want COMPLETED\n%s%s", j.id, st, o, e)
	}
	for i := range 4 {
		o, _ := j.task(t, 1, i)
		sameFigures(t, fmt.Sprintf("requeued, task %d of 4", i), lastJSON(t, o), want["ok"])
	}

	// docs/distributed.md's batch script, on this cluster: a task killed,
	// its loop runs the step again in the same allocation, and the
	// search ends with the one process's result.
	run = filepath.Join(base, "docs-script")
	script := docsSlurmScript(t, bin, run, okModel)
	j, _ = c.submit(t, 4, "", false, script)
	waitForCheckpoint(t, filepath.Join(run, "shard-001"), 8)
	killTask(t, run, 1)
	if st := c.waitEnded(t, j.id); st != "COMPLETED" {
		b, _ := os.ReadFile(filepath.Join(j.out, "job-"+j.id+".out"))
		t.Fatalf("docs/distributed.md's script with a task killed: %s, want COMPLETED\n%s", st, b)
	}
	first, _ := os.ReadFile(filepath.Join(run, "out-"+j.id+"-0-1.jsonl"))
	second, _ := os.ReadFile(filepath.Join(run, "out-"+j.id+"-0-2.jsonl"))
	if !strings.Contains(string(first), `"reason":"interrupted"`) {
		t.Errorf("the first step, a task killed: the others did not stop cleanly:\n%s", first)
	}
	if n := strings.Count(string(second), `"type":"result"`); n != 4 {
		t.Fatalf("the second step: %d results, want 4:\n%s", n, second)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(second)), "\n") {
		if strings.Contains(line, `"type":"result"`) {
			sameFigures(t, "docs/distributed.md's script, second step", lastJSON(t, line), want["ok"])
		}
	}

	// A --dir each task sees on its own (a node-local path): each task
	// finds no other in it, and says so.
	own := filepath.Join(base, "local") + "/run-$SLURM_PROCID"
	j, code := c.submit(t, 2, strings.Replace(searchCmd(bin, own, okModel, "--shard-timeout", "5s"), "'"+own+"'", `"`+own+`"`, 1), true)
	for i := range 2 {
		_, e := j.task(t, 0, i)
		if !strings.Contains(e, "is not shared by the tasks of this Slurm step: none of the other 1 tasks") {
			t.Errorf("a --dir not shared, task %d (job exit %d):\n%s", i, code, e)
		}
	}
	if code != exitUsage {
		t.Errorf("a --dir not shared: job exit %d, want %d", code, exitUsage)
	}

	// SLURM_NTASKS other than --shards.
	cmd := strings.Replace(searchCmd(bin, filepath.Join(base, "ntasks"), okModel), `"$SLURM_NTASKS"`, "3", 1)
	j, code = c.submit(t, 2, cmd, true)
	if _, e := j.task(t, 0, 0); code != exitUsage || !strings.Contains(e, "SLURM_NTASKS=2 but --shards 3") {
		t.Errorf("SLURM_NTASKS=2 with --shards 3: job exit %d\n%s", code, e)
	}
	if _, err := os.Stat(filepath.Join(base, "ntasks")); err == nil {
		t.Error("SLURM_NTASKS=2 with --shards 3: the run directory was created")
	}

	// A task with other model settings, on the finished 2-task search:
	// refused, and the search is intact.
	run = filepath.Join(base, "ok-2")
	before := snapshotRun(t, run)
	cmd = searchCmd(bin, run, okModel) + ` $([ "$SLURM_PROCID" = 1 ] && echo -a 2)`
	j, code = c.submit(t, 2, cmd, true)
	if _, e := j.task(t, 0, 1); j.code(0, 1) != exitUsage || !strings.Contains(e, "cannot resume") {
		t.Errorf("a task with -a 2: exit %d (job %d)\n%s", j.code(0, 1), code, e)
	}
	if after := snapshotRun(t, run); after != before {
		t.Errorf("a task with other settings changed the run:\nbefore %s\nafter  %s", before, after)
	}
	j, code = c.submit(t, 2, searchCmd(bin, run, okModel), true)
	if o, _ := j.task(t, 0, 0); code != exitOK || !strings.Contains(o, `"status":"ok"`) {
		t.Errorf("the finished search after the refused task: exit %d\n%s", code, o)
	} else {
		sameFigures(t, "after the refused task", lastJSON(t, o), want["ok"])
	}

	// Two runs in one directory: a job holds shard 1/2 (started by hand,
	// waiting at level 1 for shard 2/2); a second job on the directory is
	// refused for that shard, then the first is cancelled and the search,
	// started again, gives the one process's result.
	run = filepath.Join(base, "twice")
	holder, _ := c.submit(t, 1, shellJoin(append([]string{bin, "check", "--json", "--trace-out", "none", "--dir", run, "--shard", "1/2", "--workers", "1", "--memory", "256MiB", "--shard-timeout", "0"}, okModel...)), false)
	waitForCheckpoint(t, filepath.Join(run, "shard-000"), 1)
	j, code = c.submit(t, 2, searchCmd(bin, run, okModel), true)
	if _, e := j.task(t, 0, 0); j.code(0, 0) != exitUsage || !strings.Contains(e, "in use by another process") {
		t.Errorf("a second run in the directory: task 0 exit %d (job %d)\n%s", j.code(0, 0), code, e)
	}
	c.run(t, "scancel", holder.id)
	c.waitEnded(t, holder.id)
	j, code = c.submit(t, 2, searchCmd(bin, run, okModel), true)
	for i := range 2 {
		o, e := j.task(t, 0, i)
		if code != exitOK {
			t.Fatalf("the search after the second run was refused: exit %d\n%s%s", code, o, e)
		}
		sameFigures(t, fmt.Sprintf("after a second run, task %d", i), lastJSON(t, o), want["ok"])
	}
}

// snapshotRun lists the files of a run directory with their sizes and
// modification times, to show that a task refused for other settings
// (task 1) touched nothing: the shared files and its shard's. The other
// task, well configured, reopens its own shard's store to report the
// finished search (Badger writes on opening), so shard-000 is left out,
// as are the heartbeats.
func snapshotRun(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil // its time changes with the check that it is writable
		}
		if strings.HasPrefix(fi.Name(), "alive.") || fi.Name() == "shard-000" && fi.IsDir() {
			if fi.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fmt.Fprintf(&b, "%s %d %d; ", strings.TrimPrefix(p, dir), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// killTask kills the process of shard i of the search in run with
// SIGKILL, as the out-of-memory killer would; its pid is in its heartbeat.
func killTask(t *testing.T, run string, i int) {
	t.Helper()
	beat, err := os.ReadFile(filepath.Join(run, "sync", fmt.Sprintf("alive.%03d", i)))
	f := strings.Fields(string(beat))
	if err != nil || len(f) != 3 {
		t.Fatalf("the heartbeat of shard %d: %q, %v", i+1, beat, err)
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 of shard %d (pid %d): %v", i+1, pid, err)
	}
}

// docsSlurmScript is docs/distributed.md's Slurm batch script made to run
// here: without its #SBATCH lines (the test gives the tasks), with bin
// for bkcheck, run for the shared directory, the given model for the
// page's, one worker per task and a small memory budget. A change to the
// page's script that these substitutions no longer fit fails the test:
// the script on the page is the one the test runs.
func docsSlurmScript(t *testing.T, bin, run string, model []string) string {
	t.Helper()
	page, err := os.ReadFile("../../docs/distributed.md")
	if err != nil {
		t.Fatal(err)
	}
	_, script, ok := strings.Cut(string(page), "```bash\n#!/bin/bash\n#SBATCH")
	script, _, ok2 := strings.Cut(script, "```")
	if !ok || !ok2 {
		t.Fatal("docs/distributed.md has no Slurm batch script")
	}
	var lines []string
	for _, l := range strings.Split("#SBATCH"+script, "\n") {
		if !strings.HasPrefix(l, "#SBATCH") {
			lines = append(lines, l)
		}
	}
	script = "#!/bin/bash\n" + strings.Join(lines, "\n")
	for _, r := range [][2]string{
		{"RUN=/scratch/$USER/bkcheck-shipped", "RUN=" + shellJoin([]string{run})},
		{"bkcheck check --bookies 4 -w 3 -a 2 --symmetry bookies,clients", shellJoin([]string{bin}) + " check " + shellJoin(model)},
		{`--workers "$SLURM_CPUS_PER_TASK"`, "--workers 1"},
		{"--memory 100GiB", "--memory 256MiB"},
	} {
		if !strings.Contains(script, r[0]) {
			t.Fatalf("docs/distributed.md's Slurm script no longer has %q", r[0])
		}
		script = strings.Replace(script, r[0], r[1], 1)
	}
	return script
}
