package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/invariants"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/state"
	"github.com/bkcheck/bkcheck/traces"
)

// Exit codes. Where they overlap with TLC's they are TLC's.
const (
	exitOK          = 0
	exitError       = 1   // I/O or internal error
	exitUsage       = 2   // bad flags or parameters
	exitUnknown     = 3   // a bound stopped the search: neither proved nor refuted
	exitDeadlock    = 11  // TLC: deadlock reached
	exitViolation   = 12  // TLC: safety violation
	exitTerminal    = 13  // TLC: liveness violation; here a terminal-state property
	exitInterrupted = 130 // stopped by SIGINT/SIGTERM; the verdict is unknown
)

const usageText = `bkcheck model-checks the Apache BookKeeper replication protocol.

Usage:
  bkcheck check [flags]   explore every reachable state of one parameter set
  bkcheck simulate [flags] random walks: a fast bug hunt on models too large to exhaust
  bkcheck replay FILE     re-check a saved trace (.itf.json) against the model
  bkcheck regress [DIR]   run the regression suite (testdata/regress/*.toml) and report every drift
  bkcheck sweep FILE.toml [--shard i/n]   check a grid of parameter sets; bkcheck sweep merge DIR... joins slices
  bkcheck trace render FILE --format text|mermaid|dot|html
                          render a saved trace
  bkcheck guarantees      regenerate docs/guarantees.md (what E, Qw and Qa guarantee)
  bkcheck variants        list the protocol variants (--variant)
  bkcheck invariants      list the properties (--invariants)
  bkcheck actions         list the action names (--exclude-actions)
  bkcheck help            show this text

Run 'bkcheck check -h' for the flags of check.

Exit codes:
  0    ok: every reachable state explored, every invariant holds
  1    error (I/O, internal)
  2    usage: bad flags or parameters (all problems are listed)
  3    unknown: --max-depth or --max-states stopped the search first
  11   deadlock: a state without successor (only with --check-deadlock)
  12   an invariant is violated; the shortest counterexample is printed
  13   a property of terminal states fails in a state without successor
  130  interrupted (Ctrl-C / SIGTERM); partial statistics, verdict unknown
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	switch args[0] {
	case "check":
		return runCheck(ctx, args[1:], stdout, stderr)
	case "simulate":
		return runSimulate(ctx, args[1:], stdout, stderr)
	case "replay":
		return runReplay(args[1:], stdout, stderr)
	case "regress":
		return runRegress(ctx, args[1:], stdout, stderr)
	case "sweep":
		return runSweep(ctx, args[1:], stdout, stderr)
	case "guarantees":
		return runGuarantees(ctx, args[1:], stdout, stderr)
	case "trace":
		return runTrace(args[1:], stdout, stderr)
	case "variants":
		for _, v := range spec.Variants {
			fmt.Fprintf(stdout, "%s\n    %s\n    source: %s\n", v.Name, v.Description, v.Source)
		}
		return exitOK
	case "invariants":
		for _, inv := range invariants.All {
			kind := "invariant"
			if inv.HoldsTerminal != nil {
				kind = "invariant and terminal-state property"
			}
			fmt.Fprintf(stdout, "%s (%s)\n    %s\n    source: %s\n", inv.Name, kind, inv.Statement, inv.Source)
		}
		return exitOK
	case "actions":
		for k := spec.ActionKind(1); k < spec.NumActionKinds; k++ {
			fmt.Fprintln(stdout, k)
		}
		return exitOK
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	}
	fmt.Fprintf(stderr, "bkcheck: unknown command %q\n\n%s", args[0], usageText)
	return exitUsage
}

type checkFlags struct {
	params        spec.Params
	invariants    string
	checkDeadlock bool
	maxDepth      int
	maxStates     int64
	workers       int
	json          bool
	store         string
	dir           string
	resume        string
	memory        int64
	memoryText    string
	progress      time.Duration
	cpuProfile    string
	traceOut      string
	seed          uint64
	depth         int
	traces        int64
	duration      time.Duration
	lossRate      float64
	symmetry      string
	sym           spec.Symmetry
	setFlags      map[string]bool // flags given on the command line
}

// modelFlags are the flags that shape the state space; a resumed run must
// not change them.
var modelFlags = []string{"bookies", "clients", "ensemble", "e", "write-quorum", "w", "ack-quorum", "a",
	"entries", "inflight", "variant", "invariants", "check-deadlock", "crashes", "data-loss", "data-loss-mode", "read-only", "exclude-actions", "reliable-network", "symmetry", "unavailable"}

func parseCheckFlags(args []string, stderr io.Writer) (*checkFlags, error) {
	return parseFlags("check", args, stderr)
}

// parseFlags parses the flags of check or simulate: the model flags are
// shared, the search flags differ.
func parseFlags(mode string, args []string, stderr io.Writer) (*checkFlags, error) {
	f := &checkFlags{params: spec.DefaultParams()}
	f.params.Ensemble = 0 // 0: same as the write quorum unless given
	fs := flag.NewFlagSet("bkcheck "+mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	p := &f.params
	fs.IntVar(&p.Bookies, "bookies", p.Bookies, "number of bookies (b1..bN)")
	fs.IntVar(&p.Clients, "clients", p.Clients, "number of clients (c1..cN); the first to act creates the ledger, others may recover it")
	for _, name := range []string{"ensemble", "e"} {
		fs.IntVar(&p.Ensemble, name, 0, "ensemble size E (default: the write quorum)")
	}
	for _, name := range []string{"write-quorum", "w"} {
		fs.IntVar(&p.WriteQuorum, name, p.WriteQuorum, "write quorum Qw: copies written per entry")
	}
	for _, name := range []string{"ack-quorum", "a"} {
		fs.IntVar(&p.AckQuorum, name, p.AckQuorum, "ack quorum Qa: acknowledgements needed to commit an entry")
	}
	fs.IntVar(&p.Entries, "entries", p.Entries, "entries the writer may create (SendLimit)")
	fs.IntVar(&p.Inflight, "inflight", p.Inflight, "unacknowledged entries the writer may have in flight (InflightLimit)")
	fs.StringVar(&p.Variant, "variant", spec.Variants[0].Name, "protocol variant: "+variantNames())
	fs.IntVar(&p.Crashes, "crashes", 0, "bookie crashes allowed (a crashed bookie loses its connections and later restarts with its journal)")
	fs.IntVar(&p.DataLoss, "data-loss", 0, "bookie restarts with an empty disk allowed")
	fs.StringVar(&p.DataLossMode, "data-loss-mode", "blank", "how a bookie that lost its disk answers: blank (like a new bookie) or limbo (BP-44: fenced, answers Unknown)")
	fs.StringVar(&f.symmetry, "symmetry", "none", "deduplicate states up to relabelling of: none, bookies, clients, bookies,clients (TLC's SYMMETRY)")
	fs.BoolVar(&p.ReliableNetwork, "reliable-network", false, "no message is ever lost (timeouts come only from crashed bookies)")
	var exclude string
	fs.StringVar(&exclude, "exclude-actions", "", "comma-separated actions that may not occur (names as in 'bkcheck actions')")
	fs.IntVar(&p.Unavailable, "unavailable", 0, "the last N bookies are down for the whole run (never start)")
	fs.IntVar(&p.ReadOnly, "read-only", 0, "bookies that may turn read-only (disk full: adds rejected, reads and fencing served)")
	fs.StringVar(&f.invariants, "invariants", strings.Join(invariants.Default, ","), "comma-separated invariants to check; known: "+knownInvariants())
	fs.BoolVar(&f.checkDeadlock, "check-deadlock", false, "report states without successors as violations (TLC's default; off here as with TLC -deadlock)")
	if mode == "check" {
		fs.IntVar(&f.maxDepth, "max-depth", 0, "stop after this many BFS levels (initial state = depth 1); 0 = no bound; verdict unknown if states remain")
		fs.Int64Var(&f.maxStates, "max-states", 0, "stop after this many distinct states; 0 = no bound; verdict unknown if states remain")
	} else {
		fs.Uint64Var(&f.seed, "seed", 1, "seed of the first walk; walk i uses seed+i, so a reported walk seed reruns it alone with --traces 1")
		fs.IntVar(&f.depth, "depth", 100, "states per walk at most (initial state included)")
		fs.Int64Var(&f.traces, "traces", 0, "number of walks (0: until --duration)")
		fs.DurationVar(&f.duration, "duration", 0, "how long to simulate (0: until --traces walks)")
		fs.Float64Var(&f.lossRate, "loss-rate", 0, "pick steps as if each message a step sends or answers were lost with this probability (0: every successor equally likely, as TLC's simulation; uniform walks lose most messages and end early)")
	}
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "goroutines expanding states (results do not depend on it)")
	fs.BoolVar(&f.json, "json", false, "write newline-delimited JSON to stdout; the last line is the result")
	fs.StringVar(&f.traceOut, "trace-out", "", "where to write a counterexample as ITF JSON (default: bkcheck-trace.itf.json in the run directory, or the current directory); none: do not write")
	if mode == "check" {
		fs.StringVar(&f.store, "store", "mem", "visited-state store: mem (in memory) or badger (on disk in --dir, resumable)")
		fs.StringVar(&f.dir, "dir", "", "run directory for --store badger: visited states, BFS levels, checkpoints")
		fs.StringVar(&f.resume, "resume", "", "continue the interrupted run in this directory (implies --store badger)")
		fs.StringVar(&f.memoryText, "memory", "", "memory budget, e.g. 2GiB or 512MiB: caps the Badger store's caches and sets the Go heap limit")
		fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile (pprof) of the search to this file")
	} else {
		f.store = "mem"
	}
	fs.DurationVar(&f.progress, "progress", 10*time.Second, "interval between progress reports when stderr is not a terminal (and for --json)")
	var configPath, runName string
	fs.StringVar(&configPath, "config", "", "read settings from a parameter-set file (TOML, keys named as the flags); flags override it")
	fs.StringVar(&runName, "run", "", "the named run of --config to use, when the file holds several")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	f.setFlags = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.setFlags[fl.Name] = true })
	var probs []string
	if configPath != "" {
		cf, err := loadConfig(configPath)
		if err == nil {
			var rc runConfig
			if rc, err = cf.resolve(runName); err == nil {
				err = applyConfig(fs, rc, f.setFlags)
			}
		}
		if err != nil {
			probs = append(probs, "--config: "+err.Error())
		}
	} else if runName != "" {
		probs = append(probs, "--run needs --config")
	}
	p.Exclude = splitList(exclude)
	if f.resume != "" {
		stored, err := loadRunParams(f.resume)
		if err != nil {
			probs = append(probs, err.Error())
		} else {
			probs = append(probs, f.adoptStored(stored)...)
		}
		if f.setFlags["dir"] && f.dir != f.resume {
			probs = append(probs, "--dir and --resume name different directories")
		}
		if f.setFlags["store"] && f.store != "badger" {
			probs = append(probs, "--resume needs --store badger")
		}
		f.dir, f.store = f.resume, "badger"
	}
	switch f.store {
	case "mem":
		if f.dir != "" {
			probs = append(probs, "--dir needs --store badger (the in-memory store keeps nothing on disk)")
		}
	case "badger":
		if f.dir == "" {
			probs = append(probs, "--store badger needs --dir DIR")
		}
	default:
		probs = append(probs, fmt.Sprintf("--store must be mem or badger (got %q)", f.store))
	}
	if f.memoryText != "" {
		n, err := parseSize(f.memoryText)
		if err != nil {
			probs = append(probs, fmt.Sprintf("--memory: %v", err))
		}
		f.memory = n
	} else if f.resume != "" {
		// A resumed run keeps the budget it was started (or last resumed)
		// with: the default would make a run sized for a large budget
		// overflow its cache.
		m, err := loadRunMemory(f.resume)
		if err != nil {
			probs = append(probs, err.Error())
		}
		f.memory = m
	}
	if f.progress <= 0 {
		probs = append(probs, fmt.Sprintf("--progress must be positive (got %v)", f.progress))
	}
	if fs.NArg() > 0 {
		probs = append(probs, fmt.Sprintf("unexpected arguments: %s", strings.Join(fs.Args(), " ")))
	}
	if p.Ensemble == 0 {
		p.Ensemble = p.WriteQuorum
	}
	if err := p.Validate(); err != nil {
		probs = append(probs, err.(*spec.ValidationError).Problems...)
	} else if sym, err := spec.ParseSymmetry(f.symmetry); err != nil {
		probs = append(probs, err.Error())
	} else if err := p.CheckSymmetry(sym); err != nil {
		probs = append(probs, err.Error())
	} else {
		f.sym = sym
	}
	if _, err := invariants.Lookup(strings.Split(f.invariants, ",")); err != nil {
		probs = append(probs, err.Error())
	}
	if f.maxDepth < 0 {
		probs = append(probs, fmt.Sprintf("--max-depth must be >= 0 (got %d)", f.maxDepth))
	}
	if f.maxStates < 0 {
		probs = append(probs, fmt.Sprintf("--max-states must be >= 0 (got %d)", f.maxStates))
	}
	if f.workers < 1 {
		probs = append(probs, fmt.Sprintf("--workers must be >= 1 (got %d)", f.workers))
	}
	if mode == "simulate" {
		if f.depth < 1 {
			probs = append(probs, fmt.Sprintf("--depth must be >= 1 (got %d)", f.depth))
		}
		if f.traces < 0 || f.duration < 0 {
			probs = append(probs, "--traces and --duration must not be negative")
		}
		if f.lossRate < 0 || f.lossRate >= 1 || math.IsNaN(f.lossRate) {
			probs = append(probs, fmt.Sprintf("--loss-rate must be in [0, 1) (got %v)", f.lossRate))
		}
		if f.traces == 0 && f.duration == 0 {
			probs = append(probs, "give --traces N or --duration D (or both)")
		}
	}
	if len(probs) > 0 {
		return nil, &spec.ValidationError{Problems: probs}
	}
	return f, nil
}

func variantNames() string {
	names := make([]string, len(spec.Variants))
	for i, v := range spec.Variants {
		names[i] = v.Name
	}
	return strings.Join(names, ", ")
}

func knownInvariants() string {
	names := make([]string, len(invariants.All))
	for i, inv := range invariants.All {
		names[i] = inv.Name
	}
	return strings.Join(names, ", ")
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parseCheckFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		var ve *spec.ValidationError
		if errors.As(err, &ve) {
			fmt.Fprintf(stderr, "bkcheck check: %v\n", err)
		}
		return exitUsage
	}
	invNames := splitList(f.invariants)
	if f.memory > 0 {
		debug.SetMemoryLimit(f.memory)
	}
	out := newReporter(stdout, stderr, f.json)
	out.dir = f.dir
	prog := newProgress(out, f.progress)
	cfg := check.Config{
		Params:     f.params,
		Invariants: invNames,
		Symmetry:   f.sym,
		Search: explorer.Options{
			Workers:       f.workers,
			MaxDepth:      f.maxDepth,
			MaxStates:     f.maxStates,
			CheckDeadlock: f.checkDeadlock,
			Progress:      prog.report,
			ProgressEvery: prog.every(),
		},
	}
	var store interface {
		state.Visited
		BytesPerState() float64
	}
	if f.store == "mem" {
		// The fingerprint table stays in memory; the parent links go to an
		// unlinked temporary file, as TLC keeps its trace file on disk.
		mv, err := state.NewMemVisitedLinksOnDisk(1<<16, "")
		if err != nil {
			fmt.Fprintf(stderr, "bkcheck check: %v\n", err)
			return exitError
		}
		defer mv.Close()
		store = mv
		cfg.Search.Visited = mv
	}
	if f.store == "badger" {
		rp := f.runParams()
		if f.resume == "" {
			if err := prepareRunDir(f.dir, rp); err != nil {
				fmt.Fprintf(stderr, "bkcheck check: %v\n", err)
				return exitUsage
			}
		}
		if err := saveRunMemory(f.dir, f.memory); err != nil {
			fmt.Fprintf(stderr, "bkcheck check: %v\n", err)
			return exitError
		}
		budget := int64(2 << 30)
		if f.memory > 0 {
			budget = max(f.memory-(96<<20), 32<<20)
		}
		bv, err := state.OpenBadgerVisited(state.BadgerOptions{Dir: filepath.Join(f.dir, "visited"), MemoryBudget: budget})
		if err != nil {
			fmt.Fprintf(stderr, "bkcheck check: opening the visited store: %v\n", err)
			return exitError
		}
		defer bv.Close()
		store = bv
		cfg.Search.Visited = bv
		cfg.Search.Dir = f.dir
		cfg.Search.Resume = f.resume != ""
		cfg.Search.ModelID = rp.modelID()
		cfg.Search.SameModel = func(stored string) bool { return sameModelID(stored, cfg.Search.ModelID) }
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "bkcheck check: %v\n", err)
			return exitError
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			fmt.Fprintf(stderr, "bkcheck check: %v\n", err)
			return exitError
		}
		defer pprof.StopCPUProfile()
	}
	out.start(f, invNames)
	start := time.Now()
	rep, err := check.Run(ctx, cfg)
	prog.done()
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck check: %v\n", err)
		if errors.Is(err, explorer.ErrResumeMismatch) || errors.Is(err, explorer.ErrRunExists) {
			return exitUsage
		}
		return exitError
	}
	bytesPerState := store.BytesPerState()
	if rep.Trace != nil {
		path, err := writeTrace(f, rep.Trace)
		if err != nil {
			fmt.Fprintf(stderr, "bkcheck check: writing the trace: %v\n", err)
			return exitError
		}
		out.traceFile = path
	}
	out.result(rep, time.Since(start), ctx.Err() != nil, bytesPerState)
	switch {
	case rep.Status == explorer.OK:
		return exitOK
	case rep.Status == explorer.Violation && rep.Violation.Deadlock:
		return exitDeadlock
	case rep.Status == explorer.Violation && rep.Violation.Terminal:
		return exitTerminal
	case rep.Status == explorer.Violation:
		return exitViolation
	case ctx.Err() != nil:
		return exitInterrupted
	default:
		return exitUnknown
	}
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// reporter writes either human-readable text or NDJSON.
type reporter struct {
	dir            string // run directory, for the resume hint
	traceFile      string // where the counterexample was written, if anywhere
	stdout, stderr io.Writer
	json           bool
	enc            *json.Encoder
}

func newReporter(stdout, stderr io.Writer, asJSON bool) *reporter {
	return &reporter{stdout: stdout, stderr: stderr, json: asJSON, enc: json.NewEncoder(stdout)}
}

type jsonParams struct {
	Bookies      int      `json:"bookies"`
	Clients      int      `json:"clients"`
	Ensemble     int      `json:"ensemble"`
	WriteQuorum  int      `json:"write_quorum"`
	AckQuorum    int      `json:"ack_quorum"`
	Entries      int      `json:"entries"`
	Inflight     int      `json:"inflight"`
	Variant      string   `json:"variant"`
	Reliable     bool     `json:"reliable_network"`
	Exclude      []string `json:"exclude_actions"`
	Crashes      int      `json:"crashes"`
	DataLoss     int      `json:"data_loss"`
	DataLossMode string   `json:"data_loss_mode"`
	ReadOnly     int      `json:"read_only"`
	Unavailable  int      `json:"unavailable"`
}

func toJSONParams(p spec.Params) jsonParams {
	return jsonParams{p.Bookies, p.Clients, p.Ensemble, p.WriteQuorum, p.AckQuorum, p.Entries, p.Inflight,
		p.Variant, p.ReliableNetwork, p.Exclude, p.Crashes, p.DataLoss, p.DataLossMode, p.ReadOnly, p.Unavailable}
}

func (r *reporter) start(f *checkFlags, invs []string) {
	if r.json {
		r.enc.Encode(map[string]any{
			"type": "start", "params": toJSONParams(f.params), "invariants": invs,
			"workers": f.workers, "check_deadlock": f.checkDeadlock, "symmetry": f.sym.String(), "max_depth": f.maxDepth, "max_states": f.maxStates,
			"memory_bytes": f.memory,
		})
		return
	}
	sym := ""
	if f.sym != (spec.Symmetry{}) {
		sym = "; symmetry: " + f.sym.String()
	}
	fmt.Fprintf(r.stdout, "bkcheck: checking %s\n  invariants: %s%s; workers: %d\n", f.params, strings.Join(invs, ", "), sym, f.workers)
}

type jsonStep struct {
	Action  string            `json:"action"`
	Changes map[string]string `json:"changes"`
}

type jsonViolation struct {
	Invariant string     `json:"invariant"`
	Deadlock  bool       `json:"deadlock"`
	Terminal  bool       `json:"terminal"`
	Length    int        `json:"length"`
	Trace     []jsonStep `json:"trace"`
}

type jsonResult struct {
	Type                 string         `json:"type"`
	Status               string         `json:"status"`
	Reason               string         `json:"reason,omitempty"`
	Distinct             int64          `json:"distinct"`
	Generated            int64          `json:"generated"`
	Depth                int            `json:"depth"`
	Queue                int64          `json:"queue"`
	Violation            *jsonViolation `json:"violation"`
	ElapsedS             float64        `json:"elapsed_s"`
	StatesPerS           float64        `json:"distinct_per_s"`
	CollisionProbability float64        `json:"collision_probability"`
	PeakRSSBytes         int64          `json:"peak_rss_bytes"`
	PeakAnonBytes        int64          `json:"peak_anon_rss_bytes"`
	TraceFile            string         `json:"trace_file,omitempty"`
	StoreBytesPerState   float64        `json:"store_bytes_per_state,omitempty"`
}

func (r *reporter) result(rep *check.Report, elapsed time.Duration, interrupted bool, storeBytesPerState float64) {
	sampleAnon()
	// Elapsed of the result covers every session of a resumed run.
	elapsed = rep.Elapsed
	rate := float64(rep.Distinct) / elapsed.Seconds()
	if r.json {
		res := jsonResult{
			Type: "result", Status: rep.Status.String(), Reason: rep.Reason,
			Distinct: rep.Distinct, Generated: rep.Generated, Depth: rep.Depth, Queue: rep.Queue,
			ElapsedS: elapsed.Seconds(), StatesPerS: rate,
			CollisionProbability: state.CollisionProbability(rep.Distinct, rep.Generated),
			PeakRSSBytes:         peakResidentBytes(),
			PeakAnonBytes:        peakAnon,
			TraceFile:            r.traceFile,
			StoreBytesPerState:   storeBytesPerState,
		}
		if rep.Trace != nil {
			v := &jsonViolation{Invariant: rep.Trace.Invariant, Deadlock: rep.Trace.Deadlock, Terminal: rep.Trace.Terminal, Length: len(rep.Trace.Steps)}
			var prev []traces.Var
			for _, st := range rep.Trace.Steps {
				vars := traces.Vars(rep.Trace.Params, &st.State)
				js := jsonStep{Action: "Init", Changes: map[string]string{}}
				if !st.Initial {
					js.Action = st.Action.String()
				}
				for _, c := range traces.Diff(prev, vars) {
					js.Changes[c.Name] = c.Value
				}
				v.Trace = append(v.Trace, js)
				prev = vars
			}
			res.Violation = v
		}
		r.enc.Encode(res)
		return
	}
	w := r.stdout
	switch rep.Status {
	case explorer.OK:
		fmt.Fprintln(w, "Model checking completed. No error has been found.")
	case explorer.Violation:
		if rep.Trace.Deadlock {
			fmt.Fprintln(w, "Error: Deadlock reached.")
		} else if rep.Trace.Terminal {
			fmt.Fprintf(w, "Error: Property %s fails in a terminal state.\n", rep.Trace.Invariant)
		} else {
			fmt.Fprintf(w, "Error: Invariant %s is violated.\n", rep.Trace.Invariant)
		}
		traces.RenderText(w, rep.Trace)
		fmt.Fprintln(w)
		if r.traceFile != "" {
			fmt.Fprintf(w, "Trace written to %s (bkcheck replay / bkcheck trace render read it).\n", r.traceFile)
		}
	case explorer.Unknown:
		if interrupted {
			fmt.Fprintln(w, "Interrupted: the search was stopped; the verdict is unknown.")
			if r.dir != "" {
				fmt.Fprintf(w, "Continue with: bkcheck check --resume %s\n", r.dir)
			}
		} else {
			fmt.Fprintf(w, "Stopped early (%s): the verdict is unknown, not ok.\n", rep.Reason)
		}
	}
	fmt.Fprintf(w, "%d distinct states, %d states generated, depth %d, %d left on queue.\n", rep.Distinct, rep.Generated, rep.Depth, rep.Queue)
	fmt.Fprintf(w, "Finished in %s (%.0f distinct states/s, peak resident memory %s, of it anonymous %s). Fingerprint collision probability (optimistic): %.1e\n",
		elapsed.Round(time.Millisecond), rate, humanBytes(peakResidentBytes()), humanBytes(peakAnon), state.CollisionProbability(rep.Distinct, rep.Generated))
}
