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
	// BookKeeper: the model is BookKeeper as that release does it
	// (releases.go), not the TLA+ spec: every option below that the
	// release has is set, and one it contradicts is refused.
	BookKeeper  string `name:"bookkeeper" omitzero:"true" unit:"RELEASE" help:"the model is BookKeeper as release RELEASE does it (4.13.0 to 4.18.x, or master), not the TLA+ spec: the Java client's add path (its create window included), sequence recovery reads, the writer's close and recovery as LedgerHandle and LedgerRecoveryOp do them, DbLedgerStorage's checkpoints with --crashes, and the protocol bugs the release has (docs/model.md, \"BookKeeper as released\"); a setting the release contradicts is refused"`
	Bookies     int    `name:"bookies" unit:"N" help:"bookies b1..bN (at most 8)"`
	Clients     int    `name:"clients" unit:"N" help:"clients c1..cN (at most 4); the first to act creates the ledger, the others may recover it"`
	Ensemble    int    `name:"ensemble" short:"e" unit:"E" help:"ensemble size E; E > Qw stripes entries round-robin (not given: E = Qw, as in the TLA+ spec)"`
	WriteQuorum int    `name:"write-quorum" short:"w" unit:"Qw" help:"copies written per entry (the spec's WriteQuorum)"`
	AckQuorum   int    `name:"ack-quorum" short:"a" unit:"Qa" help:"acknowledgements that commit an entry (AckQuorum)"`
	Entries     int    `name:"entries" unit:"N" help:"entries the writer may create (SendLimit, at most 8)"`
	Inflight    int    `name:"inflight" unit:"N" help:"unacknowledged entries the writer may have (InflightLimit)"`
	Variant     string `name:"variant" unit:"V" help:"protocol variant (bkcheck variants lists them; several joined by + apply together, as a release line with two bugs does; not given: reference)"`

	// Faults, named after how BookKeeper bookies fail (docs/model.md gives
	// each one's mechanism and source). Budgets say how many times each may
	// happen in a run. All off is the reference model, whose state space
	// they leave untouched.
	Crashes        int    `name:"crashes" unit:"N" help:"bookie crashes allowed; a crashed bookie restarts with what its journal made durable (all of it with --journal synced)"`
	Journal        string `name:"journal" unit:"MODE" help:"what a crash loses: synced (journalSyncData=true, the default: acks follow fsync, nothing), no-sync (journalSyncData=false: acks precede fsync; a crash is a power loss and loses unflushed entries and fences), disabled (journalWriteData=false: acks precede any disk write; a crash loses unflushed entries)"`
	DiskLoss       int    `name:"disk-loss" unit:"N" help:"bookie disks that may be wiped; cookie validation (InvalidCookieException) keeps such a bookie down until an operator re-formats it"`
	Reformat       int    `name:"reformat" unit:"N" help:"operator re-formats allowed: a bookie (running, or kept down by a wiped disk) rejoins empty under the same address"`
	DataIntegrity  bool   `name:"data-integrity" help:"dataIntegrityChecking=true: the pre-boot check (DataIntegrityCheckImpl) fences and marks in limbo the ledger if it is not closed and its last ensemble holds the bookie; in limbo a bookie answers Unknown for entries and LACs it does not have. It runs after an unclean shutdown with --journal disabled, started at restart and not awaited (BookieRunsPreBootCheck), and on a re-format only with --reformat-cookie kept"`
	ReformatCookie string `name:"reformat-cookie" unit:"MODE" help:"what an operator re-format does with the bookie's cookie in the metadata store: deleted (the default, as bookieformat -deleteCookie, decommissionbookie and the HTTP decommission with delete_cookie do: the bookie boots as a new environment and no pre-boot check runs) or kept (with --data-integrity and dataIntegrityStampMissingCookiesEnabled=true: cookie validation runs the pre-boot check and waits for it before the bookie serves)"`
	LedgerStorage  string `name:"ledger-storage" unit:"CLASS" help:"the bookies' ledger storage, for the data-integrity check: db (DbLedgerStorage, the default and Pulsar's) or interleaved (InterleavedLedgerStorage or SortedLedgerStorage, BookKeeper's default class: no limbo, the pre-boot check throws before it fences anything)"`
	ReadOnly       int    `name:"read-only" unit:"N" help:"bookies that may turn read-only: they reject normal adds (EREADONLY, before any fence check) and accept recovery adds (high priority)"`
	DiskFull       int    `name:"disk-full" unit:"N" help:"bookies that may turn read-only with every disk below minUsableSizeForHighPriorityWrites: they reject recovery adds too"`
	Unavailable    int    `name:"unavailable" unit:"N" help:"the last N bookies are down for the whole run (never start)"`
	CorruptReads   int    `name:"corrupt-reads" unit:"N" help:"reads of a stored entry that may fail (a corrupt entry log); the bookie answers an error (EIO), or NoSuchEntry with --variant corrupt-read-nosuch"`
	DeleteLedger   bool   `name:"delete-ledger" help:"a client that closed the ledger may delete it, and bookies then garbage-collect it (Pulsar deletes ledgers it no longer needs)"`

	// ReliableNetwork: no message is lost (sends and replies are always
	// delivered); timeouts then come only from crashed bookies. A way to
	// isolate what bookie faults alone do.
	ReliableNetwork bool `name:"reliable-network" help:"no message is ever lost (timeouts come only from crashed bookies)"`

	// Exclude lists actions (by TLA+ name) that may not occur: a way to
	// ask for the shortest counterexample of one kind, or to shrink a model
	// to what a question needs. Results are then about the restricted model.
	Exclude []string `name:"exclude-actions" unit:"A,B" help:"actions that may not occur (bkcheck actions lists them)"`

	// RecoveryFromLAC: the recovery client counts its write-backs from the
	// LAC its fencing reads returned, as LedgerRecoveryOp does. The spec
	// counts from entry 1, so with several entries a recovery that starts
	// at a fenced LAC of 1 or more never sees its write-backs complete and
	// never closes the ledger.
	RecoveryFromLAC bool `name:"recovery-from-lac" help:"the recovery client counts write-backs from the fenced LAC, as LedgerRecoveryOp does (the spec counts from entry 1: with --entries >= 2 such recoveries never close)"`

	// PartialReplacement: an ensemble change replaces the failed bookies
	// one at a time and keeps the replacements it found, as
	// EnsembleUtils.replaceBookiesInEnsemble does ("if (replaced <= 0)
	// throw e; else break;"). The spec replaces every timed-out bookie at
	// once or makes no change.
	PartialReplacement bool `name:"partial-replacement" help:"an ensemble change replaces the timed-out bookies one at a time, in ensemble order, and keeps those it could replace, as EnsembleUtils.replaceBookiesInEnsemble does (the spec replaces all of them or none)"`

	// CloseRereads: the writer's close is LedgerHandle's: a
	// MetadataUpdateLoop that, on a version conflict, reads the metadata
	// again and writes it CLOSED at the writer's LAC unless it is already
	// closed (LedgerHandle.doAsyncCloseInternal). The spec's close fails as
	// soon as the metadata is no longer OPEN at the writer's version, so it
	// never closes over a recovery in progress, which BookKeeper's writer
	// does (bkcheck confirm finds it on 4.18.2; docs/conformance.md).
	CloseRereads bool `name:"close-rereads" omitzero:"true" help:"the close is LedgerHandle's (a MetadataUpdateLoop): the writer's reads the metadata again on a version conflict and writes it CLOSED at its LAC over OPEN or IN_RECOVERY, succeeds without writing on a ledger closed at its LAC and fails on one closed elsewhere; an unrecoverable error of the Java writer (a fenced add) closes the ledger so; a recovery's close succeeds on a ledger closed meanwhile (the spec's close fails once the metadata changed, and its writer withdraws when fenced)"`

	// AddPath: whose add path the writer follows. The spec's writer keeps
	// one confirmed set per entry and changes its ensemble in one step;
	// the Java client's (javaclient.go) is PendingAddOp and LedgerHandle
	// as they are, which the open questions about ensemble changes need.
	AddPath string `name:"add-path" omitzero:"true" unit:"MODE" help:"the writer's add path: spec (the TLA+ spec's, the default: one confirmed set per entry, an ensemble change as one step) or java (the Java client's: each PendingAddOp with its own ack set and ensemble, the pending queue completed in order by sendAddSuccessCallbacks and never while changingEnsemble is set, a timeout delivered to its op, delayedWriteFailedBookies, an ensemble change as a metadata update and then a completion that re-sends op by op; docs/model.md)"`

	// CreateWindow: the application thread creates an add's op, taking
	// the handle's ensemble, before the op joins the pending queue
	// (LedgerHandle.asyncAddEntry: PendingAddOp.create(..., getCurrentEnsemble(), ...),
	// then doAsyncAddEntry's pendingAddOps.add), as every release does;
	// without it the op takes the ensemble as it joins the queue.
	CreateWindow bool `name:"create-window" omitzero:"true" help:"with --add-path java: the application thread creates an add's PendingAddOp, taking the handle's current ensemble, before the op joins pendingAddOps, as LedgerHandle.asyncAddEntry does (ClientCreatesAddOp): an ensemble change completing in between re-sends the queued ops only, and the op keeps the ensemble it took (on with --bookkeeper; not given: the op takes the ensemble as it joins the queue)"`

	// Checkpoints: what survives a crash is DbLedgerStorage's: the ledger
	// index (master key, fenced flag) as of its last effective checkpoint
	// (SingleDirectoryDbLedgerStorage.checkpoint) and the journal after
	// the log mark; a fence record carries no master key, so its replay
	// needs the key from a key record after the mark or from the index
	// (BookieImpl's journal replay). Without it a journalled fence is kept.
	Checkpoints bool `name:"checkpoints" omitzero:"true" help:"with --crashes: bookies checkpoint as DbLedgerStorage does (BookieCheckpoints: the ledger index, master key and fenced flag, becomes durable only at a checkpoint, and not at all when the write cache is empty, while the journal's mark moves past the fence record; BookieImpl's replay skips a fence record of a ledger it has no key for); what survives a crash is the index at its last effective checkpoint and the journal after the mark (not given: a journalled fence survives)"`

	// RegistrationExpiry: a bookie that stops (kill -9, a lost disk)
	// stays registered in ZooKeeper until its session expires, and the
	// clients' BookieWatcherImpl keeps it writable until the registration
	// client's watch tells them (processWritableBookiesChanged): placement
	// can choose it for a new ledger or as a replacement meanwhile
	// (BookieRegistrationExpires ends that). Without it a stopped bookie
	// leaves the writable set at once.
	RegistrationExpiry bool `name:"registration-expiry" omitzero:"true" help:"with --crashes or --disk-loss: a stopped bookie stays registered, and placement can choose it for a new ledger or as a replacement, until its ZooKeeper session expires (BookieRegistrationExpires), as BookieWatcherImpl sees the registration (on with --bookkeeper; not given: a stopped bookie leaves the writable set at once)"`

	// RecoveryRead: how the recovery client reads an entry. The spec
	// reads every member of the write set at once (PendingReadOp's
	// parallel read), which no release since 4.10 does for recovery
	// (8e103282 removed LedgerRecoveryOp's parallelRead call); BookKeeper
	// reads with the sequence read (PendingReadOp.SequenceReadRequest):
	// the first member of the write set, then the next after an error or
	// a speculative timeout.
	RecoveryRead string `name:"recovery-read" omitzero:"true" unit:"MODE" help:"how recovery reads an entry: parallel (the TLA+ spec's, the default here; no BookKeeper release since 4.10 reads so in recovery) or sequence (BookKeeper's, on with --bookkeeper: PendingReadOp.SequenceReadRequest, the first member of the write set, then the next after an error or a speculative timeout; a decision needs no more than the replicas asked)"`

	// MaxEnsembleChanges bounds the Java writer's ensemble changes as
	// maxNumEnsembleChanges does (ensembleChangeLoop fails the handle
	// beyond it). BookKeeper's default is unlimited; a re-send can be lost
	// again and again, so the model needs a bound, and a search is
	// exhaustive for clients configured with it.
	// AutoRecovery: BookKeeper's AutoRecovery runs (an Auditor and a
	// ReplicationWorker; autorecovery.go). Its timers are "may fire"
	// actions; the Auditor's periodic check of every ledger can be
	// switched off as auditorPeriodicCheckInterval=0 does.
	AutoRecovery         bool   `name:"autorecovery" omitzero:"true" help:"AutoRecovery runs (autoRecoveryDaemonEnabled=true, or an AutoRecoveryMain process; BookKeeper's default is off): an Auditor marks the ledger under-replicated when a bookie it names is lost (lostBookieRecoveryDelay, any time after) or its periodic check finds a fragment a bookie lacks, and a ReplicationWorker copies closed fragments to new bookies with recovery adds, swaps them into the metadata, marks the ledger replicated, and recovers an open ledger whose last segment lost a bookie after openLedgerRereplicationGracePeriod; the last client is the worker's admin client (needs --clients 2 or more); with E > Qw the worker copies, to each new bookie, every entry from the first to the last its bad bookies' indexes store, as LedgerFragmentReplicator does"`
	AuditorVerification  int    `name:"auditor-verification-percentage" omitzero:"true" unit:"P" help:"with --autorecovery: auditorLedgerVerificationPercentage, how much of each fragment LedgerChecker reads from each bookie: 0 (BookKeeper's default: its first and last entry only) or 100 (every entry it should store); the percentages between sample entries at random and are not modelled"`
	AuditorPeriodicCheck string `name:"auditor-periodic-check" omitzero:"true" unit:"MODE" help:"with --autorecovery: on (auditorPeriodicCheckInterval=604800, BookKeeper's default: AuditorCheckAllLedgersTask runs LedgerChecker on the ledger, reading each bookie's first and last entry of each fragment) or off (auditorPeriodicCheckInterval=0: only lost bookies mark ledgers)"`

	// Decommission: an operator decommissions a bookie that is down
	// (decommission.go). It needs AutoRecovery, which does the copying.
	Decommission bool `name:"decommission" omitzero:"true" help:"with --autorecovery: an operator decommissions a bookie once it is down (bookkeeper shell decommissionbookie, BookKeeperAdmin.decommissionBookie): the bookie stays down from then on, the Auditor is asked to audit, and the command returns once no segment of the ledger's metadata that stores entries names the bookie (decom_done); it needs --crashes or --disk-loss"`

	MaxEnsembleChanges int `name:"max-ensemble-changes" omitzero:"true" unit:"N" help:"with --add-path java: ensemble changes the writer may start before it gives up the ledger, as maxNumEnsembleChanges=N makes LedgerHandle.ensembleChangeLoop do (BookKeeper's default is unlimited; not given: 3)"`
}

// ParamsSchema is the schema of Params: flags, file keys and JSON keys.
var ParamsSchema = schema.MustOf(Params{})

// Faulty reports whether any fault is enabled.
func (p Params) Faulty() bool {
	return p.Crashes > 0 || p.DiskLoss > 0 || p.Reformat > 0 || p.ReadOnly > 0 || p.DiskFull > 0 || p.Unavailable > 0 || p.CorruptReads > 0
}

// Journal modes (Params.Journal).
const (
	JournalSynced   = ""         // journalSyncData=true: acks follow fsync
	JournalNoSync   = "no-sync"  // journalSyncData=false: acks precede fsync; fences too are in the page cache
	JournalDisabled = "disabled" // journalWriteData=false: entries acked before any disk write; fences journalled
)

// Re-format cookie modes (Params.ReformatCookie) and ledger storages
// (Params.LedgerStorage); the zero values are the defaults.
const (
	CookieDeleted            = ""            // the operator deleted the bookie's cookie: a new environment
	CookieKept               = "kept"        // the cookie stays; stamping missing cookies runs the check
	LedgerStorageDB          = ""            // DbLedgerStorage: limbo exists
	LedgerStorageInterleaved = "interleaved" // Interleaved/SortedLedgerStorage: setLimboState throws
)

// Add paths (Params.AddPath); the zero value is the default.
const (
	AddPathSpec = ""     // the TLA+ spec's writer
	AddPathJava = "java" // PendingAddOp / LedgerHandle (javaclient.go)
)

// Recovery reads (Params.RecoveryRead); the zero value is the default.
const (
	RecoveryReadParallel = ""         // the spec's: every replica at once
	RecoveryReadSequence = "sequence" // PendingReadOp.SequenceReadRequest
)

// SequenceReads reports whether recovery reads an entry replica by replica.
func (p Params) SequenceReads() bool { return p.RecoveryRead == RecoveryReadSequence }

// defaultMaxEnsembleChanges is --max-ensemble-changes when not given,
// maxEnsembleChanges the most it takes.
const (
	defaultMaxEnsembleChanges = 3
	maxEnsembleChanges        = 20
)

// CreatesAddOps reports whether the application's create is a step of its
// own (ClientCreatesAddOp): --create-window, without the variant that
// closes the window.
func (p Params) CreatesAddOps() bool {
	return p.JavaAddPath() && p.CreateWindow && !p.variant().EnsembleAtQueue
}

// JavaAddPath reports whether the writer follows the Java client's add path.
func (p Params) JavaAddPath() bool { return p.AddPath == AddPathJava }

// DeferredCheck reports whether a restart after an unclean shutdown
// starts the pre-boot check without waiting for it (EmbeddedServer, with
// journalWriteData=false): the bookie serves until BookieRunsPreBootCheck.
func (p Params) DeferredCheck() bool {
	return p.uncleanCheck() && !p.variant().AwaitPreBootCheck
}

// AwaitedCheck reports whether such a restart runs the check before the
// bookie serves (variant await-preboot-check).
func (p Params) AwaitedCheck() bool {
	return p.uncleanCheck() && p.variant().AwaitPreBootCheck
}

// uncleanCheck: a restart after an unclean shutdown runs the check.
func (p Params) uncleanCheck() bool {
	return p.DataIntegrity && p.Crashes > 0 && p.Journal == JournalDisabled
}

// LossyJournal reports whether a bookie acknowledges what a crash can
// still lose: its state then records what is not yet durable.
func (p Params) LossyJournal() bool {
	return p.Journal == JournalNoSync || p.Journal == JournalDisabled
}

// unavailableSet is the set of bookies down for the whole run.
func (p Params) unavailableSet() Bookies {
	var s Bookies
	for b := p.Bookies - p.Unavailable; b < p.Bookies; b++ {
		s |= 1 << uint(b)
	}
	return s
}

// DefaultParams is a small model that finishes in well under a second yet
// exercises every action: two bookies, two clients, Qw 2, Qa 1, one entry.
// It is what bkcheck checks when given no parameter.
func DefaultParams() Params {
	return Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1}
}

// EnsureDefaults fills in what a parameter set leaves unsaid: E = Qw, the
// reference variant. Settings that have no effect are cleared, so that
// equal models have equal Params: "synced", "deleted" and "db" are zero
// values; the journal matters only with crashes; the data-integrity check
// only where BookKeeper runs it (a restart after an unclean shutdown with
// the journal disabled, a re-format that kept the cookie) and only with
// DbLedgerStorage (with Interleaved/SortedLedgerStorage setLimboState
// throws before the check fences anything, the same model as no check;
// the re-format that would then never boot is refused by Validate).
func (p *Params) EnsureDefaults() {
	if p.BookKeeper != "" {
		p.applyRelease()
	}
	p.DefaultNames()
	if p.Ensemble == 0 {
		p.Ensemble = p.WriteQuorum
	}
	if p.Variant == "" {
		p.Variant = Variants[0].Name
	}
	// A setting without effect with the others is cleared, but only a
	// value it takes: one outside its domain stays, for Validate to
	// refuse whatever the other settings.
	if p.Crashes == 0 {
		if p.Journal == JournalNoSync || p.Journal == JournalDisabled {
			p.Journal = JournalSynced
		}
		p.Checkpoints = false
	}
	if p.Crashes == 0 && p.DiskLoss == 0 {
		p.RegistrationExpiry = false
	}
	if !p.AutoRecovery {
		if p.AuditorPeriodicCheck == "off" {
			p.AuditorPeriodicCheck = ""
		}
		if p.AuditorVerification == 100 {
			p.AuditorVerification = 0
		}
	}
	switch {
	case !p.JavaAddPath():
		if p.MaxEnsembleChanges >= 1 && p.MaxEnsembleChanges <= maxEnsembleChanges {
			p.MaxEnsembleChanges = 0
		}
	case p.MaxEnsembleChanges == 0:
		p.MaxEnsembleChanges = defaultMaxEnsembleChanges
	}
	if p.Reformat == 0 && p.ReformatCookie == CookieKept {
		p.ReformatCookie = CookieDeleted
	}
	kept := p.Reformat > 0 && p.ReformatCookie == CookieKept
	if !kept && !(p.Crashes > 0 && p.Journal == JournalDisabled) {
		p.DataIntegrity = false
	}
	if !kept && p.LedgerStorage == LedgerStorageInterleaved {
		p.DataIntegrity = false
	}
	if !p.DataIntegrity && p.LedgerStorage == LedgerStorageInterleaved {
		p.LedgerStorage = LedgerStorageDB
	}
}

// DefaultNames turns the names of the defaults whose value is the zero
// value ("synced", "deleted", "spec", "on", "parallel", "db") into that
// value, whatever the other settings. It is the first step of
// EnsureDefaults; what EnsureDefaults changes beyond it is a setting that
// has no effect with the others (or a zero it fills in).
func (p *Params) DefaultNames() {
	if p.Journal == "synced" {
		p.Journal = JournalSynced
	}
	if p.ReformatCookie == "deleted" {
		p.ReformatCookie = CookieDeleted
	}
	if p.AddPath == "spec" && p.BookKeeper == "" {
		p.AddPath = AddPathSpec // with a release, Validate refuses it
	}
	if p.AuditorPeriodicCheck == "on" {
		p.AuditorPeriodicCheck = ""
	}
	if p.RecoveryRead == "parallel" && p.BookKeeper == "" {
		p.RecoveryRead = RecoveryReadParallel // with a release, Validate refuses it
	}
	if p.LedgerStorage == "db" {
		p.LedgerStorage = LedgerStorageDB
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
	switch {
	case p.Ensemble > p.Bookies && p.Bookies >= 1 && p.Ensemble == p.WriteQuorum:
		// E = Qw, as when the ensemble is not given: name what was given.
		probs.Add("write-quorum", "%d exceeds the number of bookies %d (an ensemble holds Qw bookies at least)", p.WriteQuorum, p.Bookies)
	case p.Ensemble > p.Bookies && p.Bookies >= 1:
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
	}{{"crashes", p.Crashes}, {"disk-loss", p.DiskLoss}, {"reformat", p.Reformat}, {"read-only", p.ReadOnly}, {"disk-full", p.DiskFull}, {"corrupt-reads", p.CorruptReads}} {
		if b.v < 0 || b.v > maxFaults {
			probs.Add(b.name, "must be between 0 and %d (got %d)", maxFaults, b.v)
		}
	}
	// A bookie turns read-only (or fills its disks) once and stays so: a
	// budget beyond the bookies could never be spent.
	for _, b := range []struct {
		name string
		v    int
	}{{"read-only", p.ReadOnly}, {"disk-full", p.DiskFull}} {
		if b.v > p.Bookies && p.Bookies >= 1 && b.v <= maxFaults {
			probs.Add(b.name, "%d exceeds the number of bookies %d (each bookie can turn read-only once)", b.v, p.Bookies)
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
	switch p.Journal {
	case JournalSynced, JournalNoSync, JournalDisabled:
	default:
		probs.Add("journal", "must be synced, no-sync or disabled (got %q)", p.Journal)
	}
	switch p.ReformatCookie {
	case CookieDeleted:
	case CookieKept:
		if !p.DataIntegrity {
			probs.Add("reformat-cookie", "kept needs --data-integrity: with the cookie kept and empty directories, only the data-integrity cookie validation with dataIntegrityStampMissingCookiesEnabled=true lets the bookie boot (otherwise InvalidCookieException keeps it down: that is --disk-loss)")
		}
		if p.LedgerStorage == LedgerStorageInterleaved {
			probs.Add("reformat-cookie", "kept with --ledger-storage interleaved never boots: the pre-boot check throws (InterleavedLedgerStorage.setLimboState) and cookie validation refuses the bookie")
		}
	default:
		probs.Add("reformat-cookie", "must be deleted or kept (got %q)", p.ReformatCookie)
	}
	switch p.LedgerStorage {
	case LedgerStorageDB, LedgerStorageInterleaved:
	default:
		probs.Add("ledger-storage", "must be db or interleaved (got %q)", p.LedgerStorage)
	}
	if p.AddPath != AddPathJava && p.MaxEnsembleChanges != 0 {
		probs.Add("max-ensemble-changes", "must be between 1 and %d (got %d)", maxEnsembleChanges, p.MaxEnsembleChanges)
	}
	v, verr := VariantByName(p.Variant)
	switch p.AddPath {
	case AddPathSpec:
		if verr == nil && v.JavaOnly() {
			probs.Add("variant", "%s changes the Java client's add path: it needs --add-path java", v.Name)
		}
	case "spec": // with --bookkeeper: validateRelease names it
	case AddPathJava:
		if p.MaxEnsembleChanges < 1 || p.MaxEnsembleChanges > maxEnsembleChanges {
			probs.Add("max-ensemble-changes", "must be between 1 and %d (got %d)", maxEnsembleChanges, p.MaxEnsembleChanges)
		}
		if verr == nil && v.GuaranteedWriteQuorum {
			probs.Add("add-path", "java cannot be combined with --variant %s, which changes the spec's writer (the Java client's add path is BookKeeper's own)", v.Name)
		}
	default:
		probs.Add("add-path", "must be spec or java (got %q)", p.AddPath)
	}
	if verr == nil && v.EnsembleAtQueue && !p.CreateWindow {
		probs.Add("variant", "%s closes the window --create-window opens: it needs --create-window (on with --bookkeeper)", v.Name)
	}
	if p.CreateWindow && !p.JavaAddPath() && p.AddPath != "spec" {
		probs.Add("create-window", "needs --add-path java (the window is the Java client's, between PendingAddOp.create and pendingAddOps.add)")
	}
	if verr == nil && v.AutoRecoveryOnly() && !p.AutoRecovery {
		probs.Add("variant", "%s changes the ReplicationWorker: it needs --autorecovery", v.Name)
	}
	if verr == nil && v.CheckpointOnly() && !p.Checkpoints {
		probs.Add("variant", "%s changes what a checkpoint keeps: it needs --checkpoints (and --crashes)", v.Name)
	}
	if p.BookKeeper != "" {
		p.validateRelease(&probs)
	}
	if p.Checkpoints && p.Journal != JournalSynced {
		probs.Add("checkpoints", "needs --journal synced (the journal then holds every entry and fence record the mark has not passed)")
	}
	switch p.RecoveryRead {
	case RecoveryReadParallel:
	case "parallel": // with --bookkeeper: validateRelease names it
	case RecoveryReadSequence:
		if verr == nil && v.GuaranteedWriteQuorum {
			probs.Add("recovery-read", "sequence cannot be combined with --variant %s, whose recovery is the tweaked spec's", v.Name)
		}
	default:
		probs.Add("recovery-read", "must be parallel or sequence (got %q)", p.RecoveryRead)
	}
	if p.AutoRecovery {
		if p.Clients < 2 {
			probs.Add("autorecovery", "needs --clients 2 or more: the last client is the ReplicationWorker's admin client, which recovers the ledger")
		}
	}
	if p.Decommission && !p.AutoRecovery {
		probs.Add("decommission", "needs --autorecovery: BookKeeperAdmin.decommissionBookie asks the Auditor to audit and waits for the ReplicationWorker to move the ledger off the bookie")
	}
	if p.Decommission && p.Crashes+p.DiskLoss == 0 {
		probs.Add("decommission", "needs --crashes or --disk-loss: decommissionBookie refuses a bookie that is still registered, so one must be able to go down")
	}
	if p.AuditorVerification != 0 && p.AuditorVerification != 100 {
		probs.Add("auditor-verification-percentage", "must be 0 or 100 (got %d): the percentages between sample entries at random, which the model does not do", p.AuditorVerification)
	}
	switch p.AuditorPeriodicCheck {
	case "", "off":
	default:
		probs.Add("auditor-periodic-check", "must be on or off (got %q)", p.AuditorPeriodicCheck)
	}
	return probs.Err()
}

// PeriodicCheck: the Auditor runs AuditorCheckAllLedgersTask
// (--autorecovery with auditorPeriodicCheckInterval > 0).
func (p Params) PeriodicCheck() bool { return p.AutoRecovery && p.AuditorPeriodicCheck != "off" }

// String renders p as settings: the core parameters always, the
// extensions when they are on.
func (p Params) String() string {
	return ParamsSchema.Describe(&p, "bookies", "clients", "ensemble", "write-quorum", "ack-quorum", "entries", "inflight", "variant")
}
