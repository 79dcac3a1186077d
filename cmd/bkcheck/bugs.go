package main

import (
	"context"
	"fmt"
	"io"

	"github.com/bkcheck/bkcheck/bugs"
)

// runBugs is `bkcheck bugs [--out FILE]`: it reproduces every historical
// bug of package bugs, checks each fix, and writes docs/bugs.md with the
// traces beside it. As with guarantees, nothing is written unless every
// bug was run.
func runBugs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	pc := newPageCommand("bugs", stdout, stderr)
	pc.cl.parse(args)
	if pc.cl.help {
		fmt.Fprintln(stdout, "usage: bkcheck bugs [--out FILE]")
		return exitOK
	}
	if code := pc.validate(); code != exitOK {
		return code
	}
	page, err := bugs.Generate(ctx, bugs.Options{Report: pc.report})
	var gp *generatedPage
	if err == nil {
		gp = &generatedPage{markdown: page.Markdown, traces: page.Traces}
	}
	return pc.finish(ctx, gp, err)
}
