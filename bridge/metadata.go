package bridge

import (
	"context"
	"errors"
	"fmt"
)

// The metadata's handlers (mapping.go): the writer's close, its ensemble
// change, and the ledger's deletion with the bookies' garbage collection.

func (r *run) closeSucceeds(ctx context.Context, s step) error {
	return r.closeLedger(ctx, s.client, true)
}
func (r *run) closeFails(ctx context.Context, s step) error {
	return r.closeLedger(ctx, s.client, false)
}

// closeLedger has the writer close the ledger and lets each metadata write
// of the close through until the close completes: LedgerHandle's close is
// a MetadataUpdateLoop, which on a version conflict reads the metadata
// again and writes again unless the ledger is already closed. The model's
// close succeeds or fails in one step; ok says which.
func (r *run) closeLedger(ctx context.Context, client string, ok bool) error {
	if err := r.drv.call(ctx, nil, "close", client); err != nil {
		return err
	}
	writes := 0
	for {
		ev, err := r.awaitEvent(ctx, "close the ledger", func(e Event) bool {
			return e.Client == client && (e.Ev == "closed" || e.Ev == "meta-held")
		})
		if err != nil {
			return err
		}
		if ev.Ev == "meta-held" {
			writes++
			var out struct{ Released bool }
			if err := r.drv.call(ctx, &out, "release", client); err != nil {
				return err
			}
			continue
		}
		switch {
		case ok && ev.RC != 0:
			return diverged("the writer's close failed", "the writer closes the ledger", fmt.Sprintf("the close failed with rc %d after %d metadata writes", ev.RC, writes))
		case !ok && ev.RC == 0:
			return diverged("the writer's close succeeded", "the writer's close fails (the metadata changed since the writer read it)",
				fmt.Sprintf("the close succeeded after %d metadata writes: LedgerHandle's close (a MetadataUpdateLoop) read the metadata again on the version conflict and, the ledger not being closed, wrote it CLOSED over it", writes))
		}
		return nil
	}
}

// updateEnsemble: the MetadataUpdateLoop's write, held since Java started
// the change (at the timeout), is released; a loop that finds nothing to
// replace writes nothing, in the model as in Java.
func (r *run) updateEnsemble(ctx context.Context, s step) error {
	if s.next.num("meta_version") <= s.prev.num("meta_version") {
		return nil
	}
	// Java completes the change on the ledger's ordered thread as soon as
	// the write completes: states are compared again after the model's
	// ClientCompletesEnsembleChange.
	r.completing[s.client] = true
	err := r.releaseMeta(ctx, s.client, "write")
	var d *divergence
	if errors.As(err, &d) {
		d.reason = "the writer's ensemble change wrote no metadata"
		d.model = fmt.Sprintf("the MetadataUpdateLoop writes the ensembles %s (version %d)", ensembles(s.next), s.next.num("meta_version"))
		d.bk = "no metadata write within " + r.opts.StepTimeout.String() + "; " + r.describe(ctx, s.client)
	}
	return err
}

// completeEnsembleChange: ensembleChangeLoop's completion runs on the
// ledger's ordered thread as soon as the metadata write completes; its
// re-sends (unsetSuccessAndSendWriteRequest) wait at the proxy.
func (r *run) completeEnsembleChange(ctx context.Context, s step) error {
	delete(r.completing, s.client)
	return r.expectSent(ctx, s.prev, s.next)
}

func (r *run) deleteLedger(ctx context.Context, s step) error {
	if err := r.drv.call(ctx, nil, "delete", s.client, r.ledger); err != nil {
		return err
	}
	if err := r.releaseMeta(ctx, s.client, "remove"); err != nil {
		return err
	}
	_, err := r.succeeded(ctx, s.client, "deleted", "delete the ledger")
	return err
}

func (r *run) collectLedger(ctx context.Context, s step) error {
	return r.cl.CollectGarbage(ctx, r.cl.Bookie(s.bookie))
}
