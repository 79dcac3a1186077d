package bridge

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/bkcheck/bkcheck/spec"
)

// The faults' handlers (mapping.go): what happens to a bookie's process
// and disks.

// crash: the crash closes the bookie's connections: a client with a write
// outstanding on one fails it at once and starts its ensemble change, so
// the replacements it will choose are queued first.
// With a journal that acknowledges before it fsyncs (--journal no-sync,
// disabled) the model's crash is a power loss of the bookie's machine:
// kill -9, and what its files held that no fsync made durable dropped
// (package powerloss).
func (r *run) crash(ctx context.Context, s step) error {
	r.queueAllReplacements(ctx)
	b := r.cl.Bookie(s.bookie)
	if powerLossJournal(r.params) {
		n, err := r.cl.PowerLoss(b)
		if err != nil {
			return err
		}
		r.notes = append(r.notes, fmt.Sprintf("step %d: %s's machine lost power: kill -9, and %d of its files lost what no fsync had made durable", r.cur+1, s.bookie, n))
	} else if err := r.cl.Crash(b); err != nil {
		return err
	}
	r.crashed[s.bookie] = true
	return r.stopped(ctx, s.bookie)
}

// powerLossJournal: the trace's journal acknowledges before it fsyncs, so
// its bookies' disks must be able to lose power (cluster.Options.PowerLoss).
func powerLossJournal(params map[string]any) bool {
	j := journalMode(params)
	return j == spec.JournalNoSync || j == spec.JournalDisabled
}

// journalMode is the trace's --journal (spec.JournalSynced when absent).
func journalMode(params map[string]any) string {
	j, _ := params["journal"].(string)
	return j
}

// bookieSettings are the bookie settings of the trace's journal mode and
// data-integrity check. Without journalSyncData the journal still fsyncs
// by the clock, once journalPageCacheFlushIntervalMSec (1 s) has passed
// since its last flush (Journal's force-write request, release-4.18.0):
// set to a day, so that only the model's BookieSyncsJournal makes the
// journal durable (found by the first power-loss run, whose bookie
// replayed an entry the model had lost: the steps took longer than a
// second). The check's re-format with its cookie kept stamps new cookies
// (dataIntegrityStampMissingCookies), as the model's --reformat-cookie
// kept says; without stamping such a bookie never boots.
func bookieSettings(params map[string]any) map[string]string {
	kv := map[string]string{}
	switch journalMode(params) {
	case spec.JournalNoSync:
		maps.Copy(kv, map[string]string{"journalSyncData": "false", "journalPageCacheFlushIntervalMSec": "86400000"})
	case spec.JournalDisabled:
		maps.Copy(kv, map[string]string{"journalWriteData": "false"})
	}
	if dataIntegrity(params) {
		maps.Copy(kv, map[string]string{"dataIntegrityChecking": "true"})
		if params["reformat-cookie"] == spec.CookieKept {
			maps.Copy(kv, map[string]string{"dataIntegrityStampMissingCookies": "true"})
		}
	}
	return kv
}

// dataIntegrity is the trace's --data-integrity.
func dataIntegrity(params map[string]any) bool {
	on, _ := params["data-integrity"].(bool)
	return on
}

// holdsPreBootCheck: the trace's restarts start the pre-boot check without
// waiting for it, and the model runs it later at BookieRunsPreBootCheck
// (spec.Params.DeferredCheck), so the agent holds it until that step;
// under the fix await-preboot-check the agent awaits it instead.
func holdsPreBootCheck(params map[string]any, opts Options) bool {
	return dataIntegrity(params) && !slices.Contains(opts.fixes, "await-preboot-check")
}

// preBootCheck runs the check the bookie's restart started and the agent
// held, and awaits its end.
func (r *run) preBootCheck(ctx context.Context, s step) error {
	if err := r.cl.PreBootCheck(ctx, r.cl.Bookie(s.bookie)); err != nil {
		return diverged("the bookie did not run its pre-boot check at the model's step", "the held check run", err.Error())
	}
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

// registrationExpires ends the stopped bookie's registration, as its
// ZooKeeper session's expiry does (no session expires by a clock in the
// cluster), and awaits every client seeing it gone.
func (r *run) registrationExpires(ctx context.Context, s step) error {
	return r.unregister(ctx, s.bookie)
}

func (r *run) loseDisk(ctx context.Context, s step) error {
	r.queueAllReplacements(ctx)
	if _, err := r.cl.LoseDisk(ctx, r.cl.Bookie(s.bookie)); err != nil {
		return diverged("the bookie with a wiped disk did not stay down", "cookie validation keeps the bookie down", err.Error())
	}
	r.crashed[s.bookie] = true
	r.wiped[s.bookie] = true
	return r.stopped(ctx, s.bookie)
}

func (r *run) rejoinEmpty(ctx context.Context, s step) error {
	b := r.cl.Bookie(s.bookie)
	if err := r.cl.Reformat(ctx, b, r.params["reformat-cookie"] != spec.CookieKept); err != nil {
		return err
	}
	if err := r.serving(ctx, b); err != nil {
		return err
	}
	delete(r.crashed, s.bookie)
	return nil
}

func (r *run) becomeReadOnly(ctx context.Context, s step) error {
	return r.turnReadOnly(ctx, s.bookie, true)
}

// becomeWritable turns the read-only bookie writable again.
func (r *run) becomeWritable(ctx context.Context, s step) error {
	return r.turnReadOnly(ctx, s.bookie, false)
}

// watched is one client's view of the bookies' registrations, as the
// driver reads it: its BookieWatcher's caches, and the bookies its
// registration client can resolve to an address now.
type watched struct {
	Writable   []string `json:"writable"`
	ReadOnly   []string `json:"readOnly"`
	Resolvable []string `json:"resolvable"`
}

// turnReadOnly turns the bookie read-only or writable, then awaits every
// client of the driver seeing it so: each BookieWatcher's caches follow
// ZooKeeper's watches, one registration node at a time, and a client that
// has seen the read-only node go but not the writable one come takes the
// bookie for unavailable (LedgerChecker then reports its fragments bad).
// (Whether each client can resolve the bookie's address is said, not
// awaited: after a turn to read-only no 4.18.2 client can, for good.)
// The model's step is the change as every client knows it.
func (r *run) turnReadOnly(ctx context.Context, bookie string, readOnly bool) error {
	b := r.cl.Bookie(bookie)
	if readOnly {
		// The Auditor's client is long-lived: it holds a channel to every
		// bookie it checks. The observer, its stand-in, opens them now,
		// before the registration changes: a client that must open one
		// to a bookie after it turned read-only cannot resolve its address
		// (4.18.2's ZKRegistrationClient drops the bookie's entry from its
		// cache when the writable node goes and does not read it again
		// from the read-only one).
		var c struct {
			Bookies []string `json:"bookies"`
		}
		if err := r.drv.call(ctx, &c, "connect"); err != nil {
			return err
		}
		if !slices.Contains(c.Bookies, b.ID()) {
			return fmt.Errorf("the observer could not connect to %s before it turned read-only (connected: %v)", bookie, r.bookieNames(c.Bookies))
		}
	}
	if err := r.cl.ReadOnly(ctx, b, readOnly); err != nil {
		return err
	}
	return r.awaitViews(ctx, "the clients did not see "+bookie+" turn "+map[bool]string{true: "read-only", false: "writable"}[readOnly],
		func(v watched) bool {
			if readOnly {
				return slices.Contains(v.ReadOnly, b.ID())
			}
			return slices.Contains(v.Writable, b.ID())
		})
}

// awaitViews awaits every client of the driver (the worker's included)
// seeing the bookies' registrations as sees says, bounded by the step's
// time; else the run diverged (did).
func (r *run) awaitViews(ctx context.Context, did string, sees func(watched) bool) error {
	tctx, cancel := r.timeout(ctx)
	defer cancel()
	for {
		var views map[string]watched
		if err := r.drv.call(tctx, &views, "watched"); err != nil {
			return err
		}
		var behind []string
		for client, v := range views {
			if !sees(v) {
				behind = append(behind, fmt.Sprintf("%s (writable %v, read-only %v, resolvable %v)", client,
					r.bookieNames(v.Writable), r.bookieNames(v.ReadOnly), r.bookieNames(v.Resolvable)))
			}
		}
		if len(behind) == 0 {
			return nil
		}
		select {
		case <-tctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			sort.Strings(behind)
			return diverged(did, "every client sees the change", fmt.Sprintf("within %v, not: %v", r.opts.StepTimeout, behind))
		case <-time.After(20 * time.Millisecond): // polling the clients' caches for ZooKeeper's watches, not deciding a step
		}
	}
}

// unregister ends the stopped bookie's registration (as its ZooKeeper
// session's expiry does) and awaits every client seeing it gone.
func (r *run) unregister(ctx context.Context, bookie string) error {
	if _, err := r.cl.Unregister(ctx, r.cl.Bookie(bookie)); err != nil {
		return err
	}
	return r.awaitUnregistered(ctx, func(name string) bool { return name == bookie },
		"the clients still list "+bookie+" after its registration ended")
}

// awaitUnregistered awaits every client seeing none of the bookies gone
// names registered, as writable or read-only (the harness ends a
// registration at its step: a step that needs one gone checks it so).
func (r *run) awaitUnregistered(ctx context.Context, gone func(bookie string) bool, did string) error {
	return r.awaitViews(ctx, did, func(v watched) bool {
		return !slices.ContainsFunc(v.Writable, func(id string) bool { return gone(r.bookieName(id)) }) &&
			!slices.ContainsFunc(v.ReadOnly, func(id string) bool { return gone(r.bookieName(id)) })
	})
}

// stopped follows a bookie's stop (a crash, a power loss, a lost disk):
// where the model has no --registration-expiry its registration ends with
// it, so the harness ends it now; else it lasts until the model's
// BookieRegistrationExpires.
func (r *run) stopped(ctx context.Context, bookie string) error {
	if on, _ := r.params["registration-expiry"].(bool); on {
		return nil
	}
	return r.unregister(ctx, bookie)
}

// syncJournal: with the default journal the fence records the model had
// not made durable are released to the journal before the step
// (journalHolds), which writes and fsyncs them. With --journal no-sync
// the journal never fsyncs (journalSyncData=false): its writes become
// durable when the operating system writes them back, which the harness
// does now on the bookie's journal disk. With --journal disabled the entries are in the
// write cache only (journalWriteData=false) until the ledger storage
// flushes: a checkpoint now, through the agent, whose fsyncs make them
// durable.
func (r *run) syncJournal(ctx context.Context, s step) error {
	b := r.cl.Bookie(s.bookie)
	switch journalMode(r.params) {
	case spec.JournalNoSync:
		return r.cl.SyncDisks(b, true)
	case spec.JournalDisabled:
		if err := r.cl.Checkpoint(ctx, b, true); err != nil {
			return diverged("the bookie did not flush its write cache as the model's journal sync does", "a checkpoint", err.Error())
		}
	}
	return nil
}

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

// holdsFenceRecords: the trace has a fence its model can lose to a crash
// that comes before the journal wrote it (b_unflushed_fence; --crashes),
// with a journal that fsyncs what it writes (synced or disabled: with no-sync a power
// loss drops what was not fsynced, on the bookies' FUSE disks). Then each
// bookie's agent keeps its journal records back while the model's fence
// record is not durable there (journalHolds). Not with a fix woven by
// --fix that answers every fencing read only once its record is durable
// (durable-fence-reply): the trace's fence durability is then the unfixed
// model's, which the fixed bookie does not have, and the run shows where
// the durable fence matters (a restarted bookie still fenced) rather than
// stopping at the first answer the fix delays.
func holdsFenceRecords(states []itfState, params map[string]any, opts Options) bool {
	if toInt(params["crashes"]) == 0 || journalMode(params) == spec.JournalNoSync || len(states) == 0 {
		return false
	}
	if fixes, _ := fixesOf(opts.Fix); slices.Contains(fixes, "durable-fence-reply") {
		return false
	}
	// Only where the trace has a fence record not yet durable somewhere:
	// the agent costs each bookie's start its weaving.
	for _, st := range states {
		if len(set(st["b_unflushed_fence"])) > 0 {
			return true
		}
	}
	return false
}

// processEnds are the steps that end a bookie's process: what its agent
// held is gone with it, and a restarted bookie holds nothing.
var processEnds = map[string]bool{"BookieCrashes": true, "BookieLosesDisk": true, "BookieRejoinsEmpty": true}

// journalHolds makes each bookie's journal follow the model's fence
// durability before the step is driven: held while the model's state
// after the step has its fence record not durable (b_unflushed_fence),
// released (written, and awaited) once the model has made it durable,
// at BookieSyncsJournal, or at a fencing read answered with data, which
// waits for the record. The step that ends a bookie's process releases
// nothing: the held records are lost with it, as the model's fence is.
func (r *run) journalHolds(ctx context.Context, next itfState) error {
	if !r.holdJournal {
		return nil
	}
	unflushed := set(next["b_unflushed_fence"])
	ending := ""
	if processEnds[next.action()] {
		ending, _ = next.picks()["bookie"].(string)
	}
	for _, b := range r.cl.Bookies() {
		want := contains(unflushed, b.Name)
		switch {
		case want == r.holding[b.Name]:
			continue
		case b.Name == ending || r.crashed[b.Name]:
			r.holding[b.Name] = false
			continue
		}
		if err := r.cl.Journal(ctx, b, want); err != nil {
			return diverged("the bookie's journal did not follow the model's fence durability", fmt.Sprintf("the journal of %s held: %v", b.Name, want), err.Error())
		}
		r.holding[b.Name] = want
	}
	return nil
}
