package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPORFromTheCommandLine: --por reports what it did, and refuses
// what it does not cover, every problem at once, with exit 2.
func TestPORFromTheCommandLine(t *testing.T) {
	code, out, errOut := runArgs(t, "check", "--bookies", "3", "-w", "3", "-a", "2", "--reliable-network", "--por")
	if code != exitOK || !strings.Contains(out, "9255 distinct states") || !strings.Contains(out, "Partial-order reduction (--por): ") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	// AutoRecovery's graph has cycles: the cycle proviso expands some
	// states fully, and says how many.
	code, out, errOut = runArgs(t, "check", "--bookies", "3", "-e", "2", "-w", "2", "-a", "2", "--disk-loss", "1", "--reliable-network", "--autorecovery",
		"--auditor-periodic-check", "off", "--por")
	if code != exitOK || !strings.Contains(out, "3737 distinct states") || !strings.Contains(out, "by the cycle proviso") {
		t.Fatalf("--autorecovery --por: exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = runArgs(t, "check", "--por", "--autorecovery", "--probe", "p=true", "--eventually", "e=true ~> true")
	for _, want := range []string{"--por: keeps terminal states and invariant violations, not what --eventually, --probe or --constraint ask about"} {
		if code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, want %q in:\n%s%s", code, want, out, errOut)
		}
	}
	code, _, errOut = runArgs(t, "check", "--model", "v4.13", "--por")
	if code != exitUsage || !strings.Contains(errOut, "--por: does not apply to --model v4.13") {
		t.Errorf("v4.13: exit %d:\n%s", code, errOut)
	}
}

// TestRegressPOR: bkcheck regress --por runs the cases --por covers with
// it too, and says how many.
func TestRegressPOR(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "por.toml", `
[runs.reliable]
bookies = 3
write-quorum = 3
ack-quorum = 2
reliable-network = true
expect-status = "ok"
expect-distinct = 41333

[runs.crash]
bookies = 1
write-quorum = 1
ack-quorum = 1
crashes = 1
expect-status = "violation"

`)
	writeFile(t, dir, "v413.toml", `
model = "v4.13"
entries = 1

[runs.v413]
bookies = 1
write-quorum = 1
ack-quorum = 1
expect-status = "ok"
`)
	code, out, errOut := runArgs(t, "regress", "--no-bugs", "--por", dir)
	for _, want := range []string{"ok    por.toml:reliable --por: ok, 9255 distinct (4.47× fewer)", "ok    por.toml:crash --por: violation",
		"3 cases run, 0 drifted, 0 slow cases skipped; 2 of them also run with --por"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("exit %d, want %q in:\n%s%s", code, want, out, errOut)
		}
	}
}

// TestPORSymmetryTraceReplays: a violation found with --por and symmetry,
// whose search holds canonical forms, is written as a behaviour of the
// model that bkcheck replay confirms step by step.
func TestPORSymmetryTraceReplays(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.itf.json")
	code, out, errOut := runArgs(t, "check", "--bookies", "2", "-w", "2", "-a", "2", "--variant", "no-recovery-fence",
		"--symmetry", "bookies,clients", "--por", "--trace-out", trace)
	if code == exitOK || !strings.Contains(out+errOut, "NoDivergenceBetweenClientAndMetaData is violated") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = runArgs(t, "replay", trace)
	if code != exitOK || !strings.Contains(out, "confirmed") {
		t.Errorf("replay: exit %d:\n%s%s", code, out, errOut)
	}
}
