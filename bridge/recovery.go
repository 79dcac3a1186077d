package bridge

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/bkcheck/bkcheck/bridge/wire"
)

// feeds says whether step a (from aPrev to aNext) sends a message that step
// b consumes.
func feeds(aPrev, aNext, bPrev, bNext itfState) bool {
	used := map[string]bool{}
	after := map[string]int{}
	for _, m := range messages(bNext) {
		after[m.key()] = m.Count
	}
	for _, m := range messages(bPrev) {
		if m.Count > 0 && after[m.key()] < m.Count {
			used[m.key()] = true
		}
	}
	for _, m := range sentAt(aPrev, aNext) {
		if used[m.key()] {
			return true
		}
	}
	return false
}

// waits says whether a step must wait for a read Java has not sent yet:
// a later replica's read (owed), which Java sends only once every replica
// before it in the write set has answered without deciding the entry.
func (r *run) waits(prev, next itfState) bool {
	if next.action() != "BookieSendsReadResponse" {
		return false
	}
	m := consumed(prev, next, "ReadRequestMessage")
	if m == nil || !r.owed[m.key()] || r.heldNow(func(f *wire.Frame) bool { return frameOf(*m, f) }) != nil {
		return false
	}
	if r.decided[m.Entry] {
		return true // never sent: settle skips the step
	}
	for _, b := range r.owedAfter[m.key()] {
		if !r.answered[m.Entry][b] {
			return true
		}
	}
	return false // Java sends it now: the step awaits its frame
}

// neverSent says whether the step handles a read Java's sequence read
// will not send: a later replica's read of an entry Java has decided
// (PendingReadOp: the entry read, or NoSuchEntry from Qw − Qa + 1
// replicas).
func (r *run) neverSent(prev, next itfState) bool {
	if next.action() != "BookieSendsReadResponse" {
		return false
	}
	m := consumed(prev, next, "ReadRequestMessage")
	return m != nil && r.owed[m.key()] && r.decided[m.Entry] && r.heldNow(func(f *wire.Frame) bool { return frameOf(*m, f) }) == nil
}

// consumesAny says whether the step consumes one of the messages keyed.
func consumesAny(prev, next itfState, keys map[string]bool) bool {
	after := map[string]int{}
	for _, m := range messages(next) {
		after[m.key()] = m.Count
	}
	for _, m := range messages(prev) {
		if m.Count > 0 && after[m.key()] < m.Count && keys[m.key()] {
			return true
		}
	}
	return false
}

// readAnswered counts a recovery read response delivered to Java's client
// toward its decision on the entry.
func (r *run) readAnswered(m *message) {
	r.answer(m.Entry, m.Bookie)
	if code, _ := m.Fields["code"].(string); code == "OK" {
		r.decided[m.Entry] = true
		return
	}
	r.misses[m.Entry]++
	if r.misses[m.Entry] >= toInt(r.params["write-quorum"])-toInt(r.params["ack-quorum"])+1 {
		r.decided[m.Entry] = true
	}
}

func (r *run) answer(entry int, bookie string) {
	if r.answered[entry] == nil {
		r.answered[entry] = map[string]bool{}
	}
	r.answered[entry][bookie] = true
}

// loseLater handles the requests the model lost that Java sends only
// later (a later replica of a sequence read): once every replica before
// one in the write set has answered without deciding the entry, Java sends
// it, so its frame is awaited, stalled and timed out (readSent), and the
// client moves on to the next replica; once the entry is decided, Java
// never sends it. Awaited, not polled: Java sends it on its own thread
// after the previous answer, and a step taken before it would race it.
func (r *run) loseLater(ctx context.Context) error {
	for progress := true; progress; {
		progress = false
		for _, k := range slices.Sorted(maps.Keys(r.lostLater)) {
			m := r.lostLater[k]
			if r.decided[m.Entry] {
				delete(r.lostLater, k)
				continue
			}
			if slices.ContainsFunc(r.owedAfter[k], func(b string) bool { return !r.answered[m.Entry][b] }) {
				continue
			}
			delete(r.lostLater, k)
			if err := r.readSent(ctx, m); err != nil {
				return err
			}
			progress = true
		}
	}
	return nil
}

// timeOutRead delivers the timeout of a lost read to Java's client
// (SteeredBookKeeper.timeOutRead, as the per-request timeout would), so
// that its sequence read moves on to the next replica.
func (r *run) timeOutRead(ctx context.Context, m message) error {
	var out struct {
		TimedOut bool `json:"timedOut"`
	}
	if err := r.drv.call(ctx, &out, "timeout-read", m.Client, r.bookieID(m.Bookie), r.ledger, javaEntry(m.Entry)); err != nil {
		return err
	}
	if !out.TimedOut {
		return diverged("no read to time out", "the lost "+m.String()+" times out", "no outstanding read of that entry from that bookie")
	}
	return nil
}

// recoveryReads maps the model's recovery reads of one entry, sent to
// every replica at once, onto Java's sequence read
// (enableParallelRecoveryRead=false: PendingReadOp's SequenceReadRequest),
// which asks the replicas one at a time in write-set order and the next
// only when the previous one failed or missed. The first replica the model
// does not lose is read now; later ones are owed (their steps wait until
// Java sends them). A lost read that Java sends now is stalled (lose) and
// timed out at once, so that the client moves on; a lost read Java would
// send later is lost when it does.
func (r *run) recoveryReads(ctx context.Context, prev, next itfState, client string) error {
	if r.sequenceReads() {
		return r.sequenceRead(ctx, prev, next, client, false)
	}
	byBookie := map[string]message{}
	entry := 0
	for _, m := range sentAt(prev, next) {
		if m.Type == "ReadRequestMessage" && m.Client == client {
			byBookie[m.Bookie] = m
			entry = m.Entry
		}
	}
	order, err := r.writeSet(ctx, entry)
	if err != nil {
		return err
	}
	first := true
	var before []string
	for _, b := range order {
		m, ok := byBookie[b]
		if !ok {
			continue
		}
		switch {
		case m.Count < 0 && (first || r.crashed[b]):
			if err := r.readSent(ctx, m); err != nil {
				return err
			}
		case m.Count < 0:
			r.lostLater[m.key()] = m
			r.owedAfter[m.key()] = append([]string(nil), before...)
		case first:
			if err := r.readSent(ctx, m); err != nil {
				return err
			}
			first = false
		default:
			r.owed[m.key()] = true
			r.owedAfter[m.key()] = append([]string(nil), before...)
		}
		before = append(before, b)
	}
	return nil
}

// writeSet is the bookies of the model's entry e in Java's order: the
// positions of the ensemble that holds it, starting at e mod E
// (RoundRobinDistributionSchedule), with the ensemble as the metadata
// lists it.
func (r *run) writeSet(ctx context.Context, e int) ([]string, error) {
	var o observation
	if err := r.drv.call(ctx, &o, "observe", r.ledger, 0); err != nil {
		return nil, err
	}
	var ens []string
	for _, f := range o.Meta.Ensembles {
		if f.First <= javaEntry(e) {
			ens = f.Bookies
		}
	}
	qw := toInt(r.params["write-quorum"])
	var out []string
	for i := 0; i < qw && len(ens) > 0; i++ {
		out = append(out, r.bookieName(ens[(int(javaEntry(e))+i)%len(ens)]))
	}
	return out, nil
}

// sequenceReads says whether the trace's model reads as Java does
// (--recovery-read sequence, every --bookkeeper model): one replica at a
// time, so each of the model's reads is one Java sends.
func (r *run) sequenceReads() bool {
	v, _ := r.params["recovery-read"].(string)
	return v == "sequence"
}

// sequenceRead drives the one read a step of the model's sequence read
// sends: the first replica's (ClientSendsRecoveryReadRequests) or the next
// one's (ClientSendsNextRecoveryRead, following). Java's SequenceReadRequest
// sends it by itself: the first once fencing has its quorum, the next when
// every replica asked before has failed or missed (sendNextRead), so the
// step awaits its frame. Where the model asks the next replica while an
// earlier one's read is still outstanding (the speculative timeout,
// firstSpeculativeReadTimeout), the harness fires the read's speculative
// request now, as BookKeeper's timer would (the driver's clients arm it and
// never fire it by the clock): Java must send that read.
func (r *run) sequenceRead(ctx context.Context, prev, next itfState, client string, following bool) error {
	var m *message
	for _, s := range sentAt(prev, next) {
		if s.Type == "ReadRequestMessage" && s.Client == client {
			s := s
			m = &s
		}
	}
	if m == nil {
		return diverged("the step sends no recovery read", "one recovery read of "+client, "none in the trace's state")
	}
	if following {
		order, err := r.writeSet(ctx, m.Entry)
		if err != nil {
			return err
		}
		for _, b := range order {
			if b == m.Bookie {
				break
			}
			if !r.answered[m.Entry][b] {
				return r.speculate(ctx, *m, b)
			}
		}
	}
	return r.readSent(ctx, *m)
}

// speculate fires the speculative request of client's sequence read of
// m's entry while waiting's read is outstanding: Java sends m now (or
// nothing, where a replica asked has answered: a divergence).
func (r *run) speculate(ctx context.Context, m message, waiting string) error {
	var out struct {
		Sent bool `json:"sent"`
	}
	if err := r.drv.call(ctx, &out, "speculate", m.Client, javaEntry(m.Entry)); err != nil {
		return err
	}
	if !out.Sent {
		return diverged("the speculative read sent nothing", fmt.Sprintf("%s asks %s for entry %d while %s's read is outstanding", m.Client, m.Bookie, m.Entry, waiting),
			"maybeSendSpeculativeRead sent no read")
	}
	r.notes = append(r.notes, fmt.Sprintf("%s's read of entry %d to %s sent by its speculative request, fired by the harness while %s's read was outstanding (speculativeReadTimeout's timer, armed and never fired by the clock)", m.Client, m.Entry, m.Bookie, waiting))
	return r.readSent(ctx, m)
}

// readSent handles a read Java sends now: its frame awaited, or, if the
// model lost it, stalled (lose) and timed out at once so that the client
// moves on (the connection stays open: a later frame of it is refused); a read of a crashed bookie fails at once in Java (its connection is
// refused): no frame, and the client moves on.
func (r *run) readSent(ctx context.Context, m message) error {
	switch {
	case m.Count < 0 && r.crashed[m.Bookie]:
		r.answer(m.Entry, m.Bookie)
	case m.Count < 0:
		f, err := r.awaitFrame(ctx, m.String(), func(f *wire.Frame) bool { return frameOf(m, f) })
		if err != nil {
			return err
		}
		r.lose(f)
		if err := r.timeOutRead(ctx, m); err != nil {
			return err
		}
		r.answer(m.Entry, m.Bookie)
	default:
		_, err := r.awaitFrame(ctx, m.String(), func(f *wire.Frame) bool { return frameOf(m, f) })
		return err
	}
	return nil
}

// startRecovery: a second client opens the ledger with recovery.
func (r *run) startRecovery(ctx context.Context, s step) error {
	if r.ledger < 0 {
		return notExecutable("recovery of a ledger BookKeeper has not created")
	}
	if err := r.drv.call(ctx, nil, "recover", s.client, r.ledger); err != nil {
		return err
	}
	if err := r.releaseMeta(ctx, s.client, "write"); err != nil {
		return err
	}
	return r.expectSent(ctx, s.prev, s.next)
}

func (r *run) sendRecoveryReads(ctx context.Context, s step) error {
	return r.recoveryReads(ctx, s.prev, s.next, s.client)
}

func (r *run) sendNextRecoveryRead(ctx context.Context, s step) error {
	return r.sequenceRead(ctx, s.prev, s.next, s.client, true)
}

// sendReadResponse delivers a recovery read to its bookie and checks the
// answer. A lost answer leaves Java's sequence read waiting on that
// replica: it times out at the client, and the read moves on.
func (r *run) sendReadResponse(ctx context.Context, s step) error {
	if err := r.respond(ctx, s.prev, s.next, "ReadRequestMessage", "ReadResponseMessage", func(rc int, m message) bool {
		code, _ := m.Fields["code"].(string)
		if code == "OK" {
			return rc == wire.EOK
		}
		return rc == wire.ENoEntry || rc == wire.ENoLedger
	}); err != nil {
		return err
	}
	for _, m := range sentAt(s.prev, s.next) {
		if m.Type == "ReadResponseMessage" && m.Count < 0 {
			if err := r.timeOutRead(ctx, m); err != nil {
				return err
			}
			r.answer(m.Entry, m.Bookie)
		}
	}
	return nil
}

// failRead is BookieFailsRead: the bookie's read of an entry it stores
// fails as a corrupt entry log's (a short read, armed in the bookie), and
// the answer must be the model's: NoSuchEntry where the model's release
// has #2908, an I/O error otherwise.
func (r *run) failRead(ctx context.Context, s step) error {
	var req *message
	for _, m := range messages(s.prev) {
		if m.Type == "ReadRequestMessage" && m.Bookie == s.bookie && m.Count > 0 {
			if after := countOf(s.next, m.key()); after < m.Count {
				m := m
				req = &m
			}
		}
	}
	if req == nil {
		return fmt.Errorf("the trace's BookieFailsRead consumes no read request of %s", s.bookie)
	}
	if err := r.cl.ShortRead(ctx, r.cl.Bookie(s.bookie), r.ledger, javaEntry(req.Entry)); err != nil {
		return diverged("the bookie's entry log could not be made to fail the read", "a corrupt read of entry "+fmt.Sprint(req.Entry), err.Error())
	}
	return r.respond(ctx, s.prev, s.next, "ReadRequestMessage", "ReadResponseMessage", func(rc int, m message) bool {
		if code, _ := m.Fields["code"].(string); code == "NoSuchEntry" {
			return rc == wire.ENoEntry
		}
		return rc == wire.EIO
	})
}

func (r *run) receiveRecoveryRead(ctx context.Context, s step) error {
	m, err := r.deliver(ctx, s.prev, s.next, "ReadResponseMessage")
	if err != nil {
		return err
	}
	r.readAnswered(m)
	return nil
}

func (r *run) recoveryCloses(ctx context.Context, s step) error {
	if err := r.releaseMeta(ctx, s.client, "write"); err != nil {
		return err
	}
	_, err := r.succeeded(ctx, s.client, "recovered", "complete its recovery")
	return err
}

// fencingFails is RecoveryClientFencingFails: Java's ReadLastConfirmedOp
// completes with an error once every fencing read answered or failed
// without coverage, and the recovery fails. The trace's lost fencing
// reads are stalled at the proxy (run.lose); the harness fails each by
// closing its connection (PerChannelBookieClient.channelInactive), as TCP
// loses a frame, unless a crash or an earlier close failed it already,
// then awaits the recovery's failure.
func (r *run) fencingFails(ctx context.Context, s step) error {
	for _, m := range messages(s.prev) {
		if m.Count != -1 || m.Client != s.client || m.Type != "FenceRequestMessage" && m.Type != "FenceResponseMessage" {
			continue
		}
		link := s.client + "/" + m.Bookie
		if _, closed := r.linkClosed[link]; closed || r.crashed[m.Bookie] {
			continue
		}
		r.px.CloseLinks(s.client, m.Bookie)
		r.linkClosed[link] = r.cur
	}
	return r.recoveryFails(ctx, s.client, "its fencing ends without coverage")
}

// recoveryFails awaits the client's recovery callback, which must fail,
// as the model's recovery does when (why).
func (r *run) recoveryFails(ctx context.Context, client, why string) error {
	e, err := r.outcome(ctx, client, "recovered", "fail its recovery when "+why)
	if err != nil {
		return err
	}
	if e.RC == 0 {
		return diverged(client+"'s recovery succeeded", client+"'s recovery fails when "+why, "the recovery completed")
	}
	return nil
}

// readFails is RecoveryClientReadFails: the read of the entry's last
// replica was lost in the model, and the harness timed it out at the
// client when it was sent or answered (readSent, sendReadResponse), so
// Java's sequence read has already found no replica left
// (SequenceReadRequest.sendNextRead) and failed the recovery; the step
// awaits that failure. A zombie read (the recovery failed before, at a
// write-back) ends with nothing to show.
func (r *run) readFails(ctx context.Context, s step) error {
	if s.prev.client(s.client)["status"] != "STATUS_IN_RECOVERY" {
		return nil
	}
	return r.recoveryFails(ctx, s.client, "its read fails at every replica")
}

// writeBackFenced is RecoveryClientReceivesAddFencedResponse: the EFENCED
// answer of a bookie that collected the ledger delivered to the recovery;
// where the model's recovery fails (the op had no Qa acks yet), Java's
// does (handleUnrecoverableErrorDuringAdd), which the step awaits.
func (r *run) writeBackFenced(ctx context.Context, s step) error {
	if _, err := r.deliver(ctx, s.prev, s.next, "AddEntryResponseMessage"); err != nil {
		return err
	}
	if s.next.client(s.client)["status"] != "RECOVERY_ABORTED" {
		return nil
	}
	return r.recoveryFails(ctx, s.client, "a write-back is refused EFENCED")
}
