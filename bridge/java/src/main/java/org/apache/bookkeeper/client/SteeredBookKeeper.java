package org.apache.bookkeeper.client;

import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.util.Map;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.bookkeeper.meta.LedgerManager;
import org.apache.bookkeeper.net.BookieSocketAddress;
import org.apache.bookkeeper.proto.BookieAddressResolver;
import org.apache.bookkeeper.proto.BookieClient;
import org.apache.bookkeeper.proto.BookieClientImpl;
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
 */
public final class SteeredBookKeeper extends BookKeeper {
    private final Map<String, Integer> proxyPorts;
    private final LedgerManager held;
    private BookieClient steered;

    public SteeredBookKeeper(ClientConfiguration conf, Map<String, Integer> proxyPorts,
                             java.util.function.Function<LedgerManager, LedgerManager> hold)
            throws Exception {
        super(conf);
        this.proxyPorts = proxyPorts;
        this.held = hold.apply(super.getLedgerManager());
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
            try {
                steered = new BookieClientImpl(getConf(), eventLoopGroup, PooledByteBufAllocator.DEFAULT,
                        mainWorkerPool, scheduler, NullStatsLogger.INSTANCE, resolver);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
        return steered;
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
