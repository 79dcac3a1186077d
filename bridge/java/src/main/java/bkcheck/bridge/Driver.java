package bkcheck.bridge;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.AddWindow;
import org.apache.bookkeeper.client.AsyncCallback;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.BookKeeperAdmin;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.client.ScriptedPlacementPolicy;
import org.apache.bookkeeper.client.SteeredBookKeeper;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.meta.LedgerManager;
import org.apache.bookkeeper.common.util.OrderedExecutor;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.net.BookieId;
import org.apache.bookkeeper.net.BookieSocketAddress;
import org.apache.bookkeeper.proto.BookieClientImpl;
import org.apache.bookkeeper.stats.NullStatsLogger;

/**
 * The Java end of the bridge: runs the model's clients as BookKeeper clients
 * and answers what BookKeeper shows, for the Go side, over a line protocol.
 *
 * <p>Requests on stdin, one per line: {@code ID VERB ARGS...}. Answers on
 * stdout: {@code ID ok JSON} or {@code ID err MESSAGE}; asynchronous events
 * (a metadata write held, an add completed, a write failed, a recovery open
 * completed) as
 * {@code ev JSON}. BookKeeper's own logging never reaches stdout: it is
 * pointed at stderr before anything logs.
 *
 * <p>Verbs (bridge/README.md says each with its answer): init (format the
 * metadata store); client NAME REALID=PORT,... (a steered client and its
 * proxy port per bookie); create NAME E QW QA IDS (the ensemble the trace
 * chose); add NAME (or the second half of an op create-op NAME made);
 * create-op NAME (the first half of an add: the op takes the ensemble
 * now); recover NAME LEDGER (open with recovery); close NAME;
 * delete NAME LEDGER; timeout NAME BOOKIE LEDGER ENTRY (an outstanding
 * write's callback runs with TimeoutException); timeout-read NAME BOOKIE
 * LEDGER ENTRY (likewise a read); speculate NAME ENTRY (the speculative
 * request of NAME's sequence read of ENTRY fires now, as its timer would;
 * whether a read went to the next replica); release NAME (the oldest held metadata
 * write of NAME proceeds); replace ID (the next replacement bookie);
 * observe LEDGER ENTRIES IDS (what each bookie serves, the metadata, each
 * client's LAC and acknowledged entries); probe BOOKIE LEDGER (whether a
 * bookie serves yet); writable (the bookies registered writable);
 * read-closed LEDGER (a fresh reader's view); quit.
 */
public final class Driver {
    static final byte[] PASSWORD = "bkcheck".getBytes(StandardCharsets.UTF_8);
    static final ObjectMapper JSON = new ObjectMapper();

    private final PrintStream out;
    final String metadataUri;
    /** maxNumEnsembleChanges: the model's bound on a writer's ensemble changes. */
    private final int maxEnsembleChanges;
    private final Map<String, Client> clients = new LinkedHashMap<>();
    BookKeeper observer;
    private BookieClientImpl bookieObserver;
    private EventLoopGroup observerLoop;
    private OrderedExecutor observerExecutor;
    private ScheduledExecutorService observerScheduler;

    /** A model client: its BookKeeper instance and what it has seen. */
    static final class Client {
        final String name;
        SteeredBookKeeper bk;
        volatile LedgerHandle lh;
        final TreeSet<Long> acked = new TreeSet<>();
        final TreeSet<Long> completed = new TreeSet<>();
        int requested;
        final List<Map<String, Object>> addResults = new ArrayList<>();
        /** Ops create-op made, waiting for their second half (add). */
        final java.util.ArrayDeque<Object> created = new java.util.ArrayDeque<>();
        volatile String phase = "idle";

        Client(String name) {
            this.name = name;
        }
    }

    Driver(PrintStream out, String metadataUri, int maxEnsembleChanges) {
        this.out = out;
        this.metadataUri = metadataUri;
        this.maxEnsembleChanges = maxEnsembleChanges;
    }

    public static void main(String[] args) throws Exception {
        PrintStream protocol = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        Driver d = new Driver(protocol, args[0], args.length > 1 ? Integer.parseInt(args[1]) : Integer.MAX_VALUE);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            if (w.length < 2) {
                continue;
            }
            String id = w[0];
            try {
                Object result = d.handle(w[1], java.util.Arrays.copyOfRange(w, 2, w.length));
                if (result == QUIT) {
                    d.reply(id, "ok", "{}");
                    break;
                }
                d.reply(id, "ok", JSON.writeValueAsString(result));
            } catch (Throwable t) {
                d.reply(id, "err", (t.getClass().getSimpleName() + ": " + t.getMessage()).replace('\n', ' '));
            }
        }
        d.shutdown();
        System.exit(0);
    }

    private static final Object QUIT = new Object();

    synchronized void reply(String id, String kind, String body) {
        out.println(id + " " + kind + " " + body);
    }

    /** Counts every event sent: settle's measure of whether anything happened. */
    final java.util.concurrent.atomic.AtomicLong activity = new java.util.concurrent.atomic.AtomicLong();
    /** Whether clients report every request and completion (verb accounting). */
    boolean accounting;

    void event(Map<String, Object> ev) {
        activity.incrementAndGet();
        try {
            String s = JSON.writeValueAsString(ev);
            synchronized (this) {
                out.println("ev " + s);
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    Object handle(String verb, String[] a) throws Exception {
        switch (verb) {
            case "init":
                return init();
            case "client":
                return newClient(a[0], a.length > 1 ? a[1] : "");
            case "create":
                return create(client(a[0]), Integer.parseInt(a[1]), Integer.parseInt(a[2]),
                        Integer.parseInt(a[3]), a[4]);
            case "create-op":
                return createOp(client(a[0]));
            case "add":
                return add(client(a[0]));
            case "recover":
                return recover(client(a[0]), Long.parseLong(a[1]));
            case "close":
                return close(client(a[0]));
            case "delete":
                return delete(client(a[0]), Long.parseLong(a[1]));
            case "timeout":
                return Map.of("outcome", client(a[0]).bk.timeOut(a[1], Long.parseLong(a[2]), Long.parseLong(a[3])));
            case "speculate":
                return Map.of("sent", client(a[0]).bk.speculate(Long.parseLong(a[1])));
            case "timeout-read":
                return Map.of("timedOut", client(a[0]).bk.timeOutRead(a[1], Long.parseLong(a[2]), Long.parseLong(a[3])));
            case "release": {
                LedgerManager lm = client(a[0]).bk.getLedgerManager();
                boolean released = HeldLedgerManager.release(lm);
                Map<String, Object> res = new LinkedHashMap<>();
                res.put("released", released);
                if (released) {
                    res.put("outcome", HeldLedgerManager.releaseOutcome(lm));
                }
                return res;
            }
            case "accounting":
                accounting = true;
                return Map.of();
            case "settle":
                return settle();
            case "replace":
                ScriptedPlacementPolicy.nextReplacement(BookieId.parse(a[0]));
                return Map.of();
            case "observe":
                return observe(Long.parseLong(a[0]), Integer.parseInt(a[1]),
                        a.length > 2 ? a[2].split(",") : new String[0]);
            case "probe":
                return probe(a[0], Long.parseLong(a[1]));
            case "writable":
                ensureObserver();
                List<String> ids = new ArrayList<>();
                for (BookieId b : observer.getMetadataClientDriver().getRegistrationClient()
                        .getWritableBookies().get(30, TimeUnit.SECONDS).getValue()) {
                    ids.add(b.toString());
                }
                return Map.of("bookies", ids);
            case "read-closed":
                return readClosed(Long.parseLong(a[0]));
            case "connect":
                // The observer, the Auditor's stand-in, connected to every bookie.
                ensureObserver();
                return Map.of("bookies", org.apache.bookkeeper.client.SteeredBookKeeper.connect(observer));
            case "watched": {
                // Every client's view of the bookies' registrations.
                ensureObserver();
                Map<String, Object> views = new LinkedHashMap<>();
                views.put("observer", org.apache.bookkeeper.client.SteeredBookKeeper.watched(observer));
                for (Client c : clients.values()) {
                    if (c.bk != null) {
                        views.put(c.name, org.apache.bookkeeper.client.SteeredBookKeeper.watched(c.bk));
                    }
                }
                // And the ReplicationWorker's, whose LedgerChecker asks it.
                if (autoRecovery.worker != null && autoRecovery.worker.bk != null) {
                    views.put(AutoRecovery.WORKER, org.apache.bookkeeper.client.SteeredBookKeeper.watched(autoRecovery.worker.bk));
                }
                return views;
            }
            case "check-ledger":
                return checkLedger(Long.parseLong(a[0]), Long.parseLong(a[1]));
            case "autorecovery":
                return autoRecovery.start(Long.parseLong(a[0]), a.length > 1 ? a[1] : "");
            case "gate":
                return autoRecovery.open(a[0], a.length > 1 ? Long.parseLong(a[1]) : -1);
            case "fragment-order": {
                List<Long> firsts = new ArrayList<>();
                for (String f : a.length > 0 ? a[0].split(",") : new String[0]) {
                    if (!f.isEmpty()) {
                        firsts.add(Long.parseLong(f));
                    }
                }
                bkcheck.agent.AutoRecoveryHold.order(firsts);
                return Map.of();
            }
            case "worker-alive":
                return Map.of("alive", bkcheck.agent.AutoRecoveryHold.workerAlive());
            case "decommission":
                return autoRecovery.decommission(a[0]);
            case "decommission-poll":
                return autoRecovery.decommissionPoll();
            case "audit-mark":
                return autoRecovery.mark(Long.parseLong(a[0]));
            case "audit-check":
                return autoRecovery.check(Long.parseLong(a[0]));
            case "under-replicated":
                return autoRecovery.underReplicated(Long.parseLong(a[0]));
            case "quit":
                return QUIT;
            default:
                throw new IllegalArgumentException("unknown verb " + verb);
        }
    }

    /** The release's Auditor and ReplicationWorker, when the trace has AutoRecovery. */
    final AutoRecovery autoRecovery = new AutoRecovery(this);

    Client client(String name) {
        Client c = name.equals(AutoRecovery.WORKER) ? autoRecovery.worker : clients.get(name);
        if (c == null) {
            throw new IllegalArgumentException("no client " + name);
        }
        return c;
    }

    Object init() throws Exception {
        ServerConfiguration conf = new ServerConfiguration();
        conf.setMetadataServiceUri(metadataUri);
        return Map.of("formatted", BookKeeperAdmin.format(conf, false, true));
    }

    /** The configuration every steered client shares: nothing left to a timer. */
    ClientConfiguration clientConf() {
        ClientConfiguration conf = new ClientConfiguration();
        conf.setMetadataServiceUri(metadataUri);
        conf.setZkTimeout(30000);
        conf.setUseV2WireProtocol(true);
        // A message the trace loses is dropped by the proxy and never times out
        // by the clock; Java's timers never decide a step.
        conf.setAddEntryTimeout(3600);
        conf.setReadEntryTimeout(3600);
        conf.setReadTimeout(3600);
        conf.setSpeculativeReadTimeout(0);
        conf.setEnsemblePlacementPolicy(ScriptedPlacementPolicy.class);
        conf.setProperty("enableParallelRecoveryRead", false);
        // The model bounds a writer's ensemble changes (--max-ensemble-changes);
        // LedgerHandle.ensembleChangeLoop fails the handle beyond the same bound.
        conf.setMaxAllowedEnsembleChanges(maxEnsembleChanges);
        return conf;
    }

    Object newClient(String name, String ports) throws Exception {
        clients.put(name, steered(name, ports));
        return Map.of();
    }

    /**
     * A client whose connections go to the given port of each bookie (its
     * proxy port, or the bookie's own) and whose metadata writes are held
     * (meta-held events) until the harness releases them.
     */
    Client steered(String name, String ports) throws Exception {
        Map<String, Integer> proxy = new HashMap<>();
        for (String p : ports.split(",")) {
            if (!p.isEmpty()) {
                String[] kv = p.split("=");
                proxy.put(kv[0], Integer.parseInt(kv[1]));
            }
        }
        Client c = new Client(name);
        c.bk = new SteeredBookKeeper(clientConf(), proxy, lm -> HeldLedgerManager.wrap(lm, h -> {
            Map<String, Object> ev = new LinkedHashMap<>();
            ev.put("ev", "meta-held");
            ev.put("client", name);
            ev.put("op", h.op());
            ev.put("ledger", h.ledgerId());
            event(ev);
        }));
        c.bk.onWriteFailed = teller("write-failed", name);
        c.bk.onReadFailed = teller("read-failed", name);
        if (accounting) {
            c.bk.onRequest = teller("req", name);
            c.bk.onDone = teller("done", name);
        }
        return c;
    }

    /** An event kind of client name, with the fields it is given. */
    java.util.function.Consumer<Map<String, Object>> teller(String kind, String name) {
        return f -> {
            Map<String, Object> ev = new LinkedHashMap<>();
            ev.put("ev", kind);
            ev.put("client", name);
            ev.putAll(f);
            event(ev);
        };
    }

    /**
     * Waits until the clients have nothing left to do on their own: every
     * executor their work goes through has run what was queued on it
     * (SteeredBookKeeper.drain), no metadata operation is in flight, and a
     * whole round of that caused no event and completed no metadata
     * operation. What is left then waits for the environment: a frame the
     * proxy holds, a metadata write held, a call of the workload. Frames a
     * client wrote and the proxy has not read yet, and answers the proxy
     * delivered that the client has not read yet, are the Go side's to
     * await: every request is reported (req) and every completion (done).
     */
    Object settle() throws Exception {
        long deadline = System.nanoTime() + 20_000_000_000L;
        for (int rounds = 1; ; rounds++) {
            long before = activity.get() + HeldLedgerManager.completions.get();
            for (Client c : clients.values()) {
                c.bk.drain(Math.max(1, (deadline - System.nanoTime()) / 1_000_000L));
            }
            while (HeldLedgerManager.inFlight.get() > 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("a metadata operation did not complete within 20 s");
                }
                Thread.sleep(1); // waiting for a ZooKeeper answer, a condition
            }
            if (activity.get() + HeldLedgerManager.completions.get() == before) {
                return Map.of("rounds", rounds);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the clients did not settle within 20 s");
            }
        }
    }

    Object create(Client c, int e, int qw, int qa, String ensemble) {
        if (!ensemble.equals("-")) { // "-": BookKeeper's own placement
            List<BookieId> ids = new ArrayList<>();
            for (String s : ensemble.split(",")) {
                ids.add(BookieId.parse(s));
            }
            ScriptedPlacementPolicy.nextEnsemble(ids);
        }
        c.phase = "creating";
        c.bk.asyncCreateLedger(e, qw, qa, BookKeeper.DigestType.CRC32, PASSWORD, (rc, lh, ctx) -> {
            Map<String, Object> ev = newEvent("created", c.name, rc);
            if (rc == BKException.Code.OK) {
                c.lh = lh;
                c.phase = "writing";
                ev.put("ledger", lh.getId());
            } else {
                c.phase = "create-failed";
            }
            event(ev);
        }, null, null);
        return Map.of();
    }

    /** An event's common fields: what happened, to which client, with which rc. */
    static Map<String, Object> newEvent(String kind, String client, int rc) {
        Map<String, Object> ev = new LinkedHashMap<>();
        ev.put("ev", kind);
        ev.put("client", client);
        ev.put("rc", rc);
        return ev;
    }

    /**
     * add NAME: the application's add, both halves at once; or, where
     * create-op NAME made its op before, that op's second half (queued and
     * initiated with the ensemble it took when it was created).
     */
    Object add(Client c) {
        LedgerHandle lh = c.lh;
        if (lh == null) {
            throw new IllegalStateException(c.name + " has no ledger");
        }
        Object created = c.created.poll();
        if (created != null) {
            AddWindow.queue(lh, created);
            return Map.of();
        }
        synchronized (c) {
            c.requested++;
        }
        lh.asyncAddEntry(payload(c), addCallback(c), null);
        return Map.of();
    }

    /**
     * create-op NAME: the first half of the application's add (the model's
     * ClientCreatesAddOp): the op takes the handle's ensemble now and waits,
     * outside the queue, for the second half (add NAME).
     */
    Object createOp(Client c) {
        LedgerHandle lh = c.lh;
        if (lh == null) {
            throw new IllegalStateException(c.name + " has no ledger");
        }
        synchronized (c) {
            c.requested++;
        }
        c.created.add(AddWindow.create(lh, io.netty.buffer.Unpooled.wrappedBuffer(payload(c)), addCallback(c), null));
        return Map.of();
    }

    private static byte[] payload(Client c) {
        return (c.name + "-" + System.nanoTime()).getBytes(StandardCharsets.UTF_8);
    }

    private AsyncCallback.AddCallback addCallback(Client c) {
        return (rc, h, entryId, ctx) -> {
            Map<String, Object> ev = newEvent("added", c.name, rc);
            ev.put("entry", entryId);
            synchronized (c) {
                if (rc == BKException.Code.OK) {
                    c.acked.add(entryId);
                }
                c.completed.add(entryId);
                c.addResults.add(ev);
            }
            event(ev);
        };
    }

    Object recover(Client c, long ledger) {
        c.phase = "recovering";
        c.bk.asyncOpenLedger(ledger, BookKeeper.DigestType.CRC32, PASSWORD, (rc, lh, ctx) -> {
            Map<String, Object> ev = newEvent("recovered", c.name, rc);
            if (rc == BKException.Code.OK) {
                c.lh = lh;
                c.phase = "closed";
                ev.put("lastEntry", lh.getLastAddConfirmed());
            } else {
                c.phase = "recovery-failed";
            }
            event(ev);
        }, null);
        return Map.of();
    }

    Object close(Client c) {
        LedgerHandle lh = c.lh;
        c.phase = "closing";
        lh.asyncClose((rc, h, ctx) -> {
            Map<String, Object> ev = newEvent("closed", c.name, rc);
            c.phase = rc == BKException.Code.OK ? "closed" : "close-failed";
            event(ev);
        }, null);
        return Map.of();
    }

    Object delete(Client c, long ledger) {
        c.bk.asyncDeleteLedger(ledger, (rc, ctx) -> {
            Map<String, Object> ev = newEvent("deleted", c.name, rc);
            event(ev);
        }, null);
        return Map.of();
    }

    synchronized void ensureObserver() throws Exception {
        if (observer != null) {
            return;
        }
        ClientConfiguration conf = new ClientConfiguration();
        conf.setMetadataServiceUri(metadataUri);
        conf.setZkTimeout(30000);
        observer = new BookKeeper(conf);
        observerLoop = new NioEventLoopGroup(1);
        observerExecutor = OrderedExecutor.newBuilder().numThreads(1).name("observer").build();
        observerScheduler = Executors.newSingleThreadScheduledExecutor();
        // Straight to each bookie's own port (a bookie id is its address), never through the proxy.
        bookieObserver = new BookieClientImpl(new ClientConfiguration(), observerLoop,
                PooledByteBufAllocator.DEFAULT, observerExecutor, observerScheduler, NullStatsLogger.INSTANCE,
                id -> {
                    String[] hp = id.toString().split(":");
                    return new BookieSocketAddress(hp[0], Integer.parseInt(hp[1]));
                });
    }

    /** Non-fencing reads of entries 0..entries-1 on each bookie: the rc of each. */
    Map<String, Object> observe(long ledger, int entries, String[] bookies) throws Exception {
        ensureObserver();
        Map<String, Object> res = new LinkedHashMap<>();
        Map<String, Object> served = new LinkedHashMap<>();
        for (String b : bookies) {
            List<CompletableFuture<Integer>> rcs = new ArrayList<>();
            for (long e = 0; e < entries; e++) {
                CompletableFuture<Integer> f = new CompletableFuture<>();
                bookieObserver.readEntry(BookieId.parse(b), ledger, e, (rc, l, en, buf, ctx) -> {
                    f.complete(rc);
                }, null, 0);
                rcs.add(f);
            }
            List<Integer> got = new ArrayList<>();
            for (CompletableFuture<Integer> f : rcs) {
                got.add(f.get(30, TimeUnit.SECONDS));
            }
            served.put(b, got);
        }
        res.put("bookies", served);
        res.put("meta", metadata(ledger));
        Map<String, Object> cs = new LinkedHashMap<>();
        for (Client c : clients.values()) {
            Map<String, Object> cv = new LinkedHashMap<>();
            LedgerHandle lh = c.lh;
            cv.put("phase", c.phase);
            cv.put("lac", lh == null ? null : lh.getLastAddConfirmed());
            synchronized (c) {
                cv.put("acked", new ArrayList<>(c.acked));
                cv.put("requested", c.requested);
                cv.put("completed", c.completed.size());
            }
            cs.put(c.name, cv);
        }
        res.put("clients", cs);
        return res;
    }

    Map<String, Object> metadata(long ledger) throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        if (ledger < 0) {
            return m;
        }
        LedgerMetadata md;
        try {
            md = observer.getLedgerManager().readLedgerMetadata(ledger).get(30, TimeUnit.SECONDS).getValue();
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof BKException.BKNoSuchLedgerExistsOnMetadataServerException) {
                return m;
            }
            throw e;
        }
        return metadataOf(md);
    }

    /** The metadata as the Go side reads it: state, last entry, ensembles by first entry. */
    static Map<String, Object> metadataOf(LedgerMetadata md) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("state", md.getState().toString());
        m.put("lastEntry", md.getLastEntryId());
        List<Object> ens = new ArrayList<>();
        for (Map.Entry<Long, ? extends List<BookieId>> e : md.getAllEnsembles().entrySet()) {
            List<String> ids = new ArrayList<>();
            for (BookieId b : e.getValue()) {
                ids.add(b.toString());
            }
            ens.add(Map.of("first", e.getKey(), "bookies", ids));
        }
        m.put("ensembles", ens);
        return m;
    }

    /**
     * One read of entry 0 of a ledger on a bookie, straight to its port: the
     * rc says whether it serves (any answer of a bookie, not a failed
     * connection).
     * BookieNettyServer binds its port before the journal is replayed and
     * resets connections until the bookie runs, so the Go side asks this
     * until it does.
     */
    Object probe(String bookie, long ledger) throws Exception {
        ensureObserver();
        CompletableFuture<Integer> f = new CompletableFuture<>();
        bookieObserver.readEntry(BookieId.parse(bookie), Math.max(ledger, 0), 0,
                (r, l, en, buf, ctx) -> f.complete(r), null, 0);
        int rc = f.get(30, TimeUnit.SECONDS);
        // -108 is DataUnknownException (4.14 on): a bookie whose pre-boot
        // check put the ledger in limbo serves, and answers so
        boolean serving = rc == BKException.Code.OK || rc == BKException.Code.NoSuchLedgerExistsException
                || rc == BKException.Code.NoSuchEntryException || rc == -108;
        return Map.of("rc", rc, "serving", serving);
    }

    /**
     * What the Auditor's periodic check finds of the ledger
     * (AuditorCheckAllLedgersTask: the ledger opened without recovery,
     * LedgerChecker.checkLedger with auditorLedgerVerificationPercentage):
     * the fragments it would have re-replicated, marking the ledger
     * under-replicated if there is one. Straight to the bookies.
     */
    Map<String, Object> checkLedger(long ledger, long percentage) throws Exception {
        ensureObserver();
        List<Object> lost = new ArrayList<>();
        try (LedgerHandle lh = observer.openLedgerNoRecovery(ledger, BookKeeper.DigestType.CRC32, PASSWORD)) {
            CompletableFuture<java.util.Set<org.apache.bookkeeper.client.LedgerFragment>> done = new CompletableFuture<>();
            new org.apache.bookkeeper.client.LedgerChecker(observer).checkLedger(lh, (rc, fragments) -> {
                if (rc == BKException.Code.OK) {
                    done.complete(fragments);
                } else {
                    done.completeExceptionally(BKException.create(rc));
                }
            }, percentage);
            for (org.apache.bookkeeper.client.LedgerFragment f : done.get(30, TimeUnit.SECONDS)) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("first", f.getFirstEntryId());
                m.put("last", f.getLastKnownEntryId());
                List<String> bookies = new ArrayList<>();
                for (BookieId b : f.getAddresses()) {
                    bookies.add(b.toString());
                }
                m.put("bookies", bookies);
                lost.add(m);
            }
        }
        return Map.of("fragments", lost);
    }

    /** What a reader that arrives after the fact sees: the closed ledger and each entry's read. */
    Map<String, Object> readClosed(long ledger) throws Exception {
        ensureObserver();
        Map<String, Object> res = new LinkedHashMap<>();
        try (LedgerHandle lh = observer.openLedgerNoRecovery(ledger, BookKeeper.DigestType.CRC32, PASSWORD)) {
            long last = lh.getLastAddConfirmed();
            res.put("closed", lh.isClosed());
            res.put("lastEntry", last);
            List<Integer> rcs = new ArrayList<>();
            for (long e = 0; e <= last; e++) {
                try {
                    lh.read(e, e).close();
                    rcs.add(BKException.Code.OK);
                } catch (BKException ex) {
                    rcs.add(ex.getCode());
                }
            }
            res.put("reads", rcs);
        }
        return res;
    }

    void shutdown() {
        for (Client c : clients.values()) {
            try {
                c.bk.close();
            } catch (Exception ignored) {
                // the process is ending
            }
        }
    }

    @SuppressWarnings("unused")
    private static int unused(ByteBuf b) {
        return 0;
    }
}
