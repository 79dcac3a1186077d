package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/schema"
)

// buildBinary compiles bkcheck once for the process-level tests.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bkcheck")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// waitForCheckpoint polls the run directory until a checkpoint past depth
// minDepth exists.
func waitForCheckpoint(t *testing.T, dir string, minDepth int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(dir, "checkpoint.json"))
		if err == nil {
			var cp struct{ Depth int }
			if json.Unmarshal(b, &cp) == nil && cp.Depth >= minDepth {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no checkpoint past depth %d in %s", minDepth, dir)
}

func resultOf(t *testing.T, out []byte) map[string]any {
	t.Helper()
	return lastJSON(t, string(out))
}

// TestKillAndResume kills a real bkcheck process with SIGKILL in the
// middle of a Badger-backed run, resumes it, and demands exactly the
// counts of an uninterrupted run. It then interrupts a resumed run with
// SIGINT (exit 130, status unknown) and resumes it to the end again.
func TestKillAndResume(t *testing.T) {
	testtier.Long(t, "builds the binary and kills it")
	bin := buildBinary(t)
	model := []string{"--bookies", "2", "-w", "2", "-a", "1"}

	want, err := exec.Command(bin, append([]string{"check", "--json"}, model...)...).Output()
	if err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}
	wantRes := resultOf(t, want)

	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, append([]string{"check", "--json", "--store", "badger", "--dir", dir, "--workers", "2"}, model...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCheckpoint(t, dir, 12)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// Resuming with other model parameters is refused, naming the difference.
	var stderr bytes.Buffer
	bad := exec.Command(bin, "check", "--resume", dir, "-a", "2")
	bad.Stderr = &stderr
	if err := bad.Run(); err == nil || bad.ProcessState.ExitCode() != exitUsage || !strings.Contains(stderr.String(), "-a: 2 differs from the run's 1") {
		t.Fatalf("resume with other parameters: %v, stderr %q", err, stderr.String())
	}

	// Interrupt the resumed run with SIGINT once it has made progress.
	cmd = exec.Command(bin, "check", "--json", "--resume", dir)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForCheckpoint(t, dir, 16)
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted && code != exitOK {
		t.Fatalf("interrupted resume: exit %d", code)
	} else if code == exitInterrupted {
		if st := resultOf(t, out.Bytes())["status"]; st != "unknown" {
			t.Fatalf("interrupted run reports %v", st)
		}
	}

	got, err := exec.Command(bin, "check", "--json", "--resume", dir).Output()
	if err != nil {
		t.Fatalf("final resume: %v", err)
	}
	gotRes := resultOf(t, got)
	for _, k := range []string{"status", "distinct", "generated", "depth"} {
		if gotRes[k] != wantRes[k] {
			t.Errorf("%s: resumed %v, uninterrupted %v", k, gotRes[k], wantRes[k])
		}
	}
}

// TestMemoryBudget runs a model whose visited set does not fit the store's
// share of a 64 MiB budget: the run completes with exactly the counts of an
// in-memory run, the store works from its sorted runs in Badger, and the
// process's anonymous memory stays near the budget.
func TestMemoryBudget(t *testing.T) {
	testtier.Long(t, "1.8 million states through a 64 MiB budget")
	bin := buildBinary(t)
	dir := filepath.Join(t.TempDir(), "run")
	out, err := exec.Command(bin, "check", "--json", "-w", "2", "-a", "2", "--store", "badger", "--dir", dir, "--memory", "64MiB").Output()
	if err != nil {
		t.Fatal(err)
	}
	res := resultOf(t, out)
	tlc := tlcFigures(t, "tlc-b2-w2-a2")
	if res["status"] != "ok" || res["distinct"] != float64(tlc.Distinct) || res["depth"] != float64(tlc.Depth) {
		t.Fatalf("result %v", res)
	}
	// An exact in-memory table costs 8 bytes / load factor per state; the
	// store reports less only when its table held just the pending level.
	if bps := res["store-bytes-per-state"].(float64); bps >= 8 {
		t.Errorf("store cache %.1f bytes/state: the visited set fitted, the test proves nothing", bps)
	}
	anon := res["peak-anon-rss-bytes"].(float64)
	t.Logf("peak anonymous RSS %.0f MiB, total %.0f MiB", anon/(1<<20), res["peak-rss-bytes"].(float64)/(1<<20))
	if anon > 96<<20 {
		t.Errorf("peak anonymous RSS %.0f MiB exceeds 1.5x the 64 MiB budget", anon/(1<<20))
	}
}

// TestResumeKeepsMemoryBudget: --resume without --memory uses the budget
// the run was started with; a budget given on resume replaces it.
func TestResumeKeepsMemoryBudget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	budgetOf := func(args ...string) float64 {
		t.Helper()
		code, out, errOut := runArgs(t, append([]string{"check", "--json", "-w", "1", "-a", "1", "--bookies", "1"}, args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		var start map[string]any
		if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &start); err != nil || start["type"] != "start" {
			t.Fatalf("first line %q: %v", strings.SplitN(out, "\n", 2)[0], err)
		}
		return memoryOf(t, start)
	}
	if got := budgetOf("--store", "badger", "--dir", dir, "--memory", "300MiB"); got != 300<<20 {
		t.Fatalf("fresh run: budget %v", got)
	}
	resume := func(extra ...string) float64 {
		t.Helper()
		code, out, errOut := runArgs(t, append([]string{"check", "--json", "--resume", dir}, extra...)...)
		if code != exitOK {
			t.Fatalf("resume %v: exit %d %s", extra, code, errOut)
		}
		var start map[string]any
		json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &start)
		return memoryOf(t, start)
	}
	if got := resume(); got != 300<<20 {
		t.Errorf("resume without --memory: budget %v, want the run's 300 MiB", got)
	}
	if got := resume("--memory", "400MiB"); got != 400<<20 {
		t.Errorf("resume with --memory 400MiB: budget %v", got)
	}
	if got := resume(); got != 400<<20 {
		t.Errorf("resume after a new budget: %v, want 400 MiB", got)
	}
	os.WriteFile(filepath.Join(dir, "memory.json"), []byte("{"), 0o644)
	if code, _, errOut := runArgs(t, "check", "--resume", dir); code != exitUsage || !strings.Contains(errOut, "memory.json is corrupt") {
		t.Errorf("corrupt budget file: exit %d %s", code, errOut)
	}
}

// memoryOf reads the memory budget of a --json start line.
func memoryOf(t *testing.T, start map[string]any) float64 {
	t.Helper()
	cfg, _ := start["config"].(map[string]any)
	text, _ := cfg["memory"].(string)
	z, err := schema.ParseSize(text)
	if err != nil {
		t.Fatalf("start line %v: %v", start, err)
	}
	return float64(z)
}
