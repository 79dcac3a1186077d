// Package spec413 is BookKeeper's replication protocol as of release 4.13,
// as a pure, deterministic state machine: a port of Jack Vanlightly's TLA+
// specification BookKeeperProtocol_v4_13.tla and its message layer
// MessagePassing_v4_13.tla (github.com/Vanlightly/bookkeeper-tlaplus @
// fe199dc), the model in which apache/bookkeeper #2614 (recovery reads do
// not fence) and #2615 (an ensemble change during recovery proposes an
// invalid fragment) were found.
//
// It is a second model beside package spec (the current protocol, a port
// of BookKeeperProtocol.tla), with its own variables: two clients with fixed
// roles, w1 the writer and w2 the recovery client; messages without a
// client id (the recovery flag tells the clients' adds apart); the metadata
// store updated at once by either client. Each TLA+ action is a method with
// the same name. Init and Next are functions of their inputs alone.
//
// Exactness: Next emits, for every state, as many successors as TLC
// generates, including the copies TLC makes when an action's guard holds
// in several ways (a disjunction with both sides true, an existential
// quantifier with several witnesses), so that distinct states, states
// generated and depth equal TLC's.
package spec413

import (
	"fmt"
	"slices"

	"github.com/bkcheck/bkcheck/schema"
)

// Hard limits of the compact state representation.
const (
	MaxBookies   = 8 // bookie sets are uint8 bitmasks; a message names a bookie in 3 bits
	MaxSendLimit = 4 // entry data fits in 3 bits of an entry set row
	// maxEntryID bounds entry ids: the recovery client numbers its
	// write-backs lap+1 and may pass SendLimit when it reads stale
	// responses (TypeOK then fails); ids fit in 4 bits of a message.
	maxEntryID   = 15
	maxFragments = MaxSendLimit + 2 // fragments start at non-decreasing entry ids 1..SendLimit+1
	maxPending   = maxEntryID
)

// Params are the CONSTANTS of the TLA+ specification. Bookies, WriteQuorum,
// AckQuorum and SendLimit are the settings both models share (bookkeeper's
// --bookies, -w, -a and --entries, declared once with package spec);
// Options holds the setting only this model has.
type Params struct {
	Bookies     int
	WriteQuorum int
	AckQuorum   int
	SendLimit   int
	Options
}

// Options are the settings of this model that the current one lacks,
// declared for package schema (flags, files, JSON).
type Options struct {
	RecoveryReadsFence bool `name:"recovery-reads-fence" help:"with --model v4.13: recovery reads fence the bookies they reach (RecoveryReadsFence; the shipped cfg has false, the behaviour of release 4.13: apache/bookkeeper#2614)"`
}

// OptionsSchema is the schema of Options.
var OptionsSchema = schema.MustOf(Options{})

// Shipped is the parameter set of BookKeeperProtocol_v4_13.cfg.
func Shipped() Params {
	return Params{Bookies: 3, WriteQuorum: 3, AckQuorum: 2, SendLimit: 1}
}

// Validate reports every problem of p at once, naming each setting as the
// command line does. Beyond the spec's ASSUMEs, a ledger needs Qw bookies
// (SelectEnsemble has no witness otherwise).
func (p Params) Validate() error {
	var probs schema.Problems
	if p.Bookies < 1 || p.Bookies > MaxBookies {
		probs.Add("bookies", "must be between 1 and %d (got %d)", MaxBookies, p.Bookies)
	}
	if p.WriteQuorum < 1 {
		probs.Add("write-quorum", "must be at least 1 (got %d)", p.WriteQuorum)
	} else if p.Bookies >= 1 && p.WriteQuorum > p.Bookies {
		probs.Add("write-quorum", "%d exceeds the number of bookies %d", p.WriteQuorum, p.Bookies)
	}
	if p.AckQuorum < 1 {
		probs.Add("ack-quorum", "must be at least 1 (got %d)", p.AckQuorum)
	} else if p.WriteQuorum >= 1 && p.AckQuorum > p.WriteQuorum {
		probs.Add("ack-quorum", "%d exceeds the write quorum %d", p.AckQuorum, p.WriteQuorum)
	}
	if p.SendLimit < 1 || p.SendLimit > MaxSendLimit {
		probs.Add("entries", "must be between 1 and %d with --model v4.13 (got %d)", MaxSendLimit, p.SendLimit)
	}
	return probs.Err()
}

// String renders p as the TLA+ constants.
func (p Params) String() string {
	return fmt.Sprintf("Bookies=%d WriteQuorum=%d AckQuorum=%d SendLimit=%d RecoveryReadsFence=%t",
		p.Bookies, p.WriteQuorum, p.AckQuorum, p.SendLimit, p.RecoveryReadsFence)
}

// ensembles lists every set of WriteQuorum bookies in the order TLC
// enumerates SUBSET Bookies for CHOOSE (SubsetValue.elementsNormalized:
// by size, then lexicographically by sorted members), so that the first
// valid one is CHOOSE's witness.
func (p Params) ensembles() []Bookies {
	var out []Bookies
	for s := 0; s < 1<<uint(p.Bookies); s++ {
		if Bookies(s).Len() == p.WriteQuorum {
			out = append(out, Bookies(s))
		}
	}
	// Of two sets of one size, the one holding the lowest bookie in which
	// they differ comes first.
	slices.SortFunc(out, func(a, b Bookies) int {
		switch d := a ^ b; {
		case d == 0:
			return 0
		case a&d&-d != 0:
			return -1
		}
		return 1
	})
	return out
}
