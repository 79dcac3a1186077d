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
//   - PendingAddOp.writeComplete ignores a response from an address the
//     op's own ensemble no longer names; an error for a completed op goes
//     to notifyWriteFailed (delayedWriteFailedBookies) and no ensemble
//     change; any other error but a fence starts handleBookieFailure.
//     A lost request or reply reaches its op as a timeout
//     (ClientReceivesAddTimeout).
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
	g.javaSendsAdd(cid)
	g.javaReceivesAddResponse(cid)
	g.ClientReceivesAddTimeout(cid)
	g.ClientUpdatesEnsembleMetadata(cid)
	g.ClientCompletesEnsembleChange(cid)
}

// javaSendsAdd is LedgerHandle.doAsyncAddEntry and PendingAddOp.initiate:
// the op takes the handle's current ensemble, and before sending it hands
// delayed write failures to handleBookieFailure
// (maybeHandleDelayedWriteBookieFailure).
func (g *gen) javaSendsAdd(cid int) {
	c := &g.s.Clients[cid]
	if int(c.LAP-c.LAC) > g.p.Inflight-1 || int(c.LAP)+1 > g.p.Entries {
		return
	}
	e := Entry{ID: c.LAP + 1, Data: c.LAP + 1}
	cf, _ := c.CurrFragment()
	a := clientAction(ClientSendsAddEntryRequests, cid)
	a.Entry = e.ID
	g.sendToBookies(a, g.p.WriteSet(e.ID, cf), func(b int) MsgKey { return addRequest(cid, b, e, c.LAC, 0, false) }, func() {
		nc := g.begin(cid)
		nc.LAP = e.ID
		nc.addPending(PendingAddOp{Entry: e, FragmentID: cf.ID, Ensemble: cf.Ensemble, Layout: cf.Layout})
		if f := nc.DelayedFailed; f != 0 {
			nc.DelayedFailed = 0
			g.handleBookieFailure(nc, f)
		}
	})
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
		g.writeComplete(nc, f.Entry.ID, f.Bookie, rc)
		g.processed(msgAction(kind, k), k)
	}
}

// ClientReceivesAddTimeout: a lost add request or reply of the writer
// reaches its op as an error (the per-request timeout of
// PerChannelBookieClient, addEntryTimeoutSec), through writeComplete.
func (g *gen) ClientReceivesAddTimeout(cid int) {
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count != -1 || k.Cid() != cid || k.Recovery() {
			continue
		}
		if t := k.Type(); t != AddEntryRequest && t != AddEntryResponse {
			continue
		}
		nc := g.begin(cid)
		g.n.setCount(k, 0)
		g.writeComplete(nc, k.Entry().ID, k.Bookie(), addFailure)
		g.out(msgAction(ClientReceivesAddTimeout, k))
	}
}

// opWriteSet is the write set of the writer's op for entry id as the op's
// own ensemble has it now, and whether the op is still in the pending
// queue (i its index) or acknowledged; ok is false if there is no op.
func (g *gen) opWriteSet(c *Client, id int8) (ws Bookies, i int, ok bool) {
	for j, op := range c.PendingList() {
		if op.Entry.ID == id {
			return g.p.OpWriteSet(op), j, true
		}
	}
	if id >= 1 && c.DoneEns[id-1] != 0 {
		return g.p.writeSet(id, c.DoneEns[id-1], c.DoneLay[id-1]), -1, true
	}
	return 0, -1, false
}

// writeComplete is PendingAddOp.writeComplete for entry id's op and a
// result from bookie b, applied to nc.
func (g *gen) writeComplete(nc *Client, id int8, b int, rc addResult) {
	ws, i, ok := g.opWriteSet(nc, id)
	if !ok || !ws.Has(b) {
		// "ensemble has already changed, failure of this addr is immaterial"
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
		// completed: notifyWriteFailed, then sendAddSuccessCallbacks.
		nc.DelayedFailed |= 1 << uint(b)
		g.sendAddSuccessCallbacks(nc)
		return
	}
	if rc == addFenced {
		g.unrecoverable(nc)
		return
	}
	g.handleBookieFailure(nc, 1<<uint(b))
}

// unrecoverable is handleUnrecoverableErrorDuringAdd: the pending adds
// fail and the writer gives up the ledger (as the spec's writer does when
// it learns it was fenced).
func (g *gen) unrecoverable(nc *Client) {
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
// the failures wait in delayedWriteFailedBookies; otherwise a change
// starts (changingEnsemble = true) for them and the delayed ones, from the
// current ensemble.
func (g *gen) handleBookieFailure(nc *Client, failed Bookies) {
	if nc.Change != ChangeNone {
		nc.DelayedFailed |= failed
		return
	}
	cf, _ := nc.CurrFragment()
	if g.m.V.SkipChangeWithoutFailed && failed&cf.Ensemble == 0 {
		return
	}
	nc.Change = ChangeUpdating
	nc.ChangeFailed = nc.DelayedFailed | failed
	nc.DelayedFailed = 0
	nc.ChangeOrig, nc.ChangeOrigLay = cf.Ensemble, cf.Layout
	g.ensembleChangeLoop(nc)
}

// ensembleChangeLoop counts the loop (numEnsembleChanges); beyond
// maxNumEnsembleChanges the handle fails (handleUnrecoverableErrorDuringAdd).
func (g *gen) ensembleChangeLoop(nc *Client) {
	nc.Changes++
	if int(nc.Changes) > g.p.MaxEnsembleChanges {
		nc.Changes--
		g.unrecoverable(nc)
	}
}

// ClientUpdatesEnsembleMetadata is the MetadataUpdateLoop of
// ensembleChangeLoop: if the ledger is still OPEN and a failed bookie is
// still in its last ensemble, the failed bookies are replaced
// (EnsembleUtils.replaceBookiesInEnsemble) in a fragment starting at
// LAC+1 (replacing the last fragment if it starts there) and the metadata
// is written with a compare-and-set; the handle takes the new metadata at
// once (setLedgerMetadata), so adds sent from now on use the new ensemble.
// A closed or recovering ledger, or no bookie to replace with, fails the
// change (handleUnrecoverableErrorDuringAdd); with nothing left to
// replace, the loop completes without writing.
func (g *gen) ClientUpdatesEnsembleMetadata(cid int) {
	c := &g.s.Clients[cid]
	if c.Change != ChangeUpdating {
		return
	}
	a := clientAction(ClientUpdatesEnsembleMetadata, cid)
	if g.s.MetaStatus != StatusOpen || c.MetaVersion != g.s.MetaVersion {
		g.unrecoverable(g.begin(cid))
		g.out(a)
		return
	}
	cf, _ := c.CurrFragment()
	failed := c.ChangeFailed & cf.Ensemble
	if failed == 0 {
		g.begin(cid).Change = ChangeCompleting
		g.out(a)
		return
	}
	try := func(sub Bookies) bool {
		ens, lay, ok := g.newEnsemble(cf, sub)
		if !ok {
			return false
		}
		nc := g.begin(cid)
		g.installFragment(nc, cf, c.LAC+1, ens, lay, true)
		nc.Change = ChangeCompleting
		a.Lost = sub
		g.out(a)
		return true
	}
	done := false
	if g.p.PartialReplacement {
		done = g.replaceSomeOf(cf, failed, try)
	} else {
		done = try(failed)
	}
	if !done {
		// BKNotEnoughBookiesException fails the MetadataUpdateLoop.
		g.unrecoverable(g.begin(cid))
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
	if c.DelayedFailed != 0 {
		nc := g.begin(cid)
		nc.ChangeFailed, nc.DelayedFailed = nc.DelayedFailed, 0
		nc.Change = ChangeUpdating
		g.ensembleChangeLoop(nc)
		g.out(a)
		return
	}
	nc := g.begin(cid)
	cf, _ := nc.CurrFragment()
	orig, origLay := nc.ChangeOrig, nc.ChangeOrigLay
	nc.Change, nc.ChangeFailed, nc.ChangeOrig, nc.ChangeOrigLay = ChangeNone, 0, 0, 0
	var keys []MsgKey
	if g.p.Striped() {
		keys = g.unsetStriped(cid, nc, cf, origLay)
	} else {
		keys = g.unsetUnstriped(cid, nc, cf, orig)
	}
	if g.m.V.CallbacksAfterUnset {
		g.sendAddSuccessCallbacks(nc)
	}
	g.sendKeys(a, keys)
}

// unsetUnstriped is the unset loop with E = Qw: every op's write set is
// the whole ensemble, so every replaced position is in it and no callback
// runs inside the loop. Bookies keep their position, so the op's bookies
// at the replaced positions are those not in both ensembles.
func (g *gen) unsetUnstriped(cid int, nc *Client, cf Fragment, orig Bookies) []MsgKey {
	kept := orig & cf.Ensemble
	fresh := cf.Ensemble &^ orig
	if fresh == 0 {
		return nil
	}
	var keys []MsgKey
	for i := range nc.PendingList() {
		op := &nc.Pending[i]
		id := op.Entry.ID
		nc.Confirmed[id-1] &^= op.Ensemble &^ kept // ackSet.removeBookieAndCheck
		op.Ensemble, op.FragmentID = cf.Ensemble, cf.ID
		lac := g.opLAC(cid, id)
		for b := 0; b < g.p.Bookies; b++ {
			if fresh.Has(b) {
				keys = append(keys, addRequest(cid, b, op.Entry, lac, 0, false))
			}
		}
	}
	return keys
}

// unsetStriped is the unset loop with striping, position by position as
// LedgerHandle.unsetSuccessAndSendWriteRequest iterates: for each op of
// pendingAddOps (a ConcurrentLinkedQueue, whose iterator has already
// fetched the op after the current one: an op acknowledged inside the
// loop is still visited if it was that one), for each replaced position
// in increasing order, PendingAddOp.unsetSuccessAndSendWriteRequest: take
// the new ensemble; if the op's write set lacks the position, call
// sendAddSuccessCallbacks (unless the variant defers it); else, if the op
// is not yet acknowledged, drop the ack from that position and re-send.
func (g *gen) unsetStriped(cid int, nc *Client, cf Fragment, origLay Layout) []MsgKey {
	var replaced []int
	for pos := 0; pos < g.p.Ensemble; pos++ {
		if origLay.At(pos) != cf.Layout.At(pos) {
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
		_, i, _ := g.opWriteSet(nc, cur)
		var before Layout
		if i >= 0 {
			before = nc.Pending[i].Layout
		}
		for _, pos := range replaced {
			_, i, _ := g.opWriteSet(nc, cur)
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
			keys = append(keys, addRequest(cid, cf.Layout.At(pos), nc.Pending[i].Entry, g.opLAC(cid, cur), 0, false))
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
// (re-sent, for one sent before: a copy still unanswered merges with it),
// one successor per loss pattern; a request to a down bookie is lost.
func (g *gen) sendKeys(a Action, keys []MsgKey) {
	for _, k := range keys {
		if !g.n.Sent(k) {
			g.n.insert(k, 1)
		}
	}
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
			cnt := int8(1)
			if lost&(1<<uint(i)) != 0 {
				cnt = -1
				a.Lost |= 1 << uint(k.Bookie())
			}
			g.n.setCount(k, cnt)
		}
		g.out(a)
		if sub == free {
			break
		}
	}
}
