package main

import (
	"bytes"
	"encoding/json"
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

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/internal/testtier"
)

// sameFigures compares the verdict and figures of two --json results.
func sameFigures(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	for _, k := range []string{"status", "distinct", "generated", "depth", "queue"} {
		if got[k] != want[k] {
			t.Errorf("%s: %s %v, want %v", what, k, got[k], want[k])
		}
	}
	gv, _ := json.Marshal(got["violation"])
	wv, _ := json.Marshal(want["violation"])
	if !bytes.Equal(gv, wv) {
		t.Errorf("%s: counterexample differs:\n got %s\nwant %s", what, gv, wv)
	}
}

// TestLocalShards: --local-shards N gives the single process's result,
// with and without a violation; run again it reports the finished
// search; bad combinations are refused.
func TestLocalShards(t *testing.T) {
	t.Setenv(runAsBkcheck, "1") // the shards are this test binary (TestMain)
	models := [][]string{
		{"--bookies", "1", "-w", "1", "-a", "1"},
		{"--bookies", "2", "-w", "1", "-a", "1", "--invariants", "EntriesReachWriteQuorum"},
	}
	if testtier.IsLong() {
		models = append(models, []string{"--bookies", "2", "-w", "2", "-a", "2", "-e", "2", "--variant", "no-recovery-fence", "--max-depth", "9"})
	}
	for _, model := range models {
		_, want, _ := runArgs(t, append([]string{"check", "--json", "--trace-out", "none"}, model...)...)
		wantRes := lastJSON(t, want)
		dir := filepath.Join(t.TempDir(), "run")
		for run := range 2 {
			code, got, errOut := runArgs(t, append([]string{"check", "--json", "--local-shards", "3", "--dir", dir}, model...)...)
			if code != exitOK && code != exitViolation && code != exitUnknown {
				t.Fatalf("%v: exit %d: %s", model, code, errOut)
			}
			res := lastJSON(t, got)
			sameFigures(t, fmt.Sprint(model), res, wantRes)
			// The search's exchange, reported by the run that searched;
			// the second finds it finished and searches nothing.
			if x, _ := res["exchange"].(map[string]any); (run == 0) != (x != nil && x["sent-records"].(float64) > 0) {
				t.Errorf("%v, run %d: exchange %v", model, run+1, res["exchange"])
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--local-shards", "2"}, "needs --dir"},
		{[]string{"--local-shards", "1000", "--dir", t.TempDir()}, "would only thrash"},
		{[]string{"--local-shards", "2", "--dir", t.TempDir(), "--shard", "1/2"}, "leave out --shard"},
		{[]string{"--shard", "3/2", "--dir", t.TempDir()}, "1 <= i <= N"},
		{[]string{"--shard", "1/2"}, "needs --dir"},
		{[]string{"--shard", "1/2", "--dir", t.TempDir(), "--max-states", "5"}, "max-states"},
		{[]string{"--fingerprint", "80"}, "64, 96 or 128"},
	} {
		if code, _, errOut := runArgs(t, append([]string{"check"}, c.args...)...); code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, code, errOut)
		}
	}
}

// TestShardKilledAndRestarted runs a search as three shard processes,
// kills one with SIGKILL in the middle, restarts it with the same command
// while the others wait for it, and demands the single process's result
// from every shard; a restart with other parameters is refused.
func TestShardKilledAndRestarted(t *testing.T) {
	testtier.Long(t, "builds the binary and kills a shard")
	bin := buildBinary(t)
	model := []string{"--bookies", "2", "-w", "2", "-a", "1"}
	want, err := exec.Command(bin, append([]string{"check", "--json"}, model...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	wantRes := resultOf(t, want)
	dir := filepath.Join(t.TempDir(), "run")
	start := func(i int, extra ...string) (*exec.Cmd, *bytes.Buffer) {
		args := append([]string{"check", "--json", "--dir", dir, "--shard", fmt.Sprintf("%d/3", i), "--workers", "1"}, model...)
		cmd := exec.Command(bin, append(args, extra...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	cmds := make([]*exec.Cmd, 3)
	outs := make([]*bytes.Buffer, 3)
	for i := range 3 {
		cmds[i], outs[i] = start(i + 1)
	}
	waitForCheckpoint(t, filepath.Join(dir, "shard-001"), 12)
	cmds[1].Process.Signal(syscall.SIGKILL)
	cmds[1].Wait()
	time.Sleep(200 * time.Millisecond)
	// Another model in the same directory is refused.
	bad := exec.Command(bin, "check", "--dir", dir, "--shard", "2/3", "--bookies", "2", "-w", "2", "-a", "2")
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "cannot resume") {
		t.Errorf("restart with other parameters: %v %s", err, out)
	}
	cmds[1], outs[1] = start(2)
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i+1, err, outs[i])
		}
		sameFigures(t, fmt.Sprintf("shard %d/3", i+1), resultOf(t, outs[i].Bytes()), wantRes)
	}
}

// TestLocalShardsInterruptedContinue: an interrupted --local-shards run
// prints the command that continues it (there is no --resume for shards),
// and that command, run as printed, finishes the search with the figures
// of an uninterrupted run (issue #22, item 3).
func TestLocalShardsInterruptedContinue(t *testing.T) {
	testtier.Long(t, "builds the binary and interrupts a sharded run")
	bin := buildBinary(t)
	model := []string{"--bookies", "3", "-e", "3", "-w", "2", "-a", "2", "--trace-out", "none"}
	want, err := exec.Command(bin, append([]string{"check", "--json"}, model...)...).Output()
	if err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, append([]string{"check", "--dir", dir, "--local-shards", "2"}, model...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if cmd.ProcessState.ExitCode() == exitOK {
		t.Skip("the search finished before the interrupt")
	}
	const hint = "Continue with the same command (a shard started on its directory continues its search): "
	_, line, ok := strings.Cut(out.String(), hint)
	if !ok {
		t.Fatalf("no continue command:\n%s", out.String())
	}
	line, _, _ = strings.Cut(line, "\n")
	if !strings.HasPrefix(line, "bkcheck check ") || strings.Contains(line, "--resume") || strings.Contains(line, "--shard=") {
		t.Fatalf("the printed command %q is not the coordinator's", line)
	}
	// --resume cannot continue a sharded directory: it says so, and the
	// command it gives instead continues the search (issue #22, item 7).
	resume := exec.Command(bin, "check", "--resume", dir)
	var resumeErr bytes.Buffer
	resume.Stderr = &resumeErr
	resume.Run()
	_, given, ok := strings.Cut(resumeErr.String(), "holds a search sharded 2 ways, which continues from its shards' directories, not from --resume: run the command that started it again (")
	given, _, _ = strings.Cut(given, ", or --shard i/2")
	if resume.ProcessState.ExitCode() != exitUsage || !ok || !strings.HasPrefix(given, "bkcheck check ") {
		t.Fatalf("--resume of a sharded directory: exit %d: %s", resume.ProcessState.ExitCode(), resumeErr.String())
	}
	// The printed commands, as a shell would run them: the second finds
	// the search finished by the first.
	for _, line := range []string{line, given} {
		sh := exec.Command("sh", "-c", bin+strings.TrimPrefix(line, "bkcheck")+" --json")
		got, err := sh.Output()
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		sameFigures(t, "continued", lastJSON(t, string(got)), lastJSON(t, string(want)))
	}
}

// TestLocalShardsDieWithCoordinator: kill -9 of a --local-shards
// coordinator takes its shard processes with it (Linux's parent-death
// signal), and the directory can be continued at once (issue #22, item 4).
func TestLocalShardsDieWithCoordinator(t *testing.T) {
	testtier.Long(t, "builds the binary and kills a coordinator")
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	bin := buildBinary(t)
	dir := filepath.Join(t.TempDir(), "run")
	model := []string{"--bookies", "3", "-e", "3", "-w", "2", "-a", "2", "--trace-out", "none"}
	cmd := exec.Command(bin, append([]string{"check", "--dir", dir, "--local-shards", "2"}, model...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	shards := func() []string { return shardPIDs(dir, "") }
	deadline := time.Now().Add(time.Minute)
	for len(shards()) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(shards()) < 2 {
		t.Fatalf("the shards did not start")
	}
	time.Sleep(time.Second)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline = time.Now().Add(30 * time.Second)
	for len(shards()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := shards(); len(left) > 0 {
		exec.Command("kill", append([]string{"-9"}, left...)...).Run()
		t.Fatalf("shards %v outlived their coordinator", left)
	}
	again := exec.Command(bin, append([]string{"check", "--dir", dir, "--local-shards", "2"}, model...)...)
	if out, err := again.CombinedOutput(); err != nil {
		t.Fatalf("continuing: %v\n%s", err, out)
	}
}

// TestLocalShardKilled: kill -9 of one shard of --local-shards does not
// hang the run: the coordinator notices it at once, stops the other
// shard, says so (exit 1), and the same command finishes the search with
// the figures of an uninterrupted run (issue #22, item 1).
func TestLocalShardKilled(t *testing.T) {
	testtier.Long(t, "builds the binary and kills a shard")
	bin := buildBinary(t)
	dir := filepath.Join(t.TempDir(), "run")
	model := []string{"--bookies", "3", "-e", "3", "-w", "2", "-a", "2", "--trace-out", "none"}
	want, err := exec.Command(bin, append([]string{"check", "--json"}, model...)...).Output()
	if err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}
	args := append([]string{"check", "--dir", dir, "--local-shards", "2"}, model...)
	cmd := exec.Command(bin, args...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid []string
	for deadline := time.Now().Add(time.Minute); len(pid) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		pid = shardPIDs(dir, "2/2")
	}
	if len(pid) == 0 {
		t.Fatal("shard 2/2 did not start")
	}
	time.Sleep(time.Second)
	exec.Command("kill", "-9", pid[0]).Run()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the run hangs after a shard died:\n%s", errOut.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitError || !strings.Contains(errOut.String(), "shard 2/2 ended on its own") {
		t.Fatalf("exit %d\n%s", code, errOut.String())
	}
	got, err := exec.Command(bin, append(args, "--json")...).Output()
	if err != nil {
		t.Fatalf("continuing: %v", err)
	}
	sameFigures(t, "continued", lastJSON(t, string(got)), lastJSON(t, string(want)))
}

// shardPIDs lists the pids of the shard processes running on dir (shard
// "i/N", or any with "").
func shardPIDs(dir, shard string) []string {
	out, _ := exec.Command("pgrep", "-f", "--", dir+" .*--shard="+shard).Output()
	return strings.Fields(string(out))
}

// TestShardOnSingleRunDir: a shard started on the directory of a run of
// one process is refused before the banner (it used to wait for the
// other shards forever, writing a shard directory into that run).
func TestShardOnSingleRunDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"check", "--bookies", "2", "-w", "2", "-a", "2", "--entries", "1", "--dir", dir}
	if code, _, errs := runArgs(t, append(args, "--max-states", "100")...); code != exitUnknown {
		t.Fatalf("the run of one process: exit %d\n%s", code, errs)
	}
	code, out, errs := runArgs(t, append(args, "--shard", "1/2")...)
	if code != exitUsage || !strings.Contains(errs, "holds the run of one process") || strings.Contains(out+errs, "checking") {
		t.Errorf("exit %d, want %d naming the run of one process before the banner\n%s%s", code, exitUsage, out, errs)
	}
	if _, err := os.Stat(explorer.ShardDir(dir, 0)); err == nil {
		t.Error("a shard directory was written into the run")
	}
}

// TestShardNeverArrives: of three shards, the third stops after level 3
// (it was given --max-depth 3) and so never reaches level 4; the other two
// wait for it there for --shard-timeout, then exit 4 naming it and the
// level. The directory stays resumable: the three shards started again
// (--local-shards 3) give the figures of one process.
func TestShardNeverArrives(t *testing.T) {
	model := []string{"--bookies", "1", "-w", "1", "-a", "1", "--trace-out", "none"}
	want, dir, exe := shardSetup(t, model)
	cmds := make([]*exec.Cmd, 3)
	outs := make([]bytes.Buffer, 3)
	for i := range cmds {
		args := append([]string{"check", "--dir", dir, "--shard", fmt.Sprintf("%d/3", i+1), "--workers", "1", "--shard-timeout", "5s"}, model...)
		if i == 2 {
			args = append(args, "--max-depth", "3")
		}
		cmds[i] = exec.Command(exe, args...)
		cmds[i].Env = append(os.Environ(), runAsBkcheck+"=1")
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if i == 2 {
			if code != exitUnknown {
				t.Fatalf("shard 3/3, bounded at depth 3: exit %d\n%s", code, outs[i].String())
			}
			continue
		}
		const named = "shard 3/3 did not reach level 4 (expanded phase) and showed no sign of life for 5s (--shard-timeout); this shard stops. Nothing is lost"
		if code != exitShardAbsent || !strings.Contains(outs[i].String(), named) {
			t.Errorf("shard %d/3: exit %d, want %d and %q\n%s", i+1, code, exitShardAbsent, named, outs[i].String())
		}
	}
	t.Setenv(runAsBkcheck, "1")
	code, got, errOut := runArgs(t, append([]string{"check", "--json", "--dir", dir, "--local-shards", "3"}, model...)...)
	if code != exitOK {
		t.Fatalf("resumed with every shard: exit %d\n%s", code, errOut)
	}
	sameFigures(t, "resumed", lastJSON(t, got), want)
	for _, bad := range []string{"-1s", "2s"} {
		if code, _, errOut := runArgs(t, "check", "--shard", "1/2", "--dir", t.TempDir(), "--shard-timeout", bad); code != exitUsage || !strings.Contains(errOut, "at least 5s") {
			t.Errorf("--shard-timeout %s: exit %d, %q", bad, code, errOut)
		}
	}
}

// TestShardTwiceAndWrongNTasks: the bad inputs of a sharded search that
// need no scheduler (the Slurm tier, TestSlurm, has them all under real
// Slurm): a shard started while another process runs it is refused with
// exit 2, touching nothing, and the search then finishes with the one
// process's figures; SLURM_NTASKS other than --shards is refused with
// exit 2 before anything is written.
func TestShardTwiceAndWrongNTasks(t *testing.T) {
	model := []string{"--bookies", "1", "-w", "1", "-a", "1", "--trace-out", "none"}
	want, dir, exe := shardSetup(t, model)
	args := append([]string{"check", "--json", "--dir", dir, "--workers", "1", "--shard-timeout", "0"}, model...)
	holder := exec.Command(exe, append(args, "--shard", "1/2")...)
	holder.Env = append(os.Environ(), runAsBkcheck+"=1")
	var held bytes.Buffer
	holder.Stdout, holder.Stderr = &held, &held
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCheckpoint(t, explorer.ShardDir(dir, 0), 1)
	code, _, errOut := runArgs(t, append(args, "--shard", "1/2")...)
	if code != exitUsage || !strings.Contains(errOut, "in use by another process (pid "+strconv.Itoa(holder.Process.Pid)) {
		t.Errorf("shard 1/2 started twice: exit %d, want %d naming pid %d\n%s", code, exitUsage, holder.Process.Pid, errOut)
	}
	// The holder, waiting at level 1 for shard 2/2, gets it now.
	code, got, errOut := runArgs(t, append(args, "--shard", "2/2")...)
	if err := holder.Wait(); err != nil || code != exitOK {
		t.Fatalf("the search after the refusal: shard 1/2 %v, shard 2/2 exit %d\n%s\n%s", err, code, held.String(), errOut)
	}
	sameFigures(t, "shard 2/2", lastJSON(t, got), want)
	sameFigures(t, "shard 1/2", lastJSON(t, held.String()), want)

	t.Setenv("SLURM_PROCID", "0")
	t.Setenv("SLURM_NTASKS", "2")
	other := filepath.Join(t.TempDir(), "run")
	code, _, errOut = runArgs(t, append([]string{"check", "--dir", other, "--shards", "3"}, model...)...)
	if code != exitUsage || !strings.Contains(errOut, "SLURM_NTASKS=2 but --shards 3") {
		t.Errorf("SLURM_NTASKS=2, --shards 3: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("SLURM_NTASKS=2, --shards 3: the run directory was created")
	}
}

// shardSetup returns the one process's result of model, a fresh run
// directory, and this test binary, which runs as bkcheck with
// runAsBkcheck=1 in its environment: the shard processes of a test.
func shardSetup(t *testing.T, model []string) (want map[string]any, dir, exe string) {
	t.Helper()
	_, out, _ := runArgs(t, append([]string{"check", "--json"}, model...)...)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return lastJSON(t, out), filepath.Join(t.TempDir(), "run"), exe
}
