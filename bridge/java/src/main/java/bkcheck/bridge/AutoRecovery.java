package bkcheck.bridge;

import bkcheck.agent.AutoRecoveryHold;
import java.lang.reflect.Constructor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.meta.LedgerUnderreplicationManager;
import org.apache.bookkeeper.meta.LedgerManagerFactory;
import org.apache.bookkeeper.replication.Auditor;
import org.apache.bookkeeper.replication.ReplicationWorker;
import org.apache.bookkeeper.stats.NullStatsLogger;
import org.apache.bookkeeper.stats.StatsLogger;

/**
 * The release's own Auditor and ReplicationWorker in the driver's JVM, each
 * step of theirs held at a gate of the bkcheck agent
 * ({@link AutoRecoveryHold}) until the harness opens it at the model's step.
 *
 * <p>The Auditor uses the driver's observer client (it reads only the
 * metadata store). The worker has a client of its own, connected straight
 * to the bookies (the model's worker reads and copies within one step) and
 * whose metadata writes are held like the clients' (WorkerUpdatesEnsemble
 * releases the ensemble's swap). Its timers are steps: the backoff of a
 * failed ledger (lockReleaseOfFailedLedgerGracePeriod) and the worker's
 * loop backoff (rwRereplicateBackoffMs) are 0, so that the release and the
 * next acquire wait only at their gates; the Auditor's periodic checks are
 * off (AuditorChecksLedger is not driven) and lostBookieRecoveryDelay is 0,
 * so a lost bookie is audited when ZooKeeper tells the Auditor, and the
 * mark waits at its gate.
 */
final class AutoRecovery {
    /** The worker's client, by the name the harness gives it. */
    static final String WORKER = "worker";

    private final Driver driver;
    Driver.Client worker;
    private Auditor auditor;
    private ReplicationWorker replicationWorker;
    private LedgerUnderreplicationManager query;

    AutoRecovery(Driver driver) {
        this.driver = driver;
    }

    /** Starts the Auditor and the worker; returns once each rests at its gates. */
    synchronized Object start(long verificationPercentage, String ports) throws Exception {
        if (replicationWorker != null) {
            throw new IllegalStateException("AutoRecovery runs already");
        }
        driver.ensureObserver();
        ServerConfiguration conf = new ServerConfiguration();
        conf.setMetadataServiceUri(driver.metadataUri);
        conf.setAuditorLedgerVerificationPercentage(verificationPercentage);
        conf.setLostBookieRecoveryDelay(0);
        conf.setAuditorPeriodicCheckInterval(0);
        conf.setAuditorPeriodicBookieCheckInterval(0);
        conf.setRwRereplicateBackoffMs(0);
        conf.setLockReleaseOfFailedLedgerGracePeriod("0");
        worker = driver.steered(WORKER, ports);
        auditor = new Auditor(AUDITOR_ID, conf, driver.observer, false, NullStatsLogger.INSTANCE);
        auditor.start();
        vote(driver.metadataUri);
        // The Auditor's bookie check at its start (every bookie up: it marks
        // nothing) runs on its one thread: a task after it ends after it.
        java.lang.reflect.Field ex = Auditor.class.getDeclaredField("executor");
        ex.setAccessible(true);
        ((ExecutorService) ex.get(auditor)).submit(() -> { }).get(60, TimeUnit.SECONDS);
        // The constructor that takes the client is package-private.
        Constructor<ReplicationWorker> c = ReplicationWorker.class.getDeclaredConstructor(
                ServerConfiguration.class, BookKeeper.class, boolean.class, StatsLogger.class);
        c.setAccessible(true);
        replicationWorker = c.newInstance(conf, worker.bk, false, NullStatsLogger.INSTANCE);
        replicationWorker.start();
        String rest = AutoRecoveryHold.awaitWorker(this::metaHeld, 60_000);
        if (!rest.equals("acquire")) {
            throw new IllegalStateException("the ReplicationWorker started and rests at " + rest + ", not at its loop's acquire");
        }
        return Map.of("rest", rest);
    }

    /** The Auditor's bookie id, as its vote names it. */
    private static final String AUDITOR_ID = "bkcheck-auditor";

    /** The ZooKeeper session that holds the Auditor's vote; the driver's exit ends it. */
    private org.apache.zookeeper.ZooKeeper voter;

    /**
     * Casts the Auditor's vote as AuditorElector does when it wins
     * (ZkLedgerAuditorManager.tryToBecomeAuditor, createMyVote): an
     * ephemeral sequential V_ node under ledgers/underreplication/
     * auditorelection holding the AuditorVoteFormat text of its bookie id.
     * The Auditor here is started without an election, and what reads the
     * vote, BookKeeperAdmin.triggerAudit (getCurrentAuditor), refuses to
     * go on without one ("Autorecovery is disabled due to missing
     * Zookeeper node").
     */
    private void vote(String metadataUri) throws Exception {
        java.net.URI u = java.net.URI.create(metadataUri);
        java.util.concurrent.CountDownLatch connected = new java.util.concurrent.CountDownLatch(1);
        voter = new org.apache.zookeeper.ZooKeeper(u.getAuthority().replace(';', ','), 30_000, e -> {
            if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no ZooKeeper session for the Auditor's vote");
        }
        String path = "";
        for (String part : (u.getPath() + "/underreplication/auditorelection").substring(1).split("/")) {
            path += "/" + part;
            try {
                voter.create(path, new byte[0], org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        org.apache.zookeeper.CreateMode.PERSISTENT);
            } catch (org.apache.zookeeper.KeeperException.NodeExistsException e) {
                // made by the Auditor's or the worker's under-replication manager
            }
        }
        voter.create(path + "/V_", ("bookieId: \"" + AUDITOR_ID + "\"\n").getBytes(java.nio.charset.StandardCharsets.UTF_8),
                org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE, org.apache.zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL);
    }

    /** The Auditor's own thread (its executor's): its bookie audit marks there. */
    static boolean auditorThread(String name) {
        return name.startsWith("AuditorBookie-");
    }

    /**
     * The Auditor's mark of lost bookies (AuditorMarksLedgerUnderreplicated):
     * the gate its bookie audit reached, opened, and the worker awaited at
     * rest.
     */
    synchronized Object mark(long ledger) throws Exception {
        return afterGate(AutoRecoveryHold.open("mark", AutoRecovery::auditorThread, 60_000), ledger);
    }

    /**
     * The Auditor's periodic check now (AuditorChecksLedger): its
     * AuditorCheckAllLedgersTask run on a thread of its own, as the
     * executor would every auditorPeriodicCheckInterval, each mark it makes
     * opened as it reaches its gate, until the check ends. Returns the
     * marks.
     */
    synchronized Object check(long ledger) throws Exception {
        java.lang.reflect.Field f = Auditor.class.getDeclaredField("auditorCheckAllLedgersTask");
        f.setAccessible(true);
        Runnable task = (Runnable) f.get(auditor);
        java.util.concurrent.CompletableFuture<Void> ran = new java.util.concurrent.CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                task.run();
                ran.complete(null);
            } catch (Throwable e) {
                ran.completeExceptionally(e);
            }
        }, "bkcheck-auditor-check");
        t.setDaemon(true);
        t.start();
        List<Object> marks = new ArrayList<>();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!ran.isDone()) {
            long left = TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime());
            if (left <= 0) {
                throw new IllegalStateException("the Auditor's check did not end (marks opened: " + marks + ")");
            }
            if (AutoRecoveryHold.awaitGate("mark", name -> !auditorThread(name), ran::isDone, left)) {
                marks.add(AutoRecoveryHold.open("mark", name -> !auditorThread(name), left));
            }
        }
        ran.get();
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("marks", marks);
        res.put("rest", AutoRecoveryHold.awaitWorker(this::metaHeld, 60_000));
        return res;
    }

    /** The operator's decommission command, on a thread of its own; null before it starts. */
    private java.util.concurrent.CompletableFuture<Void> decommission;

    /**
     * Runs `bookkeeper shell decommissionbookie`'s call,
     * BookKeeperAdmin.decommissionBookie, on a thread of its own (with the
     * observer client: it reads the metadata store only), and awaits it at
     * its first wait (after triggerAudit) or its end.
     */
    synchronized Object decommission(String bookie) throws Exception {
        driver.ensureObserver();
        org.apache.bookkeeper.client.BookKeeperAdmin admin = new org.apache.bookkeeper.client.BookKeeperAdmin(driver.observer);
        decommission = new java.util.concurrent.CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                admin.decommissionBookie(org.apache.bookkeeper.net.BookieId.parse(bookie));
                decommission.complete(null);
            } catch (Throwable e) {
                decommission.completeExceptionally(e);
            }
        }, "bkcheck-decommission");
        t.setDaemon(true);
        t.start();
        return decommissionRest();
    }

    /** Opens the decommission's wait: it looks at the metadata again, and waits again or returns. */
    synchronized Object decommissionPoll() throws Exception {
        if (decommission == null) {
            throw new IllegalStateException("no decommission runs");
        }
        AutoRecoveryHold.open("decommission-wait", 60_000);
        return decommissionRest();
    }

    private Map<String, Object> decommissionRest() throws Exception {
        AutoRecoveryHold.awaitGate("decommission-wait", name -> true, decommission::isDone, 60_000);
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("done", decommission.isDone());
        if (decommission.isCompletedExceptionally()) {
            try {
                decommission.get();
            } catch (java.util.concurrent.ExecutionException e) {
                res.put("error", String.valueOf(e.getCause()));
            }
        }
        return res;
    }

    private boolean metaHeld() {
        return HeldLedgerManager.holding(worker.bk.getLedgerManager());
    }

    /**
     * Opens the gate at point (the model's step) and awaits the worker at
     * rest again: what the gate's thread was doing, where the worker rests
     * (a gate's point, "meta": its metadata write held, or "dead"), the
     * gates held, and the entries of ledger (if not negative) the worker
     * could not read.
     */
    synchronized Object open(String point, long ledger) throws Exception {
        if (replicationWorker == null) {
            throw new IllegalStateException("AutoRecovery does not run");
        }
        return afterGate(AutoRecoveryHold.open(point, 60_000), ledger);
    }

    /** What the harness is shown after a gate opened: the worker at rest again. */
    private Map<String, Object> afterGate(Map<String, Object> opened, long ledger) throws Exception {
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("opened", opened);
        res.put("rest", AutoRecoveryHold.awaitWorker(this::metaHeld, 60_000));
        res.put("held", AutoRecoveryHold.held());
        if (ledger >= 0) {
            res.put("unreadable", unreadable(ledger));
        }
        return res;
    }

    /** The worker's unableToReadEntriesForReplication of ledger (null: none made). */
    private List<Long> unreadable(long ledger) throws Exception {
        Iterable<?> set = AutoRecoveryHold.unreadable(replicationWorker, ledger);
        if (set == null) {
            return null;
        }
        List<Long> out = new ArrayList<>();
        for (Object e : set) {
            out.add((Long) e);
        }
        return out;
    }

    /** The ledger's under-replication znode: the missing replicas it was marked with, and whether it is locked. */
    synchronized Object underReplicated(long ledger) throws Exception {
        driver.ensureObserver();
        // Both by reflection: public since 4.14 only (the Auditor's own
        // calls are package-private before).
        if (query == null) {
            java.lang.reflect.Method f = BookKeeper.class.getDeclaredMethod("getLedgerManagerFactory");
            f.setAccessible(true);
            query = ((LedgerManagerFactory) f.invoke(driver.observer)).newLedgerUnderreplicationManager();
        }
        Map<String, Object> res = new LinkedHashMap<>();
        Object ur = LedgerUnderreplicationManager.class.getMethod("getLedgerUnreplicationInfo", long.class).invoke(query, ledger);
        res.put("missing", ur == null ? List.of() : ur.getClass().getMethod("getReplicaList").invoke(ur));
        try {
            res.put("locked", LedgerUnderreplicationManager.class.getMethod("isLedgerBeingReplicated", long.class)
                    .invoke(query, ledger));
        } catch (NoSuchMethodException e) {
            // before 4.15: not asked
        }
        return res;
    }
}
