package spec

// The partial-order reduction's declarations for the protocol bugs' and ledger deletion's actions (bugs.go), reached
// from the action table (actiontable.go): each action's own footprint
// (what Footprints.Of adds to the rules of its category), when it is dead
// (Footprints.Dead), and what must change to enable it
// (Footprints.NecessaryInto). footprint.go holds the variables and the
// rules of each category; spec/porbound checks the declarations against
// whole graphs.

// fpBookieChecksAdd is the own footprint (Footprints.Of) of BookieChecksAdd.
func fpBookieChecksAdd(x fp, a Action) {
	x.loadsHandle(int(a.Bookie))
	f := x.f
	c := int(a.Client)
	b := int(a.Bookie)
	e := int(a.Entry)
	// A normal add request (left deliverable: the store answers it),
	// the earliest of its channel, to a bookie up, not fenced, not
	// read-only, without a handle, not already checked and not yet
	// answered; it loads the handle (above) and marks the add checked.
	x.read(f.sent(AddEntryRequest, false, c, b, e), f.live(AddEntryRequest, false, c, b, e))
	x.earliest(AddEntryRequest, false, c, b, e)
	x.read(f.sent(AddEntryResponse, false, c, b, e))
	x.read(f.Fence(b), f.ReadOnly(b), f.Store(b), f.Handle(b))
	x.write(f.Store(b))
}

// fpClientDeletesLedger is the own footprint (Footprints.Of) of ClientDeletesLedger.
func fpClientDeletesLedger(x fp, a Action) {
	f := x.f
	c := int(a.Client)
	// Only the client's status and the metadata's (CLOSED, not yet
	// deleted): the rest of the client does not matter to it.
	x.read(f.ClientStatus(c), f.Meta(), f.Deleted())
	x.write(f.Deleted())
}

// fpBookieCollectsLedger is the own footprint (Footprints.Of) of BookieCollectsLedger.
func fpBookieCollectsLedger(x fp, a Action) {
	x.dropsHandle(int(a.Bookie))
	f := x.f
	b := int(a.Bookie)
	// Its entries, LAC, index and checks go, its fence goes or is
	// remembered (in memory, or durably with collect-keeps-fence).
	x.read(f.Deleted(), f.Down(b), f.Store(b), f.Fence(b))
	x.write(f.Store(b), f.Fence(b))
}

// deadBookieFailsRead is the deadness (Footprints.Dead) of BookieFailsRead.
func deadBookieFailsRead(d deadView, a Action) bool {
	f := d.f
	s := d.s
	return int(s.CorruptUsed) >= f.p.CorruptReads || d.spent(ReadRequest, int(a.Bookie), int(a.Entry))
}

// deadClientDeletesLedger is the deadness (Footprints.Dead) of ClientDeletesLedger.
func deadClientDeletesLedger(d deadView, a Action) bool {
	s := d.s
	cl := d.cl
	// Once; and only by a client that closed the ledger, which a
	// client can no longer do once the metadata is closed.
	// With LedgerHandle's close, a client whose close finds the ledger
	// closed alike becomes a closer after the metadata is closed.
	closesLater := d.f.p.CloseRereads && (cl.Status == StatusOpen || cl.Status == StatusClosing || cl.Status == StatusInRecovery)
	return s.MetaDeleted || s.MetaStatus == StatusClosed && cl.Status != StatusClosed && !closesLater ||
		cl.Status == ClientWithdrawn || cl.Status == RecoveryAborted
}

// deadBookieCollectsLedger is the deadness (Footprints.Dead) of BookieCollectsLedger.
func deadBookieCollectsLedger(d deadView, a Action) bool {
	s := d.s
	return s.BCollected.Has(int(a.Bookie)) // once: nothing clears it
}

// necClientDeletesLedger is the necessary enabling set (Footprints.NecessaryInto) of ClientDeletesLedger.
func necClientDeletesLedger(n necView, a Action) (varList, bool) {
	f := n.f
	s := n.s
	// The metadata closed (only a close writes its end), then the
	// client's own close (Dead once the metadata is closed without
	// it, or deleted).
	if !n.is(s.MetaStatus == StatusClosed, f.MetaEnd()) || n.status(StatusClosed) {
		return n.vs, true
	}
	return n.vs, false
}

// necBookieCollectsLedger is the necessary enabling set (Footprints.NecessaryInto) of BookieCollectsLedger: the ledger deleted, the bookie up (once collected it is Dead).
func necBookieCollectsLedger(n necView, a Action) (varList, bool) {
	if !n.s.MetaDeleted {
		n.vs.add(n.f.Deleted())
		return n.vs, true
	}
	if n.s.BDown.Has(n.b) {
		n.vs.add(n.f.Down(n.b))
		return n.vs, true
	}
	return n.vs, false
}
