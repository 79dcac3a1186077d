package check

import (
	"slices"
	"strings"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
)

// GivenNote says that a setting given explicitly was accepted though
// EnsureDefaults cleared it: its value names the default ("--journal
// synced"), or it has no effect with the other settings ("--journal
// disabled" without --crashes; "--data-integrity --ledger-storage
// interleaved", with which the check throws before it does anything: the
// same model as no check). The run is the same as without such settings,
// and says so (NoteLines).
type GivenNote struct {
	Field   string // the setting
	Given   string // its value as given
	Default bool   // Given names the default; else it has no effect here
}

// noEffectWhy says, for the settings EnsureDefaults clears, when they
// matter.
var noEffectWhy = map[string]string{
	"journal":                         "a journal mode matters only with --crashes",
	"checkpoints":                     "checkpoints matter only with --crashes",
	"reformat-cookie":                 "the cookie matters only with --reformat",
	"data-integrity":                  "the data-integrity check runs only after a crash with --journal disabled, or a re-format with --reformat-cookie kept",
	"ledger-storage":                  "with interleaved ledger storage the data-integrity check throws before it fences anything: the same model as no check",
	"max-ensemble-changes":            "the bound on ensemble changes is the Java client's: only with --add-path java",
	"auditor-periodic-check":          "the Auditor's settings matter only with --autorecovery",
	"auditor-verification-percentage": "the Auditor's settings matter only with --autorecovery",
}

// NoteLines renders notes for people, each setting as name renders it
// with its value ("--journal synced"): one line per setting given as the
// default's name, and one for those with no effect, which hold together
// (--data-integrity with --ledger-storage interleaved: the model is the
// same without both, not without either).
func NoteLines(notes []GivenNote, name func(field, value string) string) []string {
	var lines, none, why []string
	interleaved := slices.ContainsFunc(notes, func(n GivenNote) bool { return n.Field == "ledger-storage" && !n.Default })
	for _, n := range notes {
		if n.Default {
			lines = append(lines, name(n.Field, n.Given)+" is the default")
			continue
		}
		none = append(none, name(n.Field, n.Given))
		if n.Field == "data-integrity" && interleaved {
			continue // the ledger storage's reason is the check's
		}
		if w, ok := noEffectWhy[n.Field]; ok && !slices.Contains(why, w) {
			why = append(why, w)
		}
	}
	switch len(none) {
	case 0:
		return lines
	case 1:
		lines = append(lines, none[0]+" has no effect with these settings: the model is the same without it")
	default:
		lines = append(lines, strings.Join(none[:len(none)-1], ", ")+" and "+none[len(none)-1]+" have no effect with these settings: the model is the same without them")
	}
	if len(why) > 0 {
		lines[len(lines)-1] += " (" + strings.Join(why, "; ") + ")"
	}
	return lines
}

// zeroMeansUnset are the settings whose zero value means "not given" (a
// default chosen elsewhere) though EnsureDefaults leaves it zero: given
// explicitly, 0 is refused as any other value outside the range would be.
var zeroMeansUnset = map[string]string{
	"memory":      "is below the " + MinMemory.String() + " minimum (got 0); leave the setting out for the default budget (" + schema.Size(explorer.DefaultMemory).String() + " for a search on disk, no Go heap limit)",
	"fingerprint": "must be 64, 96 or 128 (got 0); leave the setting out for the default width",
}

// ExplainDefaults is the one rule for settings given explicitly, on the
// command line, in a parameter-set file (--config) or at a point of a
// sweep: what EnsureDefaults did to them is never silent. t.V has been
// through EnsureDefaults; given maps each setting given to its text as it
// was set, before EnsureDefaults.
//
//   - A value EnsureDefaults clears is accepted with a note (GivenNote).
//   - A zero or empty value EnsureDefaults replaces (-e 0, which would mean
//     E = Qw; --workers 0; an empty --invariants), or a zero that means "not
//     given" (--memory 0), is refused: it is not a value the setting takes,
//     and leaving the setting out gives the default.
//
// Notes and problems come in the schema's order of settings.
func ExplainDefaults(t schema.Target, given map[string]string) (notes []GivenNote, probs schema.Problems) {
	for _, f := range t.S.Fields() {
		was, ok := given[f.Name]
		if !ok {
			continue
		}
		now := t.S.Get(t.V, f.Name)
		zeroText := func(s string) bool { return s == "" || s == "0" || s == "false" }
		switch {
		case was == now:
			if msg, ok := zeroMeansUnset[f.Name]; ok && was == "0" {
				probs.Add(f.Name, "%s", msg)
			}
		case zeroText(now):
			notes = append(notes, GivenNote{Field: f.Name, Given: was, Default: namesDefault(f.Name, was)})
		case zeroText(was):
			probs.Add(f.Name, "%q is not a value it takes; leave it out for the default (%s)", was, now)
		}
	}
	return notes, probs
}

// namesDefault reports whether text, given to setting name, names its
// default whatever the other settings (spec.Params.DefaultNames).
func namesDefault(name, text string) bool {
	if !spec.ParamsSchema.Has(name) {
		return false
	}
	var p spec.Params
	if spec.ParamsSchema.Set(&p, name, text) != nil {
		return false
	}
	p.DefaultNames()
	return spec.ParamsSchema.IsZero(&p, name)
}
