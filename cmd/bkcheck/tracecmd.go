package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/traces"
)

func readTrace(path string) (*traces.Trace, error) { return check.ReadTrace(path) }

// runReplay is `bkcheck replay FILE`: exit 0 when the model confirms the
// trace step by step, 1 naming the first step it does not confirm, 2 when
// the file is not a trace bkcheck can read (missing, malformed, or naming
// a model or property bkcheck does not have).
func runReplay(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: bkcheck replay FILE.itf.json")
		return exitUsage
	}
	tr, err := readTrace(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck replay: %v\n", err)
		if errors.Is(err, traces.ErrITF) || errors.Is(err, os.ErrNotExist) {
			return exitUsage
		}
		return exitError
	}
	if err := check.Replay(tr); err != nil {
		fmt.Fprintf(stderr, "bkcheck replay: %s: not confirmed: %v\n", args[0], err)
		if _, ok := schema.AsProblems(err); ok {
			return exitUsage
		}
		return exitError
	}
	fmt.Fprintf(stdout, "confirmed: %d states, every step a transition of the model (%s), and the last state %s\n", len(tr.Steps), tr.Model.Params(), tr.What())
	return exitOK
}

// runTrace is `bkcheck trace render FILE [--format F]`.
func runTrace(inv *invocation) int {
	cl := inv.cl
	format := settingsOf[renderSettings](cl).Format
	renderers := map[string]func(io.Writer, *traces.Trace) error{
		"text": traces.RenderText, "mermaid": traces.RenderMermaid, "dot": traces.RenderDOT, "html": traces.RenderHTML,
	}
	render, ok := renderers[format]
	if !ok {
		cl.probs.Add("format", "must be text, mermaid, dot or html (got %q)", format)
	}
	if len(cl.args) != 1 {
		cl.probs.Add("", "give one trace file (got %d arguments)", len(cl.args))
	}
	if code := cl.report(inv.stderr); code != exitOK {
		return code
	}
	tr, err := readTrace(cl.args[0])
	if err != nil {
		fmt.Fprintf(inv.stderr, "bkcheck trace render: %v\n", err)
		return exitUsage
	}
	// A trace file is data from anyone: say when the model does not
	// confirm it (edited, forged, or naming a property bkcheck lacks),
	// and draw it all the same.
	if err := check.Replay(tr); err != nil {
		fmt.Fprintf(inv.stderr, "bkcheck trace render: warning: %s is not confirmed by the model (bkcheck replay): %v\n", cl.args[0], err)
	}
	explainTrace(tr)
	if err := render(inv.stdout, tr); err != nil {
		fmt.Fprintf(inv.stderr, "bkcheck trace render: %v\n", err)
		return exitError
	}
	return exitOK
}
