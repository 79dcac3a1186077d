package bridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/bkcheck/bkcheck/bridge/wire"
)

// This file is the harness's mapping: one row per action of the model,
// saying how the action is taken on a cluster of real bookies, what is
// awaited and checked there, and which BookKeeper code it exercises, or
// why the action is not driven. Everything else is derived from it: the
// actions the harness drives (unsupported), the dispatch of a step
// (run.step), and the table of docs/conformance.md, "What each model
// action is on the cluster" (TestConformanceTable). TestMappingClosed
// holds it to the model's actions both ways. The handlers live in files
// by family: adds.go, recovery.go, faults.go, metadata.go.

// A mapping is how the harness takes one model action.
type mapping struct {
	action string
	// drive is what the harness does on the cluster; awaits what it then
	// waits for and checks. After a step the states are compared (observe.go)
	// unless awaits says otherwise.
	drive, awaits string
	// code is the BookKeeper code the step exercises, read at
	// apache/bookkeeper release-4.18.0.
	code string
	// take drives the step; nil for an action the harness does not drive.
	take func(r *run, ctx context.Context, s step) error
	// notDriven says why take is nil, in words a NOT EXECUTABLE verdict
	// quotes after "ACTION is "; byDesign: the harness will not drive it
	// (a power loss, a race inside one process, a change to BookKeeper's
	// code), rather than not yet.
	notDriven string
	byDesign  bool
}

// step is one step of a trace as its handler sees it: the states before
// and after, and the client and bookie the model's action picked ("" if
// none).
type step struct {
	prev, next     itfState
	client, bookie string
}

// Why several actions are not driven.
const (
	specWriterChange = "the TLA+ spec's one-step ensemble change and re-send, which has no single Java counterpart: " +
		"the Java client changes its ensemble as --add-path java models it (ClientUpdatesEnsembleMetadata, ClientCompletesEnsembleChange)"
)

// mappings is the harness's mapping, in the order of docs/conformance.md's
// table: adds, recovery, the writer's close and ensemble change, faults,
// then the actions not driven.
var mappings = []mapping{
	{action: "ClientCreatesLedger", take: (*run).createLedger,
		drive:  "`asyncCreateLedger(E, Qw, Qa)` with the trace's ensemble (the placement policy given it)",
		awaits: "the metadata create released; the callback must succeed",
		code:   "`LedgerCreateOp`, `LedgerManager.createLedgerMetadata`"},
	{action: "ClientFailsToCreateLedger", take: (*run).failToCreateLedger,
		drive:  "once every crashed bookie's registration has expired (its ZooKeeper session: an event awaited), `asyncCreateLedger` with BookKeeper's own placement",
		awaits: "the callback must fail",
		code:   "`LedgerCreateOp`, `DefaultEnsemblePlacementPolicy.newEnsemble`"},
	{action: "ClientCreatesAddOp", take: (*run).createAddOp,
		drive:  "the first half of the application's add, as `LedgerHandle.asyncAddEntry` runs it on the caller's thread: `PendingAddOp.create` with the handle's current ensemble (the driver's `AddWindow`); the op waits outside the queue for its ClientSendsAddEntryRequests, which runs the second half (`doAsyncAddEntry`: queued, initiated)",
		awaits: "— (nothing is sent)",
		code:   "`LedgerHandle.asyncAddEntry`, `PendingAddOp.create`, `LedgerHandle.doAsyncAddEntry`"},
	{action: "ClientSendsAddEntryRequests", take: (*run).sendAdd,
		drive:  "`asyncAddEntry`",
		awaits: "the add frames to the write set at the proxy; a lost one stalled (held, never delivered: its connection delivers nothing more to that bookie until it closes)",
		code:   "`PendingAddOp.initiate`, `PerChannelBookieClient.addEntry`"},
	{action: "BookieChecksAdd", take: (*run).checkAdd,
		drive: "nothing at this step where no step of the same bookie comes between the check and the store: the add as the bookie runs it, checked and stored when the harness delivers the request at the store's step; " +
			"where a fencing request of another client comes between them (bk-4701's race, releases before 4.17.4), the add delivered now with the bkcheck agent armed: its thread stops once it has created its own handle for the ledger (`LedgerDescriptor.create`, before `putIfAbsent`); " +
			"the fencing request's delivery then interleaves them (the fence's thread stops with its own handle stored, the add goes on to stop after its fence check, the fence goes on) and the store's step lets the add store",
		awaits: "the add's thread stopped with its own handle; at the fence's step, the fence holding its handle's lock (an error where it waits for the add's: one handle, PR #4701)",
		code:   "`WriteEntryProcessor`, `BookieImpl.addEntry`"},
	{action: "BookieSendsAddConfirmedResponse", take: respondTo("AddEntryRequestMessage", "AddEntryResponseMessage", rcIs(wire.EOK)),
		drive:  "the add frame delivered to the bookie",
		awaits: "the response; its code must be EOK",
		code:   "`WriteEntryProcessor`, `BookieImpl.addEntry`"},
	{action: "BookieSendsAddFencedResponse", take: respondTo("AddEntryRequestMessage", "AddEntryResponseMessage", rcIs(wire.EFenced)),
		drive:  "the add frame delivered to the bookie",
		awaits: "the response; its code must be EFENCED",
		code:   "`WriteEntryProcessor`, `BookieImpl.addEntry`"},
	{action: "BookieSendsAddReadOnlyResponse", take: respondTo("AddEntryRequestMessage", "AddEntryResponseMessage", rcIs(wire.EReadOnly)),
		drive:  "the add frame delivered to the read-only bookie",
		awaits: "the response; its code must be EREADONLY",
		code:   "`WriteEntryProcessor` (a read-only bookie rejects normal adds)"},
	{action: "ClientReceivesAddConfirmedResponse", take: deliverTo("AddEntryResponseMessage"),
		drive:  "the response delivered to the client",
		awaits: "—",
		code:   "`PendingAddOp.writeComplete`"},
	{action: "ClientReceivesAddFencedResponse", take: deliverTo("AddEntryResponseMessage"),
		drive:  "the response delivered to the client",
		awaits: "—",
		code:   "`PendingAddOp.writeComplete`"},
	{action: "ClientReceivesAddErrorResponse", take: (*run).receiveAddError,
		drive:  "the error answer delivered (the op's `writeComplete` starts the ensemble change at once, so its replacements are given to the placement policy from the trace first)",
		awaits: "—",
		code:   "`PendingAddOp.writeComplete`"},
	{action: "ClientReceivesAddTimeout", take: (*run).addTimeout,
		drive: "the op's write to that bookie fails: by the clock where the trace answers no older write to another bookie later (its callback runs with TimeoutException on the ledger's ordered thread, `SteeredBookKeeper.timeOut`, as the timeout monitor would), " +
			"else by closing the client's connection to the bookie (the callback fails with BookieHandleNotAvailableException); a write a crash's or such a close's connection already failed counts as its timeout",
		awaits: "the callback (`write-failed`) where the connection was closed",
		code:   "`PendingAddOp.writeComplete`, `PerChannelBookieClient.checkTimeoutOnPendingOperations` and `channelInactive`, `BookieClientImpl.monitorPendingOperations`"},
	{action: "RecoveryClientReceivesAddTimeout", take: (*run).addTimeout,
		drive:  "as ClientReceivesAddTimeout, for the recovery's write-back: by the clock where the trace answers no older write-back to another bookie later, else by closing the connection",
		awaits: "the callback (`write-failed`) where the connection was closed",
		code:   "`PendingAddOp.writeComplete`, `ReadOnlyLedgerHandle.handleBookieFailure` and `handleUnrecoverableErrorDuringAdd`, `LedgerRecoveryOp.addComplete`"},
	{action: "RecoveryClientFencingFails", take: (*run).fencingFails,
		drive:  "each lost fencing read (stalled at the proxy) failed by closing its connection, unless a crash or an earlier close failed it",
		awaits: "the recovery's callback, which must fail",
		code:   "`ReadLastConfirmedOp.readEntryComplete`, `LedgerRecoveryOp`"},
	{action: "RecoveryClientReadFails", take: (*run).readFails,
		drive:  "nothing: the last replica's lost read was timed out at the client when it was sent or answered, and Java's sequence read failed then",
		awaits: "the recovery's callback, which must fail (nothing for a recovery that failed before)",
		code:   "`PendingReadOp.SequenceReadRequest.sendNextRead`, `LedgerRecoveryOp`"},
	{action: "ClientStartsRecovery", take: (*run).startRecovery,
		drive:  "`asyncOpenLedger` with recovery; its IN_RECOVERY metadata write released",
		awaits: "the fencing LAC reads at the proxy",
		code:   "`LedgerHandle.recover`, `ReadLastConfirmedOp`"},
	{action: "BookieSendsFencingReadLacResponse", take: respondTo("FenceRequestMessage", "FenceResponseMessage", rcIs(wire.EOK, wire.ENoEntry, wire.ENoLedger)),
		drive:  "the fencing read delivered to the bookie",
		awaits: "the response: EOK, or NoSuchEntry or NoSuchLedger (which `ReadLastConfirmedOp` takes alike as nothing written here)",
		code:   "`ReadEntryProcessor` with `FLAG_DO_FENCING`"},
	{action: "ClientReceivesFencingReadLacResponse", take: (*run).receiveFenceResponse,
		drive: "the response delivered to the client; where it ends the fencing phase and a fencing read the trace never delivers has a later request of its connection that the trace does deliver, " +
			"that connection is closed first (the fencing read fails at the client, `channelInactive`, and the later request goes on a new connection; bridge/fence.go)",
		awaits: "where it closed a connection, the fencing read's failure at the client (`read-failed`)",
		code:   "`ReadLastConfirmedOp.readEntryComplete`, `PerChannelBookieClient.channelInactive`"},
	{action: "ClientSendsRecoveryReadRequests", take: (*run).sendRecoveryReads,
		drive: "Java's sequence read, as above: in a trace of the sequence read (`--recovery-read sequence`, every `--bookkeeper` model) the model's one read, which Java sends by itself once fencing has its quorum; " +
			"in a trace of the spec's parallel read, the first replica Java asks, the others owed until Java asks them",
		awaits: "the read's frame at the proxy (a lost one stalled and timed out at the client, as above)",
		code:   "`LedgerRecoveryOp`, `PendingReadOp.SequenceReadRequest`"},
	{action: "ClientSendsNextRecoveryRead", take: (*run).sendNextRecoveryRead,
		drive: "nothing where every replica asked before has failed or missed: Java sends the next replica's read by itself (`sendNextRead`). Where an earlier replica's read is outstanding (the model's `firstSpeculativeReadTimeout`), " +
			"the read's speculative request fired now, as its timer would (`issueSpeculativeRequest` on the ledger's ordered thread; the driver's clients arm the timer for a day, never fired by the clock)",
		awaits: "the read's frame at the proxy (a speculative request that sends nothing is a divergence)",
		code:   "`PendingReadOp.SequenceReadRequest.sendNextRead` and `maybeSendSpeculativeRead`, `ReadOpBase.LedgerEntryRequest.issueSpeculativeRequest`"},
	{action: "BookieSendsReadResponse", take: (*run).sendReadResponse,
		drive:  "the read delivered to the bookie",
		awaits: "the response: OK, or NoSuchEntry or NoSuchLedger, as the model's; a lost answer is stalled and timed out at the client (Java's sequence read waits on that replica)",
		code:   "`ReadEntryProcessor`"},
	{action: "ClientReceivesRecoveryReadResponse", take: (*run).receiveRecoveryRead,
		drive:  "the response delivered to the client",
		awaits: "—",
		code:   "`PendingReadOp.readEntryComplete`"},
	{action: "ClientWritesBackEntry", take: (*run).expectSentStep,
		drive:  "nothing: `LedgerRecoveryOp` writes back an entry it read at once (`asyncRecoveryAddEntry`, adds with `FLAG_RECOVERY_ADD` to the entry's write set)",
		awaits: "the write-back's frames at the proxy",
		code:   "`LedgerRecoveryOp` → `LedgerHandle.asyncRecoveryAddEntry`"},
	{action: "RecoveryClientReceivesAddConfirmedResponse", take: deliverTo("AddEntryResponseMessage"),
		drive:  "the response delivered to the recovery client",
		awaits: "—",
		code:   "`PendingAddOp.writeComplete`"},
	{action: "RecoveryClientReceivesAddFencedResponse", take: (*run).writeBackFenced,
		drive:  "the EFENCED response delivered to the recovery client",
		awaits: "where the model's recovery fails, the recovery's callback, which must fail",
		code:   "`PendingAddOp.writeComplete`, `ReadOnlyLedgerHandle.handleUnrecoverableErrorDuringAdd`, `LedgerRecoveryOp.addComplete`"},
	{action: "RecoveryClientClosesLedger", take: (*run).recoveryCloses,
		drive:  "the recovery's close metadata write released",
		awaits: "the recovery's open completes successfully",
		code:   "`LedgerRecoveryOp` → `LedgerHandle.asyncCloseInternal`"},
	{action: "ClientClosesLedgerSuccess", take: (*run).closeSucceeds,
		drive:  "`asyncClose`; each metadata write of the close released until the close completes",
		awaits: "the close must succeed",
		code:   "`LedgerHandle.doAsyncCloseInternal` (a `MetadataUpdateLoop`)"},
	{action: "ClientClosesLedgerFail", take: (*run).closeFails,
		drive:  "`asyncClose`; each metadata write of the close released until the close completes",
		awaits: "the close must fail",
		code:   "`LedgerHandle.doAsyncCloseInternal` (a `MetadataUpdateLoop`)"},
	{action: "ClientUpdatesEnsembleMetadata", take: (*run).updateEnsemble,
		drive: "the ensemble change's metadata write released (the replacements were given to the placement policy from the trace when Java started the change); " +
			"no write where the model's loop finds nothing to replace",
		awaits: "the write's answer has run the client's continuation (`setLedgerMetadata`, in the store's callback), as the model's step includes; states are compared only after ClientCompletesEnsembleChange",
		code:   "`LedgerHandle.ensembleChangeLoop`, `MetadataUpdateLoop`, `EnsembleUtils.replaceBookiesInEnsemble`"},
	{action: "ClientCompletesEnsembleChange", take: (*run).completeEnsembleChange,
		drive:  "nothing: Java completes the change on the ledger's ordered thread as soon as its metadata write completed",
		awaits: "the completion's re-sends at the proxy",
		code:   "`ensembleChangeLoop`'s completion, `unsetSuccessAndSendWriteRequest`"},
	{action: "ClientDeletesLedger", take: (*run).deleteLedger,
		drive:  "`asyncDeleteLedger`; the metadata removal released",
		awaits: "the callback must succeed",
		code:   "`LedgerDeleteOp`"},
	{action: "BookieCollectsLedger", take: (*run).collectLedger,
		drive:  "a forced garbage collection of that bookie (its admin HTTP server)",
		awaits: "the collection's end",
		code:   "`TriggerGCService`, `GarbageCollectorThread`"},
	{action: "BookieCrashes", take: (*run).crash,
		drive: "`kill -9` of the bookie's JVM (the replacements of the ensemble changes the closed connections start are given to the placement policy from the trace first); " +
			"with --journal no-sync or disabled a power loss: kill -9, and what its journal and ledger files held that no fsync made durable dropped (bridge/powerloss); " +
			"without --registration-expiry its registration ended at once, as BookieRegistrationExpires does",
		awaits: "the process's exit (and, its registration ended, every client's BookieWatcher without it)",
		code:   "—"},
	{action: "BookieRestarts", take: (*run).restart,
		drive:  "the bookie started again on its directories",
		awaits: "the bookie serves (a read straight to its port)",
		code:   "`BookieImpl` journal replay, `BookieNettyServer`"},
	{action: "BookieRegistrationExpires", take: (*run).registrationExpires,
		drive:  "the stopped bookie's registration znodes deleted, as its ZooKeeper session's expiry does (no session expires by a clock: the bookies' zkTimeout is an hour; cluster.Unregister)",
		awaits: "every client's BookieWatcher without the bookie, the ReplicationWorker's included",
		code:   "`BookieWatcherImpl.processWritableBookiesChanged`"},
	{action: "BookieLosesDisk", take: (*run).loseDisk,
		drive:  "kill -9, the journal and ledger directories emptied, the bookie started again",
		awaits: "cookie validation refuses it (the metadata store holds its cookie) and it exits; it stays down until a re-format",
		code:   "`LegacyCookieValidation.checkCookies` (InvalidCookieException)"},
	{action: "BookieRejoinsEmpty", take: (*run).rejoinEmpty,
		drive:  "kill -9, `BookieShell bookieformat -nonInteractive -force [-deleteCookie]` (`-deleteCookie` unless --reformat-cookie kept), start",
		awaits: "the bookie serves",
		code:   "`FormatCommand`, `BookieImpl.format`"},
	{action: "BookieBecomesReadOnly", take: (*run).becomeReadOnly,
		drive:  "the bookie turned read-only through its admin HTTP server, as an operator does (`PUT /api/v1/bookie/state/readonly`)",
		awaits: "the state change",
		code:   "`BookieStateReadOnlyService`, `StateManager.transitionToReadOnlyMode`"},
	{action: "BookieBecomesWritable", take: (*run).becomeWritable,
		drive:  "the bookie turned writable again through its admin HTTP server (`PUT /api/v1/bookie/state/readonly` with `readOnly` false), as LedgerDirsMonitor does once its disks are below the threshold",
		awaits: "the state change",
		code:   "`BookieStateReadOnlyService`, `StateManager.transitionToWritableMode`"},
	{action: "BookieFailsRead", take: (*run).failRead,
		drive:  "the bookie's next read of the entry from its entry log armed to come back short, through the agent (a checkpoint first moves the entry there from the write cache; the data read returns one byte fewer, as from a damaged log), then the read delivered",
		awaits: "the response: NoSuchEntry where the trace's model answers so (corrupt-read-nosuch, before PR #2909), EIO otherwise",
		code:   "`EntryLogger.internalReadEntry` (`DefaultEntryLogger` from 4.16), `readFromLogChannel`; `ReadEntryProcessor`"},
	{action: "BookieSyncsJournal", take: (*run).syncJournal,
		drive: "the fence records the model has not made durable, which the bookie's agent kept back from its journal since the fencing answer (with --crashes and a synced or disabled journal the harness holds a bookie's journal while the model's b_unflushed_fence names it: " +
			"every record given to `Journal.logAddEntry` kept back, in order, and lost by a crash), handed to the journal, which writes and fsyncs them; " +
			"with --journal no-sync (no fsync) the operating system's write-back of the journal files, on the power-loss file system; with --journal disabled also a checkpoint through the agent (the write cache flushed and fsynced)",
		awaits: "each released record's callback (written, and fsynced with journalSyncData)",
		code:   "`Journal`"},
	{action: "BookieCheckpoints", take: checkpointStep(true),
		drive: "the bookie's SyncThread checkpoints now, through the bkcheck agent (`doCheckpoint(checkpointSource.newCheckpoint())` on its executor, as its flushInterval timer would; the timer is set to a day): " +
			"with a non-empty write cache, the agent adding an entry of a ledger of its own where this ledger has none waiting (the model's other ledgers)",
		awaits: "the checkpoint's end (a task queued after it on SyncThread's executor); the write cache empty after it",
		code:   "`SyncThread.checkpoint`, `SingleDirectoryDbLedgerStorage.checkpoint` (entries, locations and `LedgerMetadataIndex.flush`), `Journal.checkpointComplete`"},
	{action: "BookieCheckpointsIdle", take: checkpointStep(false),
		drive:  "as BookieCheckpoints, with the write cache empty (the agent refuses the step otherwise)",
		awaits: "the checkpoint's end: DbLedgerStorage returns at once with nothing flushed, and the journal's mark moves all the same",
		code:   "`SyncThread.checkpoint`, `SingleDirectoryDbLedgerStorage.checkpoint`'s empty-write-cache return, `Journal.checkpointComplete`"},
	{action: "BookieRunsPreBootCheck", take: (*run).preBootCheck,
		drive:  "the data-integrity check the bookie's restart started (`dataIntegrityChecking=true`, `journalWriteData=false`, an unclean shutdown) and the bkcheck agent has held since, run now on the control port (`runPreBootCheck(\"UNCLEAN_SHUTDOWN\")`); the full check that DataIntegrityService would start every 3 s after it is held for the whole run (`needsFullCheck` false): the model has none",
		awaits: "the check's future: each open ledger whose last ensemble holds the bookie fenced and in limbo, the ledger storage flushed",
		code:   "`EmbeddedServer` (the call whose future it drops), `DataIntegrityCheckImpl.runPreBootCheck`, `processPreBoot`, `DataIntegrityService`"},

	{action: "ClientChangesEnsemble", byDesign: true, notDriven: specWriterChange},
	{action: "ClientResendsPendingAddOp", byDesign: true, notDriven: specWriterChange},
	{action: "RecoveryClientChangesEnsemble", byDesign: true, notDriven: specWriterChange},
	{action: "RecoveryClientSendsPendingAddOp", byDesign: true, notDriven: specWriterChange},
	{action: "BookieFillsDisk", notDriven: "a full disk (read-only with no high-priority writes either): the harness cannot fill a bookie's disks yet"},

	{action: "AuditorMarksLedgerUnderreplicated", take: (*run).auditorMarks,
		drive:  "the Auditor's mark opened: the release's Auditor runs in the client driver (lostBookieRecoveryDelay 0) and, told by ZooKeeper of the lost bookie's registration gone, audits the ledgers and stops at its `markLedgerUnderreplicatedAsync` (the bkcheck agent's gate) until this step",
		awaits: "the urL znode written; the bookies it marks the ledger with must be the model's",
		code:   "`Auditor` (`submitAuditTask`, `auditBookies`, `publishSuspectedLedgersAsync`), `ZkLedgerUnderreplicationManager.markLedgerUnderreplicatedAsync`"},
	{action: "AuditorChecksLedger", take: (*run).auditorChecks,
		drive:  "the Auditor's periodic check run now: its `AuditorCheckAllLedgersTask` (opened without recovery, `LedgerChecker` with the trace's auditorLedgerVerificationPercentage) on a thread of its own, as the Auditor's executor runs it every auditorPeriodicCheckInterval (the interval itself 0: no check but the step's), each mark it makes opened at its gate",
		awaits: "the check's end; the urL znode's missing bookies must be the model's",
		code:   "`AuditorCheckAllLedgersTask.checkAllLedgers`, `LedgerChecker.checkLedger`, `AuditorTask.publishSuspectedLedgersAsync`"},
	{action: "WorkerAcquiresLedger", take: (*run).workerAcquires,
		drive:  "the worker's loop opened: the release's ReplicationWorker runs in the client driver with a client of its own on the bookies' own ports and stops at each `getLedgerToRereplicate` (a gate) until this step; the fragments its check returns are tried in the order the trace's run tries them (a HashSet of identity hash codes in the release: any order is its own)",
		awaits: "the worker at rest again: the lock taken, the ledger opened without recovery and checked (LedgerChecker), the worker stopped at its first closed under-replicated fragment or its run's end",
		code:   "`ReplicationWorker.rereplicate`, `ZkLedgerUnderreplicationManager.getLedgerToRereplicate`, `LedgerChecker.checkLedger`"},
	{action: "WorkerReplicatesFragment", take: (*run).workerReplicatesFragment,
		drive:  "the fragment the worker stopped at opened (`tryReadingFaultyEntries`, then `replicateLedgerFragment`), its replacement the model's (the placement policy given it)",
		awaits: "the worker at rest again; the fragment must be the model's (its first entry), and its unableToReadEntriesForReplication the model's rw_unreadable",
		code:   "`ReplicationWorker.tryReadingFaultyEntries`, `BookKeeperAdmin.replicateLedgerFragment`, `LedgerFragmentReplicator`"},
	{action: "WorkerUpdatesEnsemble", take: (*run).workerUpdatesEnsemble,
		drive:  "the worker's metadata write released (its client's writes are held like the clients')",
		awaits: "the write's answer",
		code:   "`LedgerFragmentReplicator.updateEnsembleInfo`"},
	{action: "WorkerDefersLedger", take: gateStep("defer", "defer the lock's release"),
		drive:  "the worker's `deferLedgerLockRelease` opened (a gate)",
		awaits: "the call's end and the worker at rest again",
		code:   "`ReplicationWorker.deferLedgerLockRelease`"},
	{action: "WorkerMarksLedgerReplicated", take: gateStep("replicated", "mark the ledger replicated"),
		drive:  "the worker's `markLedgerReplicated` opened (a gate)",
		awaits: "the urL znode deleted, the worker at rest again",
		code:   "`ZkLedgerUnderreplicationManager.markLedgerReplicated`"},
	{action: "WorkerReleasesLedger", take: gateStep("release", "release the ledger's lock"),
		drive:  "the lock's release opened (a gate on `releaseUnderreplicatedLedger`): the timer `deferLedgerLockReleaseOfFailedLedger` scheduled (lockReleaseOfFailedLedgerGracePeriod 0: the backoff is this step), or the run's own",
		awaits: "the lock released, the worker at rest again (back at its loop's acquire: rwRereplicateBackoffMs 0)",
		code:   "`ReplicationWorker.deferLedgerLockReleaseOfFailedLedger`, `ZkLedgerUnderreplicationManager.releaseUnderreplicatedLedger`"},
	{action: "WorkerGraceExpires", notDriven: "the grace period's recovery (`admin.openLedger`): the worker's client is not through the proxy, so the recovery's messages cannot be the model's steps yet"},
	{action: "WorkerDiesOnInconsistentRange", take: (*run).workerDies,
		drive:  "the fragment the worker stopped at opened: `tryReadingFaultyEntries` on a fragment whose first entry is past its last throws `IllegalArgumentException` (\"inconsistent range\")",
		awaits: "the worker's thread dead",
		code:   "`ReplicationWorker.tryReadingFaultyEntries`, `ConcurrentSkipListSet.subSet`, `ReplicationWorker.run`"},
	{action: "AdminDecommissionsBookie", take: (*run).decommission,
		drive:  "once the stopped bookie's registration has expired, `BookKeeperAdmin.decommissionBookie` (`bookkeeper shell decommissionbookie`'s call) on a thread of the client driver: it triggers the Auditor's audit and waits; each of its `Thread.sleep`s (the 30 s it gives the Auditor, each poll's sleep) is a gate of the bkcheck agent instead",
		awaits: "the command at its first wait; it must not have returned",
		code:   "`BookKeeperAdmin.decommissionBookie`, `BookKeeperAdmin.triggerAudit`"},
	{action: "AdminFinishesDecommission", take: (*run).finishDecommission,
		drive:  "the command's waits opened one after another: each time it reads the ledgers' metadata again (`waitForLedgersToBeReplicated`, then `listLedgersToRereplicate`)",
		awaits: "the command's return without an error, within ten of its polls",
		code:   "`BookKeeperAdmin.waitForLedgersToBeReplicated`, `areEntriesOfLedgerStoredInTheBookie`"},
}

// splitCheck is why a BookieChecksAdd apart from its store is not driven
// where more than one fencing request comes between them.
const splitCheck = "the fence check and the store of one add on two of a bookie's threads: a race inside a bookie's process, which the harness runs with one fencing request between them only"

// mappingOf is the mapping of each action, by name.
var mappingOf = func() map[string]*mapping {
	m := map[string]*mapping{}
	for i := range mappings {
		m[mappings[i].action] = &mappings[i]
	}
	return m
}()

// step drives one step of the trace through its mapping.
func (r *run) step(ctx context.Context, prev, next itfState) error {
	a := next.action()
	m := mappingOf[a]
	if m == nil || m.take == nil {
		return notExecutable("the harness has no mapping for " + a)
	}
	p := next.picks()
	client, _ := p["client"].(string)
	bookie, _ := p["bookie"].(string)
	if err := r.journalHolds(ctx, next); err != nil {
		return err
	}
	if a == "ClientClosesLedgerSuccess" || a == "ClientClosesLedgerFail" {
		if why := closeBeforeRefusal(r.states[:r.cur+1], r.cur); why != "" {
			return notExecutable(why)
		}
	}
	return m.take(r, ctx, step{prev: prev, next: next, client: client, bookie: bookie})
}

// closeBeforeRefusal says why the close at state i cannot run on
// BookKeeper ("" when it can): its client has a write to a stopped bookie
// whose failure the model has not taken yet. BookKeeper's client takes
// that failure at once, the connection refused or reset
// (PendingAddOp.writeComplete with BookieHandleNotAvailableException),
// and starts an ensemble change before any later step of the writer,
// whose replacement the placement chooses; the model takes it as a
// timeout whenever it comes, so its writer may close first. Such a write
// is a lost one (sent while the bookie was down, or before it went down),
// or the resend that the completion of an ensemble change whose new
// ensemble holds a stopped bookie makes at once
// (unsetSuccessAndSendWriteRequest, as the metadata write completes),
// where the model completes the change at a step of its own.
func closeBeforeRefusal(states []itfState, i int) string {
	client, _ := states[i].picks()["client"].(string)
	downSince := func(b string, from int) bool {
		for k := from; k < i; k++ {
			if contains(set(states[k]["b_down"]), b) {
				return true
			}
		}
		return false
	}
	sent := addSendSteps(states)
	for _, m := range messages(states[i-1]) {
		if m.Type != "AddEntryRequestMessage" || m.Client != client || m.Count != -1 || m.Fields["recovery"] == true {
			continue
		}
		if at := sent[i-1][m.key()]; at > 0 && downSince(m.Bookie, at) {
			return fmt.Sprintf("%s closes the ledger while its write of e%d to %s, sent at step %d, has not failed in the model; %s is down: "+
				"BookKeeper's client takes that failure at once (the connection refused or reset) and starts an ensemble change before the close, "+
				"whose replacement the placement chooses (the model takes the failure as a timeout whenever it comes)",
				client, m.Entry, m.Bookie, at+1, m.Bookie)
		}
	}
	for j := i - 1; j > 0; j-- {
		p, _ := states[j].picks()["client"].(string)
		if p != client {
			continue
		}
		switch states[j].action() {
		case "ClientCompletesEnsembleChange":
			return ""
		case "ClientUpdatesEnsembleMetadata":
			frags, _ := states[j]["meta_fragments"].([]any)
			if len(frags) == 0 {
				return ""
			}
			last, _ := frags[len(frags)-1].(map[string]any)
			for _, b := range set(last["ensemble"]) {
				if downSince(b, j) {
					return fmt.Sprintf("%s closes the ledger between its ensemble change's metadata write (step %d) and the change's completion, and the new ensemble holds %s, which is down: "+
						"the harness cannot hold BookKeeper's writer there (the close would have to win a race with the write's completion callback): "+
						"the client resends the pending writes as the metadata write completes (unsetSuccessAndSendWriteRequest), the resend to %s fails at once (the connection refused), "+
						"and another ensemble change starts before the close, whose replacement the placement chooses",
						client, j+1, b, b)
				}
			}
			return ""
		}
	}
	return ""
}

// conformanceTable is the table of docs/conformance.md, "What each model
// action is on the cluster": every driven action, then every other with
// why.
func conformanceTable() string {
	var b strings.Builder
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	b.WriteString("| model action | on the cluster | awaited and checked | BookKeeper code |\n|---|---|---|---|\n")
	for _, m := range mappings {
		if m.take != nil {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", m.action, cell(m.drive), cell(m.awaits), cell(m.code))
		}
	}
	b.WriteString("\nNot driven: a trace that takes one of these actions is NOT EXECUTABLE at that step, with the reason given here.\n\n")
	b.WriteString("| model action | why not | |\n|---|---|---|\n")
	for _, m := range mappings {
		if m.take == nil {
			when := "not yet"
			if m.byDesign {
				when = "by design"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", m.action, cell(m.notDriven), when)
		}
	}
	return b.String()
}
