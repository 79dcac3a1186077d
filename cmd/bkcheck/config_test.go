package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigStrict: unknown or misspelt keys are errors naming the key
// and its line, all at once; bad values are reported like bad flags.
func TestConfigStrict(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "bad.toml", "bookies = 2\nwrite-qourum = 2\n\n[runs.x]\nack-quorom = 1\n")
	code, _, errOut := runArgs(t, "check", "--config", path, "--run", "x")
	if code != exitUsage || !strings.Contains(errOut, `bad.toml:2: unknown key "write-qourum"`) || !strings.Contains(errOut, `bad.toml:5: unknown key "runs.x.ack-quorom"`) {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	path = writeFile(t, dir, "values.toml", "bookies = 0\nack-quorum = 3\nvariant = \"nope\"\n")
	code, _, errOut = runArgs(t, "check", "--config", path)
	for _, want := range []string{"bookies in " + path + ": must be between", "ack-quorum in " + path + ": 3 exceeds", `variant in ` + path + `: unknown variant "nope"`} {
		if code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, stderr lacks %q:\n%s", code, want, errOut)
		}
	}
}

// TestConfigRunsAndOverrides: named runs inherit the top-level settings
// and the command line overrides the file.
func TestConfigRunsAndOverrides(t *testing.T) {
	path := writeFile(t, t.TempDir(), "runs.toml", "bookies = 2\nwrite-quorum = 2\nack-quorum = 2\n\n[runs.fence]\nvariant = \"no-recovery-fence\"\n\n[runs.ref]\nentries = 1\n")
	code, out, _ := runArgs(t, "check", "--config", path, "--run", "fence", "--json")
	if res := lastJSON(t, out); code != exitViolation || res["distinct"] != 142893.0 {
		t.Fatalf("fence run: exit %d, %v", code, res)
	}
	code, out, _ = runArgs(t, "check", "--config", path, "--run", "fence", "-a", "1", "--json")
	if res := lastJSON(t, out); code != exitOK || res["distinct"] != float64(tlcFigures(t, "tlc-b2-w2-a1").Distinct) {
		t.Fatalf("-a 1 should override the file: exit %d, %v", code, res)
	}
	if code, _, errOut := runArgs(t, "check", "--config", path); code != exitUsage || !strings.Contains(errOut, "choose one with --run") {
		t.Fatalf("no --run: exit %d %s", code, errOut)
	}
}

// TestRegress runs the fast regression suite, then a copy with one
// doctored expectation, which must be reported as a drift.
func TestRegress(t *testing.T) {
	// The historical bugs run in package bugs (TestBugs).
	args := []string{"regress", "--no-bugs", "../../testdata/regress"}
	if testtier.IsLong() {
		args = append(args, "--all")
	}
	code, out, errOut := runArgs(t, args...)
	if code != exitOK || !strings.Contains(out, "0 drifted") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	dir := t.TempDir()
	src, err := os.ReadFile("../../testdata/regress/variants.toml")
	if err != nil {
		t.Fatal(err)
	}
	// The doctored copy keeps the file's header and no-recovery-fence-2614
	// alone: its other cases would only be searched again.
	header, rest, _ := strings.Cut(string(src), "\n[runs.")
	_, doctored, ok := strings.Cut("[runs."+rest, "[runs.no-recovery-fence-2614]")
	if !ok {
		t.Fatal("variants.toml has no case no-recovery-fence-2614")
	}
	doctored, _, _ = strings.Cut(doctored, "\n[runs.")
	doctored = header + "\n[runs.no-recovery-fence-2614]" + strings.Replace(doctored, "expect-distinct = 142893", "expect-distinct = 142894", 1) + "\n"
	writeFile(t, dir, "variants.toml", doctored)
	code, out, _ = runArgs(t, "regress", "--no-bugs", dir)
	if code != exitError || !strings.Contains(out, "DRIFT variants.toml:no-recovery-fence-2614: distinct 142893, expected 142894") || !strings.Contains(out, "1 drifted") {
		t.Fatalf("doctored expectation: exit %d:\n%s", code, out)
	}
}
