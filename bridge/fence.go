package bridge

import (
	"context"
	"fmt"

	"github.com/bkcheck/bkcheck/bridge/wire"
	"github.com/bkcheck/bkcheck/spec"
)

// A fencing read the trace never delivers, with a later request of its
// connection that the trace does deliver.
//
// The model orders its messages by kind, not by connection: its recovery
// client's fencing read to a bookie and its recovery read to the same
// bookie are two channels, and a trace may deliver the read while the
// fencing read, sent before it, stays in flight for good. One TCP
// connection cannot (wire.Lane). TCP loses a frame by closing its
// connection: PerChannelBookieClient.channelInactive then fails the
// request at the client, and the client's next request opens a new
// connection. The harness does that where the client has no use left for
// the fencing read: the trace ends the client's fencing phase without its
// answer (ReadLastConfirmedOp completes on the others'). Java sends the
// first recovery read from the callback of the fence answer that
// completes the phase (LedgerRecoveryOp.doRecoveryRead), so the close
// comes just before the harness delivers that answer: the failure reaches
// ReadLastConfirmedOp while it still waits for that answer, and counts as
// no answer from the bookie (its coverage set leaves the bookie unknown,
// and the answer still to come keeps a response pending), so the op
// completes on the answer the trace delivers, as in the trace, and the
// recovery read goes on a new connection. Where the connection also
// carries something the trace delivers later, which the close would fail
// too, the harness does not close, and the later delivery is refused as
// TCP would refuse it (NOT EXECUTABLE, run.deliver).

// spentFence is a fencing read the harness fails by closing its
// connection: fence, in flight and never delivered, and behind, the first
// request of its connection that the trace delivers after it, at step at
// (an index of states).
type spentFence struct {
	fence, behind message
	at            int
}

// spentFences gives the fencing reads of client that the harness fails by
// a close before the trace's step cur (states[cur-1] to states[cur]), a
// ClientReceivesFencingReadLacResponse of client: none unless it is the
// last fence answer client takes before its fencing phase ends.
func spentFences(states []itfState, cur int, client string) []spentFence {
	phase := func(s itfState) int {
		return toInt(s.client(client)["recovery_phase"])
	}
	if phase(states[cur]) != int(spec.FencingPhase) {
		return nil
	}
	ends := false
	for j := cur + 1; j < len(states) && !ends; j++ {
		if m := consumed(states[j-1], states[j], "FenceResponseMessage"); m != nil && m.Client == client {
			return nil // a later answer completes the phase
		}
		ends = phase(states[j]) != int(spec.FencingPhase)
	}
	if !ends {
		return nil
	}
	var out []spentFence
	for _, m := range messages(states[cur-1]) {
		if m.Type != "FenceRequestMessage" || m.Client != client || m.Count != 1 || deliveredAfter(states, cur-1, m.key()) >= 0 {
			continue
		}
		// The close fails everything outstanding on the connection: nothing
		// else of it in flight may be delivered later.
		kept := false
		for _, o := range messages(states[cur-1]) {
			if o.Count == 1 && o.Client == client && o.Bookie == m.Bookie && o.key() != m.key() && deliveredAfter(states, cur-1, o.key()) >= 0 {
				kept = true
			}
		}
		if kept {
			continue
		}
		// The first request of the connection sent after it that the trace
		// delivers: what the stalled connection would hold back.
		sf := spentFence{fence: m, at: -1}
		for j := cur; j < len(states) && sf.at < 0; j++ {
			for _, d := range messages(states[j-1]) {
				if d.Client == client && d.Bookie == m.Bookie && isRequest(d.Type) && d.Count > 0 &&
					countOf(states[cur-1], d.key()) != 1 && countOf(states[j], d.key()) < d.Count {
					sf.behind, sf.at = d, j
					break
				}
			}
		}
		if sf.at >= 0 {
			out = append(out, sf)
		}
	}
	return out
}

// deliveredAfter is the first step after states[from] whose state has
// fewer copies of message key in flight than the state before it (-1 if
// none): where the trace delivers it.
func deliveredAfter(states []itfState, from int, key string) int {
	for j := from + 1; j < len(states); j++ {
		if before := countOf(states[j-1], key); before > 0 && countOf(states[j], key) < before {
			return j
		}
	}
	return -1
}

// receiveFenceResponse delivers a fence answer to its client, after
// failing by a close each fencing read the trace leaves undelivered behind
// a later request of its connection (spentFences).
func (r *run) receiveFenceResponse(ctx context.Context, s step) error {
	for _, sf := range spentFences(r.states, r.cur, s.client) {
		sf := sf
		if r.heldNow(func(f *wire.Frame) bool { return frameOf(sf.fence, f) }) == nil {
			continue // its connection closed already (a crash), or it was never sent
		}
		b := sf.fence.Bookie
		r.notes = append(r.notes, fmt.Sprintf("step %d: %s's fencing read to %s, never delivered in the trace, failed by closing %s's connection to %s "+
			"before the fence answer that ends its fencing phase (ReadLastConfirmedOp completes without it); %s to %s, delivered at step %d, went on a new connection",
			r.cur+1, s.client, b, s.client, b, requestText(sf.behind), b, sf.at+1))
		id := r.bookieID(b)
		r.px.CloseLinks(s.client, b)
		r.linkClosed[s.client+"/"+b] = r.cur
		if _, err := r.awaitEvent(ctx, fmt.Sprintf("fail its fencing read to %s when its connection closed", b), func(e Event) bool {
			return e.Ev == "read-failed" && e.Client == s.client && e.Bookie == id && e.Entry == -1
		}); err != nil {
			return err
		}
		// PerChannelBookieClient.channelInactive fails the outstanding
		// requests before it forgets the channel: the fence answer
		// delivered next ends the fencing phase, and the recovery read
		// Java then sends to the bookie could go to the closed channel
		// (StacklessClosedChannelException) and fail, the read moving on
		// to the next replica (seen once in five runs of bk-4701 on a
		// loaded machine). The clients settle first, every executor's
		// queue run, channelInactive's end included.
		if err := r.drv.call(ctx, nil, "settle"); err != nil {
			return err
		}
	}
	_, err := r.deliver(ctx, s.prev, s.next, "FenceResponseMessage")
	return err
}

// requestText names a request in BookKeeper's terms, for a note.
func requestText(m message) string {
	switch m.Type {
	case "ReadRequestMessage":
		return fmt.Sprintf("its read of entry %d", javaEntry(m.Entry))
	case "AddEntryRequestMessage":
		return fmt.Sprintf("its write of entry %d", javaEntry(m.Entry))
	}
	return m.String()
}
