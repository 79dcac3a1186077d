package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/bkcheck/bkcheck/bugs"
	"github.com/bkcheck/bkcheck/internal/atomicfile"
	"github.com/bkcheck/bkcheck/traces"
)

// runBugs is `bkcheck bugs [--out FILE]`: it reproduces every historical
// bug of package bugs, checks each fix, and writes docs/bugs.md with the
// traces beside it. As with guarantees, nothing is written unless every
// bug was run.
func runBugs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cl := newCommandLine("bkcheck bugs")
	out := cl.addSwitch("out", "the page to write (its directory must exist); traces go to traces/bugs/ beside it (default docs/bugs.md)", false)
	cl.parse(args)
	if cl.help {
		fmt.Fprintln(stdout, "usage: bkcheck bugs [--out FILE]")
		return exitOK
	}
	path := "docs/bugs.md"
	if out.isSet {
		path = out.value
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
	page, err := bugs.Generate(ctx, bugs.Options{Report: func(line string) { fmt.Fprintf(stderr, "bkcheck bugs: %s\n", line) }})
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "bkcheck bugs: interrupted; %s and its traces are unchanged\n", path)
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck bugs: %v\n", err)
		return exitError
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(filepath.Join(dir, "traces", "bugs"), 0o755); err != nil {
		fmt.Fprintf(stderr, "bkcheck bugs: %v\n", err)
		return exitError
	}
	names := make([]string, 0, len(page.Traces))
	for name := range page.Traces {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := traces.WriteITFFile(filepath.Join(dir, name), page.Traces[name]); err != nil {
			fmt.Fprintf(stderr, "bkcheck bugs: %v\n", err)
			return exitError
		}
	}
	if err := atomicfile.WriteFile(path, page.Markdown); err != nil {
		fmt.Fprintf(stderr, "bkcheck bugs: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return exitOK
}
