package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 38: simulate answers probes as check does. A probe reached is
// found (the first walk that reached it is its witness, written beside
// the trace file), one not reached is unknown (random walks prove no
// probe unreachable); neither is a violation, and the status and exit
// code are the verdict's: unknown (3) without a violation. A probe ends
// no walk, and a simulation that only asks questions stops once every
// probe is found. The distinct states are never more than the states
// visited.
func TestSimulateAnswersProbes(t *testing.T) {
	const closed, never = `Closed=meta_status == "STATUS_CLOSED"`, `Never=meta_version > 100`
	type answer struct{ status, reason string }
	for _, c := range []struct {
		name  string
		args  []string
		walks float64
		want  map[string]answer
	}{
		{"a probe reached, one not", []string{"--probe", closed, "--probe", never, "--traces", "2000"}, 2000,
			map[string]answer{"Closed": {"found", ""}, "Never": {"unknown", "not reached by the random walks, which does not make it unreachable"}}},
		{"questions only: stops at the batch that answers them", []string{"--invariants", "none", "--probe", closed, "--traces", "20000"}, 256,
			map[string]answer{"Closed": {"found", ""}}},
		{"a probe never reached", []string{"--probe", never, "--traces", "300"}, 300,
			map[string]answer{"Never": {"unknown", "not reached by the random walks"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			trace := filepath.Join(t.TempDir(), "t.itf.json")
			args := append([]string{"simulate", "--workers", "2", "--trace-out", trace}, c.args...)
			code, out, errOut := runArgs(t, append(args, "--json")...)
			if code != exitUnknown {
				t.Fatalf("exit %d, want %d (the verdict's: no violation)\n%s%s", code, exitUnknown, out, errOut)
			}
			m := lastJSON(t, out)
			if m["status"] != "unknown" || m["violation"] != nil || m["walks"] != c.walks {
				t.Errorf("status %v, violation %v, %v walks; want unknown, none, %v", m["status"], m["violation"], m["walks"], c.walks)
			}
			if m["distinct"].(float64) > m["states"].(float64) {
				t.Errorf("%v distinct states of %v visited", m["distinct"], m["states"])
			}
			props, _ := m["properties"].([]any)
			if len(props) != len(c.want) {
				t.Fatalf("properties: %v", m["properties"])
			}
			for _, p := range props {
				p := p.(map[string]any)
				name := p["name"].(string)
				want := c.want[name]
				reason, _ := p["reason"].(string)
				if p["kind"] != "probe" || p["status"] != want.status || !strings.Contains(reason, want.reason) {
					t.Errorf("%s: %v", name, p)
				}
				if want.status != "found" {
					continue
				}
				tr := p["trace"].(map[string]any)
				if tr["walk-seed"] == nil || !strings.Contains(tr["rerun"].(string), "--traces 1") || tr["trace-file"] != filepath.Join(filepath.Dir(trace), "t-"+name+".itf.json") {
					t.Errorf("%s's witness: %v", name, tr)
				}
				if _, err := os.Stat(tr["trace-file"].(string)); err != nil {
					t.Errorf("%s's witness was not written: %v", name, err)
				}
			}
			// The text says the same.
			_, text, _ := runArgs(t, args...)
			for name, want := range c.want {
				line := "probe " + name + ": " + want.status
				if want.reason != "" {
					line += ": " + want.reason
				}
				if !strings.Contains(text, line) {
					t.Errorf("the text lacks %q:\n%s", line, text)
				}
			}
			if _, found := c.want["Closed"]; found && !strings.Contains(text, "Probe Closed is reachable.") {
				t.Errorf("the text lacks the witness:\n%s", text)
			}
			if strings.Contains(text, "fails; rerun") {
				t.Errorf("a probe is reported as a failure:\n%s", text)
			}
		})
	}
}

// Issue 38: simulate refuses --por (it would change the walks) and
// --symmetry (walks store no states to reduce), with a usage error that
// says so, before any walk.
func TestSimulateRefusesPORAndSymmetry(t *testing.T) {
	const por = "--por: is a setting of bkcheck check, not of simulate"
	const sym = "--symmetry: is a setting of bkcheck check, not of simulate"
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--por"}, []string{por}},
		{[]string{"--symmetry", "bookies"}, []string{sym}},
		{[]string{"--symmetry", "bookies,clients", "--por", "--model", "v4.13"}, []string{por, sym}},
	} {
		args := append([]string{"simulate", "--traces", "10", "--trace-out", "none"}, c.args...)
		code, out, errOut := runArgs(t, args...)
		if code != exitUsage || out != "" {
			t.Errorf("%v: exit %d, stdout %q", c.args, code, out)
		}
		for _, w := range c.want {
			if strings.Count(errOut, w) != 1 {
				t.Errorf("%v: stderr lacks %q (once):\n%s", c.args, w, errOut)
			}
		}
	}
}
