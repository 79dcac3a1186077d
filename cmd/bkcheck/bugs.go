package main

import (
	"context"

	"github.com/bkcheck/bkcheck/bugs"
	"github.com/bkcheck/bkcheck/schema"
)

// bugsSettings are the switches of bkcheck bugs.
type bugsSettings struct {
	Out string `name:"out" unit:"FILE" help:"the page to write (its directory must exist); traces go to traces/bugs/ beside it"`
}

var bugsSchema = schema.MustOf(bugsSettings{})

func bugsFlags() []section {
	return []section{{"Page", schema.Target{S: bugsSchema, V: &bugsSettings{Out: defaultPage("bugs")}}}}
}

// runBugs is `bkcheck bugs [--out FILE]`: it reproduces every historical
// bug of package bugs, checks each fix, and writes docs/bugs.md with the
// traces beside it. As with guarantees, nothing is written unless every
// bug was run.
func runBugs(ctx context.Context, inv *invocation) int {
	return runRecordPage(ctx, inv, "bugs", settingsOf[bugsSettings](inv.cl).Out, bugs.Generate)
}

// runRecordPage writes one of package bugs' pages (docs/bugs.md,
// docs/findings.md) as generate makes it.
func runRecordPage(ctx context.Context, inv *invocation, name, out string, generate func(context.Context, bugs.Options) (*bugs.Page, error)) int {
	pc := newPageCommand(name, out, inv)
	if code := pc.validate(); code != exitOK {
		return code
	}
	page, err := generate(ctx, bugs.Options{Report: pc.report})
	var gp *generatedPage
	if err == nil {
		gp = &generatedPage{markdown: page.Markdown, traces: page.Traces, unused: page.Unused}
	}
	return pc.finish(ctx, gp, err)
}
