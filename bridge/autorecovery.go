package bridge

import (
	"cmp"
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
	"WorkerReleasesLedger", "WorkerGraceExpires", "WorkerDiesOnInconsistentRange", "AdminDecommissionsBookie", "AdminFinishesDecommission"}

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
	var g gated
	if err := r.drv.call(ctx, &g, "audit-mark", r.ledger); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return diverged("BookKeeper's Auditor did not mark the ledger under-replicated", "the Auditor marks the ledger", err.Error())
	}
	want := set(s.next.picks()["lost"])
	got := r.bookieNames(g.Opened.Missing)
	if !slices.Equal(want, got) {
		return diverged("the Auditor marked the ledger with other missing bookies",
			"missing {"+strings.Join(want, ",")+"}", "missing {"+strings.Join(got, ",")+"}")
	}
	return r.rests(&g, s)
}

// auditorChecks runs the Auditor's periodic check now
// (AuditorCheckAllLedgersTask, on a thread of its own as its executor would
// run it every auditorPeriodicCheckInterval), opening each mark it makes
// at its gate until it ends; the step's comparison then holds the
// under-replication znode to the model's.
func (r *run) auditorChecks(ctx context.Context, s step) error {
	var out struct {
		Marks []map[string]any `json:"marks"`
		Rest  string           `json:"rest"`
	}
	if err := r.drv.call(ctx, &out, "audit-check", r.ledger); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return diverged("BookKeeper's Auditor did not run its check to its end", "the Auditor checks the ledger", err.Error())
	}
	return r.rests(&gated{Rest: out.Rest}, s)
}

// workerAcquires opens the worker's loop: it takes the ledger's lock,
// opens it without recovery, checks it and stops at its first closed
// under-replicated fragment or its run's end. The fragments are tried in
// the order the trace's run tries them: rereplicate iterates a HashSet
// ordered by identity hash codes, so every order is the release's.
func (r *run) workerAcquires(ctx context.Context, s step) error {
	var firsts []string
	for _, st := range r.states[r.cur+1:] {
		a := st.action()
		if a == "WorkerAcquiresLedger" {
			break
		}
		if a == "WorkerReplicatesFragment" || a == "WorkerDiesOnInconsistentRange" {
			firsts = append(firsts, strconv.FormatInt(javaEntry(toInt(st.picks()["entry"])), 10))
		}
	}
	if err := r.drv.call(ctx, nil, "fragment-order", strings.Join(firsts, ",")); err != nil {
		return err
	}
	return gateStep("acquire", "take the ledger's lock")(r, ctx, s)
}

// gateStep is a step that opens the gate at point (what: what its thread
// does) and checks where the worker rests after it:
// deferLedgerLockRelease (defer), markLedgerReplicated (replicated),
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
	opened := g.Opened
	// A thread that dies of the check's exception releases the lock in
	// rereplicate's finally on its way out: the model's step includes it.
	if s.next.str("rw_phase") == "stopped" && g.Rest == "release" {
		if g, err = r.openGate(ctx, "release", "release the lock as the worker's thread dies"); err != nil {
			return err
		}
	}
	g.Opened = opened
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

// decommissioned is what the driver says of the decommission command: it
// has returned (with the error it threw, if any), or it waits.
type decommissioned struct {
	Done  bool   `json:"done"`
	Error string `json:"error"`
}

// decommission runs the operator's decommission of the stopped bookie
// once its registration has expired (only its own: another stopped bookie
// may stay registered), and awaits the command at its first wait.
func (r *run) decommission(ctx context.Context, s step) error {
	if err := r.awaitUnregistered(ctx, func(name string) bool { return name == s.bookie }, "the stopped bookie is still registered"); err != nil {
		return err
	}
	var d decommissioned
	if err := r.drv.call(ctx, &d, "decommission", r.bookieID(s.bookie)); err != nil {
		return err
	}
	if d.Done {
		return diverged("the decommission command returned at once", "it waits for the bookie's ledgers to be replicated", "returned: "+cmp.Or(d.Error, "no error"))
	}
	r.decommissioning = s.bookie
	return nil
}

// decommissionWaits asks the decommission command, after a step the
// model ends with the command waiting and the bookie still in a segment of
// the ledger that stores entries (AdminFinishesDecommission not enabled),
// whether it would return now: its wait is opened, it reads the metadata
// again (areEntriesOfLedgerStoredInTheBookie), and it must wait again. So
// each state of a lasso where the model's command waits for ever is one
// where BookKeeper's command, asked, waits too. With E > Qw the model's
// rule reads the bookie's index, which the metadata alone does not say:
// the command is not asked there.
func (r *run) decommissionWaits(ctx context.Context, want itfState) error {
	done, _ := want["decom_done"].(bool)
	if r.decommissioning == "" || done || toInt(r.params["ensemble"]) > toInt(r.params["write-quorum"]) || !storesEntries(want, r.decommissioning) {
		return nil
	}
	var d decommissioned
	if err := r.drv.call(ctx, &d, "decommission-poll"); err != nil {
		return err
	}
	if d.Done {
		return diverged("the decommission command returned", "it waits: a segment of the ledger that stores entries names "+r.decommissioning, "returned: "+cmp.Or(d.Error, "no error"))
	}
	if !r.decommissionAsked {
		r.decommissionAsked = true
		r.notes = append(r.notes, fmt.Sprintf("from step %d on, after each step the decommission command's wait was opened: it read the ledger's metadata again (BookKeeperAdmin.waitForLedgersToBeReplicated) and waited again, each time", r.cur+1))
	}
	return nil
}

// storesEntries is the model's areEntriesOfLedgerStoredInTheBookie on an
// ITF state, without striping: a segment of the ledger names the bookie,
// other than a closed ledger's last segment that starts past its last
// entry.
func storesEntries(want itfState, bookie string) bool {
	frags, _ := want["meta_fragments"].([]any)
	closed := want.str("meta_status") == "STATUS_CLOSED"
	for i, f := range frags {
		fm, _ := f.(map[string]any)
		if !contains(set(fm["ensemble"]), bookie) {
			continue
		}
		if i == len(frags)-1 && closed && want.num("meta_last_entry") < toInt(fm["first_entry_id"]) {
			continue
		}
		return true
	}
	return false
}

// decommissionPolls bounds how many of its waits the decommission's end
// may take: one for the Auditor, one per look at the metadata.
const decommissionPolls = 10

// finishDecommission opens the command's waits until it returns.
func (r *run) finishDecommission(ctx context.Context, s step) error {
	for range decommissionPolls {
		var d decommissioned
		if err := r.drv.call(ctx, &d, "decommission-poll"); err != nil {
			return err
		}
		if d.Done && d.Error != "" {
			return diverged("the decommission command failed", "it returns", d.Error)
		}
		if d.Done {
			r.decommissioning = ""
			return nil
		}
	}
	return diverged("the decommission command did not return", "it returns", fmt.Sprintf("still waiting after %d of its polls", decommissionPolls))
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

// observedCEL are the CEL properties the harness asks of BookKeeper itself
// at a trace's end, by their expression (spaces normalized): what each
// reads is observed directly, not inferred from the model's state. An
// eventually-property is asked only of a trace that ends in a terminal
// state (Confirm).
var observedCEL = map[string]func(ctx context.Context, r *run) (violated bool, evidence string, err error){
	// ReachesQw (docs/guarantees.md's AutoRecovery section): every entry of
	// the closed ledger has a copy on each bookie of its write set.
	`meta_status == "STATUS_CLOSED" ~> seq(1, meta_last_entry).all(e, fragment_of(e).id > 0 && copies(e) == size(write_set(e)))`: reachesQw,
	`meta_status != "STATUS_CLOSED" || seq(1, meta_last_entry).all(e, fragment_of(e).id > 0 && copies(e) == size(write_set(e)))`: reachesQw,
	// The worker runs: the ReplicationWorker's thread, the one that took
	// the agent's gates, is alive (f-4551's question).
	`rw_phase != "stopped"`: func(ctx context.Context, r *run) (bool, string, error) {
		if !r.autoRecovery {
			return false, "", fmt.Errorf("the trace runs no ReplicationWorker")
		}
		var out struct{ Alive bool }
		if err := r.drv.call(ctx, &out, "worker-alive"); err != nil {
			return false, "", err
		}
		if out.Alive {
			return false, "the ReplicationWorker's thread is alive", nil
		}
		return true, "the ReplicationWorker's thread is dead: AutoRecovery repairs nothing more (an AutoRecoveryMain's death watcher would shut it down)", nil
	},
}

// reachesQw asks whether every entry of the closed ledger is served by
// each bookie its metadata names for it (its write set). A bookie down since the
// harness emptied its disk holds nothing; another down bookie is not
// asked (its disk may hold the entry).
func reachesQw(ctx context.Context, r *run) (bool, string, error) {
	o, err := r.observe(ctx, r.states[len(r.states)-1])
	if err != nil {
		return false, "", err
	}
	if o.Meta.State != "CLOSED" {
		return false, "the ledger is not closed (" + orNone(o.Meta.State) + ")", nil
	}
	qw := toInt(r.params["write-quorum"])
	var short []string
	for e := int64(0); e <= o.Meta.LastEntry; e++ {
		var holders, named, down []string
		for _, id := range o.writeSet(e, qw) {
			named = append(named, r.bookieName(id))
			rcs, up := o.Bookies[id]
			switch {
			case !up && r.wiped[r.bookieName(id)]:
				// its disk emptied, and down since: it holds nothing
			case !up:
				down = append(down, r.bookieName(id))
			case int(e) < len(rcs) && rcs[e] == 0:
				holders = append(holders, r.bookieName(id))
			}
		}
		if len(holders)+len(down) < len(named) {
			short = append(short, fmt.Sprintf("entry %d: the metadata names {%s}, only {%s} serve it (down, not asked: {%s})",
				e, strings.Join(named, ","), strings.Join(holders, ","), strings.Join(down, ",")))
		}
	}
	closed := fmt.Sprintf("the closed ledger (last entry %d)", o.Meta.LastEntry)
	if len(short) > 0 {
		return true, closed + ", in a state no step of the model can leave: " + strings.Join(short, "; "), nil
	}
	return false, closed + ": every entry on each bookie of its write set", nil
}
