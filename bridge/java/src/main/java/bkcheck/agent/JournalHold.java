package bkcheck.agent;

import static bkcheck.agent.BookieAgent.method;

import io.netty.buffer.ByteBuf;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import net.bytebuddy.asm.Advice;
import org.apache.bookkeeper.bookie.Journal;
import org.apache.bookkeeper.proto.BookkeeperInternalCallbacks.WriteCallback;

/**
 * The journal's records held in the bookie until the model makes them
 * durable. A fencing read answered without data (a NoSuchEntry, an empty
 * bookie's LAC) goes out at once while its fence record waits in the
 * journal's queue (LedgerDescriptorImpl.fenceAndLogInJournal,
 * ReadEntryProcessor), which the Journal thread writes and fsyncs within
 * milliseconds; the model makes that window a step (BookieSyncsJournal),
 * and a crash before it loses the fence. While the harness holds a
 * bookie's journal ({@code journal hold}), every record given to
 * {@code Journal.logAddEntry} is kept back, in order, from the queue; a
 * crash (kill -9) loses them, as the model's crash loses the fence, and
 * {@code journal release} hands them to the queue in the order they came
 * and awaits each one's callback (written and, with journalSyncData,
 * fsynced). The journal is one queue: a record that came after a held
 * fence record is held too, so nothing overtakes it.
 */
public final class JournalHold {
    private JournalHold() {}

    static final List<BookieAgent.Weave> WEAVES = List.of(new BookieAgent.Weave(
            "org.apache.bookkeeper.bookie.Journal", method("logAddEntry", 6), Hold.class));

    private static boolean holding;
    private static final List<Object[]> HELD = new ArrayList<>();

    public static final class Hold {
        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
        static boolean enter(@Advice.This Object journal, @Advice.Argument(0) long ledgerId,
                             @Advice.Argument(1) long entryId, @Advice.Argument(2) ByteBuf entry,
                             @Advice.Argument(3) boolean ackBeforeSync, @Advice.Argument(4) Object cb,
                             @Advice.Argument(5) Object ctx) {
            return JournalHold.hold(journal, ledgerId, entryId, entry, ackBeforeSync, cb, ctx);
        }
    }

    /** Whether to keep this record back: the journal is held. */
    public static synchronized boolean hold(Object journal, long ledgerId, long entryId, ByteBuf entry,
                                            boolean ackBeforeSync, Object cb, Object ctx) {
        if (!holding) {
            return false;
        }
        entry.retain(); // logAddEntry's caller releases its own reference
        HELD.add(new Object[] {journal, ledgerId, entryId, entry, ackBeforeSync, cb, ctx});
        Fixes.acted("journal-held", "ledger " + ledgerId + " entry " + entryId
                + " kept back from the journal until the model's sync");
        return true;
    }

    /** Holds the journal's records from now on (the control's {@code journal hold}). */
    static synchronized String start() {
        holding = true;
        return "ok";
    }

    /**
     * Stops holding and hands the held records to the journal, in order,
     * awaiting each one's callback (the control's {@code journal release}).
     */
    static String release() throws Exception {
        List<Object[]> records;
        synchronized (JournalHold.class) {
            holding = false;
            records = new ArrayList<>(HELD);
            HELD.clear();
        }
        CountDownLatch written = new CountDownLatch(records.size());
        Method log = Journal.class.getMethod("logAddEntry", long.class, long.class, ByteBuf.class, boolean.class,
                WriteCallback.class, Object.class);
        for (Object[] r : records) {
            WriteCallback cb = (WriteCallback) r[5];
            WriteCallback then = (rc, ledgerId, entryId, addr, ctx) -> {
                cb.writeComplete(rc, ledgerId, entryId, addr, ctx);
                written.countDown();
            };
            try {
                log.invoke(r[0], r[1], r[2], r[3], r[4], then, r[6]);
            } finally {
                ((ByteBuf) r[3]).release();
            }
        }
        if (!written.await(30, TimeUnit.SECONDS)) {
            return "error " + written.getCount() + " of the " + records.size() + " released journal records not written within 30 s";
        }
        if (!records.isEmpty()) {
            Fixes.acted("journal-released", records.size() + " held records written to the journal");
        }
        return "ok";
    }
}
