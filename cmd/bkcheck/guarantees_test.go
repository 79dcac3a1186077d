package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/guarantees"
	"github.com/bkcheck/bkcheck/internal/testtier"
)

// TestGuaranteesCurrent re-answers docs/guarantees.md's questions through
// bkcheck guarantees and fails when the committed page or one of its
// traces is stale. The searches are deterministic, so the page is a pure
// function of the code. The docs tier (BKCHECK_DOCS=1, hours) regenerates
// the whole page, which must come out unchanged. The long tier re-answers
// the first setting (E = 2, Qw = 2, Qa = 2) with --settings into a copy
// of the committed page, bounded by longBound: every answer the smaller
// bound decides (a proof, a counterexample) must be the committed row
// word for word, and every other section must come out as it was (the
// splice keeps them).
func TestGuaranteesCurrent(t *testing.T) {
	testtier.Long(t, "re-answers a setting of docs/guarantees.md: minutes")
	docs := filepath.Join("..", "..", "docs")
	committedPage, err := os.ReadFile(filepath.Join(docs, "guarantees.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "guarantees.md")
	args := []string{"guarantees", "--out", out}
	if !testtier.IsDocs() {
		st := guarantees.Settings[0]
		args = append(args, "--settings", fmt.Sprintf("%d/%d/%d", st[0], st[1], st[2]), "--max-states", strconv.Itoa(longBound))
		if err := os.WriteFile(out, committedPage, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errOut := runArgs(t, args...)
	t.Log(errOut)
	if code != exitOK {
		t.Fatalf("%v: exit %d", args, code)
	}
	const regen = "regenerate with go run ./cmd/bkcheck guarantees --out docs/guarantees.md (or --settings E/Qw/Qa for the settings a change touches)"
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, want := sections(string(page)), sections(string(committedPage))
	if len(got) != len(want) {
		t.Errorf("docs/guarantees.md has %d sections, the regenerated page %d: %s", len(want), len(got), regen)
	}
	for i, sec := range got {
		switch {
		case testtier.IsDocs() || (i > 0 && !strings.HasPrefix(sec, "## E = 2, Qw = 2, Qa = 2\n")):
			if !contains(want, sec) {
				t.Errorf("docs/guarantees.md's section %q is stale: %s", strings.SplitN(sec, "\n", 2)[0], regen)
			}
		case i > 0:
			committedRows := map[string]bool{}
			for _, sec := range want {
				for _, r := range strings.Split(sec, "\n") {
					committedRows[r] = true
				}
			}
			compared, rows := 0, 0
			for _, r := range strings.Split(sec, "\n") {
				cells := strings.Split(r, " | ")
				if len(cells) != 3 || !strings.HasPrefix(r, "| ") || strings.HasPrefix(r, "|---") {
					continue
				}
				rows++
				if !decidedByFirstSearch(cells[1]) {
					continue // the smaller bound sent it down another route
				}
				compared++
				if !committedRows[r] {
					t.Errorf("docs/guarantees.md's row is stale: %s\n(%s)", r, regen)
				}
			}
			if rows == 0 || compared < rows-2 {
				t.Errorf("the first setting's %d rows: only %d decided by their first search within %d states", rows, compared, longBound)
			}
		}
	}
	written, _ := filepath.Glob(filepath.Join(dir, "traces", "guarantees", "*.itf.json"))
	if len(written) == 0 {
		t.Fatal("no counterexample written")
	}
	for _, path := range written {
		rel, _ := filepath.Rel(dir, path)
		b, _ := os.ReadFile(path)
		c, err := os.ReadFile(filepath.Join(docs, rel))
		if err != nil || string(b) != string(c) {
			t.Errorf("docs/%s is stale: %s", rel, regen)
		}
		if code, _, errOut := runArgs(t, "replay", path); code != exitOK {
			t.Errorf("%s does not replay: %s", rel, errOut)
		}
	}
	committed, _ := filepath.Glob(filepath.Join(docs, "traces", "guarantees", "*.itf.json"))
	if testtier.IsDocs() && len(committed) != len(written) {
		t.Errorf("docs/traces/guarantees holds %d traces, the page links %d", len(committed), len(written))
	}
	for _, path := range committed {
		if rel, _ := filepath.Rel(docs, path); !strings.Contains(string(committedPage), "("+filepath.ToSlash(rel)+")") {
			t.Errorf("docs/%s is linked by no answer: %s", rel, regen)
		}
	}
}

// TestGuaranteesSettingsRefused: bad --settings are reported together with
// the other problems, before any question is answered, and nothing is
// written.
func TestGuaranteesSettingsRefused(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "guarantees.md")
	code, stdout, errOut := runArgs(t, "guarantees", "--out", out, "--max-states", "0", "--settings", "9/9/9,5/3,2/2/2")
	for _, want := range []string{
		"--max-states: must be >= 1",
		`setting "9/9/9" is not one of the page's (2/2/2, 3/3/2, 3/3/3, 5/3/2, 5/5/2)`,
		`setting "5/3": want E/Qw/Qa`,
		"the page whose other sections are kept cannot be read",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if code != exitUsage || stdout != "" || strings.Contains(errOut, "violation") {
		t.Errorf("exit %d, stdout %q, stderr %s", code, stdout, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("written: %v", entries)
	}
}

// sections splits a page at its "## " headings: the header, each section,
// the last one being the footer.
// longBound bounds the long tier's searches: their first search decides
// every question of the first setting but the one the page leaves open,
// whose searches alone take most of ten minutes at the page's bound.
const longBound = 2_000_000

// decidedByFirstSearch says whether an answer is the first search's: a
// proof, or a counterexample it found, which a smaller bound gives word
// for word; not one left open, or found by a later route (the reduction,
// random walks, the loss ladder), which a smaller bound may take
// differently.
func decidedByFirstSearch(answer string) bool {
	for _, later := range []string{"open", "partial-order reduction", "random simulation", "the shortest that loses", "losing at most", "loses no message"} {
		if strings.Contains(answer, later) {
			return false
		}
	}
	return true
}

func sections(page string) []string {
	parts := strings.Split(page, "\n## ")
	for i := 1; i < len(parts); i++ {
		parts[i] = "## " + parts[i]
	}
	return parts
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
