package bugs

import (
	"fmt"
	"strings"
)

// A Run is a trace of docs/bugs.md, docs/findings.md or docs/guarantees.md
// executed on real bookies of one BookKeeper release with bkcheck confirm, and what
// BookKeeper did. The pages print these records; the real-BookKeeper test
// tier (cmd/bkcheck, BKCHECK_REAL=1) executes each again and fails on any
// difference, and the default tier does so for the verdicts given before
// any process starts (NOT EXECUTABLE by bridge.Preflight; a refusal during
// the run is the real tier's), so that the pages say only what was
// executed.
type Run struct {
	Trace   string // under docs/: traces/bugs/bk-2614.itf.json
	Release string // the BookKeeper release (bkcheck confirm --bookkeeper)
	// Verdict is bkcheck confirm's: REPRODUCED, NOT REPRODUCED, DIVERGED or
	// NOT EXECUTABLE; Step the step (1-based state) of the last two.
	Verdict string
	Step    int
	Says    string // what it means, in a sentence or two
	// Fix, if not empty, is the variant whose rules the bookies' agent
	// wove into the release's classes for the run (bkcheck confirm --fix):
	// a finding's trace run with a candidate fix, printed under the fix.
	Fix string
}

// The verdicts of bkcheck confirm, as the pages print them.
const (
	Reproduced    = "REPRODUCED"
	Diverged      = "DIVERGED"
	NotExecutable = "NOT EXECUTABLE"
	StepsAgreed   = "STEPS AGREED" // every step agreed; the property is not one the harness asks
)

// Runs are the executions of the pages' traces on real bookies.
var Runs = []Run{
	// Findings.
	{Trace: "traces/findings/f-create-window.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, the application's add run in its two halves at the model's steps (PendingAddOp.create at step 9, with the ensemble {b1,b2}; doAsyncAddEntry at step 13, after the ensemble change replaced b1 by b3): entry 1 goes to b1 and b2, and c1 acknowledges it while only b2 of the {b3,b2} the metadata names serves it (Qa = 2)"},
	{Trace: "traces/findings/f-create-window.itf.json", Release: "4.18.2", Fix: "ensemble-at-queue", Verdict: Diverged, Step: 13,
		Says: "the fix acts: the op takes the current ensemble {b3,b2} when it is queued (the agent's log in the client driver), so entry 1 goes to b3 and b2, not to the replaced b1"},
	{Trace: "traces/findings/f-create-window-also1.itf.json", Release: "4.18.2", Verdict: StepsAgreed,
		Says: "every step as the model took it, the create window included; AddsComplete (the writer waits for ever) is a property of the run's end that the harness does not ask of BookKeeper"},
	{Trace: "traces/findings/f-fence-lost.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step of the BookKeeper model's trace as the model took it, ten runs out of ten (its sequence recovery read included): the restarted bookie accepts the old writer's add after kill -9 (its fence of a ledger it held no entry of is gone), and the writer's entry 0 is acknowledged beyond the closed ledger's last entry -1. The earlier trace of the spec's model, rerun with BookieImpl and LedgerMetadataIndex logging at DEBUG, showed the fence record in the bookie's journal before the kill and replay skipping it (\"Ledger not found\", then \"Skip replaying entries of ledger since it was deleted\"): the mechanism of the second bullet below, not a record lost before the journal wrote it. Since 2026-12-07 the harness keeps b2's fence record back from its journal until the model's sync, as the model's step has it (a crash before the Journal thread writes it), and the trace is REPRODUCED so too"},
	{Trace: "traces/findings/f-4462-restart.itf.json", Release: "4.18.2", Fix: "collect-keeps-fence", Verdict: Diverged, Step: 16,
		Says: "the fix acts: b1 wrote a tombstone for the fenced ledger it collected (the agent's log), and after kill -9 and the restart it refuses the old writer's add EFENCED"},
	{Trace: "traces/findings/f-4462-restart.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, the deletion and both bookies' garbage collections included: after kill -9 and a restart the bookie accepts the old writer's add to the deleted ledger, and entry 0 is acknowledged beyond the last entry -1 the ledger was closed at"},
	{Trace: "traces/findings/f-4812.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step of the BookKeeper model's trace (bk-4812's) as the model took it, its speculative recovery read included (b3 asked while b2's read is outstanding: the read's speculative request fired by the harness at the model's step, the timer armed and never fired by the clock), the re-format being BookieShell bookieformat -deleteCookie: the fresh b1 completes the old writer's quorum after recovery closed the ledger"},
	{Trace: "traces/findings/f-4812.itf.json", Release: "4.18.2", Fix: "add-checks-metadata", Verdict: Diverged, Step: 17,
		Says: "the fix acts: the re-formatted b1, which holds nothing of the ledger, reads its metadata (CLOSED) and answers the old writer's add EFENCED (the agent's log)"},
	{Trace: "traces/findings/f-preboot.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, on bookies with dataIntegrityChecking=true and journalWriteData=false whose disks can lose power: b1's crash is a power loss (entry 0 was in its write cache only), its restart starts the pre-boot check, which the agent holds (the trace never takes BookieRunsPreBootCheck), and b1 serves: it answers recovery's fencing read and its read of entry 0 NoSuchEntry, and recovery closes the ledger empty with entry 0 acknowledged (10 of 10)"},
	{Trace: "traces/findings/f-preboot.itf.json", Release: "4.18.2", Fix: "await-preboot-check", Verdict: Diverged, Step: 11,
		Says: "the fix acts: the restarted b1 runs the check before it serves (the agent's log), the open ledger is fenced and in limbo, and b1 answers recovery's fencing read Unknown (rc 107) where the model's unfixed bookie answered"},
	{Trace: "traces/findings/f-preboot.itf.json", Release: "4.18.2", Fix: "await-preboot-check-durable-fence", Verdict: Diverged, Step: 11,
		Says: "both fixes act (the agent's log): the restarted b1 has run the check before it serves and answers recovery's fencing read Unknown (rc 107), as with the awaited check alone"},
	{Trace: "traces/findings/f-preboot-fix2.itf.json", Release: "4.18.2", Fix: "await-preboot-check-durable-fence", Verdict: Diverged, Step: 13,
		Says: "both fixes act: b1's fencing answers wait for their fence record, which survives the power loss, and the restarted b1 refuses the old writer's add, as the model's fixed bookie does, but as unauthorized (EUA, rc 102) where the model's answers EFENCED: replay applied the record with the empty master key the awaited check stored (docs/model.md, --data-integrity). No entry is acknowledged beyond the close either way"},
	{Trace: "traces/findings/f-preboot-fix2.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, the check awaited (the agent's log): b1's fence record, answered without data, kept back from its journal until the model's sync (which never comes), is lost by the power loss; the restarted b1 runs the check after recovery closed the ledger, fences nothing, and stores the old writer's add with b2: entry 0 acknowledged beyond the closed ledger's last entry -1. Before the harness held fence records it diverged at step 13: the record, written and fsynced by the journal within milliseconds, survived, and replay applied it with the empty master key the check had stored for a ledger the bookie held nothing of, so b1 refused the add as unauthorized (EUA; docs/model.md, --data-integrity)"},
	{Trace: "traces/findings/f-stuck-writer-fix1.itf.json", Release: "4.18.2", Verdict: Diverged, Step: 16,
		Says: "PR #4278 woven into the driver's client (the variant's rule): its check was reached twice and let the change start both times (each failure names b1 where the ensemble has it, the agent's log); the trace then diverges where the master's shortest trace does, the newer write's failure at b1 handled before the older one's not being Java's order"},
	{Trace: "traces/findings/f-fence-lost.itf.json", Release: "4.18.2", Fix: "durable-fence-reply", Verdict: Reproduced,
		Says: "every step as the model took it, the durable reply woven into ReadEntryProcessor (the agent's log: b2's fencing read and its recovery read each answered only once the fence record was journalled): the record is durable before the kill -9 and the restarted bookie is unfenced all the same, replay having no key for a ledger it holds nothing of; the durable reply alone does not close it, as the model says"},
	{Trace: "traces/findings/f-fence-lost.itf.json", Release: "4.18.2", Fix: "durable-fence-replayable", Verdict: Diverged, Step: 13,
		Says: "the fix acts: with the key record journalled before the fence record (the agent's log), the restarted b2 replays both and answers the old writer's add EFENCED"},
	{Trace: "traces/findings/f-fence-lost-fix2.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, the durable reply woven in: the same run as the finding's trace with this fix, the fence journalled before each answer and lost at the restart"},
	{Trace: "traces/findings/f-fence-lost-fix3.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, the durable and replayable fence woven in (the agent's log: the key record, then the fence record, journalled before b2 answered) and b2's checkpoint with an empty write cache taken on demand through the agent: SyncThread moves the journal's mark past both records with nothing flushed, and after kill -9 b2 has the fence in neither its index nor a replayed record; it accepts the old writer's add"},
	{Trace: "traces/findings/f-4843.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, with the lost-fence section's two fixes woven in (durable-fence-replayable) and b1's empty-cache checkpoint taken on demand through the agent: the restarted b1 is unfenced and accepts the old writer's add, as on the page's BookKeeper-model trace of that section's third fix"},
	{Trace: "traces/findings/f-4843.itf.json", Release: "4.18.2", Fix: "durable-fence-replayable-flushed", Verdict: Diverged, Step: 13,
		Says: "the fix acts: PR #4843's flush at the empty-cache checkpoint (the agent's log) keeps b1's fenced flag in the index past the journal's mark, and the restarted b1 answers the old writer's add EFENCED"},
	{Trace: "traces/findings/f-4843-fix2.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, PR #4843's change woven into SingleDirectoryDbLedgerStorage.checkpoint: b1, fenced while it holds nothing of the ledger, answers at once and is unfenced after kill -9 (replay has no key for its fence record); PR #4843 alone leaves the lost-fence section's case"},
	{Trace: "traces/findings/f-4872.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, the release's own Auditor and ReplicationWorker each stopped at its step (the bkcheck agent's gates): the Auditor marks the ledger with b1 missing once b1's registration is gone, the worker's copy of entry 0 fails (BKLedgerRecoveryException: no bookie serves it) and enters unableToReadEntriesForReplication, the re-check finds the fragment bad and the lock is released after the backoff; then the lasso's cycle (release, acquire, `tryReadingFaultyEntries` fails to read entry 0 again and skips the fragment) runs three times to the same state, the ledger still marked with b1 missing (10 of 10)"},
	{Trace: "traces/findings/f-3887.itf.json", Release: "4.18.2", Verdict: Diverged, Step: 7,
		Says: "the trace is the spec model's with the writer's ensemble change left out (--exclude-actions), and BookKeeper's writer is not that: the write of entry 1 to the stopped b1 fails at once, Java's writer starts an ensemble change to the spare b3 (a metadata write no step of the trace releases) and holds the add's callback back while it runs (changingEnsemble), so c1's LAC stays 0 where the model's is 1. The question's story told on the BookKeeper model (below) is the one that runs"},
	{Trace: "traces/findings/f-3887-told1.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it (10 of 10): the write of entry 1 to b1 held by the proxy for good, b2's acknowledgement, the close at 1; b2 killed, its ZooKeeper session expired, then BookKeeperAdmin.decommissionBookie on the client driver's thread (the harness casts the Auditor's election vote, which its triggerAudit reads); the Auditor's audit and periodic check mark the ledger with b1 and b2 missing, and the ReplicationWorker's copy fails with BKNotEnoughBookiesException (one spare for two replacements) at each turn of the lasso's cycle, three turns to the same state; after every step from the command's start its wait was opened and it read the metadata and waited again (\"Count of ledgers which need to be rereplicated, waiting for next check\"): the command never returns"},
	{Trace: "traces/findings/f-4551.itf.json", Release: "4.18.2", Verdict: NotExecutable, Step: 8,
		Says: "ClientChangesEnsemble, the TLA+ spec's one-step ensemble change (the trace is of the spec's writer; the Java client's change is mapped): the question's trace on the BookKeeper model (also asked, BookKeeper 4.18.2) is the one that runs"},
	{Trace: "traces/findings/f-4551-also1.itf.json", Release: "4.18.2", Verdict: NotExecutable, Step: 8,
		Says: "as f-4551: the spec's one-step ensemble change, then AutoRecovery's steps"},
	{Trace: "traces/findings/f-4551-also3.itf.json", Release: "4.18.2", Verdict: NotExecutable, Step: 12,
		Says: "the harness refuses the close, after the writer's ensemble change put the stopped b1 in the fragment from entry 2 and before the change completes: BookKeeper's writer resends entry 2 to b1 as the metadata write completes, the refused connection fails it at once, and a second ensemble change starts before any close, so the last fragment's bookie would be the placement's (b3, or b2 still registered), not b1, and the worker finds no empty fragment to die on (the runs before the harness held registrations passed where the harness's close won its race with that second change, and failed where it lost). The story told below (b2, up, in the new ensemble) is the one that runs"},
	{Trace: "traces/findings/f-4551-told1.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it (10 of 10), the release's Auditor and ReplicationWorker each at its step, every registration ended by the harness at the model's BookieRegistrationExpires: the close at entry 0 with entry 1's write to b2 in flight leaves an empty last fragment on b2; b2 killed and unregistered, the Auditor's audit marks the ledger, the worker's check finds both fragments (BookieWatcher no longer lists b2), fails to read entry 0 (into unableToReadEntriesForReplication), and at the empty fragment tryReadingFaultyEntries throws IllegalArgumentException(\"inconsistent range\"): rereplicate's finally releases the lock and the worker's thread dies"},
	{Trace: "traces/findings/f-4551-told1.itf.json", Release: "4.18.2", Fix: "skip-inconsistent-range", Verdict: Diverged, Step: 19,
		Says: "the fix acts where the model's unfixed worker dies: with PR #4551's change woven into the driver's ReplicationWorker (the agent's log: the empty fragment from entry 1 readable, no subSet asked) the thread lives and goes on to replicate the empty fragment (its metadata write held)"},
	{Trace: "traces/findings/f-ar-below-qw.itf.json", Release: "4.18.2", Verdict: NotExecutable, Step: 9,
		Says: "the trace loses entry 2's write to b1 and then delivers entry 3's on the same connection, which TCP cannot do without a close between them (that would fail entry 2's write and start an ensemble change): the model loses one message of a connection where BookKeeper's connection stalls. The BookKeeper model's own trace (bkcheck check --bookkeeper 4.18.2, the page's other settings) takes the same loss; the BookKeeper model's shortest trace with no message lost but to a crashed bookie closes without the writer taking that bookie's failure, which a connection reset tells Java at once. The finding's answer stands on BookKeeper by another way to the hole, told below (a read-only bookie), which runs"},
	{Trace: "traces/findings/f-ar-below-qw-told1.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it (10 of 10), no frame lost: b1 turned read-only and writable again through its admin HTTP server between the two adds, its EREADONLY answer to entry 2 delivered after b2's acknowledgement (the op complete, the failure delayed), entry 3 stored on b1 over the same connection; the closed ledger's entry 2 is on b2 alone, and the Auditor's periodic check (LedgerChecker, the release's default auditorLedgerVerificationPercentage 0, by a client connected to both bookies before the turn, as the Auditor's long-lived one is: conformance.md says why) finds no fragment to re-replicate"},
	{Trace: "traces/findings/f-stale-acks-also1.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, with no crash at all: the proxy stalls entry 2's request to b1, its timeout is delivered to its op, the ensemble change replaces b1 by b4, and the writer acknowledges entries 0 and 1 while entry 1 is served only by b3 of the {b3,b4} the metadata names for it (Qa = 2)"},
	{Trace: "traces/findings/f-stale-acks.itf.json", Release: "4.18.2", Fix: "callbacks-after-unset", Verdict: Diverged, Step: 17,
		Says: "the fix acts where the model's unfixed client acknowledges entry 2 at the ensemble change's completion: with PR #3041's change woven into the driver's client (the agent's log: the callbacks ran once, after the unset loop), the completion unsets entry 2 and re-sends it to b4 first, and c1's LAC stays 1 where the model's reaches 2."},
	{Trace: "traces/findings/f-stale-acks.itf.json", Release: "4.18.2", Fix: "unset-while-changing", Verdict: Diverged, Step: 17,
		Says: "the fix acts as PR #3041's does on the ledger's ordered thread: with PR #4194's completion woven into the driver's client in place of the release's lambda (the agent's log: the unset and re-send while changingEnsemble was set, then one callback), c1's LAC stays 1 where the model's unfixed client reaches 2"},
	{Trace: "traces/findings/f-stale-acks.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, on the Java add path with striping (E = 3, Qw = Qa = 2): after the crash of b1 and the ensemble change that replaces it by b4, the writer acknowledges entries 0 and 1 while entry 1 is served only by b3 of the {b3,b4} the metadata names for it, and no write of entry 1 to b4 is in flight (the completion re-sends only entry 2): one copy where Qa = 2 was promised"},

	// Bugs: a historical bug on the release before its fix and on one after.
	{Trace: "traces/bugs/bk-2614.itf.json", Release: "4.13.0", Verdict: Reproduced,
		Says: "every step of the BookKeeper model's trace as the model took it (the split add check driven as one add, no fence between; c2's fencing read to b2, never delivered in the trace, is failed by closing c2's connection to b2 before the fence answer of step 9 ends its fencing phase (ReadLastConfirmedOp completes on b1's answer without it), so that the recovery read of entry 0 goes to b2 on a new connection, as TCP can (bridge/fence.go)): the recovery read does not fence b2, b2 accepts the writer's add, and entry 0 is acknowledged beyond the closed ledger's last entry -1"},
	{Trace: "traces/bugs/bk-2614.itf.json", Release: "4.14.1", Verdict: Diverged, Step: 12,
		Says: "the fix acts: b2, fenced by the recovery read (FLAG_DO_FENCING), answers the writer's add EFENCED (4.14.0, the first release with the fix, is not served by Maven here); the fencing read to b2 failed by a close as on 4.13.0"},
	{Trace: "traces/bugs/bk-2614.itf.json", Release: "4.18.2", Verdict: Diverged, Step: 12,
		Says: "as on 4.14.1: the add is answered EFENCED"},
	{Trace: "traces/bugs/bk-2614-still.itf.json", Release: "4.14.1", Verdict: Reproduced,
		Says: "every step as the model took it, bk-4701's race run inside b2 by the harness's agent: the add creates its own handle for the ledger and waits, the recovery read's fence creates and stores another, the add checks its own (not fenced) and waits, the fence fences and answers NoSuchEntry, then the add stores and is acknowledged: entry 0 beyond the closed ledger's last entry -1"},
	{Trace: "traces/bugs/bk-2615.itf.json", Release: "4.13.0", Verdict: NotExecutable, Step: 20,
		Says: "the recovery client's ensemble change (RecoveryClientChangesEnsemble), the trace's last step, is not mapped onto the Java client yet; the 19 steps before it ran"},
	{Trace: "traces/bugs/bk-544.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "with the re-format done as operators do it today (bookieformat -deleteCookie), the split brain happens on 4.18.2: PR #712's cookie check guards a journal emptied behind BookKeeper's back, not a bookie re-formatted and re-registered"},
	{Trace: "traces/bugs/bk-2612.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it (c2's fencing read to b2, never delivered in the trace, is failed by closing c2's connection to b2 before the fence answer of step 11 ends its fencing phase, so that the recovery read of entry 0 goes to b2 on a new connection): the re-formatted bookie's NoSuchEntry makes recovery close the ledger before the acknowledged entry 0 (the issue is open)"},
	{Trace: "traces/bugs/bk-2908.itf.json", Release: "4.14.1", Verdict: Reproduced,
		Says: "every step as the model took it on 4.14.1, a release before the fix on its line (4.14.6; the trace's model is 4.15.0, whose line has it from 4.15.1): b2's read of entry 0 from its entry log, made to come back one byte short through the bookies' agent (a checkpoint first moved the entry from the write cache to the log), is answered NoSuchEntry, and recovery closes the ledger before the acknowledged entry 0"},
	{Trace: "traces/bugs/bk-2908.itf.json", Release: "4.18.2", Verdict: Diverged, Step: 14,
		Says: "the fix acts: the same short read is answered EIO (rc 101), not NoSuchEntry"},
	{Trace: "traces/bugs/bk-2908-still.itf.json", Release: "4.16.0", Verdict: Reproduced,
		Says: "as bk-2614-still, bk-4701's race run inside b2 by the agent, on 4.16.0 (the trace's model is 4.15.1, whose bookies do not start under the harness; 4.16.0 has both of the trace's release bugs)"},
	{Trace: "traces/bugs/bk-4651.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "as f-stale-acks: entry 1 is acknowledged with one copy on the bookies the metadata names"},
	{Trace: "traces/bugs/bk-4462.itf.json", Release: "4.17.1", Verdict: Reproduced,
		Says: "every step as the model took it (c2's fencing read to b2, never delivered in the trace, is failed by closing c2's connection to b2 before the fence answer of step 9 ends its fencing phase, so that the recovery read of entry 0 goes to b2 on a new connection): the bookie that collected the fenced, deleted ledger forgets the fence and accepts the old writer's add"},
	{Trace: "traces/bugs/bk-4462.itf.json", Release: "4.17.2", Verdict: Diverged, Step: 17,
		Says: "the fix acts: b2 remembers the fenced ledger it deleted (recentlyFencedAndDeletedLedgers) and answers the add EFENCED"},
	{Trace: "traces/bugs/bk-4701.itf.json", Release: "4.17.2", Verdict: Reproduced,
		Says: "every step as the model took it, the race run inside b2 by the harness's agent (each stop awaited, no clock): c1's add creates its own handle for the ledger and waits before storing it; c2's recovery read fences on a second handle it creates and stores; the add, given the handle it created (getHandle ignores putIfAbsent's answer), checks it not fenced and waits; the fence fences and answers NoSuchEntry; the add stores and is acknowledged, and recovery closes the ledger empty"},
	{Trace: "traces/bugs/bk-4701.itf.json", Release: "4.18.2", Verdict: Diverged, Step: 12,
		Says: "the fix acts: given the handle the fence stored first (PR #4701), the add checks and holds that handle's lock, and the fence waits for it (the agent sees the fence's thread blocked on the add's monitor), so it cannot answer between the add's check and its store"},
	{Trace: "traces/bugs/bk-4812.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, the speculative recovery read fired by the harness at its step (docs/findings.md, f-4812)"},
	{Trace: "traces/findings/f-stuck-writer.itf.json", Release: "4.18.2", Verdict: Diverged, Step: 16,
		Says: "the newer write's failure at b1 handled before the older one's, with an ensemble change between them, is not Java's: the close that fails the one fails the other with it, and the loop finds b1 already replaced"},
	{Trace: "traces/findings/f-stuck-writer-clock.itf.json", Release: "4.18.2", Verdict: StepsAgreed,
		Says: "every step as the model took it, and BookKeeper ends as the model does: entries 1 and 2 acknowledged, entry 3 completed and never acknowledged after two loops that bring the ensemble back to their origEnsemble, the ledger open and nothing left to happen (the writer stuck: #4261)"},
	{Trace: "traces/findings/f-stuck-writer-clock.itf.json", Release: "4.18.2", Fix: "callbacks-after-unset", Verdict: Diverged, Step: 21,
		Says: "the fix acts: after the last loop's completion BookKeeper acknowledges entry 3 (the writer's LAC 3, the model's 2)"},
	{Trace: "traces/findings/f-stuck-writer-clock.itf.json", Release: "4.18.2", Fix: "skip-change-without-failed", Verdict: StepsAgreed,
		Says: "PR #4278 woven into the client does not change the run: its check was reached twice and let the change start both times (each failure names b1 where the ensemble has it; the failures delayed during a change reach the next loop without it), and BookKeeper ends as without it, entry 3 completed and never acknowledged: PR #4278 does not fix #4261, as the model says"},
	{Trace: "traces/findings/f-stuck-writer-clock.itf.json", Release: "4.18.2", Fix: "unset-while-changing", Verdict: Diverged, Step: 21,
		Says: "the fix acts (its advice logged at each completion): after the last loop's completion BookKeeper acknowledges entry 3 (the writer's LAC 3, the model's 2), as with PR #3041. Until 2026-12-07 the verdict read \"state could not be observed\": the harness compared a client's state until the step's timeout, the last observation cut short by it; a difference of the clients' state is now decided once they have settled"},
	// Guarantees (the page links the trace; conformance.md gives the run).
	{Trace: "traces/guarantees/e2-w2-a2-reformat-integrity-1.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step of the BookKeeper model's trace as the model took it: b1, re-formatted with its cookie kept (dataIntegrityChecking and dataIntegrityStampMissingCookies on), runs the pre-boot check in cookie validation before it serves; the ledger is closed by then, so the check fences nothing, and the old writer's entry 0 is acknowledged beyond the closed ledger's last entry -1"},
	{Trace: "traces/guarantees/e3-w3-a2-reformat-1.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step of the BookKeeper model's trace (E = Qw = 3, Qa = 2) as the model took it, its two speculative recovery reads fired by the harness at their steps: the bookie re-formatted with its cookie deleted rejoins empty, its NoSuchEntry with another's decides recovery, and entry 0 is acknowledged beyond the closed ledger's last entry -1"},
	// Power loss (bridge/powerloss: the bookies' disks on FUSE).
	{Trace: "traces/guarantees/e2-w2-a2-crash-nojournal-integrity-1.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step of the BookKeeper model's trace as the model took it, dataIntegrityChecking=true: the power loss of b2's machine loses the entry from its write cache, the restart starts the pre-boot check and b2 serves before it has run (the agent holds it; the trace never runs it), and entry 0 is acknowledged beyond the closed ledger's last entry -1"},
	{Trace: "traces/guarantees/e2-w2-a2-crash-nosync-1.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, the crash a power loss of b2's machine (journalSyncData=false: the entry it acknowledged was in no fsynced file), and entry 0 is acknowledged beyond the closed ledger's last entry -1 (5 of 5)"},
	{Trace: "traces/guarantees/e2-w2-a2-crash-nojournal-1.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it, the crash a power loss of b2's machine (journalWriteData=false: the entry was in the write cache only), and entry 0 is acknowledged beyond the closed ledger's last entry -1 (5 of 5)"},
	{Trace: "traces/guarantees/e5-w3-a2-crash-nosync-1.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step of the spec model's trace (E = 5, Qw = 3, Qa = 2), its parallel recovery read mapped onto Java's sequence read, the crash a power loss: entry 0 is acknowledged beyond the closed ledger's last entry -1 (5 of 5)"},
	{Trace: "traces/guarantees/e5-w3-a2-crash-nojournal-1.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step of the spec model's trace (E = 5, Qw = 3, Qa = 2), its parallel recovery read mapped onto Java's sequence read, the crash a power loss: b2's NoSuchEntry, then the read of b3 the model lost stalled and timed out once Java sent it, then b4's NoSuchEntry, and recovery closes the ledger empty with entry 0 acknowledged. It diverged at step 27 before 2026-12-07: the harness polled for Java's read of b3 and took the close first when the read had not arrived yet (now awaited)"},
	{Trace: "traces/guarantees/ar-below-qw-off.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it (Qa = 1, no AutoRecovery): the closed ledger's entry 0 is served by b2 only of the {b1,b2} its metadata names, in a state no step of the model can leave: ReachesQw asked of the bookies themselves"},
	{Trace: "traces/guarantees/ar-disk-lost-off.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step as the model took it (Qa = 2, no AutoRecovery): b1's disk lost for good after both acknowledged, the ledger closed at entry 0, which b2 alone serves of the {b1,b2} its metadata names"},
	{Trace: "traces/guarantees/ar-safe-off.itf.json", Release: "4.18.2", Verdict: Reproduced,
		Says: "every step of the BookKeeper model's trace (sequence recovery reads, the crash rule of --checkpoints) as the model took it: the restarted bookie, fenced while it held nothing of the ledger, accepts the writer's add, and entry 0 is acknowledged beyond the closed ledger's last entry -1"},
}

// RunsOf returns the runs of the trace named (under docs/) with the fix
// named ("": the release as it is).
func RunsOf(trace, fix string) []Run {
	var out []Run
	for _, r := range Runs {
		if r.Trace == trace && r.Fix == fix {
			out = append(out, r)
		}
	}
	return out
}

// Command is the command line that executes the run.
func (r Run) Command() string {
	fix := ""
	if r.Fix != "" {
		fix = " --fix " + r.Fix
	}
	return fmt.Sprintf("bkcheck confirm --bookkeeper %s%s docs/%s", r.Release, fix, r.Trace)
}

// onBookKeeper says, for a page, what the trace's runs on real bookies
// showed ("" when it has none).
func onBookKeeper(trace string) string {
	return said(RunsOf(trace, ""), "On BookKeeper (real bookies, [conformance.md](conformance.md)): ")
}

// withFix says what the runs of a finding's trace with a candidate fix
// woven in showed ("" when it has none).
func withFix(trace, fix string) string {
	return said(RunsOf(trace, fix), "The finding's trace on BookKeeper with this fix woven into the release's classes (the bkcheck agent, in the bookies or the client driver as the fix's code runs: [conformance.md](conformance.md)): ")
}

func said(runs []Run, lead string) string {
	if len(runs) == 0 {
		return ""
	}
	var parts []string
	for _, r := range runs {
		v := r.Verdict
		if r.Step > 0 {
			v += fmt.Sprintf(" at step %d", r.Step)
		}
		if r.Verdict == NotExecutable {
			parts = append(parts, fmt.Sprintf("%s: %s", v, r.Says))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s on %s (`%s`): %s", v, r.Release, r.Command(), r.Says))
	}
	return lead + strings.Join(parts, "; ") + "."
}
