package bridge

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// This file drives AutoRecovery: the release's own Auditor and
// ReplicationWorker run in the client driver (AutoRecovery.java), each of
// their steps stopped at a gate of the agent (AutoRecoveryHold.java) until
// the model's step opens it. The worker's client connects to the bookies
// straight, not through the proxy: the model's worker reads and copies
// within one step.

// arActions are the model's AutoRecovery actions; a trace that takes one
// runs the Auditor and the worker.
var arActions = []string{"AuditorMarksLedgerUnderreplicated", "AuditorChecksLedger", "WorkerAcquiresLedger",
	"WorkerReplicatesFragment", "WorkerUpdatesEnsemble", "WorkerDefersLedger", "WorkerMarksLedgerReplicated",
	"WorkerReleasesLedger", "WorkerGraceExpires", "WorkerDiesOnInconsistentRange"}

// runsAutoRecovery says whether the trace takes a step of AutoRecovery.
func runsAutoRecovery(states []itfState) bool {
	for _, s := range states {
		if slices.Contains(arActions, s.action()) {
			return true
		}
	}
	return false
}

// workerClient is the driver's name of the worker's client.
const workerClient = "worker"

// startAutoRecovery starts the Auditor and the worker in the driver, the
// worker's client on each bookie's own port, and awaits both at rest.
func (r *run) startAutoRecovery(ctx context.Context) error {
	var ports []string
	for _, b := range r.cl.Bookies() {
		ports = append(ports, fmt.Sprintf("%s=%d", b.ID(), b.Port))
	}
	r.autoRecovery = true
	return r.drv.call(ctx, nil, "autorecovery", toInt(r.params["auditor-verification-percentage"]), strings.Join(ports, ","))
}

// gated is what the driver says of a gate it opened: what its thread was
// doing (a fragment's first and last Java entry id and bad bookies, a
// mark's missing bookies), where the worker rests now (a gate's point,
// "meta" in a held metadata write, "dead"), and the entries of the ledger
// the worker could not read (nil: no set made).
type gated struct {
	Opened struct {
		Point   string   `json:"point"`
		First   *int64   `json:"first"`
		Last    *int64   `json:"last"`
		Bad     []string `json:"bad"`
		Missing []string `json:"missing"`
		Error   string   `json:"error"`
	} `json:"opened"`
	Rest       string           `json:"rest"`
	Held       []map[string]any `json:"held"`
	Unreadable []int64          `json:"unreadable"`
}

// openGate opens the gate at point and returns what followed; a gate no
// thread reaches is a divergence.
func (r *run) openGate(ctx context.Context, point, what string) (*gated, error) {
	var g gated
	if err := r.drv.call(ctx, &g, "gate", point, r.ledger); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, diverged("BookKeeper's AutoRecovery did not "+what, what, err.Error())
	}
	if g.Opened.Error != "" {
		return nil, diverged("BookKeeper's AutoRecovery failed to "+what, what, g.Opened.Error)
	}
	return &g, nil
}

// rests checks where the worker rests after a step: dead only where the
// model's worker is stopped.
func (r *run) rests(g *gated, s step) error {
	stopped := s.next.str("rw_phase") == "stopped"
	if (g.Rest == "dead") != stopped {
		return diverged("the ReplicationWorker's thread "+map[bool]string{true: "lives", false: "died"}[stopped],
			"rw_phase "+s.next.str("rw_phase"), "the worker rests at "+g.Rest)
	}
	return nil
}

// auditorMarks opens the Auditor's mark, which it reached when ZooKeeper
// told it of the lost bookies (lostBookieRecoveryDelay 0), and checks the
// bookies it marks the ledger with.
func (r *run) auditorMarks(ctx context.Context, s step) error {
	g, err := r.openGate(ctx, "mark", "mark the ledger under-replicated")
	if err != nil {
		return err
	}
	want := set(s.next.picks()["lost"])
	got := r.bookieNames(g.Opened.Missing)
	if !slices.Equal(want, got) {
		return diverged("the Auditor marked the ledger with other missing bookies",
			"missing {"+strings.Join(want, ",")+"}", "missing {"+strings.Join(got, ",")+"}")
	}
	return r.rests(g, s)
}

// gateStep is a step that opens the gate at point (what: what its thread
// does) and checks where the worker rests after it: the worker's loop
// (acquire: it takes the lock, opens the ledger without recovery, checks
// it and stops at its first closed under-replicated fragment or its run's
// end), deferLedgerLockRelease (defer), markLedgerReplicated (replicated),
// and the lock's release (release: the timer
// deferLedgerLockReleaseOfFailedLedger scheduled, or the run's own).
func gateStep(point, what string) func(*run, context.Context, step) error {
	return func(r *run, ctx context.Context, s step) error {
		g, err := r.openGate(ctx, point, what)
		if err != nil {
			return err
		}
		return r.rests(g, s)
	}
}

// workerReplicatesFragment opens the fragment the worker stopped at,
// which must be the model's; its replacement is the model's.
func (r *run) workerReplicatesFragment(ctx context.Context, s step) error {
	return r.workerFragment(ctx, s, "replicate the fragment")
}

// workerDies opens the fragment whose faulty-entry check throws
// (IllegalArgumentException "inconsistent range"): the thread dies.
func (r *run) workerDies(ctx context.Context, s step) error {
	return r.workerFragment(ctx, s, "check the fragment's faulty entries")
}

func (r *run) workerFragment(ctx context.Context, s step, what string) error {
	for _, b := range set(s.next["rw_replacements"]) {
		if err := r.drv.call(ctx, nil, "replace", r.bookieID(b)); err != nil {
			return err
		}
	}
	g, err := r.openGate(ctx, "fragment", what)
	if err != nil {
		return err
	}
	first := toInt(s.next.picks()["entry"])
	if g.Opened.First == nil || *g.Opened.First != javaEntry(first) {
		got := "none"
		if g.Opened.First != nil {
			got = fmt.Sprintf("the fragment from entry %d (Java %d)", *g.Opened.First+1, *g.Opened.First)
		}
		return diverged("the ReplicationWorker took another fragment (it iterates a HashSet; the model's order is free)",
			fmt.Sprintf("the fragment from entry %d", first), got)
	}
	if err := r.rests(g, s); err != nil {
		return err
	}
	return r.unreadable(g, s)
}

// unreadable compares the worker's unableToReadEntriesForReplication with
// the model's rw_unreadable.
func (r *run) unreadable(g *gated, s step) error {
	var want, got []string
	if s.next["rw_unreadable"] != nil && s.next.str("rw_unreadable") != "Nil" {
		want = set(s.next["rw_unreadable"])
	}
	for _, e := range g.Unreadable {
		got = append(got, strconv.FormatInt(e+1, 10))
	}
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(want, got) {
		return diverged("the worker's unreadable entries differ", "{"+strings.Join(want, ",")+"}", "{"+strings.Join(got, ",")+"}")
	}
	return nil
}

// workerUpdatesEnsemble releases the worker's metadata write: the new
// bookies swapped into the fragment's ensemble.
func (r *run) workerUpdatesEnsemble(ctx context.Context, s step) error {
	return r.releaseMeta(ctx, workerClient, "write")
}

// underReplicated is the ledger's under-replication znode as the driver
// reads it.
type underReplicated struct {
	Missing []string `json:"missing"`
	Locked  *bool    `json:"locked"`
}

// arDifference is the ledger's under-replication znode as a step's
// comparison sees it: the missing bookies the model's ur_missing names.
func (r *run) arDifference(want itfState, ur *underReplicated) (what, m, b string) {
	ms := set(want["ur_missing"])
	sort.Strings(ms)
	return "the ledger's under-replicated znode (missing bookies)", "{" + strings.Join(ms, ",") + "}", "{" + strings.Join(r.bookieNames(ur.Missing), ",") + "}"
}

// bookieNames are the model's names of bookie ids, sorted.
func (r *run) bookieNames(ids []string) []string {
	var out []string
	for _, id := range ids {
		out = append(out, r.bookieName(id))
	}
	sort.Strings(out)
	return out
}
