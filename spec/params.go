// Package spec is the BookKeeper replication protocol as a pure,
// deterministic state machine: a port of Jack Vanlightly's TLA+ specification
// BookKeeperProtocol.tla (github.com/Vanlightly/bookkeeper-tlaplus, commit
// fe199dc) and its message layer MessagePassing.tla.
//
// Each TLA+ action is a method with the same name, so the two can be read
// side by side. The model does no I/O, starts no goroutines and reads no
// clock: Init and Next are functions of their inputs alone.
package spec

import "github.com/bkcheck/bkcheck/schema"

// Hard limits of the compact state representation. They are far beyond what
// an exhaustive search can finish, so they cost nothing in practice.
const (
	MaxBookies   = 8 // bookie sets are uint8 bitmasks
	MaxClients   = 4
	MaxEntries   = 8 // b_entries is a bitmask over (entry id, data) pairs
	maxFragments = MaxEntries + 2
	maxFaults    = 7
)

// Params is one parameter set of the model: the CONSTANTS of the TLA+
// spec and bkcheck's extensions. Each field is declared once here, with the
// name it has everywhere (flags, TOML files, JSON, validation messages);
// package schema derives the rest. The zero value of an extension is "off",
// and with every extension off the model is the TLA+ specification.
type Params struct {
	Bookies     int    `name:"bookies" unit:"N" help:"bookies b1..bN (at most 8)"`
	Clients     int    `name:"clients" unit:"N" help:"clients c1..cN (at most 4); the first to act creates the ledger, the others may recover it"`
	Ensemble    int    `name:"ensemble" short:"e" unit:"E" help:"ensemble size E; E > Qw stripes entries round-robin (not given: E = Qw, as in the TLA+ spec)"`
	WriteQuorum int    `name:"write-quorum" short:"w" unit:"Qw" help:"copies written per entry (the spec's WriteQuorum)"`
	AckQuorum   int    `name:"ack-quorum" short:"a" unit:"Qa" help:"acknowledgements that commit an entry (AckQuorum)"`
	Entries     int    `name:"entries" unit:"N" help:"entries the writer may create (SendLimit, at most 8)"`
	Inflight    int    `name:"inflight" unit:"N" help:"unacknowledged entries the writer may have (InflightLimit)"`
	Variant     string `name:"variant" unit:"V" help:"protocol variant (bkcheck variants lists them; not given: reference)"`

	// Fault budgets: how many times each fault may happen in a run. All
	// zero is the reference model, whose state space they leave untouched.
	Crashes      int    `name:"crashes" unit:"N" help:"bookie crashes allowed (a crashed bookie loses its connections and later restarts with its journal)"`
	DataLoss     int    `name:"data-loss" unit:"N" help:"bookie restarts with an empty disk allowed"`
	DataLossMode string `name:"data-loss-mode" unit:"MODE" help:"how a bookie that lost its disk answers: blank (like a new bookie; the default) or limbo (BP-44: fenced, answers Unknown)"`
	ReadOnly     int    `name:"read-only" unit:"N" help:"bookies that may turn read-only (disk full: adds rejected, reads and fencing served)"`
	Unavailable  int    `name:"unavailable" unit:"N" help:"the last N bookies are down for the whole run (never start)"`

	// ReliableNetwork: no message is lost (sends and replies are always
	// delivered); timeouts then come only from crashed bookies. A way to
	// isolate what bookie faults alone do.
	ReliableNetwork bool `name:"reliable-network" help:"no message is ever lost (timeouts come only from crashed bookies)"`

	// Exclude lists actions (by TLA+ name) that may not occur: a way to
	// ask for the shortest counterexample of one kind, or to shrink a model
	// to what a question needs. Results are then about the restricted model.
	Exclude []string `name:"exclude-actions" unit:"A,B" help:"actions that may not occur (bkcheck actions lists them)"`
}

// ParamsSchema is the schema of Params: flags, file keys and JSON keys.
var ParamsSchema = schema.MustOf(Params{})

// Faulty reports whether any fault is enabled.
func (p Params) Faulty() bool {
	return p.Crashes > 0 || p.DataLoss > 0 || p.ReadOnly > 0 || p.Unavailable > 0
}

// unavailableSet is the set of bookies down for the whole run.
func (p Params) unavailableSet() Bookies {
	var s Bookies
	for b := p.Bookies - p.Unavailable; b < p.Bookies; b++ {
		s |= 1 << uint(b)
	}
	return s
}

// Limbo reports whether data loss follows the BP-44 limbo proposal.
func (p Params) Limbo() bool { return p.DataLossMode == "limbo" }

// DefaultParams is a small model that finishes in well under a second yet
// exercises every action: two bookies, two clients, Qw 2, Qa 1, one entry.
// It is what bkcheck checks when given no parameter.
func DefaultParams() Params {
	return Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1}
}

// EnsureDefaults fills in what a parameter set leaves unsaid: E = Qw, the
// reference variant, blank data loss. A data-loss mode without data loss
// has no effect and is cleared, so that equal models have equal Params.
func (p *Params) EnsureDefaults() {
	if p.Ensemble == 0 {
		p.Ensemble = p.WriteQuorum
	}
	if p.Variant == "" {
		p.Variant = Variants[0].Name
	}
	switch {
	case p.DataLoss == 0:
		p.DataLossMode = ""
	case p.DataLossMode == "":
		p.DataLossMode = "blank"
	}
}

// ValidationError is the error of an invalid parameter set: every problem,
// each naming its setting.
type ValidationError = schema.Problems

// Validate reports every problem of p (after EnsureDefaults) at once.
func (p Params) Validate() error {
	var probs schema.Problems
	if p.Bookies < 1 || p.Bookies > MaxBookies {
		probs.Add("bookies", "must be between 1 and %d (got %d)", MaxBookies, p.Bookies)
	}
	if p.Clients < 1 || p.Clients > MaxClients {
		probs.Add("clients", "must be between 1 and %d (got %d)", MaxClients, p.Clients)
	}
	if p.WriteQuorum < 1 {
		probs.Add("write-quorum", "must be at least 1 (got %d)", p.WriteQuorum)
	}
	if p.AckQuorum < 1 {
		probs.Add("ack-quorum", "must be at least 1 (got %d)", p.AckQuorum)
	}
	if p.AckQuorum > p.WriteQuorum && p.WriteQuorum >= 1 {
		probs.Add("ack-quorum", "%d exceeds the write quorum %d", p.AckQuorum, p.WriteQuorum)
	}
	// The ensemble is checked against the write quorum only when that is
	// valid, so that a bad -w is not reported a second time as a bad -e.
	switch {
	case p.Ensemble < 1 && p.WriteQuorum >= 1:
		probs.Add("ensemble", "must be at least 1 (got %d)", p.Ensemble)
	case p.Ensemble >= 1 && p.Ensemble < p.WriteQuorum:
		probs.Add("ensemble", "%d is below the write quorum %d", p.Ensemble, p.WriteQuorum)
	}
	if p.Ensemble > p.Bookies && p.Bookies >= 1 {
		probs.Add("ensemble", "%d exceeds the number of bookies %d", p.Ensemble, p.Bookies)
	}
	if p.Entries < 1 || p.Entries > MaxEntries {
		probs.Add("entries", "must be between 1 and %d (got %d)", MaxEntries, p.Entries)
	}
	if p.Inflight < 1 {
		probs.Add("inflight", "must be at least 1 (got %d)", p.Inflight)
	}
	if _, err := VariantByName(p.Variant); err != nil {
		probs.Add("variant", "%v", err)
	}
	for _, b := range []struct {
		name string
		v    int
	}{{"crashes", p.Crashes}, {"data-loss", p.DataLoss}, {"read-only", p.ReadOnly}} {
		if b.v < 0 || b.v > maxFaults {
			probs.Add(b.name, "must be between 0 and %d (got %d)", maxFaults, b.v)
		}
	}
	for _, name := range p.Exclude {
		if _, ok := ActionKindByName(name); !ok {
			probs.Add("exclude-actions", "unknown action %q (bkcheck actions lists them)", name)
		}
	}
	if p.Unavailable < 0 || (p.Bookies >= 1 && p.Unavailable >= p.Bookies) {
		probs.Add("unavailable", "must be between 0 and bookies-1 (got %d)", p.Unavailable)
	}
	switch p.DataLossMode {
	case "", "blank", "limbo":
	default:
		probs.Add("data-loss-mode", "must be blank or limbo (got %q)", p.DataLossMode)
	}
	return probs.Err()
}

// IsValidationError reports whether err (or an error it wraps) is a
// parameter problem, which the command line reports as a usage error.
func IsValidationError(err error) bool {
	_, ok := schema.AsProblems(err)
	return ok
}

// String renders p as settings: the core parameters always, the
// extensions when they are on.
func (p Params) String() string {
	return ParamsSchema.Describe(&p, "bookies", "clients", "ensemble", "write-quorum", "ack-quorum", "entries", "inflight", "variant")
}
