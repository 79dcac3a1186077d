package spec

// AutoRecovery (--autorecovery): BookKeeper's Auditor and one
// ReplicationWorker, as bookkeeper-server's replication package has them
// at apache/bookkeeper 9590a97. The Auditor marks the ledger
// under-replicated (its urL znode, ur_missing) when a bookie its metadata
// names is lost, or when its periodic check finds a fragment a bookie
// does not hold; the worker takes the ledger's lock, copies each
// under-replicated closed fragment to new bookies with recovery adds and
// swaps them into the fragment's ensemble, then marks the ledger
// replicated, releases it to try again later, or defers it while its
// last fragment is open, and after the grace period recovers it.
// docs/model.md gives every step's Java source and what is left out.
//
// Timers are "may fire" actions, as the model's timeouts are: the
// Auditor's audit after a bookie is lost (lostBookieRecoveryDelay), its
// periodic checks (auditorPeriodicBookieCheckInterval,
// auditorPeriodicCheckInterval), the worker's backoff before it releases
// a failed ledger and the open-ledger grace period
// (openLedgerRereplicationGracePeriod) each happen at any later point.

// The ReplicationWorker's phases (State.RWPhase).
const (
	RWIdle       uint8 = iota // no lock held (getLedgerToRereplicate next)
	RWLocked                  // holds the ledger's lock: rereplicate is running
	RWCopied                  // copied a fragment to new bookies; its ensemble update not yet written
	RWDeferred                // deferLedgerLockRelease: lock held until the grace period ends
	RWRecovering              // the grace period ended: admin.openLedger is recovering the ledger
	RWStopped                 // the worker's thread died; the death watcher shut AutoRecovery down
)

// cacheSet is the bit of State.RWCache that says the worker's
// unableToReadEntriesForReplication holds a set for the ledger (possibly
// empty: entries read later are removed, the set stays).
const cacheSet uint16 = 1 << 15

// rwPhaseNames are the phases' names in traces.
var rwPhaseNames = map[uint8]string{RWIdle: "idle", RWLocked: "locked", RWCopied: "copied", RWDeferred: "deferred", RWRecovering: "recovering", RWStopped: "stopped"}

// AdminClient is the client the ReplicationWorker's BookKeeperAdmin
// recovers the ledger with (the last one): it never creates the ledger
// and starts its recovery only when the grace period ends.
func (p Params) AdminClient() int {
	if !p.AutoRecovery {
		return -1
	}
	return p.Clients - 1
}

// checkedFragment is one fragment as LedgerChecker.checkLedger sees it:
// its index in meta_fragments, the bookies it found bad, and whether
// LedgerFragment.isClosed holds.
type checkedFragment struct {
	index  int
	first  int8
	bad    Bookies
	closed bool
}

// readLAC is the LAC of a handle opened without recovery: the closed
// ledger's last entry, or what ReadLastConfirmedOp returns, the highest
// LAC the last ensemble's bookies that are up answer. ok is false when
// none is up (the open fails).
func (g *gen) readLAC() (lac int8, ok bool) {
	s := g.s
	if s.MetaStatus == StatusClosed {
		return s.MetaLastEntry, true
	}
	last := s.MetaFragments[s.NumMetaFragments-1]
	lac = Nil
	for b := 0; b < g.p.Bookies; b++ {
		if last.Ensemble.Has(b) && !s.BDown.Has(b) {
			lac = max(lac, s.BLAC[b])
		}
	}
	return lac, lac != Nil
}

// checkLedger is LedgerChecker.checkLedger with
// auditorLedgerVerificationPercentage = 0 (the default; 100 with
// --auditor-verification-percentage 100: every entry): each fragment
// ends where the next begins, the last at the handle's LAC (an open
// ledger's last fragment, when the LAC is not past its start, only if its
// first entry may exist: some bookie of its write set does not answer
// NoSuchEntry); a bookie of a fragment is bad if it is unavailable or
// lacks the first or the last entry it should store there
// (verifyLedgerFragment reads only those two; with 100, "Verify the
// entire fragment", every one it should store). A bookie that should
// store no entry of the fragment is bad only when BookieWatcher says it is
// unavailable (isBookieUnavailable: neither writable nor read-only
// registered); a stopped bookie whose registration lasts is not. Only
// fragments with a bad bookie are returned.
func (g *gen) checkLedger(lac int8) []checkedFragment {
	s := g.s
	frags := s.MetaFragmentList()
	lastFirst := frags[len(frags)-1].First
	var out []checkedFragment
	for i, f := range frags {
		var last int8
		switch {
		case i < len(frags)-1:
			last = frags[i+1].First - 1
		case s.MetaStatus == StatusClosed:
			last = s.MetaLastEntry
		default:
			last = max(lac, f.First)
		}
		if i == len(frags)-1 && last == f.First && !g.mayExist(f) {
			continue // EntryExistsCallback: every replica answered NoSuchEntry
		}
		var bad Bookies
		for b := 0; b < g.p.Bookies; b++ {
			if !f.Ensemble.Has(b) {
				continue
			}
			firstStored, lastStored := Nil, Nil
			missing := false // with percentage 100: some entry it should store
			for id := f.First; id <= last; id++ {
				if g.p.WriteSet(id, f).Has(b) {
					if firstStored == Nil {
						firstStored = id
					}
					lastStored = id
					missing = missing || !s.BEntries[b].HasID(id)
				}
			}
			if firstStored == Nil {
				// No entry of the fragment on b (an empty last
				// fragment): bad only if its registration is gone.
				if s.unregistered().Has(b) {
					bad |= 1 << uint(b)
				}
				continue
			}
			if s.BDown.Has(b) || !s.BEntries[b].HasID(firstStored) || !s.BEntries[b].HasID(lastStored) || g.p.AuditorVerification == 100 && missing {
				bad |= 1 << uint(b)
			}
		}
		if bad == 0 {
			continue
		}
		closed := s.MetaStatus == StatusClosed || i < len(frags)-1 && lac >= lastFirst-1
		out = append(out, checkedFragment{index: i, first: f.First, bad: bad, closed: closed})
	}
	return out
}

// mayExist is EntryExistsCallback on the first entry of the last
// fragment f: true unless every bookie of its write set answers
// NoSuchEntry (an unavailable bookie's error counts as "may exist").
func (g *gen) mayExist(f Fragment) bool {
	ws := g.p.WriteSet(f.First, f)
	for b := 0; b < g.p.Bookies; b++ {
		if ws.Has(b) && (g.s.BDown.Has(b) || g.s.BEntries[b].HasID(f.First)) {
			return true
		}
	}
	return false
}

// lastSegmentMissing is ReplicationWorker.isLastSegmentOpenAndMissingBookies:
// the ledger is open and a bookie of its last ensemble (and of the one
// before, when the LAC has not reached the last ensemble's start) is not
// among admin.getAvailableBookies(), the writable registrations: a
// stopped bookie whose registration lasts is available there, a read-only
// one is not.
func (g *gen) lastSegmentMissing(lac int8) bool {
	s := g.s
	if s.MetaStatus == StatusClosed {
		return false
	}
	n := s.NumMetaFragments
	final := s.MetaFragments[n-1].Ensemble
	if n > 1 && lac < s.MetaFragments[n-1].First-1 {
		final |= s.MetaFragments[n-2].Ensemble
	}
	return final&(s.unregistered()|s.BReadOnly|s.BDiskFull) != 0
}

// ledgerExists: the Auditor and the worker find the ledger in the
// metadata store.
func (g *gen) ledgerExists() bool {
	return g.s.MetaStatus != StatusNil && !g.s.MetaDeleted
}

// named is every bookie an ensemble of the ledger names
// (BookieLedgerIndexer's bookie-to-ledgers index).
func (g *gen) named() Bookies {
	var bs Bookies
	for _, f := range g.s.MetaFragmentList() {
		bs |= f.Ensemble
	}
	return bs
}

func (g *gen) autoRecoveryActions() {
	if g.s.RWPhase == RWStopped {
		return // AutoRecoveryDeathWatcher shut the Auditor down with the worker
	}
	g.AuditorMarksLedgerUnderreplicated()
	if g.p.PeriodicCheck() {
		g.AuditorChecksLedger()
	}
	g.WorkerAcquiresLedger()
	g.WorkerReplicatesFragment()
	g.WorkerUpdatesEnsemble()
	g.workerEndsRereplicate()
	g.WorkerGraceExpires()
	g.WorkerReleasesLedger()
}

func workerAction(kind ActionKind) Action { return Action{Kind: kind, Client: -1, Bookie: -1} }

// mark is ZkLedgerUnderreplicationManager.markLedgerUnderreplicatedAsync:
// the urL znode is created, or its missing replicas are merged.
func (g *gen) mark(kind ActionKind, missing Bookies) {
	if missing&^g.s.URMissing == 0 {
		return // marked with these already: nothing changes
	}
	g.begin(-1)
	g.n.URMissing |= missing
	a := workerAction(kind)
	a.Lost = missing &^ g.s.URMissing
	g.out(a)
}

// AuditorMarksLedgerUnderreplicated: a bookie the ledger's metadata names
// is lost (its registration is gone); the Auditor's audit
// (Auditor.auditBookies, after lostBookieRecoveryDelay, and
// AuditorBookieCheckTask) calls publishSuspectedLedgersAsync for every
// ledger naming a lost bookie.
func (g *gen) AuditorMarksLedgerUnderreplicated() {
	if !g.ledgerExists() {
		return
	}
	g.mark(AuditorMarksLedgerUnderreplicated, g.named()&g.s.unregistered())
}

// AuditorChecksLedger: AuditorCheckAllLedgersTask opens the ledger
// without recovery and runs LedgerChecker.checkLedger; the bookies of the
// fragments it finds bad are published (markLedgerUnderreplicated).
func (g *gen) AuditorChecksLedger() {
	if !g.ledgerExists() {
		return
	}
	lac, ok := g.readLAC()
	if !ok {
		return
	}
	var bad Bookies
	for _, f := range g.checkLedger(lac) {
		bad |= f.bad
	}
	g.mark(AuditorChecksLedger, bad)
}

// WorkerAcquiresLedger: ReplicationWorker.rereplicate's
// getLedgerToRereplicate takes the lock of a marked ledger.
func (g *gen) WorkerAcquiresLedger() {
	if g.s.URMissing == 0 || g.s.RWPhase != RWIdle {
		return
	}
	g.begin(-1)
	g.n.RWPhase = RWLocked
	g.n.RWTried = 0
	g.out(workerAction(WorkerAcquiresLedger))
}

// WorkerReplicatesFragment: for an under-replicated closed fragment the
// worker has not yet tried in this run (rereplicate iterates a HashSet:
// any order), admin.replicateLedgerFragment chooses a new bookie for each
// bad one (up, writable, outside the fragment's ensemble), failing with
// BKNotEnoughBookiesException before any read if there are too few
// (getReplacementBookiesByIndexes), and LedgerFragmentReplicator then
// copies the entries the bad bookies should store, each read through the
// handle from a bookie of its write set that has it and written with
// FLAG_RECOVERY_ADD (past a fence; a disk-full bookie would refuse it, so
// it is not chosen). An entry no bookie can serve fails the fragment
// (LedgerRecoveryException) and enters unableToReadEntriesForReplication;
// either failure leaves the fragment only marked tried. Entry is the fragment's first entry; Lost the
// new bookies.
func (g *gen) WorkerReplicatesFragment() {
	if g.s.RWPhase != RWLocked || !g.ledgerExists() {
		return
	}
	lac, ok := g.readLAC()
	if !ok {
		return
	}
	for _, cf := range g.checkLedger(lac) {
		if !cf.closed || g.s.RWTried&(1<<uint(cf.index)) != 0 {
			continue
		}
		f := g.s.MetaFragments[cf.index]
		last := g.fragmentLast(cf.index)
		tried := g.s.RWTried | 1<<uint(cf.index)
		cache, throws := g.tryReadingFaultyEntries(f, last)
		if throws {
			g.begin(-1)
			g.n.RWPhase = RWStopped
			g.n.RWTried = 0
			d := workerAction(WorkerDiesOnInconsistentRange)
			d.Entry = f.First
			g.out(d)
			continue
		}
		a := workerAction(WorkerReplicatesFragment)
		a.Entry = f.First
		if cache&^cacheSet&rangeBits(f.First, last) != 0 {
			// "Failed to read faulty entries, so giving up replicating ledgerFragment"
			g.begin(-1)
			g.n.RWTried, g.n.RWCache = tried, cache
			g.out(a)
			continue
		}
		eligible := g.p.allBookies() &^ g.s.unregistered() &^ g.s.BReadOnly &^ g.s.BDiskFull &^ f.Ensemble
		k := cf.bad.Len()
		if eligible.Len() < k {
			// BookKeeperAdmin.replicateLedgerFragment picks the new
			// bookies first (getReplacementBookiesByIndexes) and throws
			// BKNotEnoughBookiesException before LedgerFragmentReplicator
			// reads anything: no entry enters the cache.
			g.begin(-1)
			g.n.RWTried = tried
			g.out(a)
			continue
		}
		var copies EntrySet
		readable := true
		lo, hi := g.storedRange(f, last, cf.bad)
		for id := lo; lo != Nil && id <= hi; id++ {
			e, ok := g.readEntry(id, g.p.WriteSet(id, f))
			if !ok {
				// onReadEntryFailureCallback: unableToReadEntriesForReplication
				readable = false
				cache |= cacheSet | 1<<uint(id-1)
				continue
			}
			copies = copies.Add(e)
		}
		emitted := false
		if readable {
			for sub := eligible; sub != 0; sub = (sub - 1) & eligible {
				if sub.Len() != k {
					continue
				}
				for _, m := range g.replacements(cf.bad, sub) {
					emitted = true
					g.begin(-1)
					g.n.RWTried, g.n.RWCache = tried, cache
					g.n.RWPhase = RWCopied
					g.n.RWFirst = f.First
					g.n.RWMap = m
					for t := 0; t < g.p.Bookies; t++ {
						if sub.Has(t) {
							for _, e := range copies.List() {
								if !g.n.BEntries[t].Has(e) {
									g.n.BEntries[t] = g.n.BEntries[t].Add(e)
									g.noteStored(t, e)
								}
							}
						}
					}
					a.Lost = sub
					g.out(a)
				}
			}
		}
		if !emitted {
			g.begin(-1)
			g.n.RWTried, g.n.RWCache = tried, cache
			g.out(a)
		}
	}
}

// storedRange is the range of entries LedgerFragmentReplicator copies
// from fragment f (entries f.First..last) whose bad bookies are bad:
// LedgerFragment.getFirstStoredEntryId and getLastStoredEntryId, the
// first and the last entry any bad bookie's index stores
// (RoundRobinDistributionSchedule.hasEntry: the entry's write set holds
// it); Nil, Nil if none. replicateFragmentInternal reads every entry of
// the range through the handle and writes each to every new bookie: with
// E > Qw that includes entries the bad bookies' indexes do not store, and
// a new bookie receives entries of other indexes than the one it takes.
// With E = Qw every bookie stores every entry: the whole fragment.
func (g *gen) storedRange(f Fragment, last int8, bad Bookies) (lo, hi int8) {
	lo, hi = Nil, Nil
	for id := f.First; id <= last; id++ {
		if g.p.WriteSet(id, f)&bad != 0 {
			if lo == Nil {
				lo = id
			}
			hi = id
		}
	}
	return lo, hi
}

// tryReadingFaultyEntries is ReplicationWorker.tryReadingFaultyEntries
// on fragment f (entries f.First..last): with a set for the ledger in
// unableToReadEntriesForReplication, the entries of it in the fragment
// are read again through the handle, and those read are removed. It
// returns the cache as it leaves it, or throws: on master, a fragment
// past the closed ledger's last entry (f.First > last) makes
// ConcurrentSkipListSet.subSet throw IllegalArgumentException
// ("inconsistent range"), which no catch of ReplicationWorker.run stops:
// the worker's thread dies, the lock is released by rereplicate's
// finally, and AutoRecoveryDeathWatcher shuts AutoRecovery down (the
// caller emits WorkerDiesOnInconsistentRange). PR #4551 (variant
// skip-inconsistent-range) returns true for such a fragment.
func (g *gen) tryReadingFaultyEntries(f Fragment, last int8) (cache uint16, throws bool) {
	cache = g.s.RWCache
	if cache&cacheSet == 0 {
		return cache, false
	}
	if f.First > last {
		return cache, !g.m.V.SkipInconsistentRange
	}
	for id := f.First; id <= last; id++ {
		if cache&(1<<uint(id-1)) != 0 {
			if _, ok := g.readEntry(id, g.p.WriteSet(id, f)); ok {
				cache &^= 1 << uint(id-1)
			}
		}
	}
	return cache, false
}

// rangeBits are the bits of entries first..last in State.RWCache.
func rangeBits(first, last int8) uint16 {
	var bs uint16
	for id := first; id <= last; id++ {
		bs |= 1 << uint(id-1)
	}
	return bs
}

// fragmentLast is the last entry of meta fragment i as the checker bounds
// it for a closed fragment: where the next begins, or the closed ledger's
// last entry.
func (g *gen) fragmentLast(i int) int8 {
	if i < int(g.s.NumMetaFragments)-1 {
		return g.s.MetaFragments[i+1].First - 1
	}
	return g.s.MetaLastEntry
}

// readEntry is a read of entry id through a handle: the first bookie of
// ws (in bookie order) that is up and stores it answers.
func (g *gen) readEntry(id int8, ws Bookies) (Entry, bool) {
	for b := 0; b < g.p.Bookies; b++ {
		if ws.Has(b) && !g.s.BDown.Has(b) {
			if e, ok := g.s.BEntries[b].WithID(id); ok {
				return e, true
			}
		}
	}
	return Entry{}, false
}

func (p Params) allBookies() Bookies { return Bookies(1<<uint(p.Bookies) - 1) }

// replacements are the oldBookie2NewBookie maps a replication of the
// bad bookies old by the new ones may use: with an unordered ensemble one
// (which replaces which does not change the ensemble, and every new
// bookie receives every copied entry, E = Qw), with an ordered one every
// bijection, since the placement policy's choice decides which position
// each new bookie takes.
func (g *gen) replacements(old, new Bookies) []Failures {
	var olds, news []int
	for b := 0; b < g.p.Bookies; b++ {
		if old.Has(b) {
			olds = append(olds, b)
		}
		if new.Has(b) {
			news = append(news, b)
		}
	}
	var out []Failures
	var rec func(i int, used Bookies, m Failures)
	rec = func(i int, used Bookies, m Failures) {
		if i == len(olds) {
			out = append(out, m)
			return
		}
		for _, t := range news {
			if !used.Has(t) {
				rec(i+1, used|1<<uint(t), m.Put(olds[i], t))
				if !g.p.Ordered() {
					return // the first (bookie order) stands for all
				}
			}
		}
	}
	rec(0, 0, 0)
	return out
}

// WorkerUpdatesEnsemble: LedgerFragmentReplicator.updateEnsembleInfo's
// MetadataUpdateLoop replaces, in the ensemble starting at the copied
// fragment's first entry, every old bookie still there with its new one
// (a no-op when none is). The loop reads the metadata again on a version
// conflict, and so does every other client's update loop in BookKeeper:
// the model applies the change to the store and to each client's copy of
// the fragment, where their re-reads would leave it, and keeps the
// version the clients compare unchanged (docs/model.md).
func (g *gen) WorkerUpdatesEnsemble() {
	if g.s.RWPhase != RWCopied {
		return
	}
	g.begin(-1)
	g.n.RWPhase = RWLocked
	g.n.RWFirst, g.n.RWMap = 0, 0
	if g.ledgerExists() {
		for i := 0; i < int(g.n.NumMetaFragments); i++ {
			mf := &g.n.MetaFragments[i]
			if mf.First != g.s.RWFirst {
				continue
			}
			for b := 0; b < g.p.Bookies; b++ {
				if t, ok := g.s.RWMap.At(b); ok && mf.Ensemble.Has(b) && !mf.Ensemble.Has(t) {
					mf.Ensemble = mf.Ensemble&^(1<<uint(b)) | 1<<uint(t)
					if g.p.Ordered() {
						mf.Layout = mf.Layout.With(mf.Layout.Index(b, g.p.Ensemble), t)
					}
				}
			}
		}
	}
	a := workerAction(WorkerUpdatesEnsemble)
	a.Entry = g.s.RWFirst
	g.out(a)
}

// workerEndsRereplicate: the fragments found are all tried; rereplicate
// ends in one of three ways. With an open under-replicated fragment, or
// a bookie of the last segment missing, it defers the lock's release
// (WorkerDefersLedger); else it checks again and marks the ledger
// replicated if nothing is bad (WorkerMarksLedgerReplicated), or releases
// it to be tried again after a backoff (WorkerReleasesLedger). A ledger
// deleted meanwhile is marked replicated.
func (g *gen) workerEndsRereplicate() {
	if g.s.RWPhase != RWLocked {
		return
	}
	if !g.ledgerExists() {
		g.endRun(WorkerMarksLedgerReplicated, true)
		return
	}
	lac, ok := g.readLAC()
	if !ok {
		g.endRun(WorkerReleasesLedger, false) // the open failed: a BKException releases the lock
		return
	}
	bad := g.checkLedger(lac)
	open := false
	for _, cf := range bad {
		if cf.closed && g.s.RWTried&(1<<uint(cf.index)) == 0 {
			return // WorkerReplicatesFragment first
		}
		open = open || !cf.closed
	}
	switch {
	case open || g.lastSegmentMissing(lac):
		g.begin(-1)
		g.n.RWPhase = RWDeferred
		g.n.RWTried = 0
		g.out(workerAction(WorkerDefersLedger))
	case len(bad) == 0:
		g.endRun(WorkerMarksLedgerReplicated, true)
	default:
		g.endRun(WorkerReleasesLedger, false)
	}
}

// endRun ends the worker's hold on the ledger: released, and marked
// replicated (the urL znode deleted) if replicated.
func (g *gen) endRun(kind ActionKind, replicated bool) {
	g.begin(-1)
	g.n.RWPhase = RWIdle
	g.n.RWTried = 0
	if replicated {
		g.n.URMissing = 0
	}
	g.out(workerAction(kind))
}

// WorkerGraceExpires: deferLedgerLockRelease's timer task, after
// openLedgerRereplicationGracePeriod. It opens the ledger without
// recovery; if a bookie of the last segment is missing or an
// under-replicated fragment is still open, admin.openLedger recovers the
// ledger ("Recovery open could result in client write failure"): the
// admin client starts recovery, and the lock is released when it ends
// (WorkerReleasesLedger). Otherwise the lock is released now. The admin
// client recovers once per run; a second time the task only releases.
func (g *gen) WorkerGraceExpires() {
	if g.s.RWPhase != RWDeferred {
		return
	}
	needs := false
	if lac, ok := g.readLAC(); ok && g.ledgerExists() {
		needs = g.lastSegmentMissing(lac)
		for _, cf := range g.checkLedger(lac) {
			needs = needs || !cf.closed
		}
	}
	admin := g.p.AdminClient()
	if needs && g.s.Clients[admin].Status == StatusNil {
		g.startRecovery(WorkerGraceExpires, admin, func() { g.n.RWPhase = RWRecovering })
		return
	}
	g.begin(-1)
	g.n.RWPhase = RWIdle
	g.out(workerAction(WorkerGraceExpires))
}

// WorkerReleasesLedger, after the grace period's recovery: admin.openLedger
// has returned and the timer task releases the lock. It returns when the
// admin client's recovery has ended (the ledger closed, or the recovery
// aborted), or has failed: its fencing can no longer reach quorum
// coverage because the bookies it has not heard from are down (their
// reads fail at once, ReadLastConfirmedOp completes with an error); the
// admin client's recovery then stops (RECOVERY_ABORTED), leaving the
// ledger IN_RECOVERY as a failed LedgerRecoveryOp does. (The same action
// kind ends a rereplicate run that leaves bad fragments:
// workerEndsRereplicate.)
func (g *gen) WorkerReleasesLedger() {
	if g.s.RWPhase != RWRecovering {
		return
	}
	admin := g.p.AdminClient()
	c := &g.s.Clients[admin]
	failed := c.Status == StatusInRecovery && c.RecoveryPhase == FencingPhase &&
		!g.p.HasQuorumCoverage(c.Fenced|c.RecoveryEns&^g.s.BDown, c.RecoveryEns.Len())
	if !failed && c.Status != RecoveryAborted && c.Status != StatusClosed && g.s.MetaStatus != StatusClosed {
		return
	}
	g.begin(-1)
	g.n.RWPhase = RWIdle
	g.n.RWTried = 0
	if failed {
		g.n.Clients[admin].Status = RecoveryAborted
	}
	g.out(workerAction(WorkerReleasesLedger))
}
