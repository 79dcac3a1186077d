package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/bkcheck/bkcheck/guarantees"
)

// runGuarantees is `bkcheck guarantees [--out FILE] [--max-states N]`: it
// answers the questions of docs/guarantees.md for every setting and writes
// the page, with each refutation's trace beside it. Nothing is written
// unless every question was answered: an interrupted regeneration exits
// 130 and leaves the page and its traces as they were.
func runGuarantees(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	pc := newPageCommand("guarantees", stdout, stderr)
	maxStates := pc.cl.addSwitch("max-states", "bound of each search: distinct states, or orbits where the search is symmetric (default "+strconv.FormatInt(guarantees.DefaultMaxStates, 10)+")", false)
	pc.cl.parse(args)
	if pc.cl.help {
		fmt.Fprintln(stdout, "usage: bkcheck guarantees [--out FILE] [--max-states N]")
		return exitOK
	}
	opt := guarantees.Options{Report: pc.report}
	if maxStates.isSet {
		n, err := strconv.ParseInt(maxStates.value, 10, 64)
		if err != nil || n < 1 {
			pc.cl.probs.Add("", "--max-states must be a positive integer (got %q)", maxStates.value)
		}
		opt.MaxStates = n
	}
	if code := pc.validate(); code != exitOK {
		return code
	}
	page, err := guarantees.Generate(ctx, opt)
	var gp *generatedPage
	if err == nil {
		gp = &generatedPage{markdown: page.Markdown, traces: page.Traces, unused: page.Unused}
	}
	return pc.finish(ctx, gp, err)
}
