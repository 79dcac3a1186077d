package main

import (
	"context"
	"os"
	"strings"

	"github.com/bkcheck/bkcheck/guarantees"
	"github.com/bkcheck/bkcheck/schema"
)

// guaranteesSettings are the switches of bkcheck guarantees.
type guaranteesSettings struct {
	Out       string `name:"out" unit:"FILE" help:"the page to write (its directory must exist); traces go to traces/guarantees/ beside it"`
	MaxStates int64  `name:"max-states" unit:"N" help:"bound of each search: distinct states, or orbits where the search is symmetric (the loss ladder's searches: a multiple of it, given in the page's header)"`
	Settings  string `name:"settings" unit:"LIST" help:"regenerate only these settings' sections, E/Qw/Qa separated by commas (such as 5/3/2,5/5/2), or autorecovery for the AutoRecovery section, and keep the other sections of the page at --out as they are (not given: every section)"`
}

// autoRecoverySection names the AutoRecovery section in --settings.
const autoRecoverySection = "autorecovery"

var guaranteesSchema = schema.MustOf(guaranteesSettings{})

func guaranteesFlags() []section {
	return []section{{"Page", schema.Target{S: guaranteesSchema, V: &guaranteesSettings{Out: defaultPage("guarantees"), MaxStates: guarantees.DefaultMaxStates}}}}
}

// runGuarantees is `bkcheck guarantees [--out FILE] [--max-states N]
// [--settings LIST]`: it answers the questions of docs/guarantees.md for
// every setting (or those listed, keeping the page's other sections) and
// writes the page, with each refutation's trace beside it. Nothing is written
// unless every question was answered: an interrupted regeneration exits
// 130 and leaves the page and its traces as they were.
func runGuarantees(ctx context.Context, inv *invocation) int {
	s := settingsOf[guaranteesSettings](inv.cl)
	pc := newPageCommand("guarantees", s.Out, inv)
	if s.MaxStates < 1 {
		pc.cl.probs.Add("max-states", "must be >= 1 (got %d)", s.MaxStates)
	}
	var subset [][3]int
	ar := false
	if s.Settings != "" {
		for _, f := range strings.Split(s.Settings, ",") {
			if strings.TrimSpace(f) == autoRecoverySection {
				ar = true
				continue
			}
			st, err := guarantees.ParseSetting(strings.TrimSpace(f))
			if err != nil {
				pc.cl.probs.Add("settings", "%v", err)
				continue
			}
			subset = append(subset, st)
		}
	}
	var whole []byte
	if ar && subset == nil {
		subset = [][3]int{} // the AutoRecovery section alone
	}
	if subset != nil {
		var err error
		if whole, err = os.ReadFile(s.Out); err != nil {
			pc.cl.probs.Add("settings", "the page whose other sections are kept cannot be read: %v", err)
		}
	}
	if code := pc.validate(); code != exitOK {
		return code
	}
	page, err := guarantees.Generate(ctx, guarantees.Options{Report: pc.report, MaxStates: s.MaxStates, Settings: subset, AutoRecovery: ar})
	var gp *generatedPage
	if err == nil {
		gp = &generatedPage{markdown: page.Markdown, traces: page.Traces, unused: page.Unused}
		if subset != nil {
			gp.markdown, err = guarantees.Splice(whole, page.Markdown)
		}
	}
	return pc.finish(ctx, gp, err)
}
