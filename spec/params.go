// Package spec is the BookKeeper replication protocol as a pure,
// deterministic state machine: a port of Jack Vanlightly's TLA+ specification
// BookKeeperProtocol.tla (github.com/Vanlightly/bookkeeper-tlaplus, commit
// fe199dc) and its message layer MessagePassing.tla.
//
// Each TLA+ action is a method with the same name, so the two can be read
// side by side. The model does no I/O, starts no goroutines and reads no
// clock: Init and Next are functions of their inputs alone.
package spec

import (
	"errors"
	"fmt"
	"strings"
)

// Hard limits of the compact state representation. They are far beyond what
// an exhaustive search can finish, so they cost nothing in practice.
const (
	MaxBookies   = 8 // bookie sets are uint8 bitmasks
	MaxClients   = 4
	MaxEntries   = 8 // b_entries is a bitmask over (entry id, data) pairs
	maxFragments = MaxEntries + 2
	maxFaults    = 7
)

// Params is one parameter set of the model: the CONSTANTS of the TLA+ spec.
type Params struct {
	Bookies     int    // |Bookies|: bookies b1..bN
	Clients     int    // |Clients|: clients c1..cN
	Ensemble    int    // E, ensemble size; equal to WriteQuorum in the reference spec
	WriteQuorum int    // Qw, copies written per entry
	AckQuorum   int    // Qa, acknowledgements needed to commit an entry
	Entries     int    // SendLimit: entries the writer may create
	Inflight    int    // InflightLimit: unacknowledged entries the writer may have
	Variant     string // protocol variant (see Variants); "" is the reference

	// Fault budgets: how many times each fault may happen in a run. All
	// zero is the reference model, whose state space they leave untouched.
	Crashes      int    // a bookie stops (in-flight messages to and from it are lost) and later restarts intact
	DataLoss     int    // a bookie restarts with an empty disk
	DataLossMode string // "blank" (answers like a new bookie) or "limbo" (BP-44: comes back fenced, answers Unknown)
	ReadOnly     int    // a bookie turns read-only (disk full): rejects adds, serves reads and fencing
	Unavailable  int    // the last N bookies are down for the whole run (from the initial state, never restarting)

	// ReliableNetwork: no message is lost (sends and replies are always
	// delivered); timeouts then come only from crashed bookies. A way to
	// isolate what bookie faults alone do.
	ReliableNetwork bool

	// Exclude lists actions (by TLA+ name) that may not occur: a way to
	// ask for the shortest counterexample of one kind, or to shrink a model
	// to what a question needs. Results are then about the restricted model.
	Exclude []string
}

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
func DefaultParams() Params {
	return Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1}
}

// ValidationError lists every problem of a parameter set at once, so a user
// fixes them all in one go instead of one per run.
type ValidationError struct{ Problems []string }

func (e *ValidationError) Error() string {
	return "invalid parameters:\n  - " + strings.Join(e.Problems, "\n  - ")
}

// Validate reports every problem of p in one *ValidationError, or nil.
func (p Params) Validate() error {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if p.Bookies < 1 || p.Bookies > MaxBookies {
		add("bookies must be between 1 and %d (got %d)", MaxBookies, p.Bookies)
	}
	if p.Clients < 1 || p.Clients > MaxClients {
		add("clients must be between 1 and %d (got %d)", MaxClients, p.Clients)
	}
	if p.WriteQuorum < 1 {
		add("write quorum (-w) must be at least 1 (got %d)", p.WriteQuorum)
	}
	if p.AckQuorum < 1 {
		add("ack quorum (-a) must be at least 1 (got %d)", p.AckQuorum)
	}
	if p.AckQuorum > p.WriteQuorum && p.WriteQuorum >= 1 {
		add("ack quorum (-a %d) must not exceed write quorum (-w %d)", p.AckQuorum, p.WriteQuorum)
	}
	if p.Ensemble < 1 {
		add("ensemble size (-e) must be at least 1 (got %d)", p.Ensemble)
	}
	if p.Ensemble >= 1 && p.Ensemble < p.WriteQuorum {
		add("ensemble size (-e %d) must be at least the write quorum (-w %d)", p.Ensemble, p.WriteQuorum)
	}
	if p.Ensemble > p.Bookies && p.Bookies >= 1 {
		add("ensemble size (-e %d) exceeds the number of bookies (%d)", p.Ensemble, p.Bookies)
	}
	if p.Entries < 1 || p.Entries > MaxEntries {
		add("entries must be between 1 and %d (got %d)", MaxEntries, p.Entries)
	}
	if p.Inflight < 1 {
		add("inflight must be at least 1 (got %d)", p.Inflight)
	}
	if _, err := VariantByName(p.Variant); err != nil {
		add("%v", err)
	}
	for _, b := range []struct {
		name string
		v    int
	}{{"crashes", p.Crashes}, {"data-loss", p.DataLoss}, {"read-only", p.ReadOnly}} {
		if b.v < 0 || b.v > maxFaults {
			add("--%s must be between 0 and %d (got %d)", b.name, maxFaults, b.v)
		}
	}
	for _, name := range p.Exclude {
		if _, ok := ActionKindByName(name); !ok {
			add("--exclude-actions: unknown action %q (see bkcheck actions)", name)
		}
	}
	if p.Unavailable < 0 || (p.Bookies >= 1 && p.Unavailable >= p.Bookies) {
		add("--unavailable must be between 0 and bookies-1 (got %d)", p.Unavailable)
	}
	switch p.DataLossMode {
	case "", "blank", "limbo":
	default:
		add("--data-loss-mode must be blank or limbo (got %q)", p.DataLossMode)
	}
	if len(probs) == 0 {
		return nil
	}
	return &ValidationError{Problems: probs}
}

// IsValidationError reports whether err (or an error it wraps) is a
// parameter problem, which the command line reports as a usage error.
func IsValidationError(err error) bool {
	var v *ValidationError
	return errors.As(err, &v)
}

// String renders p in the flag syntax of bkcheck check.
func (p Params) String() string {
	v := p.Variant
	if v == "" {
		v = Variants[0].Name
	}
	out := fmt.Sprintf("bookies=%d clients=%d ensemble=%d write-quorum=%d ack-quorum=%d entries=%d inflight=%d variant=%s",
		p.Bookies, p.Clients, p.Ensemble, p.WriteQuorum, p.AckQuorum, p.Entries, p.Inflight, v)
	if p.Crashes > 0 {
		out += fmt.Sprintf(" crashes=%d", p.Crashes)
	}
	if p.DataLoss > 0 {
		mode := p.DataLossMode
		if mode == "" {
			mode = "blank"
		}
		out += fmt.Sprintf(" data-loss=%d data-loss-mode=%s", p.DataLoss, mode)
	}
	if p.ReadOnly > 0 {
		out += fmt.Sprintf(" read-only=%d", p.ReadOnly)
	}
	if p.Unavailable > 0 {
		out += fmt.Sprintf(" unavailable=%d", p.Unavailable)
	}
	if p.ReliableNetwork {
		out += " reliable-network"
	}
	if len(p.Exclude) > 0 {
		out += " exclude=" + strings.Join(p.Exclude, ",")
	}
	return out
}
