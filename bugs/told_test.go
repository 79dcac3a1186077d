package bugs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bkcheck/bkcheck/check"
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
