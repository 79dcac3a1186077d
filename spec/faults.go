package spec

// Fault actions: beyond the TLA+ spec, the ways BookKeeper bookies fail,
// each bounded by a budget, and the client's answers to them. With every
// budget 0 none is enabled and the model is the reference spec. Next calls
// them from actions.go; the read-only rejection of an add is emitted by
// BookieSendsAddFencedResponse's loop (so successors keep their message
// order) through readOnlyAddResponse below. docs/model.md gives each
// fault's BookKeeper mechanism and source.

// lose marks every deliverable message to or from bookie b as lost: the
// connections of a stopping bookie break, its peers see timeouts.
func (g *gen) lose(b int) {
	for i := range g.n.Msgs {
		if m := &g.n.Msgs[i]; m.Count >= 1 && m.Key.Bookie() == b {
			m.Count = -1
		}
	}
}

// BookieCrashes: bookie b stops (the process, or with --journal no-sync
// the machine: a power loss). Its connections break. What its journal had
// not made durable is lost: a fence whose record was not yet written
// (noteFenced), and with a lossy journal the entries it acknowledged since
// its last flush; its LAC goes back to the flushed one.
func (g *gen) BookieCrashes(b int) {
	if int(g.s.CrashesUsed) >= g.p.Crashes || g.s.BDown.Has(b) {
		return
	}
	g.begin(-1)
	bit := Bookies(1) << uint(b)
	g.n.BDown |= bit
	g.stale(b)
	g.n.CrashesUsed++
	g.n.BChecked[b] = 0       // in memory
	g.n.BCheckPending &^= bit // the next restart starts the check again
	g.n.BHandle &^= bit       // handles are in memory
	if g.n.BVolatileFence.Has(b) {
		// The fence of a deleted ledger was kept in memory only.
		g.n.BFenced &^= bit
		g.n.BVolatileFence &^= bit
	}
	if g.n.BUnflushedFence.Has(b) {
		g.n.BFenced &^= bit
		g.n.BUnflushedFence &^= bit
	}
	if g.p.Checkpoints {
		if !g.checkpointedFence(b) {
			g.n.BFenced &^= bit
		}
	}
	if g.p.LossyJournal() {
		g.n.BEntries[b] &^= g.n.BUnflushed[b]
		g.n.BLAC[b] = g.n.BDurableLAC[b]
		g.n.BUnflushed[b] = 0
	}
	g.lose(b)
	g.out(Action{Kind: BookieCrashes, Client: -1, Bookie: int8(b)})
}

// stale: bookie b, stopping, stays registered until its ZooKeeper session
// expires (--registration-expiry; BookieRegistrationExpires).
func (g *gen) stale(b int) {
	if g.p.RegistrationExpiry && !g.s.BDown.Has(b) {
		g.n.BStale |= 1 << uint(b)
	}
}

// BookieRegistrationExpires (--registration-expiry): the ZooKeeper session
// of a stopped bookie expires, its ephemeral registration under
// /ledgers/available goes, and the clients' BookieWatcherImpl, told by the
// registration client's watch, drops it from the writable bookies
// (processWritableBookiesChanged → placementPolicy.onClusterChanged):
// from now on no placement chooses it. Until then a new ledger or an
// ensemble change may choose the stopped bookie (SelectEnsemble,
// replaceFailed), whose writes then fail at once, and the Auditor does
// not count it lost. BookKeeper's client also quarantines a bookie that
// fails often (BookieWatcherImpl.quarantineBookie, from the periodic
// health check, off unless configured), not modelled.
func (g *gen) BookieRegistrationExpires(b int) {
	if !g.s.BStale.Has(b) {
		return
	}
	g.begin(-1)
	g.n.BStale &^= 1 << uint(b)
	g.out(Action{Kind: BookieRegistrationExpires, Client: -1, Bookie: int8(b)})
}

// BookieRestarts: a crashed bookie comes back with what its journal kept.
// With the journal disabled the shutdown was unclean and data may be
// missing: with --data-integrity, EmbeddedServer starts the pre-boot check
// (runPreBootCheck("UNCLEAN_SHUTDOWN")) and drops its future, so the
// bookie serves reads, fences and adds before the check has run
// (BookieRunsPreBootCheck). A bookie with a wiped disk does not restart:
// cookie validation refuses it. A decommissioned one does not either: the
// operator stopped it for good.
func (g *gen) BookieRestarts(b int) {
	if !g.s.BDown.Has(b) || g.s.BWiped.Has(b) || g.p.unavailableSet().Has(b) || g.s.DecomBookie.Has(b) {
		return
	}
	g.begin(-1)
	g.n.BDown &^= 1 << uint(b)
	g.n.BStale &^= 1 << uint(b) // registered again
	if g.p.DeferredCheck() && g.n.MetaStatus != StatusNil {
		// With no ledger in the metadata yet the check has nothing to
		// walk (MetadataAsyncIterator starts from the ledgers there are).
		g.n.BCheckPending |= 1 << uint(b)
	}
	if g.p.AwaitedCheck() {
		g.dataIntegrityCheck(b)
	}
	g.out(Action{Kind: BookieRestarts, Client: -1, Bookie: int8(b)})
}

// BookieRunsPreBootCheck: the pre-boot check a restart started
// (b_check_pending) runs on the running bookie, against the metadata as it
// is now (DataIntegrityCheckImpl.runPreBootCheck walks the ledgers with
// MetadataAsyncIterator and processPreBoot marks each).
func (g *gen) BookieRunsPreBootCheck(b int) {
	if !g.s.BCheckPending.Has(b) || g.s.BDown.Has(b) {
		return
	}
	g.begin(-1)
	g.n.BCheckPending &^= 1 << uint(b)
	g.dataIntegrityCheck(b)
	g.out(Action{Kind: BookieRunsPreBootCheck, Client: -1, Bookie: int8(b)})
}

// dataIntegrityCheck is DataIntegrityCheckImpl's pre-boot check on bookie
// b of the successor being built (with --data-integrity): the ledger is
// fenced and put in limbo on b if it is not closed and its last ensemble
// in the metadata holds b.
func (g *gen) dataIntegrityCheck(b int) {
	if !g.p.DataIntegrity || g.n.MetaStatus == StatusNil || g.n.MetaDeleted {
		return
	}
	if g.n.MetaStatus == StatusClosed && !g.m.V.IntegrityFencesClosed {
		return
	}
	if last := g.n.MetaFragments[g.n.NumMetaFragments-1]; !last.Ensemble.Has(b) {
		return
	}
	bit := Bookies(1) << uint(b)
	g.n.BFenced |= bit
	g.n.BLimbo |= bit
}

// wipe empties bookie b's disk in the successor being built: entries, LAC,
// fence and anything unflushed.
func (g *gen) wipe(b int) {
	bit := Bookies(1) << uint(b)
	g.n.BEntries[b], g.n.BLAC[b], g.n.BLAFR[b] = 0, 0, 0
	g.n.BUnflushed[b], g.n.BDurableLAC[b] = 0, 0
	g.n.BFenced &^= bit
	g.n.BUnflushedFence &^= bit
	g.forgetIndex(b)
	g.n.BLimbo &^= bit
	g.n.BChecked[b] = 0
	g.n.BVolatileFence &^= bit
	g.n.BCheckPending &^= bit
	g.n.BHandle &^= bit
}

// BookieLosesDisk: bookie b's disk is wiped (a failed or replaced volume).
// It goes down, and cookie validation keeps it down: its directories lack
// the cookie the metadata store holds (InvalidCookieException), until an
// operator re-formats it (BookieRejoinsEmpty).
func (g *gen) BookieLosesDisk(b int) {
	if int(g.s.DiskLossUsed) >= g.p.DiskLoss || g.s.BWiped.Has(b) || g.p.unavailableSet().Has(b) || g.s.MetaStatus == StatusNil {
		return
	}
	g.begin(-1)
	bit := Bookies(1) << uint(b)
	g.n.DiskLossUsed++
	g.wipe(b)
	g.n.BDown |= bit
	g.stale(b)
	g.n.BWiped |= bit
	g.lose(b)
	g.out(Action{Kind: BookieLosesDisk, Client: -1, Bookie: int8(b)})
}

// BookieRejoinsEmpty: an operator re-formats bookie b (or decommissions
// it and starts a fresh one at its address) and it rejoins with an empty
// disk: entries, LAC and fences are gone, its connections break. With the
// cookie deleted (the default) DataIntegrityCookieValidation.checkCookies
// finds a new environment and stamps cookies: no check. With the cookie
// kept (--reformat-cookie kept, dataIntegrityStampMissingCookiesEnabled)
// it runs the pre-boot check and waits for it: the bookie comes back
// fenced and in limbo for the ledger if the ledger is open and its last
// ensemble holds b.
func (g *gen) BookieRejoinsEmpty(b int) {
	if int(g.s.ReformatUsed) >= g.p.Reformat || g.p.unavailableSet().Has(b) || g.s.MetaStatus == StatusNil || g.s.DecomBookie.Has(b) {
		return
	}
	if g.s.BDown.Has(b) && !g.s.BWiped.Has(b) {
		return // a crashed bookie restarts (BookieRestarts) or is wiped first
	}
	g.begin(-1)
	bit := Bookies(1) << uint(b)
	g.n.ReformatUsed++
	g.wipe(b)
	g.n.BDown &^= bit
	g.n.BStale &^= bit
	g.n.BWiped &^= bit
	if g.p.ReformatCookie == CookieKept {
		g.dataIntegrityCheck(b)
	}
	g.lose(b)
	g.out(Action{Kind: BookieRejoinsEmpty, Client: -1, Bookie: int8(b)})
}

// BookieSyncsJournal: bookie b's journal makes everything it acknowledged
// durable (fsync with journalSyncData=false; a ledger-storage flush with
// the journal disabled), and a fence record still in its queue: the
// Journal thread writes (and with journalSyncData=true fsyncs) it within
// journalMaxGroupWaitMSec.
func (g *gen) BookieSyncsJournal(b int) {
	if g.s.BDown.Has(b) {
		return
	}
	bit := Bookies(1) << uint(b)
	lossy := g.p.LossyJournal()
	if !g.s.BUnflushedFence.Has(b) && (!lossy || g.s.BUnflushed[b] == 0 && g.s.BDurableLAC[b] == g.s.BLAC[b]) {
		return
	}
	g.begin(-1)
	if g.s.BUnflushedFence.Has(b) {
		g.fenceRecordDurable(b)
	}
	g.n.BUnflushedFence &^= bit
	if lossy {
		g.n.BUnflushed[b] = 0
		g.n.BDurableLAC[b] = g.n.BLAC[b]
	}
	g.out(Action{Kind: BookieSyncsJournal, Client: -1, Bookie: int8(b)})
}

// noteStored records, in the successor being built, that bookie b stored
// entry e and took lac without yet making them durable (lossy journals).
func (g *gen) noteStored(b int, e Entry) {
	if g.p.LossyJournal() {
		g.n.BUnflushed[b] = g.n.BUnflushed[b].Add(e)
	}
	if g.p.Checkpoints {
		bit := Bookies(1) << uint(b)
		if g.n.BUnflushedFence.Has(b) {
			// The journal is one queue: a fence record queued before
			// this add is written and fsynced before the add's record,
			// whose acknowledgement waits for that fsync
			// (journalSyncData=true), and before its key record too.
			g.fenceRecordDurable(b)
			g.n.BUnflushedFence &^= bit
		}
		// BookieImpl.addEntryInternal journals a METAENTRY_ID_LEDGER_KEY
		// record before the ledger's first entry since the bookie started
		// (masterKeyCache); the entry waits in the write cache.
		g.n.BKeyRecord |= bit
		g.n.BCacheDirty |= bit
	}
}

// noteFenced records, in the successor being built, that bookie b fenced
// the ledger for a fencing read and answers it, with data (the entry, or
// the LAC read from its last entry) or without. BookieImpl.fenceLedger
// queues a fence record in the journal (LedgerDescriptorImpl.
// fenceAndLogInJournal) and ReadEntryProcessor.processPacket waits for it
// only when data was read (handleReadResultForFenceRead, which waits on
// the pending record of an earlier fence too); on NoEntryException,
// NoLedgerException, DataUnknownException or an IOException it answers at
// once, and a crash before the Journal thread writes the record loses
// the fence. With no-sync even a written record waits for the next fsync.
// The variant durable-fence-reply makes every reply wait.
func (g *gen) noteFenced(b int, withData bool) {
	bit := Bookies(1) << uint(b)
	switch {
	case !g.p.FencesCanBeLost():
	case g.p.Journal == JournalNoSync:
		if !g.s.BFenced.Has(b) {
			g.n.BUnflushedFence |= bit
		}
	case withData:
		g.n.BUnflushedFence &^= bit
	case !g.s.BFenced.Has(b):
		g.n.BUnflushedFence |= bit
	}
	g.n.BFenced |= bit
	if !g.n.BUnflushedFence.Has(b) {
		g.fenceRecordDurable(b)
	}
}

// forgetIndex clears, with --checkpoints, what bookie b's ledger index and
// journal hold of the ledger (a wiped disk, a collected ledger).
func (g *gen) forgetIndex(b int) {
	bit := Bookies(1) << uint(b)
	g.n.BIndexKey &^= bit
	g.n.BIndexFenced &^= bit
	g.n.BKeyRecord &^= bit
	g.n.BFenceRecord &^= bit
	g.n.BCacheDirty &^= bit
}

// fenceRecordDurable notes, with --checkpoints, that bookie b's fence
// record is now durable in its journal, after the log mark; with the
// variant fence-journals-key it carries the master key too. Replay
// (BookieImpl.readJournal) takes a fence record's master key from
// masterKeyCache, which only key records replayed before it fill, or
// from the ledger index: a record written while the bookie has neither
// a key record nor an index entry for the ledger is skipped at every
// replay ("Skip replaying entries of ledger since it was deleted"),
// whatever key record follows it, so it is not kept.
func (g *gen) fenceRecordDurable(b int) {
	if !g.p.Checkpoints {
		return
	}
	bit := Bookies(1) << uint(b)
	switch {
	case g.m.V.FenceJournalsKey:
		g.n.BFenceRecord |= bit
		g.n.BKeyRecord |= bit
	case (g.n.BKeyRecord|g.n.BIndexKey)&bit != 0:
		g.n.BFenceRecord |= bit
	}
}

// BookieCheckpoints (--checkpoints): bookie b's SyncThread checkpoints its
// ledger directory (every flushInterval). SingleDirectoryDbLedgerStorage.
// checkpoint flushes the write cache and then the ledger index
// (LedgerMetadataIndex.flush: the master key and fenced flag of every
// ledger it knows in memory become durable) and SyncThread moves the
// journal's log mark past every durable record, fence and key records
// included. The write cache holds the entries of every ledger of the
// directory, so the flush can happen whenever the bookie is up (another
// ledger's entries); with an empty write cache, which needs this ledger's
// entries flushed already, the checkpoint returns early without flushing
// the index, and the mark still moves (BookieCheckpointsIdle), unless
// PR #4843 (checkpoint-flushes-index) flushes it there too.
func (g *gen) BookieCheckpoints(b int) {
	g.checkpoint(BookieCheckpoints, b, true)
	if !g.s.BCacheDirty.Has(b) {
		g.checkpoint(BookieCheckpointsIdle, b, g.m.V.CheckpointFlushesIndex)
	}
}

// checkpoint emits bookie b's checkpoint, flushing the ledger index or
// not, if it changes anything.
func (g *gen) checkpoint(kind ActionKind, b int, flush bool) {
	if !g.p.Checkpoints || g.s.BDown.Has(b) {
		return
	}
	bit := Bookies(1) << uint(b)
	key, fenced := g.s.BIndexKey, g.s.BIndexFenced
	if flush {
		// The index knows the ledger in memory if the bookie stored an
		// entry or fenced it since it started, or loaded it at start.
		if g.s.BEntries[b] != 0 || g.s.BFenced.Has(b) {
			key |= bit
		}
		fenced = fenced&^bit | g.s.BFenced&bit
	}
	unflushedFence := g.s.BUnflushedFence
	if flush && g.s.BFenced.Has(b) {
		unflushedFence &^= bit // the fenced flag is durable in the index now
	}
	same := key == g.s.BIndexKey && fenced == g.s.BIndexFenced && unflushedFence == g.s.BUnflushedFence &&
		(g.s.BKeyRecord|g.s.BFenceRecord)&bit == 0 && (!flush || !g.s.BCacheDirty.Has(b))
	if same {
		return
	}
	g.begin(-1)
	g.n.BIndexKey, g.n.BIndexFenced, g.n.BUnflushedFence = key, fenced, unflushedFence
	g.n.BKeyRecord &^= bit
	g.n.BFenceRecord &^= bit
	if flush {
		g.n.BCacheDirty &^= bit
	}
	g.out(Action{Kind: kind, Client: -1, Bookie: int8(b)})
}

// checkpointedFence is, with --checkpoints, whether bookie b's fence
// survives a restart: the index holds it, or journal replay finds a fence
// record after the mark whose master key it knows (fenceRecordDurable
// keeps only such records); else BookieImpl's replay takes the record for
// a deleted ledger's and skips it (readMasterKey: NoLedgerException).
func (g *gen) checkpointedFence(b int) bool {
	return g.n.BIndexFenced.Has(b) || g.n.BFenceRecord.Has(b)
}

// BookieBecomesReadOnly: bookie b turns read-only (its disks passed the
// usage threshold, or an admin forced it). It rejects normal adds and still
// accepts high-priority (recovery) adds, serves reads and fencing.
func (g *gen) BookieBecomesReadOnly(b int) {
	if int(g.s.ReadOnlyUsed) >= g.p.ReadOnly || g.s.BReadOnly.Has(b) {
		return
	}
	g.begin(-1)
	g.n.BReadOnly |= 1 << uint(b)
	g.n.ReadOnlyUsed++
	g.out(Action{Kind: BookieBecomesReadOnly, Client: -1, Bookie: int8(b)})
}

// BookieBecomesWritable: read-only bookie b turns writable again: its
// disks went back below the usage threshold (LedgerDirsMonitor, then
// BookieStateManager.transitionToWritableMode), or an admin turned it so
// (PUT /api/v1/bookie/state/readonly {"readOnly": false}, refused only
// in forceReadOnlyBookie mode), release-4.18.0. A full disk
// (BookieFillsDisk) stays full. Turning read-only again takes another of
// --read-only's count.
func (g *gen) BookieBecomesWritable(b int) {
	s := g.s
	if !s.BReadOnly.Has(b) || s.BDiskFull.Has(b) || s.BDown.Has(b) {
		return
	}
	g.begin(-1)
	g.n.BReadOnly &^= 1 << uint(b)
	g.out(Action{Kind: BookieBecomesWritable, Client: -1, Bookie: int8(b)})
}

// BookieFillsDisk: bookie b turns read-only with every disk below
// minUsableSizeForHighPriorityWrites: it rejects recovery adds too.
func (g *gen) BookieFillsDisk(b int) {
	if int(g.s.DiskFullUsed) >= g.p.DiskFull || g.s.BDiskFull.Has(b) {
		return
	}
	g.begin(-1)
	g.n.BReadOnly |= 1 << uint(b)
	g.n.BDiskFull |= 1 << uint(b)
	g.n.DiskFullUsed++
	g.out(Action{Kind: BookieFillsDisk, Client: -1, Bookie: int8(b)})
}

// rejectsAdd reports whether bookie b answers add k with EREADONLY: a
// read-only bookie checks that before the fence (WriteEntryProcessor), and
// lets high-priority (recovery) adds through unless its disks are full.
func (g *gen) rejectsAdd(b int, k MsgKey) bool {
	return g.s.BReadOnly.Has(b) && (!k.Recovery() || g.s.BDiskFull.Has(b))
}

// ClientReceivesAddErrorResponse: a writer or recovery client gets a
// read-only rejection. BookKeeper treats it as a failed write to that
// bookie, like a timeout: the response is marked as a failure (-1) so that
// the next ensemble change replaces the bookie and clears it.
func (g *gen) ClientReceivesAddErrorResponse(cid int) {
	c := &g.s.Clients[cid]
	var recovery bool
	switch c.Status {
	case StatusOpen:
		if g.p.JavaAddPath() {
			return // the Java writer's responses go to writeComplete (javaclient.go)
		}
	case StatusInRecovery:
		recovery = true
	default:
		return
	}
	cf, _ := c.CurrFragment()
	for _, m := range g.s.Msgs {
		if !g.receivableAddResponse(m, cid) {
			continue
		}
		k := m.Key
		if f := k.Fields(); f.Recovery != recovery || f.Code != CodeReadOnly || !cf.Ensemble.Has(f.Bookie) {
			continue
		}
		g.begin(cid)
		g.n.setCount(k, -1)
		g.out(msgAction(ClientReceivesAddErrorResponse, k))
	}
}

// ClientFailsToCreateLedger: fewer than E writable bookies are available;
// creation fails with NotEnoughBookies and the client gives up.
func (g *gen) ClientFailsToCreateLedger(cid int) {
	c := &g.s.Clients[cid]
	if g.s.MetaStatus != StatusNil || c.MetaVersion != Nil || c.Status != StatusNil {
		return
	}
	if _, ok := g.SelectEnsemble(0, 0); ok {
		return
	}
	nc := g.begin(cid)
	nc.Status = ClientWithdrawn
	g.out(clientAction(ClientFailsToCreateLedger, cid))
}

// readOnlyAddResponse is the fault half of BookieSendsAddFencedResponse: a
// read-only bookie rejects the add with EREADONLY (rejectsAdd), whether or
// not it is fenced. It returns the response and whether the bookie sends it.
func (g *gen) readOnlyAddResponse(k MsgKey) (MsgKey, bool) {
	if !g.rejectsAdd(k.Bookie(), k) {
		return 0, false
	}
	f := k.Fields()
	return MsgFields{Type: AddEntryResponse, Bookie: f.Bookie, Cid: f.Cid, Entry: f.Entry, Recovery: f.Recovery, Code: CodeReadOnly, Index: f.Index}.Key(), true
}
