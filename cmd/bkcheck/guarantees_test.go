package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
)

// TestGuaranteesCurrent regenerates docs/guarantees.md and its traces and
// fails when the committed page is stale. The searches are deterministic,
// so the page is a pure function of the code.
func TestGuaranteesCurrent(t *testing.T) {
	testtier.Long(t, "regenerates the page: several minutes")
	dir := t.TempDir()
	out := filepath.Join(dir, "guarantees.md")
	if code, _, errOut := runArgs(t, "guarantees", "--out", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	stale := func(rel string) {
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "docs", rel))
		if err != nil || string(got) != string(want) {
			t.Errorf("docs/%s is stale: run go run ./cmd/bkcheck guarantees --out docs/guarantees.md", rel)
		}
	}
	stale("guarantees.md")
	traces, _ := filepath.Glob(filepath.Join(dir, "traces", "guarantees", "*.itf.json"))
	if len(traces) == 0 {
		t.Fatal("no counterexample written")
	}
	for _, tr := range traces {
		rel, _ := filepath.Rel(dir, tr)
		stale(rel)
		if code, _, errOut := runArgs(t, "replay", tr); code != exitOK {
			t.Errorf("%s does not replay: %s", rel, errOut)
		}
	}
	committed, _ := filepath.Glob(filepath.Join("..", "..", "docs", "traces", "guarantees", "*.itf.json"))
	if len(committed) != len(traces) {
		t.Errorf("docs/traces/guarantees holds %d traces, the page links %d", len(committed), len(traces))
	}
}
