package spec

// The Java client's add path (--add-path java): the writer as
// bookkeeper-server's client/PendingAddOp and client/LedgerHandle have it
// (apache/bookkeeper master 9590a97), instead of the TLA+ spec's record.
// docs/model.md gives each step with its source and what still differs.
//
//   - Each pending add is a PendingAddOp with its own copy of the
//     ensemble (Pending[i].Ensemble, .Layout) and its ackSet (Confirmed);
//     the op is "completed" when its ackSet has Qa acks.
//   - LedgerHandle.sendAddSuccessCallbacks acknowledges the head of the
//     pending queue only, in entry order, and never while changingEnsemble
//     is set (Change != ChangeNone).
//   - Ensembles are ordered (Params.Ordered), and everything the Java
//     client keys by ensemble index is keyed so here: each add request
//     carries the index it was sent for (the bookieIndex ctx), failures
//     are maps from index to bookie (Failures).
//   - PendingAddOp.writeComplete ignores a response unless the op's own
//     ensemble still has its bookie at the index the request carried; an
//     error for a completed op goes to notifyWriteFailed
//     (delayedWriteFailedBookies) and no ensemble change; any other error
//     but a fence starts handleBookieFailure. A lost request or reply
//     reaches its op as a timeout (ClientReceivesAddTimeout), in the
//     channel's order.
//   - handleBookieFailure / ensembleChangeLoop: the metadata update
//     (ClientUpdatesEnsembleMetadata, MetadataUpdateLoop with the new
//     fragment at LAC+1) and the completion on the ledger's ordered thread
//     (ClientCompletesEnsembleChange: delayed failures loop again; else
//     changingEnsemble = false and unsetSuccessAndSendWriteRequest op by
//     op in queue order) are separate steps.
//
// Every step runs on the ledger's ordered thread (OrderedExecutor keyed by
// ledger id: writeComplete callbacks and whenCompleteAsync alike), so each
// is atomic; the interleavings are those of the messages.

import (
	"slices"

	"github.com/bkcheck/bkcheck/internal/msgbag"
)

// Results a write can complete with (the rc of writeComplete).
type addResult uint8

const (
	addOK      addResult = iota // BKException.Code.OK
	addFenced                   // LedgerFencedException: handleUnrecoverableErrorDuringAdd
	addFailure                  // a timeout, EREADONLY, any other error: handleBookieFailure
)

// javaWriter emits the Java writer's actions for client cid.
func (g *gen) javaWriter(cid int) {
	if g.s.Clients[cid].Status != StatusOpen {
		return
	}
	g.ClientCreatesAddOp(cid)
	g.javaSendsAdd(cid)
	// ensembleChangeLoop's completion (whenCompleteAsync on the ledger's
	// ordered thread) is queued when the metadata write returns, or at
	// once when the loop wrote nothing: no add callback queued after it
	// runs before it. Adds can still be made (the application's thread).
	if g.s.Clients[cid].Change != ChangeCompleting {
		g.javaReceivesAddResponse(cid)
		g.ClientReceivesAddTimeout(cid)
	}
	g.ClientUpdatesEnsembleMetadata(cid)
	g.ClientCompletesEnsembleChange(cid)
}

// ClientCreatesAddOp (--create-window) is the application thread's
// LedgerHandle.asyncAddEntry before doAsyncAddEntry:
// PendingAddOp.create(this, clientCtx, getCurrentEnsemble(), ...) takes
// the handle's ensemble, and only then does the op get its entry id and
// join pendingAddOps (the synchronized block) and send (initiate). An
// ensemble change that completes in between re-sends the ops in the queue
// (unsetSuccessAndSendWriteRequest), not this one, so it keeps the
// ensemble it took: its writes go to a replaced bookie, and a failure
// there changes nothing (the loop finds the bookie already replaced) and
// re-sends nothing (diffEnsemble of the loop's ensemble with itself).
//
// The model takes the step only while an ensemble change's metadata
// update is pending (ChangeUpdating): the handle's ensemble changes only
// at that update (setLedgerMetadata), and nothing but the add itself
// reads the op the application thread holds, so a create at any other
// time commutes with every step up to the next update or to the add
// (ClientSendsAddEntryRequests, which without a created op creates and
// adds at once). The behaviours are Java's, up to the order of steps that
// commute.
func (g *gen) ClientCreatesAddOp(cid int) {
	c := &g.s.Clients[cid]
	if !g.m.has.createsAddOps || c.Created.Ensemble != 0 || c.Change != ChangeUpdating || !g.canAdd(c) {
		return
	}
	if _, ok := g.deferredAdd(cid); ok {
		return // the last add's initiate has not returned yet
	}
	cf, _ := c.CurrFragment()
	g.begin(cid).Created = CreatedAddOp{FragmentID: cf.ID, Ensemble: cf.Ensemble, Layout: cf.Layout}
	g.out(clientAction(ClientCreatesAddOp, cid))
}

// canAdd: the bounds of the model let the writer add another entry.
func (g *gen) canAdd(c *Client) bool {
	return int(c.LAP-c.LAC) <= g.p.Inflight-1 && int(c.LAP)+1 <= g.p.Entries
}

// javaSendsAdd is LedgerHandle.doAsyncAddEntry and PendingAddOp.initiate:
// the op takes the handle's current ensemble (or keeps the one it was
// created with, ClientCreatesAddOp), and before sending it hands delayed
// write failures to handleBookieFailure
// (maybeHandleDelayedWriteBookieFailure).
func (g *gen) javaSendsAdd(cid int) {
	c := &g.s.Clients[cid]
	if !g.canAdd(c) {
		return
	}
	if _, ok := g.deferredAdd(cid); ok {
		return // its initiate has not returned yet
	}
	e := Entry{ID: c.LAP + 1, Data: c.LAP + 1}
	cf, _ := c.CurrFragment()
	op := PendingAddOp{Entry: e, FragmentID: cf.ID, Ensemble: cf.Ensemble, Layout: cf.Layout}
	if cr := c.Created; cr.Ensemble != 0 {
		op.FragmentID, op.Ensemble, op.Layout = cr.FragmentID, cr.Ensemble, cr.Layout
	}
	a := clientAction(ClientSendsAddEntryRequests, cid)
	a.Entry = e.ID
	if g.noopLoopAtInitiate(c, cf) {
		// initiate: maybeHandleDelayedWriteBookieFailure starts a loop
		// that will write nothing, and the op's writes go out after its
		// completion is queued (deferredKeys).
		nc := g.begin(cid)
		nc.LAP = e.ID
		nc.Created = CreatedAddOp{}
		nc.addPending(op)
		f := nc.DelayedFailed
		nc.DelayedFailed = 0
		g.handleBookieFailure(nc, f)
		g.out(a)
		return
	}
	g.sendToBookies(a, g.p.OpWriteSet(op), func(b int) MsgKey { return g.javaAddRequest(cid, b, op.Layout, e, c.LAC) }, func() {
		nc := g.begin(cid)
		nc.LAP = e.ID
		nc.Created = CreatedAddOp{}
		nc.addPending(op)
		if f := nc.DelayedFailed; f != 0 {
			nc.DelayedFailed = 0
			g.handleBookieFailure(nc, f)
		}
	})
}

// noopLoopAtInitiate: an add made now hands delayed failures to
// handleBookieFailure, which starts an ensemble change whose
// MetadataUpdateLoop will write nothing (no failure is still at its
// index). In Java the loop's predicate runs in run(), in initiate's
// thread, and the completion is queued before initiate sends the op's
// writes; the model takes the loop's start with the add
// (ClientSendsAddEntryRequests, nothing sent), its predicate and the
// completion's queueing in ClientUpdatesEnsembleMetadata, and the writes
// then. Between the two, callbacks of writes already out may run while
// changingEnsemble is set: the window of #4261, which PR #4278's test
// widens with a sleep in the predicate.
func (g *gen) noopLoopAtInitiate(c *Client, cf Fragment) bool {
	f := c.DelayedFailed
	if f == 0 || c.Change != ChangeNone || int(c.Changes) >= g.p.MaxEnsembleChanges {
		return false
	}
	return f.Matching(cf.Layout) == 0 && !g.m.V.SkipChangeWithoutFailed
}

// deferredKeys are the writes of the add whose initiate started a loop
// that wrote nothing (noopLoopAtInitiate), if they are not out yet: to the
// op's ensemble, with the LAC it was packed with (changingEnsemble has
// held the LAC since). Java sends them right after the loop's completion
// is queued; the model sends them with the completion
// (ClientCompletesEnsembleChange), which no callback of theirs can
// precede, and a bookie's steps on them commute with it.
func (g *gen) deferredKeys(cid int) []MsgKey {
	op, ok := g.deferredAdd(cid)
	if !ok {
		return nil
	}
	var keys []MsgKey
	for b := 0; b < g.p.Bookies; b++ {
		if g.p.OpWriteSet(op).Has(b) {
			keys = append(keys, g.javaAddRequest(cid, b, op.Layout, op.Entry, g.s.Clients[cid].LAC))
		}
	}
	return keys
}

// deferredAdd is client cid's last pending op if none of its writes was
// ever sent (noopLoopAtInitiate deferred them).
func (g *gen) deferredAdd(cid int) (PendingAddOp, bool) {
	c := &g.s.Clients[cid]
	if c.NumPending == 0 {
		return PendingAddOp{}, false
	}
	op := c.Pending[c.NumPending-1]
	for _, m := range g.s.Msgs {
		if k := m.Key; k.Type() == AddEntryRequest && isWriterAdd(k, cid) && k.Entry().ID == op.Entry.ID {
			return PendingAddOp{}, false
		}
	}
	return op, true
}

// javaAddRequest is PendingAddOp.sendWriteRequest(ensemble, bookieIndex):
// the writer's add of e to bookie b, for b's index in ensemble lay.
func (g *gen) javaAddRequest(cid, b int, lay Layout, e Entry, lac int8) MsgKey {
	return MsgFields{Type: AddEntryRequest, Bookie: b, Cid: cid, Entry: e, LAC: lac, Index: lay.Index(b, g.p.Ensemble)}.Key()
}

// javaReceivesAddResponse delivers the writer's add responses to their
// ops: success (ClientReceivesAddConfirmedResponse), fenced
// (ClientReceivesAddFencedResponse) and read-only
// (ClientReceivesAddErrorResponse), each through writeComplete.
func (g *gen) javaReceivesAddResponse(cid int) {
	for _, m := range g.s.Msgs {
		if !g.receivableAddResponse(m, cid) {
			continue
		}
		k := m.Key
		f := k.Fields()
		if f.Recovery {
			continue
		}
		kind, rc := ClientReceivesAddConfirmedResponse, addOK
		switch {
		case f.Success:
		case f.Code == CodeReadOnly:
			kind, rc = ClientReceivesAddErrorResponse, addFailure
		default:
			kind, rc = ClientReceivesAddFencedResponse, addFenced
		}
		nc := g.begin(cid)
		g.writeComplete(nc, f.Entry.ID, f.Bookie, f.Index, rc)
		g.processed(msgAction(kind, k), k)
	}
}

// ClientReceivesAddTimeout: a lost add request or reply of the writer
// reaches its op as an error, through writeComplete: the per-request
// timeout of PerChannelBookieClient (addEntryTimeoutSec), or a fast
// failure ("Bookie handle was not available": a closed channel errors its
// outstanding requests, errorOutOutstandingEntries, and a request to a
// bookie the client cannot connect to fails at once).
//
// BookKeeper fails a write by the clock (BookieClientImpl's one monitor
// times out every unanswered request older than addEntryTimeout, on every
// connection) or by its connection closing (channelInactive fails
// everything outstanding on it). Either way no older request of the same
// connection is answered after it: a lost message's failure waits until
// no add of an older entry (the channel's order, as IsEarliestMsg
// delivers) to or from that bookie is still deliverable. That is the
// union of the two: where an older write to another bookie is answered
// later, only a close produces the order, and the harness takes it so
// (bridge/clock.go). Lost ones fail in any order: one check times its
// requests out in the hash order of completionObjects (removeIf), and a
// fast failure of a newer request can come before an older request's
// timeout (#4261's log: "Bookie handle was not available" for the later
// entries, then "Bookie operation timeout").
func (g *gen) ClientReceivesAddTimeout(cid int) {
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count != -1 || !isWriterAdd(k, cid) || g.olderAddInFlight(k) {
			continue
		}
		nc := g.begin(cid)
		g.n.setCount(k, 0)
		g.writeComplete(nc, k.Entry().ID, k.Bookie(), k.Index(), addFailure)
		g.out(msgAction(ClientReceivesAddTimeout, k))
	}
}

// isWriterAdd: k is an add request or response of client cid's writer
// (not a recovery add).
func isWriterAdd(k MsgKey, cid int) bool { return isAdd(k, cid, false) }

// isAdd: k is an add request or response of client cid, a write-back
// (rec) or the writer's.
func isAdd(k MsgKey, cid int, rec bool) bool {
	t := k.Type()
	return k.Cid() == cid && k.Recovery() == rec && (t == AddEntryRequest || t == AddEntryResponse)
}

// olderAddInFlight: an add of an older entry is still deliverable on
// message k's channel (its client and bookie, either direction), of the
// same handle (the writer's, or the recovery's write-backs).
func (g *gen) olderAddInFlight(k MsgKey) bool {
	for _, m := range g.s.Msgs {
		o := m.Key
		if m.Count >= 1 && isAdd(o, k.Cid(), k.Recovery()) && o.Bookie() == k.Bookie() && o.Entry().ID < k.Entry().ID {
			return true
		}
	}
	return false
}

// opEnsemble is the ensemble of the writer's op for entry id as the op
// has it now (PendingAddOp.ensemble), and whether the op is still in the
// pending queue (i its index) or acknowledged; ok is false if there is no
// op.
func (g *gen) opEnsemble(c *Client, id int8) (lay Layout, i int, ok bool) {
	for j, op := range c.PendingList() {
		if op.Entry.ID == id {
			return op.Layout, j, true
		}
	}
	if id >= 1 && c.DoneEns[id-1] != 0 {
		return c.DoneLay[id-1], -1, true
	}
	return 0, -1, false
}

// writeComplete is PendingAddOp.writeComplete for entry id's op and a
// result from bookie b for ensemble index idx, applied to nc.
func (g *gen) writeComplete(nc *Client, id int8, b, idx int, rc addResult) {
	lay, i, ok := g.opEnsemble(nc, id)
	if !ok || lay.At(idx) != b {
		// "if (!ensemble.get(bookieIndex).equals(addr))": "ensemble has
		// already changed, failure of this addr is immaterial"
		return
	}
	if rc == addOK {
		// "must record all acks, even if complete": an acknowledged op
		// no longer matters, so its acks are not kept.
		if i >= 0 {
			nc.Confirmed[id-1] |= 1 << uint(b)
		}
		if i < 0 || nc.Confirmed[id-1].Len() >= g.p.AckQuorum {
			g.sendAddSuccessCallbacks(nc)
		}
		return
	}
	if i < 0 || nc.Confirmed[id-1].Len() >= g.p.AckQuorum {
		// completed: notifyWriteFailed(bookieIndex, addr), then
		// sendAddSuccessCallbacks.
		nc.DelayedFailed = nc.DelayedFailed.Put(idx, b)
		g.sendAddSuccessCallbacks(nc)
		return
	}
	if rc == addFenced {
		g.unrecoverable(nc, false)
		return
	}
	g.handleBookieFailure(nc, Failures(0).Put(idx, b))
}

// unrecoverable is LedgerHandle.handleUnrecoverableErrorDuringAdd: the
// pending adds fail. With LedgerHandle's close (--close-rereads) the
// handle then closes the ledger itself (asyncCloseInternal, the same
// close as the application's: ClientClosesLedgerSuccess or
// ClientClosesLedgerFail is its metadata write), unless its own copy of
// the metadata is IN_RECOVERY (localInRecovery: "we should not close
// ledger if ledger is recovery mode"), when it only fails the adds and
// gives the ledger up. Without --close-rereads the writer gives up the
// ledger, as the spec's writer does when it learns it was fenced.
func (g *gen) unrecoverable(nc *Client, localInRecovery bool) {
	if g.p.CloseRereads && !localInRecovery {
		nc.Status = StatusClosing
		return
	}
	nc.Status = ClientWithdrawn
}

// sendAddSuccessCallbacks is LedgerHandle.sendAddSuccessCallbacks: from
// the head of the queue, while no ensemble change is under way, each
// completed op that is the next in sequence is acknowledged (LAC) and
// leaves the queue, keeping its ensemble.
func (g *gen) sendAddSuccessCallbacks(nc *Client) {
	for nc.NumPending > 0 && nc.Change == ChangeNone {
		op := nc.Pending[0]
		id := op.Entry.ID
		if nc.Confirmed[id-1].Len() < g.p.AckQuorum || id != nc.LAC+1 {
			return
		}
		nc.removePendingAt(0)
		nc.LAC = id
		nc.DoneEns[id-1], nc.DoneLay[id-1] = op.Ensemble, op.Layout
	}
}

// handleBookieFailure is LedgerHandle.handleBookieFailure: during a change
// the failures wait in delayedWriteFailedBookies (putAll: a later failure
// at an index overwrites an earlier one); otherwise a change starts
// (changingEnsemble = true) for the delayed ones and then these (toReplace
// = delayed, putAll(failed)), from the current ensemble.
func (g *gen) handleBookieFailure(nc *Client, failed Failures) {
	if nc.Change != ChangeNone {
		nc.DelayedFailed = nc.DelayedFailed.PutAll(failed)
		return
	}
	cf, _ := nc.CurrFragment()
	toReplace := nc.DelayedFailed.PutAll(failed)
	nc.DelayedFailed = 0
	if g.m.V.SkipChangeWithoutFailed && toReplace.Matching(cf.Layout) == 0 {
		// PR #4278: "if (!triggerLoop) { ... changingEnsemble = false; }"
		// when no (index, bookie) of toReplace is in origEnsemble: the
		// whole map is dropped.
		return
	}
	nc.ChangeFailed = toReplace
	nc.ChangeOrig, nc.ChangeOrigLay = cf.Ensemble, cf.Layout
	g.ensembleChangeLoop(nc)
}

// ensembleChangeLoop counts the loop (numEnsembleChanges); beyond
// maxNumEnsembleChanges the handle fails (handleUnrecoverableErrorDuringAdd).
// Otherwise the MetadataUpdateLoop runs (ChangeUpdating) until
// ClientUpdatesEnsembleMetadata.
func (g *gen) ensembleChangeLoop(nc *Client) {
	nc.Change = ChangeUpdating
	nc.Changes++
	if int(nc.Changes) > g.p.MaxEnsembleChanges {
		nc.Changes--
		g.unrecoverable(nc, false)
	}
}

// ClientUpdatesEnsembleMetadata is ensembleChangeLoop's MetadataUpdateLoop.
// Its predicate runs on the handle's own metadata (MetadataUpdateLoop.
// writeLoop starts from getVersionedLedgerMetadata): the ledger OPEN and
// some failure still at its index in the last ensemble
// ("getLastEnsembleValue(metadata).get(e.getKey()).equals(e.getValue())").
// If none is, the loop completes without writing, even when the store has
// moved on; the window before it (the loop's start to its completion's
// queueing) is the one #4261 needs. Otherwise the failures still at
// their index are replaced (EnsembleUtils.replaceBookiesInEnsemble skips the
// others: "Not changing failed bookie at index, already changed"; no
// replacement is any failed bookie) in a fragment starting at LAC+1
// (replacing the last fragment if it starts there), and the metadata is
// written with a compare-and-set; the handle takes the new metadata at
// once (setLedgerMetadata), so adds sent from now on use the new
// ensemble. A version conflict re-reads the store, finds the ledger
// IN_RECOVERY or CLOSED (recovery is the only other writer of metadata),
// so the predicate fails and the completion fails the handle
// (LedgerFencedException / LedgerClosedException); no bookie to replace
// with fails it too (handleUnrecoverableErrorDuringAdd).
func (g *gen) ClientUpdatesEnsembleMetadata(cid int) {
	c := &g.s.Clients[cid]
	if c.Change != ChangeUpdating {
		return
	}
	a := clientAction(ClientUpdatesEnsembleMetadata, cid)
	cf, _ := c.CurrFragment()
	failed := c.ChangeFailed.Matching(cf.Layout)
	if failed == 0 {
		g.begin(cid).Change = ChangeCompleting
		g.out(a)
		return
	}
	if g.s.MetaStatus != StatusOpen || c.MetaVersion != g.s.MetaVersion {
		// The loop's re-read set the handle's metadata to the store's.
		g.unrecoverable(g.begin(cid), g.s.MetaStatus == StatusInRecovery)
		g.out(a)
		return
	}
	exclude := c.ChangeFailed.Bookies()
	try := func(sub Bookies) bool {
		return g.replaceFailed(cf, sub, exclude, func(ens Bookies, lay Layout) bool {
			nc := g.begin(cid)
			g.installFragment(nc, cf, c.LAC+1, ens, lay, true)
			nc.Change = ChangeCompleting
			a.Lost = sub
			g.out(a)
			return true
		})
	}
	if !g.replaceWhatCan(cf, failed, try) {
		// BKNotEnoughBookiesException fails the MetadataUpdateLoop.
		g.unrecoverable(g.begin(cid), false)
		a.Lost = 0
		g.out(a)
	}
}

// ClientCompletesEnsembleChange is ensembleChangeLoop's completion on the
// ledger's ordered thread: failures delayed meanwhile start the loop
// again (from the same original ensemble); otherwise changingEnsemble is
// cleared and unsetSuccessAndSendWriteRequest runs over the pending queue
// for the positions that differ from the original ensemble.
func (g *gen) ClientCompletesEnsembleChange(cid int) {
	c := &g.s.Clients[cid]
	if c.Change != ChangeCompleting {
		return
	}
	a := clientAction(ClientCompletesEnsembleChange, cid)
	deferred := g.deferredKeys(cid)
	if c.DelayedFailed != 0 {
		nc := g.begin(cid)
		nc.ChangeFailed, nc.DelayedFailed = nc.DelayedFailed, 0
		g.ensembleChangeLoop(nc)
		g.sendKeys(a, deferred)
		return
	}
	nc := g.begin(cid)
	cf, _ := nc.CurrFragment()
	origLay := nc.ChangeOrigLay
	nc.Change, nc.ChangeFailed, nc.ChangeOrig, nc.ChangeOrigLay = ChangeNone, 0, 0, 0
	keys := append(deferred, g.unset(cid, nc, cf, origLay)...)
	if g.m.V.CallbacksAfterUnset {
		g.sendAddSuccessCallbacks(nc)
	}
	g.sendKeys(a, keys)
}

// unset is the unset loop, index by index as
// LedgerHandle.unsetSuccessAndSendWriteRequest iterates the replaced
// indexes (EnsembleUtils.diffEnsemble(origEnsemble, newEnsemble)): for
// each op of pendingAddOps (a ConcurrentLinkedQueue, whose iterator has
// already fetched the op after the current one: an op acknowledged inside
// the loop is still visited if it was that one), for each replaced index
// in increasing order (a HashSet<Integer>; Params.IndexPosition),
// PendingAddOp.unsetSuccessAndSendWriteRequest: take the new ensemble; if
// the op's write set lacks the position, call sendAddSuccessCallbacks
// (unless the variant defers it); else, if the op is not yet
// acknowledged, drop the ack from that position and re-send.
func (g *gen) unset(cid int, nc *Client, cf Fragment, origLay Layout) []MsgKey {
	var replaced []int // in index order: diffEnsemble's HashSet<Integer>
	for i := 0; i < g.p.Ensemble; i++ {
		if pos := g.p.IndexPosition(i); origLay.At(pos) != cf.Layout.At(pos) {
			replaced = append(replaced, pos)
		}
	}
	if len(replaced) == 0 || nc.NumPending == 0 {
		return nil
	}
	var keys []MsgKey
	cur := nc.Pending[0].Entry.ID
	for cur != 0 {
		var next int8
		for _, op := range nc.PendingList() {
			if op.Entry.ID > cur {
				next = op.Entry.ID
				break
			}
		}
		_, i, _ := g.opEnsemble(nc, cur)
		var before Layout
		if i >= 0 {
			before = nc.Pending[i].Layout
		}
		for _, pos := range replaced {
			_, i, _ := g.opEnsemble(nc, cur)
			if i >= 0 {
				nc.Pending[i].Ensemble, nc.Pending[i].Layout, nc.Pending[i].FragmentID = cf.Ensemble, cf.Layout, cf.ID
			} else {
				nc.DoneEns[cur-1], nc.DoneLay[cur-1] = cf.Ensemble, cf.Layout
			}
			if !g.p.hasEntry(cur, pos) {
				if !g.m.V.CallbacksAfterUnset {
					g.sendAddSuccessCallbacks(nc)
				}
				continue
			}
			if i < 0 {
				continue // callbackTriggered
			}
			nc.Confirmed[cur-1] &^= 1 << uint(before.At(pos))
			keys = append(keys, g.javaAddRequest(cid, cf.Layout.At(pos), cf.Layout, nc.Pending[i].Entry, g.opLAC(cid, cur)))
		}
		cur = next
	}
	return keys
}

// hasEntry is RoundRobinDistributionSchedule.hasEntry: whether ensemble
// position pos is in entry id's write set.
func (p Params) hasEntry(id int8, pos int) bool {
	return (pos-int(id)%p.Ensemble+p.Ensemble)%p.Ensemble < p.WriteQuorum
}

// opLAC is the LAC that entry id's op sent with it: PendingAddOp.initiate
// packs the entry once (toSend) and a re-send repeats those bytes.
func (g *gen) opLAC(cid int, id int8) int8 {
	for _, m := range g.s.Msgs {
		k := m.Key
		if k.Type() == AddEntryRequest && k.Cid() == cid && !k.Recovery() && k.Entry().ID == id {
			return k.Fields().LAC
		}
	}
	panic("spec: a pending op was never sent")
}

// sendKeys completes a successor in which the add requests keys are sent
// (re-sent, for one sent before: a copy still unanswered is a second copy,
// copies), one successor per loss pattern; a request to a down bookie is
// lost.
// A key twice in keys (the deferred send of an op created before the
// change and the unset loop's re-send of it to the same index) is two
// frames: one key with a copy more.
func (g *gen) sendKeys(a Action, keys []MsgKey) {
	var cnt []int8
	uniq := keys[:0:0]
	for _, k := range keys {
		if i := slices.Index(uniq, k); i >= 0 {
			cnt[i] = min(cnt[i]+1, msgbag.MaxCopies)
			continue
		}
		uniq, cnt = append(uniq, k), append(cnt, g.copies(k))
		if !g.n.Sent(k) {
			g.n.insert(k, 1)
		}
	}
	keys = uniq
	var free, forced uint64
	for i, k := range keys {
		switch {
		case g.s.BDown.Has(k.Bookie()):
			forced |= 1 << uint(i)
		case !g.p.ReliableNetwork:
			free |= 1 << uint(i)
		}
	}
	for sub := uint64(0); ; sub = (sub - free) & free {
		lost := sub | forced
		a.Lost = 0
		for i, k := range keys {
			c := cnt[i]
			if lost&(1<<uint(i)) != 0 {
				c = -1
				a.Lost |= 1 << uint(k.Bookie())
			}
			g.n.setCount(k, c)
		}
		g.out(a)
		if sub == free {
			break
		}
	}
}

// RecoveryClientReceivesAddTimeout (--add-path java): a lost write-back
// request or reply reaches the recovery's op, in the channel's order, as
// a writer's does (ClientReceivesAddTimeout). The recovery's handle is a
// ReadOnlyLedgerHandle, whose PendingAddOps are the writer's:
// PendingAddOp.writeComplete sends an error for an op not yet completed
// to handleBookieFailure, which ReadOnlyLedgerHandle overrides: with no
// spare EnsembleUtils.replaceBookiesInEnsemble finds no bookie
// (BKNotEnoughBookiesException), handleUnrecoverableErrorDuringAdd is
// errorOutPendingAdds, and the op's callback, LedgerRecoveryOp.addComplete,
// fails the recovery (submitCallback: RECOVERY_ABORTED); with a spare the
// TLA+ spec's RecoveryClientChangesEnsemble takes the failure, as before
// (changeTimeout). An error for a completed op goes to notifyWriteFailed
// (delayedWriteFailedBookies), spare or not, handled at the next
// write-back (ClientWritesBackEntry), and by nothing if none follows.
func (g *gen) RecoveryClientReceivesAddTimeout(cid int) {
	c := &g.s.Clients[cid]
	if c.Status != StatusInRecovery || !g.m.has.javaAddPath {
		return
	}
	cf, _ := c.CurrFragment()
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count != -1 || !isRecoveryAdd(k, cid) || g.olderAddInFlight(k) {
			continue
		}
		completed := opCompleted(g.p, c, k.Entry().ID)
		if g.m.has.spare && !completed {
			continue // handleBookieFailure at once: RecoveryClientChangesEnsemble
		}
		nc := g.begin(cid)
		g.n.setCount(k, 0)
		if completed {
			if i := cf.Layout.Index(k.Bookie(), g.p.Ensemble); i >= 0 {
				nc.DelayedFailed = nc.DelayedFailed.Put(i, k.Bookie())
			}
		} else {
			g.abortRecovery(nc)
		}
		g.out(msgAction(RecoveryClientReceivesAddTimeout, k))
	}
}

// opCompleted: client c's op of entry id (a recovery's: its write-back) has its Qa acks
// (PendingAddOp.completed), or is no longer pending.
func opCompleted(p Params, c *Client, id int8) bool {
	for _, op := range c.PendingList() {
		if op.Entry.ID == id {
			return c.Confirmed[id-1].Len() >= p.AckQuorum
		}
	}
	return true
}

// abortRecovery is a recovery failing at a write-back
// (LedgerRecoveryOp.submitCallback with an error): the handle starts no
// read and no write-back more. A sequence read in flight goes on
// (RecoveryReadOp asks the next replica after a NoSuchEntry or an error,
// each read with the fence flag) until it completes, and its result is
// dropped (onEntryComplete: "if (!promise.isDone() ..."): the zombie
// read, which ClientSendsNextRecoveryRead and
// ClientReceivesRecoveryReadResponse take for an aborted client.
func (g *gen) abortRecovery(nc *Client) {
	nc.Status = RecoveryAborted
	nc.DelayedFailed = 0
	if !g.m.has.sequenceReads || nc.CurrReadEntry == Nil {
		endRead(nc)
	}
}

// endRead clears what a recovery's read of one entry keeps.
func endRead(nc *Client) {
	nc.CurrReadEntry, nc.ReadNext = Nil, 0
	nc.clearResponses()
	nc.RecoveryEns, nc.RecoveryLay = 0, 0
}

// zombieRead: c's recovery failed at a write-back while a sequence read
// was in flight, which goes on (abortRecovery).
func zombieRead(c *Client) bool {
	return c.Status == RecoveryAborted && c.CurrReadEntry != Nil
}

// isRecoveryAdd: k is a write-back (a recovery add request or response)
// of client cid.
func isRecoveryAdd(k MsgKey, cid int) bool { return isAdd(k, cid, true) }

// writeBackAfterDelayedFailure is a write-back's PendingAddOp.initiate
// (--add-path java, a spare) while a completed write-back's failure waits
// in delayedWriteFailedBookies: maybeHandleDelayedWriteBookieFailure hands
// it to ReadOnlyLedgerHandle.handleBookieFailure (release-4.18.0), which
// replaces the failed bookies still at their index in the handle's
// ensemble (EnsembleUtils.replaceBookiesInEnsemble, keeping the
// replacements it found) in a new ensemble from LAC+1, in memory only
// (newEnsemblesFromRecovery), and unsets and re-sends the pending ops'
// writes to the replaced indexes (RecoveryClientSendsPendingAddOp takes
// the older ops' re-sends, as after RecoveryClientChangesEnsemble); then
// the op sends its writes to the new ensemble. No bookie to replace with
// fails the recovery (handleUnrecoverableErrorDuringAdd), and the op,
// failed with the others, sends nothing. Failures no longer at their
// index (already replaced) change nothing.
func (g *gen) writeBackAfterDelayedFailure(a Action, cid int, op PendingAddOp) {
	c := &g.s.Clients[cid]
	cf, _ := c.CurrFragment()
	failed := c.DelayedFailed.Matching(cf.Layout)
	send := func(f Fragment, change func(nc *Client)) {
		g.sendToBookies(a, g.p.WriteSet(op.Entry.ID, f), func(b int) MsgKey { return addRequest(cid, b, op.Entry, c.LAC, c.LAFR, true) }, func() {
			nc := g.begin(cid)
			nc.DelayedFailed = 0
			change(nc)
		})
	}
	if failed == 0 {
		send(cf, func(*Client) {})
		return
	}
	if int(c.Changes) >= g.p.MaxEnsembleChanges {
		return // recoveryChanges
	}
	exclude := c.DelayedFailed.Bookies()
	try := func(sub Bookies) bool {
		return g.replaceFailed(cf, sub, exclude, func(ens Bookies, lay Layout) bool {
			send(Fragment{ID: cf.ID, Ensemble: ens, First: c.LAC + 1, Layout: lay}, func(nc *Client) {
				g.replaced(nc, cid, cf, c.LAC+1, ens, lay, sub, true)
			})
			return true
		})
	}
	if g.replaceWhatCan(cf, failed, try) {
		return
	}
	g.abortRecovery(g.begin(cid))
	a.Lost = 0
	g.out(a)
}
