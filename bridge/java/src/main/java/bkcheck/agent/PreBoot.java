package bkcheck.agent;

import static bkcheck.agent.BookieAgent.method;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * The data-integrity pre-boot check at the model's step
 * (BookieRunsPreBootCheck), or awaited before the bookie serves (the
 * candidate fix await-preboot-check). Read at release-4.18.0:
 * EmbeddedServer, with dataIntegrityChecking on, journalWriteData off and an
 * unclean shutdown detected, calls
 * {@code DataIntegrityCheckImpl.runPreBootCheck("UNCLEAN_SHUTDOWN")} and
 * drops the future; the check then walks the ledgers' metadata on its own
 * scheduler, fencing and marking in limbo each open ledger whose last
 * ensemble holds the bookie, while the bookie already serves. When it ends
 * is the scheduler's to decide; the model makes it a step, so the agent
 * holds the call and runs it when the harness asks ({@code preboot} on the
 * control port), awaiting its end. Only that reason is held: cookie
 * validation's own call ("INVALID_COOKIE", a re-format with its cookie
 * kept) already waits for the check.
 *
 * <p>DataIntegrityService runs the full check every 3 s once the pre-boot
 * check has set NEEDS_INTEGRITY_CHECK; the model has no full check (limbo
 * is never cleared there), so its timer is held for the whole run:
 * {@code needsFullCheck} answers false, as before any pre-boot check.
 */
public final class PreBoot {
    private PreBoot() {}

    static final List<BookieAgent.Weave> WEAVES = List.of(
            new BookieAgent.Weave("org.apache.bookkeeper.bookie.datainteg.DataIntegrityCheckImpl",
                    method("runPreBootCheck", 1), RunPreBootCheck.class),
            new BookieAgent.Weave("org.apache.bookkeeper.bookie.datainteg.DataIntegrityCheckImpl",
                    method("needsFullCheck", 0), NoFullCheck.class));

    /** The reason EmbeddedServer gives after an unclean shutdown. */
    static final String UNCLEAN = "UNCLEAN_SHUTDOWN";

    /** Await the check before the bookie serves (the fix), instead of holding it. */
    static volatile boolean await;

    /** The check held, and its reason; null when none is. */
    private static Object heldCheck;
    private static String heldReason;
    /** What the held call returned to EmbeddedServer, completed when the check has run. */
    private static CompletableFuture<Void> heldFuture;

    /** Set on the control thread while it runs the held check. */
    private static final ThreadLocal<Boolean> RUNNING = ThreadLocal.withInitial(() -> false);

    public static final class RunPreBootCheck {
        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
        static boolean enter(@Advice.This Object check, @Advice.Argument(0) String reason) {
            return PreBoot.hold(check, reason);
        }

        @Advice.OnMethodExit
        static void exit(@Advice.Enter boolean held, @Advice.Argument(0) String reason,
                         @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object returned)
                throws Exception {
            returned = PreBoot.returned(held, reason, returned);
        }
    }

    public static final class NoFullCheck {
        @Advice.OnMethodExit
        static void exit(@Advice.Return(readOnly = false) boolean needed) {
            needed = false;
        }
    }

    /** Whether to skip this call of runPreBootCheck: it is held for the harness. */
    public static synchronized boolean hold(Object check, String reason) {
        if (await || !UNCLEAN.equals(reason) || RUNNING.get()) {
            return false;
        }
        heldCheck = check;
        heldReason = reason;
        heldFuture = new CompletableFuture<>();
        Fixes.acted("preboot-held", "the pre-boot check (" + reason + ") the restart started, held until the model's step");
        return true;
    }

    /** What runPreBootCheck returns: the held future, or the check's, awaited under the fix. */
    public static Object returned(boolean held, String reason, Object returned) throws Exception {
        if (held) {
            synchronized (PreBoot.class) {
                return heldFuture;
            }
        }
        if (await && UNCLEAN.equals(reason)) {
            ((CompletableFuture<?>) returned).get(60, TimeUnit.SECONDS);
            Fixes.acted("await-preboot-check", "the pre-boot check run to its end before the bookie serves");
        }
        return returned;
    }

    /** Runs the held check now and awaits its end (the control's {@code preboot}). */
    static String run() throws Exception {
        Object check;
        String reason;
        CompletableFuture<Void> future;
        synchronized (PreBoot.class) {
            check = heldCheck;
            reason = heldReason;
            future = heldFuture;
            heldCheck = null;
        }
        if (check == null) {
            return "error no pre-boot check is pending: the bookie did not start one (no unclean shutdown with journalWriteData=false), or it has run";
        }
        RUNNING.set(true);
        try {
            CompletableFuture<?> f = (CompletableFuture<?>) check.getClass()
                    .getMethod("runPreBootCheck", String.class).invoke(check, reason);
            f.get(60, TimeUnit.SECONDS);
        } finally {
            RUNNING.remove();
        }
        future.complete(null);
        Fixes.acted("preboot-check", "the pre-boot check (" + reason + ") run at the model's step");
        return "ok";
    }
}
