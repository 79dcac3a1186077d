package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/internal/atomicfile"
	"github.com/bkcheck/bkcheck/traces"
)

// Walk is one random walk of the model executed on a cluster.
type Walk struct {
	Seed   uint64  `json:"seed"`
	Trace  string  `json:"trace,omitempty"` // its ITF file
	States int     `json:"states"`
	Result *Result `json:"result,omitempty"`
	Err    string  `json:"error,omitempty"` // the harness failed (not a verdict)
}

// ConformReport is the outcome of a conformance run.
type ConformReport struct {
	Version    string         `json:"bookkeeper"`
	Walks      []Walk         `json:"walks"`
	Verdicts   map[string]int `json:"verdicts"`    // walks by verdict (and "error")
	Undriven   map[string]int `json:"not_driven"`  // NOT EXECUTABLE walks by the action or setting they stop at
	Truncated  int            `json:"truncated"`   // walks that hit --depth before a terminal state (not run)
	Executed   int            `json:"executed"`    // walks whose every step ran (agreed) or that diverged
	Agreed     int            `json:"agreed"`      // executed walks whose every step agreed
	Divergence []Walk         `json:"divergences"` // the DIVERGED walks
}

// endOfWalk is the terminal-state property every walk fails: a walk that
// reaches a state without successor is then reported with its whole trace.
const endOfWalk = "false"

// Conform runs cfg.Traces random walks of the model (walk i with seed
// cfg.Seed+i, as bkcheck simulate does), writes each walk's trace to dir
// and executes it on a fresh cluster with Confirm. Walks that end at
// --depth rather than in a terminal state are counted and not run.
func Conform(ctx context.Context, cfg check.SimConfig, dir string, opts Options) (*ConformReport, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	rep := &ConformReport{Version: opts.Version, Verdicts: map[string]int{}, Undriven: map[string]int{}}
	n := cfg.Traces
	for i := int64(0); i < n; i++ {
		c := cfg
		c.Seed = cfg.Seed + uint64(i)
		c.Traces = 1
		c.Invariants = []string{}
		c.Settings = cfg.Settings
		if err := c.Settings.Add("terminal", "EndOfWalk", endOfWalk); err != nil {
			return nil, err
		}
		sim, err := check.Simulate(ctx, c)
		if err != nil {
			return nil, err
		}
		w := Walk{Seed: c.Seed}
		if sim.Trace == nil {
			rep.Truncated++
			rep.Walks = append(rep.Walks, w)
			if err := rep.Save(dir); err != nil {
				return rep, err
			}
			continue
		}
		w.States = len(sim.Trace.Steps)
		w.Trace = filepath.Join(dir, fmt.Sprintf("walk-%d.itf.json", c.Seed))
		if err := traces.WriteITFFile(w.Trace, sim.Trace); err != nil {
			return nil, err
		}
		o := opts
		o.Progress = nil
		o.TempDir = dir // a diverged walk's cluster stays beside its trace
		res, err := Confirm(ctx, w.Trace, o)
		switch {
		case ctx.Err() != nil:
			return rep, ctx.Err()
		case err != nil:
			w.Err = err.Error()
			rep.Verdicts["error"]++
		default:
			w.Result = res
			rep.Verdicts[res.Verdict]++
			switch res.Verdict {
			case NotExecutable:
				rep.Undriven[undrivenKey(res)]++
			case Diverged:
				rep.Executed++
				rep.Divergence = append(rep.Divergence, w)
			default:
				rep.Executed++
				rep.Agreed++
			}
		}
		rep.Walks = append(rep.Walks, w)
		verdict := "error: " + w.Err
		if w.Result != nil {
			verdict = w.Result.Verdict
			if w.Result.Step > 0 {
				verdict += fmt.Sprintf(" at step %d (%s)", w.Result.Step, w.Result.Action)
			}
		}
		if err := rep.Save(dir); err != nil {
			return rep, err
		}
		progress("walk %d/%d (seed %d, %d states): %s", i+1, n, c.Seed, w.States, verdict)
	}
	return rep, nil
}

// ReportFile is the report's name in conform's directory.
const ReportFile = "conformance.json"

// Save writes the report into dir, whole or not at all: conform saves it
// after each walk, so that a run killed at any point leaves the walks it
// finished reported.
func (rep *ConformReport) Save(dir string) error {
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, ReportFile), append(b, '\n'))
}

// undrivenKey names what stopped a NOT EXECUTABLE walk: its action, or the
// settings.
func undrivenKey(r *Result) string {
	if r.Action != "" {
		return r.Action
	}
	return "settings: " + r.Reason
}

// Text is the report for people.
func (r *ConformReport) Text() string {
	var b strings.Builder
	run := len(r.Walks) - r.Truncated
	fmt.Fprintf(&b, "%d walks on BookKeeper %s: %d ended at --depth (not run), %d run\n", len(r.Walks), r.Version, r.Truncated, run)
	fmt.Fprintf(&b, "  executed to the end or to a divergence: %d; every step agreed: %d", r.Executed, r.Agreed)
	if r.Executed > 0 {
		fmt.Fprintf(&b, " (%.1f%%)", 100*float64(r.Agreed)/float64(r.Executed))
	}
	b.WriteString("\n")
	keys := make([]string, 0, len(r.Verdicts))
	for k := range r.Verdicts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-15s %d\n", k, r.Verdicts[k])
	}
	if len(r.Undriven) > 0 {
		b.WriteString("  not executable, by the step the harness cannot drive:\n")
		keys = keys[:0]
		for k := range r.Undriven {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return r.Undriven[keys[i]] > r.Undriven[keys[j]] || r.Undriven[keys[i]] == r.Undriven[keys[j]] && keys[i] < keys[j]
		})
		for _, k := range keys {
			fmt.Fprintf(&b, "    %4d  %s\n", r.Undriven[k], k)
		}
	}
	for _, w := range r.Divergence {
		fmt.Fprintf(&b, "  DIVERGED: seed %d (%s) at step %d (%s): %s\n", w.Seed, w.Trace, w.Result.Step, w.Result.Action, w.Result.Reason)
	}
	for _, w := range r.Walks {
		if w.Err != "" {
			fmt.Fprintf(&b, "  error: seed %d (%s): %s\n", w.Seed, w.Trace, w.Err)
		}
	}
	return b.String()
}
