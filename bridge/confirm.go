// Package bridge executes a trace of bkcheck's model on a real BookKeeper
// cluster and says whether BookKeeper does what the model did: each step of
// the trace becomes an action on the cluster (a client call, a frame
// delivered or stalled by the proxy, a metadata write released, a bookie
// killed or restarted), and after each step what BookKeeper shows (the
// entries each bookie serves, the ledger's metadata, each writer's LAC) is
// compared with the model's state. It ends with one verdict.
//
// The bridge sits above check and reads a trace only through it
// (check.ReadTrace, check.Replay); nothing below imports it.
package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/traces"
)

// DefaultVersion is the BookKeeper release a trace runs on unless told,
// or unless its model is a release (--bookkeeper).
const DefaultVersion = check.DefaultRelease

// Verdicts.
const (
	Reproduced    = "REPRODUCED"     // every step agreed and BookKeeper violates the property too
	Agreed        = "NOT REPRODUCED" // every step agreed, but BookKeeper does not violate the property
	Diverged      = "DIVERGED"       // at Step, BookKeeper did not do what the model did
	NotExecutable = "NOT EXECUTABLE" // the harness cannot drive Step
	// Unasked: every step agreed, and the trace's property is not one the
	// harness can ask of BookKeeper (askable): neither confirmed nor
	// refuted, where NOT REPRODUCED would claim BookKeeper keeps it.
	Unasked = "STEPS AGREED"
)

// Options say how to run a confirmation.
type Options struct {
	Version string // BookKeeper release (DefaultVersion if empty)
	// Dir keeps the cluster's data and logs; empty: a temporary directory,
	// removed afterwards unless the verdict is DIVERGED.
	Dir string
	// TempDir is where that temporary directory goes (empty: the system's
	// temporary directory): conform keeps a diverged walk's cluster beside
	// its trace, a test in its own temporary folder.
	TempDir string
	// StepTimeout bounds how long an expected event (a frame, a callback,
	// a state) may take before the step is called diverged. It is never a
	// pause: a step that agrees ends as soon as BookKeeper shows it.
	StepTimeout time.Duration
	Progress    func(format string, args ...any)
	// Fix names a variant of the model whose rules the bookies' agent
	// weaves into the release's classes (weave.go), beside the trace's
	// own: a finding's trace run with a candidate fix.
	Fix string
	// fixes are the agent's fixes the run weaves: the trace's variant's
	// and Fix's (preflight).
	fixes []string
	// terminal: the trace ends in a state with no successor (its #meta:
	// a terminal-state property's counterexample), so that no step of
	// the model, AutoRecovery's included, can follow (auditorCheck).
	terminal bool
}

// Result is a confirmation's outcome.
type Result struct {
	Trace      string `json:"trace"`
	Version    string `json:"bookkeeper"`
	Verdict    string `json:"verdict"`
	Step       int    `json:"step,omitempty"` // 1-based state index of the step that diverged or cannot be driven
	Action     string `json:"action,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Model      string `json:"model,omitempty"`           // the model's side, at a divergence
	BookKeeper string `json:"bookkeeper_side,omitempty"` // BookKeeper's side, at a divergence
	Property   string `json:"property,omitempty"`
	Evidence   string `json:"evidence,omitempty"` // what BookKeeper showed of the property
	Steps      int    `json:"steps"`
	Dir        string `json:"dir,omitempty"`
	// Fix is the variant --fix named; Fixes are the rules the bookies'
	// agent wove into the release's classes for the run (weave.go).
	Fix   string   `json:"fix,omitempty"`
	Fixes []string `json:"fixes,omitempty"`
	// Skipped are the model's steps BookKeeper does not take at all (a
	// replica Java's sequence read never asks), with why.
	Skipped []string `json:"skipped,omitempty"`
	// Notes are what BookKeeper did beyond the trace without contradicting
	// a step: a metadata write it asked for and the harness never released.
	Notes []string `json:"notes,omitempty"`
	// StepMS is how long each step took on the cluster (the comparison of
	// states after it not included), in the order taken.
	StepMS  []StepTime `json:"step_ms,omitempty"`
	StartMS int64      `json:"cluster_start_ms"`
	RunMS   int64      `json:"steps_ms"`
}

// StepTime is one step's time on the cluster.
type StepTime struct {
	Step   int     `json:"step"`
	Action string  `json:"action"`
	MS     float64 `json:"ms"`
}

// Text is the result for people: the verdict, the step and both sides.
func (r *Result) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on BookKeeper %s: %s\n", r.Verdict, r.Version, r.Trace)
	if len(r.Fixes) > 0 {
		fmt.Fprintf(&b, "  with the bookies' agent weaving %s into the release's classes\n", strings.Join(r.Fixes, ", "))
	}
	switch r.Verdict {
	case Reproduced, Agreed, Unasked:
		taken := ""
		if len(r.Skipped) > 0 {
			taken = fmt.Sprintf(" (%d of them not taken in BookKeeper, below)", len(r.Skipped))
		}
		fmt.Fprintf(&b, "  every step of %d agreed with the model%s; %s: %s\n", r.Steps, taken, r.Property, r.Evidence)
		for _, s := range r.Skipped {
			fmt.Fprintf(&b, "  %s\n", s)
		}
	case Diverged:
		fmt.Fprintf(&b, "  at step %d (%s): %s\n    model:      %s\n    BookKeeper: %s\n", r.Step, r.Action, r.Reason, r.Model, r.BookKeeper)
	case NotExecutable:
		if r.Action != "" {
			fmt.Fprintf(&b, "  at step %d (%s): ", r.Step, r.Action)
		} else {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%s\n", r.Reason)
	}
	for _, s := range r.Notes { // what the harness did beyond the trace (before the step, for a verdict at a step)
		fmt.Fprintf(&b, "  note: %s\n", s)
	}
	if r.Verdict != NotExecutable || r.StartMS > 0 { // a refusal during the run started a cluster
		fmt.Fprintf(&b, "  cluster start %.1f s, steps %.1f s", float64(r.StartMS)/1000, float64(r.RunMS)/1000)
		if r.Dir != "" {
			fmt.Fprintf(&b, "; data and logs in %s", r.Dir)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ErrTrace wraps a trace the bridge refuses before starting anything: not a
// trace of the current model, or not confirmed by the model.
var ErrTrace = errors.New("trace")

// Confirm executes the trace in path on a real cluster.
func Confirm(ctx context.Context, path string, opts Options) (res *Result, err error) {
	if opts.StepTimeout == 0 {
		opts.StepTimeout = 20 * time.Second
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	pf, err := preflight(path, opts)
	if err != nil {
		return nil, err
	}
	if pf.decided {
		return pf.res, nil
	}
	tr, states, params, res, opts := pf.tr, pf.states, pf.params, pf.res, pf.opts

	cp, err := Classpath(ctx, opts.Version, opts.Progress)
	if err != nil {
		return nil, err
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp(opts.TempDir, "bkcheck-confirm-"); err != nil {
			return nil, err
		}
		defer func() {
			if res == nil || res.Verdict != Diverged {
				os.RemoveAll(dir)
			} else {
				res.Dir = dir
			}
		}()
	} else {
		if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
			return nil, fmt.Errorf("%w: --dir %s is not empty: a cluster starts from empty directories", ErrTrace, dir)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		res.Dir = dir
	}
	start := time.Now()
	progress("starting ZooKeeper and %d bookies of BookKeeper %s", toInt(params["bookies"]), opts.Version)
	r, err := newRun(ctx, cp, dir, states, params, opts)
	if err != nil {
		return nil, err
	}
	defer r.close()
	res.StartMS = time.Since(start).Milliseconds()
	done, err := r.takeSteps(ctx, res, progress)
	if err != nil {
		return nil, err
	}
	res.Notes = append(res.Notes, r.agentNotes()...)
	if done {
		return res, nil
	}
	if pf.lasso != "" {
		res.Verdict = Reproduced
		res.Evidence = fmt.Sprintf("%s: every turn of the cycle reached the model's states, the same at each turn, so BookKeeper repeats it as the model does and %s never holds", pf.lasso, tr.Invariant)
		return res, nil
	}
	if stop, err := r.auditorCheck(ctx, res); err != nil || stop {
		return res, err
	}
	// An eventually-property's counterexample is asked at its end only
	// where it ends in a terminal state: nothing can follow there.
	if ask := observedCEL[strings.Join(strings.Fields(tr.Expression), " ")]; ask != nil && (tr.Kind != "eventually" || opts.terminal) {
		violated, evidence, err := ask(ctx, r)
		if err != nil {
			return nil, err
		}
		res.Evidence = evidence
		res.Verdict = Agreed
		if violated {
			res.Verdict = Reproduced
		}
		return res, nil
	}
	violated, evidence, err := r.property(ctx, tr.Invariant, states[len(states)-1])
	if err != nil {
		return nil, err
	}
	res.Evidence = evidence
	switch {
	case !askable(tr.Invariant):
		res.Verdict = Unasked
		res.Evidence = fmt.Sprintf("%s is not a property the harness asks of BookKeeper (it asks %s); of the data, %s",
			tr.Invariant, strings.Join(askableList(), ", "), evidence)
	case violated:
		res.Verdict = Reproduced
	default:
		res.Verdict = Agreed
	}
	return res, nil
}

// takeSteps takes the trace's steps on the run's cluster, comparing
// states as it goes, and records in res how. done: res holds the verdict
// (a step diverged or was not executable); otherwise every step agreed and
// the property is left to ask.
func (r *run) takeSteps(ctx context.Context, res *Result, progress func(string, ...any)) (done bool, err error) {
	states := r.states
	start := time.Now()
	stop := func(i int, err error) (bool, error) {
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		var d *divergence
		if errors.As(err, &d) {
			res.Verdict, res.Step, res.Action = d.verdict, i+1, states[i].action()
			res.Reason, res.Model, res.BookKeeper = d.reason, d.model, d.bk
			res.RunMS = time.Since(start).Milliseconds()
			res.Notes = append(res.Notes, r.notes...) // what the harness did before the step, beyond the trace
			return true, nil
		}
		return true, fmt.Errorf("step %d (%s): %w", i+1, states[i].action(), err)
	}
	sched := newSchedule(states, r)
	// settle takes or skips every waiting step that can go now (all of
	// them when final).
	settle := func(final bool) (int, error) {
		for {
			d, skip, ok := sched.next(final)
			if !ok {
				return 0, nil
			}
			if skip != "" {
				res.Skipped = append(res.Skipped, fmt.Sprintf("step %d (%s): not taken in BookKeeper: %s", d+1, states[d].action(), skip))
				progress("step %d/%d: %s: not taken in BookKeeper (%s)", d+1, len(states), states[d].action(), skip)
				continue
			}
			progress("step %d/%d: %s (taken after the steps that did not depend on it)", d+1, len(states), states[d].action())
			r.cur = d
			if err := r.step(ctx, states[d-1], states[d]); err != nil {
				return d, err
			}
		}
	}
	for i := 1; i < len(states); i++ {
		prev, next := states[i-1], states[i]
		// A lost read Java has sent by now is timed out, and the reads it
		// then sends let waiting steps go before this one: a step that
		// needs their answers (a recovery's close) must not come first.
		if err := r.loseLater(ctx); err != nil {
			return stop(i, err)
		}
		if d, err := settle(false); err != nil {
			return stop(d, err)
		}
		if !sched.arrive(i) {
			continue
		}
		progress("step %d/%d: %s", i+1, len(states), next.action())
		t0 := time.Now()
		r.cur = i
		if err := r.step(ctx, prev, next); err != nil {
			return stop(i, err)
		}
		res.StepMS = append(res.StepMS, StepTime{Step: i + 1, Action: next.action(), MS: float64(time.Since(t0).Microseconds()) / 1000})
		if d, err := settle(false); err != nil {
			return stop(d, err)
		}
		if !sched.waiting() && len(r.completing) == 0 {
			if err := r.compare(ctx, next); err != nil {
				return stop(i, err)
			}
			if err := r.decommissionWaits(ctx, next); err != nil {
				return stop(i, err)
			}
		}
	}
	if err := r.loseLater(ctx); err != nil {
		return stop(len(states)-1, err)
	}
	if sched.waiting() {
		if d, err := settle(true); err != nil {
			return stop(d, err)
		}
		if err := r.compare(ctx, states[len(states)-1]); err != nil {
			return stop(len(states)-1, err)
		}
	}
	res.RunMS = time.Since(start).Milliseconds()
	res.Notes = append(res.Notes, r.notes...)
	for _, e := range r.drv.pending() {
		if e.Ev == "meta-held" {
			res.Notes = append(res.Notes, fmt.Sprintf("%s asked to %s the ledger's metadata where the trace has no such step; the write was held, never released", e.Client, e.Op))
		}
	}
	return false, nil
}

// divergence ends a confirmation at a step.
type divergence struct {
	verdict, reason, model, bk string
}

func (d *divergence) Error() string { return d.reason }

func diverged(reason, model, bk string) error {
	return &divergence{verdict: Diverged, reason: reason, model: model, bk: bk}
}

func notExecutable(reason string) error { return &divergence{verdict: NotExecutable, reason: reason} }

// preflighted is a trace read and checked before any process starts, and
// the result Confirm gives if that check decides it.
type preflighted struct {
	tr      *traces.Trace
	states  []itfState
	params  map[string]any
	res     *Result
	opts    Options // with the release the trace runs on
	decided bool    // res is the verdict: NOT EXECUTABLE before any process starts
	lasso   string  // a lasso's cycle run lassoTurns times: what was run (runLasso)
}

// preflight is what Confirm does before any process starts: it reads the
// trace, has the model confirm it, picks the release, and refuses an
// action or a setting the harness does not drive (unsupported).
func preflight(path string, opts Options) (pf preflighted, err error) {
	tr, err := check.ReadTrace(path)
	if err != nil {
		return pf, fmt.Errorf("%w: %s: %v", ErrTrace, path, err)
	}
	if name := tr.Model.Descriptor().Name; name != "current" {
		return pf, fmt.Errorf("%w: %s is a trace of the %s model; the bridge drives traces of the current model (its clients are BookKeeper's client of today)", ErrTrace, path, name)
	}
	if err := check.Replay(tr); err != nil {
		return pf, fmt.Errorf("%w: %s: the model does not confirm it: %v", ErrTrace, path, err)
	}
	states, meta, err := readITFStates(path)
	if err != nil {
		return pf, fmt.Errorf("%w: %s: %v", ErrTrace, path, err)
	}
	params, _ := meta["params"].(map[string]any)
	modelRelease, _ := params["bookkeeper"].(string)
	var notes []string
	lasso := ""
	if tr.Kind == "eventually" && tr.Loop > 0 {
		states, lasso = runLasso(states, tr.Loop)
		notes = append(notes, lasso)
	}
	if opts.Version == "" {
		opts.Version = modelRelease
	}
	if opts.Version == "" || opts.Version == check.MasterRelease {
		opts.Version = DefaultVersion
	}
	if modelRelease != "" && modelRelease != opts.Version {
		notes = append(notes, fmt.Sprintf("the trace's model is BookKeeper %s; it runs on %s (master has no released artifact; with --bookkeeper, the one asked for)", modelRelease, opts.Version))
	}
	opts.terminal = meta["terminal"] == true
	res := &Result{Trace: path, Version: opts.Version, Steps: len(states), Property: tr.Invariant, Notes: notes, Fix: opts.Fix}
	if opts.Fix != "" {
		if err := CheckFix(opts.Fix); err != nil {
			return pf, fmt.Errorf("%w: --fix %s: %v", ErrTrace, opts.Fix, err)
		}
		opts.fixes, _ = fixesOf(opts.Fix)
	}
	if v, _ := params["variant"].(string); v != "" {
		if fixes, err := fixesOf(v); err == nil {
			for _, f := range fixes {
				if !slices.Contains(opts.fixes, f) {
					opts.fixes = append(opts.fixes, f)
				}
			}
		}
	}
	res.Fixes = opts.fixes
	pf = preflighted{tr: tr, states: states, params: params, res: res, opts: opts, lasso: lasso}
	if step, why := unsupported(params, states); step >= 0 {
		res.Verdict, res.Step, res.Reason = NotExecutable, step+1, why
		if step > 0 {
			res.Action = states[step].action()
		}
		pf.decided = true
	}
	return pf, nil
}

// lassoTurns is how many times a lasso's cycle runs on BookKeeper: what a
// committer accepts for "for ever" is the same cycle, to the same state,
// three times.
const lassoTurns = 3

// runLasso is a lasso's states with its cycle (the states after the one
// at 1-based loop, which the last equals) run lassoTurns times, and the
// note that says so.
func runLasso(states []itfState, loop int) ([]itfState, string) {
	cycle := states[loop:]
	out := slices.Clone(states)
	for range lassoTurns - 1 {
		out = append(out, cycle...)
	}
	var acts []string
	for _, s := range cycle {
		acts = append(acts, s.action())
	}
	return out, fmt.Sprintf("a lasso: its cycle (steps %d-%d of the trace: %s) run %d times, steps %d-%d here",
		loop+1, len(states), strings.Join(acts, ", "), lassoTurns, loop+1, len(out))
}

// Preflight gives the verdict Confirm reaches before any process starts
// (NOT EXECUTABLE: an action or a setting the harness does not drive), or
// nil when the trace needs a cluster; a trace Confirm refuses is an error
// wrapping ErrTrace. It starts nothing, and needs no JDK.
func Preflight(path string, opts Options) (*Result, error) {
	pf, err := preflight(path, opts)
	if err != nil || !pf.decided {
		return nil, err
	}
	return pf.res, nil
}
