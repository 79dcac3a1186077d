package bkcheck.agent;

import static bkcheck.agent.BookieAgent.method;

import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import static net.bytebuddy.matcher.ElementMatchers.named;

import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.MemberSubstitution;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.matcher.ElementMatcher;
import org.apache.bookkeeper.bookie.Bookie;
import org.apache.bookkeeper.bookie.BookieException;
import org.apache.bookkeeper.bookie.LedgerStorage;
import org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.meta.LedgerManager;
import org.apache.bookkeeper.bookie.CheckpointSource;
import org.apache.bookkeeper.bookie.Journal;
import org.apache.bookkeeper.util.collections.ConcurrentLongHashMap;

/**
 * The candidate fixes the pages check, written as the project's own advice
 * on the release's classes (read at apache/bookkeeper release-4.18.0;
 * nothing here is copied from BookKeeper's source). Each is one rule of a
 * variant of the model (spec/variants.go), named as the harness names it
 * (bridge/weave.go). The advice calls a static method here, which reaches
 * the classes' package-private members by reflection.
 */
public final class Fixes {
    private Fixes() {}

    /** The weaves of each fix, by name. */
    static final Map<String, List<BookieAgent.Weave>> WEAVES = new LinkedHashMap<>();

    static {
        WEAVES.put("durable-fence-reply", List.of(new BookieAgent.Weave(
                "org.apache.bookkeeper.proto.ReadEntryProcessor", method("processPacket", 0), DurableFenceReply.class)));
        WEAVES.put("fence-journals-key", List.of(new BookieAgent.Weave(
                "org.apache.bookkeeper.bookie.BookieImpl", method("fenceLedger", 2), FenceJournalsKey.class)));
        WEAVES.put("add-checks-metadata", List.of(new BookieAgent.Weave(
                "org.apache.bookkeeper.bookie.BookieImpl", method("addEntry", 5), AddChecksMetadata.class)));
        WEAVES.put("collect-keeps-fence", List.of(
                new BookieAgent.Weave("org.apache.bookkeeper.bookie.storage.ldb.SingleDirectoryDbLedgerStorage",
                        method("deleteLedger", 1), TombstoneOnDelete.class),
                new BookieAgent.Weave("org.apache.bookkeeper.bookie.HandleFactoryImpl",
                        method("getHandle", 3), TombstoneRefuses.class)));
        WEAVES.put("ensemble-at-queue", List.of(new BookieAgent.Weave(
                "org.apache.bookkeeper.client.PendingAddOp", method("setEntryId", 1), EnsembleAtQueue.class)));
        WEAVES.put("callbacks-after-unset", List.of(
                new BookieAgent.Weave("org.apache.bookkeeper.client.PendingAddOp", method("unsetSuccessAndSendWriteRequest", 2),
                        MemberSubstitution.relaxed().method(named("sendAddSuccessCallbacks")).stub()
                                .on(method("unsetSuccessAndSendWriteRequest", 2))),
                new BookieAgent.Weave("org.apache.bookkeeper.client.LedgerHandle",
                        method("unsetSuccessAndSendWriteRequest", 2), CallbacksAfterUnset.class)));
        // PR #4194 makes callbacks-after-unset's two changes too, and runs
        // the ensemble change's completion in its own order.
        List<BookieAgent.Weave> unsetWhileChanging = new java.util.ArrayList<>(WEAVES.get("callbacks-after-unset"));
        unsetWhileChanging.add(new BookieAgent.Weave("org.apache.bookkeeper.client.LedgerHandle", ensembleChangeCompletion(),
                UnsetWhileChanging.class));
        WEAVES.put("unset-while-changing", unsetWhileChanging);
        // await-preboot-check: PreBoot's advice, which awaits the check
        // where it would hold it (the agent sets PreBoot.await for it).
        WEAVES.put("await-preboot-check", PreBoot.WEAVES);
        WEAVES.put("skip-change-without-failed", List.of(new BookieAgent.Weave(
                "org.apache.bookkeeper.client.LedgerHandle", method("handleBookieFailure", 1), SkipChangeWithoutFailed.class)));
        WEAVES.put("skip-inconsistent-range", List.of(new BookieAgent.Weave(
                "org.apache.bookkeeper.replication.ReplicationWorker", method("tryReadingFaultyEntries", 2),
                SkipInconsistentRange.class)));
        WEAVES.put("checkpoint-flushes-index", List.of(new BookieAgent.Weave(
                "org.apache.bookkeeper.bookie.storage.ldb.SingleDirectoryDbLedgerStorage", method("checkpoint", 1),
                CheckpointFlushesIndex.class)));
    }

    /**
     * durable-fence-reply: a fencing read is answered only once its fence
     * record is in the journal, whatever the read finds. Today
     * ReadEntryProcessor.processPacket waits on fenceLedger's future only
     * when it read data (handleReadResultForFenceRead); a NoSuchEntry or
     * NoSuchLedger answer goes at once. The advice fences first and waits
     * for the record (the v2 protocol, which the harness's clients speak);
     * the processor's own fenceLedger then finds the ledger fenced and its
     * record persisted (LedgerDescriptorImpl.fenceAndLogInJournal).
     */
    public static final class DurableFenceReply {
        @Advice.OnMethodEnter
        static void enter(@Advice.FieldValue("request") Object request,
                          @Advice.FieldValue("requestProcessor") Object processor) {
            Fixes.awaitFenceRecord(request, processor);
        }
    }

    public static void awaitFenceRecord(Object request, Object processor) {
        try {
            if (!(Boolean) call(request, "isFencing") || !(Boolean) call(request, "hasMasterKey")) {
                return;
            }
            Bookie bookie = (Bookie) Control.field(processor, "bookie");
            long ledgerId = (Long) call(request, "getLedgerId");
            byte[] key = (byte[]) call(request, "getMasterKey");
            bookie.fenceLedger(ledgerId, key).get(30, TimeUnit.SECONDS);
            acted("durable-fence-reply", "ledger " + ledgerId + ": the fence record journalled before the read is answered");
        } catch (Exception e) {
            // the processor's own path answers as it would (an unknown key,
            // a failed journal write): the fix changes only when it answers
            System.err.println("bkcheck agent: durable-fence-reply: " + e);
        }
    }

    /**
     * fence-journals-key: a fence record that replay can apply without the
     * ledger's index entry. BookieImpl's replay of METAENTRY_ID_FENCE_KEY
     * takes the master key from masterKeyCache (filled by key records
     * replayed before it) or the ledger storage, and skips the record as a
     * deleted ledger's without one; a bookie fenced while it holds nothing
     * of the ledger journals no key record (only addEntryInternal does).
     * The advice journals the key record, as addEntryInternal does, before
     * fenceLedger journals the fence record to the same journal: the
     * ledger's handle first (its key in the storage), then the record.
     */
    public static final class FenceJournalsKey {
        @Advice.OnMethodEnter
        static void enter(@Advice.This Object bookie, @Advice.Argument(0) long ledgerId,
                          @Advice.Argument(1) byte[] key) throws Exception {
            Fixes.journalKey(bookie, ledgerId, key);
        }
    }

    @SuppressWarnings("unchecked")
    public static void journalKey(Object bookie, long ledgerId, byte[] key) throws Exception {
        ConcurrentLongHashMap<byte[]> cache = (ConcurrentLongHashMap<byte[]>) Control.field(bookie, "masterKeyCache");
        if (cache.get(ledgerId) != null) {
            return;
        }
        call(Control.field(bookie, "handles"), "getHandle", ledgerId, key, false);
        if (cache.putIfAbsent(ledgerId, key) != null) {
            return;
        }
        ByteBuf record = (ByteBuf) call(bookie, "createMasterKeyEntry", ledgerId, key);
        try {
            Journal journal = (Journal) call(bookie, "getJournal", ledgerId);
            journal.logAddEntry(record, false, (rc, ledger, entry, addr, ctx) -> { }, null);
            acted("fence-journals-key", "ledger " + ledgerId + ": its key record journalled before the fence record");
        } finally {
            ReferenceCountUtil.release(record);
        }
    }

    /**
     * skip-change-without-failed, PR #4278 (its diff: refs/pull/4278/merge
     * db8a3066 against its base): LedgerHandle.handleBookieFailure, when no
     * ensemble change is running, gathers the delayed failures and these
     * (toReplace) as the release does, and starts the change only if one
     * of them names the bookie the current ensemble has at its index;
     * otherwise it clears the delayed failures and changingEnsemble and
     * returns, the failures dropped. The advice decides so before the
     * method under the same metadataLock (on the ledger's ordered thread,
     * as the method runs) and skips it where the PR returns; where the PR
     * goes on, the release's method runs as it is. The release's first two
     * branches (ensemble change disabled, DEFERRED_SYNC) come first there,
     * and the advice leaves both cases to them. In the client driver's JVM.
     */
    public static final class SkipChangeWithoutFailed {
        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
        static boolean enter(@Advice.This Object lh, @Advice.Argument(0) Map<Integer, ?> failed) throws Exception {
            return Fixes.nothingToReplace(lh, failed);
        }
    }

    @SuppressWarnings("unchecked")
    public static boolean nothingToReplace(Object lh, Map<Integer, ?> failed) throws Exception {
        Object conf = call(Control.field(lh, "clientCtx"), "getConf");
        if ((Boolean) call(Control.field(conf, "disableEnsembleChangeFeature"), "isAvailable")
                || ((java.util.Set<?>) Control.field(lh, "writeFlags")).contains(org.apache.bookkeeper.client.api.WriteFlag.DEFERRED_SYNC)) {
            return false;
        }
        synchronized (Control.field(lh, "metadataLock")) {
            if ((Boolean) Control.field(lh, "changingEnsemble")) {
                return false;
            }
            Map<Integer, Object> delayed = (Map<Integer, Object>) Control.field(lh, "delayedWriteFailedBookies");
            Map<Integer, Object> toReplace = new java.util.HashMap<>(delayed);
            toReplace.putAll(failed);
            List<?> current = (List<?>) call(lh, "getCurrentEnsemble");
            for (Map.Entry<Integer, Object> e : toReplace.entrySet()) {
                if (current.get(e.getKey()).equals(e.getValue())) {
                    acted("skip-change-without-failed kept", "failures " + toReplace + " name " + e.getValue()
                            + " at index " + e.getKey() + " of the current ensemble " + current + ": the change starts, as in the release");
                    return false;
                }
            }
            delayed.clear();
            acted("skip-change-without-failed", "failures " + toReplace + " name no bookie of the current ensemble " + current
                    + " at its index: no ensemble change, the failures dropped");
            return true;
        }
    }

    /**
     * checkpoint-flushes-index, PR #4843 (its diff: refs/pull/4843/merge
     * 9b4f81f4): SingleDirectoryDbLedgerStorage.checkpoint with an empty
     * write cache flushes the ledger index (fenced flags, master keys) and
     * records the checkpoint, where the release returns at once; SyncThread
     * then moves the journal's mark past records the index now holds. The
     * advice does it before the method, under the same flushMutex and after
     * the same check of lastCheckpoint; the method then finds the cache
     * empty and returns.
     */
    public static final class CheckpointFlushesIndex {
        @Advice.OnMethodEnter
        static void enter(@Advice.This Object storage, @Advice.Argument(0) Object checkpoint) throws Exception {
            Fixes.flushIndexIfCacheEmpty(storage, checkpoint);
        }
    }

    public static void flushIndexIfCacheEmpty(Object storage, Object checkpoint) throws Exception {
        CheckpointSource source = (CheckpointSource) Control.field(storage, "checkpointSource");
        CheckpointSource.Checkpoint thisCheckpoint = source.newCheckpoint();
        CheckpointSource.Checkpoint last = (CheckpointSource.Checkpoint) Control.field(storage, "lastCheckpoint");
        if (last.compareTo((CheckpointSource.Checkpoint) checkpoint) > 0) {
            return;
        }
        ReentrantLock mutex = (ReentrantLock) Control.field(storage, "flushMutex");
        mutex.lock();
        try {
            if (!(Boolean) call(Control.field(storage, "writeCache"), "isEmpty")) {
                return;
            }
            call(Control.field(storage, "ledgerIndex"), "flush");
            setField(storage, "lastCheckpoint", thisCheckpoint);
            acted("checkpoint-flushes-index", "the ledger index flushed at a checkpoint with an empty write cache");
        } finally {
            mutex.unlock();
        }
    }

    /**
     * Logs, in the JVM's log, what an advice did, for the verdict's notes:
     * "FIX: WHAT" where it changed what the release does, "FIX kept: WHAT"
     * where it was reached and left the release's course as it is (a run
     * with a fix never reached proves nothing of the fix).
     */
    /**
     * skip-inconsistent-range, PR #4551's change (its diff, refs/pull/4551/head
     * 9c1acb5a): ReplicationWorker.tryReadingFaultyEntries, where the
     * worker has a set of unreadable entries for the ledger, returns true
     * for a fragment whose first entry is past its last known one (a closed
     * ledger's empty last fragment) instead of asking the set for
     * subSet(first, true, last, true), which throws
     * IllegalArgumentException("inconsistent range") and kills the worker's
     * thread. In the client driver's JVM, where the harness runs the worker.
     */
    public static final class SkipInconsistentRange {
        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
        static boolean enter(@Advice.This Object worker, @Advice.Argument(0) Object lh,
                             @Advice.Argument(1) Object fragment) {
            return Fixes.emptyFragment(worker, lh, fragment);
        }

        @Advice.OnMethodExit
        static void exit(@Advice.Enter boolean skipped, @Advice.Return(readOnly = false) boolean readable) {
            if (skipped) {
                readable = true;
            }
        }
    }

    /** Whether the fix returns at once: the worker has the ledger's set and the fragment is empty. */
    public static boolean emptyFragment(Object worker, Object lh, Object fragment) {
        try {
            long ledger = (Long) call(lh, "getId");
            long first = (Long) call(fragment, "getFirstEntryId");
            long last = (Long) call(fragment, "getLastKnownEntryId");
            if (AutoRecoveryHold.unreadable(worker, ledger) == null) {
                acted("skip-inconsistent-range kept", "no unreadable entries of ledger " + ledger);
                return false;
            }
            if (first <= last) {
                acted("skip-inconsistent-range kept", "the fragment [" + first + ", " + last + "] is not empty");
                return false;
            }
            acted("skip-inconsistent-range", "ledger " + ledger + ": the empty fragment from entry " + first
                    + " (last known " + last + ") readable, no subSet asked");
            return true;
        } catch (Exception e) {
            throw new IllegalStateException("skip-inconsistent-range", e);
        }
    }

    public static void acted(String fix, String what) {
        System.err.println("bkcheck agent: " + fix + ": " + what);
    }

    /**
     * add-checks-metadata, the project's candidate fix for #4812: a bookie
     * asked for a normal add to a ledger it holds nothing of (no index
     * entry: never seen, or re-formatted) reads the ledger's metadata and
     * refuses the add as fenced where the ledger is CLOSED or IN_RECOVERY,
     * before HandleFactoryImpl creates a handle for it. BookieImpl has no
     * ledger manager of its own; the advice uses the one the bookie's
     * garbage collector holds (DbLedgerStorage's directory storage, its
     * GarbageCollectorThread, its ScanAndCompareGarbageCollector).
     * WriteEntryProcessor answers LedgerFencedException with EFENCED.
     * recoveryAddEntry is another method: a recovery's write-back is not
     * checked.
     */
    public static final class AddChecksMetadata {
        @Advice.OnMethodEnter
        static void enter(@Advice.This Object bookie, @Advice.Argument(0) ByteBuf entry) throws Exception {
            Fixes.checkMetadata(bookie, entry);
        }
    }

    public static void checkMetadata(Object bookie, ByteBuf entry) throws Exception {
        long ledgerId = entry.getLong(entry.readerIndex());
        LedgerStorage storage = (LedgerStorage) Control.field(bookie, "ledgerStorage");
        if (storage.ledgerExists(ledgerId)) {
            return;
        }
        Object dir = Control.directories(storage).get(0);
        Object collector = Control.field(Control.field(dir, "gcThread"), "garbageCollector");
        LedgerManager lm = (LedgerManager) Control.field(collector, "ledgerManager");
        LedgerMetadata md;
        try {
            md = lm.readLedgerMetadata(ledgerId).get(30, TimeUnit.SECONDS).getValue();
        } catch (java.util.concurrent.ExecutionException e) {
            acted("add-checks-metadata", "ledger " + ledgerId + ": unknown here, its metadata unreadable (" + e.getCause() + "): the add proceeds");
            return;
        }
        if (md.getState() == LedgerMetadata.State.CLOSED || md.getState() == LedgerMetadata.State.IN_RECOVERY) {
            acted("add-checks-metadata", "ledger " + ledgerId + ": unknown here and " + md.getState() + " in the metadata: the add refused as fenced");
            throw new BookieException.LedgerFencedException();
        }
        acted("add-checks-metadata", "ledger " + ledgerId + ": unknown here and OPEN in the metadata: the add proceeds");
    }

    /**
     * collect-keeps-fence, the project's candidate fix for the restart that
     * forgets PR #4462's marker: a bookie that deletes (garbage-collects) a
     * ledger its storage has fenced writes a tombstone for it, durably (a
     * file in the ledger directory, forced to disk), whether or not the
     * ledger's handle is loaded; HandleFactoryImpl.getHandle refuses a
     * tombstoned ledger with LedgerFencedAndDeletedException (EFENCED to
     * an add), after a restart too. PR #4462's recentlyFencedAndDeletedLedgers
     * lives in memory, and only for a loaded, fenced handle.
     */
    public static final class TombstoneOnDelete {
        @Advice.OnMethodEnter
        static void enter(@Advice.This Object storage, @Advice.Argument(0) long ledgerId) throws Exception {
            Fixes.tombstoneIfFenced(storage, ledgerId);
        }
    }

    public static final class TombstoneRefuses {
        @Advice.OnMethodEnter
        static void enter(@Advice.This Object factory, @Advice.Argument(0) long ledgerId,
                          @Advice.Argument(2) boolean journalReplay) throws Exception {
            Fixes.refuseTombstoned(factory, ledgerId, journalReplay);
        }
    }

    private static final Map<String, java.util.Set<Long>> TOMBSTONES = new java.util.concurrent.ConcurrentHashMap<>();

    /** The tombstone file of a ledger directory's storage. */
    private static java.nio.file.Path tombstoneFile(Object dirStorage) throws Exception {
        return java.nio.file.Paths.get((String) Control.field(dirStorage, "ledgerBaseDir"), "bkcheck-fenced-deleted-ledgers");
    }

    private static synchronized java.util.Set<Long> tombstones(Object dirStorage) throws Exception {
        java.nio.file.Path file = tombstoneFile(dirStorage);
        java.util.Set<Long> set = TOMBSTONES.get(file.toString());
        if (set == null) {
            set = java.util.concurrent.ConcurrentHashMap.newKeySet();
            if (java.nio.file.Files.exists(file)) {
                for (String line : java.nio.file.Files.readAllLines(file)) {
                    if (!line.isBlank()) {
                        set.add(Long.parseLong(line.trim()));
                    }
                }
            }
            TOMBSTONES.put(file.toString(), set);
        }
        return set;
    }

    public static synchronized void tombstoneIfFenced(Object dirStorage, long ledgerId) throws Exception {
        boolean fenced;
        try {
            fenced = (Boolean) call(dirStorage, "isFenced", ledgerId);
        } catch (Exception e) {
            return; // the storage does not know the ledger: nothing fenced to keep
        }
        if (!fenced) {
            return;
        }
        java.nio.file.Path file = tombstoneFile(dirStorage);
        tombstones(dirStorage).add(ledgerId);
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE,
                java.nio.file.StandardOpenOption.APPEND)) {
            ch.write(java.nio.ByteBuffer.wrap((ledgerId + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            ch.force(true);
        }
        acted("collect-keeps-fence", "ledger " + ledgerId + ": fenced and deleted, its tombstone written and forced to disk");
    }

    public static void refuseTombstoned(Object factory, long ledgerId, boolean journalReplay) throws Exception {
        if (journalReplay) {
            return;
        }
        LedgerStorage storage = (LedgerStorage) Control.field(factory, "ledgerStorage");
        Object dir = Control.directories(storage).get(0);
        if (tombstones(dir).contains(ledgerId)) {
            acted("collect-keeps-fence", "ledger " + ledgerId + ": tombstoned, a write handle refused");
            throw fencedAndDeleted();
        }
    }

    /**
     * ensemble-at-queue, the project's candidate fix for the create window:
     * an add's op takes the handle's ensemble inside doAsyncAddEntry's
     * synchronized (this) block, just before pendingAddOps.add, instead of
     * in PendingAddOp.create on the application's thread. setEntryId is
     * called there, under the handle's lock, and only there; the advice
     * sets the op's ensemble to the handle's current one at that call.
     */
    public static final class EnsembleAtQueue {
        @Advice.OnMethodEnter
        static void enter(@Advice.This Object op) throws Exception {
            Fixes.ensembleAtQueue(op);
        }
    }

    public static void ensembleAtQueue(Object op) throws Exception {
        Object lh = Control.field(op, "lh");
        Object now = call(lh, "getCurrentEnsemble");
        if (!now.equals(Control.field(op, "ensemble"))) {
            acted("ensemble-at-queue", "an op created on an ensemble since changed takes the current one at its queueing: " + now);
        }
        setField(op, "ensemble", now);
    }

    /**
     * The exception a bookie refuses a fenced, deleted ledger with:
     * LedgerFencedAndDeletedException where the release has it (PR #4462:
     * 4.16.7, 4.17.2, 4.18.0), LedgerFencedException before; either is
     * EFENCED to an add.
     */
    private static BookieException fencedAndDeleted() {
        try {
            return (BookieException) Class.forName("org.apache.bookkeeper.bookie.BookieException$LedgerFencedAndDeletedException")
                    .getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            return new BookieException.LedgerFencedException();
        }
    }

    /**
     * The lambda that completes LedgerHandle.ensembleChangeLoop: the
     * MetadataUpdateLoop's whenCompleteAsync((metadata, ex) -> ...), a
     * synthetic method whose last two parameters are the Versioned metadata
     * and the Throwable.
     */
    static ElementMatcher<MethodDescription> ensembleChangeCompletion() {
        return new ElementMatcher.Junction.AbstractBase<>() {
            @Override
            public boolean matches(MethodDescription m) {
                int n = m.getParameters().size();
                return m.getName().startsWith("lambda$ensembleChangeLoop$") && n >= 2
                        && m.getParameters().get(n - 1).getType().asErasure().represents(Throwable.class)
                        && m.getParameters().get(n - 2).getType().asErasure().getName()
                                .equals("org.apache.bookkeeper.versioning.Versioned");
            }
        };
    }

    /**
     * unset-while-changing, PR #4194 (its diff: refs/pull/4194/merge
     * 2a77ca6f against 74109879): the completion of an ensemble change
     * takes the new ensemble and unsets and re-sends every pending op while
     * changingEnsemble is still set (so sendAddSuccessCallbacks does
     * nothing meanwhile), then, under metadataLock, either hands delayed
     * failures to the next loop (from the new ensemble) or clears
     * changingEnsemble, and calls sendAddSuccessCallbacks once after. The
     * PendingAddOp and unset-loop changes are callbacks-after-unset's. The
     * release's completion is a lambda; the advice runs the PR's order in
     * its place (the failure branches as the release has them) and skips
     * the release's body.
     */
    public static final class UnsetWhileChanging {
        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
        static boolean enter(@Advice.This Object handle, @Advice.AllArguments Object[] args) throws Exception {
            return Fixes.completeUnsetWhileChanging(handle, args);
        }
    }

    @SuppressWarnings("unchecked")
    public static boolean completeUnsetWhileChanging(Object lh, Object[] args) throws Exception {
        Throwable ex = (Throwable) args[args.length - 1];
        org.apache.bookkeeper.versioning.Versioned<org.apache.bookkeeper.client.api.LedgerMetadata> metadata =
                (org.apache.bookkeeper.versioning.Versioned<org.apache.bookkeeper.client.api.LedgerMetadata>) args[args.length - 2];
        List<Object> origEnsemble = null;
        for (Object a : args) {
            if (a instanceof List) {
                origEnsemble = (List<Object>) a;
                break;
            }
        }
        Class<?> bke = Class.forName("org.apache.bookkeeper.client.BKException");
        Class<?> codes = Class.forName("org.apache.bookkeeper.client.BKException$Code");
        if (ex != null) {
            int write = codes.getField("WriteException").getInt(null);
            int rc = (Integer) bke.getMethod("getExceptionCode", Throwable.class, int.class).invoke(null, ex, write);
            call(lh, "handleUnrecoverableErrorDuringAdd", rc);
            return true;
        }
        if (metadata.getValue().isClosed()) {
            call(lh, "handleUnrecoverableErrorDuringAdd", codes.getField("LedgerClosedException").getInt(null));
            return true;
        }
        if (metadata.getValue().getState() == org.apache.bookkeeper.client.api.LedgerMetadata.State.IN_RECOVERY) {
            call(lh, "handleUnrecoverableErrorDuringAdd", codes.getField("LedgerFencedException").getInt(null));
            return true;
        }
        Object lock = Control.field(lh, "metadataLock");
        Map<Integer, Object> delayed = (Map<Integer, Object>) Control.field(lh, "delayedWriteFailedBookies");
        java.lang.reflect.Method diff = Class.forName("org.apache.bookkeeper.client.EnsembleUtils")
                .getDeclaredMethod("diffEnsemble", List.class, List.class);
        diff.setAccessible(true);
        Object newEnsemble = null;
        Object replaced = null;
        synchronized (lock) {
            if (delayed.isEmpty()) {
                newEnsemble = call(lh, "getCurrentEnsemble");
                replaced = diff.invoke(null, origEnsemble, newEnsemble);
            }
        }
        if (newEnsemble != null) {
            call(lh, "unsetSuccessAndSendWriteRequest", newEnsemble, replaced);
        }
        Map<Integer, Object> toReplace = null;
        Object nextOrig = null;
        boolean callbacks = false;
        synchronized (lock) {
            if (!delayed.isEmpty()) {
                toReplace = new java.util.HashMap<>(delayed);
                delayed.clear();
                nextOrig = newEnsemble != null ? newEnsemble : origEnsemble;
            } else {
                setField(lh, "changingEnsemble", false);
                callbacks = true;
            }
        }
        acted("unset-while-changing", "the ensemble change's completion unset and re-sent while changingEnsemble was set"
                + (callbacks ? ", then cleared it and called back once" : ", then handed delayed failures to the next change"));
        if (callbacks) {
            call(lh, "sendAddSuccessCallbacks");
        }
        if (toReplace != null && !toReplace.isEmpty()) {
            call(lh, "ensembleChangeLoop", nextOrig, toReplace);
        }
        return true;
    }

    /**
     * callbacks-after-unset, PR #3041 (its diff: refs/pull/3041/merge
     * 333f9536 against 6d003367): an ensemble change's completion unsets and
     * re-sends every pending op first, and calls sendAddSuccessCallbacks
     * once, after the loop. In the release, PendingAddOp's
     * unsetSuccessAndSendWriteRequest calls lh.sendAddSuccessCallbacks()
     * from inside the loop for an op whose write set lacks the index, which
     * can acknowledge a later op before the loop unsets it. The weave
     * removes that call (a MemberSubstitution: the call in that method
     * only) and calls it at the end of LedgerHandle's loop.
     */
    public static final class CallbacksAfterUnset {
        @Advice.OnMethodExit
        static void exit(@Advice.This Object handle) throws Exception {
            Fixes.callbacksAfterUnset(handle);
        }
    }

    public static void callbacksAfterUnset(Object handle) throws Exception {
        acted("callbacks-after-unset", "sendAddSuccessCallbacks after the ensemble change's unset loop");
        call(handle, "sendAddSuccessCallbacks");
    }

    /** Calls the named method of o (declared by its class or a superclass) with args. */
    static Object call(Object o, String name, Object... args) throws Exception {
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(name) && m.getParameterCount() == args.length) {
                    m.setAccessible(true);
                    try {
                        return m.invoke(o, args);
                    } catch (InvocationTargetException e) {
                        if (e.getCause() instanceof Exception) {
                            throw (Exception) e.getCause();
                        }
                        throw e;
                    }
                }
            }
            for (Class<?> i : c.getInterfaces()) {
                for (Method m : i.getMethods()) {
                    if (m.getName().equals(name) && m.getParameterCount() == args.length) {
                        m.setAccessible(true);
                        return m.invoke(o, args);
                    }
                }
            }
        }
        throw new NoSuchMethodException(o.getClass().getName() + "." + name);
    }

    private static void setField(Object o, String name, Object value) throws ReflectiveOperationException {
        Control.declaredField(o, name).set(o, value);
    }
}
