package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/bkcheck/bkcheck/bridge"
	"github.com/bkcheck/bkcheck/bridge/cluster"
	"github.com/bkcheck/bkcheck/bugs"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
)

// TestConfirmUsage: bad input to bkcheck confirm is a usage error listing
// every problem; a trace the harness cannot drive is exit 3, before any
// JVM starts.
func TestConfirmUsage(t *testing.T) {
	dir := t.TempDir()
	v413 := filepath.Join(dir, "v413.itf.json") // the #2614 trace of release 4.13's spec
	if code, _, errs := runArgs(t, "check", "--model", "v4.13", "--bookies", "2", "-w", "2", "-a", "2", "--trace-out", v413); code != exitViolation {
		t.Fatalf("the v4.13 trace: exit %d\n%s", code, errs)
	}
	full := filepath.Join(dir, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	for _, tc := range []struct {
		args []string
		code int
		says []string
	}{
		{[]string{"confirm"}, exitUsage, []string{"give one trace file"}},
		{[]string{"confirm", "--step-timeout", "0s", "a", "b"}, exitUsage, []string{"give one trace file (got 2", "--step-timeout: must be > 0"}},
		{[]string{"confirm", filepath.Join(dir, "missing.itf.json")}, exitUsage, []string{"missing.itf.json"}},
		{[]string{"confirm", v413}, exitUsage, []string{"v4.13 model"}},
		{[]string{"confirm", "--bookkeeper", "4.x", "../../docs/traces/findings/f-fence-lost.itf.json"}, exitUsage, []string{"a release is three numbers"}},
		{[]string{"confirm", "--dir", full, "../../docs/traces/findings/f-fence-lost.itf.json"}, exitUsage, []string{"is not empty"}},
		{[]string{"confirm", "../../docs/traces/below-qw-ensemble-change.itf.json"}, exitConfirmNotDrive, []string{"NOT EXECUTABLE", "the TLA+ spec's one-step ensemble change"}},
		// --fix names a variant the agent weaves whole, checked with the rest.
		{[]string{"confirm", "--fix", "integrity-fences-closed", "--step-timeout", "0s", "x.itf.json"}, exitUsage,
			[]string{"--fix: the agent weaves no advice for integrity-fences-closed (IntegrityFencesClosed)", "--step-timeout: must be > 0"}},
		{[]string{"confirm", "--fix", "split-add-check", "x.itf.json"}, exitUsage, []string{"--fix: split-add-check is no change to BookKeeper's code"}},
		{[]string{"confirm", "--fix", "no-such", "x.itf.json"}, exitUsage, []string{`--fix: unknown variant "no-such"`}},
		{[]string{"confirm", "--fix", "", "x.itf.json"}, exitUsage, []string{"--fix: is empty"}},
	} {
		code, out, errs := runArgs(t, tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args, code, tc.code, out, errs)
		}
		for _, s := range tc.says {
			if !strings.Contains(out+errs, s) {
				t.Errorf("%v: output lacks %q:\n%s%s", tc.args, s, out, errs)
			}
		}
	}
}

// TestConfirmWithoutJava: no JDK on PATH is a clear error before anything
// starts.
func TestConfirmWithoutJava(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, _, errs := runArgs(t, "confirm", "../../docs/traces/findings/f-fence-lost.itf.json")
	if code != exitError || !strings.Contains(errs, "java not found on PATH") {
		t.Errorf("exit %d, %q; want exit 1 naming the missing JDK", code, errs)
	}
}

// TestOnBookKeeperRecords holds docs/bugs.md's and docs/findings.md's
// records of what BookKeeper did (bugs.Runs) to bkcheck confirm: the
// verdicts its pre-flight check gives before any process starts
// (bridge.Preflight) always, without a JDK; every run, a cluster's NOT
// EXECUTABLE ones too, in the real-BookKeeper tier.
func TestOnBookKeeperRecords(t *testing.T) {
	real := os.Getenv(testtier.RealEnv) == "1"
	seen := map[string]bool{}
	for _, r := range bugs.Runs {
		path := filepath.Join("..", "..", "docs", r.Trace)
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: %v", r.Trace, err)
			continue
		}
		seen[r.Trace] = true
		if !slices.Contains(spec.HarnessReleases, r.Release) {
			t.Errorf("%s: run on %s, which is not among the harness's releases (spec.HarnessReleases: %v)", r.Trace, r.Release, spec.HarnessReleases)
		}
		// The default tier takes the verdicts the harness's pre-flight check
		// gives before any process starts (bridge.Preflight); a record that
		// needs a cluster, a NOT EXECUTABLE one refused during the run
		// included, is the real tier's.
		var pre *bridge.Result
		if !real {
			var err error
			if pre, err = bridge.Preflight(path, bridge.Options{Version: r.Release, Fix: r.Fix}); err != nil {
				t.Errorf("%s: %v", r.Command(), err)
				continue
			}
			if pre == nil {
				if r.Verdict == bugs.NotExecutable {
					t.Logf("%s: NOT EXECUTABLE during the run, after the cluster starts: left to the real tier (%s=1)", r.Command(), testtier.RealEnv)
				}
				continue
			}
		}
		// Two clusters at a time (-parallel, GOMAXPROCS by default): a
		// run mostly waits on its cluster (a start is about 15 s of 25),
		// and each cluster claims its own ports.
		t.Run(r.Trace+r.Fix, func(t *testing.T) {
			t.Parallel()
			res := pre
			if res == nil {
				var err error
				if res, err = bridge.Confirm(context.Background(), path, bridge.Options{Version: r.Release, Fix: r.Fix, TempDir: t.TempDir()}); err != nil {
					t.Fatalf("%s: %v", r.Command(), err)
				}
			}
			if res.Verdict == bugs.NotExecutable && r.Verdict != bugs.NotExecutable && strings.Contains(res.Reason, "needs a FUSE file system here") {
				t.Skipf("%s: %s (the record is of a machine where FUSE mounts)", r.Command(), res.Reason)
			}
			if res.Verdict != r.Verdict || res.Step != r.Step {
				t.Errorf("%s: %s at step %d, the page says %s at step %d\n%s", r.Command(), res.Verdict, res.Step, r.Verdict, r.Step, res.Text())
			}
			// A run with a fix woven in says the fix acted, or was reached
			// and kept the release's course: one never reached proves
			// nothing of the fix.
			for _, f := range res.Fixes {
				if r.Fix != "" && !slices.ContainsFunc(res.Notes, func(n string) bool {
					return strings.Contains(n, ": "+f+" acted") || strings.Contains(n, ": "+f+" kept the release's course")
				}) {
					t.Errorf("%s: the fix %s was never reached (the agent logged nothing of it)\n%s", r.Command(), f, res.Text())
				}
			}
		})
	}
	// Every trace of the two pages has a record.
	for _, dir := range []string{"bugs", "findings"} {
		ents, _ := os.ReadDir(filepath.Join("..", "..", "docs", "traces", dir))
		for _, e := range ents {
			name := "traces/" + dir + "/" + e.Name()
			if strings.HasSuffix(name, ".itf.json") && !strings.HasSuffix(name, "-fixed.itf.json") && !seen[name] {
				t.Errorf("%s has no record of what BookKeeper did (bugs.Runs)", name)
			}
		}
	}
}

// TestRealConfirmInterrupted sends SIGINT to bkcheck confirm while its
// cluster runs: exit 130, a message, and no JVM left behind. SIGTERM takes
// the same path (interruptible).
func TestRealConfirmInterrupted(t *testing.T) {
	testtier.Real(t)
	for _, c := range []struct {
		sig       syscall.Signal
		trace, at string
	}{
		{syscall.SIGINT, "findings/f-fence-lost.itf.json", "step 6/"},
		{syscall.SIGTERM, "findings/f-fence-lost.itf.json", "step 6/"},
		// A power-loss run: its bookies' disks are FUSE mounts, remounted
		// after the power loss at step 8.
		{syscall.SIGINT, "guarantees/e2-w2-a2-crash-nosync-1.itf.json", "step 10/"},
	} {
		sig := c.sig
		dir := filepath.Join(t.TempDir(), "run")
		cmd := exec.Command(buildBinary(t), "confirm", "--dir", dir, "../../docs/traces/"+c.trace)
		seen := signalAt(t, cmd, c.at, sig)
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
			t.Errorf("%v: exit %d, want %d\n%s", sig, code, exitInterrupted, strings.Join(seen, "\n"))
		}
		if !strings.Contains(strings.Join(seen, "\n"), "interrupted; every process of the cluster stopped") {
			t.Errorf("%v: no message:\n%s", sig, strings.Join(seen, "\n"))
		}
		if left := cluster.Leftover(dir); len(left) > 0 {
			t.Errorf("%v: JVMs left behind: %v", sig, left)
		}
		if left := cluster.LeftoverMounts(dir); len(left) > 0 {
			t.Errorf("%v: mounts left behind: %v", sig, left)
		}
	}
}

// TestClusterCommandsRefuseBeforeAnyCluster: settings the harness cannot
// run, empty or misplaced values are refused with exit 2, every problem in
// one message, before any cluster starts (a release build would take a
// minute and a walk a cluster).
func TestClusterCommandsRefuseBeforeAnyCluster(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join("..", "..", "docs", "traces", "findings", "f-fence-lost.itf.json")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"conform", "--model", "v4.13", "--traces", "1", "--out", filepath.Join(dir, "o1")}, []string{"--model: the release-4.13 spec is not a client the harness runs"}},
		{[]string{"conform", "--unavailable", "1", "--depth", "0", "--out", filepath.Join(dir, "o2")},
			[]string{"every walk would be NOT EXECUTABLE: --unavailable 1", `--depth: "0" is not a value it takes`}},
		{[]string{"conform", "--out", file}, []string{"--out: " + file + " is a file, not a directory"}},
		{[]string{"confirm", "--bookkeeper", "", "--dir", file, trace}, []string{"--bookkeeper: is empty", "--dir: " + file + " is a file, not a directory"}},
	} {
		code, out, errOut := runArgs(t, c.args...)
		if code != exitUsage || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %s", c.args, code, out, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, errOut)
			}
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the refused commands wrote into %s: %v", dir, ents)
	}
}

// TestRealConformReportsWalkByWalk: conform writes its report after each
// walk, so a run killed (kill -9) after its second walk leaves both
// reported, and a diverged walk's cluster stays in --out beside its trace,
// not in the system's temporary folder.
func TestRealConformReportsWalkByWalk(t *testing.T) {
	testtier.Real(t)
	out := filepath.Join(t.TempDir(), "out")
	// Seed 1's walk ends before the harness has anything to run; seed 2's
	// spec-model walk diverges at the spec's close (BookKeeper's client
	// closes as LedgerHandle does: docs/model.md).
	cmd := exec.Command(buildBinary(t), "conform", "--seed", "1", "--traces", "3", "--out", out)
	seen := signalAt(t, cmd, "walk 2/3", syscall.SIGKILL)
	b, err := os.ReadFile(filepath.Join(out, bridge.ReportFile))
	if err != nil {
		t.Fatalf("no report after the kill: %v\n%s", err, strings.Join(seen, "\n"))
	}
	var rep bridge.ConformReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Walks) != 2 {
		t.Fatalf("the report holds %d walks, want the 2 run before the kill:\n%s", len(rep.Walks), b)
	}
	for _, d := range rep.Divergence {
		if d.Result == nil || filepath.Dir(d.Result.Dir) != out {
			t.Errorf("a diverged walk's cluster is not kept in %s: %+v", out, d.Result)
		}
	}
	if len(rep.Divergence) == 0 {
		t.Errorf("no walk diverged:\n%s", b)
	}
}

// signalAt runs cmd, sends it sig when a line of its stderr starts with
// prefix, and returns its stderr's lines once it has exited.
func signalAt(t *testing.T, cmd *exec.Cmd, prefix string, sig syscall.Signal) []string {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.HasPrefix(sc.Text(), prefix) {
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	for sc.Scan() {
		seen = append(seen, sc.Text())
	}
	cmd.Wait()
	return seen
}
