package spec

// Mechanisms of protocol bugs BookKeeper had, enabled by variants
// (variants.go) or options: each reproduces an issue of
// apache/bookkeeper, and with it off the model is the fixed protocol.
// docs/bugs.md tells each story with its trace.

// mayStore reports whether bookie b may store the normal add k now: it is
// not fenced (the reference: check and store are one step under the
// handle's lock). With split-add-check an add that found no handle checks
// in an earlier step (BookieChecksAdd) and stores whatever happened since;
// one that found a handle is the reference's single step.
func (g *gen) mayStore(b int, k MsgKey) bool {
	if g.metadataRefusesAdd(b) {
		return false
	}
	if g.m.V.SplitAddCheck && (g.s.BChecked[b].Has(k.Entry()) || !g.s.BHandle.Has(b)) {
		return g.s.BChecked[b].Has(k.Entry())
	}
	return !g.s.BFenced.Has(b)
}

// metadataRefusesAdd (variant add-checks-metadata): bookie b holds nothing
// of the ledger, so a normal add would create it, and the metadata says
// the ledger is closed or in recovery: the bookie answers as fenced.
func (g *gen) metadataRefusesAdd(b int) bool {
	return g.m.V.AddChecksMetadata && g.s.BEntries[b] == 0 && !g.s.BFenced.Has(b) &&
		(g.s.MetaStatus == StatusClosed || g.s.MetaStatus == StatusInRecovery)
}

// BookieChecksAdd (split-add-check): a bookie that holds no handle for the
// ledger (its first request for it since it started) creates one, finds
// the ledger not fenced for a normal add, and will store it later
// (BookieSendsAddConfirmedResponse) even if a fencing read fences the
// ledger in between: before PR #4701 an add and a fence on a ledger
// without a handle could get two LedgerDescriptor objects
// (HandleFactoryImpl.getHandle) and lock different monitors. Once a handle
// exists both lock it, and the add is the reference's single step.
func (g *gen) BookieChecksAdd() {
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count < 1 || k.Type() != AddEntryRequest || k.Recovery() || !g.isEarliest(k) {
			continue
		}
		b := k.Bookie()
		if g.s.BFenced.Has(b) || g.s.BDown.Has(b) || g.s.BHandle.Has(b) || g.rejectsAdd(b, k) || g.s.BChecked[b].Has(k.Entry()) || g.s.Sent(addResponse(k, true)) {
			continue
		}
		g.begin(-1)
		g.n.BHandle |= 1 << uint(b)
		g.n.BChecked[b] = g.n.BChecked[b].Add(k.Entry())
		g.out(msgAction(BookieChecksAdd, k))
	}
}

// BookieFailsRead (--corrupt-reads): a bookie's entry log cannot be read
// for an entry its index has. Since PR #2909 it answers an error (EIO),
// which recovery counts as neither positive nor negative (Unknown); with
// variant corrupt-read-nosuch it answers NoSuchEntry, as before.
func (g *gen) BookieFailsRead() {
	if int(g.s.CorruptUsed) >= g.p.CorruptReads {
		return
	}
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count < 1 || k.Type() != ReadRequest || g.s.BDown.Has(k.Bookie()) {
			continue
		}
		f := k.Fields()
		if !g.s.BEntries[f.Bookie].HasID(f.Entry.ID) {
			continue
		}
		code := CodeUnknown
		if g.m.V.CorruptReadAsNoSuchEntry {
			code = CodeNoSuchEntry
		}
		rk := MsgFields{Type: ReadResponse, Bookie: f.Bookie, Cid: f.Cid, Fence: f.Fence, Entry: Entry{ID: f.Entry.ID}, Code: code}.Key()
		if g.s.Sent(rk) {
			continue
		}
		g.begin(-1)
		g.n.CorruptUsed++
		if f.Fence {
			g.noteFenced(f.Bookie, false) // an I/O error: no data
		}
		g.reply(msgAction(BookieFailsRead, k), k, rk)
	}
}

// ClientDeletesLedger (--delete-ledger): a client that closed the ledger
// deletes it from the metadata store, as Pulsar does with ledgers it no
// longer needs (a topic's empty last ledger after a takeover).
func (g *gen) ClientDeletesLedger(cid int) {
	if g.s.MetaStatus != StatusClosed || g.s.MetaDeleted || g.s.Clients[cid].Status != StatusClosed || cid == g.p.AdminClient() {
		return
	}
	g.begin(cid)
	g.n.MetaDeleted = true
	g.out(clientAction(ClientDeletesLedger, cid))
}

// BookieCollectsLedger: a bookie garbage-collects the deleted ledger: its
// entries and handle are gone. Since PR #4462 it remembers that the ledger
// was fenced (recentlyFencedAndDeletedLedgers) and rejects adds as fenced,
// in memory only: a crash forgets it. It remembers only what it can see
// then: HandleFactoryImpl.ledgerDeleted → markIfConflictWritingOccurs
// marks the ledger only if its handle is loaded (ledgers.get) and fenced,
// so a restart between the fence and the collection, with no request
// since, defeats it too. With variant delete-forgets-fence the fence goes
// with the handle.
func (g *gen) BookieCollectsLedger(b int) {
	if !g.s.MetaDeleted || g.s.BCollected.Has(b) || g.s.BDown.Has(b) {
		return
	}
	g.begin(-1)
	bit := Bookies(1) << uint(b)
	g.n.BCollected |= bit
	g.n.BEntries[b], g.n.BLAC[b], g.n.BLAFR[b] = 0, 0, 0
	g.n.BUnflushed[b], g.n.BDurableLAC[b], g.n.BChecked[b] = 0, 0, 0
	// The collection deletes the ledger from the index (applied at the
	// next checkpoint; the model applies it now) and its journal records
	// are replayed as a deleted ledger's.
	g.forgetIndex(b)
	switch {
	case g.m.V.CollectKeepsFence && g.n.BFenced.Has(b):
		// a tombstone written durably at the collection: the fence
		// stays and survives a crash
		g.n.BUnflushedFence &^= bit
		if g.p.Checkpoints {
			g.n.BIndexFenced |= bit
		}
	case !g.m.V.DeleteForgetsFence && g.n.BFenced.Has(b) && g.s.BHandle.Has(b):
		g.n.BVolatileFence |= bit // remembered, in memory only
	default:
		g.n.BFenced &^= bit // gone with the ledger's index
		g.n.BUnflushedFence &^= bit
	}
	g.n.BHandle &^= bit
	g.out(Action{Kind: BookieCollectsLedger, Client: -1, Bookie: int8(b)})
}
