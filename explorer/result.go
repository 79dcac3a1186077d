package explorer

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/bkcheck/bkcheck/state"
)

// Status is the three-valued verdict of a search.
type Status int

const (
	// OK: the whole reachable state space was explored and every check held.
	OK Status = iota
	// Violation: an invariant failed (or a deadlock was found with
	// CheckDeadlock); Result.Violation holds the shortest trace.
	Violation
	// Unknown: the search stopped early (a bound, a budget, cancellation).
	// Never to be read as OK.
	Unknown
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Violation:
		return "violation"
	case Unknown:
		return "unknown"
	}
	return "invalid"
}

// Options bound and shape a search. The zero value searches everything with
// one worker per core.
type Options struct {
	Workers       int   // goroutines expanding states; <= 0 means runtime.GOMAXPROCS(0)
	MaxDepth      int   // stop after this many BFS levels (initial states are depth 1); 0 = no bound
	MaxStates     int64 // stop once this many distinct states are known; 0 = no bound
	CheckDeadlock bool  // report states without successors as violations
	// Progress, when set, is called from the search goroutine after each
	// BFS level and at most every ProgressEvery in between.
	Progress      func(Stats)
	ProgressEvery time.Duration

	// Visited is the visited-state store; nil means a fresh in-memory one.
	// The caller owns (and closes) a store it passes.
	Visited state.Visited
	// Dir, when set, makes the run durable: each BFS level is written to a
	// file there and a checkpoint after each level lets Resume continue an
	// interrupted run (Ctrl-C, kill -9) with exactly the counts of an
	// uninterrupted one. Visited must then be a Durable store kept in Dir.
	Dir    string
	Resume bool
	// ModelID identifies the model and the options that shape the state
	// space; a run is resumed only under the same model.
	ModelID string
	// SameModel, if set, decides whether the ModelID a checkpoint was
	// written under denotes this run's model; nil compares the strings. A
	// caller whose identities gain fields over time (a new parameter, off
	// by default) uses it to keep resuming runs written before them.
	SameModel func(stored string) bool
}

// EnsureDefaults fills in what o leaves unsaid: one worker per core.
func (o *Options) EnsureDefaults() {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
}

// Validate reports every invalid option at once.
func (o Options) Validate() error {
	var problems []error
	if o.MaxDepth < 0 {
		problems = append(problems, fmt.Errorf("MaxDepth must be >= 0, got %d", o.MaxDepth))
	}
	if o.MaxStates < 0 {
		problems = append(problems, fmt.Errorf("MaxStates must be >= 0, got %d", o.MaxStates))
	}
	if o.ProgressEvery < 0 {
		problems = append(problems, fmt.Errorf("ProgressEvery must be >= 0, got %v", o.ProgressEvery))
	}
	if o.Resume && o.Dir == "" {
		problems = append(problems, errors.New("Resume needs Dir"))
	}
	if len(problems) > 0 {
		return fmt.Errorf("explorer: invalid options: %w", errors.Join(problems...))
	}
	return nil
}

// Stats is a snapshot of a running or finished search.
type Stats struct {
	Distinct  int64         // distinct states found, initial states included
	Generated int64         // successor states computed (plus initial states), duplicates included
	Depth     int           // BFS levels completed so far: states on the longest shortest path
	Queue     int64         // states waiting to be expanded
	Elapsed   time.Duration // wall time since the search started
}

// Step is one state of a counterexample. The first step's Action is the zero
// value and Initial is true.
type Step struct {
	Initial bool
	Action  Action
	State   []byte // canonical encoding; decode it with the model
}

// ViolationInfo says what failed and how to get there.
type ViolationInfo struct {
	Invariant string // name of the violated invariant, or "Deadlock"
	Deadlock  bool
	Terminal  bool   // a property of terminal states failed in a state without successor
	Trace     []Step // shortest path from an initial state to the bad state
}

// Result is what a search ends with.
type Result struct {
	Status
	Stats
	Violation *ViolationInfo // set when Status == Violation
	Reason    string         // why the search stopped early when Status == Unknown
}
