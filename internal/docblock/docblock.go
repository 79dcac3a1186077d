// Package docblock keeps a generated block of a Markdown page, between
// <!-- marker --> and <!-- end -->, equal to what its declarations render,
// for the tests that hold a page to its source.
package docblock

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Check compares the block marker of the page at path with text. With
// update it rewrites the block and reports nothing; otherwise a stale
// block is an error that says how to regenerate it (regenerate: the
// command).
func Check(path, marker, text string, update bool, regenerate string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	re := regexp.MustCompile(`(?s)(<!-- ` + regexp.QuoteMeta(marker) + ` -->\n)(.*?)(<!-- end -->)`)
	m := re.FindSubmatch(b)
	if m == nil {
		return fmt.Errorf("%s has no <!-- %s --> ... <!-- end --> block", path, marker)
	}
	if string(m[2]) == text {
		return nil
	}
	if update {
		return os.WriteFile(path, re.ReplaceAll(b, []byte("${1}"+strings.ReplaceAll(text, "$", "$$")+"${3}")), 0o644)
	}
	return fmt.Errorf("%s's <!-- %s --> block is stale; regenerate with: %s", path, marker, regenerate)
}
