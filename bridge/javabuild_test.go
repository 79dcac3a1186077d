package bridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
)

// TestRealClasspathConcurrent builds the harness from an empty cache in
// four goroutines at once, as go test's parallel packages do on a fresh
// machine: each gets the same classpath, and its classes are complete.
func TestRealClasspathConcurrent(t *testing.T) {
	testtier.Real(t)
	t.Setenv("BKCHECK_BRIDGE_CACHE", t.TempDir())
	const n = 4
	cps := make(chan string, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			cp, err := Classpath(context.Background(), "4.18.2")
			cps <- cp
			errs <- err
		}()
	}
	var first string
	for i := range n {
		cp, err := <-cps, <-errs
		if err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
		if first == "" {
			first = cp
		} else if cp != first {
			t.Errorf("build %d: classpath differs", i)
		}
	}
	classes := strings.Split(first, string(os.PathListSeparator))[0]
	found := 0
	filepath.WalkDir(classes, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".class") {
			found++
		}
		return nil
	})
	if found == 0 {
		t.Errorf("no classes under %s", classes)
	}
}
