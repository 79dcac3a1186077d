package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/bugs"
	"github.com/bkcheck/bkcheck/internal/testtier"
)

// TestBugsPageCurrent and TestFindingsPageCurrent: regenerating
// docs/bugs.md and docs/findings.md gives the committed pages and traces
// (timings aside), and every trace replays.
func TestBugsPageCurrent(t *testing.T) {
	// The docs tier's: on BookKeeper's model the fixes are searches of
	// millions of orbits, a quarter of an hour in all. The default tier checks
	// every case that is not Slow (bugs.TestBugs).
	testtier.Docs(t, "reproduces every bug on its release and checks every fix: a quarter of an hour on two cores")
	pageCurrent(t, "bugs")
}

func TestFindingsPageCurrent(t *testing.T) {
	// The docs tier's: its slowest questions take minutes each, more
	// than CI's budget. The default tier checks every question that is
	// not Slow against its expectation (bugs.TestBugs), the long tier
	// each with --por too (bugs.TestPORSameVerdict).
	testtier.Docs(t, "asks every open question of master and of each fix: 15 to 45 minutes on two cores")
	pageCurrent(t, "findings")
}

func pageCurrent(t *testing.T, name string) {
	dir := t.TempDir()
	out := filepath.Join(dir, name+".md")
	if code, _, errOut := runArgs(t, name, "--out", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "docs", name+".md"))
	norm := func(b []byte) string { return bugs.Timings.ReplaceAllString(string(b), "searched in ? s when") }
	if err != nil || norm(got) != norm(want) {
		t.Errorf("docs/%s.md is stale: run bkcheck %s --out docs/%s.md", name, name, name)
	}
	written, _ := filepath.Glob(filepath.Join(dir, "traces", name, "*.itf.json"))
	committed, _ := filepath.Glob(filepath.Join("..", "..", "docs", "traces", name, "*.itf.json"))
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
	for _, cmd := range []string{"bugs", "findings", "guarantees"} {
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
