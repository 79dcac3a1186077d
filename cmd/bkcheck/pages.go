package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/bkcheck/bkcheck/internal/atomicfile"
	"github.com/bkcheck/bkcheck/traces"
)

// A generatedPage is what a page generator (bugs, guarantees) returns:
// the Markdown, the traces it links by path relative to the page, and the
// trace paths that no longer have a question (left by an earlier page).
type generatedPage struct {
	markdown []byte
	traces   map[string]*traces.Trace
	unused   []string
}

// pageCommand is the shell of bkcheck bugs and bkcheck guarantees: --out,
// every problem reported before the long generation starts, and the page
// written only once every part of it was answered.
type pageCommand struct {
	name   string // "bugs": the command, and traces/bugs/ beside the page
	out    string // the page to write
	cl     *commandLine
	stdout io.Writer
	stderr io.Writer
}

func newPageCommand(name, out string, inv *invocation) *pageCommand {
	return &pageCommand{name: name, out: out, cl: inv.cl, stdout: inv.stdout, stderr: inv.stderr}
}

func defaultPage(name string) string { return "docs/" + name + ".md" }

// path is the page to write.
func (pc *pageCommand) path() string { return pc.out }

// validate adds the common problems to those the caller found and reports
// them all; exitOK means go on.
func (pc *pageCommand) validate() int {
	if len(pc.cl.args) > 0 {
		pc.cl.probs.Add("", "unexpected arguments: %v", pc.cl.args)
	}
	if pc.path() == "" {
		pc.cl.probs.Add("", "--out: give the page to write (the path is empty)")
	} else if err := atomicfile.CheckWritable(pc.path()); err != nil {
		pc.cl.probs.Add("", "--out: %v", err)
	}
	return pc.cl.report(pc.stderr)
}

// report prints a line of progress.
func (pc *pageCommand) report(line string) { fmt.Fprintf(pc.stderr, "bkcheck %s: %s\n", pc.name, line) }

// finish writes what generate returned: nothing if ctx was cancelled
// (exit 130) or generation failed.
func (pc *pageCommand) finish(ctx context.Context, page *generatedPage, err error) int {
	path := pc.path()
	if ctx.Err() != nil {
		fmt.Fprintf(pc.stderr, "bkcheck %s: interrupted; %s and its traces are unchanged\n", pc.name, path)
		return exitInterrupted
	}
	if err == nil {
		err = writePage(path, pc.name, page.markdown, page.traces, page.unused)
	}
	if err != nil {
		fmt.Fprintf(pc.stderr, "bkcheck %s: %v\n", pc.name, err)
		return exitError
	}
	fmt.Fprintf(pc.stdout, "wrote %s\n", path)
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
