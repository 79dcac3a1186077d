package main

// Tests of issue 38, a newcomer's report: each names the item it pins.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/traces"
)

// Item 11: bkcheck regress says when its argument is no directory, reads
// one suite file, and refuses an expect-status no run can have when the
// file is read (exit 2, every problem listed, nothing run) instead of
// running the case and reporting a drift.
func TestRegressArguments(t *testing.T) {
	dir := t.TempDir()
	const tiny = "bookies = 1\nclients = 2\nentries = 1\nwrite-quorum = 1\nack-quorum = 1\n"
	one := writeFile(t, dir, "one.toml", tiny+"[runs.tiny]\nexpect-status = \"ok\"\nexpect-distinct = 799\n")
	notDir := writeFile(t, dir, "afile", "not a suite\n")
	bad := filepath.Join(dir, "bad")
	os.Mkdir(bad, 0o755)
	writeFile(t, bad, "a.toml", tiny+"[runs.fine]\nexpect-status = \"fine\"\n[runs.good]\nexpect-status = \"ok\"\n")
	writeFile(t, bad, "b.toml", tiny+"[runs.oops]\nexpect-status = \"OK\"\n")
	missing := filepath.Join(dir, "nonexistent_dir")
	for _, c := range []struct {
		name string
		arg  string
		code int
		want []string // in stderr (exit 2) or stdout (exit 0)
	}{
		{"missing", missing, exitUsage, []string{missing + ": no such directory"}},
		{"a file", notDir, exitUsage, []string{notDir + " is not a directory"}},
		{"bad statuses", bad, exitUsage, []string{
			`a.toml: run fine: expect-status: must be ok, violation, unknown or error (got "fine")`,
			`b.toml: run oops: expect-status: must be ok, violation, unknown or error (got "OK")`}},
		{"one file", one, exitOK, []string{"ok    one.toml:tiny: ok, 799 distinct", "1 cases run, 0 drifted"}},
	} {
		code, out, errOut := runArgs(t, "regress", "--no-bugs", c.arg)
		got := errOut
		if c.code == exitOK {
			got = out
		}
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", c.name, code, c.code, out, errOut)
		}
		if c.code != exitOK && out != "" {
			t.Errorf("%s: cases ran: %s", c.name, out)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, w, got)
			}
		}
	}
}

// Item 12: a sweep with a point left unknown by max-states exits 3, not
// 0, naming the point, as does merging its slices; the tables are
// written all the same.
func TestSweepIncompleteExit(t *testing.T) {
	dir := t.TempDir()
	// Point 0 (1 bookie, 799 states) completes; point 1 (2 bookies,
	// 6123 states) stops at max-states.
	file := writeFile(t, dir, "sweep.toml", "[fixed]\nclients = 2\nentries = 1\nmax-states = 2000\n[grid]\nbookies = [1, 2]\nwrite-quorum = [1]\nack-quorum = [1]\n")
	out := filepath.Join(dir, "out")
	code, _, errOut := runArgs(t, "sweep", file, "--out", out)
	if code != exitSweepIncomplete || exitSweepIncomplete == exitOK || !strings.Contains(errOut, "incomplete: of 2 points, 1 unknown (points 1:") {
		t.Fatalf("exit %d, want %d: %s", code, exitSweepIncomplete, errOut)
	}
	if r := readSweep(t, out); len(r.Points) != 2 || r.Points[0].Status != "ok" || r.Points[1].Status != "unknown" {
		t.Fatalf("points %+v", r.Points)
	}
	code, _, errOut = runArgs(t, "sweep", "merge", out, "--out", filepath.Join(dir, "merged"))
	if code != exitSweepIncomplete || !strings.Contains(errOut, "bkcheck sweep merge: incomplete") {
		t.Errorf("merge: exit %d: %s", code, errOut)
	}
	complete := writeFile(t, dir, "complete.toml", "[fixed]\nclients = 2\nentries = 1\n[grid]\nbookies = [1]\nwrite-quorum = [1]\nack-quorum = [1, 2]\n")
	if code, _, errOut := runArgs(t, "sweep", complete, "--out", filepath.Join(dir, "complete")); code != exitOK || errOut != "" {
		t.Errorf("a complete sweep (one point skipped): exit %d: %s", code, errOut)
	}
	if !strings.Contains(exitCodesText, "incomplete sweep") {
		t.Errorf("bkcheck help does not document the code:\n%s", exitCodesText)
	}
}

// Item 14: bkcheck version and --version print the version the trace
// files record (#meta.bkcheck-version) and the Go version.
func TestVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.itf.json")
	if code, _, errOut := runArgs(t, "check", "--variant", "no-recovery-fence", "-a", "2", "--trace-out", path); code != exitViolation {
		t.Fatalf("check: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Meta struct {
			Version string `json:"bkcheck-version"`
		} `json:"#meta"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Meta.Version == "" {
		t.Fatalf("the trace records no version: %v", err)
	}
	var first string
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		code, out, errOut := runArgs(t, args...)
		if code != exitOK || errOut != "" {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
		if !strings.HasPrefix(out, "bkcheck "+doc.Meta.Version+" (") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("%v prints %q; the trace records %q, Go is %s", args, out, doc.Meta.Version, runtime.Version())
		}
		if first == "" {
			first = out
		} else if out != first {
			t.Errorf("%v prints %q, version printed %q", args, out, first)
		}
	}
	if doc.Meta.Version != traces.Version {
		t.Errorf("the trace records %q, traces.Version is %q", doc.Meta.Version, traces.Version)
	}
	if code, _, errOut := runArgs(t, "version", "extra"); code != exitUsage || !strings.Contains(errOut, "takes no arguments") {
		t.Errorf("version extra: exit %d: %s", code, errOut)
	}
}

// Item 16: bkcheck trace alone (or with a word that is none of its
// commands) shows trace's commands, not the whole usage, and exits 2;
// trace -h and help trace show them too.
func TestTraceGroupUsage(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stderr bool
		first  string
	}{
		{[]string{"trace"}, exitUsage, true, "bkcheck trace: give a command\n"},
		{[]string{"trace", "draw"}, exitUsage, true, "bkcheck: unknown command \"trace draw\"\n"},
		{[]string{"trace", "-h"}, exitOK, false, "Usage: bkcheck trace COMMAND\n"},
		{[]string{"help", "trace"}, exitOK, false, "Usage: bkcheck trace COMMAND\n"},
	} {
		code, out, errOut := runArgs(t, c.args...)
		got, other := out, errOut
		if c.stderr {
			got, other = errOut, out
		}
		if code != c.code || other != "" || !strings.HasPrefix(got, c.first) {
			t.Errorf("%v: exit %d (want %d), stdout %q, stderr %q", c.args, code, c.code, out, errOut)
		}
		if !strings.Contains(got, "  bkcheck trace render [flags] FILE\n") || !strings.Contains(got, "bkcheck trace render -h") {
			t.Errorf("%v does not list trace render:\n%s", c.args, got)
		}
		if strings.Contains(got, "bkcheck check") || strings.Contains(got, "Exit codes") {
			t.Errorf("%v prints the whole usage:\n%s", c.args, got)
		}
	}
}

// Item 13: bkcheck replay reads a trace saved with a UTF-8 byte-order
// mark, and says of a JSON file without "#meta" that it is no trace
// bkcheck wrote (exit 2), not "unexpected end of JSON input".
func TestReplayBOMAndNoMeta(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../docs/traces/below-qw-ensemble-change.itf.json")
	if err != nil {
		t.Fatal(err)
	}
	bom := filepath.Join(dir, "bom.itf.json")
	os.WriteFile(bom, append([]byte("\ufeff"), b...), 0o644)
	if code, out, errOut := runArgs(t, "replay", bom); code != exitOK || !strings.HasPrefix(out, "confirmed: 6 states") {
		t.Errorf("replay of a trace with a BOM: exit %d: %s%s", code, out, errOut)
	}
	noMeta := writeFile(t, dir, "nometa.itf.json", `{"vars": [], "states": [{}]}`)
	code, _, errOut := runArgs(t, "replay", noMeta)
	if code != exitUsage || !strings.Contains(errOut, `the file has no "#meta": it is not an ITF trace written by bkcheck`) || strings.Contains(errOut, "unexpected end") {
		t.Errorf("replay of a file without #meta: exit %d: %s", code, errOut)
	}
}
