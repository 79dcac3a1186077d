package main

import (
	"context"

	"github.com/bkcheck/bkcheck/guarantees"
	"github.com/bkcheck/bkcheck/schema"
)

// guaranteesSettings are the switches of bkcheck guarantees.
type guaranteesSettings struct {
	Out       string `name:"out" unit:"FILE" help:"the page to write (its directory must exist); traces go to traces/guarantees/ beside it"`
	MaxStates int64  `name:"max-states" unit:"N" help:"bound of each search: distinct states, or orbits where the search is symmetric"`
}

var guaranteesSchema = schema.MustOf(guaranteesSettings{})

func guaranteesFlags() []section {
	return []section{{"Page", schema.Target{S: guaranteesSchema, V: &guaranteesSettings{Out: defaultPage("guarantees"), MaxStates: guarantees.DefaultMaxStates}}}}
}

// runGuarantees is `bkcheck guarantees [--out FILE] [--max-states N]`: it
// answers the questions of docs/guarantees.md for every setting and writes
// the page, with each refutation's trace beside it. Nothing is written
// unless every question was answered: an interrupted regeneration exits
// 130 and leaves the page and its traces as they were.
func runGuarantees(ctx context.Context, inv *invocation) int {
	s := settingsOf[guaranteesSettings](inv.cl)
	pc := newPageCommand("guarantees", s.Out, inv)
	if s.MaxStates < 1 {
		pc.cl.probs.Add("max-states", "must be >= 1 (got %d)", s.MaxStates)
	}
	if code := pc.validate(); code != exitOK {
		return code
	}
	page, err := guarantees.Generate(ctx, guarantees.Options{Report: pc.report, MaxStates: s.MaxStates})
	var gp *generatedPage
	if err == nil {
		gp = &generatedPage{markdown: page.Markdown, traces: page.Traces, unused: page.Unused}
	}
	return pc.finish(ctx, gp, err)
}
