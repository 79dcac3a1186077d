package bridge

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// observation is what BookKeeper shows (the driver's observe).
type observation struct {
	Bookies map[string][]int      `json:"bookies"`
	Meta    javaMeta              `json:"meta"`
	Clients map[string]clientView `json:"clients"`
	// UR is the ledger's under-replication znode, where AutoRecovery runs.
	UR *underReplicated `json:"-"`
}

// javaMeta is the ledger's metadata as the driver shows it (Driver.metadataOf).
type javaMeta struct {
	State     string `json:"state"`
	LastEntry int64  `json:"lastEntry"`
	Ensembles []struct {
		First   int64    `json:"first"`
		Bookies []string `json:"bookies"`
	} `json:"ensembles"`
}

// clientView is what the driver shows of one client.
type clientView struct {
	Phase     string  `json:"phase"`
	LAC       *int64  `json:"lac"`
	Acked     []int64 `json:"acked"`
	Requested int     `json:"requested"`
	Completed int     `json:"completed"`
}

// compare polls what BookKeeper shows until it matches the model's state
// or the step's time runs out. Polling waits for an event (a callback
// processed on the client's threads); it decides nothing by the clock.
func (r *run) compare(ctx context.Context, want itfState) error {
	tctx, cancel := r.timeout(ctx)
	defer cancel()
	var last []string
	settled := false
	for {
		got, err := r.observe(tctx, want)
		if err == nil {
			last = r.differences(want, got)
			if len(last) == 0 {
				return nil
			}
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
		// What differs only in the clients and the metadata is final once
		// the clients have settled (every executor's queue run, no
		// metadata operation in flight): observed once more then, it is
		// the verdict now, not at the step's timeout. A bookie's entries
		// are its own work: those are awaited to the timeout.
		if err == nil && !settled && clientSide(last) {
			settled = true
			if r.drv.call(tctx, nil, "settle") == nil {
				if got, err := r.observe(tctx, want); err == nil {
					if last = r.differences(want, got); len(last) == 0 {
						return nil
					}
					return stateDiffers(last)
				}
			}
		}
		select {
		case <-tctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				// A verdict, not an error: BookKeeper did not show its
				// state within the step's time.
				return diverged("BookKeeper's state could not be observed", "the model's state after the step", fmt.Sprintf("no observation within %v: %v", r.opts.StepTimeout, err))
			}
			return stateDiffers(last)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// stateDiffers is the verdict on the differences compare found.
func stateDiffers(last []string) error {
	var m, b []string
	for _, d := range last {
		parts := strings.SplitN(d, "\x00", 3)
		m = append(m, parts[0]+": "+parts[1])
		b = append(b, parts[0]+": "+parts[2])
	}
	return diverged("BookKeeper's state differs from the model's: "+strings.Join(m, "; "), strings.Join(m, "; "), strings.Join(b, "; "))
}

// clientSide says whether every difference is of a client's state or the
// metadata (what the clients write), none of a bookie's entries.
func clientSide(diffs []string) bool {
	for _, d := range diffs {
		if strings.HasPrefix(d, entriesServedBy) {
			return false
		}
	}
	return true
}

// entriesServedBy labels a difference in what a bookie serves.
const entriesServedBy = "entries served by "

func (r *run) observe(ctx context.Context, want itfState) (*observation, error) {
	var ids []string
	down := set(want["b_down"])
	for _, b := range r.cl.Bookies() {
		if !contains(down, b.Name) {
			ids = append(ids, b.ID())
		}
	}
	var o observation
	if r.ledger < 0 {
		return &o, nil
	}
	args := []any{r.ledger, r.entries}
	if len(ids) > 0 {
		args = append(args, strings.Join(ids, ","))
	}
	if err := r.drv.call(ctx, &o, "observe", args...); err != nil {
		return nil, err
	}
	if r.autoRecovery {
		o.UR = &underReplicated{}
		if err := r.drv.call(ctx, o.UR, "under-replicated", r.ledger); err != nil {
			return nil, err
		}
	}
	if o.Meta.State == "CLOSED" {
		last := o.Meta.LastEntry
		r.closedLast = &last
	}
	return &o, nil
}

// differences lists, as "what\x00model\x00bookkeeper", where BookKeeper's
// observation differs from the model's state.
func (r *run) differences(want itfState, got *observation) []string {
	var out []string
	add := func(what, m, b string) {
		if m != b {
			out = append(out, what+"\x00"+m+"\x00"+b)
		}
	}
	if r.ledger < 0 {
		return nil
	}
	// Bookies: which entries each running bookie serves.
	entries := mapOf(want["b_entries"])
	for _, b := range r.cl.Bookies() {
		rcs, ok := got.Bookies[b.ID()]
		if !ok {
			continue
		}
		var m, k []string
		has := set(entries[b.Name])
		for e := 1; e <= r.entries; e++ {
			if contains(has, strconv.Itoa(e)) {
				m = append(m, "e"+strconv.Itoa(e))
			}
			if e-1 < len(rcs) && rcs[e-1] == 0 {
				k = append(k, "e"+strconv.Itoa(e))
			}
		}
		add(entriesServedBy+b.Name, "{"+strings.Join(m, ",")+"}", "{"+strings.Join(k, ",")+"}")
	}
	// Metadata.
	status := map[string]string{"Nil": "", "STATUS_OPEN": "OPEN", "STATUS_IN_RECOVERY": "IN_RECOVERY", "STATUS_CLOSED": "CLOSED"}[want.str("meta_status")]
	if deleted, _ := want["meta_deleted"].(bool); deleted {
		status = "" // the metadata is gone
	}
	add("ledger state", orNone(status), orNone(got.Meta.State))
	if status == "CLOSED" && got.Meta.State == "CLOSED" {
		last := func(n int64) string { return fmt.Sprintf("%d (Java entry id %d)", n, n-1) }
		add("ledger's last entry", last(int64(want.num("meta_last_entry"))), last(got.Meta.LastEntry+1))
	}
	if status != "" {
		frags, _ := want["meta_fragments"].([]any)
		var m, k []string
		for _, f := range frags {
			fm, _ := f.(map[string]any)
			m = append(m, fmt.Sprintf("e%d:{%s}", toInt(fm["first_entry_id"]), strings.Join(set(fm["ensemble"]), ",")))
		}
		for _, e := range got.Meta.Ensembles {
			var names []string
			for _, id := range e.Bookies {
				names = append(names, r.bookieName(id))
			}
			sort.Strings(names)
			k = append(k, fmt.Sprintf("e%d:{%s}", e.First+1, strings.Join(names, ",")))
		}
		add("ensembles", strings.Join(m, " "), strings.Join(k, " "))
	}
	if got.UR != nil {
		add(r.arDifference(want, got.UR))
	}
	// Writers: the LAC of each open writer.
	clients := mapOf(want["clients"])
	for name, cv := range clients {
		c, _ := cv.(map[string]any)
		jc, ok := got.Clients[name]
		if !ok || c["status"] != "STATUS_OPEN" || jc.LAC == nil {
			continue
		}
		add(name+"'s LAC", strconv.Itoa(toInt(c["lac"])), strconv.FormatInt(*jc.LAC+1, 10))
	}
	sort.Strings(out)
	return out
}

func orNone(s string) string {
	if s == "" {
		return "no ledger"
	}
	return s
}

// writeSet is the bookies the metadata names for Java entry e: its write
// set of qw in the ensemble that holds it (RoundRobinDistributionSchedule).
func (o *observation) writeSet(e int64, qw int) []string {
	var ens, out []string
	for _, f := range o.Meta.Ensembles {
		if f.First <= e {
			ens = f.Bookies
		}
	}
	for i := 0; i < qw && len(ens) > 0; i++ {
		out = append(out, ens[(int(e)+i)%len(ens)])
	}
	return out
}

// copies answers, in BookKeeper's terms, whether each acknowledged entry
// is served by at least need of the bookies the metadata names for it
// now (its write set in the ensemble that holds it,
// RoundRobinDistributionSchedule): need is Qa for
// AckedEntriesHaveAckQuorumCopies, and 1 for AllAckedEntriesAreReadable
// while the ledger is open (no closed ledger for a reader to open).
func (r *run) copies(o *observation, who []string, need int, needText string) (bool, string, error) {
	qw := toInt(r.params["write-quorum"])
	var short []string
	for _, c := range o.Clients {
		for _, e := range c.Acked {
			var holders, named []string
			for _, id := range o.writeSet(e, qw) {
				named = append(named, r.bookieName(id))
				if rcs := o.Bookies[id]; int(e) < len(rcs) && rcs[e] == 0 {
					holders = append(holders, r.bookieName(id))
				}
			}
			if len(holders) < need {
				short = append(short, fmt.Sprintf("entry %d is acknowledged, the metadata names {%s} for it, and only {%s} serve it (%s)",
					e, strings.Join(named, ","), strings.Join(holders, ","), needText))
			}
		}
	}
	evidence := ackedText(who)
	if len(short) > 0 {
		return true, evidence + ": " + strings.Join(short, "; ") + " (messages in flight, held by the proxy: " + r.heldList() + ")", nil
	}
	return false, evidence + ": every acknowledged entry has " + needText + " on the bookies the metadata names", nil
}

// asked are the properties property can ask of BookKeeper, each about
// acknowledged entries; "" is a walk's end (bkcheck conform), asked the
// data question. Any other (a client's status, a liveness property, a
// CEL probe) is answered STEPS AGREED (Unasked): its state variables are
// compared at every step, but nothing of the cluster answers it as a
// whole.
var asked = map[string]bool{
	"":                                     true,
	"AllAckedEntriesAreReadable":           true,
	"NoDivergenceBetweenClientAndMetaData": true,
	"AckedEntriesHaveAckQuorumCopies":      true,
}

func askable(invariant string) bool { return asked[invariant] }

// ackedText lists what the writers were told was acknowledged.
func ackedText(who []string) string {
	if len(who) == 0 {
		return "no entry acknowledged"
	}
	return strings.Join(who, ", ")
}

// askableList names the properties asked, sorted.
func askableList() []string {
	var names []string
	for n := range asked {
		if n != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// property answers whether BookKeeper itself violates the trace's
// property in the end. For the properties about acknowledged entries, the
// evidence is what a reader that arrives afterwards sees: the closed
// ledger's last entry and a read of each entry, against what each writer
// was told was acknowledged.
func (r *run) property(ctx context.Context, invariant string, last itfState) (bool, string, error) {
	o, err := r.observe(ctx, last)
	if err != nil {
		return false, "", err
	}
	var acked []int64
	var who []string
	for name, c := range o.Clients {
		for _, e := range c.Acked {
			acked = append(acked, e)
			who = append(who, fmt.Sprintf("%s: entry %d acknowledged", name, e))
		}
	}
	sort.Strings(who)
	if invariant == "AckedEntriesHaveAckQuorumCopies" {
		qa := toInt(r.params["ack-quorum"])
		return r.copies(o, who, qa, fmt.Sprintf("Qa = %d copies", qa))
	}
	if o.Meta.State == "" && r.closedLast != nil {
		var lost []string
		for _, e := range acked {
			if e > *r.closedLast {
				lost = append(lost, fmt.Sprintf("entry %d is beyond the last entry %d the ledger was closed at", e, *r.closedLast))
			}
		}
		evidence := fmt.Sprintf("%s; the ledger was closed at last entry %d and its metadata deleted", ackedText(who), *r.closedLast)
		if len(lost) > 0 {
			return true, evidence + ": " + strings.Join(lost, "; "), nil
		}
		return false, evidence, nil
	}
	if o.Meta.State != "CLOSED" {
		if invariant == "AllAckedEntriesAreReadable" && o.Meta.State != "" {
			lost, evidence, err := r.copies(o, who, 1, "a copy")
			return lost, fmt.Sprintf("the ledger is %s; %s", o.Meta.State, evidence), err
		}
		return false, fmt.Sprintf("the ledger is %s; %s", orNone(o.Meta.State), ackedText(who)), nil
	}
	var rd struct {
		LastEntry int64 `json:"lastEntry"`
		Reads     []int `json:"reads"`
	}
	if err := r.drv.call(ctx, &rd, "read-closed", r.ledger); err != nil {
		return false, "", err
	}
	var lost []string
	for _, e := range acked {
		switch {
		case e > rd.LastEntry:
			lost = append(lost, fmt.Sprintf("entry %d is beyond the closed ledger's last entry %d", e, rd.LastEntry))
		case rd.Reads[e] != 0:
			lost = append(lost, fmt.Sprintf("entry %d cannot be read (rc %d)", e, rd.Reads[e]))
		}
	}
	evidence := fmt.Sprintf("%s; a fresh reader opens the closed ledger (last entry %d)", ackedText(who), rd.LastEntry)
	if len(lost) > 0 {
		return true, evidence + ": " + strings.Join(lost, "; "), nil
	}
	return false, evidence + ": every acknowledged entry is there", nil
}

// auditorCheck asks, at the end of a trace with --autorecovery that ends
// in a terminal state, what the Auditor's periodic check would find of the
// closed ledger: the release's LedgerChecker run as
// AuditorCheckAllLedgersTask runs it (the ledger opened without recovery,
// auditorLedgerVerificationPercentage as the trace's
// --auditor-verification-percentage). The model's last state has no
// successor, AutoRecovery's steps included, so the checker must find no
// fragment to re-replicate: one it finds is a divergence at the last step
// (the Auditor would mark the ledger). stop: res holds that verdict.
func (r *run) auditorCheck(ctx context.Context, res *Result) (stop bool, err error) {
	on, _ := r.params["autorecovery"].(bool)
	if !on || !r.opts.terminal || r.params["auditor-periodic-check"] == "off" || r.ledger < 0 {
		return false, nil
	}
	last := r.states[len(r.states)-1]
	if last.str("meta_status") != "STATUS_CLOSED" {
		return false, nil
	}
	var out struct {
		Fragments []struct {
			First   int64    `json:"first"`
			Last    int64    `json:"last"`
			Bookies []string `json:"bookies"`
		} `json:"fragments"`
	}
	pct := toInt(r.params["auditor-verification-percentage"])
	if err := r.drv.call(ctx, &out, "check-ledger", r.ledger, pct); err != nil {
		return false, err
	}
	what := fmt.Sprintf("the Auditor's periodic check (LedgerChecker, auditorLedgerVerificationPercentage=%d) of the closed ledger", pct)
	if len(out.Fragments) == 0 {
		res.Notes = append(res.Notes, what+" finds no fragment to re-replicate: AutoRecovery would not act, as the model's last state allows no AutoRecovery step")
		return false, nil
	}
	var fs []string
	for _, f := range out.Fragments {
		var names []string
		for _, b := range f.Bookies {
			names = append(names, r.bookieName(b))
		}
		fs = append(fs, fmt.Sprintf("entries %d to %d on {%s}", f.First, f.Last, strings.Join(names, ",")))
	}
	i := len(r.states) - 1
	res.Verdict, res.Step, res.Action = Diverged, i+1, last.action()
	res.Reason = what + " finds fragments to re-replicate"
	res.Model = "no AutoRecovery step is enabled in the trace's last state"
	res.BookKeeper = "LedgerChecker reports " + strings.Join(fs, "; ") + ": the Auditor would mark the ledger under-replicated"
	return true, nil
}
