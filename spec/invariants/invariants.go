// Package invariants holds the named properties checked on every reachable
// protocol state. Each property is stated once, with the TLA+ invariant or
// the BookKeeper claim it mirrors, so a violation report can say exactly
// what broke and where the property comes from.
package invariants

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bkcheck/bkcheck/spec"
)

// Invariant is a named predicate over a protocol state.
type Invariant struct {
	Name      string
	Statement string // one line, for people
	Source    string // the TLA+ definition or documentation it mirrors
	// Holds reports whether the invariant holds in s (nil: no condition
	// on every state).
	Holds func(p *spec.Params, s *spec.State) bool
	// HoldsTerminal, when set, is a property of terminal states (states
	// without successors): it reports whether it holds in such a state.
	HoldsTerminal func(p *spec.Params, s *spec.State) bool
	// Reads is what Holds reads, for the partial-order reduction (--por:
	// a transition that may change it is visible); nil: anything, which
	// makes every transition visible and leaves nothing to reduce.
	Reads *spec.PropertyReads
}

// All lists every invariant bkcheck knows, in a fixed order.
var All = []Invariant{
	{
		Name:      "TypeOK",
		Statement: "every variable holds a value of its type: statuses, versions, entry ids and data, LACs and bookie sets are in range",
		Source:    "TypeOK in BookKeeperProtocol.tla, extended to the client records (whose check the spec comments out)",
		Holds:     typeOK,
		Reads:     &spec.PropertyReads{FieldWise: true},
	},
	{
		Name:      "NoDivergenceBetweenClientAndMetaData",
		Statement: "once the ledger is closed, exactly one client closed it at the metadata's last entry, and no writer has acknowledged an entry beyond that last entry",
		Source:    "NoDivergenceBetweenClientAndMetaData in BookKeeperProtocol.tla (2024 form)",
		Holds:     noDivergence,
		Reads:     &spec.PropertyReads{MetaEnd: true, ClientClass: true, ClientLAC: true},
	},
	{
		Name:      "AllAckedEntriesAreReadable",
		Statement: "every entry up to an open or closed client's LAC is stored on at least one bookie of its fragment's ensemble",
		Source:    "AllAckedEntriesAreReadable in BookKeeperProtocol.tla",
		Holds:     allAckedReadable,
		Reads:     &spec.PropertyReads{MetaFragments: true, Stores: true, ClientClass: true, ClientLAC: true},
	},
	{
		Name:      "AllCommittedEntriesReachAckQuorum",
		Statement: "once the ledger is closed, every entry up to its last entry is stored on at least Qa bookies of its fragment's ensemble",
		Source:    "AllCommittedEntriesReachAckQuorum in BookKeeperProtocol.tla (defined, not in the shipped cfg)",
		Holds:     committedReachAckQuorum,
		Reads:     &spec.PropertyReads{MetaEnd: true, MetaFragments: true, Stores: true},
	},
	{
		Name:      "NoOutOfOrderEntries",
		Statement: "every stored entry carries the data the writer gave its id, so reads return entries in write order",
		Source:    "NoOutOfOrderEntries in BookKeeperProtocol.tla (defined, not in the shipped cfg)",
		Holds:     noOutOfOrder,
		Reads:     &spec.PropertyReads{Stores: true},
	},
	{
		Name:      "AckedEntriesHaveAckQuorumCopies",
		Statement: "every entry up to an open or closed client's LAC is stored on at least Qa bookies of its write set (counting only bookies that still hold it)",
		Source:    "BookKeeper's durability promise: an acknowledged entry has Qa copies (AckQuorum, pulsar-admin set-persistence -a)",
		Holds:     ackedHaveAckQuorum,
		Reads:     &spec.PropertyReads{MetaFragments: true, Stores: true, ClientClass: true, ClientLAC: true},
	},
	{
		Name: "EntriesReachWriteQuorum",
		Statement: "once the ledger is closed and no further copy can appear (a terminal state, or no add in flight and no client able to send one), " +
			"every entry up to its last entry is stored on all Qw bookies of its write set",
		Source:        "the common assumption that acknowledged entries end up with Qw copies (WriteQuorum, pulsar-admin set-persistence -w); false for the reference protocol, the goal of the gwq variant",
		Holds:         entriesReachWQWhenQuiescent,
		HoldsTerminal: entriesReachWQ,
		Reads:         &spec.PropertyReads{MetaEnd: true, MetaFragments: true, Stores: true, ClientStatus: true, LiveAdds: true},
	},
	{
		Name:      "TailFragmentsReachWriteQuorum",
		Statement: "every entry of every fragment but the last is stored on all Qw bookies of that fragment's write set",
		Source:    "TailFragmentsReachWriteQuorum in tweaks/ProtocolWithGuaranteedWriteQuorum.tla",
		Holds:     tailFragmentsReachWQ,
		Reads:     &spec.PropertyReads{MetaFragments: true, Stores: true},
	},
	{
		Name:      "AllEntriesOfClosedLedgerReachedWriteQuorum",
		Statement: "once the ledger is closed, every entry up to its last entry is stored on all Qw bookies of its write set",
		Source:    "AllEntriesOfClosedLedgerReachedWriteQuorum in tweaks/ProtocolWithGuaranteedWriteQuorum.tla",
		Holds:     closedLedgerReachedWQ,
		Reads:     &spec.PropertyReads{MetaEnd: true, MetaFragments: true, Stores: true},
	},
	{
		Name:      "FragmentsInOrder",
		Statement: "the metadata's fragments, and every client's, start at strictly increasing entry ids",
		Source:    "LedgerMetadata's ensembles are keyed by first entry id, in order; ReadOnlyLedgerHandle.closeRecovered checks it (checkState: no ensemble may be added before the last once a ledger is in recovery)",
		Holds:     fragmentsInOrder,
	},
	{
		Name:      "NoEntryAcknowledged",
		Statement: "probe: no client ever acknowledges an entry; a violation is a witness that writes succeed",
		Source:    "a reachability probe for availability questions (docs/guarantees.md), not a safety property",
		Holds:     noEntryAcknowledged,
		Reads:     &spec.PropertyReads{ClientClass: true, ClientLAC: true},
	},
	{
		Name: "NoAckWithWriteSetCrashed",
		Statement: "probe: no writer acknowledges entry 1 once --crashes bookies it sent entry 1 to are down without it; " +
			"a violation is a witness that writes proceed with that many of the write set crashed",
		Source: "the quorum arithmetic of BookKeeper's docs: an entry is acknowledged with Qa acks, so a write set tolerates Qw - Qa failures " +
			"before an ensemble change (PendingAddOp, LedgerHandle.handleBookieFailure)",
		Holds: noAckWithWriteSetCrashed,
	},
	{
		Name:      "LedgerCreationSucceeds",
		Statement: "probe: no client fails to create the ledger for want of writable bookies; a violation is a witness of NotEnoughBookies",
		Source:    "BookKeeper's ledger creation needs E writable bookies (BKNotEnoughBookiesException)",
		Holds:     creationSucceeds,
	},
}

// Default is the invariant list of the shipped BookKeeperProtocol.cfg.
var Default = []string{"TypeOK", "NoDivergenceBetweenClientAndMetaData", "AllAckedEntriesAreReadable"}

// Lookup returns the named invariants in the order given. Unknown names
// are all reported in one error that lists the known ones.
func Lookup(names []string) ([]Invariant, error) {
	byName := map[string]Invariant{}
	for _, inv := range All {
		byName[inv.Name] = inv
	}
	var out []Invariant
	var unknown []string
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		inv, ok := byName[n]
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		out = append(out, inv)
	}
	if len(unknown) > 0 {
		known := make([]string, 0, len(All))
		for _, inv := range All {
			known = append(known, inv.Name)
		}
		sort.Strings(known)
		return nil, fmt.Errorf("unknown invariant(s) %s; known: %s", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return out, nil
}

func typeOK(p *spec.Params, s *spec.State) bool {
	if s.MetaStatus > spec.StatusClosed || s.MetaLastEntry < 0 || s.MetaVersion < 0 {
		return false
	}
	for b := 0; b < p.Bookies; b++ {
		if s.BLAC[b] < 0 {
			return false
		}
		// Entry == [id: 1..SendLimit, data: 1..SendLimit \union {Nil}]
		if !s.BEntries[b].Within(p.Entries) {
			return false
		}
	}
	all := spec.Bookies(1<<uint(p.Bookies) - 1)
	for i := 0; i < p.Clients; i++ {
		c := &s.Clients[i]
		if c.Status > spec.StatusClosing || c.LAC < 0 || c.LAP < 0 ||
			c.Fenced&^all != 0 || c.RecoveryEns&^all != 0 || c.RecoveryPhase > spec.ReadWritePhase {
			return false
		}
		for _, f := range c.FragmentList() {
			if f.Ensemble&^all != 0 || f.Ensemble.Len() != p.Ensemble {
				return false
			}
		}
	}
	return true
}

func noDivergence(p *spec.Params, s *spec.State) bool {
	if s.MetaStatus != spec.StatusClosed {
		return true
	}
	closers := 0
	for i := 0; i < p.Clients; i++ {
		c := &s.Clients[i]
		if c.Status == spec.StatusClosed && c.LAC == s.MetaLastEntry {
			closers++
		}
		switch c.Status {
		case spec.StatusNil, spec.StatusInRecovery, spec.RecoveryAborted:
		default:
			if c.LAC > s.MetaLastEntry {
				return false
			}
		}
	}
	// Exactly one, as the spec says; with LedgerHandle's close
	// (--close-rereads) a second close succeeds on a ledger already
	// closed at the same entry ("nothing to do"), so the handles agree
	// with the metadata when at least one closed it.
	if p.CloseRereads {
		return closers >= 1
	}
	return closers == 1
}

func allAckedReadable(p *spec.Params, s *spec.State) bool {
	if s.MetaDeleted {
		return true // a deleted ledger's entries are meant to go
	}
	for i := 0; i < p.Clients; i++ {
		c := &s.Clients[i]
		if (c.Status != spec.StatusOpen && c.Status != spec.StatusClosing && c.Status != spec.StatusClosed) || c.LAC <= 0 {
			continue
		}
		for id := int8(1); id <= c.LAC; id++ {
			f, ok := spec.FragmentOfEntryId(id, s.MetaFragmentList())
			if !ok || s.StoredOn(id, f.Ensemble) == 0 {
				return false
			}
		}
	}
	return true
}

func committedReachAckQuorum(p *spec.Params, s *spec.State) bool {
	if s.MetaDeleted {
		return true // a deleted ledger's entries are meant to go
	}
	if s.MetaStatus != spec.StatusClosed {
		return true
	}
	for id := int8(1); id <= s.MetaLastEntry; id++ {
		f, ok := spec.FragmentOfEntryId(id, s.MetaFragmentList())
		if !ok || s.StoredOn(id, f.Ensemble).Len() < p.AckQuorum {
			return false
		}
	}
	return true
}

func noOutOfOrder(p *spec.Params, s *spec.State) bool {
	for b := 0; b < p.Bookies; b++ {
		if !s.BEntries[b].IDsEqualData() {
			return false
		}
	}
	return true
}

// storedOnWriteSet returns how many bookies of entry id's write set (per
// meta_fragments) hold it, and the write set's size; ok is false when no
// fragment holds id.
func storedOnWriteSet(p *spec.Params, s *spec.State, id int8) (copies, size int, ok bool) {
	f, ok := spec.FragmentOfEntryId(id, s.MetaFragmentList())
	if !ok {
		return 0, 0, false
	}
	ws := p.WriteSet(id, f)
	return s.StoredOn(id, ws).Len(), ws.Len(), true
}

func ackedHaveAckQuorum(p *spec.Params, s *spec.State) bool {
	if s.MetaDeleted {
		return true // a deleted ledger's entries are meant to go
	}
	for i := 0; i < p.Clients; i++ {
		c := &s.Clients[i]
		if c.Status != spec.StatusOpen && c.Status != spec.StatusClosing && c.Status != spec.StatusClosed {
			continue
		}
		for id := int8(1); id <= c.LAC; id++ {
			if n, _, ok := storedOnWriteSet(p, s, id); !ok || n < p.AckQuorum {
				return false
			}
		}
	}
	return true
}

// entriesReachWQ: a closed ledger's entries are all at Qw. A ledger that
// never closed has no last entry; such stuck ledgers (e.g. a recovery
// whose messages were lost, with no client left to retry) are out of the
// property's scope, as they are of the Guaranteed Write Quorum design.
func entriesReachWQ(p *spec.Params, s *spec.State) bool {
	if s.MetaDeleted {
		return true // a deleted ledger's entries are meant to go
	}
	if s.MetaStatus != spec.StatusClosed {
		return true
	}
	for id := int8(1); id <= s.MetaLastEntry; id++ {
		if n, size, ok := storedOnWriteSet(p, s, id); !ok || n < size {
			return false
		}
	}
	return true
}

// entriesReachWQWhenQuiescent checks entriesReachWQ on closed ledgers
// where no further copy can appear: no add request in flight and no client
// that may still send one (OPEN writer, IN_RECOVERY client).
func entriesReachWQWhenQuiescent(p *spec.Params, s *spec.State) bool {
	if s.MetaDeleted {
		return true // a deleted ledger's entries are meant to go
	}
	if s.MetaStatus != spec.StatusClosed {
		return true
	}
	for i := 0; i < p.Clients; i++ {
		if st := s.Clients[i].Status; st == spec.StatusOpen || st == spec.StatusInRecovery {
			return true
		}
	}
	for _, m := range s.Msgs {
		if m.Count >= 1 && m.Key.Type() == spec.AddEntryRequest {
			return true
		}
	}
	return entriesReachWQ(p, s)
}

func tailFragmentsReachWQ(p *spec.Params, s *spec.State) bool {
	if s.MetaDeleted {
		return true // a deleted ledger's entries are meant to go
	}
	frags := s.MetaFragmentList()
	for i := 0; i+1 < len(frags); i++ {
		for id := frags[i].First; id < frags[i+1].First; id++ {
			ws := p.WriteSet(id, frags[i])
			if s.StoredOn(id, ws) != ws {
				return false
			}
		}
	}
	return true
}

// closedLedgerReachedWQ is the GWQ spec's invariant: entriesReachWQ on
// every state, not only where no further copy can appear.
var closedLedgerReachedWQ = entriesReachWQ

func noEntryAcknowledged(p *spec.Params, s *spec.State) bool {
	for i := 0; i < p.Clients; i++ {
		if s.Clients[i].LAC > 0 && s.Clients[i].Status == spec.StatusOpen {
			return false
		}
	}
	return true
}

// noAckWithWriteSetCrashed: the whole crash budget is spent on bookies
// the writer sent entry 1 to (so they were in its write set then, whatever
// ensemble change followed), none of them holds entry 1 (each went down
// before the write reached it), they are still down, and an open writer
// has acknowledged entry 1.
func noAckWithWriteSetCrashed(p *spec.Params, s *spec.State) bool {
	if p.Crashes == 0 || int(s.CrashesUsed) < p.Crashes || s.BDown.Len() != p.Crashes {
		return true
	}
	var sentTo spec.Bookies
	for _, m := range s.Msgs {
		if k := m.Key; k.Type() == spec.AddEntryRequest && !k.Recovery() && k.Entry().ID == 1 {
			sentTo |= 1 << uint(k.Bookie())
		}
	}
	if s.BDown&^sentTo != 0 {
		return true
	}
	for b := 0; b < p.Bookies; b++ {
		if s.BDown.Has(b) && s.BEntries[b].HasID(1) {
			return true
		}
	}
	for i := 0; i < p.Clients; i++ {
		if s.Clients[i].LAC >= 1 && s.Clients[i].Status == spec.StatusOpen {
			return false
		}
	}
	return true
}

// fragmentsInOrder: each fragment starts after the one before, in the
// metadata and in every client's copy (a recovery client's copy is what it
// will write at close, where BookKeeper's checkState fails).
func fragmentsInOrder(p *spec.Params, s *spec.State) bool {
	inOrder := func(fs []spec.Fragment) bool {
		for i := 1; i < len(fs); i++ {
			if fs[i].First <= fs[i-1].First {
				return false
			}
		}
		return true
	}
	if !inOrder(s.MetaFragmentList()) {
		return false
	}
	for i := 0; i < p.Clients; i++ {
		if !inOrder(s.Clients[i].FragmentList()) {
			return false
		}
	}
	return true
}

// creationSucceeds: a client withdrew while the ledger does not exist,
// which only ClientFailsToCreateLedger does.
func creationSucceeds(p *spec.Params, s *spec.State) bool {
	if s.MetaStatus != spec.StatusNil {
		return true
	}
	for i := 0; i < p.Clients; i++ {
		if s.Clients[i].Status == spec.ClientWithdrawn {
			return false
		}
	}
	return true
}
