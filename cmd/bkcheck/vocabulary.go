package main

import (
	"context"
	"fmt"
	"io"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/schema"
)

// modelChoice is the switch of bkcheck variants, invariants and actions.
type modelChoice struct {
	Model string `name:"model" unit:"M" help:"the model to list for, as bkcheck check --model takes it: current or v4.13"`
}

var modelChoiceSchema = schema.MustOf(modelChoice{})

func modelFlags() []section {
	return []section{{"Model", schema.Target{S: modelChoiceSchema, V: &modelChoice{Model: check.ModelCurrent}}}}
}

// A vocabulary is what a model's --variant, --invariants and
// --exclude-actions accept, for the listing commands.
type vocabulary struct {
	variants   []term
	noVariants string // said when there are none
	invariants []term
	afterInvs  string // said after the invariants
	actions    []string
}

// A term is one named thing of a vocabulary, as listed.
type term struct {
	name, kind, text, source string
}

func (t term) print(w io.Writer) {
	fmt.Fprint(w, t.name)
	if t.kind != "" {
		fmt.Fprintf(w, " (%s)", t.kind)
	}
	fmt.Fprintf(w, "\n    %s\n", t.text)
	if t.source != "" {
		fmt.Fprintf(w, "    source: %s\n", t.source)
	}
}

// modelVocabulary is the vocabulary of the model --model names: the one
// place the listing commands look a model up.
func modelVocabulary(model string) (vocabulary, error) {
	var v vocabulary
	info, err := check.LookupModel(model)
	if err != nil {
		return v, err
	}
	d := info.Descriptor
	for _, x := range d.Variants {
		t := term{name: x.Name, text: x.Description, source: x.Source}
		if x.Issue != "" {
			t.name += " (" + x.Issue + ")"
		}
		v.variants = append(v.variants, t)
	}
	for _, inv := range d.Invariants {
		kind := "invariant"
		if inv.Terminal {
			kind = "invariant and terminal-state property"
		}
		v.invariants = append(v.invariants, term{name: inv.Name, kind: kind, text: inv.Statement, source: inv.Source})
	}
	for _, a := range d.Actions {
		what := a.Origin.String()
		if a.EnabledBy != "" {
			what += ": " + a.EnabledBy
		}
		v.actions = append(v.actions, fmt.Sprintf("%-44s %s", a.Name, what))
	}
	v.afterInvs = "Any other property: --invariant, --terminal, --eventually or --probe NAME=EXPR, in CEL (docs/properties.md)."
	if info.Name == check.ModelV413 {
		v.noVariants = fmt.Sprintf("--model %s has no protocol variants (--variant belongs to --model %s). Its option:", check.ModelV413, check.ModelCurrent)
		for _, f := range info.Options.Fields() {
			v.noVariants += fmt.Sprintf("\n--%s\n    %s", f.Name, f.Help)
		}
		v.afterInvs = "All of them are checked by default, as in BookKeeperProtocol_v4_13.cfg; other properties: --invariant, --terminal, --eventually or --probe NAME=EXPR, in CEL over the model's ITF variables (docs/properties.md)."
	}
	return v, nil
}

// listing runs one listing command: the vocabulary of --model, or a usage
// error.
func listing(inv *invocation, print func(io.Writer, vocabulary)) int {
	m := settingsOf[modelChoice](inv.cl)
	if len(inv.cl.args) > 0 {
		inv.cl.probs.Add("", "unexpected arguments: %v", inv.cl.args)
	}
	v, err := modelVocabulary(m.Model)
	if err != nil {
		inv.cl.probs.Add("model", "%v", err)
	}
	if code := inv.cl.report(inv.stderr); code != exitOK {
		return code
	}
	print(inv.stdout, v)
	return exitOK
}

// runVariants is `bkcheck variants [--model M]`.
func runVariants(_ context.Context, inv *invocation) int {
	return listing(inv, func(w io.Writer, v vocabulary) {
		if len(v.variants) == 0 {
			fmt.Fprintln(w, v.noVariants)
		}
		for _, t := range v.variants {
			t.print(w)
		}
	})
}

// runInvariants is `bkcheck invariants [--model M]`.
func runInvariants(_ context.Context, inv *invocation) int {
	return listing(inv, func(w io.Writer, v vocabulary) {
		for _, t := range v.invariants {
			t.print(w)
		}
		if v.afterInvs != "" {
			fmt.Fprintf(w, "\n%s\n", v.afterInvs)
		}
	})
}

// runActions is `bkcheck actions [--model M]`.
func runActions(_ context.Context, inv *invocation) int {
	return listing(inv, func(w io.Writer, v vocabulary) {
		for _, a := range v.actions {
			fmt.Fprintln(w, a)
		}
	})
}
