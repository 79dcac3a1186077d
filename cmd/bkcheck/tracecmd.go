package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bkcheck/bkcheck/internal/atomicfile"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/properties"
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

// loopMark is the line of a file of steps before the first step of a
// lasso's cycle: the state it stands between is the one the last returns
// to (--loop given by place rather than by number).
const loopMark = "loop"

// buildSettings are bkcheck trace build's own switches.
type buildSettings struct {
	Loop     int    `name:"loop" unit:"K" help:"the trace is a lasso: its last state is state K (1-based: state 1 is the initial one, state i+1 follows step i) and the behaviour repeats the steps after K for ever (with --eventually); or a line loop in the file of steps, before the cycle's first step"`
	TraceOut string `name:"trace-out" unit:"FILE" help:"where to write the trace as ITF JSON (never overwritten)"`
}

var buildSchema = schema.MustOf(buildSettings{})

func buildFlags() []section {
	mc := check.DefaultConfig().ModelConfig
	return []section{
		{"Model and property", schema.Target{S: check.ModelSchema, V: &mc}},
		{"Trace", schema.Target{S: buildSchema, V: &buildSettings{}}},
	}
}

// runTraceBuild is `bkcheck trace build [flags] STEPS`: the trace of a
// story, one action label per line of STEPS (as traces print them; # and
// blank lines skipped; a line loop before a lasso's cycle), checked by the model (every step a transition,
// the property answered, a lasso's cycle fair) and written to
// --trace-out. Exit 0 when written, 1 when the story is not a
// counterexample of the model (which step, and why), 2 for bad flags or
// files.
func runTraceBuild(inv *invocation) int {
	cl := inv.cl
	mc, bs := settingsOf[check.ModelConfig](cl), settingsOf[buildSettings](cl)
	if len(cl.args) != 1 {
		cl.probs.Add("", "give one file of steps (got %d arguments)", len(cl.args))
	}
	if bs.TraceOut == "" || bs.TraceOut == "none" {
		cl.probs.Add("trace-out", "give the file to write the trace to")
	} else if cl.emptyValues(len(mc.Exclude) == 0, bs.TraceOut); len(cl.probs) == 0 {
		if err := atomicfile.CheckWritable(bs.TraceOut); err != nil {
			cl.probs.Add("trace-out", "%v", err)
		}
	}
	var steps []string
	readable := true
	if len(cl.args) == 1 {
		data, err := os.ReadFile(cl.args[0])
		if err != nil {
			cl.probs.Add("", "the steps: %v", err)
			readable = false
		}
		for _, line := range strings.Split(string(data), "\n") {
			switch line = strings.TrimSpace(line); {
			case line == loopMark && bs.Loop != 0 && bs.Loop != len(steps)+1:
				cl.probs.Add("loop", "%d, where the steps' %q line says %d", bs.Loop, loopMark, len(steps)+1)
			case line == loopMark:
				bs.Loop = len(steps) + 1
			case line != "" && !strings.HasPrefix(line, "#"):
				steps = append(steps, line)
			}
		}
	}
	if err := check.BuildProblems(*mc, len(steps), bs.Loop); err != nil {
		if !readable {
			// The steps' count is unknown: leave out what depends on it.
			err = check.BuildProblems(*mc, max(bs.Loop, 1), max(bs.Loop, 0))
			if bs.Loop < 0 {
				cl.probs.Add("loop", "must name a state before the last (got %d)", bs.Loop)
			}
		}
		cl.validate(err)
	}
	if code := cl.report(inv.stderr); code != exitOK {
		return code
	}
	tr, err := check.Build(*mc, steps, bs.Loop)
	if err != nil {
		fmt.Fprintf(inv.stderr, "bkcheck trace build: %v\n", err)
		var re *check.ReplayError
		if errors.As(err, &re) {
			return exitError
		}
		return exitUsage
	}
	if err := traces.WriteITFFile(bs.TraceOut, tr); err != nil {
		fmt.Fprintf(inv.stderr, "bkcheck trace build: %v\n", err)
		return exitError
	}
	what := "a witness of " + tr.Invariant
	if tr.Kind == properties.Invariant.String() {
		what = "a counterexample of " + tr.Invariant + " (its last state, the first to violate it)"
	}
	if tr.Terminal {
		what = "a state without successor violating " + tr.Invariant
	}
	if tr.Loop > 0 {
		what = fmt.Sprintf("a fair lasso violating %s (the cycle from state %d)", tr.Invariant, tr.Loop)
	}
	fmt.Fprintf(inv.stdout, "built: %d states, %s, confirmed by the model (%s); written to %s\n", len(tr.Steps), what, tr.Model.Params(), bs.TraceOut)
	return exitOK
}
