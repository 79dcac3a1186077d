package main

import (
	"context"
	"fmt"
	"io"

	"github.com/bkcheck/bkcheck/bugs"
	"github.com/bkcheck/bkcheck/internal/atomicfile"
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
	if err := writePage(path, "bugs", page.Markdown, page.Traces, nil); err != nil {
		fmt.Fprintf(stderr, "bkcheck bugs: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return exitOK
}
