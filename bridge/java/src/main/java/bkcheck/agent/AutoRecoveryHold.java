package bkcheck.agent;

import static bkcheck.agent.BookieAgent.method;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * AutoRecovery's steps at the model's steps, in the client driver's JVM
 * ({@code autorecovery=hold}), where the harness runs the release's own
 * Auditor and ReplicationWorker. Each point where the model's AutoRecovery
 * takes a step is a gate: the thread that reaches it stops there, and the
 * harness opens it at the model's step and awaits what follows (the call's
 * end, then the worker stopped at its next gate, in a held metadata write,
 * or dead). Read at release-4.18.0:
 *
 * <pre>
 *   acquire      ZkLedgerUnderreplicationManager.getLedgerToRereplicate (the
 *                worker's loop, ReplicationWorker.rereplicate(): WorkerAcquiresLedger)
 *   fragment     ReplicationWorker.tryReadingFaultyEntries, called for each
 *                closed fragment before replicateLedgerFragment
 *                (WorkerReplicatesFragment, WorkerDiesOnInconsistentRange)
 *   defer        ReplicationWorker.deferLedgerLockRelease (WorkerDefersLedger)
 *   replicated   ZkLedgerUnderreplicationManager.markLedgerReplicated
 *                (WorkerMarksLedgerReplicated)
 *   release      ZkLedgerUnderreplicationManager.releaseUnderreplicatedLedger,
 *                on the worker's thread or the timer's that
 *                deferLedgerLockReleaseOfFailedLedger scheduled (WorkerReleasesLedger)
 *   mark         ZkLedgerUnderreplicationManager.markLedgerUnderreplicatedAsync,
 *                the Auditor's publishSuspectedLedgersAsync
 *                (AuditorMarksLedgerUnderreplicated): its future awaited
 * </pre>
 *
 * A gate reached inside another's call (markLedgerReplicated releases the
 * lock itself) is passed. No gate waits on a clock: a thread stays at its
 * gate until the harness opens it (or ten minutes pass, when a harness that
 * died left it there).
 */
public final class AutoRecoveryHold {
    private AutoRecoveryHold() {}

    private static final String MANAGER = "org.apache.bookkeeper.meta.ZkLedgerUnderreplicationManager";
    private static final String WORKER = "org.apache.bookkeeper.replication.ReplicationWorker";

    static final List<BookieAgent.Weave> WEAVES = List.of(
            new BookieAgent.Weave(MANAGER, method("getLedgerToRereplicate", 0), Gated.class),
            new BookieAgent.Weave(MANAGER, method("markLedgerReplicated", 1), Gated.class),
            new BookieAgent.Weave(MANAGER, method("releaseUnderreplicatedLedger", 1), Gated.class),
            new BookieAgent.Weave(MANAGER, method("markLedgerUnderreplicatedAsync", 2), Gated.class),
            new BookieAgent.Weave(WORKER, method("tryReadingFaultyEntries", 2), Gated.class),
            new BookieAgent.Weave(WORKER, method("deferLedgerLockRelease", 1), Gated.class),
            new BookieAgent.Weave(WORKER, method("getUnderreplicatedFragments", 2), Ordered.class),
            decommissionWaits("decommissionBookie", 1),
            decommissionWaits("waitForLedgersToBeReplicated", 3));

    /**
     * BookKeeperAdmin.decommissionBookie's waits, each a gate
     * ("decommission-wait") instead of a Thread.sleep: the 30 s it gives
     * the Auditor after triggerAudit, and each poll's sleep in
     * waitForLedgersToBeReplicated. The harness opens one at the model's
     * AdminFinishesDecommission, and the command goes on to look at the
     * ledgers' metadata again.
     */
    private static BookieAgent.Weave decommissionWaits(String name, int args) {
        try {
            return new BookieAgent.Weave("org.apache.bookkeeper.client.BookKeeperAdmin", method(name, args),
                    net.bytebuddy.asm.MemberSubstitution.relaxed()
                            .method(net.bytebuddy.matcher.ElementMatchers.named("sleep")
                                    .and(net.bytebuddy.matcher.ElementMatchers.isDeclaredBy(Thread.class))
                                    .and(net.bytebuddy.matcher.ElementMatchers.takesArguments(long.class)))
                            .replaceWith(AutoRecoveryHold.class.getMethod("decommissionWait", long.class))
                            .on(method(name, args)));
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A wait of the decommission command, held at its gate until the harness opens it. */
    public static void decommissionWait(long millis) {
        exited(reach("decommissionWait", new Object[] {millis}), null);
    }

    /**
     * The order the harness wants the next run's fragments tried in, by
     * their first (Java) entry id: rereplicate iterates the HashSet
     * getUnderreplicatedFragments returns, whose order LedgerFragment's
     * identity hash codes decide, so any order is one the release can take;
     * the model's trace picks one, and the set is returned in it (the
     * fragments it does not name after, in the set's own order).
     */
    private static volatile List<Long> order = List.of();

    /** Sets the order of the fragments the worker's next check returns. */
    public static void order(List<Long> firsts) {
        order = List.copyOf(firsts);
    }

    public static final class Ordered {
        @Advice.OnMethodExit
        static void exit(@Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object fragments) {
            fragments = AutoRecoveryHold.ordered(fragments);
        }
    }

    /** The fragments as a set iterated in the harness's order. */
    public static Object ordered(Object fragments) {
        List<Object> rest = new ArrayList<>((java.util.Collection<?>) fragments);
        java.util.LinkedHashSet<Object> out = new java.util.LinkedHashSet<>();
        for (long first : order) {
            for (Object f : rest) {
                if (describe(f).get("first").equals(first)) {
                    out.add(f);
                }
            }
        }
        out.addAll(rest);
        return out;
    }

    /** A thread stopped at a gate, and what it was doing. */
    private static final class Gate {
        final String point;
        final Thread thread = Thread.currentThread();
        final Map<String, Object> detail;
        boolean open;
        boolean done;

        Gate(String point, Map<String, Object> detail) {
            this.point = point;
            this.detail = detail;
        }
    }

    private static final List<Gate> GATES = new ArrayList<>();
    private static final ThreadLocal<Boolean> INSIDE = ThreadLocal.withInitial(() -> false);
    /** The worker's thread, once it has reached a gate. */
    private static Thread worker;

    /** Every gate's advice: the method woven names the gate. */
    public static final class Gated {
        @Advice.OnMethodEnter
        static Object enter(@Advice.Origin("#m") String method, @Advice.AllArguments Object[] args) {
            return AutoRecoveryHold.reach(method, args);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class)
        static void exit(@Advice.Enter Object gate,
                         @Advice.Return(typing = Assigner.Typing.DYNAMIC) Object returned) {
            AutoRecoveryHold.exited(gate, returned);
        }
    }

    /** The gate a woven method is, and what the harness is shown of the call. */
    static Gate gateOf(String method, Object[] args) {
        Map<String, Object> d = new LinkedHashMap<>();
        switch (method) {
            case "getLedgerToRereplicate":
                return new Gate("acquire", d);
            case "markLedgerReplicated":
                d.put("ledger", args[0]);
                return new Gate("replicated", d);
            case "releaseUnderreplicatedLedger":
                d.put("ledger", args[0]);
                return new Gate("release", d);
            case "deferLedgerLockRelease":
                d.put("ledger", args[0]);
                return new Gate("defer", d);
            case "markLedgerUnderreplicatedAsync":
                d.put("ledger", args[0]);
                d.put("missing", new ArrayList<>((java.util.Collection<?>) args[1]));
                return new Gate("mark", d);
            case "tryReadingFaultyEntries":
                return new Gate("fragment", describe(args[1]));
            case "decommissionWait":
                d.put("millis", args[0]);
                return new Gate("decommission-wait", d);
            default:
                throw new IllegalStateException("no gate for " + method);
        }
    }

    /** A LedgerFragment as the harness compares it: its first and last entry and its bad bookies. */
    public static Map<String, Object> describe(Object fragment) {
        Map<String, Object> d = new LinkedHashMap<>();
        try {
            d.put("first", Fixes.call(fragment, "getFirstEntryId"));
            d.put("last", Fixes.call(fragment, "getLastKnownEntryId"));
            List<String> bad = new ArrayList<>();
            for (Object b : (Iterable<?>) Fixes.call(fragment, "getAddresses")) {
                bad.add(b.toString());
            }
            d.put("bad", bad);
        } catch (Exception e) {
            d.put("error", e.toString());
        }
        return d;
    }

    /** Stops the calling thread at its gate until the harness opens it; null for a gate passed. */
    public static Object reach(String method, Object[] args) {
        if (INSIDE.get()) {
            return null;
        }
        INSIDE.set(true);
        Gate g = gateOf(method, args);
        synchronized (GATES) {
            if (g.point.equals("acquire") || g.point.equals("fragment") || g.point.equals("defer")) {
                worker = g.thread;
            }
            GATES.add(g);
            GATES.notifyAll();
            long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
            while (!g.open && System.nanoTime() < until) {
                try {
                    GATES.wait(1000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        return g;
    }

    /**
     * The gate's call has ended: the Auditor's mark once its znode is
     * written (the returned future awaited on its thread).
     */
    public static void exited(Object gate, Object returned) {
        if (gate == null) {
            return;
        }
        if (returned instanceof CompletableFuture<?> f) {
            try {
                f.get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                ((Gate) gate).detail.put("error", e.toString());
            }
        }
        INSIDE.set(false);
        synchronized (GATES) {
            ((Gate) gate).done = true;
            GATES.remove(gate);
            GATES.notifyAll();
        }
    }

    /**
     * The worker's unableToReadEntriesForReplication of ledger: the entries
     * its replications could not read (null: no set made). The field is a
     * Guava Cache, asked through its public interface (the loaded class is
     * package-private).
     */
    public static Iterable<?> unreadable(Object replicationWorker, long ledger) throws Exception {
        Object cache = Control.field(replicationWorker, "unableToReadEntriesForReplication");
        return (Iterable<?>) Class.forName("com.google.common.cache.Cache").getMethod("getIfPresent", Object.class)
                .invoke(cache, ledger);
    }

    /** Whether the worker's thread (the one that reached its gates) is alive. */
    public static boolean workerAlive() {
        synchronized (GATES) {
            return worker != null && worker.isAlive();
        }
    }

    /** What a held gate is doing, for the harness: its point and detail. */
    private static Map<String, Object> show(Gate g) {
        Map<String, Object> m = new LinkedHashMap<>(g.detail);
        m.put("point", g.point);
        m.put("thread", g.thread.getName());
        return m;
    }

    /** The gates held now, oldest first. */
    public static List<Map<String, Object>> held() {
        synchronized (GATES) {
            List<Map<String, Object>> out = new ArrayList<>();
            for (Gate g : GATES) {
                if (!g.open) {
                    out.add(show(g));
                }
            }
            return out;
        }
    }

    /**
     * Awaits a gate at point held, and opens it: its thread goes on, and the
     * call is awaited to its end unless it is the worker's loop (acquire) or
     * a fragment (their ends are the run's next gates).
     */
    public static Map<String, Object> open(String point, long timeoutMillis) throws InterruptedException {
        return open(point, name -> true, timeoutMillis);
    }

    /** As open(point, timeout), of a gate whose thread's name passes thread. */
    public static Map<String, Object> open(String point, Predicate<String> thread, long timeoutMillis)
            throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        synchronized (GATES) {
            if (!awaitGate(point, thread, () -> false, timeoutMillis)) {
                throw new IllegalStateException("no thread reached the gate " + point + " (held: " + held() + ")");
            }
            Gate g = first(point, thread);
            g.open = true;
            GATES.notifyAll();
            Map<String, Object> shown = show(g);
            if (point.equals("acquire") || point.equals("fragment")) {
                return shown;
            }
            while (!g.done) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("the call at gate " + point + " did not end");
                }
                GATES.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
            return shown;
        }
    }

    /**
     * Awaits a gate at point held by a thread whose name passes thread:
     * true when one is, false once stop holds or the time is out. stop is
     * looked at every 10 ms at most; the gates wake it at every change.
     */
    public static boolean awaitGate(String point, Predicate<String> thread, BooleanSupplier stop, long timeoutMillis)
            throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        synchronized (GATES) {
            while (first(point, thread) == null) {
                long left = until - System.nanoTime();
                if (left <= 0 || stop.getAsBoolean()) {
                    return false;
                }
                GATES.wait(Math.min(10, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left))));
            }
            return true;
        }
    }

    private static Gate first(String point, Predicate<String> thread) {
        for (Gate g : GATES) {
            if (!g.open && g.point.equals(point) && thread.test(g.thread.getName())) {
                return g;
            }
        }
        return null;
    }

    /**
     * Awaits the worker at rest: stopped at a gate, in a metadata write the
     * harness holds (metaHeld), or dead. Returns where: the gate's point,
     * "meta" or "dead". The gates are told of every change; the other two
     * conditions are looked at every 10 ms at most.
     */
    public static String awaitWorker(BooleanSupplier metaHeld, long timeoutMillis) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        synchronized (GATES) {
            while (true) {
                for (Gate g : GATES) {
                    if (!g.open && g.thread == worker) {
                        return g.point;
                    }
                }
                if (worker != null && !worker.isAlive()) {
                    return "dead";
                }
                if (metaHeld.getAsBoolean()) {
                    return "meta";
                }
                long left = until - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("the ReplicationWorker reached no gate (held: " + held() + ")");
                }
                GATES.wait(Math.min(10, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left))));
            }
        }
    }
}
