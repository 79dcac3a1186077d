package bkcheck.agent;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;

import io.netty.buffer.ByteBuf;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.List;
import net.bytebuddy.asm.Advice;

/**
 * An add and a fence on a ledger the bookie has no handle for, interleaved
 * as the model's split-add-check has them (BookieChecksAdd, a fencing read,
 * then the add's store), on the release's own threads. Read at
 * release-4.17.0 and release-4.18.0: {@code BookieImpl.addEntry} gets the
 * ledger's handle ({@code HandleFactoryImpl.getHandle}: {@code ledgers.get},
 * else {@code LedgerDescriptor.create} and {@code putIfAbsent}), then under
 * {@code synchronized (handle)} checks {@code isFenced} (the ledger
 * storage's flag) and stores ({@code addEntryInternal}); a fencing read's
 * {@code BookieImpl.fenceLedger} gets the handle the same way and fences
 * under its {@code synchronized fenceAndLogInJournal}. Before PR #4701
 * {@code getHandle} returned the handle it created even where another
 * thread's was stored first, so two requests could lock two monitors.
 *
 * <p>The harness arms a race for a ledger ({@code race arm L}) and
 * delivers the add: the add's thread stops after creating its handle,
 * before storing it (P1). When a fencing request arrives its thread
 * creates and stores its own handle and stops (P3); {@code race
 * interleave} then lets the add go on to stop again after its fence check
 * (P2), and lets the fence go on, answering whether it takes the handle's
 * lock or waits for the add, which holds it: with PR #4701 both have the
 * one handle stored first, and the fence waits. {@code race store} lets
 * the add store. Each stop is awaited, never timed.
 */
public final class AddRace {
    private AddRace() {}

    static final List<BookieAgent.Weave> WEAVES = List.of(
            new BookieAgent.Weave("org.apache.bookkeeper.bookie.BookieImpl|org.apache.bookkeeper.bookie.Bookie",
                    named("addEntry").and(takesArgument(0, ByteBuf.class)).and(takesArgument(4, byte[].class)), Adding.class),
            new BookieAgent.Weave("org.apache.bookkeeper.bookie.BookieImpl|org.apache.bookkeeper.bookie.Bookie",
                    named("fenceLedger").and(takesArgument(0, long.class)), Fencing.class),
            new BookieAgent.Weave("org.apache.bookkeeper.bookie.LedgerDescriptor",
                    named("create").and(takesArgument(1, long.class)), Created.class),
            new BookieAgent.Weave("org.apache.bookkeeper.bookie.HandleFactoryImpl",
                    named("getHandle").and(takesArgument(0, long.class)).and(takesArgument(1, byte[].class)), Got.class),
            new BookieAgent.Weave("org.apache.bookkeeper.bookie.BookieImpl|org.apache.bookkeeper.bookie.Bookie",
                    named("addEntryInternal"), Checked.class),
            new BookieAgent.Weave("org.apache.bookkeeper.bookie.LedgerDescriptorImpl",
                    named("fenceAndLogInJournal"), Locked.class));

    /** Where the race is: each stage is reached once, in this order. */
    enum Stage { IDLE, ARMED, CREATED, FENCE_STORED, ADD_GOES, CHECKED, FENCE_GOES, FENCE_LOCKED, STORE }

    private static Stage stage = Stage.IDLE;
    private static long ledger = -1;
    private static Thread adder;
    private static Thread fencer;

    /** The ledger of the add this thread runs, or -1. */
    private static final ThreadLocal<Long> ADDING = ThreadLocal.withInitial(() -> -1L);
    /** The ledger of the fence this thread runs, or -1. */
    private static final ThreadLocal<Long> FENCING = ThreadLocal.withInitial(() -> -1L);

    public static final class Adding {
        @Advice.OnMethodEnter
        static void enter(@Advice.Argument(0) ByteBuf entry) {
            AddRace.adding(entry.getLong(entry.readerIndex()));
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class)
        static void exit() {
            AddRace.adding(-1);
        }
    }

    public static final class Fencing {
        @Advice.OnMethodEnter
        static void enter(@Advice.Argument(0) long ledgerId) {
            AddRace.fencing(ledgerId);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class)
        static void exit() {
            AddRace.fencing(-1);
        }
    }

    public static final class Created {
        @Advice.OnMethodExit
        static void exit(@Advice.Argument(1) long ledgerId) throws InterruptedException {
            AddRace.created(ledgerId);
        }
    }

    public static final class Got {
        @Advice.OnMethodExit
        static void exit(@Advice.Argument(0) long ledgerId) throws InterruptedException {
            AddRace.got(ledgerId);
        }
    }

    public static final class Checked {
        @Advice.OnMethodEnter
        static void enter() throws InterruptedException {
            AddRace.checked();
        }
    }

    public static final class Locked {
        @Advice.OnMethodEnter
        static void enter() {
            AddRace.locked();
        }
    }

    public static void adding(long ledgerId) {
        ADDING.set(ledgerId);
    }

    public static void fencing(long ledgerId) {
        FENCING.set(ledgerId);
    }

    /** P1: the armed add's handle is created, not stored yet. */
    public static synchronized void created(long ledgerId) throws InterruptedException {
        if (stage != Stage.ARMED || ADDING.get() != ledgerId || ledger != ledgerId) {
            return;
        }
        adder = Thread.currentThread();
        advance(Stage.CREATED);
        Fixes.acted("add-race", "ledger " + ledgerId + ": the add's handle created, not stored yet");
        awaitStage(Stage.ADD_GOES);
    }

    /** P3: a fence's thread has the handle it got stored, while the add waits at P1. */
    public static synchronized void got(long ledgerId) throws InterruptedException {
        if (stage != Stage.CREATED || FENCING.get() != ledgerId || Thread.currentThread() == adder) {
            return;
        }
        fencer = Thread.currentThread();
        advance(Stage.FENCE_STORED);
        awaitStage(Stage.FENCE_GOES);
    }

    /** P2: the add found the ledger not fenced and is about to store. */
    public static synchronized void checked() throws InterruptedException {
        if (Thread.currentThread() != adder || stage != Stage.ADD_GOES) {
            return;
        }
        advance(Stage.CHECKED);
        Fixes.acted("add-race", "ledger " + ledger + ": the add checked, not fenced, its store waiting");
        awaitStage(Stage.STORE);
    }

    /** The fence has its handle's lock. */
    public static synchronized void locked() {
        if (Thread.currentThread() == fencer && stage == Stage.FENCE_GOES) {
            advance(Stage.FENCE_LOCKED);
        }
    }

    private static void advance(Stage s) {
        stage = s;
        AddRace.class.notifyAll();
    }

    /** Waits (releasing the class's monitor) until the race reaches s or later. */
    private static void awaitStage(Stage s) throws InterruptedException {
        long until = System.currentTimeMillis() + 120_000;
        while (stage.ordinal() < s.ordinal() && System.currentTimeMillis() < until) {
            AddRace.class.wait(1000);
        }
    }

    /** Waits for stage s, bounded; false if it did not come. */
    private static boolean reached(Stage s) throws InterruptedException {
        long until = System.currentTimeMillis() + 30_000;
        while (stage.ordinal() < s.ordinal()) {
            long left = until - System.currentTimeMillis();
            if (left <= 0) {
                return false;
            }
            AddRace.class.wait(left);
        }
        return true;
    }

    /** The control's {@code race arm L}. */
    static synchronized String arm(long ledgerId) {
        if (stage != Stage.IDLE) {
            return "error a race is already armed (" + stage + ")";
        }
        ledger = ledgerId;
        advance(Stage.ARMED);
        return "ok";
    }

    /** The control's {@code race await-created}: the add stopped at P1. */
    static synchronized String awaitCreated() throws InterruptedException {
        if (!reached(Stage.CREATED)) {
            return "error the add never created a handle for ledger " + ledger + " (it had one: no race)";
        }
        return "ok";
    }

    /**
     * The control's {@code race interleave}, once the fencing request is
     * delivered: the fence stores its handle (P3), the add stores or finds
     * one and checks (P2), and the fence goes on: "ok" if it takes its
     * handle's lock, an error if it waits for the add's.
     */
    static String interleave() throws InterruptedException {
        synchronized (AddRace.class) {
            if (!reached(Stage.FENCE_STORED)) {
                return "error the fencing request never got the ledger's handle while the add waited";
            }
            advance(Stage.ADD_GOES);
            if (!reached(Stage.CHECKED)) {
                return "error the add did not come to its store after the fence check (" + stage + ")";
            }
            advance(Stage.FENCE_GOES);
        }
        long until = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < until) {
            synchronized (AddRace.class) {
                if (stage == Stage.FENCE_LOCKED) {
                    Fixes.acted("add-race", "ledger " + ledger + ": the fence took its own handle's lock while the add held the other's");
                    return "ok";
                }
            }
            ThreadInfo ti = ManagementFactory.getThreadMXBean().getThreadInfo(fencer.getId());
            if (ti != null && ti.getThreadState() == Thread.State.BLOCKED && ti.getLockOwnerId() == adder.getId()) {
                return "error the fence waits for the lock of the handle the add holds: both have the one handle stored first (" + ti.getLockName() + ")";
            }
            Thread.sleep(5); // polling two stable states, not deciding an order
        }
        return "error the fence neither took a handle's lock nor waited for the add's within 30 s";
    }

    /** The control's {@code race store}: the add stores. */
    static synchronized String store() {
        if (stage.ordinal() < Stage.CHECKED.ordinal()) {
            return "error no add waits at its store (" + stage + ")";
        }
        advance(Stage.STORE);
        return "ok";
    }
}
