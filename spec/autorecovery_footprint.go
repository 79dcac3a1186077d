package spec

// The partial-order reduction's declarations for AutoRecovery (autorecovery.go), reached
// from the action table (actiontable.go): each action's own footprint
// (what Footprints.Of adds to the rules of its category), when it is dead
// (Footprints.Dead), and what must change to enable it
// (Footprints.NecessaryInto). footprint.go holds the variables and the
// rules of each category; spec/porbound checks the declarations against
// whole graphs.

// fpAuditor is the own footprint (Footprints.Of) of AuditorMarksLedgerUnderreplicated, AuditorChecksLedger.
func fpAuditor(x fp, a Action) {
	f := x.f
	// The marks merge the bad bookies the audit (the ensembles'
	// bookies that are down) or the check (the stores too) finds.
	if a.Kind == AuditorChecksLedger {
		x.readChecker()
	} else {
		x.readMeta()
		x.readDown()
		x.read(f.Worker())
	}
	x.read(f.URMissing())
	x.write(f.URMissing())
}

// fpWorkerAcquiresLedger is the own footprint (Footprints.Of) of WorkerAcquiresLedger.
func fpWorkerAcquiresLedger(x fp, a Action) {
	f := x.f
	x.read(f.Worker(), f.URMissing())
	x.write(f.Worker())
}

// fpWorkerCopies is the own footprint (Footprints.Of) of WorkerReplicatesFragment, WorkerDiesOnInconsistentRange.
func fpWorkerCopies(x fp, a Action) {
	p := x.f.p
	f := x.f
	// The copies go to the new bookies (Lost) among the writable
	// ones, with their journal and checkpoint records.
	x.readChecker()
	x.readWritable()
	x.write(f.Worker())
	for t := 0; t < p.Bookies; t++ {
		if a.Lost.Has(t) {
			x.read(f.Store(t))
			x.write(f.Store(t))
			if p.Checkpoints && p.FencesCanBeLost() {
				x.read(f.Fence(t))
				x.write(f.Fence(t)) // a fence record queued before the copy is fsynced with it
			}
		}
	}
}

// fpWorkerUpdatesEnsemble is the own footprint (Footprints.Of) of WorkerUpdatesEnsemble.
func fpWorkerUpdatesEnsemble(x fp, a Action) {
	f := x.f
	// The store's fragments only: the version stays (autorecovery.go).
	x.read(f.Worker())
	x.readMeta()
	x.write(f.Worker(), f.MetaFragments())
}

// fpWorkerEndsRereplicate is the own footprint (Footprints.Of) of WorkerDefersLedger, WorkerMarksLedgerReplicated, WorkerReleasesLedger.
func fpWorkerEndsRereplicate(x fp, a Action) {
	p := x.f.p
	f := x.f
	// rereplicate's end, after a check; WorkerReleasesLedger also
	// ends the grace period's recovery, waiting for the admin client
	// and failing it (RECOVERY_ABORTED) when its fencing cannot
	// succeed.
	x.readChecker()
	x.write(f.Worker())
	if a.Kind == WorkerMarksLedgerReplicated {
		x.write(f.URMissing())
	}
	if a.Kind == WorkerReleasesLedger {
		x.readClient(p.AdminClient())
		x.write(f.ClientStatus(p.AdminClient()))
	}
}

// fpWorkerGraceExpires is the own footprint (Footprints.Of) of WorkerGraceExpires.
func fpWorkerGraceExpires(x fp, a Action) {
	p := x.f.p
	f := x.f
	c := int(a.Client)
	// A check, then the lock released or, with the admin client
	// (Client set), its recovery started: ClientStartsRecovery's step
	// (the client's part is above).
	x.readChecker()
	x.readClient(p.AdminClient())
	x.write(f.Worker())
	if c >= 0 {
		x.write(f.Meta())
		x.sentToAny(FenceRequest, false, c, 0, a.Lost)
	}
}

// necWorkerAcquiresLedger is the necessary enabling set (Footprints.NecessaryInto) of WorkerAcquiresLedger.
func necWorkerAcquiresLedger(n necView, a Action) (varList, bool) {
	f := n.f
	s := n.s
	if n.worker(RWIdle) {
		return n.vs, true
	}
	if s.URMissing == 0 {
		n.vs.add(f.URMissing()) // only the Auditor's marks set it
		return n.vs, true
	}
	return n.vs, false
}

// necWorkerLocked is the necessary enabling set (Footprints.NecessaryInto) of WorkerReplicatesFragment, WorkerDiesOnInconsistentRange, WorkerDefersLedger, WorkerMarksLedgerReplicated.
func necWorkerLocked(n necView, a Action) (varList, bool) {
	if n.worker(RWLocked) {
		return n.vs, true
	}
	return n.vs, false
}

// necWorkerReleasesLedger is the necessary enabling set (Footprints.NecessaryInto) of WorkerReleasesLedger.
func necWorkerReleasesLedger(n necView, a Action) (varList, bool) {
	if n.worker(RWLocked, RWRecovering) {
		return n.vs, true
	}
	return n.vs, false
}

// necWorkerUpdatesEnsemble is the necessary enabling set (Footprints.NecessaryInto) of WorkerUpdatesEnsemble.
func necWorkerUpdatesEnsemble(n necView, a Action) (varList, bool) {
	if n.worker(RWCopied) {
		return n.vs, true
	}
	return n.vs, false
}

// necWorkerGraceExpires is the necessary enabling set (Footprints.NecessaryInto) of WorkerGraceExpires.
func necWorkerGraceExpires(n necView, a Action) (varList, bool) {
	if n.worker(RWDeferred) {
		return n.vs, true
	}
	return n.vs, false
}
