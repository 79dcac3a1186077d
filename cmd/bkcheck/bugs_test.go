package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/bugs"
	"github.com/bkcheck/bkcheck/internal/testtier"
)

// TestBugsPageCurrent regenerates docs/bugs.md and its traces and fails
// when the committed page is stale (search times aside, which depend on
// the machine), or a trace does not replay.
func TestBugsPageCurrent(t *testing.T) {
	testtier.Long(t, "reproduces every bug and checks every fix: minutes")
	dir := t.TempDir()
	out := filepath.Join(dir, "bugs.md")
	if code, _, errOut := runArgs(t, "bugs", "--out", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "docs", "bugs.md"))
	norm := func(b []byte) string { return bugs.Timings.ReplaceAllString(string(b), "searched in ? s when") }
	if err != nil || norm(got) != norm(want) {
		t.Errorf("docs/bugs.md is stale: run bkcheck bugs --out docs/bugs.md")
	}
	written, _ := filepath.Glob(filepath.Join(dir, "traces", "bugs", "*.itf.json"))
	committed, _ := filepath.Glob(filepath.Join("..", "..", "docs", "traces", "bugs", "*.itf.json"))
	if len(written) == 0 || len(written) != len(committed) {
		t.Errorf("%d traces written, %d committed", len(written), len(committed))
	}
	for _, tr := range written {
		rel, _ := filepath.Rel(dir, tr)
		b, _ := os.ReadFile(tr)
		c, err := os.ReadFile(filepath.Join("..", "..", "docs", rel))
		if err != nil || string(b) != string(c) {
			t.Errorf("docs/%s is stale", rel)
		}
		if code, _, errOut := runArgs(t, "replay", tr); code != exitOK {
			t.Errorf("%s does not replay: %s", rel, errOut)
		}
	}
}

// TestPageOutEmpty: an empty --out is a usage error, reported before any
// question is answered, and nothing is written.
func TestPageOutEmpty(t *testing.T) {
	for _, cmd := range []string{"bugs", "guarantees"} {
		dir := t.TempDir()
		t.Chdir(dir)
		code, out, errOut := runArgs(t, cmd, "--out", "")
		if code != exitUsage || out != "" || !strings.Contains(errOut, "--out: give the page to write (the path is empty)") || strings.Contains(errOut, "found") {
			t.Errorf("%s --out '': exit %d, stdout %q, stderr %q", cmd, code, out, errOut)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s --out '' wrote %v", cmd, entries)
		}
	}
}
