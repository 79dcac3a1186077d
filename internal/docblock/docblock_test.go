package docblock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "page.md")
	page := "# Page\n\n<!-- table -->\nold $1\n<!-- end -->\ntail\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(path, "table", "old $1\n", false, "x"); err != nil {
		t.Errorf("an equal block: %v", err)
	}
	if err := Check(path, "table", "new $2\n", false, "go test -update"); err == nil || !strings.Contains(err.Error(), "stale; regenerate with: go test -update") {
		t.Errorf("a stale block: %v, want it named with the command", err)
	}
	if err := Check(path, "other", "", false, "x"); err == nil || !strings.Contains(err.Error(), "no <!-- other -->") {
		t.Errorf("a missing block: %v", err)
	}
	if err := Check(path, "table", "new $2\n", true, "x"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := "# Page\n\n<!-- table -->\nnew $2\n<!-- end -->\ntail\n"; string(b) != want {
		t.Errorf("rewritten page:\n%s\nwant:\n%s", b, want)
	}
}
