package org.apache.bookkeeper.client;

import io.netty.buffer.ByteBuf;
import org.apache.bookkeeper.client.AsyncCallback.AddCallback;

/**
 * The application's add in its two halves, as LedgerHandle.asyncAddEntry
 * (ByteBuf, AddCallback, Object) runs them on the caller's thread (release
 * 4.16 onwards): the op is created with the handle's current ensemble
 * ({@code PendingAddOp.create}), then queued and initiated
 * ({@code doAsyncAddEntry}). The model makes them two steps
 * (ClientCreatesAddOp, then ClientSendsAddEntryRequests) with other steps
 * between them, an ensemble change's among them; the driver calls each
 * half at its step. It sits in BookKeeper's package because both are
 * package-private there.
 */
public final class AddWindow {
    private AddWindow() {}

    /** The first half: the op, holding the handle's ensemble of now. */
    public static Object create(LedgerHandle lh, ByteBuf data, AddCallback cb, Object ctx) {
        return PendingAddOp.create(lh, lh.clientCtx, lh.getCurrentEnsemble(), data, lh.writeFlags, cb, ctx);
    }

    /** The second half: the op queued (its entry id taken) and initiated. */
    public static void queue(LedgerHandle lh, Object op) {
        lh.doAsyncAddEntry((PendingAddOp) op);
    }
}
