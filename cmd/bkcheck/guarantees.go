package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/bkcheck/bkcheck/guarantees"
	"github.com/bkcheck/bkcheck/internal/atomicfile"
	"github.com/bkcheck/bkcheck/traces"
)

// runGuarantees is `bkcheck guarantees [--out FILE] [--max-states N]`: it
// answers the questions of docs/guarantees.md for every setting and writes
// the page, with each refutation's trace beside it. Nothing is written
// unless every question was answered: an interrupted regeneration exits
// 130 and leaves the page and its traces as they were.
func runGuarantees(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("bkcheck guarantees")
	out := cl.addSwitch("out", "the page to write (its directory must exist); traces go to traces/guarantees/ beside it (default docs/guarantees.md)", false)
	maxStates := cl.addSwitch("max-states", "bound of each search: distinct states, or orbits where the search is symmetric (default "+strconv.FormatInt(guarantees.DefaultMaxStates, 10)+")", false)
	cl.parse(args)
	if cl.help {
		fmt.Fprintln(stdout, "usage: bkcheck guarantees [--out FILE] [--max-states N]")
		return exitOK
	}
	path := "docs/guarantees.md"
	if out.isSet {
		path = out.value
	}
	opt := guarantees.Options{Report: func(line string) { fmt.Fprintf(stderr, "bkcheck guarantees: %s\n", line) }}
	if maxStates.isSet {
		n, err := strconv.ParseInt(maxStates.value, 10, 64)
		if err != nil || n < 1 {
			cl.probs.Add("", "--max-states must be a positive integer (got %q)", maxStates.value)
		}
		opt.MaxStates = n
	}
	if len(cl.args) > 0 {
		cl.probs.Add("", "unexpected arguments: %v", cl.args)
	}
	if err := atomicfile.CheckWritable(path); err != nil {
		cl.probs.Add("", "--out: %v", err)
	}
	if code := cl.report(stderr); code != exitOK {
		return code
	}
	page, err := guarantees.Generate(ctx, opt)
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "bkcheck guarantees: interrupted; %s and its traces are unchanged\n", path)
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck guarantees: %v\n", err)
		return exitError
	}
	if err := writePage(path, "guarantees", page.Markdown, page.Traces, page.Unused); err != nil {
		fmt.Fprintf(stderr, "bkcheck guarantees: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return exitOK
}

// writePage writes a generated page's traces under traces/SUBDIR beside
// path, then the page that links them (each file atomically), and removes
// the traces named in unused (questions that no longer have one).
func writePage(path, subdir string, markdown []byte, trs map[string]*traces.Trace, unused []string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(filepath.Join(dir, "traces", subdir), 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(trs))
	for name := range trs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := traces.WriteITFFile(filepath.Join(dir, name), trs[name]); err != nil {
			return err
		}
	}
	for _, name := range unused {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return atomicfile.WriteFile(path, markdown)
}
