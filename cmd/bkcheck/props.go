package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/traces"
)

// explainTrace attaches to tr the explanation of its last state, derived
// from its states and its property (never read from the file); a property
// that cannot be explained is rendered without.
func explainTrace(tr *traces.Trace) {
	if ex, err := check.Explain(tr); err == nil {
		tr.Explanation = ex
	}
}

// celStart lists a run's CEL properties under the start line.
func (r *reporter) celStart(mc check.ModelConfig) {
	var parts []string
	for _, g := range []struct {
		kind string
		vals schema.Repeated
	}{{"invariant", mc.Invariant}, {"terminal", mc.Terminal}, {"eventually", mc.Eventually}, {"probe", mc.Probe}} {
		for _, v := range g.vals {
			name, _, _ := strings.Cut(v, "=")
			parts = append(parts, g.kind+" "+strings.TrimSpace(name))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(r.stdout, "  CEL properties: %s\n", strings.Join(parts, ", "))
	}
}

// witnessPath is where probe name's witness goes, beside the trace.
func witnessPath(tracePath, name string) string {
	return strings.TrimSuffix(tracePath, ".itf.json") + "-" + name + ".itf.json"
}

// writeWitnesses writes each found probe's witness as ITF beside
// tracePath (none when tracePath is "").
func (r *reporter) writeWitnesses(rep *check.Report, tracePath string) error {
	return r.writeProbeWitnesses(rep.Properties, tracePath)
}

// writeProbeWitnesses is writeWitnesses of the answers props (a check's
// or a simulation's).
func (r *reporter) writeProbeWitnesses(props []check.PropertyResult, tracePath string) error {
	var errs []error
	for _, p := range props {
		if p.Status != check.Found || p.Trace == nil || tracePath == "" {
			continue
		}
		path := witnessPath(tracePath, p.Name)
		if err := traces.WriteITFFile(path, p.Trace); err != nil {
			errs = append(errs, err)
			continue
		}
		if r.witnessFiles == nil {
			r.witnessFiles = map[string]string{}
		}
		r.witnessFiles[p.Name] = path
	}
	return errors.Join(errs...)
}

// propertiesText reports the answers that the verdict does not: probes
// (with their witnesses), eventually properties, and CEL properties left
// undecided. sim is the simulation that answered them (nil: a check's
// search): its witnesses are walks, not the shortest.
func (r *reporter) propertiesText(props []check.PropertyResult, sim *check.SimReport) {
	if len(props) == 0 {
		return
	}
	w := r.stdout
	fmt.Fprintln(w, "CEL properties:")
	for _, p := range props {
		line := fmt.Sprintf("  %s %s: %s", p.Kind, p.Name, p.Status)
		switch {
		case p.Status == check.Found && sim != nil:
			seed := sim.WitnessSeeds[p.Name]
			line += fmt.Sprintf(", by walk seed %d: a witness of %d states (below; not necessarily the shortest, which bkcheck check gives)", seed, len(p.Trace.Steps))
			if f := r.witnessFiles[p.Name]; f != "" {
				line += ", written to " + f
			}
			line += "; rerun it alone with: " + sim.RerunWalk(seed)
		case p.Status == check.Found:
			line += fmt.Sprintf(", shortest witness %d states (below)", len(p.Trace.Steps))
			if f := r.witnessFiles[p.Name]; f != "" {
				line += ", written to " + f
			}
		case p.Status == check.NotReachable:
			line += " (every reachable state explored)"
		case p.Status == check.Violated:
			line += " (the counterexample above)"
		case p.Status == check.Unknown && p.Reason != "":
			line += ": " + p.Reason
		}
		if p.Graph != nil {
			line += fmt.Sprintf("; behaviour graph: %d (state, pending) pairs, depth %d", p.Graph.Distinct, p.Graph.Depth)
		}
		if c := p.Cycles; c != nil {
			line += fmt.Sprintf(", %d edges, %d cyclic components (fair cycles checked; %.0f MiB)", c.Edges, c.SCCs, float64(c.PeakBytes)/(1<<20))
		}
		fmt.Fprintln(w, line)
	}
	for _, p := range props {
		if p.Status == check.Found {
			fmt.Fprintf(w, "\nProbe %s is reachable.\n", p.Name)
			traces.RenderText(w, p.Trace)
		}
	}
	fmt.Fprintln(w)
}

// jsonProperty is a CEL property's answer in --json output.
type jsonProperty struct {
	Name       string         `json:"name"`
	Kind       string         `json:"kind"`
	Statement  string         `json:"statement,omitempty"`
	Expression string         `json:"expression"`
	Status     string         `json:"status"`
	Reason     string         `json:"reason,omitempty"`
	Trace      *jsonViolation `json:"trace,omitempty"`
	Graph      *jsonGraph     `json:"behaviour-graph,omitempty"`
}

type jsonGraph struct {
	Distinct  int64 `json:"distinct"`
	Generated int64 `json:"generated"`
	Depth     int   `json:"depth"`
}

// propertiesJSON is props in --json output; sim is the simulation that
// answered them (nil: a check's search), whose witnesses name their walk.
func (r *reporter) propertiesJSON(props []check.PropertyResult, sim *check.SimReport) []jsonProperty {
	var out []jsonProperty
	for _, p := range props {
		jp := jsonProperty{Name: p.Name, Kind: p.Kind, Statement: p.Statement, Expression: p.Expression, Status: p.Status, Reason: p.Reason}
		if p.Trace != nil {
			file := r.witnessFiles[p.Name]
			if p.Status == check.Violated {
				file = r.traceFile
			}
			jp.Trace = violationJSON(p.Trace.Text(), file)
			if seed, ok := walkOf(sim, p); ok {
				jp.Trace.WalkSeed, jp.Trace.Rerun = seed, sim.RerunWalk(seed)
			}
		}
		if p.Graph != nil {
			jp.Graph = &jsonGraph{Distinct: p.Graph.Distinct, Generated: p.Graph.Generated, Depth: p.Graph.Depth}
		}
		out = append(out, jp)
	}
	return out
}

// walkOf is the seed of the walk of sim that p's trace is (none without
// sim): a probe's witness, or the violation.
func walkOf(sim *check.SimReport, p check.PropertyResult) (uint64, bool) {
	switch {
	case sim == nil:
		return 0, false
	case p.Status == check.Found:
		seed, ok := sim.WitnessSeeds[p.Name]
		return seed, ok
	case p.Status == check.Violated:
		return sim.WalkSeed, true
	}
	return 0, false
}
