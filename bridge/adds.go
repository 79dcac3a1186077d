package bridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/bkcheck/bkcheck/bridge/wire"
)

// The adds' handlers (mapping.go): creating the ledger, the writer's adds,
// the bookies' answers to them, and how a write fails.

func (r *run) createLedger(ctx context.Context, s step) error {
	frags, _ := s.next["meta_fragments"].([]any)
	if len(frags) != 1 {
		return fmt.Errorf("the created ledger has %d fragments", len(frags))
	}
	f, _ := frags[0].(map[string]any)
	var ids []string
	for _, b := range javaLayout(f) {
		ids = append(ids, r.bookieID(b))
	}
	qw, qa := toInt(r.params["write-quorum"]), toInt(r.params["ack-quorum"])
	e := toInt(r.params["ensemble"])
	if err := r.drv.call(ctx, nil, "create", s.client, e, qw, qa, strings.Join(ids, ",")); err != nil {
		return err
	}
	if err := r.releaseMeta(ctx, s.client, "create"); err != nil {
		return err
	}
	ev, err := r.succeeded(ctx, s.client, "created", "create the ledger")
	if err != nil {
		return err
	}
	r.ledger = ev.Ledger
	return nil
}

// failToCreateLedger: the model's creation fails when fewer than E bookies
// are registered. BookKeeper's placement sees the bookies registered: a
// crashed bookie's registration lasts until the harness ends it (at the
// crash, or at the model's BookieRegistrationExpires), so the harness
// checks that it has, then asks for a ledger with the placement left to
// BookKeeper.
func (r *run) failToCreateLedger(ctx context.Context, s step) error {
	if err := r.awaitUnregistered(ctx, func(name string) bool { return r.crashed[name] }, "a crashed bookie stayed registered"); err != nil {
		return err
	}
	qw, qa := toInt(r.params["write-quorum"]), toInt(r.params["ack-quorum"])
	if err := r.drv.call(ctx, nil, "create", s.client, toInt(r.params["ensemble"]), qw, qa, "-"); err != nil {
		return err
	}
	ev, err := r.outcome(ctx, s.client, "created", "fail to create the ledger")
	if err != nil {
		return err
	}
	if ev.RC == 0 {
		return diverged("the ledger's creation succeeded", "the creation fails: fewer than E writable bookies", fmt.Sprintf("ledger %d created", ev.Ledger))
	}
	return nil
}

func (r *run) sendAdd(ctx context.Context, s step) error {
	if err := r.drv.call(ctx, nil, "add", s.client); err != nil {
		return err
	}
	return r.expectSent(ctx, s.prev, s.next)
}

// createAddOp is the first half of the application's add: the op takes
// the handle's ensemble now; the client's next sendAdd queues it.
func (r *run) createAddOp(ctx context.Context, s step) error {
	return r.drv.call(ctx, nil, "create-op", s.client)
}

// checkAdd: a check apart from its store by no step of the bookie
// (unsupported checked it) is taken with the store: the bookie checks and
// stores when the harness delivers the add, at the store's step.
func (r *run) checkAdd(ctx context.Context, s step) error {
	if checkInterleaved(r.states, r.cur) == 0 {
		return nil
	}
	return r.raceAdd(ctx, s)
}

// raceAdd runs an add's fence check apart from its store (split-add-check,
// a fence between them; raceRefused ran the trace): the bookie's agent is
// armed for the ledger, the add delivered, and its thread awaited where it
// has created its own handle for the ledger and not stored it yet
// (AddRace). The fence's delivery then interleaves them (raceFence), and
// the store's step lets the add store (deliver).
func (r *run) raceAdd(ctx context.Context, s step) error {
	var add *message
	for _, m := range messages(s.prev) {
		if m.Type == "AddEntryRequestMessage" && m.Count > 0 && m.Client == s.client && m.Bookie == s.bookie && m.Entry == toInt(s.next.picks()["entry"]) {
			m := m
			add = &m
		}
	}
	if add == nil {
		return fmt.Errorf("no add of %s to %s in flight to check", s.client, s.bookie)
	}
	b := r.cl.Bookie(s.bookie)
	if err := r.cl.Race(ctx, b, fmt.Sprintf("arm %d", r.ledger)); err != nil {
		return diverged("the bookie's agent could not arm the race", "an add and a fence on their own handles", err.Error())
	}
	f, err := r.awaitFrame(ctx, add.String(), func(f *wire.Frame) bool { return frameOf(*add, f) })
	if err != nil {
		return err
	}
	if err := r.px.Deliver(f); err != nil {
		return diverged("the frame could not be delivered", add.String()+" delivered", err.Error())
	}
	if err := r.cl.Race(ctx, b, "await-created"); err != nil {
		return diverged("the add did not create a handle of its own", "the add checked on a handle it created", err.Error())
	}
	r.raced[s.bookie] = add.key()
	r.notes = append(r.notes, fmt.Sprintf("step %d: %s's add of entry %d held by the agent in %s after creating its own handle, before storing it (the race before PR #4701)", r.cur+1, s.client, add.Entry, s.bookie))
	return nil
}

// raceFence interleaves, after a fencing request's delivery to a bookie
// whose agent holds a checked add, the fence and the add as the trace has
// them: the fence on a handle of its own, the add checked before it
// fences and stored after it answers. With PR #4701 both share the handle
// stored first, and the fence waits for the add: the trace's order is
// not BookKeeper's there.
func (r *run) raceFence(ctx context.Context, m *message) error {
	if r.raced[m.Bookie] == "" || (m.Type != "FenceRequestMessage" && m.Fields["fence"] != true) {
		return nil
	}
	if err := r.cl.Race(ctx, r.cl.Bookie(m.Bookie), "interleave"); err != nil {
		return diverged("the fence did not run between the add's check and its store", "the fence on its own handle, answered while the checked add waits to store", err.Error())
	}
	return nil
}

// expectSentStep awaits the frames the step sends, which Java sends by
// itself.
func (r *run) expectSentStep(ctx context.Context, s step) error {
	return r.expectSent(ctx, s.prev, s.next)
}

// respondTo delivers the request the step consumes to its bookie and
// checks the bookie's answer.
func respondTo(reqType, respType string, wantRC func(rc int, resp message) bool) func(*run, context.Context, step) error {
	return func(r *run, ctx context.Context, s step) error {
		return r.respond(ctx, s.prev, s.next, reqType, respType, wantRC)
	}
}

// rcIs accepts an answer whose return code is one of codes.
func rcIs(codes ...int) func(rc int, _ message) bool {
	return func(rc int, _ message) bool {
		for _, c := range codes {
			if rc == c {
				return true
			}
		}
		return false
	}
}

// deliverTo delivers the answer the step consumes to its client.
func deliverTo(typ string) func(*run, context.Context, step) error {
	return func(r *run, ctx context.Context, s step) error {
		_, err := r.deliver(ctx, s.prev, s.next, typ)
		return err
	}
}

// receiveAddError: the error reaches the op's writeComplete, which starts
// an ensemble change at once: its replacements are queued first.
func (r *run) receiveAddError(ctx context.Context, s step) error {
	r.queueReplacements(ctx, s.client)
	_, err := r.deliver(ctx, s.prev, s.next, "AddEntryResponseMessage")
	return err
}

// addTimeout fails a lost add at its op (PendingAddOp's writeComplete) as
// BookKeeper can (lostAddFailure): by the clock, through
// SteeredBookKeeper.timeOut (TimeoutException, as PerChannelBookieClient's
// per-request timeout would), or, where the trace answers an older write
// to another bookie later, which the clock would have timed out first, by
// closing the client's connection to the bookie (channelInactive:
// BookieHandleNotAvailableException). Java starts an ensemble change at
// once and asks its placement policy for the replacements; the model
// chooses them at its ClientUpdatesEnsembleMetadata step, so the harness
// queues the ones the trace's next such step chose.
func (r *run) addTimeout(ctx context.Context, s step) error {
	prev, next, client := s.prev, s.next, s.client
	var lost *message
	after := map[string]int{}
	for _, m := range messages(next) {
		after[m.key()] = m.Count
	}
	for _, m := range messages(prev) {
		if m.Count == -1 && m.Client == client && after[m.key()] == 0 {
			m := m
			lost = &m
		}
	}
	if lost == nil {
		return fmt.Errorf("the trace's timeout consumes no lost message")
	}
	link := client + "/" + lost.Bookie
	if r.sent == nil {
		r.sent = addSendSteps(r.states)
	}
	// A write sent while its bookie was down failed at once (the
	// connection refused: BookieHandleNotAvailableException), which the
	// model takes as its timeout whenever it comes, the bookie back or not.
	sentAt := r.sent[r.cur-1][lost.key()]
	downAtSend := sentAt > 0 && contains(set(r.states[sentAt]["b_down"]), lost.Bookie)
	if !r.crashed[lost.Bookie] && !downAtSend {
		closeLink, older, refused := lostAddFailure(r.states, r.sent, r.cur, *lost)
		if refused != "" {
			return notExecutable(refused)
		}
		if closeLink {
			kind := "ClientReceivesAddTimeout"
			if lost.Fields["recovery"] == true {
				kind = "RecoveryClientReceivesAddTimeout"
			}
			r.notes = append(r.notes, fmt.Sprintf("step %d (%s): %s's write of entry %d to %s failed by closing %s's connection to %s "+
				"(BookieHandleNotAvailableException), not by the clock, which would have timed out first the older %s",
				r.cur+1, kind, client, javaEntry(lost.Entry), lost.Bookie, client, lost.Bookie, older))
			r.queueReplacements(ctx, client)
			id := r.bookieID(lost.Bookie)
			r.px.CloseLinks(client, lost.Bookie)
			r.linkClosed[link] = r.cur
			_, err := r.awaitEvent(ctx, fmt.Sprintf("fail the write of entry %d to %s when its connection closed", lost.Entry, lost.Bookie), func(e Event) bool {
				return e.Ev == "write-failed" && e.Client == client && e.Bookie == id && e.Entry == javaEntry(lost.Entry)
			})
			return err
		}
	}
	r.queueReplacements(ctx, client)
	var out struct {
		Outcome string `json:"outcome"`
	}
	if err := r.drv.call(ctx, &out, "timeout", client, r.bookieID(lost.Bookie), r.ledger, javaEntry(lost.Entry)); err != nil {
		return err
	}
	closedSince := false
	if at, ok := r.linkClosed[link]; ok {
		closedSince = at >= r.sent[r.cur-1][lost.key()]
	}
	switch {
	case out.Outcome == "timed-out":
		return nil
	case strings.HasPrefix(out.Outcome, "failed") && (r.crashed[lost.Bookie] || closedSince || downAtSend):
		// Its connection closed (the bookie crashed, or the harness closed
		// it to fail a newer write) or was refused (the bookie was down
		// when the write was sent): PerChannelBookieClient failed the
		// write then, which the model takes as its timeout.
		return nil
	}
	return diverged(fmt.Sprintf("%s had no add of entry %d to %s outstanding to time out", client, lost.Entry, lost.Bookie),
		"the lost "+lost.String()+" times out at its op", "no outstanding write of that entry to that bookie ("+out.Outcome+")")
}
