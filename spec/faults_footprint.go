package spec

// The partial-order reduction's declarations for the bookies' faults (faults.go), reached
// from the action table (actiontable.go): each action's own footprint
// (what Footprints.Of adds to the rules of its category), when it is dead
// (Footprints.Dead), and what must change to enable it
// (Footprints.NecessaryInto). footprint.go holds the variables and the
// rules of each category; spec/porbound checks the declarations against
// whole graphs.

// fpClientFailsToCreateLedger is the own footprint (Footprints.Of) of ClientFailsToCreateLedger.
func fpClientFailsToCreateLedger(x fp, a Action) {
	x.readWritable()
	x.readMeta()
}

// fpBookieBecomesReadOnly is the own footprint (Footprints.Of) of BookieBecomesReadOnly.
func fpBookieBecomesReadOnly(x fp, a Action) {
	f := x.f
	b := int(a.Bookie)
	x.read(f.ReadOnlyBudget(), f.ReadOnly(b))
	x.write(f.ReadOnlyBudget(), f.ReadOnly(b))
}

// fpBookieBecomesWritable is the own footprint (Footprints.Of) of BookieBecomesWritable.
func fpBookieBecomesWritable(x fp, a Action) {
	f := x.f
	b := int(a.Bookie)
	x.read(f.Down(b), f.ReadOnly(b))
	x.write(f.ReadOnly(b))
}

// fpBookieFillsDisk is the own footprint (Footprints.Of) of BookieFillsDisk.
func fpBookieFillsDisk(x fp, a Action) {
	f := x.f
	b := int(a.Bookie)
	x.read(f.DiskFullBudget(), f.ReadOnly(b))
	x.write(f.DiskFullBudget(), f.ReadOnly(b))
}

// fpBookieCrashes is the own footprint (Footprints.Of) of BookieCrashes.
func fpBookieCrashes(x fp, a Action) {
	x.dropsHandle(int(a.Bookie))
	f := x.f
	b := int(a.Bookie)
	// The budget, the bookie's flag, what its journal had not made
	// durable (entries and LAC with a lossy journal: its store; a
	// fence: its fence), and every deliverable message to or from it,
	// now lost (lose), with the reads in flight.
	x.read(f.CrashBudget(), f.Down(b), f.Store(b), f.Fence(b))
	x.write(f.CrashBudget(), f.Down(b), f.Store(b), f.Fence(b))
	x.lose(b)
}

// fpBookieRestarts is the own footprint (Footprints.Of) of BookieRestarts.
func fpBookieRestarts(x fp, a Action) {
	if x.f.p.Decommission {
		x.read(x.f.Decom()) // a decommissioned bookie stays down
	}
	p := x.f.p
	f := x.f
	b := int(a.Bookie)
	x.read(f.Down(b))
	x.write(f.Down(b))
	if p.DataIntegrity {
		// The pre-boot check: started (check pending, in the
		// store), or awaited (limbo and fence) for the ledger the
		// metadata says is open with b in its last ensemble.
		x.readMeta()
		x.read(f.Store(b))
		x.write(f.Store(b))
		x.fence(b)
	}
}

// fpBookieRegistrationExpires is the own footprint (Footprints.Of) of BookieRegistrationExpires.
func fpBookieRegistrationExpires(x fp, a Action) {
	b := int(a.Bookie)
	x.read(x.f.Down(b))
	x.write(x.f.Down(b))
}

// deadBookieRegistrationExpires is the deadness (Footprints.Dead) of BookieRegistrationExpires.
func deadBookieRegistrationExpires(d deadView, a Action) bool {
	f := d.f
	s := d.s
	// Registered or gone, a bookie is stale again only by another stop.
	return !s.BStale.Has(int(a.Bookie)) && int(s.CrashesUsed) >= f.p.Crashes && int(s.DiskLossUsed) >= f.p.DiskLoss
}

// fpBookieCheckpoints is the own footprint (Footprints.Of) of BookieCheckpoints, BookieCheckpointsIdle.
func fpBookieCheckpoints(x fp, a Action) {
	f := x.f
	b := int(a.Bookie)
	// The write cache and the ledger index (master key, fenced flag)
	// flushed or not, the journal's mark past the key and fence
	// records: all of it in the bookie's store and fence.
	x.read(f.Down(b), f.Store(b), f.Fence(b))
	x.write(f.Store(b), f.Fence(b))
}

// fpBookieRunsPreBootCheck is the own footprint (Footprints.Of) of BookieRunsPreBootCheck.
func fpBookieRunsPreBootCheck(x fp, a Action) {
	f := x.f
	b := int(a.Bookie)
	// The deferred check runs on a bookie that is up and has one
	// pending: limbo and fence, from the metadata as it is now.
	x.read(f.Down(b), f.Store(b))
	x.write(f.Store(b))
	x.readMeta()
	x.fence(b)
}

// fpBookieRejoinsEmpty is the own footprint (Footprints.Of) of BookieRejoinsEmpty.
func fpBookieRejoinsEmpty(x fp, a Action) {
	if x.f.p.Decommission {
		x.read(x.f.Decom()) // a decommissioned bookie stays down
	}
	x.dropsHandle(int(a.Bookie))
	f := x.f
	b := int(a.Bookie)
	// An operator wipes the bookie (its store, limbo included, and
	// its fence) once the ledger exists, and its connections break;
	// with the cookie kept, the pre-boot check fences it from the
	// metadata.
	x.readMeta()
	x.read(f.ReformatBudget(), f.Down(b), f.Store(b), f.Fence(b))
	x.write(f.ReformatBudget(), f.Down(b), f.Store(b), f.Fence(b))
	x.lose(b)
}

// fpBookieLosesDisk is the own footprint (Footprints.Of) of BookieLosesDisk.
func fpBookieLosesDisk(x fp, a Action) {
	x.dropsHandle(int(a.Bookie))
	f := x.f
	b := int(a.Bookie)
	// The disk is wiped once the ledger exists, the bookie goes down
	// and stays down (wiped), its connections break.
	x.readMeta()
	x.read(f.DiskLossBudget(), f.Down(b), f.Store(b), f.Fence(b))
	x.write(f.DiskLossBudget(), f.Down(b), f.Store(b), f.Fence(b))
	x.lose(b)
}

// fpBookieSyncsJournal is the own footprint (Footprints.Of) of BookieSyncsJournal.
func fpBookieSyncsJournal(x fp, a Action) {
	f := x.f
	b := int(a.Bookie)
	x.read(f.Down(b), f.Store(b), f.Fence(b))
	x.write(f.Store(b), f.Fence(b))
}

// deadClientFailsToCreateLedger is the deadness (Footprints.Dead) of ClientFailsToCreateLedger.
func deadClientFailsToCreateLedger(d deadView, a Action) bool {
	s := d.s
	cl := d.cl
	return s.MetaStatus != StatusNil || cl.Status != StatusNil
}

// deadBookieCrashes is the deadness (Footprints.Dead) of BookieCrashes.
func deadBookieCrashes(d deadView, a Action) bool {
	f := d.f
	s := d.s
	// The budget only grows.
	return int(s.CrashesUsed) >= f.p.Crashes
}

// deadBookieRestarts is the deadness (Footprints.Dead) of BookieRestarts.
func deadBookieRestarts(d deadView, a Action) bool {
	f := d.f
	s := d.s
	// Up, it goes down again only by a crash; decommissioned, it
	// stays down.
	return !s.BDown.Has(int(a.Bookie)) && int(s.CrashesUsed) >= f.p.Crashes || s.DecomBookie.Has(int(a.Bookie))
}

// deadBookieRejoinsEmpty is the deadness (Footprints.Dead) of BookieRejoinsEmpty.
func deadBookieRejoinsEmpty(d deadView, a Action) bool {
	f := d.f
	s := d.s
	return int(s.ReformatUsed) >= f.p.Reformat
}

// deadBookieLosesDisk is the deadness (Footprints.Dead) of BookieLosesDisk.
func deadBookieLosesDisk(d deadView, a Action) bool {
	f := d.f
	s := d.s
	return int(s.DiskLossUsed) >= f.p.DiskLoss
}

// deadBookieBecomesReadOnly is the deadness (Footprints.Dead) of BookieBecomesReadOnly.
func deadBookieBecomesReadOnly(d deadView, a Action) bool {
	f := d.f
	s := d.s
	return int(s.ReadOnlyUsed) >= f.p.ReadOnly
}

// deadBookieBecomesWritable is the deadness (Footprints.Dead) of BookieBecomesWritable.
func deadBookieBecomesWritable(d deadView, a Action) bool {
	f := d.f
	s := d.s
	b := int(a.Bookie)
	// Full for good, or writable with no read-only turn left.
	return s.BDiskFull.Has(b) || !s.BReadOnly.Has(b) && int(s.ReadOnlyUsed) >= f.p.ReadOnly
}

// deadBookieFillsDisk is the deadness (Footprints.Dead) of BookieFillsDisk.
func deadBookieFillsDisk(d deadView, a Action) bool {
	f := d.f
	s := d.s
	return int(s.DiskFullUsed) >= f.p.DiskFull
}
