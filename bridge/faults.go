package bridge

import (
	"context"
	"fmt"
)

// The faults' handlers (mapping.go): what happens to a bookie's process
// and disks.

// crash: the crash closes the bookie's connections: a client with a write
// outstanding on one fails it at once and starts its ensemble change, so
// the replacements it will choose are queued first.
func (r *run) crash(ctx context.Context, s step) error {
	r.queueAllReplacements(ctx)
	if err := r.cl.Crash(r.cl.Bookie(s.bookie)); err != nil {
		return err
	}
	r.crashed[s.bookie] = true
	return nil
}

func (r *run) restart(ctx context.Context, s step) error {
	delete(r.crashed, s.bookie)
	b := r.cl.Bookie(s.bookie)
	if err := r.cl.Restart(ctx, b); err != nil {
		return err
	}
	return r.serving(ctx, b)
}

// registrationExpires awaits the event a stopped bookie's registration
// ending is: its ZooKeeper session expiring, bounded by the step's time.
func (r *run) registrationExpires(ctx context.Context, s step) error {
	id := r.bookieID(s.bookie)
	return r.awaitGone(ctx, func(w string) bool { return w == id },
		"the stopped bookie stayed registered", "its registration expires with its ZooKeeper session")
}

func (r *run) loseDisk(ctx context.Context, s step) error {
	r.queueAllReplacements(ctx)
	if _, err := r.cl.LoseDisk(ctx, r.cl.Bookie(s.bookie)); err != nil {
		return diverged("the bookie with a wiped disk did not stay down", "cookie validation keeps the bookie down", err.Error())
	}
	r.crashed[s.bookie] = true
	return nil
}

func (r *run) rejoinEmpty(ctx context.Context, s step) error {
	b := r.cl.Bookie(s.bookie)
	keep, _ := r.params["reformat-cookie"].(string)
	if err := r.cl.Reformat(ctx, b, keep != "kept"); err != nil {
		return err
	}
	if err := r.serving(ctx, b); err != nil {
		return err
	}
	delete(r.crashed, s.bookie)
	return nil
}

func (r *run) becomeReadOnly(ctx context.Context, s step) error {
	return r.cl.ReadOnly(ctx, r.cl.Bookie(s.bookie))
}

// syncJournal is a no-op on the cluster: the bookie's journal thread
// writes and fsyncs what it queued within journalMaxGroupWaitMSec (2 ms)
// by itself, and the harness does not hold it (docs/conformance.md).
func (r *run) syncJournal(context.Context, step) error { return nil }

// checkpointStep returns the handler of a bookie's checkpoint, with a
// non-empty write cache (flush) or an empty one.
func checkpointStep(flush bool) func(r *run, ctx context.Context, s step) error {
	return func(r *run, ctx context.Context, s step) error {
		if err := r.cl.Checkpoint(ctx, r.cl.Bookie(s.bookie), flush); err != nil {
			return diverged("the bookie did not checkpoint as the model's step does", "a checkpoint", err.Error())
		}
		return nil
	}
}

// queueAllReplacements queues, for every client, the replacements of its
// next ensemble change: a fault that closes a bookie's connections fails
// every client's outstanding writes to it at once.
func (r *run) queueAllReplacements(ctx context.Context) {
	for c := 1; c <= toInt(r.params["clients"]); c++ {
		r.queueReplacements(ctx, fmt.Sprintf("c%d", c))
	}
}
