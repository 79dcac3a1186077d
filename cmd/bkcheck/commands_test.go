package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
	"github.com/bkcheck/bkcheck/spec413"
)

// TestEveryCommandHelp: each command of the table answers -h (and bkcheck
// help NAME) with the same text every time, its usage line first and
// every switch it declares listed, and bkcheck help lists every command.
func TestEveryCommandHelp(t *testing.T) {
	code, usage, _ := runArgs(t, "help")
	if code != exitOK {
		t.Fatalf("help: exit %d", code)
	}
	for i := range commands {
		c := &commands[i]
		t.Run(c.name, func(t *testing.T) {
			args := append(strings.Fields(c.name), "-h")
			code, out, errOut := runArgs(t, args...)
			if code != exitOK || errOut != "" {
				t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
			}
			for range 3 { // map iteration would show in a few runs
				if _, again, _ := runArgs(t, args...); again != out {
					t.Fatalf("%v differs from run to run:\n%s\n---\n%s", args, out, again)
				}
			}
			if _, viaHelp, _ := runArgs(t, append([]string{"help"}, strings.Fields(c.name)...)...); viaHelp != out {
				t.Errorf("bkcheck help %s differs from %v", c.name, args)
			}
			if !strings.HasPrefix(out, "Usage: "+c.usageLine()+"\n") {
				t.Errorf("%v does not start with its usage line:\n%s", args, out)
			}
			for _, s := range c.sections() {
				for _, f := range s.S.Fields() {
					want := "--" + f.Name
					if f.Short != "" {
						want = "-" + f.Short + ", " + want
					}
					if !strings.Contains(out, "  "+want+" ") && !strings.Contains(out, "  "+want+"\n") {
						t.Errorf("%v does not list %s:\n%s", args, want, out)
					}
				}
			}
			if !strings.Contains(usage, "  "+c.usageLine()+" ") && !strings.Contains(usage, "  "+c.usageLine()+"\n") {
				t.Errorf("bkcheck help does not list %s", c.usageLine())
			}
			if got, rest := findCommand(strings.Fields(c.name)); got != c || len(rest) != 0 {
				t.Errorf("%q does not dispatch to its command", c.name)
			}
		})
	}
	if code, _, errOut := runArgs(t, "help", "frobnicate"); code != exitUsage || !strings.Contains(errOut, `no command "frobnicate"`) {
		t.Errorf("help frobnicate: exit %d %s", code, errOut)
	}
	if code, out, _ := runArgs(t, "--help"); code != exitOK || out != usage {
		t.Errorf("--help: exit %d", code)
	}
}

// TestTraceRenderTakesItsFlags: the switches the table declares for trace
// render are those runTrace parses.
func TestTraceRenderTakesItsFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.itf.json")
	for _, s := range lookupCommand("trace render").sections() {
		for _, f := range s.S.Fields() {
			code, _, errOut := runArgs(t, "trace", "render", "--"+f.Name, s.S.Get(s.V, f.Name), missing)
			if code != exitUsage || strings.Contains(errOut, "unknown flag") || !strings.Contains(errOut, missing) {
				t.Errorf("--%s: exit %d: %s", f.Name, code, errOut)
			}
		}
	}
}

// TestListingsPerModel: variants, invariants and actions list one model's,
// the current one's by default; an unknown model is a usage error naming
// the models.
func TestListingsPerModel(t *testing.T) {
	lines := func(args ...string) []string {
		t.Helper()
		code, out, errOut := runArgs(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	}
	var want413 []string
	for k := spec413.ActionKind(1); k < spec413.NumActionKinds; k++ {
		want413 = append(want413, k.String())
	}
	names := func(ls []string) []string {
		for i, l := range ls {
			ls[i], _, _ = strings.Cut(l, " ")
		}
		return ls
	}
	if got := names(lines("actions", "--model", "v4.13")); !slices.Equal(got, want413) {
		t.Errorf("actions --model v4.13: %v, want %v", got, want413)
	}
	var wantCurrent []string
	for k := spec.ActionKind(1); k < spec.NumActionKinds; k++ {
		wantCurrent = append(wantCurrent, k.String())
	}
	if got := names(lines("actions")); !slices.Equal(got, wantCurrent) {
		t.Errorf("actions: %v, want %v", got, wantCurrent)
	}
	// Each action says where it comes from and what adds it (the action
	// table's declarations).
	all := strings.Join(lines("actions"), "\n")
	for _, want := range []string{"ClientCompletesEnsembleChange                extension: --add-path java",
		"ClientChangesEnsemble                        TLA+ spec: the spec writer's add path (not --add-path java)",
		"BookieChecksAdd                              variant: --variant split-add-check"} {
		if !strings.Contains(all, want) {
			t.Errorf("actions lacks %q:\n%s", want, all)
		}
	}
	for _, cmd := range []string{"actions", "invariants", "variants"} {
		if a, b := lines(cmd), lines(cmd, "--model", "current"); !slices.Equal(a, b) {
			t.Errorf("%s differs from %s --model current", cmd, cmd)
		}
		code, out, errOut := runArgs(t, cmd, "--model", "v5")
		if code != exitUsage || out != "" || !strings.Contains(errOut, `unknown model "v5"; known: current, v4.13`) {
			t.Errorf("%s --model v5: exit %d %q %s", cmd, code, out, errOut)
		}
	}
	current, v413 := strings.Join(lines("invariants"), "\n"), strings.Join(lines("invariants", "--model", "v4.13"), "\n")
	in413 := map[string]bool{}
	for _, inv := range spec413.Invariants {
		in413[inv.Name] = true
		if !strings.Contains(v413, inv.Name+" (invariant)\n    "+inv.Statement+"\n") {
			t.Errorf("invariants --model v4.13 lacks %s", inv.Name)
		}
	}
	for _, inv := range invariants.All {
		if !strings.Contains(current, inv.Name+" (") {
			t.Errorf("invariants lacks %s", inv.Name)
		}
		if !in413[inv.Name] && strings.Contains(v413, inv.Name) {
			t.Errorf("invariants --model v4.13 lists %s, of the current model", inv.Name)
		}
		delete(in413, inv.Name)
	}
	for name := range in413 {
		if strings.Contains(current, name) {
			t.Errorf("invariants lists %s, of --model v4.13", name)
		}
	}
	variants := strings.Join(lines("variants", "--model", "v4.13"), "\n")
	if !strings.Contains(variants, "no protocol variants") || !strings.Contains(variants, "--recovery-reads-fence") {
		t.Errorf("variants --model v4.13:\n%s", variants)
	}
}
