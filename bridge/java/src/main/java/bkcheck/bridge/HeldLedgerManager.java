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
    record Held(String op, long ledgerId, Runnable proceed, CompletableFuture<Void> done) {}

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

    @Override
    public Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
        String op = switch (m.getName()) {
            case "createLedgerMetadata" -> "create";
            case "writeLedgerMetadata" -> "write";
            case "removeLedgerMetadata" -> "remove";
            default -> null;
        };
        if (op == null) {
            try {
                return m.invoke(real, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }
        CompletableFuture<Object> result = new CompletableFuture<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        Runnable proceed = () -> {
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
        Held held = new Held(op, (Long) args[0], proceed, done);
        synchronized (this) {
            queue.addLast(held);
        }
        announce.accept(held);
        return result;
    }
}
