package org.apache.bookkeeper.client;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;


import org.apache.bookkeeper.net.BookieId;

/**
 * Places bookies where the trace says: the model chooses a new ledger's
 * ensemble and each replacement nondeterministically, and the trace records
 * the choice. The harness queues the choices before the step that needs them;
 * with nothing queued the policy is BookKeeper's default (random), which a
 * trace never relies on. It sits in BookKeeper's package because the default
 * policy's constructor is package-private.
 */
public final class ScriptedPlacementPolicy extends DefaultEnsemblePlacementPolicy {
    private static final Deque<List<BookieId>> ensembles = new ArrayDeque<>();
    private static final Deque<BookieId> replacements = new ArrayDeque<>();

    public static synchronized void nextEnsemble(List<BookieId> ensemble) {
        ensembles.addLast(ensemble);
    }

    public static synchronized void nextReplacement(BookieId bookie) {
        replacements.addLast(bookie);
    }

    @Override
    public PlacementResult<List<BookieId>> newEnsemble(int ensembleSize, int quorumSize, int ackQuorumSize,
            Map<String, byte[]> customMetadata, Set<BookieId> excludeBookies)
            throws BKException.BKNotEnoughBookiesException {
        List<BookieId> next;
        synchronized (ScriptedPlacementPolicy.class) {
            next = ensembles.pollFirst();
        }
        if (next == null) {
            return super.newEnsemble(ensembleSize, quorumSize, ackQuorumSize, customMetadata, excludeBookies);
        }
        return PlacementResult.of(new ArrayList<>(next), PlacementPolicyAdherence.MEETS_STRICT);
    }

    @Override
    public PlacementResult<BookieId> replaceBookie(int ensembleSize, int writeQuorumSize, int ackQuorumSize,
            Map<String, byte[]> customMetadata, List<BookieId> currentEnsemble, BookieId bookieToReplace,
            Set<BookieId> excludeBookies) throws BKException.BKNotEnoughBookiesException {
        BookieId next;
        synchronized (ScriptedPlacementPolicy.class) {
            next = replacements.pollFirst();
        }
        if (next == null) {
            return super.replaceBookie(ensembleSize, writeQuorumSize, ackQuorumSize, customMetadata,
                    currentEnsemble, bookieToReplace, excludeBookies);
        }
        return PlacementResult.of(next, PlacementPolicyAdherence.MEETS_STRICT);
    }
}
