package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateCLI: a model trace's record is VALID; a changed return code
// makes it INVALID, named at its group with what the model could do
// instead; bad records are refused together, exit 2, nothing validated.
func TestValidateCLI(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runArgs(t, "validate", "--from-trace", "../../docs/traces/bugs/bk-2612.itf.json")
	if code != exitOK {
		t.Fatalf("--from-trace: exit %d: %s", code, errOut)
	}
	good := filepath.Join(dir, "good.jsonl")
	write(t, good, out)
	code, out, errOut = runArgs(t, "validate", "--witness", filepath.Join(dir, "w"), good)
	if code != exitValidateValid || !strings.Contains(out, "good.jsonl: VALID (14 groups") || !strings.Contains(out, "1 of 1 records VALID; the valid records took 12 actions of the models' 24") || !strings.Contains(out, "BookieSendsAddFencedResponse") {
		t.Fatalf("valid record: exit %d\n%s%s", code, out, errOut)
	}

	// The witness is a trace of the model that renders.
	if code, text, errOut := runArgs(t, "trace", "render", filepath.Join(dir, "w", "good.itf.json")); code != exitOK || !strings.Contains(text, "RecoveryClientClosesLedger") {
		t.Errorf("the witness: exit %d\n%s%s", code, text, errOut)
	}

	// The first fencing read's answer turned into an add's: the model
	// cannot send it.
	bad := filepath.Join(dir, "bad.jsonl")
	text := strings.Replace(readFile(t, good), `"rc":"EOK"`, `"rc":"EFenced"`, 1)
	write(t, bad, text)
	code, out, _ = runArgs(t, "validate", good, bad)
	for _, w := range []string{"bad.jsonl: INVALID", "the model follows the first 2 of 14 groups; group 3 (BookieSendsAddConfirmedResponse(b1, c1) e1)",
		"not matched: sent b1->c1 AddEntryResponse e1 EFenced", "what the model could do there instead:", "BookieSendsAddConfirmedResponse(b1, c1) e1: sent b1->c1 AddEntryResponse e1 EOK", "1 of 2 records VALID"} {
		if !strings.Contains(out, w) {
			t.Errorf("invalid record's report lacks %q:\n%s", w, out)
		}
	}
	if code != exitValidateInvalid {
		t.Errorf("invalid record: exit %d", code)
	}

	truncated := filepath.Join(dir, "truncated.jsonl")
	write(t, truncated, strings.Join(strings.Split(readFile(t, good), "\n")[:4], "\n"))
	other := filepath.Join(dir, "other.jsonl")
	write(t, other, strings.Replace(readFile(t, good), `"model":"current"`, `"model":"tla-4.13"`, 1))
	release := filepath.Join(dir, "release.jsonl")
	write(t, release, strings.Replace(readFile(t, good), `"source":"model-trace"`, `"source":"bookies","release":"4.17.1"`, 1))
	code, out, errOut = runArgs(t, "validate", good, truncated, other, release, filepath.Join(dir, "missing.jsonl"))
	if code != exitUsage || out != "" {
		t.Errorf("bad records: exit %d, stdout %q", code, out)
	}
	for _, w := range []string{"truncated.jsonl: not a valid record: truncated: no end line after 3 groups", `other.jsonl: the record is of model "tla-4.13"`,
		`release.jsonl: release 4.17.1 ran, but its params are of the model of "4.18.2"`, "4 of 5 records cannot be validated (none was):", "missing.jsonl: no such file or directory"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("the refusal lacks %q:\n%s", w, errOut)
		}
	}

	// The recorder's switches without --record are refused, each named.
	code, out, errOut = runArgs(t, "validate", "--out", dir, "--steer", "--delete-ledger", good)
	if code != exitUsage || out != "" {
		t.Errorf("recorder switches without --record: exit %d, stdout %q", code, out)
	}
	for _, w := range []string{"--out", "--steer", "--delete-ledger"} {
		if !strings.Contains(errOut, w) || !strings.Contains(errOut, "applies with --record only") {
			t.Errorf("the refusal lacks %s:\n%s", w, errOut)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
