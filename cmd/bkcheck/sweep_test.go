package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/sweep"
)

const testSweep = `
[fixed]
clients = 2
entries = 1
invariants = ["EntriesReachWriteQuorum"]
max-states = 400000

[grid]
bookies = {from = 1, to = 2}
write-quorum = [1, 2]
variant = ["reference", "gwq"]
ack-quorum = [1]
`

func readSweep(t *testing.T, dir string) sweep.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r sweep.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	for i := range r.Points {
		r.Points[i].ElapsedS = 0
	}
	return r
}

// TestSweepShardsMerge: an 8-point sweep gives the expected table, invalid
// points are skipped with the reason, and shards 1/3, 2/3, 3/3 merged give
// exactly the unsharded result.
func TestSweepShardsMerge(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "sweep.toml", testSweep)
	whole := filepath.Join(dir, "whole")
	if code, out, errOut := runArgs(t, "sweep", file, "--out", whole); code != exitOK {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
	r := readSweep(t, whole)
	if r.Total != 8 || len(r.Points) != 8 {
		t.Fatalf("%d points of %d", len(r.Points), r.Total)
	}
	verdicts := map[string]int{}
	for _, p := range r.Points {
		verdicts[p.Status]++
		if p.Settings["bookies"] == "1" && p.Settings["write-quorum"] == "2" && (p.Status != "skipped" || !strings.Contains(p.Reason, "exceeds the number of bookies")) {
			t.Errorf("point %d: %s %q, want skipped: E > bookies", p.Index, p.Status, p.Reason)
		}
		if p.Settings["bookies"] == "2" && p.Settings["write-quorum"] == "2" && p.Settings["variant"] == "reference" &&
			(p.Status != "violation" || p.Invariant != "EntriesReachWriteQuorum" || p.Length != 6 || p.TraceFile == "") {
			t.Errorf("point %d: %+v, want the 6-state violation with a trace file", p.Index, p)
		}
		if p.Settings["bookies"] == "2" && p.Settings["write-quorum"] == "2" && p.Settings["variant"] == "gwq" && (p.Status != "ok" || p.Distinct != 284861) {
			t.Errorf("point %d: %+v, want ok with 284861 states", p.Index, p)
		}
	}
	if verdicts["skipped"] != 2 {
		t.Errorf("verdicts %v", verdicts)
	}
	for _, f := range []string{"results.md", "results.csv"} {
		b, err := os.ReadFile(filepath.Join(whole, f))
		if err != nil || !strings.Contains(string(b), "EntriesReachWriteQuorum") {
			t.Errorf("%s: %v", f, err)
		}
	}
	var shardDirs []string
	for i := 1; i <= 3; i++ {
		d := filepath.Join(dir, "shard", string(rune('0'+i)))
		shardDirs = append(shardDirs, d)
		if code, _, errOut := runArgs(t, "sweep", file, "--out", d, "--shard", string(rune('0'+i))+"/3"); code != exitOK {
			t.Fatalf("shard %d: exit %d %s", i, code, errOut)
		}
	}
	merged := filepath.Join(dir, "merged")
	if code, _, errOut := runArgs(t, append(append([]string{"sweep", "merge"}, shardDirs...), "--out", merged)...); code != exitOK {
		t.Fatalf("merge: exit %d %s", code, errOut)
	}
	m := readSweep(t, merged)
	m.Shard, r.Shard = "", ""
	mb, _ := json.Marshal(m)
	rb, _ := json.Marshal(r)
	if string(mb) != string(rb) {
		t.Fatalf("merged shards differ from the unsharded sweep:\n%s\n%s", mb, rb)
	}
	// A Slurm array task picks its slice from the environment.
	t.Setenv("SLURM_ARRAY_TASK_ID", "2")
	t.Setenv("SLURM_ARRAY_TASK_MIN", "1")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "3")
	env := filepath.Join(dir, "env")
	if code, out, _ := runArgs(t, "sweep", file, "--out", env); code != exitOK || !strings.Contains(out, "shard 2/3") {
		t.Fatalf("slurm env: exit %d %s", code, out)
	}
}

// TestSweepInterruptedAndNoOverwrite: an interrupted sweep says how many
// points finished and which the interrupt stopped (exit 130), and a sweep
// into a directory holding a sweep's results is refused before it runs.
func TestSweepInterruptedAndNoOverwrite(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "sweep.toml", testSweep)
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr strings.Builder
	if code := run(ctx, []string{"sweep", file, "--out", out}, &stdout, &stderr); code != exitInterrupted ||
		!strings.Contains(stdout.String(), "interrupted: 0 of 8 points finished (shard 1/1), 8 stopped by the interrupt and unknown (points 0, 1, 2, 3, 4, 5, 6, 7)") {
		t.Errorf("exit %d:\n%s%s", code, stdout.String(), stderr.String())
	}
	code, _, errOut := runArgs(t, "sweep", file, "--out", out)
	if code != exitUsage || !strings.Contains(errOut, "holds the results of a sweep (point-") && !strings.Contains(errOut, "holds the results of a sweep (results.") {
		t.Errorf("a sweep into %s, which holds results: exit %d:\n%s", out, code, errOut)
	}
}
