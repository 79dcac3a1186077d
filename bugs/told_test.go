package bugs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// TestToldTracesCommitted: each finding's told story builds (every step a
// transition of the model, the property answered, the cycle fair), and
// the committed trace is what it builds, byte for byte: the page's link
// and the real tier's runs are of this story.
func TestToldTracesCommitted(t *testing.T) {
	for _, f := range Findings {
		for i, x := range f.Told {
			tr, err := check.Build(x.Config, x.Steps, x.Loop)
			if err != nil {
				t.Errorf("%s %s: %v", f.ID, x.Name, err)
				continue
			}
			out := filepath.Join(t.TempDir(), "told.itf.json")
			if err := traces.WriteITFFile(out, tr); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(out)
			want, err := os.ReadFile(filepath.Join("..", "docs", f.TraceOf(i)))
			if err != nil {
				t.Errorf("%s %s: %v", f.ID, x.Name, err)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("docs/%s is not what %s's story %q builds: regenerate the page", f.TraceOf(i), f.ID, x.Name)
			}
		}
	}
}

// TestBuildRetellsSearchedTraces: a trace a search found, told again as
// its steps, builds the same trace: an eventually property's lasso needs
// its fairness (f-4872's), a terminal-state property's ends in a state
// with no successor (f-ar-below-qw's; Build takes the model without the
// search's symmetry and state constraint, which do not change a concrete
// behaviour or its last state's successors).
func TestBuildRetellsSearchedTraces(t *testing.T) {
	for _, id := range []string{"f-ar-below-qw", "f-4872"} {
		var f Finding
		for _, x := range Findings {
			if x.ID == id {
				f = x
			}
		}
		path := filepath.Join("..", "docs", "traces", "findings", id+".itf.json")
		want, err := check.ReadTrace(path)
		if err != nil {
			t.Fatal(err)
		}
		var steps []string
		for _, s := range want.Steps[1:] {
			steps = append(steps, want.Model.ActionString(s.Action))
		}
		mc := f.Master
		mc.Symmetry, mc.Constraint = spec.Symmetry{}, nil
		got, err := check.Build(mc, steps, want.Loop)
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if got.Kind != want.Kind || got.Terminal != want.Terminal || got.Loop != want.Loop || len(got.Steps) != len(want.Steps) {
			t.Errorf("%s: built a %s trace (terminal %v, loop %d) of %d states; the search's is a %s one (terminal %v, loop %d) of %d",
				id, got.Kind, got.Terminal, got.Loop, len(got.Steps), want.Kind, want.Terminal, want.Loop, len(want.Steps))
		}
	}
}
