package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/regress"
)

func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if len(args) > 0 && args[0] == "check" && !slices.Contains(args, "--trace-out") {
		args = append(args, "--trace-out", filepath.Join(t.TempDir(), "trace.itf.json"))
	}
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// lastJSON decodes the last line of NDJSON output.
func lastJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("not a JSON line: %q", l)
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// tlcFigures returns TLC's figures for a run of testdata/regress/tlc.toml
// or tlc413.toml, the files that keep them.
func tlcFigures(t *testing.T, run string) regress.Expect {
	t.Helper()
	for _, file := range []string{"tlc.toml", "tlc413.toml"} {
		cases, err := regress.LoadFile("../../testdata/regress/" + file)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if c.Name == run {
				return c.Expect
			}
		}
	}
	t.Fatalf("no run %s in tlc.toml or tlc413.toml", run)
	return regress.Expect{}
}

// TestDefaultCheckIsOK: the README's first command checks TLC's
// 2-bookie, Qw 2, Qa 1 set and finds TLC's figures.
func TestDefaultCheckIsOK(t *testing.T) {
	code, out, _ := runArgs(t, "check", "--json")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	res := lastJSON(t, out)
	tlc := tlcFigures(t, "tlc-b2-w2-a1")
	if res["type"] != "result" || res["status"] != "ok" || res["distinct"] != float64(tlc.Distinct) || res["generated"] != float64(tlc.Generated) ||
		res["depth"] != float64(tlc.Depth) || res["violation"] != nil {
		t.Fatalf("result %v, TLC %+v", res, tlc)
	}
}

func TestViolationEndToEnd(t *testing.T) {
	args := []string{"check", "--bookies", "2", "-w", "2", "-a", "2", "--variant", "no-recovery-fence"}
	code, out, _ := runArgs(t, append(args, "--json")...)
	if code != exitViolation {
		t.Fatalf("exit %d, want %d", code, exitViolation)
	}
	res := lastJSON(t, out)
	v, _ := res["violation"].(map[string]any)
	if res["status"] != "violation" || v == nil || v["invariant"] != "NoDivergenceBetweenClientAndMetaData" || v["length"] != 14.0 {
		t.Fatalf("result %v", res)
	}
	if steps, _ := v["trace"].([]any); len(steps) != 14 {
		t.Fatalf("trace has %d steps", len(steps))
	}
	code, out, _ = runArgs(t, args...)
	if code != exitViolation || !strings.Contains(out, "Invariant NoDivergenceBetweenClientAndMetaData is violated") ||
		!strings.Contains(out, "14. RecoveryClientClosesLedger(c2)") {
		t.Fatalf("text output:\n%s", out)
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in the result status or stderr
	}{
		{"deadlock", []string{"check", "--bookies", "1", "-w", "1", "--check-deadlock", "--json"}, exitDeadlock, "violation"},
		{"max-depth", []string{"check", "--max-depth", "5", "--json"}, exitUnknown, "unknown"},
		{"max-states", []string{"check", "--max-states", "1000", "--json"}, exitUnknown, "unknown"},
		{"max-depth beyond the space", []string{"check", "--bookies", "1", "-w", "1", "--max-depth", "40", "--json"}, exitOK, "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, _ := runArgs(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d", code, tc.code)
			}
			if res := lastJSON(t, out); res["status"] != tc.want {
				t.Fatalf("status %v, want %s", res["status"], tc.want)
			}
		})
	}
}

// TestUsageListsEveryProblem: one message, every problem, exit 2, no output.
func TestUsageListsEveryProblem(t *testing.T) {
	code, out, errOut := runArgs(t, "check", "--clients", "0", "-w", "2", "-a", "3", "--bookies", "1",
		"--invariants", "TypeOK,Bogus", "--variant", "nope", "--max-states", "-1")
	if code != exitUsage || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"--clients: must be between 1 and 4 (got 0)", "-a: 3 exceeds the write quorum 2", "-w: 2 exceeds the number of bookies 1",
		"--invariants: unknown invariant(s) Bogus", `--variant: unknown variant "nope"`, "--max-states: must be >= 0 (got -1)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// Budgets that could never be spent, a worker count beyond reason, a
	// Java-only variant on the spec's writer.
	code, _, errOut = runArgs(t, "check", "--bookies", "2", "--disk-full", "3", "--read-only", "3", "--workers", "100000", "--variant", "callbacks-after-unset")
	if code != exitUsage {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--disk-full: 3 exceeds the number of bookies 2", "--read-only: 3 exceeds the number of bookies 2",
		"--workers: at most 1024 (got 100000)", "--variant: callbacks-after-unset changes the Java client's add path: it needs --add-path java"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// Explicit zeros and empty values that would silently mean "the
	// default", and negative bounds (0 is no bound, the default: accepted).
	code, _, errOut = runArgs(t, "check", "--max-depth", "-1", "--max-states", "-1", "--local-shards", "0", "--trace-out", "", "--exclude-actions=")
	if code != exitUsage {
		t.Fatalf("explicit zeros: exit %d", code)
	}
	for _, want := range []string{"--max-depth: must be >= 0 (got -1)", "--max-states: must be >= 0 (got -1)", "--local-shards: must be >= 1 (got 0)",
		"--trace-out: is empty", "--exclude-actions: is empty"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// A setting the model clears runs, and says so (issue 38, item 1).
	if code, _, errOut := runArgs(t, "check", "--max-ensemble-changes", "5"); code != exitOK || !strings.Contains(errOut, "note: --max-ensemble-changes 5 has no effect with these settings") {
		t.Errorf("--max-ensemble-changes without --add-path java: exit %d, %s", code, errOut)
	}
	// The recovery read and checkpoint settings: a bad mode, a journal the
	// checkpoint model does not cover, a variant that needs --checkpoints.
	code, _, errOut = runArgs(t, "check", "--recovery-read", "bogus", "--crashes", "1", "--checkpoints", "--journal", "no-sync")
	if code != exitUsage {
		t.Fatalf("recovery read and checkpoints: exit %d", code)
	}
	for _, want := range []string{`--recovery-read: must be parallel or sequence (got "bogus")`, "--checkpoints: needs --journal synced"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// AutoRecovery's settings: every problem in one message.
	code, _, errOut = runArgs(t, "check", "--autorecovery", "--clients", "1", "--bookies", "3", "-e", "3", "-w", "2",
		"--auditor-periodic-check", "bogus", "--auditor-verification-percentage", "50")
	if code != 2 {
		t.Fatalf("AutoRecovery's bad settings: exit %d, want 2\n%s", code, errOut)
	}
	// (Striping, -e 3 -w 2, is no problem: the worker copies striped fragments.)
	if strings.Contains(errOut, "E = Qw") {
		t.Errorf("AutoRecovery refuses striping:\n%s", errOut)
	}
	for _, want := range []string{"--autorecovery: needs --clients 2 or more",
		`--auditor-periodic-check: must be on or off (got "bogus")`, "--auditor-verification-percentage: must be 0 or 100 (got 50)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("AutoRecovery's bad settings: the message lacks %q:\n%s", want, errOut)
		}
	}
	// A decommission needs AutoRecovery and a bookie that can go down: both
	// said at once.
	code, _, errOut = runArgs(t, "check", "--decommission")
	if code != 2 || !strings.Contains(errOut, "--decommission: needs --autorecovery") || !strings.Contains(errOut, "--decommission: needs --crashes or --disk-loss") {
		t.Errorf("--decommission alone: exit %d, want 2 and both problems:\n%s", code, errOut)
	}
	code, _, errOut = runArgs(t, "check", "--variant", "skip-inconsistent-range", "--autorecovery=false")
	if code != 2 || !strings.Contains(errOut, "needs --autorecovery") {
		t.Errorf("skip-inconsistent-range without --autorecovery: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runArgs(t, "check", "--variant", "checkpoint-flushes-index"); code != exitUsage || !strings.Contains(errOut, "checkpoint-flushes-index changes what a checkpoint keeps: it needs --checkpoints") {
		t.Errorf("--variant checkpoint-flushes-index without --checkpoints: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runArgs(t, "simulate", "--trace-out", ""); code != exitUsage || !strings.Contains(errOut, "--trace-out: is empty") {
		t.Errorf("simulate --trace-out '': exit %d, %s", code, errOut)
	}
	if code, _, _ := runArgs(t, "frobnicate"); code != exitUsage {
		t.Errorf("unknown command: exit %d", code)
	}
	if code, _, _ := runArgs(t, "check", "--no-such-flag"); code != exitUsage {
		t.Errorf("unknown flag: exit %d", code)
	}
}

func TestJSONProgressEvents(t *testing.T) {
	code, out, _ := runArgs(t, "check", "--json", "--progress", "1ns")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	events := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev["type"] == "progress" {
			events++
			for _, k := range []string{"depth", "distinct", "generated", "queue", "distinct-per-s", "elapsed-s", "rss-bytes"} {
				if _, ok := ev[k]; !ok {
					t.Fatalf("progress event lacks %s: %v", k, ev)
				}
			}
		}
	}
	if events == 0 {
		t.Fatal("no progress events")
	}
	if res := lastJSON(t, out); res["type"] != "result" || res["collision-probability"] == nil {
		t.Fatalf("last line %v", res)
	}
}

func TestListings(t *testing.T) {
	for cmd, want := range map[string][]string{
		"variants":   {"reference", "no-recovery-fence", "gwq", "source:"},
		"invariants": {"TypeOK", "EntriesReachWriteQuorum (invariant and terminal-state property)", "AckedEntriesHaveAckQuorumCopies"},
		"actions":    {"ClientChangesEnsemble", "BookieRejoinsEmpty", "RecoveryClientClosesLedger"},
	} {
		code, out, _ := runArgs(t, cmd)
		if code != exitOK {
			t.Fatalf("%s: exit %d", cmd, code)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s output lacks %q", cmd, w)
			}
		}
	}
}

// TestTraceFileReplayAndRender: a violation writes an ITF trace that
// replay confirms and every renderer reads; a trace with one step edited
// is rejected, naming that step.
func TestTraceFileReplayAndRender(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.itf.json")
	code, out, _ := runArgs(t, "check", "--bookies", "2", "-w", "2", "-a", "2", "--variant", "no-recovery-fence", "--json", "--trace-out", path)
	if code != exitViolation || lastJSON(t, out)["trace-file"] != path {
		t.Fatalf("exit %d, %s", code, out)
	}
	if code, out, errOut := runArgs(t, "replay", path); code != exitOK || !strings.Contains(out, "confirmed: 14 states") {
		t.Fatalf("replay: exit %d %s %s", code, out, errOut)
	}
	for _, format := range []string{"text", "mermaid", "dot"} {
		code, out, errOut := runArgs(t, "trace", "render", path, "--format", format)
		if code != exitOK || len(out) < 200 {
			t.Fatalf("render %s: exit %d %s", format, code, errOut)
		}
		switch format {
		case "mermaid":
			for _, want := range []string{"sequenceDiagram", "participant meta as metadata store", "-x", "Note over c1,b2: state 14 violates NoDivergenceBetweenClientAndMetaData"} {
				if !strings.Contains(out, want) {
					t.Errorf("mermaid lacks %q", want)
				}
			}
		case "dot":
			if !strings.HasPrefix(out, "digraph trace {") || !strings.Contains(out, "color=red") {
				t.Errorf("dot output:\n%s", out)
			}
		}
	}
	// Edit step 11: b2 stores the entry under another LAC.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	states := doc["states"].([]any)
	st := states[10].(map[string]any)
	st["meta_version"] = 7.0
	edited, _ := json.Marshal(doc)
	bad := filepath.Join(t.TempDir(), "bad.itf.json")
	os.WriteFile(bad, edited, 0o644)
	code, _, errOut := runArgs(t, "replay", bad)
	if code != exitError || !strings.Contains(errOut, "step 11:") || !strings.Contains(errOut, "meta_version") {
		t.Fatalf("edited trace: exit %d, %s", code, errOut)
	}
	if code, _, _ := runArgs(t, "replay", filepath.Join(t.TempDir(), "missing.itf.json")); code != exitUsage {
		t.Errorf("missing file: exit %d", code)
	}
}

// TestSimulateEndToEnd: bkcheck simulate reports the violating walk's seed,
// writes a trace that replay confirms, and reports no violation as unknown.
func TestSimulateEndToEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.itf.json")
	code, out, errOut := runArgs(t, "simulate", "--bookies", "2", "-w", "2", "-a", "2", "--variant", "no-recovery-fence",
		"--seed", "421600", "--traces", "500", "--depth", "40", "--json", "--trace-out", path)
	res := lastJSON(t, out)
	v, _ := res["violation"].(map[string]any)
	if code != exitViolation || v == nil || v["walk-seed"] != 421677.0 || v["trace-file"] != path {
		t.Fatalf("exit %d, %v %s", code, res, errOut)
	}
	if code, out, _ := runArgs(t, "replay", path); code != exitOK {
		t.Fatalf("replay of the simulated trace: exit %d %s", code, out)
	}
	code, out, _ = runArgs(t, "simulate", "--traces", "50", "--json")
	if res := lastJSON(t, out); code != exitUnknown || res["status"] != "unknown" || res["walks"] != 50.0 {
		t.Fatalf("quiet simulation: exit %d %v", code, res)
	}
	if code, _, errOut := runArgs(t, "simulate"); code != exitUsage || !strings.Contains(errOut, "--traces") {
		t.Fatalf("no bound: exit %d %s", code, errOut)
	}
	// Biased walks: the rerun command keeps the bias, and a rate out of
	// range is named along with the other problems.
	code, out, _ = runArgs(t, "simulate", "--bookies", "2", "-w", "2", "-a", "2", "--variant", "no-recovery-fence",
		"--seed", "87900", "--traces", "100", "--depth", "40", "--loss-rate", "0.1", "--json", "--trace-out", "none")
	res = lastJSON(t, out)
	v, _ = res["violation"].(map[string]any)
	if code != exitViolation || v == nil || v["rerun"] != "bkcheck simulate --bookies 2 --clients 2 --ensemble 2 --write-quorum 2 --ack-quorum 2 --entries 1 --inflight 1 --variant no-recovery-fence --invariants TypeOK,NoDivergenceBetweenClientAndMetaData,AllAckedEntriesAreReadable --seed 87953 --traces 1 --depth 40 --loss-rate 0.1" {
		t.Fatalf("biased simulation: exit %d %v", code, res)
	}
	code, _, errOut = runArgs(t, "simulate", "--traces", "1", "--loss-rate", "1", "--depth", "0")
	if code != exitUsage || !strings.Contains(errOut, "--loss-rate: must be in [0, 1) (got 1)") || !strings.Contains(errOut, `--depth: "0" is not a value it takes`) {
		t.Fatalf("bad loss rate: exit %d %s", code, errOut)
	}
}
