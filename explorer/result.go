package explorer

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/bkcheck/bkcheck/state"
)

// Status is the verdict of a search: three-valued, and Error when the
// model itself failed.
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
	// Error: the model failed (it panicked, or reported a property it
	// cannot evaluate) on a state; Result.Violation holds the trace to
	// that state and, in Error, how it failed (modelerror.go). Neither
	// proved nor refuted, but final: resuming does not continue the search.
	Error
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Violation:
		return "violation"
	case Unknown:
		return "unknown"
	case Error:
		return "error"
	}
	return "invalid"
}

// Options bound and shape a search. The zero value searches everything in
// memory with one worker per core and 64-bit fingerprints.
type Options struct {
	Workers       int   // goroutines expanding states; <= 0 means runtime.GOMAXPROCS(0)
	MaxDepth      int   // stop after this many BFS levels (initial states are depth 1); 0 = no bound
	MaxStates     int64 // stop once this many distinct states are known; 0 = no bound
	CheckDeadlock bool  // report states without successors as violations
	// Progress, when set, is called from the search goroutine after each
	// BFS level and at most every ProgressEvery in between.
	Progress      func(Stats)
	ProgressEvery time.Duration

	// Fingerprint is the fingerprint width in bits: 64, 96 or 128. 0
	// means 64 in memory and state.LargeRunFingerprintBits on disk (Dir).
	Fingerprint int
	// TempDir, for a search in memory, is where its parent links go, in
	// an unlinked file (as TLC keeps its trace file); "" keeps them in
	// memory.
	TempDir string

	// Dir, when set, makes the search run on disk (disk.go): BFS levels,
	// parent links and the visited set (sorted runs of fingerprints in
	// Badger) live there, the fingerprints in memory are held to Memory,
	// and a checkpoint after each level lets Resume continue an
	// interrupted run (Ctrl-C, kill -9) with exactly the counts of an
	// uninterrupted one.
	Dir    string
	Resume bool
	// Memory is the memory budget of a search on disk, in bytes: its
	// fingerprint table, buffers and Badger's caches. 0 means
	// DefaultMemory.
	Memory int64
	// ModelID identifies the model and the options that shape the state
	// space; a run is resumed only under the same model.
	ModelID string
	// SameModel, if set, decides whether the ModelID a checkpoint was
	// written under denotes this run's model; nil compares the strings. A
	// caller whose identities gain fields over time (a new parameter, off
	// by default) uses it to keep resuming runs written before them.
	SameModel func(stored string) bool

	// Shards > 1 makes this process shard Shard (0-based) of a search
	// shared by Shards processes through Dir, a directory they all see
	// (shard.go). A sharded search always continues what Dir holds.
	Shard, Shards int
	// SyncPoll is how often a shard looks for the others at a barrier;
	// 0 means 100ms.
	SyncPoll time.Duration
	// Waiting, when set, is told when a shard has waited at a barrier for
	// WaitingEvery (0: 10 s), and every WaitingEvery again: the level, and
	// the shards (0-based) it still waits for, which may be dead or never
	// started.
	Waiting      func(depth int, missing []int, waited time.Duration)
	WaitingEvery time.Duration
	// ShardTimeout bounds the wait at a barrier for a shard that shows no
	// sign of life: one that has not posted its marker and whose heartbeat
	// (sync/alive.NNN, rewritten every HeartbeatEvery while it runs) has
	// not changed for ShardTimeout. Run then returns a *ShardTimeoutError
	// naming them, the run directory resumable as after an interrupt. A
	// shard that is alive but slow is waited for however long its level
	// takes, so the bound can be short without stopping a search whose
	// levels take hours. 0 waits for ever.
	ShardTimeout time.Duration

	// testing overrides the memory split of a search on disk, so that
	// tests reach the full-table paths with small models.
	testing struct {
		tableBytes int64 // bytes of fingerprint table(s)
		sortFPs    int   // fingerprints sorted at once into a run
	}
}

// DefaultMemory is the memory budget of a search on disk when
// Options.Memory is 0.
const DefaultMemory int64 = 2 << 30

// MinMemory is the smallest budget of a search on disk.
const MinMemory int64 = 64 << 20

// EnsureDefaults fills in what o leaves unsaid: one worker per core, the
// fingerprint width, the memory budget.
func (o *Options) EnsureDefaults() {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Fingerprint == 0 {
		o.Fingerprint = state.DefaultFingerprintBits
		if o.Dir != "" {
			o.Fingerprint = state.LargeRunFingerprintBits
		}
	}
	if o.Memory == 0 {
		o.Memory = DefaultMemory
	}
	if o.Shards == 0 {
		o.Shards = 1
	}
	if o.WaitingEvery == 0 {
		o.WaitingEvery = 10 * time.Second
	}
	if o.SyncPoll == 0 {
		o.SyncPoll = 100 * time.Millisecond
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
	if !state.ValidFingerprintBits(o.Fingerprint) {
		problems = append(problems, fmt.Errorf("Fingerprint must be 64, 96 or 128 bits, got %d", o.Fingerprint))
	}
	if o.Dir != "" && o.Memory < MinMemory {
		problems = append(problems, fmt.Errorf("Memory must be at least %d MiB, got %d bytes", MinMemory>>20, o.Memory))
	}
	if o.Shards < 1 || o.Shard < 0 || o.Shard >= o.Shards {
		problems = append(problems, fmt.Errorf("Shard must be in [0, Shards), got %d of %d", o.Shard, o.Shards))
	}
	if o.Shards > 1 && o.Dir == "" {
		problems = append(problems, errors.New("Shards > 1 needs Dir, shared by the shards"))
	}
	if o.Shards > 1 && o.MaxStates > 0 {
		problems = append(problems, errors.New("MaxStates is not supported with Shards > 1"))
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
	Invariant string // name of the violated invariant, or "Deadlock"; "" for an Error
	Deadlock  bool
	Terminal  bool   // a property of terminal states failed in a state without successor
	Trace     []Step // shortest path from an initial state to the bad state
	// Error, set when the verdict is Error, says how the model failed on
	// the last state of Trace (Trace is empty if it failed computing the
	// initial states).
	Error *ModelError
}

// Result is what a search ends with.
type Result struct {
	Status
	Stats
	Violation *ViolationInfo // set when Status == Violation or Error
	Reason    string         // why the search stopped early when Status == Unknown; for Error, Violation.Error's text
	// Fingerprint is the fingerprint width the search used, in bits.
	Fingerprint int
	// Store describes where the search kept its states.
	Store StoreStats
	// AlreadyFinished: the run directory held a finished search, whose
	// result this is; nothing was searched this time (Elapsed is the
	// recorded search's).
	AlreadyFinished bool
}

// Collision is the estimated probability that two distinct states shared
// a fingerprint (TLC's optimistic estimate, for the width used).
func (r Result) Collision() float64 {
	bits := r.Fingerprint
	if bits == 0 {
		bits = state.DefaultFingerprintBits
	}
	return state.CollisionProbabilityBits(r.Distinct, r.Generated, bits)
}

// StoreStats describes the memory and disk a search used for its states.
// It is not part of the verdict: it varies with the budget and the
// workers.
type StoreStats struct {
	// TableBytes is the memory of the fingerprint table at the end, and
	// TableBytesPerState that per distinct state (of this shard).
	TableBytes         int64
	TableBytesPerState float64
	// Exact reports whether the table held every visited fingerprint to
	// the end (on disk: no level needed checking against the runs).
	Exact bool
	// On disk: the visited set (sorted runs in Badger), the parent links
	// and the largest BFS level file with the number of states in it
	// (encodings and, while the level was being built, fingerprints).
	VisitedDiskBytes int64
	LinkDiskBytes    int64
	FrontierBytes    int64
	FrontierStates   int64
	// PeakDiskBytes is the most the run directory (this shard's part of
	// it) held at a level's end.
	PeakDiskBytes int64
	// Exchange is what a shard of a sharded search sent and waited for
	// in this session; zero for a search of one process.
	Exchange ExchangeStats
}

// ExchangeStats measure a shard's share of the cost of sharding, so that
// what N machines would give can be estimated from a run on one: the
// successors it sent to other shards and the bytes of their batch files
// (compressed, as they cross the shared file system), and the time it
// spent at the barriers waiting for the others, over Levels levels. They
// count this session only (a resumed shard does not know what an earlier
// process sent).
type ExchangeStats struct {
	Levels      int
	SentRecords int64
	SentBytes   int64
	BarrierWait time.Duration
}
