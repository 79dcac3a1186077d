package main

import (
	"context"

	"github.com/bkcheck/bkcheck/bugs"
	"github.com/bkcheck/bkcheck/schema"
)

// findingsSettings are the switches of bkcheck findings.
type findingsSettings struct {
	Out string `name:"out" unit:"FILE" help:"the page to write (its directory must exist); traces go to traces/findings/ beside it"`
}

var findingsSchema = schema.MustOf(findingsSettings{})

func findingsFlags() []section {
	return []section{{"Page", schema.Target{S: findingsSchema, V: &findingsSettings{Out: defaultPage("findings")}}}}
}

// runFindings is `bkcheck findings [--out FILE]`: it asks every open
// question of package bugs' Findings of master and of each proposed fix,
// and writes docs/findings.md with the traces beside it; nothing is
// written unless every question was answered as expected.
func runFindings(ctx context.Context, inv *invocation) int {
	return runRecordPage(ctx, inv, "findings", settingsOf[findingsSettings](inv.cl).Out, bugs.GenerateFindings)
}
