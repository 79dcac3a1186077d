package org.apache.bookkeeper.client;

import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.bookkeeper.meta.LedgerManager;
import org.apache.bookkeeper.net.BookieId;
import org.apache.bookkeeper.net.BookieSocketAddress;
import org.apache.bookkeeper.proto.BookieAddressResolver;
import org.apache.bookkeeper.proto.BookieClient;
import org.apache.bookkeeper.proto.BookieClientImpl;
import org.apache.bookkeeper.proto.BookkeeperInternalCallbacks.ReadEntryCallback;
import org.apache.bookkeeper.proto.BookkeeperInternalCallbacks.WriteCallback;
import org.apache.bookkeeper.stats.NullStatsLogger;

/**
 * A BookKeeper client whose two doors to the world the harness holds: its
 * connections to bookies go to this client's own proxy port for each bookie
 * (so the Go side knows which model client each frame belongs to), and its
 * ledger-metadata writes go through a {@link HeldLedgerManager}.
 *
 * <p>It lives in BookKeeper's package only because {@code getBookieClient()}
 * is package-private there; every other call site in the client reaches the
 * bookie client and the ledger manager through these two getters
 * ({@code BookKeeper.clientCtx}).
 *
 * <p>Its bookie client also keeps each outstanding add's callback, so that
 * the harness can time out one write (one bookie, one entry) as
 * PerChannelBookieClient's per-request timeout does, without a clock: the
 * callback runs once with TimeoutException on the ledger's ordered thread,
 * and a late answer is then dropped, as after a real timeout.
 */
public final class SteeredBookKeeper extends BookKeeper {
    /**
     * The bookies client bk's BookieWatcher has in its caches, writable and
     * read-only (BookieWatcherImpl's writableBookies and readOnlyBookies,
     * updated by ZooKeeper's watches): the view its LedgerChecker asks
     * (isBookieUnavailable) and its placement chooses from, which lags the
     * registrations; and those of them it can resolve to an address. BookieWatcher is package-private in BookKeeper, hence
     * here.
     */
    /**
     * Opens bk's connection to each bookie it knows as writable or
     * read-only (a LAC read of ledger 0, whatever its answer), and returns
     * the bookies that answered: a long-lived client (the Auditor's) holds
     * a channel to every bookie it checks, and then needs no address from
     * its registration client's cache to read one later.
     */
    public static java.util.List<String> connect(BookKeeper bk) throws Exception {
        java.util.List<String> answered = new java.util.ArrayList<>();
        Map<String, Object> known = watched(bk);
        for (String key : new String[] {"writable", "readOnly"}) {
            for (Object id : (java.util.List<?>) known.get(key)) {
                java.util.concurrent.CompletableFuture<Integer> rc = new java.util.concurrent.CompletableFuture<>();
                bk.getBookieClient().readLac(org.apache.bookkeeper.net.BookieId.parse(id.toString()), 0L,
                        (code, ledger, lac, buf, ctx) -> rc.complete(code), null);
                int code = rc.get(30, java.util.concurrent.TimeUnit.SECONDS);
                if (code != BKException.Code.BookieHandleNotAvailableException) {
                    answered.add(id.toString());
                }
            }
        }
        return answered;
    }

    public static Map<String, Object> watched(BookKeeper bk) throws ReflectiveOperationException {
        Object watcher = bk.getBookieWatcher();
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        for (String field : new String[] {"writableBookies", "readOnlyBookies"}) {
            java.lang.reflect.Field f = BookieWatcherImpl.class.getDeclaredField(field);
            f.setAccessible(true);
            java.util.List<String> ids = new java.util.ArrayList<>();
            for (Object id : (java.util.Set<?>) f.get(watcher)) {
                ids.add(id.toString());
            }
            out.put(field.equals("writableBookies") ? "writable" : "readOnly", ids);
        }
        // And the bookies whose address its registration client can give
        // now (getBookieServiceInfo answers from a cache the same watches
        // refresh: a bookie it cannot resolve, the client cannot connect to).
        java.util.List<String> resolvable = new java.util.ArrayList<>();
        org.apache.bookkeeper.discover.RegistrationClient rc = bk.getMetadataClientDriver().getRegistrationClient();
        for (String key : new String[] {"writable", "readOnly"}) {
            for (Object id : (java.util.List<?>) out.get(key)) {
                java.util.concurrent.CompletableFuture<?> info =
                        rc.getBookieServiceInfo(org.apache.bookkeeper.net.BookieId.parse(id.toString()));
                if (info.isDone() && !info.isCompletedExceptionally()) {
                    resolvable.add(id.toString());
                }
            }
        }
        out.put("resolvable", resolvable);
        return out;
    }

    private final Map<String, Integer> proxyPorts;
    private final LedgerManager held;
    private BookieClient steered;
    private final Map<String, Write> writes = new ConcurrentHashMap<>();
    /** The writes whose callback ran with an error, and the error. */
    private final Map<String, Integer> failed = new ConcurrentHashMap<>();

    private final Map<String, Read> reads = new ConcurrentHashMap<>();

    /**
     * Told each write that failed, after its callback ran (bookie, ledger,
     * entry, rc): so that the harness can wait for the failure a closed
     * connection causes (channelInactive, errorOutOutstandingEntries)
     * instead of for a time.
     */
    public volatile java.util.function.Consumer<Map<String, Object>> onWriteFailed;

    /**
     * Told each read that failed without a bookie's answer (any code but OK,
     * NoSuchEntry and NoSuchLedger), after its callback ran (bookie,
     * ledger, entry, rc): so that the harness can wait for the failure a
     * closed connection causes, as for a write.
     */
    public volatile java.util.function.Consumer<Map<String, Object>> onReadFailed;

    /**
     * Told, when set, every request the client hands its bookie client
     * (op add or read, bookie, ledger, entry) before it is handed on, and
     * every request's completion (the same, with rc) after its callback
     * returned: the recorder's account of what the client has to send and
     * what it has finished, so that it awaits exactly those frames and
     * callbacks instead of a time.
     */
    public volatile java.util.function.Consumer<Map<String, Object>> onRequest;
    public volatile java.util.function.Consumer<Map<String, Object>> onDone;

    private void tell(java.util.function.Consumer<Map<String, Object>> to, String op, BookieId b, long ledger,
                      long entry, Integer rc) {
        if (to == null) {
            return;
        }
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("op", op);
        m.put("bookie", b.toString());
        m.put("ledger", ledger);
        m.put("entry", entry);
        if (rc != null) {
            m.put("rc", rc);
        }
        to.accept(m);
    }

    /**
     * Runs a no-op task on every thread of every executor the client's
     * work goes through (the ordered worker pool, the scheduler, the
     * high-priority executor where the release has one, the netty event
     * loops) and waits for each: every task queued on them before the call
     * has run when it returns.
     */
    public void drain(long timeoutMillis) throws Exception {
        List<java.util.concurrent.Future<?>> fs = new java.util.ArrayList<>();
        int n = Math.max(64, getConf().getNumWorkerThreads());
        for (long i = 0; i < n; i++) {
            fs.add(mainWorkerPool.chooseThread(i).submit(() -> { }));
            fs.add(scheduler.chooseThread(i).submit(() -> { }));
        }
        try {
            java.lang.reflect.Field f = BookKeeper.class.getDeclaredField("highPriorityTaskExecutor");
            f.setAccessible(true);
            Object hp = f.get(this);
            if (hp instanceof org.apache.bookkeeper.common.util.OrderedExecutor oe) {
                for (long i = 0; i < n; i++) {
                    fs.add(oe.chooseThread(i).submit(() -> { }));
                }
            }
        } catch (NoSuchFieldException e) {
            // an older release: no such executor
        }
        for (io.netty.util.concurrent.EventExecutor e : eventLoopGroup) {
            fs.add(e.submit(() -> { }));
        }
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        for (java.util.concurrent.Future<?> f : fs) {
            f.get(Math.max(1, deadline - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
        }
    }

    /** An outstanding read from one bookie: its callback, run at most once. */
    private record Read(ReadEntryCallback cb, Object ctx, AtomicBoolean done) {}

    /** An outstanding add to one bookie: its callback, run at most once. */
    private record Write(WriteCallback cb, Object ctx, BookieId addr, AtomicBoolean done) {}

    private static String key(BookieId b, long ledger, long entry) {
        return b + "/" + ledger + "/" + entry;
    }

    public SteeredBookKeeper(ClientConfiguration conf, Map<String, Integer> proxyPorts,
                             java.util.function.Function<LedgerManager, LedgerManager> hold)
            throws Exception {
        super(conf);
        this.proxyPorts = proxyPorts;
        this.held = hold.apply(super.getLedgerManager());
        speculateOnDemand();
    }

    /**
     * The speculative reads the client has armed, by entry (the latest
     * read of each): a sequence read's timer, replaced by the harness's
     * word ({@link #speculate}).
     */
    private final Map<Long, SpeculativeRequestExecutor> speculative = new ConcurrentHashMap<>();

    /**
     * Replaces the client's speculative read policy (none with the
     * driver's speculativeReadTimeout 0) by one that arms each sequence
     * read's speculative request and never fires it by the clock: a
     * timer of a day, cancelled as BookKeeper cancels its own when the
     * read completes. The harness fires it at the model's step
     * (ClientSendsNextRecoveryRead while an earlier replica's read is
     * outstanding) through {@link #speculate}: ReadOpBase's
     * issueSpeculativeRequest, as the timer would, on the ledger's ordered
     * thread.
     */
    private void speculateOnDemand() throws ReflectiveOperationException {
        SpeculativeRequestExecutionPolicy onDemand = new SpeculativeRequestExecutionPolicy() {
            @Override
            public java.util.concurrent.ScheduledFuture<?> initiateSpeculativeRequest(
                    java.util.concurrent.ScheduledExecutorService scheduler, SpeculativeRequestExecutor executor) {
                try {
                    speculative.put(entryOf(executor), executor);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException("a read request without its entry", e);
                }
                return scheduler.schedule(() -> { }, 1, TimeUnit.DAYS);
            }
        };
        java.lang.reflect.Field policy = ClientInternalConf.class.getDeclaredField("readSpeculativeRequestPolicy");
        policy.setAccessible(true);
        policy.set(internalConf, java.util.Optional.of(onDemand));
    }

    private static long entryOf(Object request) throws ReflectiveOperationException {
        for (Class<?> c = request.getClass(); c != null; c = c.getSuperclass()) {
            try {
                java.lang.reflect.Field f = c.getDeclaredField("eId");
                f.setAccessible(true);
                return f.getLong(request);
            } catch (NoSuchFieldException e) {
                // look in the superclass
            }
        }
        throw new NoSuchFieldException("eId");
    }

    /**
     * Fires the speculative request of the client's latest sequence read of
     * entry and waits for its outcome: whether BookKeeper sent a read to
     * the next replica (maybeSendSpeculativeRead: only while no replica
     * asked has answered).
     */
    public boolean speculate(long entry) throws Exception {
        SpeculativeRequestExecutor e = speculative.get(entry);
        if (e == null) {
            return false;
        }
        return e.issueSpeculativeRequest().get(30, TimeUnit.SECONDS);
    }

    @Override
    public LedgerManager getLedgerManager() {
        return held == null ? super.getLedgerManager() : held;
    }

    @Override
    synchronized BookieClient getBookieClient() {
        if (proxyPorts == null) {
            return super.getBookieClient(); // during construction
        }
        if (steered == null) {
            BookieAddressResolver resolver = id -> {
                Integer port = proxyPorts.get(id.toString());
                if (port == null) {
                    throw new BookieAddressResolver.BookieIdNotResolvedException(id,
                            new IOException("the harness has no proxy for bookie " + id));
                }
                return new BookieSocketAddress("127.0.0.1", port);
            };
            BookieClient real;
            try {
                real = new BookieClientImpl(getConf(), eventLoopGroup, PooledByteBufAllocator.DEFAULT,
                        mainWorkerPool, scheduler, NullStatsLogger.INSTANCE, resolver);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            steered = (BookieClient) Proxy.newProxyInstance(BookieClient.class.getClassLoader(),
                    new Class<?>[] {BookieClient.class}, (proxy, m, args) -> {
                        if (m.getName().equals("addEntry")) {
                            keepWrite(args);
                            tell(onRequest, "add", (BookieId) args[0], (Long) args[1], (Long) args[3], null);
                        } else if (m.getName().equals("readEntry")) {
                            keepRead(args);
                            tell(onRequest, "read", (BookieId) args[0], (Long) args[1], (Long) args[2], null);
                        }
                        try {
                            return m.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
        return steered;
    }

    /** Wraps an addEntry's callback so that timeOut can run it first. */
    private void keepWrite(Object[] args) {
        BookieId addr = (BookieId) args[0];
        long ledger = (Long) args[1];
        long entry = (Long) args[3];
        for (int i = 0; i < args.length; i++) {
            if (args[i] instanceof WriteCallback cb) {
                String k = key(addr, ledger, entry);
                AtomicBoolean done = new AtomicBoolean();
                Write w = new Write(cb, i + 1 < args.length ? args[i + 1] : null, addr, done);
                writes.put(k, w);
                args[i] = (WriteCallback) (rc, l, e, a, ctx) -> {
                    if (done.compareAndSet(false, true)) {
                        writes.remove(k, w);
                        if (rc != BKException.Code.OK) {
                            failed.put(k, rc);
                        }
                        cb.writeComplete(rc, l, e, a, ctx);
                        var tell = onWriteFailed;
                        if (rc != BKException.Code.OK && tell != null) {
                            tell.accept(Map.of("bookie", addr.toString(), "ledger", l, "entry", e, "rc", rc));
                        }
                        tell(onDone, "add", addr, ledger, entry, rc);
                    }
                };
                return;
            }
        }
    }

    /** Wraps a readEntry's callback so that timeOutRead can run it first. */
    private void keepRead(Object[] args) {
        BookieId addr = (BookieId) args[0];
        long ledger = (Long) args[1];
        long entry = (Long) args[2];
        for (int i = 0; i < args.length; i++) {
            if (args[i] instanceof ReadEntryCallback cb) {
                String k = key(addr, ledger, entry);
                AtomicBoolean done = new AtomicBoolean();
                Read r = new Read(cb, i + 1 < args.length ? args[i + 1] : null, done);
                reads.put(k, r);
                args[i] = (ReadEntryCallback) (rc, l, e, buf, ctx) -> {
                    if (done.compareAndSet(false, true)) {
                        reads.remove(k, r);
                        cb.readEntryComplete(rc, l, e, buf, ctx);
                        var tell = onReadFailed;
                        if (rc != BKException.Code.OK && rc != BKException.Code.NoSuchEntryException
                                && rc != BKException.Code.NoSuchLedgerExistsException && tell != null) {
                            tell.accept(Map.of("bookie", addr.toString(), "ledger", l, "entry", e, "rc", rc));
                        }
                        tell(onDone, "read", addr, ledger, entry, rc);
                    } else if (buf != null) {
                        buf.release(); // a late answer to a read already timed out
                    }
                };
                return;
            }
        }
    }

    /**
     * Times out the outstanding read of entry from bookie, as the
     * per-request timeout would: its callback runs once with
     * TimeoutException on the ledger's ordered thread. False when no such
     * read is outstanding.
     */
    public boolean timeOutRead(String bookie, long ledger, long entry) {
        Read r = reads.remove(key(BookieId.parse(bookie), ledger, entry));
        if (r == null || !r.done().compareAndSet(false, true)) {
            return false;
        }
        BookieId addr = BookieId.parse(bookie);
        mainWorkerPool.executeOrdered(ledger, () -> {
            r.cb().readEntryComplete(BKException.Code.TimeoutException, ledger, entry, null, r.ctx());
            tell(onDone, "read", addr, ledger, entry, BKException.Code.TimeoutException);
        });
        return true;
    }

    /**
     * Times out the outstanding add of entry to bookie: its callback runs
     * with TimeoutException on the ledger's ordered thread. Answers
     * "timed-out", "failed N" when the write already failed with rc N (its
     * connection closed, say), or "none".
     */
    public String timeOut(String bookie, long ledger, long entry) {
        String k = key(BookieId.parse(bookie), ledger, entry);
        Write w = writes.remove(k);
        if (w == null || !w.done().compareAndSet(false, true)) {
            Integer rc = failed.get(k);
            return rc == null ? "none" : "failed " + rc;
        }
        mainWorkerPool.executeOrdered(ledger, () -> {
            w.cb().writeComplete(BKException.Code.TimeoutException, ledger, entry, w.addr(), w.ctx());
            tell(onDone, "add", w.addr(), ledger, entry, BKException.Code.TimeoutException);
        });
        return "timed-out";
    }

    @Override
    public void close() throws BKException, InterruptedException {
        synchronized (this) {
            if (steered != null) {
                steered.close();
            }
        }
        super.close();
    }
}
