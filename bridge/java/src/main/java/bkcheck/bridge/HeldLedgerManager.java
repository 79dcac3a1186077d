package bkcheck.bridge;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.bookkeeper.meta.LedgerManager;

/**
 * Holds a client's ledger-metadata writes (create, write, remove) until the
 * harness releases them, one at a time and in the order they were asked. The
 * model makes each metadata write a step of its own (the ledger created, the
 * status set to IN_RECOVERY, the ledger closed, an ensemble changed), while the
 * Java client issues them as soon as its previous step completes; holding them
 * lets a trace place them where the model did. Reads pass through.
 *
 * <p>A dynamic proxy rather than an implementation of the interface, so that
 * the same class serves every release's LedgerManager.
 */
final class HeldLedgerManager implements InvocationHandler {
    /**
     * A write waiting for the harness; done completes once the write's
     * answer has run the client's continuation (a MetadataUpdateLoop's
     * setLedgerMetadata, say), or failed.
     */
    record Held(String op, long ledgerId, Runnable proceed, CompletableFuture<Void> done,
                CompletableFuture<Object> result) {}

    /**
     * The metadata operations that passed through (reads) or were released
     * and have not completed with their continuations yet: while one is, the
     * client is not settled (a ZooKeeper answer is still to come).
     */
    static final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
    /** Counts every completion of a metadata operation (Driver's settle). */
    static final java.util.concurrent.atomic.AtomicLong completions = new java.util.concurrent.atomic.AtomicLong();

    /** The outcome of the last release (releaseOutcome). */
    private Held lastReleased;

    private final LedgerManager real;
    private final Consumer<Held> announce;
    private final Deque<Held> queue = new ArrayDeque<>();

    private HeldLedgerManager(LedgerManager real, Consumer<Held> announce) {
        this.real = real;
        this.announce = announce;
    }

    static LedgerManager wrap(LedgerManager real, Consumer<Held> announce) {
        return (LedgerManager) Proxy.newProxyInstance(LedgerManager.class.getClassLoader(),
                new Class<?>[] {LedgerManager.class}, new HeldLedgerManager(real, announce));
    }

    /** Whether a write is held now. */
    static boolean holding(LedgerManager lm) {
        HeldLedgerManager h = (HeldLedgerManager) Proxy.getInvocationHandler(lm);
        synchronized (h) {
            return !h.queue.isEmpty();
        }
    }

    /**
     * Lets the oldest held write proceed and waits (at most ten seconds)
     * until its answer has run the client's continuation, which the
     * model's step includes: LedgerHandle.setLedgerMetadata runs in the
     * metadata store's callback, and a step after the release (an add
     * taking the handle's ensemble) must see the new metadata. False when
     * none is held.
     */
    static boolean release(LedgerManager lm) {
        HeldLedgerManager h = (HeldLedgerManager) Proxy.getInvocationHandler(lm);
        Held next;
        synchronized (h) {
            next = h.queue.pollFirst();
        }
        if (next == null) {
            return false;
        }
        synchronized (h) {
            h.lastReleased = next;
        }
        next.proceed().run();
        try {
            next.done().get(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
            // the step's own await says what happened
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return true;
    }

    /**
     * What the last released write did: its op, and either the metadata as
     * written with its new version (create, write), or the error's class.
     */
    static java.util.Map<String, Object> releaseOutcome(LedgerManager lm) {
        HeldLedgerManager h = (HeldLedgerManager) Proxy.getInvocationHandler(lm);
        Held last;
        synchronized (h) {
            last = h.lastReleased;
        }
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
        if (last == null) {
            return m;
        }
        m.put("op", last.op());
        m.put("ledger", last.ledgerId());
        CompletableFuture<Object> r = last.result();
        if (!r.isDone()) {
            m.put("pending", true);
            return m;
        }
        try {
            Object v = r.getNow(null);
            m.put("ok", true);
            if (v instanceof org.apache.bookkeeper.versioning.Versioned<?> vv
                    && vv.getValue() instanceof org.apache.bookkeeper.client.api.LedgerMetadata md) {
                m.put("meta", Driver.metadataOf(md));
                if (vv.getVersion() instanceof org.apache.bookkeeper.versioning.LongVersion lv) {
                    m.put("version", lv.getLongVersion());
                }
            }
        } catch (java.util.concurrent.CompletionException e) {
            m.put("ok", false);
            m.put("error", e.getCause() == null ? e.toString() : e.getCause().getClass().getSimpleName());
        }
        return m;
    }

    @Override
    public Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
        String op = switch (m.getName()) {
            case "createLedgerMetadata" -> "create";
            case "writeLedgerMetadata" -> "write";
            case "removeLedgerMetadata" -> "remove";
            default -> null;
        };
        if (op == null) {
            Object r;
            try {
                r = m.invoke(real, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (r instanceof CompletableFuture<?> f && !f.isDone()) {
                inFlight.incrementAndGet();
                // The caller gets a copy completed here, so that its
                // continuations have run when the count goes down.
                CompletableFuture<Object> out = new CompletableFuture<>();
                f.whenComplete((v, err) -> {
                    try {
                        if (err != null) {
                            out.completeExceptionally(err);
                        } else {
                            out.complete(v);
                        }
                    } finally {
                        completions.incrementAndGet();
                        inFlight.decrementAndGet();
                    }
                });
                return out;
            }
            return r;
        }
        CompletableFuture<Object> result = new CompletableFuture<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        Runnable proceed = () -> {
            inFlight.incrementAndGet();
            done.whenComplete((v, err) -> {
                completions.incrementAndGet();
                inFlight.decrementAndGet();
            });
            try {
                ((CompletableFuture<?>) m.invoke(real, args)).whenComplete((v, err) -> {
                    try {
                        if (err != null) {
                            result.completeExceptionally(err);
                        } else {
                            result.complete(v);
                        }
                    } finally {
                        done.complete(null);
                    }
                });
            } catch (Exception e) {
                result.completeExceptionally(e);
                done.complete(null);
            }
        };
        Held held = new Held(op, (Long) args[0], proceed, done, result);
        synchronized (this) {
            queue.addLast(held);
        }
        announce.accept(held);
        return result;
    }
}
