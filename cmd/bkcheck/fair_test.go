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
