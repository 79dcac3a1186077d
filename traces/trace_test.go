package traces

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/spec"
)

var update = flag.Bool("update", false, "rewrite golden files")

// walk builds a trace by following, from the initial state, the first
// successor with each given action kind (and loss pattern).
func walk(t *testing.T, p spec.Params, kinds []spec.ActionKind, lost []spec.Bookies) *Trace {
	t.Helper()
	m, err := spec.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	tr := &Trace{Model: spec.Vocabulary(m.P), Invariant: "Example", Statement: "an example statement"}
	cur := m.Init()
	tr.Steps = append(tr.Steps, Step{Initial: true, State: cur})
	var scratch spec.State
	for i, k := range kinds {
		var next spec.State
		var act spec.Action
		found := false
		m.Next(&cur, &scratch, func(a spec.Action, s *spec.State) {
			if !found && a.Kind == k && a.Lost == lost[i] {
				found, act = true, a
				next.CopyFrom(s)
			}
		})
		if !found {
			t.Fatalf("step %d: no %v successor", i+1, k)
		}
		tr.Steps = append(tr.Steps, Step{Action: act, State: next})
		cur = next
	}
	return tr
}

func TestRenderTextGolden(t *testing.T) {
	tr := walk(t, spec.DefaultParams(),
		[]spec.ActionKind{spec.ClientCreatesLedger, spec.ClientSendsAddEntryRequests, spec.BookieSendsAddConfirmedResponse},
		[]spec.Bookies{0, 0b10, 0})
	var b bytes.Buffer
	if err := RenderText(&b, tr); err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/create-send-store.txt"
	if *update {
		os.WriteFile(golden, b.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("rendering differs from %s (run with -update):\n%s", golden, b.String())
	}
}

func TestDiffShowsOnlyChanges(t *testing.T) {
	tr := walk(t, spec.DefaultParams(), []spec.ActionKind{spec.ClientCreatesLedger}, []spec.Bookies{0})
	d := Diff(tr.Model.Rows(tr.Steps[0].State), tr.Model.Rows(tr.Steps[1].State))
	var names []string
	for _, v := range d {
		names = append(names, v.Name)
	}
	got := strings.Join(names, " ")
	want := "meta_status meta_version meta_fragments clients[c1].status clients[c1].meta_version clients[c1].fragments"
	if got != want {
		t.Errorf("changed = %q, want %q", got, want)
	}
}

// TestMermaidEnsembles: a Mermaid diagram spells an ensemble one way,
// with single spaces, whether it is a set (E = Qw) or an ordered list
// (striping, E > Qw): [1 (b1,b2) from e1] (issue 38, item 9).
func TestMermaidEnsembles(t *testing.T) {
	striped := spec.Params{Bookies: 4, Clients: 2, Ensemble: 3, WriteQuorum: 2, AckQuorum: 1, Entries: 2, Inflight: 2}
	for _, c := range []struct {
		name string
		p    spec.Params
		want string
	}{
		{"set", spec.DefaultParams(), "Note over meta: OPEN v1 [1 (b1,b2) from e1]\n"},
		{"striped", striped, "Note over meta: OPEN v1 [1 (b1,b2,b3) from e1]\n"},
	} {
		tr := walk(t, c.p, []spec.ActionKind{spec.ClientCreatesLedger, spec.ClientSendsAddEntryRequests}, []spec.Bookies{0, 0b10})
		var b bytes.Buffer
		if err := RenderMermaid(&b, tr); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%s: the diagram lacks %q:\n%s", c.name, c.want, b.String())
		}
		for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			if strings.Contains(strings.TrimSpace(line), "  ") {
				t.Errorf("%s: a double space in %q", c.name, line)
			}
		}
	}
}

// TestFairnessLines: actions taken in the cycle are listed one by one;
// those disabled in one state are grouped into one line.
func TestFairnessLines(t *testing.T) {
	got := FairnessLines([]FairStep{{Constraint: "A", Step: 12}, {Constraint: "B", Step: 11, Taken: true}, {Constraint: "C", Step: 12}, {Constraint: "D", Step: 11}})
	want := []string{"WF(B): taken at step 11", "WF(D): disabled in state 11", "WF of 2 actions: each disabled in state 12 (A, C)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFairnessLinesMany: a group too long to read is counted.
func TestFairnessLinesMany(t *testing.T) {
	var fs []FairStep
	for i := range maxNamedFair + 1 {
		fs = append(fs, FairStep{Constraint: fmt.Sprint("A", i), Step: 3})
	}
	if got := FairnessLines(fs); len(got) != 1 || got[0] != fmt.Sprintf("WF of %d actions: each disabled in state 3 (the trace file's #meta.fairness names them)", maxNamedFair+1) {
		t.Errorf("%q", got)
	}
}
