package spec

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Variant is a named preset of protocol options on the one model. Variants
// are not copies of the model: each differs from the reference in the
// options it sets, so what a variant changes can be read off its fields.
// Most reproduce a protocol bug BookKeeper had (Issue names it); the
// reference is the fixed protocol.
type Variant struct {
	Name        string
	Description string
	Source      string
	Issue       string // the apache/bookkeeper issue or PR the variant reproduces, if any

	// RecoveryReadsFence: recovery reads set the fenced flag on the bookies
	// they reach (the fence field of GetRecoveryReadRequests).
	RecoveryReadsFence bool
	// GuaranteedWriteQuorum applies the six changes of the Guaranteed
	// Write Quorum proposal: the client tracks LAFR (last add fully
	// replicated) and keeps an add pending until it and its prefix reached
	// Qw; a new fragment starts at LAFR+1; a failed bookie that holds an
	// acknowledged entry of the new fragment is pinned (cannot be
	// replaced); the writer closes only with no pending add; recovery
	// closes only with no pending add (as already); fencing returns LAFR.
	GuaranteedWriteQuorum bool
	// NoLACFloor: the recovery client takes the fenced LAC as is, without
	// raising it to the first entry of the last fragment minus one
	// (LedgerRecoveryOp before PR #2654, apache/bookkeeper#2615).
	NoLACFloor bool
	// CorruptReadAsNoSuchEntry: a bookie whose entry log cannot be read
	// (--corrupt-reads) answers NoSuchEntry instead of an error
	// (EntryLogger before PR #2909, apache/bookkeeper#2908).
	CorruptReadAsNoSuchEntry bool
	// SplitAddCheck: a bookie checks that the ledger is not fenced and
	// stores the entry in two steps, and a fencing read can run between
	// them (two LedgerDescriptor handles for one ledger, before PR #4701).
	SplitAddCheck bool
	// DeleteForgetsFence: a bookie that garbage-collects a deleted ledger
	// forgets it was fenced (HandleFactoryImpl before PR #4462).
	DeleteForgetsFence bool
	// IntegrityFencesClosed: the data-integrity check fences every ledger
	// of the bookie's, closed ones too, as the BP-46 text says (the code
	// fences open ones only); a candidate fix for apache/bookkeeper#4812.
	IntegrityFencesClosed bool
	// DurableFenceReply: a bookie answers every fencing read only once
	// its fence record is in the journal, as ReadEntryProcessor already
	// does when the read found data (handleReadResultForFenceRead); today
	// a NoSuchEntry, no-ledger, Unknown or I/O-error answer does not wait,
	// and a crash right after it loses the fence. A candidate fix.
	DurableFenceReply bool
	// AddChecksMetadata: a bookie asked for a normal add to a ledger it
	// holds nothing of (no entry, no fence: never seen, or re-formatted)
	// reads the ledger's metadata first and answers the add as fenced if
	// the ledger is CLOSED or IN_RECOVERY. A candidate fix for #4812.
	AddChecksMetadata bool
	// CollectKeepsFence: a bookie that garbage-collects a deleted ledger it
	// has fenced keeps the fence durably (a tombstone), whether or not the
	// ledger's handle is loaded then. A candidate fix for PR #4462's
	// memory-only marker.
	CollectKeepsFence bool
	// AwaitPreBootCheck: a restart after an unclean shutdown runs the
	// data-integrity check before the bookie serves (EmbeddedServer waiting
	// for runPreBootCheck), instead of starting it and serving meanwhile.
	// A candidate fix.
	AwaitPreBootCheck bool
	// CheckpointFlushesIndex: a checkpoint with an empty write cache
	// flushes the ledger index before the journal's mark moves
	// (apache/bookkeeper PR #4843, open). Needs --checkpoints.
	CheckpointFlushesIndex bool
	// FenceJournalsKey: the fence record can be replayed without an index
	// entry for the ledger (its master key journalled with it). A
	// candidate fix; needs --checkpoints.
	FenceJournalsKey bool
	// CallbacksAfterUnset: the completion of an ensemble change re-sends
	// every pending op first and calls sendAddSuccessCallbacks once after
	// the loop, instead of from inside it for an op whose write set lacks
	// a replaced index (apache/bookkeeper PR #3041, open). Java add path.
	CallbacksAfterUnset bool
	// SkipChangeWithoutFailed: a bookie failure starts no ensemble change
	// when no (index, bookie) of the failures (the delayed ones and these)
	// is in the current ensemble at that index; the failures are dropped
	// (apache/bookkeeper PR #4278, open, for #4261). Java add path.
	SkipChangeWithoutFailed bool
	// SkipInconsistentRange: the ReplicationWorker's
	// tryReadingFaultyEntries returns true for a fragment whose first
	// entry is past its last known one, instead of asking the cache for an
	// inconsistent range (apache/bookkeeper PR #4551, open). Needs
	// --autorecovery.
	SkipInconsistentRange bool
	// EnsembleAtQueue: doAsyncAddEntry takes the op's ensemble inside its
	// synchronized (this) block, just before pendingAddOps.add, which
	// closes --create-window's window (setLedgerMetadata holds the same
	// lock). A candidate fix, ours; needs --create-window.
	EnsembleAtQueue bool

	// Actions are the actions only this variant has: a run of the variant
	// must see each fire (coverage), or the variant proves nothing.
	Actions []ActionKind
}

// The variants' names (--variant): code outside this package names a
// variant through these, never by its string.
const (
	VariantReference             = "reference"
	VariantNoRecoveryFence       = "no-recovery-fence"
	VariantGWQ                   = "gwq"
	VariantNoLacFloor            = "no-lac-floor"
	VariantCorruptReadNosuch     = "corrupt-read-nosuch"
	VariantSplitAddCheck         = "split-add-check"
	VariantDeleteForgetsFence    = "delete-forgets-fence"
	VariantIntegrityFencesClosed = "integrity-fences-closed"
	VariantDurableFenceReply     = "durable-fence-reply"
	VariantAddChecksMetadata     = "add-checks-metadata"
	VariantCallbacksAfterUnset   = "callbacks-after-unset"
	VariantAwaitPreBootCheck     = "await-preboot-check"
	VariantBothFenceFixes        = "await-preboot-check-durable-fence"
	VariantCollectKeepsFence     = "collect-keeps-fence"
	VariantSkipChangeNoFailed    = "skip-change-without-failed"
	VariantUnsetWhileChanging    = "unset-while-changing"
	VariantCheckpointFlushes     = "checkpoint-flushes-index"
	VariantDurableReplayable     = "durable-fence-replayable"
	VariantDurableReplayFlushed  = "durable-fence-replayable-flushed"
	VariantSkipInconsistentRange = "skip-inconsistent-range"
	VariantEnsembleAtQueue       = "ensemble-at-queue"
)

// Variants lists the protocol variants bkcheck knows; the first is the default.
var Variants = []Variant{
	{
		Name:               VariantReference,
		Description:        "the protocol as specified in BookKeeperProtocol.tla (release 4.14 onwards): recovery reads fence",
		Source:             "github.com/Vanlightly/bookkeeper-tlaplus BookKeeperProtocol.tla @ fe199dc",
		RecoveryReadsFence: true,
	},
	{
		Name:               VariantNoRecoveryFence,
		Description:        "recovery reads do not fence, as in releases up to 4.13: an entry half-written before fencing can be acknowledged while recovery decides it does not exist (ledger truncation)",
		Source:             "the spec's toggle: fence |-> FALSE in GetRecoveryReadRequests; PendingReadOp before PR #2616 (4.14.0)",
		Issue:              "apache/bookkeeper#2614",
		RecoveryReadsFence: false,
	},
	{
		Name:                  VariantGWQ,
		Description:           "Guaranteed Write Quorum: entries of closed ledgers and of all but the last fragment reach Qw (LAFR tracking, fragments start at LAFR+1, pinned bookies, close only without pending adds, fencing returns LAFR, any timed-out subset replaced)",
		Source:                "tweaks/ProtocolWithGuaranteedWriteQuorum.tla (Vanlightly/bookkeeper-tlaplus) and the blog post 'Tweaking the BookKeeper protocol - Guaranteeing write quorum', applied to the 2024 reference spec",
		RecoveryReadsFence:    true,
		GuaranteedWriteQuorum: true,
	},
	{
		Name:               VariantNoLacFloor,
		Description:        "recovery starts from the fenced LAC even when it is below the last fragment's first entry, as up to 4.13: with several fragments it writes back entries of earlier fragments, and a recovery ensemble change then proposes a fragment that starts before the last one (invalid metadata; BookKeeper's close fails for ever)",
		Source:             "LedgerRecoveryOp before PR #2654 (4.14.0)",
		Issue:              "apache/bookkeeper#2615",
		RecoveryReadsFence: true,
		NoLACFloor:         true,
	},
	{
		Name:                     VariantCorruptReadNosuch,
		Description:              "a bookie whose entry log cannot be read (--corrupt-reads) answers NoSuchEntry for an entry its index has, as before 4.14.6/4.15.1/4.16.0: one false negative can end recovery reads and truncate the ledger",
		Source:                   "EntryLogger.internalReadEntry before PR #2909",
		Issue:                    "apache/bookkeeper#2908",
		RecoveryReadsFence:       true,
		CorruptReadAsNoSuchEntry: true,
	},
	{
		Name:               VariantSplitAddCheck,
		Description:        "an add that is a bookie's first request for the ledger since it started (no handle yet) checks 'not fenced' and stores in two steps; a fencing read between them returns the LAC before the entry and the add is still acknowledged (two handles for one ledger, before 4.17.4/4.18.0)",
		Source:             "HandleFactoryImpl.getHandle before PR #4701",
		Issue:              "apache/bookkeeper PR #4701",
		RecoveryReadsFence: true,
		SplitAddCheck:      true,
		Actions:            []ActionKind{BookieChecksAdd},
	},
	{
		Name:               VariantDeleteForgetsFence,
		Description:        "a bookie that garbage-collects a deleted ledger forgets its fence (--delete-ledger): a stale writer's add to the deleted ledger is accepted, as before 4.16.7/4.17.2/4.18.0",
		Source:             "HandleFactoryImpl before PR #4462 (recentlyFencedAndDeletedLedgers)",
		Issue:              "apache/bookkeeper PR #4462",
		RecoveryReadsFence: true,
		DeleteForgetsFence: true,
	},
	{
		Name:                  VariantIntegrityFencesClosed,
		Description:           "the data-integrity check fences closed ledgers too, as the BP-46 text says (the code fences only open ledgers in their last ensemble): it helps only where the check runs, a re-format that kept the cookie (--reformat-cookie kept), so not #4812, whose decommission deletes the cookie",
		Source:                "BP-46 'Running without journal' (site3/.../BP-46-run-without-journal.md); DataIntegrityCheckImpl.processPreBoot",
		Issue:                 "apache/bookkeeper#4812",
		RecoveryReadsFence:    true,
		IntegrityFencesClosed: true,
	},
	{
		Name:               VariantDurableFenceReply,
		Description:        "a bookie answers a fencing read only once its fence record is in the journal, whatever the read found (today it waits only when it read data): a candidate fix for fences lost by a crash right after a NoSuchEntry answer (--crashes)",
		Source:             "proto/ReadEntryProcessor.processPacket and ReadEntryProcessorV3.getReadResponse, with the wait of handleReadResultForFenceRead on every path",
		RecoveryReadsFence: true,
		DurableFenceReply:  true,
	},
	{
		Name:               VariantAddChecksMetadata,
		Description:        "a bookie asked for a normal add to a ledger it holds nothing of (no entry, no fence: never seen, or re-formatted) reads the ledger's metadata and answers the add as fenced if the ledger is CLOSED or IN_RECOVERY: a candidate fix for #4812 (a fresh bookie at a replaced address accepting a stale writer's add)",
		Source:             "proposed for apache/bookkeeper#4812: WriteEntryProcessor / BookieImpl.addEntry consulting the ledger manager before HandleFactoryImpl creates a handle for an unknown ledger",
		Issue:              "apache/bookkeeper#4812",
		RecoveryReadsFence: true,
		AddChecksMetadata:  true,
	},
	{
		Name:               VariantCollectKeepsFence,
		Description:        "with --delete-ledger: a bookie that garbage-collects a deleted ledger it has fenced keeps the fence durably, whether or not the ledger's handle is loaded then: a candidate fix for PR #4462's marker, which lives in memory and only for a loaded, fenced handle",
		Source:             "proposed: HandleFactoryImpl.ledgerDeleted persisting a tombstone for a fenced ledger (from the fence bit the ledger storage keeps on disk) instead of recentlyFencedAndDeletedLedgers",
		RecoveryReadsFence: true,
		CollectKeepsFence:  true,
	},
	{
		Name:               VariantAwaitPreBootCheck,
		Description:        "a bookie restarting after an unclean shutdown (--crashes, --journal disabled, --data-integrity) runs the data-integrity check before it serves, instead of starting it and serving meanwhile: a candidate fix",
		Source:             "server/EmbeddedServer, waiting for DataIntegrityCheck.runPreBootCheck before the bookie starts (today the future is not awaited)",
		RecoveryReadsFence: true,
		AwaitPreBootCheck:  true,
	},
	{
		Name:               VariantBothFenceFixes,
		Description:        "await-preboot-check and durable-fence-reply together: a restart after an unclean shutdown runs the data-integrity check before the bookie serves, and every fencing read is answered only once its fence record is in the journal. Awaiting the check alone leaves a crash that loses a fence answered with NoSuchEntry, which the check cannot restore once recovery has closed the ledger (it fences open ledgers only)",
		Source:             "server/EmbeddedServer waiting for DataIntegrityCheck.runPreBootCheck, and proto/ReadEntryProcessor.processPacket with the wait of handleReadResultForFenceRead on every path",
		RecoveryReadsFence: true,
		AwaitPreBootCheck:  true,
		DurableFenceReply:  true,
	},
	{
		Name:                VariantCallbacksAfterUnset,
		Description:         "with --add-path java: the completion of an ensemble change unsets and re-sends every pending op first and calls sendAddSuccessCallbacks once, after the loop, instead of from inside it for an op whose write set lacks a replaced index (the candidate fix for #3005: an op later in the queue is then unset before it can be acknowledged on a replaced bookie's ack)",
		Source:              "PR #3041's diff (refs/pull/3041/merge 333f9536 against its base 6d003367): PendingAddOp.unsetSuccessAndSendWriteRequest returns without a callback when the write set lacks the index; LedgerHandle.unsetSuccessAndSendWriteRequest ends with one sendAddSuccessCallbacks()",
		Issue:               "apache/bookkeeper PR #3041",
		RecoveryReadsFence:  true,
		CallbacksAfterUnset: true,
	},
	{
		Name:                    VariantSkipChangeNoFailed,
		Description:             "with --add-path java: a bookie failure starts no ensemble change, and is dropped with the delayed ones, when none of them names the bookie the current ensemble has at its index (the candidate fix for #4261: a late error from a replaced bookie then cannot start a change that replaces nothing and leaves completed adds waiting)",
		Source:                  "LedgerHandle.handleBookieFailure in PR #4278's diff (refs/pull/4278/merge db8a3066 against its base 55650aa7): toReplace = delayed + failed; triggerLoop only if origEnsemble.get(idx).equals(bookie) for some entry, else changingEnsemble = false",
		Issue:                   "apache/bookkeeper PR #4278",
		RecoveryReadsFence:      true,
		SkipChangeWithoutFailed: true,
	},
	{
		Name:                VariantUnsetWhileChanging,
		Description:         "with --add-path java: the completion of an ensemble change unsets and re-sends every pending op while changingEnsemble is still set, then clears it and calls sendAddSuccessCallbacks once (the candidate fix for #4097, the same mechanism as #3005). On the ledger's ordered thread no failure can be delayed between its two locked sections, so it takes callbacks-after-unset's steps; its second loop from the ensemble already unset against (nextOrigEnsemble) is never reached",
		Source:              "PR #4194's diff (refs/pull/4194/merge 2a77ca6f against its base 74109879): LedgerHandle.ensembleChangeLoop's completion calls unsetSuccessAndSendWriteRequest before changingEnsemble = false, then sendAddSuccessCallbacks(); PendingAddOp.unsetSuccessAndSendWriteRequest returns without a callback when the write set lacks the index",
		Issue:               "apache/bookkeeper PR #4194",
		RecoveryReadsFence:  true,
		CallbacksAfterUnset: true,
	},
	{
		Name:                   VariantCheckpointFlushes,
		Description:            "with --checkpoints: a checkpoint with an empty write cache flushes the ledger index (fenced flag, master key) before the journal's mark moves past the fence record (the candidate fix for a fence lost at a restart after such a checkpoint)",
		Source:                 "PR #4843's diff (refs/pull/4843/merge 9b4f81f4 against master 9590a97): SingleDirectoryDbLedgerStorage.checkpoint's empty-write-cache return now calls flushLedgerIndex()",
		Issue:                  "apache/bookkeeper PR #4843",
		RecoveryReadsFence:     true,
		CheckpointFlushesIndex: true,
	},
	{
		Name:               VariantDurableReplayable,
		Description:        "with --checkpoints: durable-fence-reply, and a fence record replayable without an index entry for the ledger (the master key journalled with the fence): two parts of a fix for fences lost by a crash",
		Source:             "durable-fence-reply, plus BookieImpl's replay of METAENTRY_ID_FENCE_KEY finding the key in the record (today it takes it from masterKeyCache or the index, and skips the record as a deleted ledger without one)",
		RecoveryReadsFence: true,
		DurableFenceReply:  true,
		FenceJournalsKey:   true,
	},
	{
		Name:                   VariantDurableReplayFlushed,
		Description:            "with --checkpoints: durable-fence-replayable and checkpoint-flushes-index (PR #4843): the three parts of a fix for fences lost by a crash on DbLedgerStorage",
		Source:                 "durable-fence-replayable, plus PR #4843's diff (refs/pull/4843/merge 9b4f81f4)",
		RecoveryReadsFence:     true,
		DurableFenceReply:      true,
		FenceJournalsKey:       true,
		CheckpointFlushesIndex: true,
	},
	{
		Name:                  VariantSkipInconsistentRange,
		Description:           "with --autorecovery: the ReplicationWorker skips the cache lookup of a fragment whose first entry is past its last (a closed ledger's empty last fragment), where master's ConcurrentSkipListSet.subSet throws IllegalArgumentException(\"inconsistent range\") and kills the worker's thread (PR #4551, open)",
		Source:                "PR #4551's diff (refs/pull/4551/head 9c1acb5a): ReplicationWorker.tryReadingFaultyEntries returns true when firstEntryIdOfFragment > lastEntryIdOfFragment",
		Issue:                 "apache/bookkeeper PR #4551",
		RecoveryReadsFence:    true,
		SkipInconsistentRange: true,
	},
	{
		Name:               VariantEnsembleAtQueue,
		Description:        "with --add-path java and --create-window: an add's op takes the handle's ensemble inside doAsyncAddEntry's synchronized (this) block, just before pendingAddOps.add(op), instead of in PendingAddOp.create on the application's thread; setLedgerMetadata updates the ensemble under the same lock, so an ensemble change's update comes wholly before the op takes the ensemble (it takes the new one) or after the op is queued (the completion's unset reaches it). A candidate fix, bkcheck's (no upstream change proposes it)",
		Source:             "LedgerHandle.doAsyncAddEntry (synchronized (this): lastAddPushed, pendingAddOps.add) and LedgerHandle.setLedgerMetadata (synchronized (this)), master 9590a97; the change: set op.ensemble = getCurrentEnsemble() in that block (PendingAddOp.ensemble is not final)",
		RecoveryReadsFence: true,
		EnsembleAtQueue:    true,
	},
}

// CheckpointOnly reports whether the variant changes only what
// --checkpoints models (and so needs it).
func (v Variant) CheckpointOnly() bool { return v.CheckpointFlushesIndex || v.FenceJournalsKey }

// AutoRecoveryOnly reports whether the variant changes the
// ReplicationWorker (and so needs --autorecovery).
func (v Variant) AutoRecoveryOnly() bool { return v.SkipInconsistentRange }

// JavaOnly reports whether the variant changes the Java client's add path
// (and so needs --add-path java).
func (v Variant) JavaOnly() bool {
	return v.CallbacksAfterUnset || v.SkipChangeWithoutFailed || v.EnsembleAtQueue
}

// lookupVariant returns the named variant ("" is the reference), or nil.
// A single variant is found without copying or allocating: Params asks
// for its variant on every state it encodes. A composition (names joined
// by "+") is built once and kept.
func lookupVariant(name string) *Variant {
	if name == "" {
		return &Variants[0]
	}
	for i := range Variants {
		if Variants[i].Name == name {
			return &Variants[i]
		}
	}
	if !strings.Contains(name, VariantJoin) {
		return nil
	}
	if v, ok := composed.Load(name); ok {
		return v.(*Variant)
	}
	v, err := compose(name)
	if err != nil {
		return nil
	}
	actual, _ := composed.LoadOrStore(name, v)
	return actual.(*Variant)
}

// VariantJoin joins the names of variants applied together
// ("split-add-check+delete-forgets-fence"): a release line can have
// several of the bugs the variants reproduce, and a candidate fix can be
// asked of a release line that has one.
const VariantJoin = "+"

// composed holds the compositions built so far, by name.
var composed sync.Map

// compose builds the variant that applies each named variant's changes
// to the reference: a field any of them changes takes its changed value;
// the actions only they have are joined.
func compose(name string) (*Variant, error) {
	ref := reflect.ValueOf(Variants[0])
	out := Variants[0]
	o := reflect.ValueOf(&out).Elem()
	var names, descs, sources, issues []string
	seen := map[string]bool{}
	for _, n := range strings.Split(name, VariantJoin) {
		v := lookupVariant(n)
		switch {
		case n == "" || strings.Contains(n, VariantJoin):
			return nil, fmt.Errorf("%q is not a variant's name", n)
		case v == nil:
			return nil, unknownVariant(n)
		case seen[n]:
			return nil, fmt.Errorf("%s is named twice", n)
		}
		seen[n] = true
		rv := reflect.ValueOf(*v)
		for i := 0; i < rv.NumField(); i++ {
			if f := rv.Field(i); f.Kind() == reflect.Bool && f.Bool() != ref.Field(i).Bool() {
				o.Field(i).SetBool(f.Bool())
			}
		}
		out.Actions = append(out.Actions, v.Actions...)
		names, descs, sources = append(names, v.Name), append(descs, v.Name+": "+v.Description), append(sources, v.Source)
		if v.Issue != "" {
			issues = append(issues, v.Issue)
		}
	}
	out.Name = strings.Join(names, VariantJoin)
	out.Description = strings.Join(descs, "; ")
	out.Source = strings.Join(sources, "; ")
	out.Issue = strings.Join(issues, ", ")
	return &out, nil
}

// CanonicalVariant orders the parts of a composition as Variants lists
// them and drops the reference from it, so that one model has one name;
// a single name, or one with an unknown part, is returned as it is.
func CanonicalVariant(name string) string {
	if !strings.Contains(name, VariantJoin) {
		return name
	}
	parts := strings.Split(name, VariantJoin)
	rank := make(map[string]int, len(parts))
	for _, n := range parts {
		r := slices.IndexFunc(Variants, func(v Variant) bool { return v.Name == n })
		if r < 0 {
			return name
		}
		rank[n] = r
	}
	slices.SortStableFunc(parts, func(a, b string) int { return rank[a] - rank[b] })
	parts = slices.Compact(parts)
	parts = slices.DeleteFunc(parts, func(n string) bool { return n == VariantReference })
	if len(parts) == 0 {
		return VariantReference
	}
	return strings.Join(parts, VariantJoin)
}

// VariantByName returns the named variant, or the composition of the
// variants joined by "+"; "" is the reference.
func VariantByName(name string) (Variant, error) {
	if v := lookupVariant(name); v != nil {
		return *v, nil
	}
	if strings.Contains(name, VariantJoin) {
		if _, err := compose(name); err != nil {
			return Variant{}, fmt.Errorf("variant %q: %w", name, err)
		}
	}
	return Variant{}, unknownVariant(name)
}

func unknownVariant(name string) error {
	names := make([]string, len(Variants))
	for i, v := range Variants {
		names[i] = v.Name
	}
	return fmt.Errorf("unknown variant %q; known: %s (several joined by %q apply together)", name, strings.Join(names, ", "), VariantJoin)
}
