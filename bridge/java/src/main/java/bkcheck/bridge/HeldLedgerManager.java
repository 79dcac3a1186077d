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
    /** A write waiting for the harness. */
    record Held(String op, long ledgerId, Runnable proceed) {}

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

    /** Lets the oldest held write proceed; false when none is held. */
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
        Runnable proceed = () -> {
            try {
                ((CompletableFuture<?>) m.invoke(real, args)).whenComplete((v, err) -> {
                    if (err != null) {
                        result.completeExceptionally(err);
                    } else {
                        result.complete(v);
                    }
                });
            } catch (Exception e) {
                result.completeExceptionally(e);
            }
        };
        Held held = new Held(op, (Long) args[0], proceed);
        synchronized (this) {
            queue.addLast(held);
        }
        announce.accept(held);
        return result;
    }
}
