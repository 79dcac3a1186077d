package bugs

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/regress"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/specprops"
	"github.com/bkcheck/bkcheck/traces"
)

// Finding is a question still open upstream, with bkcheck's verdict on
// BookKeeper's code as it is and on each proposed fix. docs/findings.md is
// generated from Findings; bkcheck regress runs them.
type Finding struct {
	ID       string // e.g. "f-stale-acks"
	Title    string
	Upstream string // issues and pull requests, with their status
	New      bool   // no upstream issue describes it
	Question string // in one sentence
	Code     string // the classes and methods it concerns, at Master
	// Story is the verdict told in BookKeeper's terms (which callback,
	// which message); for a new finding, the report a developer needs.
	Story string
	// Master is the question on BookKeeper's code, and Expect its verdict.
	Master check.ModelConfig
	Expect regress.Expect
	Fixes  []Fix
	// Also asks the same question of master and of fixes in another
	// scope (with message loss where the searches above assume none),
	// each a Fix whose Name says which.
	Also []Fix
	// Told are counterexamples of the question no search here reaches (a
	// fair-cycle search needs the whole behaviour graph), each a story
	// told step by step and built by bkcheck trace build (check.Build),
	// which checks every step against the model, the property, and the
	// cycle's fairness: a behaviour of the model, not the shortest.
	Told []Told
	// Scope says what the searches cover and what the model leaves out.
	Scope string
}

// Told is one story of a finding: its model and property, its steps (one
// action label each, as traces print them), and for a lasso the state
// (1-based) its last state returns to.
type Told struct {
	Name   string // e.g. "BookKeeper 4.18.2, told step by step"
	Why    string // why no search answers it, and what the story is
	Config check.ModelConfig
	Steps  []string
	Loop   int
}

// TraceOf is where the page keeps the trace of a finding's i-th story
// (0-based), under docs/.
func (f Finding) TraceOf(i int) string {
	return fmt.Sprintf("traces/findings/%s-told%d.itf.json", f.ID, i+1)
}

// Fix is a proposed change and its verdict on the same question.
type Fix struct {
	Name   string // e.g. "PR #3041"
	Change string // what it changes
	Config check.ModelConfig
	Expect regress.Expect
}

// Master is the apache/bookkeeper commit the findings' code references
// were read at.
const Master = "apache/bookkeeper master 9590a97 (2026-08-21)"

// stuckAdd is the liveness question of #4261 as a terminal-state
// property: in a state with no step left, no add that has its Qa acks is
// still waiting in the pending queue.
const stuckAdd = `CompletedAddsAreAcknowledged=clients.all(id, c, c.status != "STATUS_OPEN" || c.pending_add_ops.all(op, size(c.confirmed[op.entry.id]) < params.ack_quorum))`

// stuck is #4261's configuration: a writer with two adds in flight (as
// Pulsar's managed ledger writes) that waits for its adds and does not
// close the ledger meanwhile, three bookies, Qw = 2, Qa = 1, message loss.
// The finding's scope gives the figures with one add in flight.
func stuck(variant string) check.ModelConfig {
	return check.ModelConfig{
		Params: spec.Params{Bookies: 3, Clients: 1, WriteQuorum: 2, AckQuorum: 1, Entries: 3, Inflight: 1,
			AddPath: spec.AddPathJava, Variant: variant, Exclude: []string{"ClientClosesLedgerSuccess", "ClientClosesLedgerFail"}},
		Invariants: []string{"TypeOK"}, Symmetry: spec.Symmetry{Bookies: true},
		Settings: properties.Settings{Terminal: []string{stuckAdd}},
	}
}

// endlessRecovery is #4872's question: Qw = 1, the one replica's bookie
// loses its disk for good, AutoRecovery on; does the ledger ever leave
// the under-replicated list, with every action weakly fair?
func endlessRecovery() check.ModelConfig {
	return check.ModelConfig{Params: spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1,
		DiskLoss: 1, AutoRecovery: true}, Invariants: []string{"none"},
		Settings: properties.Settings{Eventually: []string{"repaired=" + specprops.Repaired}, Fair: []string{properties.FairAll}}}
}

// belowQw asks whether AutoRecovery, its checker reading percentage of
// each fragment, repairs an entry a bookie missed inside a fragment.
func belowQw(percentage int) check.ModelConfig {
	return check.ModelConfig{Params: spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 3, Inflight: 3,
		AutoRecovery: true, AuditorVerification: percentage, Exclude: []string{"ClientChangesEnsemble", "ClientResendsPendingAddOp"}},
		Invariants: []string{"none"}, Symmetry: spec.Symmetry{Bookies: true},
		Settings: properties.Settings{Constraint: []string{atMostOneLost},
			Terminal: []string{`ReachesQw=meta_status != "STATUS_CLOSED" || ` + specprops.AllCopies}}}
}

// decommissionBlocked is #3887's question: a bookie of a closed ledger
// stopped for good and decommissioned, AutoRecovery on, every action
// weakly fair; does decommissionbookie return? The writer makes no
// ensemble change (so the closed ledger's last fragment is never empty:
// that is f-4551's way to block it), and no message is lost (a recovery
// read lost on the wire waits for ever in the model).
func decommissionBlocked(ackQuorum int) check.ModelConfig {
	return check.ModelConfig{Params: spec.Params{Bookies: 3, Clients: 2, WriteQuorum: 2, AckQuorum: ackQuorum, Entries: 1, Inflight: 1,
		Crashes: 2, ReliableNetwork: true, AutoRecovery: true, Decommission: true, Exclude: []string{"ClientChangesEnsemble", "ClientResendsPendingAddOp"}},
		Invariants: []string{"none"}, Symmetry: spec.Symmetry{Bookies: true},
		Settings: properties.Settings{Eventually: []string{"Decommissions=" + specprops.Decommissioned}, Fair: []string{properties.FairAll}}}
}

// readOnlyFlapOnRelease is f-ar-below-qw's question asked of the
// release's model for its told story: no message lost but to a crashed
// bookie (none crashes), one read-only turn of a bookie.
func readOnlyFlapOnRelease() check.ModelConfig {
	mc := belowQw(0)
	mc.BookKeeper, mc.ReliableNetwork, mc.ReadOnly = now, true, 1
	mc.Exclude, mc.Symmetry, mc.Constraint = nil, spec.Symmetry{}, nil
	return mc
}

// decommissionToldOnRelease is f-3887's question asked of the release's
// model, for its told story: a lost write instead of a crashed bookie
// (one crash, b2's for good), AutoRecovery's defaults.
func decommissionToldOnRelease() check.ModelConfig {
	return check.ModelConfig{Params: spec.Params{BookKeeper: now, Bookies: 3, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1,
		Crashes: 1, AutoRecovery: true, Decommission: true},
		Invariants: []string{"none"},
		Settings:   properties.Settings{Eventually: []string{"Decommissions=" + specprops.Decommissioned}, Fair: []string{properties.FairAll}}}
}

// inconsistentRange is PR #4551's question: can the worker's thread die
// on an empty last fragment? WorkerRuns is an invariant over rw_phase.
func inconsistentRange(variant string) check.ModelConfig {
	return check.ModelConfig{Params: spec.Params{Bookies: 3, Clients: 2, WriteQuorum: 1, AckQuorum: 1, Entries: 2, Inflight: 2,
		DiskLoss: 1, Crashes: 1, ReliableNetwork: true, AutoRecovery: true, Variant: variant}, Invariants: []string{"none"},
		Settings: properties.Settings{Invariant: []string{`WorkerRuns=rw_phase != "stopped"`}}}
}

// inconsistentRangeOnRelease is f-4551's question asked of the release's
// model, without a recovery's failed read (RecoveryClientReadFails) and an
// idle checkpoint (BookieCheckpointsIdle): neither is part of the question,
// and its shortest violation comes before a search reaches them.
func inconsistentRangeOnRelease(variant string) check.ModelConfig {
	mc := onRelease(now, inconsistentRange(variant))
	mc.Exclude = []string{"RecoveryClientReadFails", "BookieCheckpointsIdle"}
	return mc
}

// inconsistentRangeTold is the configuration of f-4551's story told on
// the release's model: a second crash, for the spare bookie that is down
// while the writer's ensemble change chooses.
func inconsistentRangeTold() check.ModelConfig {
	mc := inconsistentRangeOnRelease("")
	mc.Crashes = 2
	return mc
}

// withVariant is mc with the variant v.
func withVariant(mc check.ModelConfig, v string) check.ModelConfig {
	mc.Variant = v
	return mc
}

// lossy is mc with every message liable to be lost.
func lossy(mc check.ModelConfig) check.ModelConfig {
	mc.ReliableNetwork = false
	return mc
}

// fenceLoss is the lost-fence question: E = Qw = Qa = 2, one crash with
// the default journal, BookKeeper's rules on.
func fenceLoss(variant string) check.ModelConfig {
	return check.ModelConfig{Params: spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1,
		Crashes: 1, RecoveryFromLAC: true, PartialReplacement: true, Variant: variant}, Symmetry: both}
}

// allAdds is the liveness question of an op that never completes, as a
// terminal-state property: in a state with no step left, an open writer
// has no add waiting in its pending queue.
const allAdds = `AddsComplete=clients.all(id, c, c.status != "STATUS_OPEN" || size(c.pending_add_ops) == 0)`

// createWindow is the question of an op created on the ensemble an
// ensemble change is replacing: BookKeeper as released (--create-window
// on), E = Qw = Qa = 2 of three bookies, one writer with two adds in
// flight, one crash, no message lost.
func createWindow(variant string, safety bool) check.ModelConfig {
	mc := check.ModelConfig{Params: spec.Params{BookKeeper: spec.DefaultRelease, Bookies: 3, Clients: 1, WriteQuorum: 2, AckQuorum: 2,
		Entries: 2, Inflight: 2, Crashes: 1, ReliableNetwork: true, Variant: variant},
		Invariants: []string{"AckedEntriesHaveAckQuorumCopies", "AllAckedEntriesAreReadable"}, Symmetry: spec.Symmetry{Bookies: true}}
	if !safety {
		mc.Params.Exclude = []string{"ClientClosesLedgerSuccess", "ClientClosesLedgerFail"}
		mc.Invariants = []string{"TypeOK"}
		mc.Settings = properties.Settings{Terminal: []string{allAdds}}
	}
	return mc
}

// fenceLossBK is fenceLoss asked of BookKeeper as released
// (--bookkeeper): the Java client, sequence recovery reads, and what a
// crash keeps on DbLedgerStorage (--checkpoints).
func fenceLossBK(variant string) check.ModelConfig {
	mc := fenceLoss(variant)
	mc.Params.BookKeeper = spec.DefaultRelease
	return mc
}

// fenceLossDB is fenceLoss on DbLedgerStorage: what a crash keeps is the
// ledger index as of its last effective checkpoint and the journal after
// the mark (--checkpoints).
func fenceLossDB(variant string) check.ModelConfig {
	mc := fenceLoss(variant)
	mc.Params.Checkpoints = true
	return mc
}

// preBoot is the unawaited pre-boot check's question: E = Qw = Qa = 2,
// journalWriteData=false with the data-integrity check, one crash before
// any recovery starts (so that a fence lost in the crash, the question of
// f-fence-lost, is not the answer), BookKeeper's rules on, without the
// actions that cannot lose an acknowledged entry when the ensemble holds
// every bookie (splitBrain4812's argument).
func preBoot(variant string) check.ModelConfig {
	mc := preBootAnyTime(variant)
	mc.Settings = properties.Settings{Constraint: []string{crashBeforeRecovery}}
	return mc
}

// preBootAnyTime is preBoot with the crash at any time, recovery or not.
func preBootAnyTime(variant string) check.ModelConfig {
	return check.ModelConfig{Params: spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1,
		Crashes: 1, Journal: spec.JournalDisabled, DataIntegrity: true, RecoveryFromLAC: true, PartialReplacement: true, Variant: variant,
		Exclude: splitBrain4812},
		Symmetry: both}
}

// preBootE5 is preBootAnyTime at docs/guarantees.md's setting E = 5,
// Qw = 3, Qa = 2 (5 bookies, striped), for the behaviours that lose at
// most one message: the lossy space is beyond an exhaustive search here.
func preBootE5(variant string) check.ModelConfig {
	mc := preBootAnyTime(variant)
	mc.Bookies, mc.Ensemble, mc.WriteQuorum = 5, 5, 3
	mc.Settings = properties.Settings{Constraint: []string{atMostOneLost}}
	return mc
}

// atMostOneLost keeps the behaviours that lose at most one message.
const atMostOneLost = "AtMost1Lost=size(messages.filter(m, m.count == -1)) <= 1"

// crashBeforeRecovery: no recovery starts before the crash.
const crashBeforeRecovery = `CrashBeforeRecovery=faults_used.crashes >= 1 || meta_status == "Nil" || meta_status == "STATUS_OPEN"`

// crashAfterCollect: the bookie crash comes after every bookie collected
// the deleted ledger (the order of the restart question; a crash before a
// bookie's collection can lose a fence not yet flushed, f-fence-lost).
const crashAfterCollect = `CrashAfterCollect=faults_used.crashes == 0 || size(b_collected) == params.bookies`

// Findings are the open questions bkcheck settles, in the order of the page.
var Findings = []Finding{
	{
		ID: "f-stale-acks", Title: "An entry acknowledged on the ack of a bookie the ensemble change replaced",
		Upstream: "apache/bookkeeper#3005 (open, 2022; PR #3041 open), #4097 (open; PR #4194 open since 2024-01), #4651 (closed 2025 without a fix; PR #4660 closed)",
		Question: "Does master acknowledge an entry whose write-set acknowledgements include one from a bookie that the completed ensemble change replaced, leaving it with fewer than Qa copies on the bookies the metadata names for it?",
		Code:     "LedgerHandle.ensembleChangeLoop (changingEnsemble = false, then unsetSuccessAndSendWriteRequest outside the lock), LedgerHandle.unsetSuccessAndSendWriteRequest, PendingAddOp.unsetSuccessAndSendWriteRequest (an op whose write set lacks the replaced index calls lh.sendAddSuccessCallbacks()), LedgerHandle.sendAddSuccessCallbacks",
		Story:    "Yes, with striping. Ensemble [b1,b2,b3], E = 3, Qw = Qa = 2: entry 1 is written to positions 1,2 (b2,b3), entry 2 to positions 2,0 (b3,b1), entry 3 to positions 0,1 (b1,b2). b1 acknowledges entry 2 and crashes; entry 3's write to b1 times out and PendingAddOp.writeComplete calls handleBookieFailure({0: b1}): changingEnsemble is set, so when b3's acks complete entries 1 and 2 (ackSet quorum), sendAddSuccessCallbacks returns at once. The MetadataUpdateLoop writes the ensemble [b4,b2,b3] from entry LAC + 1 = 1. On the ordered thread the completion clears changingEnsemble and calls unsetSuccessAndSendWriteRequest over the queue: for entry 1, position 0 is not in its write set, so it calls sendAddSuccessCallbacks, which acknowledges entry 1 and then entry 2, whose ackSet still holds b1's ack at position 0 (the loop has not reached it yet). Entry 2 is acknowledged (LAC = 2) while the metadata says it lives on b3 and b4, and b4 never got it: one copy where Qa = 2 was promised. A recovery that reads b4's NoSuchEntry first (Qw − Qa + 1 = 1 negative suffices) closes the ledger before entry 2.\n\nWithout striping (E = Qw) every op's write set holds every position, so no callback runs inside the loop and master does not show it (and writeComplete drops a late ack from the replaced address: spec/testdata/scenarios/bug-4651-stale-acks.txt). #4651's report (a callback queued off the ordered thread when the channel was unwritable) relies on a second window that PR #4557 (2025-05) closed and that the model does not have.",
		Master:   bugByID("bk-4651").Bug,
		Expect:   slow(bugByID("bk-4651").Expect),
		Fixes: []Fix{{
			Name:   "PR #3041",
			Change: "unsetSuccessAndSendWriteRequest unsets every pending op first and calls sendAddSuccessCallbacks once after the loop (variant callbacks-after-unset; from the PR's diff, refs/pull/3041/merge 333f9536)",
			Config: bugByID("bk-4651").Fixed,
			Expect: slow(bugByID("bk-4651").FixedExpect),
		}, {
			Name:   "PR #4194",
			Change: "the completion unsets and re-sends while changingEnsemble is still set, then clears it and calls sendAddSuccessCallbacks once; the op no longer calls back from the loop (variant unset-while-changing; from the PR's diff, refs/pull/4194/merge 2a77ca6f)",
			// Asked as PR #3041 is (bk-4651's Fixed): on the release, the
			// create window left out.
			Config: withoutCreateWindow(onRelease(now, staleAcksConfig(spec.VariantUnsetWhileChanging))),
			Expect: slow(bugByID("bk-4651").FixedExpect),
		}},
		Also: []Fix{{
			Name:   "master, messages lost",
			Change: "every message may be lost; the writer gives up the ledger after one ensemble change (maxNumEnsembleChanges = 1)",
			Config: staleAcksLossy(""),
			Expect: regress.Expect{Status: "violation", Invariant: "AckedEntriesHaveAckQuorumCopies", Length: 16, Slow: true},
		}, {
			Name:   "PR #3041, messages lost",
			Change: "the same",
			Config: staleAcksLossy(spec.VariantCallbacksAfterUnset),
			Expect: regress.Expect{Status: "ok", Distinct: 15879429, Slow: true},
		}, {
			Name:   "PR #4194, messages lost",
			Change: "the same",
			Config: staleAcksLossy(spec.VariantUnsetWhileChanging),
			Expect: regress.Expect{Status: "ok", Distinct: 15879429, Slow: true},
		}},
		Scope: "PR #4194 takes PR #3041's steps on the ledger's ordered thread (docs/model.md, variants), so its count is the same. The first searches use one bookie crash on a reliable network (the failure is the crash's). With message loss as well (also asked) every lost message can start another ensemble change, and with BookKeeper's default (maxNumEnsembleChanges unlimited; the model's default bound, 3) the searches are beyond an exhaustive search here (more than 18 million orbits by depth 14, the queue still growing); with a writer that gives up the ledger after one change they are exhaustive: master fails in 16 states with no crash at all (entry 3's request to b1 is lost, and its timeout starts the change the crash started above: the same callbacks acknowledge entry 2 on b1's ack, which the change made stale), and both fixes are clean. With two changes allowed PR #3041 showed no violation within 244,654,363 orbits (levels 1–17, 22 minutes on disk, interrupted: not exhaustive). The recovery client is the spec's, which reads every replica at once; BookKeeper's default reads the first member of the write set first, so the data-loss tail above needs that replica (b3 for entry 2) slow or unreachable when recovery reads.",
	},
	{
		ID: "f-stuck-writer", Title: "A writer's completed adds never acknowledged after an ensemble change",
		Upstream: "apache/bookkeeper#4261 (open, 2024-04; PR #4278 open), #4459 (closed)",
		Question: "Can a late or stale bookie failure make an ensemble change end with diffEnsemble empty, so that sendAddSuccessCallbacks is never called and adds acknowledged by Qa bookies wait forever?",
		Code:     "PendingAddOp.writeComplete (the check against the op's own ensemble at the request's index; an error for a completed op goes to notifyWriteFailed(bookieIndex, addr)), LedgerHandle.maybeHandleDelayedWriteBookieFailure / handleBookieFailure (failures keyed by ensemble index), ensembleChangeLoop (MetadataUpdateLoop: its predicate by index, run in the caller's thread; EnsembleUtils.replaceBookiesInEnsemble; the completion, queued on the ledger's ordered thread when the write returns, loops again from the same origEnsemble, else replaced = diffEnsemble(origEnsemble, newEnsemble)), sendAddSuccessCallbacks (never while changingEnsemble), PerChannelBookieClient (a channel's requests time out oldest first)",
		Story:    "Yes, since the model lets a replacement bring back an earlier fragment's ensemble, as BookKeeper's placement does (EnsembleUtils.replaceBookiesInEnsemble never looks at older fragments; the spec's SelectEnsemble refused it, and a record of 4.18.2 found the difference: docs/conformance.md, Both directions, correction 15). Three bookies, [b1,b2], Qw = 2, Qa = 1, a synchronous writer. Entries 1 and 2 are acknowledged by b2, their writes to b1 lost. Entry 1's failure at b1, its op completed, waits in delayedWriteFailedBookies; entry 3's initiate hands it over, and the first loop replaces b1 by b3 ([b3,b2]); entry 3's re-send to b3 is lost too, and its failure starts a second loop from [b3,b2]. b2 acknowledges entry 3 (Qa = 1: completed, no callback while changingEnsemble is set), and the stale failures of entries 2 and 3 at b1, which name b1 at its index, wait as delayed failures. The loop replaces b3 by b1, the only bookie left, recreating the first ensemble; its completion finds the delayed failures and loops again from the same origEnsemble: b1 is at its index again, so it is replaced by b3, and the ensemble is back to [b3,b2]. That completion's diffEnsemble(origEnsemble, newEnsemble) is empty: nothing is re-sent and sendAddSuccessCallbacks is not called, so entry 3, completed, is never acknowledged, and the writer waits for ever: #4261's symptom. bkcheck confirm on 4.18.2 ran this 21-state trace (f-stuck-writer-clock.itf.json) with every step as the model took it, and BookKeeper ended as the model does: entries 1 and 2 acknowledged (Java's 0 and 1), entry 3 completed and not, the ledger open, nothing left to happen. With PR #3041 woven into the client the same trace diverges at its last step: BookKeeper acknowledges entry 3 (the writer's LAC 3, the model's 2). The page's shortest trace (17 states) differs: a newer write's failure at b1 is handled before an older one's, with an ensemble change between them; bkcheck confirm diverged on it at step 16, since a closed connection fails both writes at once and the clock fails the older first, while the model orders a connection's failures only against what is still deliverable. PR #4278 does not help (the delayed failures name b1 where it sits), and woven into 4.18.2's client it leaves the same run as it is, entry 3 never acknowledged; PR #3041 and PR #4194 do (every completion ends with sendAddSuccessCallbacks). Before the correction the model answered No (6,644,520 orbits); its two earlier traces were not Java executions (a failure keyed by bookie rather than by index; a write of the new ensemble failing between the metadata write's return and the completion), each removed by a correction from the Java code or from BookKeeper itself.\n\nReport for BookKeeper (#4261): preconditions: a spare bookie at most, Qa < Qw, a bookie's writes failing while the others acknowledge them (its frames stalled, the connection left open), so that failures of acknowledged adds wait as delayed failures while a second change brings that bookie back; consequence: an add completed with Qa acknowledgements is never acknowledged, and a writer waiting for it is stuck for good (no timeout fails a completed op); fix: PR #3041 or PR #4194 (sendAddSuccessCallbacks after every completion), clean in the model, and PR #3041 woven into 4.18.2 acknowledges the entry in the run above; PR #4278 does not fix it (woven into 4.18.2, the same run ends with entry 3 unacknowledged).",
		Master:   stuck(""),
		Expect:   regress.Expect{Status: "violation", Invariant: "CompletedAddsAreAcknowledged", Length: 17},
		Fixes: []Fix{
			{
				Name:   "PR #4278",
				Change: "handleBookieFailure starts no change, and drops the failures, when none of them (the delayed ones and the new) names the current ensemble's bookie at its index; failures delayed during a change are not filtered (variant skip-change-without-failed; from the PR's diff, refs/pull/4278/merge db8a3066)",
				Config: stuck(spec.VariantSkipChangeNoFailed),
				Expect: regress.Expect{Status: "violation", Invariant: "CompletedAddsAreAcknowledged", Length: 17},
			},
			{
				Name:   "PR #3041",
				Change: "sendAddSuccessCallbacks once after the unset loop, whatever the loop did (variant callbacks-after-unset; from the PR's diff, refs/pull/3041/merge 333f9536)",
				Config: stuck(spec.VariantCallbacksAfterUnset),
				Expect: regress.Expect{Status: "ok", Distinct: 8116120, Slow: true},
			},
			{
				Name:   "PR #4194",
				Change: "the completion unsets while changingEnsemble is still set, then clears it and calls sendAddSuccessCallbacks once (variant unset-while-changing; from the PR's diff, refs/pull/4194/merge 2a77ca6f)",
				Config: stuck(spec.VariantUnsetWhileChanging),
				Expect: regress.Expect{Status: "ok", Distinct: 8116120, Slow: true},
			},
		},
		Scope: "With two adds in flight (two entries, the rest as above) the model answers Yes in 17 states (6,589,243 orbits), and with one bookie crash (three entries, one in flight) Yes after 2,970,551 orbits; both shortest traces, like the page's, handle a newer write's failure at a bookie before an older one's (before the correction of the placement: not reachable, 37,073,280 and 35,724,277 orbits). PR #3041 and PR #4194 end every completion with sendAddSuccessCallbacks, which would also close a hang of this kind whatever its timing, and PR #4278 does not filter failures delayed during a change. The writer may start at most 3 ensemble changes (--max-ensemble-changes 3, maxNumEnsembleChanges; BookKeeper's default is unlimited); the writer does not close the ledger while it waits (the actions are excluded), and no other client recovers it. With Qa = Qw = 2 the question is another one, since an add with one ack is not completed: does every add complete? Asked of BookKeeper 4.18.2 (two entries, two in flight, no close), it is answered No in f-create-window (the writer waits, 21 states, a crash and no lost message, by the create window). With messages lost the answer is No without that window too (--exclude-actions ClientCreatesAddOp: a 20-state trace after 18,468,245 orbits, 3 min 24 s): a failure of an index whose bookie cannot be replaced (no spare left) while another index's can is dropped by the partial replacement and never re-sent; and with it, 16 states (2,883,296 orbits, 38 s): an ensemble change that loops again from the same origEnsemble and comes back to it re-sends nothing (diffEnsemble empty). bkcheck confirm of the 20-state trace on 4.18.2 first diverged at step 12: Java's add at step 6 took the ensemble before the metadata update reached the handle, because the harness released the update's write without awaiting setLedgerMetadata (the create window itself, on real bookies; the harness now awaits it). It then diverges at step 15: BookKeeper replaces two failed indexes in its own index order, the model in its positions, which are BookKeeper's rotated by one (docs/model.md, what remains different), so this trace says nothing yet about BookKeeper.",
	},
	{
		ID: "f-create-window", Title: "An add created on the ensemble a change is replacing", New: true,
		Question: "Can an add whose op took the handle's ensemble just before an ensemble change completed be acknowledged by the replaced bookie, or wait for ever, because the change's re-send loop never sees it?",
		Code:     "LedgerHandle.asyncAddEntry (PendingAddOp.create(this, clientCtx, getCurrentEnsemble(), ...) on the application's thread), doAsyncAddEntry (synchronized (this): the entry id and pendingAddOps.add(op); then op.initiate()), setLedgerMetadata (synchronized (this)), ensembleChangeLoop (the predicate by index; the completion's replaced = diffEnsemble(origEnsemble, newEnsemble) and unsetSuccessAndSendWriteRequest over pendingAddOps), PendingAddOp.writeComplete (a response counts if the op's own ensemble has its bookie at the request's index)",
		Story:    "Yes, with one crash and no lost message. E = Qw = Qa = 2, bookies b1..b3, ensemble [b1,b2]. b1 crashes while entry 1 is sent; b2 acknowledges it, b1 restarts, and entry 1's timeout at b1 starts an ensemble change. While its metadata update is under way, the application adds entry 2: PendingAddOp.create takes the handle's ensemble, still [b1,b2]. The update writes [b3,b2], and the completion re-sends entry 1 to b3; entry 2's op is not in pendingAddOps yet, so the loop does not see it. The op is then queued and sends entry 2 to b1 and b2, which both acknowledge it: the op's own ensemble has b1 at index 0, so writeComplete counts it, and entry 2 is acknowledged with Qa = 2 copies of which only b2's is on a bookie the metadata names for it (AckedEntriesHaveAckQuorumCopies). One disk loss of b2 then loses an acknowledged entry; the Scope gives the run where one lost message and one disk loss do. When the write to the replaced bookie fails instead (b1 still down), handleBookieFailure starts a loop whose predicate finds index 0 already replaced, writes nothing, and completes over an empty diffEnsemble: nothing re-sends entry 2, and with Qa = Qw it waits for ever (addEntryQuorumTimeout is -1 by default), every add after it too (the second bullet below, 21 states).\n\nThe window is the application's thread between getCurrentEnsemble() and pendingAddOps.add, a few instructions, against a metadata write and its completion on the ordered thread; it is narrow in time and every release has it (the same lines are in release-4.13.0). bkcheck confirm cannot drive it yet (the harness does not hold the application's thread), so the verdict is the model's.\n\nReport for BookKeeper: preconditions: an add made while an ensemble change's metadata update is in flight, the application's thread descheduled between PendingAddOp.create and doAsyncAddEntry's queueing until the change completes; consequence: an entry acknowledged with fewer than Qa copies on the bookies its metadata names (one disk loss from data loss at Qa = 2), or, when the replaced bookie does not answer, a writer stuck for good with Qa = Qw; fix: take the op's ensemble inside doAsyncAddEntry's synchronized (this) block, before pendingAddOps.add (setLedgerMetadata holds the same lock, so the update comes wholly before the op takes the ensemble or after it is queued, where the completion's unset reaches it): clean, exhaustively, for both questions.",
		Master:   createWindow("", true),
		Expect:   regress.Expect{Status: "violation", Invariant: "AckedEntriesHaveAckQuorumCopies", Length: 18},
		Fixes: []Fix{{
			Name:   "the ensemble taken in the queueing block",
			Change: "doAsyncAddEntry sets op.ensemble = getCurrentEnsemble() inside its synchronized (this) block, just before pendingAddOps.add(op) (variant ensemble-at-queue, bkcheck's proposal)",
			Config: createWindow(spec.VariantEnsembleAtQueue, true),
			Expect: regress.Expect{Status: "ok", Distinct: 116792},
		}},
		Also: []Fix{{
			Name:   "master, the writer waits",
			Change: "the same setting; does every add of an open writer complete once nothing else can happen (a terminal-state property; the writer does not close the ledger)",
			Config: createWindow("", false),
			Expect: regress.Expect{Status: "violation", Invariant: "AddsComplete", Length: 21},
		}, {
			Name:   "the ensemble taken in the queueing block, the writer waits",
			Change: "the same",
			Config: createWindow(spec.VariantEnsembleAtQueue, false),
			Expect: regress.Expect{Status: "ok", Distinct: 58398},
		}},
		Scope: "BookKeeper as released (--bookkeeper 4.18.2, which turns on --create-window); the model takes the create only while a metadata update of an ensemble change is pending, the only time it can matter (docs/model.md). With message loss instead of the crash, and one disk loss, `bkcheck check --bookkeeper 4.18.2 --bookies 3 --clients 1 --write-quorum 2 --ack-quorum 2 --entries 2 --inflight 2 --disk-loss 1 --invariants AllAckedEntriesAreReadable --symmetry bookies` violates AllAckedEntriesAreReadable in 17 states (15,315,887 orbits, 3 min 13 s, 2.2 GiB): entry 2 acknowledged by b1 and b2, the metadata [b3,b2], b2 loses its disk, and the entry is on no bookie a reader asks. The spec's writer and --add-path java without --create-window have neither behaviour (the model before this correction).",
	},
	{
		ID: "f-fence-lost", Title: "A fence of a bookie that holds nothing of the ledger, lost in a crash", New: true,
		Question: "With the default journal (journalSyncData=true), can a bookie fenced by recovery while it holds no entry of the ledger crash, come back unfenced, and let the old writer reach Ack quorum after the recovery closed the ledger?",
		Code:     "BookieImpl.fenceLedger and LedgerDescriptorImpl.fenceAndLogInJournal (the fence record is the ledger id and METAENTRY_ID_FENCE_KEY, no master key); BookieImpl.readJournal (a fence record takes its key from masterKeyCache or ledgerStorage.readMasterKey; NoLedgerException: \"Skip replaying entries of ledger since it was deleted\"); LedgerMetadataIndex (the fenced flag and the key durable only at a checkpoint; SingleDirectoryDbLedgerStorage.checkpoint returns before flushing the index when the write cache is empty, and SyncThread still moves the log mark); proto/ReadEntryProcessor.processPacket (a fencing read without data is answered at once)",
		Story:    "Yes, asked of BookKeeper 4.18.2 (the Java client, sequence recovery reads, DbLedgerStorage's crash rule). E = Qw = Qa = 2, bookies b1,b2; the writer has sent nothing yet. A recovery client marks the ledger IN_RECOVERY and sends its fencing LAC reads; quorum coverage needs Qw − Qa + 1 = 1 fenced bookie. b2 has no entry of the ledger: it fences the ledger and answers at once without data; recovery's sequence read asks b2, the first of entry 1's write set, and its NoSuchEntry decides that entry 1 does not exist. b2 crashes and restarts: the fence is gone. The writer's add of entry 1 is stored and acknowledged by b1 (never fenced) and by b2 (unfenced again): LAC = 1. Recovery then closes the ledger empty: an acknowledged entry outside the closed ledger, with the journal as configured by default.\n\nIn the model's shortest trace b2 crashes before the fence record's fsync; with the record fsynced the fence is lost all the same (the second bullet below, where every fencing read waits for its record: the same 16 steps). A fence record carries no master key, and replay skips a record of a ledger the bookie holds no key of, which DbLedgerStorage makes durable only at a checkpoint. That is what a run on 4.18.2 showed, of this question's earlier trace (the spec's model, in which b1 was the fenced bookie): the fence record was in b1's journal before the kill -9 (the journal file parsed: ledger 0, entry -0x2000), and replay skipped it (b1's log: \"Skip replaying entries of ledger since it was deleted\"): a fence record carries no master key, and b1 held none of this ledger, neither in a key record journalled before it nor in its ledger index, which DbLedgerStorage makes durable only at a checkpoint; SortedLedgerStorage, BookKeeper's default class, skipped it the same way. With a short flushInterval an idle checkpoint (empty write cache) moved the journal's mark past the record without flushing the index, and the record was not replayed at all. The window is therefore not milliseconds: it lasts until the next checkpoint that flushes the index, about flushInterval (10 s by default) on a busy bookie and indefinitely on an idle one. The model before --bookkeeper, with the spec's crash rule (a journalled fence survives), explained the run by the crash alone, a window of about journalMaxGroupWaitMSec.\n\nReport for BookKeeper: preconditions: the default journal (journalSyncData=true), a bookie fenced by a recovering client while it holds no entry of the ledger (no key record before the fence record, no index entry), a crash of that bookie before a checkpoint flushes its ledger index; consequence: an entry the writer acknowledged is not in the closed ledger (data loss, a split brain between writer and reader); fix: all three of (1) answer a fencing read only once the fence record is durable, (2) journal the master key with the fence record (or replay a fence record without one), and (3) flush the ledger index at a checkpoint with an empty write cache (PR #4843): f-4843's fix, clean; the durable reply alone (the first bullet) is clean only under the spec's crash rule, in which a journalled fence survives, and does not prevent the run on 4.18.2.",
		Master:   fenceLossBK(""),
		Expect:   regress.Expect{Status: "violation", Invariant: noDivergence, Length: 16, Slow: true},
		Fixes: []Fix{{
			Name:   "durable fence reply, under the spec's crash rule",
			Change: "every fencing read waits for the fence record before it answers (variant durable-fence-reply), with a journalled fence surviving every crash: the spec's rule, which BookKeeper does not have for a bookie holding no key of the ledger (the next bullet)",
			Config: fenceLoss(spec.VariantDurableFenceReply),
			Expect: regress.Expect{Status: "ok", Distinct: 1070757, Slow: true},
		}, {
			Name:   "durable fence reply, on DbLedgerStorage",
			Change: "as above, asked of BookKeeper 4.18.2 (--bookkeeper: what a crash keeps as DbLedgerStorage keeps it, --checkpoints, with the Java client and sequence recovery reads): b1 holds no entry, so its index has no key for the ledger until a checkpoint, and journal replay skips the keyless fence record as a deleted ledger's (variant durable-fence-reply)",
			Config: fenceLossBK(spec.VariantDurableFenceReply),
			Expect: regress.Expect{Status: "violation", Invariant: noDivergence, Length: 16, Slow: true},
		}, {
			Name:   "durable and replayable fence, on DbLedgerStorage",
			Change: "the durable reply and a fence record replayable without an index entry (the master key journalled with the fence; variant durable-fence-replayable, asked of BookKeeper 4.18.2): a checkpoint with an empty write cache still moves the mark past the record without flushing the fenced flag, which the next section asks",
			Config: fenceLossBK(spec.VariantDurableReplayable),
			Expect: regress.Expect{Status: "violation", Invariant: noDivergence, Length: 17, Slow: true},
		}},
		Scope: "The spec's writer (the question does not involve the add path's detail); BookKeeper's rules on (--recovery-from-lac, --partial-replacement). The recovery reads are the spec's, every replica at once. With BookKeeper's default sequence read (--recovery-read sequence added to the command above) the question is answered by a 16-state trace that needs no lost message at all: recovery fences b2, asks it alone, and its one NoSuchEntry (Qw − Qa + 1 = 1) closes the ledger while the fencing read to b1 is still in flight; b2 crashes and restarts unfenced, and b1 and b2 acknowledge the old writer's add (667,817 orbits searched). The durable-fence-reply fix stays clean with sequence reads: 7,609,581 orbits, depth 31, exhaustive. The master question and the first fix keep a fence whose record is written (the model's journal); on DbLedgerStorage (--checkpoints) that is optimistic, and the durable reply alone does not close it (the second fix): a fence record carries no master key, and journal replay skips it as a deleted ledger's when the ledger index has no entry for the ledger (BookieImpl's replay of METAENTRY_ID_FENCE_KEY, readMasterKey), b1's case here until a checkpoint flushes its index. With the record made replayable as well (the third), the empty-cache checkpoint of the next section still loses it; the three parts together are clean (the next section's fix).",
	},
	{
		ID: "f-4843", Title: "A durable fence lost at a restart after a checkpoint with an empty write cache",
		Upstream: "PR #4843 (open, 2026-07: \"DbLedgerStorage checkpoint losing ledger metadata when write cache is empty\"); PR #4844 (open) is a cousin",
		Question: "On DbLedgerStorage, with a fence whose reply waited for its record and whose record can be replayed, does a checkpoint with an empty write cache, which moves the journal's mark past the record without flushing the fenced flag, let a crash or restart lose the fence, and an old writer reach Ack quorum after the ledger closed?",
		Code:     "bookie/storage/ldb/SingleDirectoryDbLedgerStorage.checkpoint (\"if (writeCache.isEmpty() ...) return\" before LedgerMetadataIndex.flush), bookie/SyncThread.checkpoint (the journal's log mark moves all the same), LedgerMetadataIndex.setFenced (in memory until a flush), BookieImpl's journal replay",
		Story:    "Yes. E = Qw = Qa = 2, bookies b1,b2, with the lost-fence section's first two fixes in place (variant durable-fence-replayable, --checkpoints). Recovery fences b1 and reads entry 1 from it: NoSuchEntry, which decides the entry does not exist; b1's fence record is durable. b1 checkpoints with an empty write cache (it holds no entry of this ledger, and none of another): SyncThread moves the journal's mark past the fence record, while checkpoint returned before flushing the ledger index. b1 crashes (a clean shutdown goes the same way: flush, then ledgerIndex.close without the pending updates) and restarts: the fence is in neither the index nor the replayed journal. The old writer's add is acknowledged by b1 and b2 (never fenced: its fencing read is still unprocessed) and recovery closes the ledger empty.\n\nReport for BookKeeper: preconditions: DbLedgerStorage, a fenced ledger with no entry in the write cache at the next checkpoint of that directory (an idle bookie, or one whose entries were flushed), a restart after it; consequence: a fenced ledger accepts the old writer's adds again; fix: PR #4843 (flush the ledger index on the empty-cache return), with the two fixes of the lost-fence section for a bookie that holds no entry.",
		Master:   fenceLossDB(spec.VariantDurableReplayable),
		Expect:   regress.Expect{Status: "violation", Invariant: noDivergence, Length: 17, Slow: true},
		Fixes: []Fix{{
			Name:   "PR #4843",
			Change: "the empty-write-cache checkpoint flushes the ledger index too (its diff: refs/pull/4843/merge 9b4f81f4), with the durable and replayable fence (variant durable-fence-replayable-flushed)",
			Config: fenceLossDB(spec.VariantDurableReplayFlushed),
			Expect: regress.Expect{Status: "ok", Distinct: 20640374, Slow: true},
		}, {
			Name:   "PR #4843 alone",
			Change: "the PR on master, without the other two parts (variant checkpoint-flushes-index)",
			Config: fenceLossDB(spec.VariantCheckpointFlushes),
			Expect: regress.Expect{Status: "violation", Invariant: noDivergence, Length: 16, Slow: true},
		}},
		Scope: "--checkpoints models SingleDirectoryDbLedgerStorage's checkpoint at any moment (flushInterval is a clock) and one ledger directory; a checkpoint with a non-empty write cache is possible at any time (other ledgers' entries), an empty one only when this ledger has no entry waiting; the deletion of a collected ledger from the index is applied at once, not at the next checkpoint. PR #4843 alone leaves the lost-fence section's case: the fence of a bookie with no entry is answered before its record is durable, and its record is skipped at replay.",
	},
	{
		ID: "f-4872", Title: "AutoRecovery retries for ever a ledger whose only replica is lost (Qw = 1)",
		Upstream: "apache/bookkeeper#4872 (open, 2026-08: \"Prevent endless AutoRecovery retries for single-replica ledgers\"); PR #4873 (open)",
		Question: "With Qw = 1 and the one bookie holding an acknowledged entry lost for good, does AutoRecovery ever stop working on the ledger, under any fairness?",
		Code:     "replication/ReplicationWorker.rereplicate (a fragment whose entries no bookie can serve fails with BKLedgerRecoveryException; the re-check still finds it bad; deferLedgerLockReleaseOfFailedLedger releases the lock to be tried again), Auditor.auditBookies (marks the ledger again while the bookie is lost)",
		Story:    "No: it loops for ever. E = Qw = Qa = 1, bookies b1,b2, AutoRecovery on. The writer's entry 1 is acknowledged by b1, b1 loses its disk (cookie validation keeps it down), the Auditor marks the ledger with b1 missing, and the writer closes the ledger. The worker takes the lock, finds the closed fragment bad, cannot read entry 1 from any bookie (it goes into unableToReadEntriesForReplication), re-checks, and releases the lock; it takes it again, tryReadingFaultyEntries fails to read entry 1 again and skips the fragment, the lock is released, and the behaviour repeats these two runs for ever. The lasso holds under weak fairness of every action (--fair all): nothing in BookKeeper ends the loop. When the bookie only crashed, the same loop exists but is unfair to its restart: with --fair BookieRestarts the ledger is always eventually marked replicated (708 (state, pending) pairs, exhaustive).\n\nReport for BookKeeper: preconditions: Qw = 1 (or every replica of an entry lost), AutoRecovery on; consequence: the ledger stays in the under-replicated list and the worker retries it for ever (backoff, then lockReleaseOfFailedLedgerGracePeriod); fix: declare such a ledger unrecoverable (PR #4873's proposal). The PR's diff could not be fetched (no refs/pull/4873 in the mirror of apache/bookkeeper), so the fix is not modelled: bkcheck models fixes from their diffs only.",
		Master:   endlessRecovery(),
		Expect:   regress.Expect{Status: "violation", Invariant: "repaired", Length: 13},
		Scope:    "One ledger, one Auditor, one worker; the timers (the audit delay, the worker's backoff) are may-fire actions; the worker's run steps (acquire, copy, release) are each one step. The property is CEL, repaired = size(ur_missing) > 0 ~> size(ur_missing) == 0, decided by the fair-cycle search over the (state, pending) graph (docs/properties.md): 361 pairs, 614 edges, 19 cyclic components, exhaustive. docs/model.md lists what the AutoRecovery model leaves out.",
	},
	{
		ID: "f-ar-below-qw", Title: "AutoRecovery's periodic check never repairs an acknowledged entry left below Qw inside a fragment", New: true,
		Upstream: "apache/bookkeeper#3887 (open) and PR #3917's discussion of what LedgerChecker reads; docs/guarantees.md's question whether acknowledged entries reach Qw copies",
		Question: "With AutoRecovery on and its defaults, does an acknowledged entry of a closed ledger that a bookie of its write set missed ever get its Qw copies?",
		Code:     "client/LedgerChecker.verifyLedgerFragment (with auditorLedgerVerificationPercentage = 0, the default, only each bookie's first and last stored entry of a fragment is read), replication/AuditorCheckAllLedgersTask, AuditorReplicasCheckTask (reports NUM_LEDGERS_HAVING_LESS_THAN_WQ_REPLICAS_OF_AN_ENTRY, never marks a ledger)",
		Story:    "No, not when the missed entry is inside a fragment. E = Qw = 2, Qa = 1, bookies b1,b2, entries 1 to 3 in flight together. The write of entry 2 to b1 is lost; b2 acknowledges all three and the writer closes the ledger at 3 without an ensemble change (its timeout has not fired). b1 holds entries 1 and 3, b2 all three. The Auditor's periodic check reads b1's first and last entry of the fragment, 1 and 3, finds both, and never marks the ledger; no bookie is lost, so the bookie audit never does either. Nothing else can happen: entry 2 stays on one bookie for good. The replicas check (auditorReplicasCheckInterval, off by default) would count it in a metric but does not mark the ledger, so it does not repair it either.\n\nReport for BookKeeper: preconditions: Qa < Qw, one lost write inside a fragment (the writer goes on without an ensemble change), AutoRecovery with its default auditorLedgerVerificationPercentage = 0; consequence: the entry survives one bookie fault fewer than Qw promises, with no alarm but a metric; remedy: auditorLedgerVerificationPercentage = 100, or the replicas check marking what it finds.",
		Master:   belowQw(0),
		Expect:   regress.Expect{Status: "violation", Invariant: "ReachesQw", Length: 14},
		Told: []Told{{
			Name: "BookKeeper " + now + ", told step by step: a read-only bookie, no message lost",
			Why: "the question's trace loses the write of entry 2 on a live connection and delivers entry 3 after it, which TCP does not do; asked of the BookKeeper model losing no message but to a crashed bookie, the shortest violation (18 states) closes the ledger without the writer ever taking the crashed bookie's failure, which the connection's reset tells Java at once. " +
				"The story: entries 2 and 3 in flight; b1 turns read-only and rejects entry 2 (EREADONLY), turns writable again and stores entry 3; b2 stores both. Entry 2's op is complete (Qa = 1) when b1's rejection arrives, so the failure waits for the writer's next add (delayedWriteFailedBookies, handled in PendingAddOp.initiate), which never comes, and the writer closes at 3 with b1 in the only fragment. " +
				"b1 holds 1 and 3: the periodic check reads each bookie's first and last entry of the fragment, finds both, and never marks the ledger",
			Config: readOnlyFlapOnRelease(),
			Steps: []string{
				"ClientCreatesLedger(c1)", "ClientSendsAddEntryRequests(c1) e1",
				"BookieSendsAddConfirmedResponse(b1, c1) e1", "BookieSendsAddConfirmedResponse(b2, c1) e1",
				"ClientReceivesAddConfirmedResponse(b1, c1) e1", "ClientReceivesAddConfirmedResponse(b2, c1) e1",
				"ClientSendsAddEntryRequests(c1) e2", "ClientSendsAddEntryRequests(c1) e3",
				"BookieBecomesReadOnly(b1)", "BookieSendsAddReadOnlyResponse(b1, c1) e2", "BookieBecomesWritable(b1)",
				"BookieSendsAddConfirmedResponse(b1, c1) e3", "BookieSendsAddConfirmedResponse(b2, c1) e2", "BookieSendsAddConfirmedResponse(b2, c1) e3",
				"ClientReceivesAddConfirmedResponse(b2, c1) e2", "ClientReceivesAddErrorResponse(b1, c1) e2",
				"ClientReceivesAddConfirmedResponse(b1, c1) e3", "ClientReceivesAddConfirmedResponse(b2, c1) e3",
				"ClientClosesLedgerSuccess(c1)",
			},
		}},
		Scope: "The spec's writer; the ensemble change and resends left out (--exclude-actions), and the behaviours that lose at most one message (a state constraint): the question is whether AutoRecovery repairs a hole, not how the hole arises, which docs/guarantees.md asks. The property is a terminal-state property (in a state where nothing, AutoRecovery included, can happen any more, every entry of a closed ledger has Qw copies), so a violation is an entry below Qw for good. With three bookies and auditorLedgerVerificationPercentage = 100 (--auditor-verification-percentage 100, which finds the hole) the search did not finish: 122,754,432 states, depth 39, 5 minutes, 17 GiB, not exhaustive; the remedy is therefore not checked here.",
	},
	{
		ID: "f-3887", Title: "Decommission waits for ever on a ledger whose only copy of an acknowledged entry was on the bookie",
		Upstream: "apache/bookkeeper#3887 (open, 2023-03: \"Bookkeeper decommission may be blocked by ledgers that cannot be replicated\"); PR #3917 (merged, 4.14.8/4.15.5/4.16.2) fixed one way to it, a LAC read below the last entry",
		Question: "With AutoRecovery on and every action weakly fair, can `bookkeeper shell decommissionbookie` of a stopped bookie of a closed ledger never return?",
		Code:     "client/BookKeeperAdmin.decommissionBookie (refuses a registered bookie, triggerAudit, then waitForLedgersToBeReplicated polls areEntriesOfLedgerStoredInTheBookie with no bound), replication/ReplicationWorker.rereplicate (a fragment no bookie can serve an entry of fails; the lock is released and the ledger tried again), client/LedgerChecker.verifyLedgerFragment (first and last entry per bookie)",
		Story:    "Yes, with no lost message. E = Qw = 2, Qa = 1, bookies b1..b3, AutoRecovery on. b1 is down when the writer sends entry 1, so only b2 stores it; b2's acknowledgement is the Ack quorum, b1 restarts without the entry, and the writer closes the ledger at 1 without an ensemble change. The operator stops b2 for good and runs decommissionbookie on it. The Auditor marks the ledger (b2 lost, and its check finds b1 lacking entry 1); the worker takes the lock and must replace both bookies of the fragment with b3 alone: BookKeeperAdmin.getReplacementBookiesByIndexes fails with BKNotEnoughBookiesException before anything is read (and had there been two spares, entry 1 could be read from no bookie: b2 is gone and b1 never had it). The fragment fails, the lock is released and taken again, and the behaviour repeats for ever; the command's poll finds b2 still in the ledger's only segment every time, so it never returns and never says why (it logs the count of ledgers left). Nothing in BookKeeper ends the wait: the lasso is fair to every action, the stopped bookie's restart excepted, which the operator's decommission rules out. The entry's only copy was on the decommissioned bookie, which the operator's check before stopping it (`listunderreplicated` empty, #3887's step 1) cannot see: the Auditor's periodic check runs weekly and reads only each bookie's first and last entry of a fragment (f-ar-below-qw).\n\nReport for BookKeeper: preconditions: Qa < Qw, an acknowledged entry a bookie of its write set missed (it was down, or the write was lost, with no ensemble change), that write set's other bookie decommissioned; consequence: decommissionbookie never returns, and the entry is lost with the bookie; remedy: before stopping a bookie, run the Auditor's check with auditorLedgerVerificationPercentage = 100 (or the replicas check, which counts such entries) and wait for the under-replicated list to empty; in the tool, a bound on the wait that names the ledgers it cannot replicate (PR #3974 proposed printing them).",
		Master:   decommissionBlocked(1),
		Expect:   regress.Expect{Status: "violation", Invariant: "Decommissions", Length: 14, Slow: true},
		Told: []Told{{
			Name: "BookKeeper " + now + ", told step by step",
			Why: "asked of the BookKeeper model, the question's fair-cycle search does not finish here: with BookKeeper's writer, recovery and storage it passed 194,026,449 orbits at depth 27 in 22.6 GiB, and 40,000,000 at depth 34 with the periodic check off and checkpoints, journal syncs and failed recovery reads left out. " +
				"The story: the write of entry 1 to b1 is lost (its connection stalls, and nothing else is sent on it), b2 acknowledges it (Qa = 1), and the writer closes the ledger at 1 without an ensemble change (the op completed). " +
				"The operator stops b2 for good; once its registration is gone decommissionbookie starts, triggers the Auditor's audit and waits. The periodic check finds b1 lacking entry 1 (it reads each bookie's first and last entry of the fragment), so the fragment needs two replacements and only b3 is spare: getReplacementBookiesByIndexes throws BKNotEnoughBookiesException, the lock is released, and the worker's cycle repeats for ever",
			Config: decommissionToldOnRelease(),
			Steps: []string{
				"ClientCreatesLedger(c1)", "ClientSendsAddEntryRequests(c1) e1 lost:{b1}", "BookieSendsAddConfirmedResponse(b2, c1) e1",
				"ClientReceivesAddConfirmedResponse(b2, c1) e1", "ClientClosesLedgerSuccess(c1)",
				"BookieCrashes(b2)", "BookieRegistrationExpires(b2)", "AdminDecommissionsBookie(b2)",
				"AuditorMarksLedgerUnderreplicated missing:{b2}", "AuditorChecksLedger missing:{b1}",
				"WorkerAcquiresLedger", "WorkerReplicatesFragment fragment@e1", "WorkerReleasesLedger",
				"WorkerAcquiresLedger", "WorkerReplicatesFragment fragment@e1", "WorkerReleasesLedger",
			},
			Loop: 14,
		}},
		Scope: "One ledger with one entry, one Auditor, one worker, one decommission; the writer's ensemble change and resends left out (--exclude-actions: with them, master's shortest way to block the command is f-4551's worker death on an empty last fragment, 15 states), no lost message (a recovery's read lost on the wire waits for ever in the model: docs/model.md, \"Decommission\"). The property is CEL, Decommissions = size(decom_bookie) > 0 && meta_status == \"STATUS_CLOSED\" ~> decom_done, under weak fairness of every action (--fair all), decided by the fair-cycle search over the (state, pending) graph. With Qa = Qw = 2 the same question holds (every acknowledged entry is on both bookies of its write set, so one of them can always serve the copy): 3,304,447 orbits, 3,528,054 (state, pending) pairs, exhaustive. docs/model.md lists what the AutoRecovery and decommission model leaves out.",
	},
	{
		ID: "f-4551", Title: "The ReplicationWorker's thread dies on a closed ledger's empty last fragment",
		Upstream: "PR #4551 (open, 2025-02: \"fix IllegalArgumentException('inconsistent range')\")",
		Question: "Can AutoRecovery reach a closed ledger whose last fragment starts past its last entry, with a bookie of it lost, after a replication of the ledger failed to read an entry, so that tryReadingFaultyEntries asks for an inconsistent range and the worker stops?",
		Code:     "replication/ReplicationWorker.tryReadingFaultyEntries (unableToReadEntriesForReplication.subSet(first, true, last, true)), ReplicationWorker.run (catches InterruptedException, BKException, NonRecoverableReplicationException and UnavailableException only), AutoRecoveryMain.AutoRecoveryDeathWatcher (shuts AutoRecovery down when the worker is not running), client/LedgerChecker.checkLedger (a closed ledger's last fragment [first, lastEntryId] even when empty)",
		Story:    "Yes, with no lost message. E = Qw = Qa = 1, bookies b1..b3. The writer's entry 1 is acknowledged by b1 and entry 2 is sent to it; b1 crashes, the writer replaces it by b2 (a fragment from entry 2) and closes the ledger at 1: the last fragment is empty. b2 loses its disk. The Auditor marks the ledger with both missing; the worker cannot read entry 1 anywhere, so it goes into unableToReadEntriesForReplication; for the empty fragment tryReadingFaultyEntries asks the set for subSet(2, true, 1, true), which throws IllegalArgumentException(\"inconsistent range\"). ReplicationWorker.run does not catch it: the worker's thread dies and the death watcher shuts AutoRecovery down; no ledger of the cluster is repaired until an operator restarts it (and the restarted worker can reach the same state). With PR #4551 the empty fragment is handled (nothing to copy, b2 swapped out) and the worker never stops.\n\nReport for BookKeeper: preconditions: a closed ledger whose last ensemble holds no entry (an ensemble change followed by a close at the earlier LAC) with a bookie of it lost, and an entry of the ledger the worker could not read before; consequence: AutoRecovery stops on the whole cluster; fix: PR #4551 (checked), or catching RuntimeException in ReplicationWorker.run.",
		Master:   inconsistentRange(""),
		Expect:   regress.Expect{Status: "violation", Invariant: "WorkerRuns", Length: 14},
		Fixes: []Fix{{
			Name:   "PR #4551",
			Change: "tryReadingFaultyEntries returns true for a fragment whose first entry is past its last (its diff: refs/pull/4551/head 9c1acb5a; variant skip-inconsistent-range)",
			Config: inconsistentRange(spec.VariantSkipInconsistentRange),
			Expect: regress.Expect{Status: "ok", Distinct: 213413},
		}},
		Also: []Fix{{
			Name:   "master, messages lost",
			Change: "every message may be lost",
			Config: lossy(inconsistentRange("")),
			Expect: regress.Expect{Status: "violation", Invariant: "WorkerRuns", Length: 14},
		}, {
			Name:   "PR #4551, messages lost",
			Change: "the same",
			Config: lossy(inconsistentRange(spec.VariantSkipInconsistentRange)),
			Expect: regress.Expect{Status: "ok", Distinct: 53550227, Slow: true},
		}, {
			Name: "BookKeeper " + now,
			Change: "asked of the BookKeeper model: the Java client's ensemble change, sequence recovery reads, DbLedgerStorage's crash rule; " +
				"a recovery's failed read and an idle checkpoint, which the question needs neither of, left out; its shortest trace runs the Auditor's periodic check where master's has the bookie audit",
			Config: inconsistentRangeOnRelease(""),
			Expect: regress.Expect{Status: "violation", Invariant: "WorkerRuns", Length: 16},
		}, {
			Name:   "PR #4551 on BookKeeper " + now,
			Change: "the same",
			Config: inconsistentRangeOnRelease(spec.VariantSkipInconsistentRange),
			Expect: regress.Expect{Status: "ok", Distinct: 26697162, Slow: true},
		}},
		Told: []Told{{
			Name: "BookKeeper " + now + ", told step by step",
			Why: "the BookKeeper model's shortest trace (also asked) puts the stopped b1 in the writer's new ensemble and closes the ledger before the change completes; BookKeeper's writer resends entry 2 to b1 as the metadata write completes, the refused connection fails it at once, and a second ensemble change starts before the close, so the last fragment's bookie is the placement's, not the trace's. " +
				"The story: b1 stores and acknowledges entry 1; entry 2 is sent to it and b1 loses its disk (it stays registered); b3 is stopped and unregistered meanwhile, so the writer's ensemble change can only put b2 in the fragment from entry 2, and b3 starts again. The writer closes the ledger at 1 with entry 2's write to b2 still in flight: the last fragment, b2's, is empty. " +
				"b2 stops and its registration expires; the Auditor marks the ledger with b2 lost. The worker finds both fragments bad (b1 is down; b2, which should store nothing there, is unregistered: verifyLedgerFragment asks BookieWatcher), fails to copy entry 1 to b3 (no bookie serves it), and dies on the empty fragment",
			Config: inconsistentRangeTold(),
			Steps: []string{
				"ClientCreatesLedger(c1)", "ClientSendsAddEntryRequests(c1) e1", "BookieSendsAddConfirmedResponse(b1, c1) e1",
				"ClientReceivesAddConfirmedResponse(b1, c1) e1", "ClientSendsAddEntryRequests(c1) e2",
				"BookieCrashes(b3)", "BookieRegistrationExpires(b3)", "BookieLosesDisk(b1)", "ClientReceivesAddTimeout(b1, c1) e2",
				"ClientUpdatesEnsembleMetadata(c1) replaced:{b1}", "BookieRestarts(b3)", "ClientClosesLedgerSuccess(c1)",
				"BookieCrashes(b2)", "BookieRegistrationExpires(b2)", "AuditorMarksLedgerUnderreplicated missing:{b2}",
				"WorkerAcquiresLedger", "WorkerReplicatesFragment fragment@e1", "WorkerDiesOnInconsistentRange fragment@e2",
			},
		}},
		Scope: "The first searches use a reliable network (the trace needs no lost message; messages to a crashed bookie are still lost); with message loss (also asked) master's shortest trace is the same 14 states and the fix is clean, exhaustive. One Auditor and one worker; a supervisor restarting AutoRecovery is not modelled. docs/model.md lists what the AutoRecovery model leaves out.",
	},
	{
		ID: "f-preboot", Title: "With journalWriteData=false and data-integrity checking, a bookie serves before its pre-boot check has run", New: true,
		Question: "With journalWriteData=false and dataIntegrityChecking=true, does a bookie restarting after an unclean shutdown answer reads and fences before the check has put its open ledgers in limbo, and can that lose an acknowledged entry?",
		Code:     "server/EmbeddedServer (the future of DataIntegrityCheck.runPreBootCheck is not awaited before the bookie starts), DataIntegrityCheckImpl.processPreBoot (limbo, then fence), ReadEntryProcessor (a bookie in limbo answers Unknown for what it lacks)",
		Story:    "Yes. E = Qw = Qa = 2, bookies b1,b2. Both bookies store and acknowledge entry 1 (acknowledged before any disk write: journalWriteData=false), the writer has b1's ack, and b1 crashes (the entry was not flushed) and restarts: the pre-boot check starts, but the bookie serves at once. b2's ack arrives: LAC = 1. A recovery client fences b1 and reads entry 1 from it; b1, not yet in limbo, answers NoSuchEntry instead of Unknown, and that one negative (Qw − Qa + 1 = 1) closes the ledger empty: the acknowledged entry is lost. BookKeeper 4.18.2 did it, every step as the model took it, ten runs of ten: the bookies with dataIntegrityChecking=true and journalWriteData=false, b1's crash a power loss of its machine (the harness's FUSE disks), its restart's pre-boot check held by the harness's agent until the trace ended.\n\nReport for BookKeeper: preconditions: journalWriteData=false with dataIntegrityChecking=true (the configuration BP-46 is for), one unclean shutdown, a recovery reading the bookie before its check has run; consequence: an acknowledged entry is not in the closed ledger; fix: wait for runPreBootCheck before the bookie serves (or refuse reads and fences until it is done).",
		Master:   preBoot(""),
		Expect:   regress.Expect{Status: "violation", Invariant: noDivergence, Length: 16},
		Fixes: []Fix{{
			Name:   "await the check",
			Change: "the restart runs the check before the bookie serves (variant await-preboot-check)",
			Config: preBoot(spec.VariantAwaitPreBootCheck),
			Expect: regress.Expect{Status: "ok", Distinct: 56572},
		}, {
			Name:   "await the check, the crash at any time",
			Change: "as above, without the constraint: the crash may come after recovery fenced the bookie (variant await-preboot-check)",
			Config: preBootAnyTime(spec.VariantAwaitPreBootCheck),
			Expect: regress.Expect{Status: "violation", Invariant: noDivergence, Length: 16},
		}, {
			Name:   "await the check and durable fence replies",
			Change: "the restart runs the check before the bookie serves, and every fencing read is answered only once its fence record is in the journal; the crash at any time (variant await-preboot-check-durable-fence)",
			Config: preBootAnyTime(spec.VariantBothFenceFixes),
			Expect: regress.Expect{Status: "ok", Distinct: 122409},
		}, {
			Name:   "both fixes at E = 5, Qw = 3, Qa = 2",
			Change: "the same two changes at docs/guarantees.md's setting, 5 bookies, where today's code loses an entry after 24 states with one lost message; the behaviours that lose at most one message (a state constraint)",
			Config: preBootE5(spec.VariantBothFenceFixes),
			Expect: regress.Expect{Status: "ok", Distinct: 8120907, Slow: true},
		}},
		Scope: "It holds for journalWriteData=false with dataIntegrityCheckingEnabled=true, and only there: with the journal writing data (the default) an acknowledged entry is replayed at restart, and without the check nothing puts a ledger in limbo, so the question does not arise (f-fence-lost is the default configuration's). The question's search and the first fix's have the crash before any recovery starts (a state constraint). A crash after recovery fenced the bookie can lose the fence itself (f-fence-lost, the section above), which awaiting the check does not address: once recovery has closed the ledger, the check (open ledgers only) fences nothing, so the second fix's search, without the constraint, finds the old writer's add accepted again; the third, both fixes, is clean. docs/guarantees.md asks the question at E = 5, Qw = 3, Qa = 2 (striped, 5 bookies): today's code loses an entry there too (24 states, one lost message), and the fourth search checks both fixes there for every behaviour that loses at most one message. BookKeeper's rules on; the spec's writer; the actions that cannot put an acknowledged entry beyond a closed ledger's end when the ensemble holds every bookie are left out (fenced rejections, the writer's close, resends, ensemble changes and recovery write-backs: the argument docs/guarantees.md's data-loss questions use, which its TestRestrictedDataLossAgrees checks; without them left out the fix's search is clean too, 3,991,118 orbits, 49 s). With BookKeeper's default sequence read (--recovery-read sequence) the master question is violated by a 16-state trace with no lost message (recovery asks the restarted bookie alone, and its NoSuchEntry closes the ledger), and the await-the-check fix stays clean: 286,703 orbits, exhaustive. On 4.18.2 the second fix's trace is REPRODUCED with the check awaited, once the harness holds the fence record back from the journal until the model's sync (the model's crash comes within the milliseconds between the fencing answer and the journal's write and fsync of the record). Without that hold it diverged at step 13: BookKeeper's record survived, and replayed after the awaited check it found the empty master key the check stores for a ledger the bookie holds nothing of, so the bookie refused the writer's add as unauthorized (docs/model.md, --data-integrity).",
	},
	{
		ID: "f-4812", Title: "A fresh bookie at a decommissioned address accepts a stale writer's add",
		Upstream: "apache/bookkeeper#4812 and apache/pulsar#26074 (both open); PR #4592 (merged 2025-12) makes deleting the cookie part of the decommission API",
		Question: "After a bookie of an open ledger is decommissioned (its cookie deleted) and a fresh, empty bookie starts at the same address, can the old writer reach Ack quorum beyond the end of the ledger another client recovered?",
		Code:     "Cookie validation (a new environment: no pre-boot check), WriteEntryProcessor / BookieImpl.addEntry (an unknown ledger gets a new, unfenced handle: HandleFactoryImpl.getHandle)",
		Story:    "Yes (docs/bugs.md#bk-4812 tells the trace). The candidate fix: a bookie asked for a normal add to a ledger it holds nothing of reads the ledger's metadata and answers EFENCED if it is CLOSED or IN_RECOVERY.",
		Master:   bugByID("bk-4812").Bug,
		Expect:   slow(bugByID("bk-4812").Expect),
		Fixes: []Fix{{
			Name:   "metadata check on an unknown ledger",
			Change: "variant add-checks-metadata",
			Config: bugByID("bk-4812").Fixed,
			// Unbounded here (docs/bugs.md bounds it): exhaustive, 14 GiB.
			Expect: regress.Expect{Status: "ok", Distinct: 177533548, Slow: true},
		}},
		Scope: "As in docs/bugs.md: the re-format only after the ledger closed (a state constraint), actions that cannot matter left out.",
	},
	{
		ID: "f-4462-restart", Title: "A restart forgets the fence that PR #4462 keeps for a deleted ledger", New: true,
		Upstream: "PR #4462 (merged 2024-09); apache/pulsar#20094 and #24901 (open) report a stale broker's writes to a ledger another broker took over",
		Question: "Is a stale writer's add to a fenced, closed, deleted and garbage-collected ledger still acknowledged on master if a bookie restarts?",
		Code:     "HandleFactoryImpl.recentlyFencedAndDeletedLedgers (an in-memory cache, expireAfterAccess 7 days) and markIfConflictWritingOccurs (marks a deleted ledger only if its handle is loaded and fenced)",
		Story:    "Yes: the marker lives in memory only, so a bookie that restarts after it garbage-collected the ledger answers the old writer's add with a fresh, unfenced handle, and the add reaches Ack quorum on a deleted ledger (docs/bugs.md#bk-4462 tells the mechanism of the bug the PR fixed). Report for BookKeeper: preconditions: the ledger fenced by a new owner, closed and deleted, a bookie restart after its garbage collection (or after the 7 days); consequence: messages acknowledged into a deleted ledger; fix: keep a fenced ledger's fence through its collection, durably (checked below), or persist the marker.",
		Master: check.ModelConfig{Params: spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, DeleteLedger: true, Crashes: 1},
			Symmetry: both, Settings: properties.Settings{Constraint: []string{crashAfterCollect}}},
		Expect: regress.Expect{Status: "violation", Invariant: noDivergence, Length: 19, Slow: true},
		Fixes: []Fix{{
			Name:   "durable tombstone",
			Change: "a bookie that collects a deleted ledger it has fenced keeps the fence durably, handle loaded or not (variant collect-keeps-fence)",
			Config: check.ModelConfig{Params: spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, DeleteLedger: true, Crashes: 1, Variant: spec.VariantCollectKeepsFence},
				Symmetry: both, Settings: properties.Settings{Constraint: []string{crashAfterCollect}}},
			Expect: regress.Expect{Status: "ok", Distinct: 1083348, Slow: true},
		}},
		Scope: "The crash comes after every bookie collected the ledger (a state constraint): a crash before can lose a fence not yet flushed, the question of f-fence-lost, which needs no deletion at all. Asked in its two other forms, on a reliable network and with BookKeeper's default sequence recovery read (with the spec's parallel read a reliable network stalls recovery: docs/model.md): a rolling restart of both bookies after both collected the ledger, both fenced before the deletion (bkcheck check --bookies 2 --clients 2 --write-quorum 2 --ack-quorum 2 --entries 1 --inflight 1 --crashes 2 --reliable-network --recovery-read sequence --delete-ledger --symmetry bookies,clients --constraint 'CrashAfterCollect=faults_used.crashes == 0 || size(b_collected) == params.bookies' --constraint 'FencedBeforeDelete=!meta_deleted || size(b_collected) > 0 || b_fenced.all(b, b_fenced[b])'): violated, 21 states, no message lost: recovery fences both, closes and deletes, both bookies collect, b1 and b2 restart in turn, and the stale writer's add is acknowledged by both (220,783 orbits searched). A restart between the fence and the collection, with every fence reply durable (--variant durable-fence-reply, so that only the handle is lost; --constraint 'RestartsBeforeCollect=faults_used.crashes == params.crashes || size(b_collected) == 0' in place of the first constraint): violated, 20 states: b2, fenced and restarted before it collects, has no handle loaded, so markIfConflictWritingOccurs does not mark the ledger and b2 accepts the add after its collection (569,982 orbits searched).",
	},
}

// slow marks an expectation slow: bkcheck regress and the default test
// tier run it once, as a bug of docs/bugs.md, not again as a finding.
func slow(e regress.Expect) regress.Expect {
	e.Slow = true
	return e
}

// bugByID returns the bug of All with that id (it must exist).
func bugByID(id string) Bug {
	for _, b := range All {
		if b.ID == id {
			return b
		}
	}
	panic("bugs: no bug " + id)
}

// tell builds a finding's i-th story, keeps its trace, and writes its
// list item: the command that builds it, the steps, what it shows, and
// its runs on real bookies. It returns the verdict, linked to the trace.
func tell(sections *strings.Builder, page *Page, f Finding, i int, x Told) (string, error) {
	tr, err := check.Build(x.Config, x.Steps, x.Loop)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", f.ID, x.Name, err)
	}
	path := f.TraceOf(i)
	page.Traces[path] = tr
	verdict := fmt.Sprintf("%s violated, %d-state trace (told)", tr.Invariant, len(tr.Steps))
	what := "a witness of the probe"
	if tr.Terminal {
		what = "it ends in a state without successor, which fails the property"
	}
	if tr.Loop > 0 {
		what = fmt.Sprintf("a lasso whose last state returns to state %d, so the behaviour repeats the steps after it for ever, weakly fair to every action --fair names", tr.Loop)
	}
	file := filepath.Base(path)
	lines := "the lines below"
	if x.Loop > 0 {
		lines += " (`loop` before the cycle's first step)"
	}
	fmt.Fprintf(sections, "- **%s** (%s), `bkcheck trace build %s --trace-out %s STEPS`, STEPS %s: %s, every step a transition of the model; the trace is [%s](%s).\n\n  ```\n",
		x.Name, x.Why, flags(x.Config), file, lines, what, file, path)
	for i, st := range x.Steps {
		if x.Loop > 0 && i == x.Loop-1 {
			sections.WriteString("  loop\n")
		}
		fmt.Fprintf(sections, "  %s\n", st)
	}
	sections.WriteString("  ```\n\n")
	if on := onBookKeeper(path); on != "" {
		fmt.Fprintf(sections, "  %s\n", on)
	}
	return fmt.Sprintf("[%s](%s)", verdict, path), nil
}

// FindingCases are the regression cases of the findings: master's verdict
// and each fix's.
func FindingCases() []regress.Case {
	var out []regress.Case
	for _, f := range Findings {
		out = append(out, regress.Case{File: "findings", Name: f.ID, Config: check.Config{ModelConfig: f.Master}, Expect: f.Expect})
		for i, x := range f.Fixes {
			out = append(out, regress.Case{File: "findings", Name: fmt.Sprintf("%s-fix%d", f.ID, i+1), Config: check.Config{ModelConfig: x.Config}, Expect: x.Expect})
		}
		for i, x := range f.Also {
			out = append(out, regress.Case{File: "findings", Name: fmt.Sprintf("%s-also%d", f.ID, i+1), Config: check.Config{ModelConfig: x.Config}, Expect: x.Expect})
		}
	}
	return out
}

// GenerateFindings runs every finding and fix and returns docs/findings.md
// with its traces (under traces/findings/). A drift from an expectation is
// an error, as for the bugs page.
func GenerateFindings(ctx context.Context, opt Options) (*Page, error) {
	page := &Page{Traces: map[string]*traces.Trace{}}
	var b, sections strings.Builder
	b.WriteString(`# Open BookKeeper questions, settled

Generated by bkcheck; regenerate with

    bkcheck findings --out docs/findings.md

Each section is a question about BookKeeper that is still open upstream (or
that no upstream issue asks yet: marked **new**), asked of the model of ` + Master + `
and of each proposed fix. A violated property comes with the shortest
trace (breadth-first: none shorter exists in that configuration; the ITF
file replays with ` + "`bkcheck replay`" + `); "clean, exhaustive" means every
reachable state of the configuration shown was checked. The questions about
the client's add path use ` + "`--add-path java`" + `, the Java client's
PendingAddOp and LedgerHandle as docs/model.md describes them, with every
step's source. ` + "`bkcheck regress`" + ` fails if a verdict changes. Where no
search here reaches a question on BookKeeper's model, a story of it is
told step by step and built with ` + "`bkcheck trace build`" + ` (marked told): every
step a transition of the model and the property answered (a lasso's cycle
fair to every action), a real behaviour but not the shortest.

| question | master | proposed fixes | also asked |
|---|---|---|---|
`)
	for _, f := range Findings {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		found, ftr, err := run(ctx, check.Config{ModelConfig: f.Master}, f.Expect)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.ID, err)
		}
		trace := "traces/findings/" + f.ID + ".itf.json"
		if ftr != nil {
			page.Traces[trace] = ftr
		} else {
			page.Unused = append(page.Unused, trace)
		}
		title := f.Title
		if f.New {
			title += " (**new**)"
		}
		fmt.Fprintf(&sections, "## %s\n\n<a id=\"%s\"></a>", title, f.ID)
		if f.Upstream != "" {
			fmt.Fprintf(&sections, "**Upstream**: %s.\n\n", f.Upstream)
		} else {
			sections.WriteString("**Upstream**: no issue describes it.\n\n")
		}
		fmt.Fprintf(&sections, "**Question**: %s\n\n**Code** (%s): %s.\n\n", f.Question, Master, f.Code)
		fmt.Fprintf(&sections, "**Master**, `bkcheck check %s`: %s", flags(f.Master), found.detail())
		if ftr != nil {
			fmt.Fprintf(&sections, "; the trace is [%s](%s)", f.ID+".itf.json", trace)
		}
		sections.WriteString(".\n\n" + f.Story + "\n\n")
		if on := onBookKeeper(trace); on != "" {
			sections.WriteString(on + "\n\n")
		}
		// unfixed: the trace of each configuration asked without a fix, by
		// its flags.
		unfixed := map[string]string{}
		// ask runs one more search of the question (a fix, or one asked
		// in another scope), keeps its trace as <id>-<suffix>.itf.json,
		// writes its list item (with the trace's link when link is set)
		// and reports it; it returns the verdict, linked to the trace.
		ask := func(x Fix, suffix string, link bool) (string, error) {
			res, xtr, err := run(ctx, check.Config{ModelConfig: x.Config}, x.Expect)
			if err != nil {
				return "", fmt.Errorf("%s %s: %w", f.ID, x.Name, err)
			}
			file := f.ID + "-" + suffix + ".itf.json"
			path := "traces/findings/" + file
			note, detail := res.verdict(), res.detail()
			if xtr != nil {
				page.Traces[path] = xtr
				note = fmt.Sprintf("[%s](%s)", note, path)
				if link {
					detail += fmt.Sprintf("; the trace is [%s](%s)", file, path)
				}
			} else {
				page.Unused = append(page.Unused, path)
			}
			fmt.Fprintf(&sections, "- **%s** (%s), `bkcheck check %s`: %s.\n", x.Name, x.Change, flags(x.Config), detail)
			if on := onBookKeeper(path); on != "" {
				fmt.Fprintf(&sections, "  %s\n", on)
			}
			if on := withFix(trace, x.Config.Variant); on != "" && strings.HasPrefix(suffix, "fix") {
				fmt.Fprintf(&sections, "  %s\n", on)
			}
			// A fix asked in another scope: the runs, with it woven in, of
			// the trace asked there without it.
			if base, ok := unfixed[flags(withVariant(x.Config, ""))]; ok && x.Config.Variant != "" && strings.HasPrefix(suffix, "also") {
				if on := withFix(base, x.Config.Variant); on != "" {
					fmt.Fprintf(&sections, "  %s\n", strings.Replace(on, "The finding's trace", "That trace", 1))
				}
			}
			if x.Config.Variant == "" && xtr != nil {
				unfixed[flags(x.Config)] = path
			}
			if opt.Report != nil {
				opt.Report(fmt.Sprintf("%-16s %s: %s", f.ID, x.Name, res.short()))
			}
			return note, nil
		}
		// cell asks each of xs (trace suffixes prefix1, prefix2, ...) and
		// returns the table cell of their verdicts (none without any).
		cell := func(xs []Fix, prefix string, link bool, none string) (string, error) {
			var notes []string
			for i, x := range xs {
				note, err := ask(x, fmt.Sprintf("%s%d", prefix, i+1), link)
				if err != nil {
					return "", err
				}
				notes = append(notes, x.Name+": "+note)
			}
			if len(notes) == 0 {
				return none, nil
			}
			return strings.Join(notes, "; "), nil
		}
		fixCell, err := cell(f.Fixes, "fix", false, "none modelled")
		if err != nil {
			return nil, err
		}
		if len(f.Also)+len(f.Told) > 0 {
			sections.WriteString("\nAlso asked:\n\n")
		}
		alsoCell, err := cell(f.Also, "also", true, "—")
		if err != nil {
			return nil, err
		}
		for i, x := range f.Told {
			note, err := tell(&sections, page, f, i, x)
			if err != nil {
				return nil, err
			}
			if alsoCell == "—" {
				alsoCell = ""
			} else {
				alsoCell += "; "
			}
			alsoCell += x.Name + ": " + note
		}
		if opt.Report != nil {
			opt.Report(fmt.Sprintf("%-16s master: %s", f.ID, found.short()))
		}
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s |\n", f.Title, f.ID, found.verdict(), fixCell, alsoCell)
		fmt.Fprintf(&sections, "\nScope: %s\n\n", f.Scope)
		if ftr != nil {
			var mermaid bytes.Buffer
			if err := traces.RenderMermaid(&mermaid, ftr); err != nil {
				return nil, err
			}
			fmt.Fprintf(&sections, "```mermaid\n%s```\n\n", mermaid.String())
		}
	}
	b.WriteString("\n" + sections.String())
	page.Markdown = []byte(b.String())
	return page, nil
}
