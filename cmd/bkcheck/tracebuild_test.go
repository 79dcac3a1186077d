package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/bugs"
)

// TestTraceBuildCLI: bkcheck trace build end to end: the committed
// f-3887 story of the BookKeeper model builds a trace that bkcheck replay
// confirms; a story the model refuses exits 1 naming the step and writes
// nothing; bad flags exit 2 listing every problem; an existing file is
// never overwritten.
func TestTraceBuildCLI(t *testing.T) {
	dir := t.TempDir()
	told := firstTold(t, "f-3887")
	story := filepath.Join(dir, "f-3887.steps")
	os.WriteFile(story, []byte("# f-3887 on BookKeeper 4.18.2's model\n"+strings.Join(told.Steps, "\n")+"\n"), 0o644)
	model := []string{"trace", "build", "--bookkeeper", "4.18.2", "--bookies", "3", "--clients", "2", "-w", "2", "-a", "1",
		"--entries", "1", "--inflight", "1", "--crashes", "1", "--autorecovery", "--decommission", "--invariants", "none",
		"--eventually", `Decommissions=size(decom_bookie) > 0 && meta_status == "STATUS_CLOSED" ~> decom_done`, "--fair", "all"}
	args := func(extra ...string) []string { return append(append([]string{}, model...), extra...) }

	out := filepath.Join(dir, "f-3887-bk.itf.json")
	if code, stdout, stderr := runArgs(t, args("--loop", "14", "--trace-out", out, story)...); code != exitOK || !strings.Contains(stdout, "a fair lasso violating Decommissions (the cycle from state 14)") {
		t.Fatalf("build: exit %d: %s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runArgs(t, "replay", out); code != exitOK || !strings.Contains(stdout, "returns to state 14") {
		t.Errorf("replay of the built trace: exit %d: %s%s", code, stdout, stderr)
	}
	got, _ := os.ReadFile(out)
	want, _ := os.ReadFile("../../docs/traces/findings/f-3887-told1.itf.json")
	if string(got) != string(want) {
		t.Error("the command line's build differs from the findings page's trace (docs/traces/findings/f-3887-told1.itf.json)")
	}
	if code, _, stderr := runArgs(t, args("--loop", "14", "--trace-out", out, story)...); code != exitUsage || !strings.Contains(stderr, "already exists") {
		t.Errorf("a second build to the same file: exit %d: %s", code, stderr)
	}

	// The cycle marked in the file instead: the same trace.
	marked := filepath.Join(dir, "marked.steps")
	lines := append(append(append([]string{}, told.Steps[:13]...), "loop"), told.Steps[13:]...)
	os.WriteFile(marked, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	byMark := filepath.Join(dir, "marked.itf.json")
	if code, stdout, stderr := runArgs(t, args("--trace-out", byMark, marked)...); code != exitOK {
		t.Errorf("build with the loop marked: exit %d: %s%s", code, stdout, stderr)
	} else if got, _ := os.ReadFile(byMark); string(got) != string(want) {
		t.Error("the loop marked in the file builds another trace than --loop 14")
	}
	if code, _, stderr := runArgs(t, args("--loop", "12", "--trace-out", filepath.Join(dir, "x.itf.json"), marked)...); code != exitUsage || !strings.Contains(stderr, `--loop: 12, where the steps' "loop" line says 14`) {
		t.Errorf("--loop against the file's mark: exit %d: %s", code, stderr)
	}

	// Without the Auditor's periodic check the cycle is unfair to it.
	data, _ := os.ReadFile(story)
	unfair := filepath.Join(dir, "unfair.steps")
	os.WriteFile(unfair, []byte(strings.Replace(string(data), "AuditorChecksLedger missing:{b1}\n", "", 1)), 0o644)
	bad := filepath.Join(dir, "unfair.itf.json")
	if code, _, stderr := runArgs(t, args("--loop", "13", "--trace-out", bad, unfair)...); code != exitError || !strings.Contains(stderr, "step 13: the cycle is not fair to AuditorChecksLedger") {
		t.Errorf("an unfair cycle: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("a refused story left a trace file")
	}

	code, _, stderr := runArgs(t, "trace", "build", "--symmetry", "bookies", "--loop", "-1", "nosuch.steps")
	for _, want := range []string{"--symmetry", "--loop", "--trace-out: give the file", "nosuch.steps", "give one --invariant, --eventually, --terminal or --probe"} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("bad flags: exit %d, want 2 and %q in: %s", code, want, stderr)
		}
	}
}

// TestTraceBuildInvariant: an invariant's story (f-4551 told on
// BookKeeper 4.18.2's model, with --exclude-actions) builds the page's
// trace, ending at the first state that violates the invariant; a story
// that goes past that state is refused.
func TestTraceBuildInvariant(t *testing.T) {
	dir := t.TempDir()
	told := firstTold(t, "f-4551")
	story := filepath.Join(dir, "f-4551.steps")
	os.WriteFile(story, []byte(strings.Join(told.Steps, "\n")+"\n"), 0o644)
	model := []string{"trace", "build", "--bookkeeper", "4.18.2", "--bookies", "3", "--clients", "2", "-w", "1", "-a", "1",
		"--entries", "2", "--inflight", "2", "--crashes", "2", "--disk-loss", "1", "--reliable-network",
		"--exclude-actions", "RecoveryClientReadFails,BookieCheckpointsIdle", "--autorecovery", "--invariants", "none",
		"--invariant", `WorkerRuns=rw_phase != "stopped"`}
	out := filepath.Join(dir, "f-4551.itf.json")
	code, stdout, stderr := runArgs(t, append(model, "--trace-out", out, story)...)
	if code != exitOK || !strings.Contains(stdout, "a counterexample of WorkerRuns") {
		t.Fatalf("build: exit %d: %s%s", code, stdout, stderr)
	}
	got, _ := os.ReadFile(out)
	want, _ := os.ReadFile("../../docs/traces/findings/f-4551-told1.itf.json")
	if string(got) != string(want) {
		t.Error("the command line's build differs from the findings page's trace (docs/traces/findings/f-4551-told1.itf.json)")
	}
	// An invariant's counterexample takes no loop, and a constraint is no story's.
	code, _, stderr = runArgs(t, append(model, "--loop", "3", "--constraint", "C=true", "--trace-out", filepath.Join(dir, "y.itf.json"), story)...)
	for _, want := range []string{"--loop: an invariant's counterexample ends at the first state violating it", "--constraint"} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("--loop and --constraint with --invariant: exit %d, want 2 and %q in: %s", code, want, stderr)
		}
	}
	// The invariant is violated at the last step: a step past it is refused.
	longer := filepath.Join(dir, "longer.steps")
	os.WriteFile(longer, []byte(strings.Join(append(told.Steps, "BookieRestarts(b2)"), "\n")+"\n"), 0o644)
	if code, _, stderr := runArgs(t, append(model, "--trace-out", filepath.Join(dir, "x.itf.json"), longer)...); code != exitError {
		t.Errorf("a story past the violation: exit %d: %s", code, stderr)
	}
}

// firstTold is the first story the findings page tells of finding id.
func firstTold(t *testing.T, id string) bugs.Told {
	t.Helper()
	for _, f := range bugs.Findings {
		if f.ID == id && len(f.Told) > 0 {
			return f.Told[0]
		}
	}
	t.Fatalf("finding %s tells no story", id)
	return bugs.Told{}
}
