package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// reporter writes a run's start and result, as text for people or as
// newline-delimited JSON (--json). JSON keys are kebab-case like every
// setting; a run's settings appear under "config" exactly as the schema
// names them.
type reporter struct {
	coverage       bool   // --coverage
	dir            string // run directory, for the resume hint
	continueCmd    string // a sharded run: the command that continues it (it has no --resume)
	traceFile      string // where the counterexample was written, if anywhere
	stdout, stderr io.Writer
	json           bool
	enc            *json.Encoder

	witnessFiles map[string]string // probe -> where its witness was written
}

func newReporter(stdout, stderr io.Writer, asJSON bool) *reporter {
	return &reporter{stdout: stdout, stderr: stderr, json: asJSON, enc: json.NewEncoder(stdout)}
}

type jsonStart struct {
	Type   string        `json:"type"`
	Mode   string        `json:"mode"`
	Config schema.Object `json:"config"`
}

func (r *reporter) checkStart(cfg check.Config) {
	if r.json {
		r.enc.Encode(jsonStart{Type: "start", Mode: "check", Config: schema.Object{S: check.ConfigSchema, Target: &cfg}})
		return
	}
	sym := ""
	if cfg.Symmetry != (spec.Symmetry{}) {
		sym = "; symmetry: " + cfg.Symmetry.String()
	}
	fmt.Fprintf(r.stdout, "bkcheck: checking %s\n  invariants: %s%s; workers: %d\n", cfg.Describe(), strings.Join(cfg.Invariants, ", "), sym, cfg.Workers)
	r.celStart(cfg.ModelConfig)
}

type jsonStep struct {
	Action  string            `json:"action"`
	Changes map[string]string `json:"changes"`
}

type jsonViolation struct {
	Invariant string     `json:"invariant"`
	Kind      string     `json:"kind,omitempty"` // a CEL property's kind
	Deadlock  bool       `json:"deadlock"`
	Terminal  bool       `json:"terminal"`
	Length    int        `json:"length"`
	WalkSeed  uint64     `json:"walk-seed,omitempty"` // simulate
	Rerun     string     `json:"rerun,omitempty"`     // simulate
	TraceFile string     `json:"trace-file,omitempty"`
	Trace     []jsonStep `json:"trace"`
	// Error is set for the error verdict: how the model failed on the
	// trace's last state (the trace is not a counterexample).
	Error *jsonModelError `json:"error,omitempty"`
}

// jsonModelError is explorer.ModelError: what the model was asked to
// do (call), what failed and how.
type jsonModelError struct {
	Text     string `json:"text"` // the one-line summary the text output prints
	Call     string `json:"call"`
	Property string `json:"property,omitempty"`
	Message  string `json:"message"`
	Panic    bool   `json:"panic"`
	Stack    string `json:"stack,omitempty"`
}

// withModelError adds the error verdict's failure to v (made if nil).
func withModelError(v *jsonViolation, e *explorer.ModelError) *jsonViolation {
	if e == nil {
		return v
	}
	if v == nil {
		v = &jsonViolation{Trace: []jsonStep{}}
	}
	v.Error = &jsonModelError{Text: e.Error(), Call: e.Call, Property: e.Property, Message: e.Message, Panic: e.Panic, Stack: e.Stack}
	return v
}

// violationJSON is a counterexample as its steps' changed variables.
func violationJSON(tr *traces.Text, traceFile string) *jsonViolation {
	v := &jsonViolation{Invariant: tr.Invariant, Kind: tr.Kind, Deadlock: tr.Deadlock, Terminal: tr.Terminal, Length: len(tr.Steps), TraceFile: traceFile}
	var prev []traces.Var
	for _, st := range tr.Steps {
		js := jsonStep{Action: "Init", Changes: map[string]string{}}
		if !st.Initial {
			js.Action = st.Action
		}
		for _, c := range traces.Diff(prev, st.Vars) {
			js.Changes[c.Name] = c.Value
		}
		v.Trace = append(v.Trace, js)
		prev = st.Vars
	}
	return v
}

type jsonResult struct {
	Type                 string           `json:"type"`
	Status               string           `json:"status"`
	Reason               string           `json:"reason,omitempty"`
	Distinct             int64            `json:"distinct"`
	Generated            int64            `json:"generated"`
	Depth                int              `json:"depth"`
	Queue                int64            `json:"queue"`
	Violation            *jsonViolation   `json:"violation"`
	ElapsedS             float64          `json:"elapsed-s"`
	StatesPerS           float64          `json:"distinct-per-s"`
	CollisionProbability float64          `json:"collision-probability"`
	PeakRSSBytes         int64            `json:"peak-rss-bytes"`
	PeakAnonBytes        int64            `json:"peak-anon-rss-bytes"`
	TraceFile            string           `json:"trace-file,omitempty"`
	StoreBytesPerState   float64          `json:"store-bytes-per-state,omitempty"`
	FingerprintBits      int              `json:"fingerprint-bits"`
	CollisionWarning     string           `json:"collision-warning,omitempty"`
	Disk                 *jsonDisk        `json:"disk,omitempty"`
	Exchange             *jsonExchange    `json:"exchange,omitempty"`
	Properties           []jsonProperty   `json:"properties,omitempty"`
	Coverage             map[string]int64 `json:"coverage,omitempty"`
	Uncovered            []string         `json:"never-fired-required,omitempty"`
	Reduction            *jsonReduction   `json:"por,omitempty"`
	// AlreadyFinished: the result recorded by a finished run (--resume);
	// elapsed-s is that search's, nothing was searched now.
	AlreadyFinished bool `json:"already-finished,omitempty"`
}

// jsonReduction is what --por did in this session's search.
type jsonReduction struct {
	Expanded      int64 `json:"expanded"`
	FullyExpanded int64 `json:"fully-expanded"`
	// ByProviso: of those, the states expanded fully only because every
	// smaller set held a step that may close a cycle (AutoRecovery's).
	ByProviso   int64 `json:"fully-expanded-by-cycle-proviso,omitempty"`
	Transitions int   `json:"transitions-declared"`
}

func (r *reporter) checkResult(rep *check.Report, interrupted bool) {
	sampleAnon()
	// Elapsed of the result covers every session of a resumed run.
	elapsed := rep.Elapsed
	rate := float64(rep.Distinct) / elapsed.Seconds()
	if r.json {
		res := jsonResult{
			Type: "result", Status: rep.Status.String(), Reason: rep.Reason,
			Distinct: rep.Distinct, Generated: rep.Generated, Depth: rep.Depth, Queue: rep.Queue,
			ElapsedS: elapsed.Seconds(), StatesPerS: rate,
			CollisionProbability: rep.Collision(),
			FingerprintBits:      rep.Fingerprint,
			CollisionWarning:     collisionWarning(rep),
			Disk:                 diskJSON(rep),
			Exchange:             exchangeJSON(rep),
			PeakRSSBytes:         peakResidentBytes(),
			PeakAnonBytes:        peakAnon,
			TraceFile:            r.traceFile,
			StoreBytesPerState:   rep.StoreBytesPerState,
			AlreadyFinished:      rep.AlreadyFinished,
		}
		if rep.Readable != nil {
			res.Violation = violationJSON(rep.Readable, r.traceFile)
		}
		res.Violation = withModelError(res.Violation, rep.ModelError())
		if r.coverage {
			res.Coverage, res.Uncovered = rep.Coverage, rep.Uncovered
		}
		res.Properties = r.propertiesJSON(rep.Properties, nil)
		if red := rep.Reduction; red != nil {
			res.Reduction = &jsonReduction{Expanded: red.States, FullyExpanded: red.FullyExpanded, ByProviso: red.ByProviso, Transitions: red.Transitions}
		}
		r.enc.Encode(res)
		return
	}
	defer r.coverageText(rep)
	w := r.stdout
	switch rep.Status {
	case explorer.OK:
		fmt.Fprintln(w, "Model checking completed. No error has been found.")
		if rep.Config.ChecksNothing() {
			fmt.Fprintln(w, "No property was checked (--invariants none, no CEL property, no --check-deadlock): the search only counted the states.")
		}
	case explorer.Violation:
		r.violationText(rep.Readable)
	case explorer.Error:
		r.errorText(rep.ModelError(), rep.Readable)
	case explorer.Unknown:
		if interrupted {
			fmt.Fprintln(w, "Interrupted: the search was stopped; the verdict is unknown.")
			switch {
			case r.continueCmd != "":
				fmt.Fprintf(w, "Continue with the same command (a shard started on its directory continues its search): %s\n", r.continueCmd)
			case r.dir != "":
				fmt.Fprintf(w, "Continue with: bkcheck check --resume %s\n", r.dir)
			}
		} else {
			fmt.Fprintf(w, "Stopped early (%s): the verdict is unknown, not ok.\n", rep.Reason)
		}
	}
	if warn := collisionWarning(rep); warn != "" {
		fmt.Fprintf(w, "Warning: %s.\n", warn)
	}
	r.propertiesText(rep.Properties, nil)
	fmt.Fprintf(w, "%d %s, %d states generated, depth %d, %d left on queue.\n", rep.Distinct, distinctNoun(rep.Config.Symmetry), rep.Generated, rep.Depth, rep.Queue)
	if red := rep.Reduction; red != nil && red.States > 0 {
		fmt.Fprintf(w, "Partial-order reduction (--por): %d of the %d states expanded had every enabled transition expanded", red.FullyExpanded, red.States)
		if red.ByProviso > 0 {
			fmt.Fprintf(w, " (%d of them by the cycle proviso: every smaller set held a step that may close a cycle)", red.ByProviso)
		}
		fmt.Fprintf(w, "; %d transitions declared.", red.Transitions)
		if rep.Readable != nil {
			fmt.Fprint(w, " The trace is a behaviour of the full model, not necessarily the shortest.")
		}
		fmt.Fprintln(w)
	}
	if rep.AlreadyFinished {
		fmt.Fprintf(w, "The run in %s had already finished: this is its recorded result, and nothing was searched now. Its search took %s (%.0f %s/s). Fingerprint collision probability (optimistic, %d-bit fingerprints): %.1e\n",
			rep.Config.Dir, elapsed.Round(time.Millisecond), rate, rateNoun(rep.Config.Symmetry), rep.Fingerprint, rep.Collision())
	} else {
		fmt.Fprintf(w, "Finished in %s (%.0f %s/s, peak resident memory %s, of it anonymous %s). Fingerprint collision probability (optimistic, %d-bit fingerprints): %.1e\n",
			elapsed.Round(time.Millisecond), rate, rateNoun(rep.Config.Symmetry), humanBytes(peakResidentBytes()), humanBytes(peakAnon), rep.Fingerprint, rep.Collision())
	}
	diskText(w, rep)
	exchangeText(w, rep)
}

// distinctNoun names what a search's distinct count counts: distinct
// states, in TLC's words, or under symmetry orbits, the states distinct
// up to it (one of each is stored and checked).
func distinctNoun(sym spec.Symmetry) string {
	if sym == (spec.Symmetry{}) {
		return "distinct states"
	}
	return "orbits (distinct states up to symmetry)"
}

// rateNoun is what the rate of a search counts per second (distinctNoun).
func rateNoun(sym spec.Symmetry) string {
	if sym == (spec.Symmetry{}) {
		return "distinct states"
	}
	return "orbits"
}

// violationText prints what failed and the trace.
func (r *reporter) violationText(tr *traces.Text) {
	w := r.stdout
	switch {
	case tr.Kind == "probe":
		fmt.Fprintf(w, "Probe %s is reachable.\n", tr.Invariant)
	case tr.Deadlock:
		fmt.Fprintln(w, "Error: Deadlock reached.")
	case tr.Kind == "eventually" && tr.Loop > 0:
		fmt.Fprintf(w, "Error: Property %s (eventually) fails: a behaviour repeats a cycle for ever without satisfying it.\n", tr.Invariant)
	case tr.Kind == "eventually":
		fmt.Fprintf(w, "Error: Property %s (eventually) fails: a behaviour ends without satisfying it.\n", tr.Invariant)
	case tr.Terminal:
		fmt.Fprintf(w, "Error: Property %s fails in a terminal state.\n", tr.Invariant)
	default:
		fmt.Fprintf(w, "Error: Invariant %s is violated.\n", tr.Invariant)
	}
	tr.Render(w)
	fmt.Fprintln(w)
	if r.traceFile != "" {
		fmt.Fprintf(w, "Trace written to %s (bkcheck replay / bkcheck trace render read it).\n", r.traceFile)
	}
}

// errorText prints the error verdict as TLC prints an evaluation error:
// what failed, in which state, the behaviour up to that state (as a
// counterexample prints) and, for a panic, where in the code.
func (r *reporter) errorText(e *explorer.ModelError, tr *traces.Text) {
	w := r.stdout
	fmt.Fprintf(w, "Error: %s\n", e)
	n := 0
	if tr != nil {
		n = len(tr.Steps)
	}
	if n == 0 {
		fmt.Fprintf(w, "The model failed %s: there is no trace.\n", failedWhile(e, 0))
	} else {
		reached := "an initial state"
		if last := tr.Steps[n-1]; !last.Initial {
			reached = "reached by " + last.Action
		}
		fmt.Fprintf(w, "The model failed %s, %s. The behaviour up to that state:\n", failedWhile(e, n), reached)
		// Render's title speaks of a counterexample; this trace is not one.
		var b strings.Builder
		tr.Render(&b)
		_, body, _ := strings.Cut(b.String(), "\n")
		fmt.Fprintf(w, "Error trace: %d states; the model failed on the last.\n%s\n", n, body)
		if r.traceFile != "" {
			fmt.Fprintf(w, "Trace written to %s (bkcheck replay confirms the failure; bkcheck trace render draws it).\n", r.traceFile)
		}
	}
	if e.Stack != "" {
		fmt.Fprintf(w, "Where the model panicked:\n    %s\n", strings.ReplaceAll(strings.TrimSpace(e.Stack), "\n", "\n    "))
	}
	fmt.Fprintln(w, "The verdict is error: neither proved nor refuted.")
}

// failedWhile says what the model was doing when it failed, on state n
// of the trace.
func failedWhile(e *explorer.ModelError, n int) string {
	switch e.Call {
	case explorer.CallInit:
		return "computing the initial states"
	case explorer.CallNewExpander:
		return "preparing to expand states"
	case explorer.CallLoad:
		return fmt.Sprintf("decoding state %d", n)
	case explorer.CallCheck:
		if e.Property != "" {
			return fmt.Sprintf("evaluating %s in state %d", e.Property, n)
		}
		return fmt.Sprintf("checking the invariants in state %d", n)
	case explorer.CallCheckTerminal:
		if e.Property != "" {
			return fmt.Sprintf("evaluating %s in state %d, which has no successor", e.Property, n)
		}
		return fmt.Sprintf("checking the terminal-state properties in state %d, which has no successor", n)
	case explorer.CallSuccessors:
		return fmt.Sprintf("computing the successors of state %d", n)
	case explorer.CallWeight:
		return fmt.Sprintf("weighting the successors of state %d", n)
	}
	return fmt.Sprintf("in %s on state %d", e.Call, n)
}

// errorExitCode is the exit code of the error verdict: TLC's for an
// evaluation error in the spec (75), in an invariant (76) or in a
// liveness property (77; here a terminal-state property, as 13 is for its
// violation).
func errorExitCode(e *explorer.ModelError) int {
	switch e.Call {
	case explorer.CallCheck:
		return exitInvariantError
	case explorer.CallCheckTerminal:
		return exitTerminalError
	}
	return exitModelFailed
}

func (r *reporter) simStart(cfg check.SimConfig) {
	if r.json {
		r.enc.Encode(jsonStart{Type: "start", Mode: "simulate", Config: schema.Object{S: check.SimSchema, Target: &cfg}})
		return
	}
	pick := "uniform"
	if cfg.LossRate > 0 {
		pick = fmt.Sprintf("loss rate %g", cfg.LossRate)
	}
	fmt.Fprintf(r.stdout, "bkcheck: simulating %s\n  invariants: %s; seed %d, depth %d, steps %s, workers %d\n", cfg.Describe(), strings.Join(cfg.Invariants, ", "), cfg.Seed, cfg.Depth, pick, cfg.Workers)
	r.celStart(cfg.ModelConfig)
}

type jsonSimResult struct {
	Type       string         `json:"type"`
	Status     string         `json:"status"`
	Walks      int64          `json:"walks"`
	States     int64          `json:"states"`
	Distinct   int64          `json:"distinct"`
	MeanLength float64        `json:"mean-length"`
	ElapsedS   float64        `json:"elapsed-s"`
	StatesPerS float64        `json:"states-per-s"`
	Violation  *jsonViolation `json:"violation"`
	Properties []jsonProperty `json:"properties,omitempty"`
}

func (r *reporter) simResult(rep *check.SimReport) {
	rate := float64(rep.States) / rep.Elapsed.Seconds()
	if r.json {
		res := jsonSimResult{Type: "result", Status: rep.Status.String(), Walks: rep.Walks, States: rep.States, Distinct: rep.Distinct,
			MeanLength: rep.MeanLength, ElapsedS: rep.Elapsed.Seconds(), StatesPerS: rate}
		if rep.Readable != nil {
			res.Violation = violationJSON(rep.Readable, r.traceFile)
			if len(rep.Readable.Steps) > 0 {
				res.Violation.WalkSeed, res.Violation.Rerun = rep.WalkSeed, rep.RerunCommand()
			}
		}
		res.Violation = withModelError(res.Violation, rep.ModelError())
		res.Properties = r.propertiesJSON(rep.Properties, rep)
		r.enc.Encode(res)
		return
	}
	w := r.stdout
	if e := rep.ModelError(); e != nil {
		if rep.Readable != nil && len(rep.Readable.Steps) > 0 {
			fmt.Fprintf(w, "The model fails on walk seed %d; rerun it alone with: %s\n", rep.WalkSeed, rep.RerunCommand())
		}
		r.errorText(e, rep.Readable)
	} else if rep.Readable != nil {
		fmt.Fprintf(w, "Walk seed %d fails; rerun it alone with: %s\n", rep.WalkSeed, rep.RerunCommand())
		r.violationText(rep.Readable)
	} else {
		fmt.Fprintln(w, "No violation found; simulation proves nothing: the verdict is unknown.")
	}
	r.propertiesText(rep.Properties, rep)
	fmt.Fprintf(w, "%d walks, %d states visited (%d distinct), mean walk length %.1f, %s (%.0f states/s).\n",
		rep.Walks, rep.States, rep.Distinct, rep.MeanLength, rep.Elapsed.Round(time.Millisecond), rate)
}

// coverageText prints how often each action fired, in the model's action
// order, and the actions that never did (TLC's -coverage).
func (r *reporter) coverageText(rep *check.Report) {
	if !r.coverage {
		return
	}
	w := r.stdout
	fmt.Fprintln(w, "Coverage (transitions generated per action):")
	info, err := check.LookupModel(rep.Config.Model)
	if err != nil {
		return // the run bound its model
	}
	for _, a := range info.Descriptor.Actions {
		if n := rep.Coverage[a.Name]; n > 0 {
			fmt.Fprintf(w, "  %-44s %s\n", a.Name, group(n))
		}
	}
	// Only the actions these settings can fire: the spec writer's, say,
	// are not listed for the Java add path.
	if len(rep.Idle) > 0 {
		fmt.Fprintf(w, "  never fired: %s\n", strings.Join(rep.Idle, ", "))
	}
	for _, u := range rep.Unable {
		fmt.Fprintf(w, "Warning: the settings add %s: these parameters leave no room for it, so it cannot fire.\n", u)
	}
	if len(rep.Uncovered) > 0 {
		fmt.Fprintf(w, "Warning: %s never fired, though this configuration's settings add them: the run did not exercise what it claims.\n", strings.Join(rep.Uncovered, ", "))
	}
}
