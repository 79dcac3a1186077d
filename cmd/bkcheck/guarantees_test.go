package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/guarantees"
	"github.com/bkcheck/bkcheck/internal/testtier"
)

// TestGuaranteesCurrent re-answers docs/guarantees.md's questions and
// fails when the committed page or one of its traces is stale. The
// searches are deterministic, so the page is a pure function of the code.
// The long tier re-answers the first setting (E = 2, Qw = 2, Qa = 2), whose
// section, header and footer must be exactly the committed ones; the docs
// tier (BKCHECK_DOCS=1, most of an hour) regenerates the whole page.
func TestGuaranteesCurrent(t *testing.T) {
	testtier.Long(t, "re-answers a setting of docs/guarantees.md: minutes")
	opt := guarantees.Options{Report: func(line string) { t.Log(line) }}
	if !testtier.IsDocs() {
		opt.Settings = guarantees.Settings[:1]
	}
	page, err := guarantees.Generate(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := writePage(filepath.Join(dir, "guarantees.md"), "guarantees", page.Markdown, page.Traces, page.Unused); err != nil {
		t.Fatal(err)
	}
	docs := filepath.Join("..", "..", "docs")
	committedPage, err := os.ReadFile(filepath.Join(docs, "guarantees.md"))
	if err != nil {
		t.Fatal(err)
	}
	const regen = "regenerate with go run ./cmd/bkcheck guarantees --out docs/guarantees.md"
	got, want := sections(string(page.Markdown)), sections(string(committedPage))
	if opt.Settings == nil {
		if string(page.Markdown) != string(committedPage) {
			t.Errorf("docs/guarantees.md is stale: %s", regen)
		}
	} else {
		if got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
			t.Errorf("docs/guarantees.md's header or footer is stale: %s", regen)
		}
		for _, sec := range got[1 : len(got)-1] {
			if !contains(want, sec) {
				t.Errorf("docs/guarantees.md's section %q is stale: %s", strings.SplitN(sec, "\n", 2)[0], regen)
			}
		}
	}
	if len(page.Traces) == 0 {
		t.Fatal("no counterexample written")
	}
	for name := range page.Traces {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		c, err := os.ReadFile(filepath.Join(docs, name))
		if err != nil || string(b) != string(c) {
			t.Errorf("docs/%s is stale: %s", name, regen)
		}
		if code, _, errOut := runArgs(t, "replay", filepath.Join(dir, name)); code != exitOK {
			t.Errorf("%s does not replay: %s", name, errOut)
		}
	}
	for _, name := range page.Unused {
		if _, err := os.Stat(filepath.Join(docs, name)); err == nil {
			t.Errorf("docs/%s is left from an earlier page: %s", name, regen)
		}
	}
	committed, _ := filepath.Glob(filepath.Join(docs, "traces", "guarantees", "*.itf.json"))
	if opt.Settings == nil && len(committed) != len(page.Traces) {
		t.Errorf("docs/traces/guarantees holds %d traces, the page links %d", len(committed), len(page.Traces))
	}
	for _, path := range committed {
		if rel, _ := filepath.Rel(docs, path); !strings.Contains(string(committedPage), "("+filepath.ToSlash(rel)+")") {
			t.Errorf("docs/%s is linked by no answer", rel)
		}
	}
}

// sections splits a page at its "## " headings: the header, each section,
// the last one being the footer.
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
