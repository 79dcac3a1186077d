package main

import (
	"strings"
	"testing"
)

// TestFairFromTheCommandLine: --fair runs the eventually pass that finds
// fair cycles (its figures in the answer), and its usage errors are
// reported all at once, with exit 2.
func TestFairFromTheCommandLine(t *testing.T) {
	code, out, errOut := runArgs(t, "check", "--bookies", "1", "-w", "1", "-a", "1", "--invariants", "none", "--trace-out", "none",
		"--eventually", `Closed=clients.exists(id, c, c.status == "STATUS_CLOSED")`, "--fair", "all")
	if code != exitTerminal || !strings.Contains(out, "eventually Closed: violated") || !strings.Contains(out, "cyclic components (fair cycles checked") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = runArgs(t, "check", "--fair", "NoSuchAction", "--fair", "all2", "--eventually", "X=true")
	for _, want := range []string{`--fair: unknown action "NoSuchAction"`, `--fair: unknown action "all2"`} {
		if code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, want %q in:\n%s%s", code, want, out, errOut)
		}
	}
	code, _, errOut = runArgs(t, "check", "--fair", "all")
	if code != exitUsage || !strings.Contains(errOut, "--fair: constrains the behaviours --eventually properties are checked on") {
		t.Errorf("--fair alone: exit %d:\n%s", code, errOut)
	}
	code, _, errOut = runArgs(t, "check", "--por", "--fair", "all", "--eventually", "X=true")
	if code != exitUsage || !strings.Contains(errOut, "--por: keeps terminal states") {
		t.Errorf("--fair with --por: exit %d:\n%s", code, errOut)
	}
}

// TestEventuallyCycleIsLiveness: an eventually property violated by a
// fair cycle exits 13, as one violated by a behaviour that ends (TLC's
// liveness code, docs/properties.md), and says it is a cycle.
func TestEventuallyCycleIsLiveness(t *testing.T) {
	code, out, errOut := runArgs(t, "check", "--bookies", "2", "-w", "1", "-a", "1", "--autorecovery", "--disk-loss", "1", "--invariants", "none",
		"--trace-out", "none", "--eventually", "Repaired=size(ur_missing) > 0 ~> size(ur_missing) == 0", "--fair", "all")
	if code != exitTerminal || !strings.Contains(out, "Error: Property Repaired (eventually) fails: a behaviour repeats a cycle for ever without satisfying it.") {
		t.Errorf("exit %d:\n%s%s", code, out, errOut)
	}
}
