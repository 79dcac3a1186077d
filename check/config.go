package check

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
	"github.com/bkcheck/bkcheck/spec/specprops"
	"github.com/bkcheck/bkcheck/spec413"
	"github.com/bkcheck/bkcheck/state"
)

// ModelConfig is what decides the state space and the verdict: the
// protocol's parameters and the properties checked. A run directory records
// it, and a run is resumed only under the same ModelConfig.
type ModelConfig struct {
	Model string `name:"model" unit:"M" help:"the model: current (BookKeeperProtocol.tla with bkcheck's extensions) or v4.13 (BookKeeperProtocol_v4_13.tla, release 4.13: writer w1, recovery client w2; it takes --bookies, -w, -a, --entries as SendLimit, --recovery-reads-fence, --invariants, and CEL properties over its ITF variables)"`
	spec.Params
	spec413.Options
	Invariants    []string      `name:"invariants" unit:"A,B" help:"properties to check (bkcheck invariants lists them; not given: those of the TLA+ spec's shipped cfg)"`
	Symmetry      spec.Symmetry `name:"symmetry" unit:"S" help:"deduplicate states up to relabelling of: none, bookies, clients, bookies,clients (TLC's SYMMETRY; unsound combinations are refused)"`
	CheckDeadlock bool          `name:"check-deadlock" help:"report states without successors as violations (TLC's default; off here, as with TLC -deadlock)"`
	POR           bool          `name:"por" help:"partial-order reduction: expand in each state a stubborn set of its transitions instead of all; the same verdict for invariants, terminal-state properties and deadlock, fewer states where transitions are independent (docs/reduction.md); a counterexample is a real behaviour but may not be the shortest"`
	// CEL properties: --invariant, --terminal, --eventually, --probe
	// NAME=EXPR ([properties] in a file; docs/properties.md).
	properties.Settings
}

// ModelSchema is the schema of ModelConfig.
var ModelSchema = schema.MustOf(ModelConfig{})

// EnsureDefaults fills in the parameters' defaults and the default
// properties (those of the TLA+ spec's shipped configuration).
func (c *ModelConfig) EnsureDefaults() {
	if c.Model == "" {
		c.Model = ModelCurrent
	}
	if c.Model == ModelV413 {
		// The release-4.13 spec is not BookKeeper as released:
		// validate413 refuses --bookkeeper rather than its consequences.
		rel := c.BookKeeper
		c.BookKeeper = ""
		defer func() { c.BookKeeper = rel }()
	}
	c.Params.EnsureDefaults()
	if c.Invariants == nil {
		c.Invariants = append([]string(nil), invariants.Default...)
		if c.Model == ModelV413 {
			c.Invariants = spec413.DefaultInvariants()
		}
	}
}

// Validate reports every problem of c (after EnsureDefaults) at once.
func (c ModelConfig) Validate() error {
	var probs schema.Problems
	switch c.Model {
	case ModelV413:
		return c.validate413()
	case ModelCurrent:
	default:
		probs.Add("model", "unknown model %q; known: %s", c.Model, ModelNames())
		return probs.Err()
	}
	if c.RecoveryReadsFence {
		probs.Add("recovery-reads-fence", "is a setting of --model %s (the current model's recovery reads fence; --variant no-recovery-fence makes them not)", ModelV413)
	}
	perr := c.Params.Validate()
	probs.Merge(perr)
	if err := c.validateBuiltins(); err != nil {
		probs.Add("invariants", "%v", err)
	}
	if perr == nil {
		if set, err := c.CELProperties(); err != nil {
			probs.Merge(err)
		} else if set != nil && c.Model != ModelV413 {
			probs.Merge(specprops.CheckSymmetric(c.Symmetry, set.Properties()))
		}
		if err := c.Params.CheckSymmetry(c.Symmetry); err != nil {
			probs.Add("symmetry", "%v", err)
		}
		c.validatePOR(&probs)
	} else if !c.Settings.Empty() {
		// The CEL properties are compiled all the same, so that their
		// problems come in the same message as the parameters': against
		// the bookies and clients given where those are valid, else
		// against the most a run can have (an id is then refused only if
		// no run could have it).
		q := c
		q.Params = spec.DefaultParams()
		if c.Bookies >= 1 && c.Bookies <= spec.MaxBookies {
			q.Bookies = c.Bookies
		} else {
			q.Bookies = spec.MaxBookies
		}
		if c.Clients >= 1 && c.Clients <= spec.MaxClients {
			q.Clients = c.Clients
		} else {
			q.Clients = spec.MaxClients
		}
		if _, err := q.CELProperties(); err != nil {
			probs.Merge(err)
		}
	}
	c.validateFair(&probs)
	return probs.Err()
}

// Describe renders the model's parameters for people.
func (c ModelConfig) Describe() string {
	if c.Model == ModelV413 {
		return c.describe413()
	}
	return c.Params.String()
}

// Flags renders the model as command-line flags: its core parameters, and
// the other settings that are not off. The default model is not named.
func (c ModelConfig) Flags() string {
	if c.Model == ModelV413 {
		return c.flags413()
	}
	c.Model = ""
	return ModelSchema.Flags(&c, "bookies", "clients", "write-quorum", "ack-quorum", "entries", "inflight")
}

// ID is c as a JSON object: the identity a run directory and its
// checkpoints are tied to.
func (c ModelConfig) ID() string {
	b, err := ModelSchema.EncodeJSON(&c)
	if err != nil {
		panic(err) // every field of ModelConfig encodes
	}
	return string(b)
}

// Bounds stop a search early; the verdict is then unknown.
type Bounds struct {
	MaxDepth  int   `name:"max-depth" unit:"D" help:"stop after D BFS levels (initial state = depth 1); verdict unknown unless the space ends within D (0, the default: no bound)"`
	MaxStates int64 `name:"max-states" unit:"N" help:"stop after N distinct states (orbits with --symmetry); verdict unknown (0, the default: no bound)"`
}

// Parallel is how many goroutines work. Results never depend on it.
type Parallel struct {
	Workers int `name:"workers" unit:"N" help:"goroutines expanding states; results do not depend on it (not given: all cores)"`
}

// EnsureDefaults makes 0 workers mean one per core.
func (p *Parallel) EnsureDefaults() {
	if p.Workers == 0 {
		p.Workers = runtime.GOMAXPROCS(0)
	}
}

// maxWorkers bounds --workers: beyond it goroutines add only memory (each
// has its scratch states and buffers) and contention, never speed.
const maxWorkers = 1024

// Validate reports a worker count out of range.
func (p Parallel) Validate() error {
	var probs schema.Problems
	switch {
	case p.Workers < 0:
		probs.Add("workers", "must be >= 1 (got %d)", p.Workers)
	case p.Workers > maxWorkers:
		probs.Add("workers", "at most %d (got %d): more goroutines than that add memory and contention, not speed; results do not depend on the count", maxWorkers, p.Workers)
	}
	return probs.Err()
}

// Store kinds.
const (
	StoreMem    = "mem"
	StoreBadger = "badger"
)

// StoreConfig chooses where visited states live.
type StoreConfig struct {
	Store       string      `name:"store" unit:"KIND" help:"visited-state store: mem (in memory; parent links in an unlinked temporary file) or badger (on disk in --dir, resumable)"`
	Dir         string      `name:"dir" unit:"DIR" help:"run directory for --store badger: visited states, BFS levels, checkpoints"`
	Memory      schema.Size `name:"memory" unit:"SIZE" help:"memory budget such as 2GiB, at least 64MiB: caps the Badger store's caches (and, on the command line, sets the Go heap limit); not given: 2GiB for a search on disk and no heap limit; a resumed run keeps its budget unless given again"`
	Fingerprint int         `name:"fingerprint" unit:"BITS" help:"fingerprint width: 64, 96 or 128 bits (not given: 64 in memory, 96 with --store badger, or the resumed run's); wider fingerprints keep collisions unlikely at billions of states"`
}

// Sharding splits one search across processes that share --dir.
type Sharding struct {
	Shard  string `name:"shard" unit:"i/N" help:"be shard i of N (1-based) of one search shared through --dir, a directory all shards see; a restarted shard continues"`
	Shards int    `name:"shards" unit:"N" help:"be one of N shards, the index from JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or SLURM_PROCID (Slurm)"`
	// ShardTimeout is explorer.Options.ShardTimeout. Its default is long
	// enough for a scheduler to start or restart a shard (a pod pulled
	// and scheduled, a task requeued) and short enough that shards
	// waiting for one that will never come free their machines within
	// the hour; a shard that is alive is waited for however long it
	// takes.
	ShardTimeout time.Duration `name:"shard-timeout" unit:"D" help:"a shard waiting at a level's barrier for shards that have not arrived and show no sign of life (a heartbeat every second) gives up after D, naming them, with exit code 4 and the run resumable; a live but slow shard is waited for; 0 waits for ever"`
}

// DefaultShardTimeout is --shard-timeout when not given.
const DefaultShardTimeout = 10 * time.Minute

// Resolve returns the shard index (0-based) and count of a search: 0 of 1
// when it is not sharded. With --shards N the index comes from a Kubernetes
// Indexed Job or Slurm (SearchShardSources).
func (s Sharding) Resolve() (index, shards int, err error) {
	return s.ResolveFrom(SearchShardSources...)
}

// ResolveFrom is Resolve with the index taken, when --shard is not given,
// from the first of sources that is set; it is the one resolver of --shard
// and --shards (bkcheck sweep passes its own sources). --shards N without
// a source set is an error; neither given is 0 of 1.
func (s Sharding) ResolveFrom(sources ...ShardSource) (index, shards int, err error) {
	switch {
	case s.Shard != "":
		var i, n int
		if _, err := fmt.Sscanf(s.Shard, "%d/%d", &i, &n); err != nil || i < 1 || i > n || fmt.Sprintf("%d/%d", i, n) != s.Shard {
			return 0, 0, fmt.Errorf("must be i/N with 1 <= i <= N (got %q)", s.Shard)
		}
		if s.Shards != 0 {
			// --shards takes the index from a scheduler, --shard gives
			// it: both at once is one shard of N started by hand, which
			// waits for the other N-1 at its first level.
			return 0, 0, fmt.Errorf("gives this process's shard itself; --shards %d takes it from a scheduler (JOB_COMPLETION_INDEX, SLURM_PROCID): give one of them", s.Shards)
		}
		return i - 1, n, nil
	case s.Shards < 0:
		return 0, 0, fmt.Errorf("must be >= 1 (got %d)", s.Shards)
	}
	var names []string
	for _, src := range sources {
		i, n, ok, err := src.Read(s.Shards)
		if err != nil {
			return 0, 0, err
		}
		if ok {
			return i, n, nil
		}
		names = append(names, src.Name)
	}
	if s.Shards > 0 {
		return 0, 0, fmt.Errorf("needs %s in the environment (or give --shard i/N)", strings.Join(names, " or "))
	}
	return 0, 1, nil
}

// A ShardSource reads the shard a scheduler gives a process in its
// environment. Read is given --shards (0 when not given) and reports
// ok = false when its variables are absent or it needs --shards.
type ShardSource struct {
	Name string // the variable holding the index, for messages
	Read func(shards int) (index, n int, ok bool, err error)
}

// SearchShardSources are where a sharded search (--shards N) finds its
// index: a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) or the tasks of a
// Slurm step (SLURM_PROCID, with SLURM_NTASKS = N).
var SearchShardSources = []ShardSource{IndexedJobShard, {Name: "SLURM_PROCID", Read: slurmProcShard}}

// IndexedJobShard is a Kubernetes Indexed Job: JOB_COMPLETION_INDEX,
// 0-based, of --shards N.
var IndexedJobShard = ShardSource{Name: "JOB_COMPLETION_INDEX", Read: func(shards int) (int, int, bool, error) {
	return envShard("JOB_COMPLETION_INDEX", shards)
}}

func slurmProcShard(shards int) (int, int, bool, error) {
	i, n, ok, err := envShard("SLURM_PROCID", shards)
	if ok && err == nil {
		if nt, set := os.LookupEnv("SLURM_NTASKS"); set && nt != strconv.Itoa(shards) {
			return 0, 0, false, fmt.Errorf("SLURM_NTASKS=%s but --shards %d", nt, shards)
		}
	}
	return i, n, ok, err
}

// envShard reads a 0-based shard index of shards from env, when shards is
// given and env is set.
func envShard(env string, shards int) (int, int, bool, error) {
	v, set := os.LookupEnv(env)
	if shards <= 0 || !set {
		return 0, 0, false, nil
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 || i >= shards {
		return 0, 0, false, fmt.Errorf("%s=%q is not a shard index below %d", env, v, shards)
	}
	return i, shards, true, nil
}

// Config is everything one exhaustive check needs.
type Config struct {
	ModelConfig
	Bounds
	Parallel
	StoreConfig
	Sharding

	// Resume continues the interrupted run in Dir (Store badger), whose
	// recorded model must equal ModelConfig.
	Resume bool `name:"-"`
	// Progress, when set, is called from the search goroutine after each
	// BFS level and at most every ProgressEvery in between.
	Progress      func(explorer.Stats) `name:"-"`
	ProgressEvery time.Duration        `name:"-"`
	// Waiting, when set, is told that a shard waits at a barrier for
	// others (explorer.Options.Waiting; shards 0-based).
	Waiting func(depth int, missing []int, waited time.Duration) `name:"-"`
}

// AdoptRun makes c continue the run rec describes (in dir): its model,
// and its memory budget unless c gives one (which then sticks).
func (c *Config) AdoptRun(dir string, rec RunRecord) {
	c.ModelConfig = rec.Model
	c.Dir, c.Store, c.Resume = dir, StoreBadger, true
	if c.Memory == 0 {
		c.Memory = rec.Memory
	}
}

// ConfigSchema is the schema of Config: the settings of bkcheck check.
var ConfigSchema = schema.MustOf(Config{})

// DefaultConfig is the default check: spec.DefaultParams, in memory.
func DefaultConfig() Config {
	return Config{ModelConfig: ModelConfig{Model: ModelCurrent, Params: spec.DefaultParams()}, Sharding: Sharding{ShardTimeout: DefaultShardTimeout}}
}

// EnsureDefaults fills in every default of c.
func (c *Config) EnsureDefaults() {
	c.ModelConfig.EnsureDefaults()
	c.Parallel.EnsureDefaults()
	if c.Store == "" {
		c.Store = StoreMem
		if c.Dir != "" || c.Resume {
			c.Store = StoreBadger
		}
	}
}

// Validate reports every problem of c (after EnsureDefaults) at once.
func (c Config) Validate() error {
	var probs schema.Problems
	probs.Merge(c.ModelConfig.Validate())
	probs.Merge(c.Parallel.Validate())
	if c.MaxDepth < 0 {
		probs.Add("max-depth", "must be >= 0 (got %d)", c.MaxDepth)
	}
	if c.MaxStates < 0 {
		probs.Add("max-states", "must be >= 0 (got %d)", c.MaxStates)
	}
	switch c.Store {
	case StoreMem:
		if c.Dir != "" {
			probs.Add("dir", "needs --store badger (the in-memory store keeps nothing on disk)")
		}
		if c.Resume {
			probs.Add("store", "resuming needs the badger store")
		}
	case StoreBadger:
		if c.Dir == "" {
			probs.Add("store", "badger needs a run directory (--dir)")
		}
	default:
		probs.Add("store", "must be mem or badger (got %q)", c.Store)
	}
	if c.Memory != 0 && c.Memory < MinMemory {
		probs.Add("memory", "%s is below the %s minimum", c.Memory, MinMemory)
	}
	if c.Fingerprint != 0 && !state.ValidFingerprintBits(c.Fingerprint) {
		probs.Add("fingerprint", "must be 64, 96 or 128 (got %d)", c.Fingerprint)
	}
	if _, n, err := c.Sharding.Resolve(); err != nil {
		name := "shards"
		if c.Shard != "" {
			name = "shard"
		}
		probs.Add(name, "%v", err)
	} else if n > 1 {
		if c.Store != StoreBadger || c.Dir == "" {
			probs.Add("shard", "a sharded search needs --dir, a directory all shards share")
		}
		if c.MaxStates > 0 {
			probs.Add("max-states", "is not supported by a sharded search")
		}
		if c.Resume {
			probs.Add("shard", "a shard continues its search by itself; leave out --resume")
		}
	}
	if c.ShardTimeout < 0 || c.ShardTimeout > 0 && c.ShardTimeout < explorer.MinShardTimeout {
		probs.Add("shard-timeout", "must be 0 (wait for ever) or at least %v, five of the heartbeats by which a shard shows it is alive (got %v)", explorer.MinShardTimeout, c.ShardTimeout)
	}
	return probs.Err()
}

// MinMemory is the smallest memory budget accepted: the explorer's.
const MinMemory = schema.Size(explorer.MinMemory)

// storeBudget is the memory budget of a search on disk: its fingerprint
// table, buffers and Badger's caches.
func storeBudget(memory schema.Size) int64 {
	if memory == 0 {
		return explorer.DefaultMemory
	}
	return int64(memory)
}

// SimConfig is everything one random simulation needs.
type SimConfig struct {
	ModelConfig
	Parallel
	Seed     uint64        `name:"seed" unit:"S" help:"seed of the first walk; walk i uses seed+i, so a reported walk seed reruns it alone with --traces 1"`
	Depth    int           `name:"depth" unit:"D" help:"states per walk at most (initial state included)"`
	Traces   int64         `name:"traces" unit:"N" help:"number of walks (0: until --duration)"`
	Duration time.Duration `name:"duration" unit:"D" help:"how long to simulate (0: until --traces walks)"`
	LossRate float64       `name:"loss-rate" unit:"P" help:"pick steps as if each message a step sends or answers were lost with probability P (0: every successor equally likely, as in TLC's simulation, where walks lose most messages and end early)"`
}

// SimSchema is the schema of SimConfig: the settings of bkcheck simulate.
var SimSchema = schema.MustOf(SimConfig{})

// DefaultSimConfig is the default simulation: spec.DefaultParams, seed 1.
func DefaultSimConfig() SimConfig {
	return SimConfig{ModelConfig: ModelConfig{Model: ModelCurrent, Params: spec.DefaultParams()}, Seed: 1, Depth: explorer.DefaultSimDepth}
}

// EnsureDefaults fills in every default of c.
func (c *SimConfig) EnsureDefaults() {
	c.ModelConfig.EnsureDefaults()
	c.Parallel.EnsureDefaults()
	if c.Depth == 0 {
		c.Depth = explorer.DefaultSimDepth
	}
}

// Validate reports every problem of c (after EnsureDefaults) at once.
func (c SimConfig) Validate() error {
	var probs schema.Problems
	mc := c.ModelConfig
	if mc.POR {
		probs.Add("por", "is a setting of bkcheck check, not of simulate: the reduction prunes the transitions a walk picks from, so walks would not be the model's random behaviours")
		mc.POR = false
	}
	if mc.Symmetry != (spec.Symmetry{}) {
		probs.Add("symmetry", "is a setting of bkcheck check, not of simulate: walks keep no set of states to reduce, so it would change nothing but refuse the properties that name a bookie or a client")
		mc.Symmetry = spec.Symmetry{}
	}
	probs.Merge(mc.Validate())
	probs.Merge(c.Parallel.Validate())
	if c.Depth < 1 {
		probs.Add("depth", "must be >= 1 (got %d)", c.Depth)
	}
	if c.Traces < 0 {
		probs.Add("traces", "must not be negative (got %d)", c.Traces)
	}
	if c.Duration < 0 {
		probs.Add("duration", "must not be negative (got %v)", c.Duration)
	}
	if c.Traces == 0 && c.Duration == 0 {
		probs.Add("traces", "give a number of walks, or a --duration (or both)")
	}
	if !(c.LossRate >= 0 && c.LossRate < 1) {
		probs.Add("loss-rate", "must be in [0, 1) (got %v)", c.LossRate)
	}
	return probs.Err()
}
