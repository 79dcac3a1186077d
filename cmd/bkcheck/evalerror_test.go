package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
)

// withPanickingInvariant registers, for the test, a built-in property
// whose evaluation panics once the ledger is closed: a bug in the model,
// met from the command line.
func withPanickingInvariant(t *testing.T) {
	t.Helper()
	saved := invariants.All
	invariants.All = append(slices.Clip(saved), invariants.Invariant{
		Name: "TestPanics", Statement: "panics once the ledger is closed",
		Holds: func(_ *spec.Params, s *spec.State) bool {
			if s.MetaStatus == spec.StatusClosed {
				panic("TestPanics: cannot evaluate a closed ledger")
			}
			return true
		},
	})
	t.Cleanup(func() { invariants.All = saved })
}

// TestModelPanicExit: a property that panics ends bkcheck check and
// simulate with the error verdict and TLC's exit code for an invariant's
// evaluation error (76), not a crash: the text names the panic, the state
// and the action that reached it, prints the trace and says where it was
// written; --json carries the same; a run directory reports it again on
// --resume.
func TestModelPanicExit(t *testing.T) {
	withPanickingInvariant(t)
	dir := t.TempDir()
	traceFile := filepath.Join(dir, "error.itf.json")
	code, out, errOut := runArgs(t, "check", "--invariants", "TypeOK,TestPanics", "--trace-out", traceFile)
	if code != exitInvariantError {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitInvariantError, out, errOut)
	}
	for _, want := range []string{
		"Error: the model panicked in Check: TestPanics: cannot evaluate a closed ledger\n",
		"The model failed checking the invariants in state ",
		", reached by ",
		"Error trace: ",
		"; the model failed on the last.\n",
		"1. <Initial state>",
		"Trace written to " + traceFile + " (bkcheck replay confirms the failure",
		"Where the model panicked:\n    goroutine ",
		"evalerror_test.go",
		"The verdict is error",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Counterexample") || strings.Contains(out, "No error has been found") {
		t.Errorf("the error reads as another verdict:\n%s", out)
	}
	if _, err := os.Stat(traceFile); err != nil {
		t.Errorf("no trace file: %v", err)
	}
	// The file records the failure: replay finds it again; the page says it.
	code, out, errOut = runArgs(t, "replay", traceFile)
	if code != exitOK || !strings.Contains(out, "the last state is where the model failed: the model panicked in Check: TestPanics") {
		t.Errorf("replay: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runArgs(t, "trace", "render", traceFile, "--format", "html")
	if code != exitOK || !strings.Contains(out, "model failure") {
		t.Errorf("render: exit %d", code)
	}

	code, out, _ = runArgs(t, "check", "--invariants", "TypeOK,TestPanics", "--json")
	res := lastJSON(t, out)
	v, _ := res["violation"].(map[string]any)
	e, _ := v["error"].(map[string]any)
	if code != exitInvariantError || res["status"] != "error" || e == nil || res["reason"] != e["text"] {
		t.Fatalf("--json: exit %d, result %v", code, res)
	}
	if e["call"] != "Check" || e["panic"] != true || e["message"] != "TestPanics: cannot evaluate a closed ledger" ||
		e["text"] != "the model panicked in Check: TestPanics: cannot evaluate a closed ledger" || !strings.Contains(e["stack"].(string), "evalerror_test.go") {
		t.Errorf("--json error %v", e)
	}
	if tr, _ := v["trace"].([]any); len(tr) < 2 || v["length"] != float64(len(tr)) || v["trace-file"] == nil {
		t.Errorf("--json trace: %v", v)
	}

	// On disk: the verdict is final, and --resume reports it again.
	run := filepath.Join(dir, "run")
	code, first, errOut := runArgs(t, "check", "--invariants", "TypeOK,TestPanics", "--dir", run)
	if code != exitInvariantError {
		t.Fatalf("--dir: exit %d\n%s%s", code, first, errOut)
	}
	code, again, errOut := runArgs(t, "check", "--resume", run)
	if code != exitInvariantError || !strings.Contains(again, "Error: the model panicked in Check") || strings.Contains(again, "Continue with") {
		t.Fatalf("--resume: exit %d\n%s%s", code, again, errOut)
	}
	trace := func(s string) string {
		_, s, _ = strings.Cut(s, "Error trace:")
		s, _, _ = strings.Cut(s, "Trace written")
		return s
	}
	if trace(again) != trace(first) {
		t.Errorf("the resumed run reports another trace:\n%s\nfirst:\n%s", again, first)
	}

	code, out, errOut = runArgs(t, "simulate", "--invariants", "TestPanics", "--traces", "2000", "--loss-rate", "0.1", "--trace-out", filepath.Join(dir, "walk.itf.json"))
	if code != exitInvariantError || !strings.Contains(out, "Error: the model panicked in Check") || !strings.Contains(out, "rerun it alone with: bkcheck simulate") {
		t.Fatalf("simulate: exit %d\n%s%s", code, out, errOut)
	}
}

// TestErrorExitCodes: the error verdict's code says what failed, as TLC's
// evaluation errors do.
func TestErrorExitCodes(t *testing.T) {
	for call, want := range map[string]int{"Init": 75, "Load": 75, "Successors": 75, "Weight": 75, "Check": 76, "CheckTerminal": 77} {
		if got := errorExitCode(&explorer.ModelError{Call: call}); got != want {
			t.Errorf("%s: exit %d, want %d", call, got, want)
		}
	}
}

// TestCELEvaluationError: a CEL property that cannot be evaluated (a
// client the parameters do not have, a division by zero) is an error in
// the property, not a violation of the protocol: exit 76, naming the
// property and the CEL error, with the trace to the state where it
// happened, which bkcheck replay confirms (issue #22, item 2). A constant
// unknown id is refused before the search (exit 2).
func TestCELEvaluationError(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ prop, cel string }{
		{`X=clients["c" + string(params.clients + 1)].lac >= 0`, "no such key: c3"},
		{`D=meta_version / (meta_version - meta_version) == 0`, "division by zero"},
	} {
		name, _, _ := strings.Cut(c.prop, "=")
		trace := filepath.Join(dir, name+".itf.json")
		code, out, errOut := runArgs(t, "check", "--invariant", c.prop, "--trace-out", trace)
		if code != exitInvariantError || !strings.Contains(out, "Error: "+name+" cannot be evaluated") || !strings.Contains(out, c.cel) || strings.Contains(out, "is violated") {
			t.Fatalf("%s: exit %d\n%s%s", name, code, out, errOut)
		}
		if code, out, errOut := runArgs(t, "replay", trace); code != 0 || !strings.Contains(out, "confirmed") {
			t.Errorf("%s: replay exit %d\n%s%s", name, code, out, errOut)
		}
	}
	code, _, errOut := runArgs(t, "check", "--invariant", `X=clients["c3"].lac >= 0`)
	if code != exitUsage || !strings.Contains(errOut, `X: clients["c3"]: the run has clients c1..c2`) {
		t.Errorf("a constant unknown id: exit %d\n%s", code, errOut)
	}
	// Under symmetry, a property naming a relabelled bookie or client is
	// refused before the search, every one in one message. simulate
	// refuses --symmetry itself (issue 38), and nothing else.
	args := []string{"--symmetry", "bookies,clients", "--invariant", `B=b_lac["b1"] >= 0`, "--invariant", `C=clients.c2.lac >= 0`}
	code, out, errOut := runArgs(t, append([]string{"check"}, args...)...)
	if code != exitUsage || !strings.Contains(errOut, `B: names "b1", which --symmetry bookies relabels`) || !strings.Contains(errOut, `C: names "c2", which --symmetry clients relabels`) || strings.Contains(errOut, "unknown flag") || out != "" {
		t.Errorf("check: a bookie named under symmetry: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runArgs(t, append([]string{"simulate", "--traces", "1"}, args...)...)
	if code != exitUsage || !strings.Contains(errOut, "--symmetry: is a setting of bkcheck check, not of simulate") || strings.Contains(errOut, "relabels") || out != "" {
		t.Errorf("simulate --symmetry: exit %d\n%s%s", code, out, errOut)
	}
}

// TestNothingChecked: a run that checks no property says so, instead of a
// bare "No error has been found" (issue #22, item 6).
func TestNothingChecked(t *testing.T) {
	code, out, _ := runArgs(t, "check", "--invariants", "none")
	if code != 0 || !strings.Contains(out, "No property was checked") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if _, out, _ := runArgs(t, "check"); strings.Contains(out, "No property was checked") {
		t.Errorf("the default run checks the shipped invariants:\n%s", out)
	}
}
