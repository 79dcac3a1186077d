package bkcheck.agent;

import static bkcheck.agent.BookieAgent.method;

import java.util.List;
import net.bytebuddy.asm.Advice;

/**
 * A read of a corrupt entry log, on demand (the model's BookieFailsRead):
 * the next read of one entry from the entry log comes back short, as from
 * a log truncated or damaged under the entry. The entry logger's own code
 * then decides the answer: before PR #2909 (#2908) internalReadEntry throws
 * NoEntryException for a short read, which the bookie answers NoSuchEntry;
 * from it on, IOException, answered EIO. The weave is below that decision:
 * readFromLogChannel, the channel read of the entry's data (not of its
 * size), returns one byte fewer than it read, once, inside the armed
 * internalReadEntry.
 */
public final class ShortRead {
    private ShortRead() {}

    static final String ENTRY_LOGGER = "org.apache.bookkeeper.bookie.DefaultEntryLogger|org.apache.bookkeeper.bookie.EntryLogger";

    static final List<BookieAgent.Weave> WEAVES = List.of(
            new BookieAgent.Weave(ENTRY_LOGGER, method("internalReadEntry", 4), Armed.class),
            new BookieAgent.Weave(ENTRY_LOGGER, method("readFromLogChannel", 4), Shorten.class));

    private static volatile long armedLedger = -1;
    private static volatile long armedEntry = -1;
    private static final ThreadLocal<Boolean> SHORTEN = ThreadLocal.withInitial(() -> false);

    /** Arms the next read of the entry. */
    static synchronized void arm(long ledger, long entry) {
        armedLedger = ledger;
        armedEntry = entry;
    }

    public static synchronized boolean take(long ledger, long entry) {
        if (ledger == armedLedger && entry == armedEntry) {
            armedLedger = -1;
            armedEntry = -1;
            return true;
        }
        return false;
    }

    public static void enter(boolean shorten) {
        SHORTEN.set(shorten);
    }

    public static int shortened(int rc, int capacity) {
        // the size read (4 bytes) is left whole; the data read comes back short
        if (SHORTEN.get() && capacity != 4 && rc > 0) {
            SHORTEN.set(false);
            Fixes.acted("short-read", "the entry's data read from the entry log came back one byte short");
            return rc - 1;
        }
        return rc;
    }

    public static final class Armed {
        @Advice.OnMethodEnter
        static void enter(@Advice.Argument(0) long ledgerId, @Advice.Argument(1) long entryId) {
            ShortRead.enter(ShortRead.take(ledgerId, entryId));
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class)
        static void exit() {
            ShortRead.enter(false);
        }
    }

    public static final class Shorten {
        @Advice.OnMethodExit
        static void exit(@Advice.Argument(2) io.netty.buffer.ByteBuf buff,
                         @Advice.Return(readOnly = false) int rc) {
            rc = ShortRead.shortened(rc, buff.capacity());
        }
    }
}
