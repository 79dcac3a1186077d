package main

// Tests of what a newcomer hit trying every command with bad input: each
// names the problem it pins.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/spec"
)

// Interrupted, bkcheck guarantees exits 130 and leaves the page alone.
func TestGuaranteesInterruptedLeavesPage(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "guarantees.md")
	os.WriteFile(page, []byte("the old page\n"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"guarantees", "--out", page}, &out, &errb)
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, exitInterrupted, errb.String())
	}
	if b, _ := os.ReadFile(page); string(b) != "the old page\n" {
		t.Fatalf("the page was rewritten: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("files written: %v", entries)
	}
}

// guarantees --out into a missing directory is a usage error, not a mkdir.
func TestGuaranteesOutMissingDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope", "g.md")
	code, _, errOut := runArgs(t, "guarantees", "--out", missing)
	if code != exitUsage || !strings.Contains(errOut, missing) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Dir(missing)); err == nil {
		t.Fatal("the directory was created")
	}
}

// An unwritable --trace-out is refused before the search (exit 2), naming
// the path given.
func TestTraceOutCheckedBeforeSearch(t *testing.T) {
	bad := "/nonexistent/dir/t.json"
	code, out, errOut := runArgs(t, "check", "--variant", "no-recovery-fence", "-a", "2", "--trace-out", bad)
	if code != exitUsage || out != "" || !strings.Contains(errOut, "--trace-out: cannot write "+bad) {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	code, _, errOut = runArgs(t, "check", "--trace-out", t.TempDir())
	if code != exitUsage || !strings.Contains(errOut, "is a directory") {
		t.Fatalf("a directory as --trace-out: exit %d: %s", code, errOut)
	}
}

// A counterexample found is printed even when its file cannot be written;
// the write error comes after it, and the exit code is still the verdict's.
func TestCounterexampleNotLostOnWriteError(t *testing.T) {
	rep, err := check.Run(context.Background(), check.Config{ModelConfig: check.ModelConfig{
		Params: spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1}, Invariants: []string{"EntriesReachWriteQuorum"}}})
	if err != nil || rep.Trace == nil {
		t.Fatalf("%v %v", err, rep)
	}
	var out, errb bytes.Buffer
	r := newReporter(&out, &errb, false)
	path := filepath.Join(t.TempDir(), "gone", "t.itf.json")
	code := finishCheck(r, rep, nil, path, false)
	if code != exitViolation {
		t.Errorf("exit %d, want %d", code, exitViolation)
	}
	if !strings.Contains(out.String(), "Invariant EntriesReachWriteQuorum is violated") || !strings.Contains(out.String(), "6. ") ||
		!strings.Contains(out.String(), "distinct states") {
		t.Errorf("the counterexample or the statistics are missing:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), path) {
		t.Errorf("the write error does not name %s: %q", path, errb.String())
	}
}

// sweep merge with a missing slice fails (exit 1), naming the points.
func TestSweepMergeMissingSliceFails(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "sweep.toml", "[fixed]\nclients = 2\nentries = 1\n[grid]\nbookies = [1, 2]\nwrite-quorum = [1]\nack-quorum = [1]\n")
	one := filepath.Join(dir, "s1")
	if code, _, errOut := runArgs(t, "sweep", file, "--out", one, "--shard", "1/2"); code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	code, _, errOut := runArgs(t, "sweep", "merge", one, "--out", filepath.Join(dir, "m"))
	if code != exitError || !strings.Contains(errOut, "1 of 2 points are in no slice (points 1)") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// A skipped sweep point says why in plain words.
func TestSweepSkippedReason(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "sweep.toml", "[fixed]\nclients = 2\n[grid]\nbookies = [1]\nwrite-quorum = [2]\nack-quorum = [3]\n")
	out := filepath.Join(dir, "out")
	if code, _, errOut := runArgs(t, "sweep", file, "--out", out); code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	r := readSweep(t, out)
	want := "ack-quorum: 3 exceeds the write quorum 2; write-quorum: 2 exceeds the number of bookies 1 (an ensemble holds Qw bookies at least)"
	if len(r.Points) != 1 || r.Points[0].Status != "skipped" || r.Points[0].Reason != want {
		t.Fatalf("got %+v, want reason %q", r.Points, want)
	}
}

// A flag that disagrees with a resumed run is named as the user typed it.
func TestResumeNamesFlagAsTyped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if code, _, errOut := runArgs(t, "check", "--bookies", "1", "-w", "1", "-a", "1", "--store", "badger", "--dir", dir); code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	code, _, errOut := runArgs(t, "check", "--resume", dir, "-w", "2", "--bookies=1")
	if code != exitUsage || !strings.Contains(errOut, "-w: 2 differs from the run's 1") || strings.Contains(errOut, "--w") || strings.Contains(errOut, "bookies") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// A bad flag value is explained, every bad flag is listed, and the whole
// flag list is not dumped.
func TestBadFlagValuesExplained(t *testing.T) {
	code, out, errOut := runArgs(t, "check", "--progress", "abc", "--bookies", "x", "--frobnicate", "-e", "0")
	if code != exitUsage || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{`--progress abc: "abc" is not a duration`, `--bookies x: "x" is not an integer`, "unknown flag --frobnicate", `-e: "0" is not a value it takes`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "--max-depth") || len(errOut) > 1000 {
		t.Errorf("the flag list was printed:\n%s", errOut)
	}
	if code, out, _ := runArgs(t, "check", "-h"); code != exitOK || !strings.Contains(out, "--max-depth") || !strings.Contains(out, "-w, --write-quorum Qw") {
		t.Errorf("-h: exit %d:\n%s", code, out)
	}
}

// An empty --invariants is not "check nothing": it is refused.
func TestEmptyInvariantsRefused(t *testing.T) {
	code, _, errOut := runArgs(t, "check", "--invariants=")
	if code != exitUsage || !strings.Contains(errOut, "--invariants") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, _, errOut = runArgs(t, "check", "-w", "0")
	if code != exitUsage || !strings.Contains(errOut, "-w: must be at least 1 (got 0)") || strings.Contains(errOut, "ensemble") {
		t.Fatalf("-w 0: exit %d: %s", code, errOut)
	}
}

// The default trace file is never overwritten silently, and is readable
// by everyone.
func TestDefaultTraceFileNotOverwritten(t *testing.T) {
	ignore, err := os.ReadFile("../../.gitignore")
	if err != nil || !strings.Contains(string(ignore), "bkcheck-trace*.itf.json") {
		t.Errorf(".gitignore does not ignore default trace files: %v", err)
	}
	t.Chdir(t.TempDir())
	args := []string{"check", "--invariants", "EntriesReachWriteQuorum"}
	for i := 0; i < 2; i++ {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitViolation {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	}
	for _, name := range []string{"bkcheck-trace.itf.json", "bkcheck-trace-2.itf.json"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v", name, fi.Mode().Perm())
		}
	}
}

// replay refuses a trace whose #meta was edited: parameters its states do
// not show, or a property bkcheck does not know (exit 2, the file is not
// a trace of a model bkcheck has).
func TestReplayRefusesEditedMeta(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.itf.json")
	if code, _, errOut := runArgs(t, "check", "--invariants", "EntriesReachWriteQuorum", "--trace-out", path); code != exitViolation {
		t.Fatalf("exit %d %s", code, errOut)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"bookies": 2`, `"bookies": 3`, "no b3, though #meta.params has 3"},
		{`"clients": 2`, `"clients": 4`, "no c3, though #meta.params has 4"},
		{`"invariant": "EntriesReachWriteQuorum"`, `"invariant": "NoSuchProperty"`, "NoSuchProperty"},
	} {
		edited := strings.Replace(string(orig), c.from, c.to, 1)
		if edited == string(orig) {
			t.Fatalf("%s not found in the trace", c.from)
		}
		bad := filepath.Join(t.TempDir(), "bad.itf.json")
		os.WriteFile(bad, []byte(edited), 0o644)
		code, _, errOut := runArgs(t, "replay", bad)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%s -> %s: exit %d: %s", c.from, c.to, code, errOut)
		}
	}
}

// A --dir that is a file is named as the problem (not --trace-out, whose
// default lies in it), before any banner, whatever else is given (issue
// #22, items 7 and 12).
func TestDirIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	for _, extra := range [][]string{
		{"--store", "badger"},
		{"--store", "badger", "--trace-out", "none"},
		{"--shard", "1/2"},
	} {
		args := append([]string{"check", "--dir", file}, extra...)
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		if code != exitUsage || out.Len() != 0 || !strings.Contains(errb.String(), "--dir: "+file+" is a file, not a directory") || strings.Contains(errb.String(), "--trace-out") {
			t.Errorf("%v: exit %d, stdout %q, stderr %s", args, code, out.String(), errb.String())
		}
	}
}

// Under --json a usage error also writes one JSON line to stdout, naming
// each problem with the setting as given (issue #22, item 12).
func TestUsageErrorJSON(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--json", "--bookies", "1", "-w", "3", "--frob"},
		{"simulate", "--json", "--traces", "10", "--frob"},
	} {
		code, out, errOut := runArgs(t, args...)
		if code != exitUsage || !strings.Contains(errOut, "unknown flag --frob") {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		m := lastJSON(t, out)
		probs, _ := m["problems"].([]any)
		if m["type"] != "usage-error" || m["exit-code"] != float64(exitUsage) || len(probs) == 0 || !strings.Contains(m["message"].(string), "--frob") {
			t.Fatalf("%v: %s", args, out)
		}
		if args[0] == "check" {
			if p := probs[1].(map[string]any); p["setting"] != "-w" {
				t.Errorf("the second problem names %v, want -w as given", p["setting"])
			}
		}
	}
}

// --resume of a finished run says that it reports the recorded result and
// searched nothing, in text and JSON (issue #22, item 12).
func TestResumeFinishedRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if code, _, errOut := runArgs(t, "check", "--bookies", "1", "-w", "1", "-a", "1", "--store", "badger", "--dir", dir); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, out, errOut := runArgs(t, "check", "--resume", dir)
	if code != exitOK || !strings.Contains(out, "The run in "+dir+" had already finished: this is its recorded result, and nothing was searched now.") || strings.Contains(out, "Finished in") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	_, out, _ = runArgs(t, "check", "--resume", dir, "--json")
	if m := lastJSON(t, out); m["already-finished"] != true || m["distinct"] != float64(799) {
		t.Fatalf("JSON result: %s", out)
	}
	// A search that ran says nothing of the kind.
	_, out, _ = runArgs(t, "check", "--bookies", "1", "-w", "1", "-a", "1", "--json")
	if _, ok := lastJSON(t, out)["already-finished"]; ok {
		t.Fatalf("a fresh search is marked already finished: %s", out)
	}
}

// A leads-to's counterexample says where its right side became owed, in
// the text output and in trace render's HTML (issue #22, item 11).
func TestLeadsToSaysWhereOwed(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.itf.json")
	code, out, errOut := runArgs(t, "check", "--invariants", "none", "--trace-out", trace,
		"--eventually", `RecoveryCloses=clients.exists(id, c, c.recovery_phase > 0) ~> meta_status == "STATUS_CLOSED"`)
	const owed = "RecoveryCloses became owed at state 3 (its left side held there, its right side did not) and is satisfied in no state from there to the last."
	if code != exitTerminal || !strings.Contains(out, owed) {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	_, html, _ := runArgs(t, "trace", "render", "--format", "html", trace)
	if !strings.Contains(html, `"owed-from":3`) {
		t.Error("the HTML page does not mark the step where it became owed")
	}
	_, text, _ := runArgs(t, "trace", "render", trace)
	if !strings.Contains(text, owed) {
		t.Errorf("trace render's text lacks the owed step:\n%s", text)
	}
}

// tiny is a model that checks in milliseconds.
var tiny = []string{"--bookies", "1", "-w", "1", "-a", "1"}

// Issue 38, item 1: a setting given as the default's name, or one the
// defaults clear because it has no effect with the other settings, is
// accepted and the run says so, by one rule for check's flags, --config
// and sweep; a check and a sweep point of the same settings get the same
// verdict.
func TestDefaultsOneRule(t *testing.T) {
	dir := t.TempDir()
	lossy := []string{"--crashes", "1", "--journal", "disabled", "--data-integrity"}
	for _, c := range []struct {
		name string
		args []string
		want []string // notes on stderr
	}{
		{"interleaved storage", append(slices.Clone(lossy), "--ledger-storage", "interleaved"),
			[]string{"bkcheck check: note: --data-integrity and --ledger-storage interleaved have no effect with these settings: the model is the same without them (with interleaved ledger storage the data-integrity check throws"}},
		{"explicit defaults", []string{"--journal", "synced", "--reformat-cookie", "deleted", "--ledger-storage", "db"},
			[]string{"note: --journal synced is the default", "note: --reformat-cookie deleted is the default", "note: --ledger-storage db is the default"}},
		{"a journal without crashes", []string{"--journal", "no-sync"},
			[]string{"note: --journal no-sync has no effect with these settings: the model is the same without it (a journal mode matters only with --crashes)"}},
		{"a boolean cleared", []string{"--data-integrity"},
			[]string{"note: --data-integrity has no effect with these settings"}},
		{"in a file", []string{"--config", writeFile(t, dir, "p.toml", "journal = \"synced\"\ndata-integrity = true\n")},
			[]string{"note: journal = synced in " + filepath.Join(dir, "p.toml") + " is the default", "note: data-integrity = true in " + filepath.Join(dir, "p.toml") + " has no effect"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runArgs(t, append(append([]string{"check"}, tiny...), c.args...)...)
			if code != exitOK && code != exitViolation || strings.Contains(errOut, "invalid settings") {
				t.Fatalf("exit %d: %s%s", code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
	// The same settings in a sweep: the same verdict and counts, and the
	// note, in results.json and on stderr.
	_, out, errOut := runArgs(t, append(append([]string{"check", "--json"}, tiny...), append(lossy, "--ledger-storage", "interleaved")...)...)
	want := lastJSON(t, out)
	file := writeFile(t, dir, "s.toml", "[fixed]\nbookies = 1\nwrite-quorum = 1\nack-quorum = 1\ncrashes = 1\njournal = \"disabled\"\ndata-integrity = true\n[grid]\nledger-storage = [\"interleaved\"]\n")
	res := filepath.Join(dir, "res")
	if code, _, errOut := runArgs(t, "sweep", file, "--out", res); code != exitOK || !strings.Contains(errOut, "bkcheck sweep: note: point 0: data-integrity = true and ledger-storage = interleaved have no effect") {
		t.Fatalf("sweep: exit %d: %s", code, errOut)
	}
	b, _ := os.ReadFile(filepath.Join(res, "results.json"))
	var got struct {
		Points []struct {
			Status   string
			Distinct float64
			Notes    []string
		}
	}
	if err := json.Unmarshal(b, &got); err != nil || len(got.Points) != 1 {
		t.Fatalf("%v: %s", err, b)
	}
	if p := got.Points[0]; p.Status != want["status"] || p.Distinct != want["distinct"] || len(p.Notes) != 1 {
		t.Errorf("sweep point %+v; check: %v, %v distinct (%s)", p, want["status"], want["distinct"], errOut)
	}
	// A zero the defaults would replace is refused everywhere.
	file = writeFile(t, dir, "z.toml", "[fixed]\nbookies = 1\nwrite-quorum = 1\nack-quorum = 1\n[grid]\nensemble = [0]\n")
	res = filepath.Join(dir, "res-zero") // a sweep never writes over results
	runArgs(t, "sweep", file, "--out", res)
	if r := readSweep(t, res); r.Points[0].Status != "skipped" || !strings.Contains(r.Points[0].Reason, `ensemble: "0" is not a value it takes`) {
		t.Errorf("ensemble = 0 in a sweep: %+v", r.Points[0])
	}
}

// Issue 38, item 6: --max-states and --max-depth take 0, the default (no
// bound), and a negative value gets one message saying >= 0.
func TestBoundsZeroIsNoBound(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string // the one problem, if any
	}{
		{[]string{"--max-states", "0"}, exitOK, ""},
		{[]string{"--max-depth", "0"}, exitOK, ""},
		{[]string{"--max-states", "-5"}, exitUsage, "--max-states: must be >= 0 (got -5)"},
		{[]string{"--max-depth", "-5"}, exitUsage, "--max-depth: must be >= 0 (got -5)"},
		{[]string{"--local-shards", "-1"}, exitUsage, "--local-shards: must be >= 1 (got -1)"},
	} {
		code, _, errOut := runArgs(t, append(append([]string{"check"}, tiny...), c.args...)...)
		if code != c.code || c.msg != "" && errOut != "bkcheck check: invalid settings: "+c.msg+"\n" {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, c.code, errOut)
		}
	}
	_, help, _ := runArgs(t, "check", "-h")
	if !strings.Contains(help, "(0, the default: no bound)") {
		t.Error("check -h does not say what 0 means for --max-states and --max-depth")
	}
}

// Issue 38, item 7: a CEL property's problem is listed with the other
// settings' in the one message.
func TestCELProblemWithOthers(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"check", "-a", "0", "--probe", "P=nosuch"},
			[]string{"-a: must be at least 1 (got 0)", "--probe: P:1:1: undeclared reference to 'nosuch'"}},
		{[]string{"check", "--bookies", "0", "--clients", "9", "--invariant", "Q=1"},
			[]string{"--bookies: must be between 1 and 8 (got 0)", "--clients: must be between 1 and 4 (got 9)", "--invariant: Q:1:1: the expression is an int"}},
		// Ids are checked against the bookies given when that is valid.
		{[]string{"check", "--bookies", "3", "-a", "0", "--probe", `B=b_fenced["b4"]`},
			[]string{"-a: must be at least 1 (got 0)", `--probe: B: b_fenced["b4"]: the run has bookies b1..b3`}},
		{[]string{"simulate", "-a", "0", "--probe", "P=nosuch"},
			[]string{"-a: must be at least 1 (got 0)", "--probe: P:1:1: undeclared reference to 'nosuch'"}},
		{[]string{"check", "--model", "v4.13", "-a", "0", "--probe", "P=nosuch"},
			[]string{"-a: must be at least 1 (got 0)", "--probe: P:1:1: undeclared reference to 'nosuch'"}},
	} {
		code, out, errOut := runArgs(t, c.args...)
		if code != exitUsage || out != "" || strings.Count(errOut, "invalid settings") != 1 {
			t.Errorf("%v: exit %d, stdout %q: %s", c.args, code, out, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, "  - "+w) {
				t.Errorf("%v: the message lacks %q:\n%s", c.args, w, errOut)
			}
		}
	}
}

// Issue 38, item 10: a repeated --symmetry element, --memory 0 and an
// existing --trace-out file are refused before anything runs, and the
// file is left alone.
func TestRefusedBeforeTheRun(t *testing.T) {
	existing := writeFile(t, t.TempDir(), "t.itf.json", "mine\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--symmetry", "bookies,bookies"}, `"bookies,bookies" names bookies twice`},
		{[]string{"check", "--symmetry", "none,clients"}, `"none,clients" combines none with clients`},
		{[]string{"check", "--memory", "0"}, "--memory: is below the 64MiB minimum (got 0); leave the setting out"},
		{[]string{"check", "--fingerprint", "0"}, "--fingerprint: must be 64, 96 or 128 (got 0)"},
		{[]string{"check", "--variant", "no-recovery-fence", "-a", "2", "--trace-out", existing}, "--trace-out: " + existing + " already exists; remove it or give another file"},
		{[]string{"simulate", "--trace-out", existing}, "--trace-out: " + existing + " already exists"},
	} {
		code, out, errOut := runArgs(t, c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %d bytes on stdout: %s", c.args, code, len(out), errOut)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "mine\n" {
		t.Errorf("the existing trace was overwritten: %q", b)
	}
	_, help, _ := runArgs(t, "check", "-h")
	if !strings.Contains(help, "at least 64MiB") || !strings.Contains(help, "not given: 2GiB") {
		t.Errorf("check -h does not say --memory's range and default")
	}
}

// Issue 38, item 17: a --dir that cannot be created or written, or that
// holds a run, is refused before the banner (exit 2, nothing written);
// a sweep's problems are listed under one "invalid settings".
func TestDirRefusedBeforeBanner(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "f", "")
	run1 := filepath.Join(dir, "run")
	if code, _, errOut := runArgs(t, append(append([]string{"check"}, tiny...), "--dir", run1)...); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	cases := []struct {
		dir, want string
	}{
		{filepath.Join(file, "sub"), "--dir: cannot create " + filepath.Join(file, "sub") + ": " + file + " is not a directory"},
		{run1, "--dir: " + run1 + " already holds a run; continue it with --resume " + run1},
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		cases = append(cases, struct{ dir, want string }{filepath.Join(ro, "run"), "--dir: cannot create " + filepath.Join(ro, "run")})
	}
	for _, c := range cases {
		code, out, errOut := runArgs(t, append(append([]string{"check"}, tiny...), "--dir", c.dir)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "--trace-out") {
			t.Errorf("--dir %s: exit %d, stdout %q: %s", c.dir, code, out, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ro", "run")); err == nil {
		t.Error("the unwritable --dir was created")
	}
	bad := writeFile(t, dir, "bad.toml", "[fixed]\nclients = 2\n[grid]\nbookies = []\nnope = [2]\n")
	code, out, errOut := runArgs(t, "sweep", bad, "--jobs", "0", "--out", filepath.Join(dir, "out"))
	if code != exitUsage || out != "" || strings.Count(errOut, "invalid settings") != 1 ||
		!strings.Contains(errOut, "  - "+bad+": bookies: [grid]: empty list\n") || !strings.Contains(errOut, "  - "+bad+": nope: [grid] has no such setting") || !strings.Contains(errOut, "--jobs: must be >= 1") {
		t.Errorf("sweep: exit %d, stdout %q: %s", code, out, errOut)
	}
}

// TestValueOutsideDomainRefused: a value a setting does not take is
// refused whatever the other settings, even where the setting has no
// effect (issue 47, part 4, item 6); a value it takes is accepted there
// with a note.
func TestValueOutsideDomainRefused(t *testing.T) {
	for _, c := range [][]string{
		{"--journal", "foo"}, {"--reformat-cookie", "foo"}, {"--ledger-storage", "foo"},
		{"--max-ensemble-changes", "-1"}, {"--auditor-verification-percentage", "50"},
	} {
		code, _, errOut := runArgs(t, append([]string{"check", "--bookies", "2", "-w", "2", "-a", "2", "--trace-out", "none"}, c...)...)
		if code != exitUsage || !strings.Contains(errOut, c[0]+": must be") {
			t.Errorf("%v: exit %d:\n%s", c, code, errOut)
		}
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "p.toml")
	if err := os.WriteFile(cfg, []byte("journal = \"foo\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runArgs(t, "check", "--config", cfg, "--trace-out", "none"); code != exitUsage || !strings.Contains(errOut, "must be synced, no-sync or disabled") {
		t.Errorf("--config with journal = \"foo\": exit %d:\n%s", code, errOut)
	}
	if code, _, errOut := runArgs(t, "check", "--bookies", "2", "-w", "2", "-a", "2", "--trace-out", "none", "--max-states", "10", "--journal", "no-sync"); code == exitUsage || !strings.Contains(errOut, "note: --journal no-sync has no effect") {
		t.Errorf("--journal no-sync without crashes: exit %d:\n%s", code, errOut)
	}
}
