package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestV413EndToEnd: bkcheck check --model v4.13 finds TLC's figures and
// TLC's counterexample length, prints the counterexample as text and in
// JSON, writes no trace file, and names the settings the model lacks.
func TestV413EndToEnd(t *testing.T) {
	base := []string{"check", "--model", "v4.13", "--bookies", "2", "-w", "2", "-a", "2", "--entries", "1"}
	code, out, errOut := runArgs(t, append(base, "--recovery-reads-fence", "--json")...)
	res := lastJSON(t, out)
	tlc := tlcFigures(t, "tlc413-b2-w2-a2")
	if code != exitOK || res["status"] != "ok" || res["distinct"] != float64(tlc.Distinct) || res["generated"] != float64(tlc.Generated) || res["depth"] != float64(tlc.Depth) {
		t.Fatalf("exit %d, result %v, TLC %+v %s", code, res, tlc, errOut)
	}

	trace := filepath.Join(t.TempDir(), "t.itf.json")
	code, out, _ = runArgs(t, append(base, "--recovery-reads-fence=false", "--json", "--trace-out", trace)...)
	res = lastJSON(t, out)
	v, _ := res["violation"].(map[string]any)
	tlc = tlcFigures(t, "tlc413-b2-w2-a2-nofence")
	if code != exitViolation || v == nil || v["invariant"] != tlc.Invariant || v["length"] != float64(tlc.Length) || res["trace-file"] != trace {
		t.Fatalf("exit %d, result %v, TLC %+v", code, res, tlc)
	}
	if steps, _ := v["trace"].([]any); len(steps) != tlc.Length {
		t.Fatalf("trace has %d steps", len(steps))
	}
	// The trace file replays, and renders with the property stated.
	code, out, errOut = runArgs(t, "replay", trace)
	if code != exitOK || !strings.Contains(out, "confirmed: 16 states") || !strings.Contains(out, "model=v4.13") {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
	}
	code, html, errOut := runArgs(t, "trace", "render", trace, "--format", "html")
	for _, want := range []string{"NoDivergenceBetweenWriterAndMetaData", "once the ledger is closed, w1 has acknowledged no entry beyond its last entry", "w2 (recovery client)"} {
		if code != exitOK || !strings.Contains(html, want) {
			t.Fatalf("render: exit %d, the page lacks %q %s", code, want, errOut)
		}
	}
	code, out, _ = runArgs(t, append(base, "--trace-out", "none")...)
	for _, want := range []string{
		"bkcheck: checking model=v4.13 bookies=2 write-quorum=2 ack-quorum=2 entries=1 recovery-reads-fence=false",
		"Invariant NoDivergenceBetweenWriterAndMetaData is violated",
		"16. W2ClosesLedger",
	} {
		if code != exitViolation || !strings.Contains(out, want) {
			t.Fatalf("exit %d, text output lacks %q:\n%s", code, want, out)
		}
	}

	code, out, errOut = runArgs(t, append(base, "--clients", "3", "--variant", "gwq", "--entries", "5")...)
	for _, want := range []string{"--clients: does not apply to --model v4.13", "--variant: does not apply", "--entries: must be between 1 and 4"} {
		if code != exitUsage || out != "" || !strings.Contains(errOut, want) {
			t.Fatalf("exit %d, stderr lacks %q:\n%s", code, want, errOut)
		}
	}
}

// TestTraceRenderWarnsUnconfirmed: trace render draws an edited trace
// but says that the model does not confirm it; a genuine one renders
// without a word on stderr.
func TestTraceRenderWarnsUnconfirmed(t *testing.T) {
	good := "../../docs/traces/below-qw-ensemble-change.itf.json"
	code, _, errOut := runArgs(t, "trace", "render", good)
	if code != exitOK || errOut != "" {
		t.Fatalf("genuine trace: exit %d, stderr %q", code, errOut)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(t.TempDir(), "edited.itf.json")
	if err := os.WriteFile(edited, []byte(strings.Replace(string(b), `"meta_version": 1`, `"meta_version": 2`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runArgs(t, "trace", "render", edited)
	if code != exitOK || out == "" || !strings.Contains(errOut, "is not confirmed by the model (bkcheck replay): step ") {
		t.Fatalf("edited trace: exit %d, stderr %q", code, errOut)
	}
}
