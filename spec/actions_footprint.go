package spec

// The partial-order reduction's declarations for the TLA+ spec's actions (actions.go), reached
// from the action table (actiontable.go): each action's own footprint
// (what Footprints.Of adds to the rules of its category), when it is dead
// (Footprints.Dead), and what must change to enable it
// (Footprints.NecessaryInto). footprint.go holds the variables and the
// rules of each category; spec/porbound checks the declarations against
// whole graphs.

// fpBookieAnswersAdd is the own footprint (Footprints.Of) of BookieSendsAddConfirmedResponse, BookieSendsAddFencedResponse, BookieSendsAddReadOnlyResponse.
func fpBookieAnswersAdd(x fp, a Action) {
	x.read(x.f.ReadOnly(int(a.Bookie))) // a read-only bookie answers EREADONLY first
	if a.Kind != BookieSendsAddReadOnlyResponse {
		x.loadsHandle(int(a.Bookie))
	}
	p := x.f.p
	f := x.f
	v := x.f.p.variant()
	respLost := a.Lost != 0
	c := int(a.Client)
	b := int(a.Bookie)
	e := int(a.Entry)
	// The label does not say whether the add is a recovery add.
	for _, rec := range []bool{false, true} {
		x.received(AddEntryRequest, rec, c, b, e)
		x.earliest(AddEntryRequest, rec, c, b, e)
		if a.Kind == BookieSendsAddConfirmedResponse {
			x.sentTo(AddEntryResponse, rec, c, b, e, respLost)
		} else {
			x.sentTo(addRejected, rec, c, b, e, respLost)
		}
	}
	if a.Kind == BookieSendsAddReadOnlyResponse {
		return // EREADONLY before the fence is looked at
	}
	x.read(f.Fence(b))
	if p.DeleteLedger {
		x.read(f.Store(b)) // refusesEveryAdd: the collection
	}
	if v.AddChecksMetadata || v.SplitAddCheck {
		x.read(f.Store(b)) // split-add-check: the adds checked
	}
	if v.AddChecksMetadata {
		x.readMeta()
	}
	if v.SplitAddCheck && a.Kind == BookieSendsAddConfirmedResponse {
		x.read(f.Handle(b)) // mayStore: without a handle, only a checked add
	}
	if a.Kind == BookieSendsAddConfirmedResponse {
		x.read(f.Store(b)) // gwq: LAC and LAFR are running maxima
		x.write(f.Store(b))
		if p.Checkpoints && p.FencesCanBeLost() {
			x.write(f.Fence(b)) // a fence record queued before the add is fsynced with it
		}
	}
}

// fpBookieSendsFencingReadLacResponse is the own footprint (Footprints.Of) of BookieSendsFencingReadLacResponse.
func fpBookieSendsFencingReadLacResponse(x fp, a Action) {
	x.loadsHandle(int(a.Bookie))
	f := x.f
	respLost := a.Lost != 0
	c := int(a.Client)
	b := int(a.Bookie)
	x.received(FenceRequest, false, c, b, 0)
	x.sentTo(FenceResponse, false, c, b, 0, respLost)
	x.read(f.Store(b))
	x.fence(b)
}

// fpBookieAnswersRead is the own footprint (Footprints.Of) of BookieSendsReadResponse, BookieFailsRead.
func fpBookieAnswersRead(x fp, a Action) {
	x.loadsHandle(int(a.Bookie))
	f := x.f
	respLost := a.Lost != 0
	c := int(a.Client)
	b := int(a.Bookie)
	e := int(a.Entry)
	// A failed read (an error, or NoSuchEntry with variant
	// corrupt-read-nosuch) answers the same request in the same slot.
	if a.Kind == BookieFailsRead {
		x.read(f.CorruptBudget())
		x.write(f.CorruptBudget())
	}
	x.received(ReadRequest, false, c, b, e)
	x.sentTo(ReadResponse, false, c, b, e, respLost)
	x.read(f.Store(b))
	x.fence(b) // with fencing reads (the reference)
	if respLost {
		x.write(f.inflight(c, b, e))
	}
}

// fpMetadataWrite is the own footprint (Footprints.Of) of ClientCreatesLedger, ClientClosesLedgerSuccess, RecoveryClientClosesLedger.
func fpMetadataWrite(x fp, a Action) {
	if x.f.p.AutoRecovery && a.Kind == RecoveryClientClosesLedger {
		x.write(x.f.ClientFragments(int(a.Client))) // keepStoreFragments: the store's, where a worker replaced a bookie
	}
	f := x.f
	if a.Kind == ClientCreatesLedger {
		x.readWritable() // only writable bookies join an ensemble
	}
	x.readMeta()
	x.write(f.Meta())
	if a.Kind != ClientClosesLedgerSuccess {
		x.write(f.MetaFragments())
	}
	if a.Kind != ClientCreatesLedger {
		x.write(f.MetaEnd())
	}
}

// fpClientClosesLedgerFail is the own footprint (Footprints.Of) of ClientClosesLedgerFail.
func fpClientClosesLedgerFail(x fp, a Action) {
	x.readMeta()
}

// fpWriterSendsAdd is the own footprint (Footprints.Of) of ClientSendsAddEntryRequests, ClientResendsPendingAddOp.
func fpWriterSendsAdd(x fp, a Action) {
	p := x.f.p
	c := int(a.Client)
	e := int(a.Entry)
	x.sentToAny(AddEntryRequest, false, c, e, a.Lost)
	if p.JavaAddPath() {
		x.writerAdds(c, false) // deferredAdd: whether the last op's writes went out
	}
}

// fpRecoveryClientSendsPendingAddOp is the own footprint (Footprints.Of) of RecoveryClientSendsPendingAddOp.
func fpRecoveryClientSendsPendingAddOp(x fp, a Action) {
	c := int(a.Client)
	e := int(a.Entry)
	x.sentToAny(AddEntryRequest, true, c, e, a.Lost)
}

// fpClientWritesBackEntry is the own footprint (Footprints.Of) of ClientWritesBackEntry.
func fpClientWritesBackEntry(x fp, a Action) {
	p := x.f.p
	f := x.f
	c := int(a.Client)
	e := int(a.Entry)
	for b := 0; b < p.Bookies; b++ {
		for e2 := 1; e2 <= p.Entries; e2++ {
			x.read(f.sent(AddEntryRequest, true, c, b, e2)) // notSentWrite
		}
	}
	x.sentToAny(AddEntryRequest, true, c, e, a.Lost)
	if p.JavaAddPath() {
		// A completed write-back's failure, handled at this one's
		// initiate, fails the recovery (abortRecovery) or, with a
		// spare, replaces the bookie (writeBackAfterDelayedFailure):
		// among the writable bookies, a new fragment, acks unset, its
		// lost messages cleared.
		x.write(f.Client(c), f.ClientStatus(c), f.ClientRecovery(c))
		if needSpare.ok(p) {
			x.readWritable()
			x.write(f.ClientFragments(c))
			for b := 0; b < p.Bookies; b++ {
				for e2 := 1; e2 <= p.Entries; e2++ {
					for _, t := range []MsgType{AddEntryRequest, AddEntryResponse, addRejected} {
						x.read(f.lost(t, true, c, b, e2))
						x.write(f.lost(t, true, c, b, e2))
					}
				}
			}
		}
	}
}

// fpWriterReceivesAddAnswer is the own footprint (Footprints.Of) of ClientReceivesAddErrorResponse, ClientReceivesAddConfirmedResponse, ClientReceivesAddFencedResponse.
func fpWriterReceivesAddAnswer(x fp, a Action) {
	p := x.f.p
	c := int(a.Client)
	b := int(a.Bookie)
	e := int(a.Entry)
	if a.Kind == ClientReceivesAddErrorResponse {
		x.failed(c, b, e)
	}
	switch {
	case p.JavaAddPath():
		// javaReceivesAddResponse: any add response of the writer,
		// the earliest of its channel, through writeComplete (the
		// handle's record, written above); an EREADONLY answer may
		// also be the recovery client's (faults.go), as above.
		x.receivedResponse(false, false, c, b, e)
		x.receivedResponse(true, false, c, b, e)
	case a.Kind != ClientReceivesAddErrorResponse:
		x.receivedResponse(a.Kind == ClientReceivesAddFencedResponse, false, c, b, e)
	}
}

// fpRecoveryClientReceivesAddConfirmedResponse is the own footprint (Footprints.Of) of RecoveryClientReceivesAddConfirmedResponse.
func fpRecoveryClientReceivesAddConfirmedResponse(x fp, a Action) {
	c := int(a.Client)
	b := int(a.Bookie)
	e := int(a.Entry)
	x.receivedResponse(false, true, c, b, e)
}

// fpSpecEnsembleChange is the own footprint (Footprints.Of) of ClientChangesEnsemble, RecoveryClientChangesEnsemble.
func fpSpecEnsembleChange(x fp, a Action) {
	p := x.f.p
	f := x.f
	c := int(a.Client)
	rec := a.Kind == RecoveryClientChangesEnsemble
	x.readWritable()
	x.readMeta()
	if !rec {
		x.write(f.Meta(), f.MetaFragments())
	}
	for b := 0; b < p.Bookies; b++ {
		for e2 := 1; e2 <= p.Entries; e2++ {
			for _, t := range []MsgType{AddEntryRequest, AddEntryResponse, addRejected} {
				x.read(f.lost(t, rec, c, b, e2))
				if a.Lost.Has(b) {
					x.write(f.lost(t, rec, c, b, e2)) // ClearWriteTimeout
				}
			}
		}
	}
}

// fpClientStartsRecovery is the own footprint (Footprints.Of) of ClientStartsRecovery.
func fpClientStartsRecovery(x fp, a Action) {
	f := x.f
	c := int(a.Client)
	x.readMeta()
	x.write(f.Meta())
	x.sentToAny(FenceRequest, false, c, 0, a.Lost)
}

// fpClientReceivesFencingReadLacResponse is the own footprint (Footprints.Of) of ClientReceivesFencingReadLacResponse.
func fpClientReceivesFencingReadLacResponse(x fp, a Action) {
	c := int(a.Client)
	b := int(a.Bookie)
	x.received(FenceResponse, false, c, b, 0)
}

// fpRecoveryRead is the own footprint (Footprints.Of) of ClientSendsRecoveryReadRequests, ClientSendsNextRecoveryRead.
func fpRecoveryRead(x fp, a Action) {
	p := x.f.p
	f := x.f
	c := int(a.Client)
	e := int(a.Entry)
	// A sequence read's first request, or its next one: to a member
	// of the write set (the first, or the next one asked) that the
	// label does not name.
	x.readMeta()
	x.sentToAny(ReadRequest, false, c, e, a.Lost)
	for b := 0; b < p.Bookies; b++ {
		x.write(f.inflight(c, b, e))
	}
}

// fpClientReceivesRecoveryReadResponse is the own footprint (Footprints.Of) of ClientReceivesRecoveryReadResponse.
func fpClientReceivesRecoveryReadResponse(x fp, a Action) {
	p := x.f.p
	f := x.f
	c := int(a.Client)
	b := int(a.Bookie)
	e := int(a.Entry)
	x.readMeta()
	x.write(f.inflight(c, b, e))
	x.received(ReadResponse, false, c, b, e)
	for b := 0; b < p.Bookies; b++ {
		for e2 := 1; e2 < f.entries; e2++ {
			x.read(f.inflight(c, b, e2), f.lost(ReadRequest, false, c, b, e2), f.lost(ReadResponse, false, c, b, e2))
		}
	}
}

// deadClientCreatesLedger is the deadness (Footprints.Dead) of ClientCreatesLedger.
func deadClientCreatesLedger(d deadView, a Action) bool {
	s := d.s
	return s.MetaStatus != StatusNil
}

// deadClientSendsAddEntryRequests is the deadness (Footprints.Dead) of ClientSendsAddEntryRequests.
func deadClientSendsAddEntryRequests(d deadView, a Action) bool {
	cl := d.cl
	return d.writerDead() || cl.LAP >= a.Entry
}

// deadNeedsOpenMetadata is the deadness (Footprints.Dead) of ClientChangesEnsemble, ClientClosesLedgerSuccess.
func deadNeedsOpenMetadata(d deadView, a Action) bool {
	f := d.f
	s := d.s
	// Both need the metadata OPEN, which it never is again once it
	// left OPEN; with --close-rereads the close also writes over
	// IN_RECOVERY, never over CLOSED.
	if a.Kind == ClientClosesLedgerSuccess && f.p.CloseRereads {
		// A closed ledger still lets it succeed at the entry it was
		// closed at, which a closing writer's frozen LAC, or a LAC past
		// it, never reaches.
		cl := d.cl
		return d.closerDead() || s.MetaDeleted || s.MetaStatus == StatusClosed &&
			(cl.LAC > s.MetaLastEntry || cl.Status == StatusClosing && cl.LAC != s.MetaLastEntry)
	}
	return d.writerDead() || s.MetaStatus != StatusNil && s.MetaStatus != StatusOpen
}

// deadWriterGone is the deadness (Footprints.Dead) of ClientReceivesAddConfirmedResponse, ClientReceivesAddFencedResponse, ClientResendsPendingAddOp, ClientClosesLedgerFail.
func deadWriterGone(d deadView, a Action) bool {
	if a.Kind == ClientClosesLedgerFail {
		return d.closerDead()
	}
	return d.writerDead()
}

// deadClientStartsRecovery is the deadness (Footprints.Dead) of ClientStartsRecovery.
func deadClientStartsRecovery(d deadView, a Action) bool {
	f := d.f
	s := d.s
	cl := d.cl
	c := d.c
	// The admin client recovers only when the worker's grace
	// period ends (WorkerGraceExpires).
	return cl.Status != StatusNil || s.MetaStatus == StatusClosed || c == f.p.AdminClient()
}

// deadRecoveryRead is the deadness (Footprints.Dead) of ClientSendsRecoveryReadRequests, ClientSendsNextRecoveryRead.
func deadRecoveryRead(d deadView, a Action) bool {
	cl := d.cl
	if cl.Status == RecoveryAborted && a.Kind == ClientSendsNextRecoveryRead {
		return cl.CurrReadEntry != a.Entry // the zombie read's (abortRecovery)
	}
	return d.recoveryDead() || cl.Status == StatusInRecovery && (cl.LastRecoverable != Nil || cl.LAP >= a.Entry)
}

// deadClientReceivesFencingReadLacResponse is the deadness (Footprints.Dead) of ClientReceivesFencingReadLacResponse.
func deadClientReceivesFencingReadLacResponse(d deadView, a Action) bool {
	// An aborted recovery still reads (and drops) an answer in flight.
	return d.recoveryDead() && d.cl.Status != RecoveryAborted || d.spent(FenceResponse, int(a.Bookie), 0)
}

// deadClientReceivesRecoveryReadResponse is the deadness (Footprints.Dead) of ClientReceivesRecoveryReadResponse.
func deadClientReceivesRecoveryReadResponse(d deadView, a Action) bool {
	if d.cl.Status == RecoveryAborted && d.cl.CurrReadEntry == a.Entry {
		return d.spent(ReadResponse, int(a.Bookie), int(a.Entry)) // the zombie read's (abortRecovery)
	}
	return d.recoveryDead() || d.spent(ReadResponse, int(a.Bookie), int(a.Entry))
}

// deadClientWritesBackEntry is the deadness (Footprints.Dead) of ClientWritesBackEntry.
func deadClientWritesBackEntry(d deadView, a Action) bool {
	s := d.s
	c := d.c
	// A recovery client adds a pending op of each entry id once (the
	// read of entry LAP+1 that found it), so once it sent a write-back
	// of the id it never writes that id back again.
	if d.recoveryDead() {
		return true
	}
	for _, m := range s.Msgs {
		if k := m.Key; k.Type() == AddEntryRequest && k.Recovery() && k.Cid() == c && k.Entry().ID == a.Entry {
			return true
		}
	}
	return false
}

// deadRecoveryGone is the deadness (Footprints.Dead) of RecoveryClientReceivesAddConfirmedResponse, RecoveryClientSendsPendingAddOp.
func deadRecoveryGone(d deadView, a Action) bool {
	return d.recoveryDead()
}

// deadRecoveryOrClosed is the deadness (Footprints.Dead) of RecoveryClientChangesEnsemble, RecoveryClientClosesLedger.
func deadRecoveryOrClosed(d deadView, a Action) bool {
	s := d.s
	if a.Kind == RecoveryClientClosesLedger && d.f.p.CloseRereads {
		return d.recoveryDead() // a ledger closed meanwhile lets it succeed
	}
	if a.Kind == RecoveryClientChangesEnsemble && d.f.p.JavaAddPath() {
		return d.recoveryDead() // the handle's own ensemble (ReadOnlyLedgerHandle.handleBookieFailure)
	}
	return d.recoveryDead() || s.MetaStatus == StatusClosed
}

// deadBookieSendsFencingReadLacResponse is the deadness (Footprints.Dead) of BookieSendsFencingReadLacResponse.
func deadBookieSendsFencingReadLacResponse(d deadView, a Action) bool {
	return d.spent(FenceRequest, int(a.Bookie), 0)
}

// deadBookieSendsReadResponse is the deadness (Footprints.Dead) of BookieSendsReadResponse.
func deadBookieSendsReadResponse(d deadView, a Action) bool {
	return d.spent(ReadRequest, int(a.Bookie), int(a.Entry))
}

// necClientSendsAddEntryRequests is the necessary enabling set (Footprints.NecessaryInto) of ClientSendsAddEntryRequests.
func necClientSendsAddEntryRequests(n necView, a Action) (varList, bool) {
	f := n.f
	cl := n.cl
	c := n.c
	if n.status(StatusOpen) || !n.is(cl.LAP+1 == a.Entry, f.Client(c)) {
		return n.vs, true
	}
	n.own(false)
	return n.vs, true
}

// necClientResendsPendingAddOp is the necessary enabling set (Footprints.NecessaryInto) of ClientResendsPendingAddOp.
func necClientResendsPendingAddOp(n necView, a Action) (varList, bool) {
	if n.status(StatusOpen) || !n.pendingOf(true) {
		return n.vs, true
	}
	n.own(false)
	return n.vs, true
}

// necRecoveryClientSendsPendingAddOp is the necessary enabling set (Footprints.NecessaryInto) of RecoveryClientSendsPendingAddOp.
func necRecoveryClientSendsPendingAddOp(n necView, a Action) (varList, bool) {
	if n.status(StatusInRecovery) || !n.pendingOf(true) {
		return n.vs, true
	}
	n.own(false)
	return n.vs, true
}

// necClientWritesBackEntry is the necessary enabling set (Footprints.NecessaryInto) of ClientWritesBackEntry.
func necClientWritesBackEntry(n necView, a Action) (varList, bool) {
	f := n.f
	cl := n.cl
	c := n.c
	e := n.e
	if n.status(StatusInRecovery) || !n.pendingOf(false) || !n.is(cl.RecoveryPhase == ReadWritePhase, f.ClientRecovery(c)) {
		return n.vs, true
	}
	// A write-back waits for those of lower pending entries
	// (notSentWrite): sending one enables it.
	for b := 0; b < f.p.Bookies; b++ {
		for e2 := 1; e2 < e; e2++ {
			n.vs.add(f.sent(AddEntryRequest, true, c, b, e2))
		}
	}
	n.own(false)
	return n.vs, true
}

// necClientSendsNextRecoveryRead is the necessary enabling set (Footprints.NecessaryInto) of ClientSendsNextRecoveryRead.
func necClientSendsNextRecoveryRead(n necView, a Action) (varList, bool) {
	f := n.f
	cl := n.cl
	c := n.c
	// Its guard but the send is the client's own: reading entry e,
	// with a member of the write set not yet asked.
	ok := cl.RecoveryPhase == ReadWritePhase && cl.CurrReadEntry == a.Entry && int(cl.ReadNext) < f.p.WriteQuorum
	if n.status(StatusInRecovery, RecoveryAborted) || !n.is(ok, f.ClientRecovery(c)) {
		return n.vs, true
	}
	n.own(true)
	return n.vs, true
}

// necClientSendsRecoveryReadRequests is the necessary enabling set (Footprints.NecessaryInto) of ClientSendsRecoveryReadRequests.
func necClientSendsRecoveryReadRequests(n necView, a Action) (varList, bool) {
	f := n.f
	cl := n.cl
	c := n.c
	// Its guard but the sends is the client's own: the phase, the
	// fencing coverage, the entry it reads next.
	ok := cl.RecoveryPhase == ReadWritePhase && cl.LastRecoverable == Nil && cl.CurrReadEntry == Nil ||
		cl.RecoveryPhase == FencingPhase && (&gen{p: f.p}).fenceCovered(cl)
	if n.status(StatusInRecovery) || !n.is(ok && cl.LAP+1 == a.Entry, f.ClientRecovery(c), f.Client(c)) {
		return n.vs, true
	}
	n.own(true)
	return n.vs, true
}

// necClientStartsRecovery is the necessary enabling set (Footprints.NecessaryInto) of ClientStartsRecovery.
func necClientStartsRecovery(n necView, a Action) (varList, bool) {
	s := n.s
	if n.status(StatusNil) || !n.is(s.MetaStatus == StatusOpen || s.MetaStatus == StatusInRecovery, n.metaVars()...) {
		return n.vs, true
	}
	n.own(true)
	return n.vs, true
}

// necRecoveryClientClosesLedger is the necessary enabling set (Footprints.NecessaryInto) of RecoveryClientClosesLedger.
func necRecoveryClientClosesLedger(n necView, a Action) (varList, bool) {
	f := n.f
	s := n.s
	cl := n.cl
	c := n.c
	alike := f.p.CloseRereads && (s.MetaStatus == StatusClosed || s.MetaDeleted)
	if n.status(StatusInRecovery) || !n.is(s.MetaStatus == StatusInRecovery || alike, append(n.metaVars(), f.ClientRecovery(c))...) ||
		!n.is(cl.RecoveryPhase == ReadWritePhase && cl.LastRecoverable != Nil, f.ClientRecovery(c)) ||
		!n.is(cl.NumPending == 0, f.ClientPending(c)) {
		return n.vs, true
	}
	return n.vs, false
}

// necClientClosesLedgerSuccess is the necessary enabling set (Footprints.NecessaryInto) of ClientClosesLedgerSuccess.
func necClientClosesLedgerSuccess(n necView, a Action) (varList, bool) {
	f := n.f
	s := n.s
	ok := s.MetaStatus == StatusOpen || f.p.CloseRereads && (s.MetaStatus == StatusInRecovery || closedAlike(s, n.cl.LAC))
	if n.status(StatusOpen, StatusClosing) || !n.is(ok, append(n.metaVars(), f.ClientLAC(n.c))...) {
		return n.vs, true
	}
	return n.vs, false
}

// necClientClosesLedgerFail is the necessary enabling set (Footprints.NecessaryInto) of ClientClosesLedgerFail.
func necClientClosesLedgerFail(n necView, a Action) (varList, bool) {
	f := n.f
	s := n.s
	// With --close-rereads only a closed (or deleted) ledger makes
	// the close fail.
	ok := s.MetaStatus != StatusOpen && (!f.p.CloseRereads || s.MetaDeleted || s.MetaStatus != StatusInRecovery && !closedAlike(s, n.cl.LAC))
	if n.status(StatusOpen, StatusClosing) || !n.is(ok, append(n.metaVars(), f.ClientLAC(n.c))...) {
		return n.vs, true
	}
	return n.vs, false
}

// necBookieSendsAddConfirmedResponse is the necessary enabling set (Footprints.NecessaryInto) of BookieSendsAddConfirmedResponse.
func necBookieSendsAddConfirmedResponse(n necView, a Action) (varList, bool) {
	f := n.f
	s := n.s
	b := n.b
	if n.noLive(AddEntryRequest, false, true) {
		return n.vs, true
	}
	// A fenced bookie stays fenced (nothing but faults and deletion
	// unfences it): only a recovery add can enable it, or a crash
	// that takes back a fence not yet durable.
	if s.BFenced.Has(b) {
		n.vs = n.vs[:0]
		switch {
		case f.p.FencesCanBeLost() || f.p.Reformat > 0 || f.p.DiskLoss > 0, f.p.DeleteLedger && s.MetaDeleted:
			n.vs.add(f.Fence(b))
		case f.p.DeleteLedger:
			// Only the collection of the deleted ledger (and a
			// crash after it) can unfence: the deletion comes first.
			n.vs.add(f.Deleted())
		}
		if n.noLive(AddEntryRequest, true) {
			return n.vs, true
		}
	}
	return n.vs, false
}

// necBookieSendsAddFencedResponse is the necessary enabling set (Footprints.NecessaryInto) of BookieSendsAddFencedResponse.
func necBookieSendsAddFencedResponse(n necView, a Action) (varList, bool) {
	f := n.f
	s := n.s
	b := n.b
	// With --delete-ledger it answers a recovery add too, once the bookie
	// collected the ledger and remembers it fenced (refusesEveryAdd):
	// its reads are the set.
	if f.p.DeleteLedger {
		return n.vs, false
	}
	// Otherwise it answers only non-recovery adds, and only once fenced.
	if n.noLive(AddEntryRequest, false) {
		return n.vs, true
	}
	if !s.BFenced.Has(b) && !f.p.variant().AddChecksMetadata {
		n.vs.add(f.Fence(b))
		return n.vs, true
	}
	return n.vs, false
}

// necBookieSendsFencingReadLacResponse is the necessary enabling set (Footprints.NecessaryInto) of BookieSendsFencingReadLacResponse.
func necBookieSendsFencingReadLacResponse(n necView, a Action) (varList, bool) {
	if n.noLive(FenceRequest, false) {
		return n.vs, true
	}
	return n.vs, false
}

// necBookieSendsReadResponse is the necessary enabling set (Footprints.NecessaryInto) of BookieSendsReadResponse.
func necBookieSendsReadResponse(n necView, a Action) (varList, bool) {
	if n.noLive(ReadRequest, false) {
		return n.vs, true
	}
	return n.vs, false
}

// necClientReceivesAddConfirmedResponse is the necessary enabling set (Footprints.NecessaryInto) of ClientReceivesAddConfirmedResponse.
func necClientReceivesAddConfirmedResponse(n necView, a Action) (varList, bool) {
	f := n.f
	cl := n.cl
	c := n.c
	if n.status(StatusOpen) || n.noLive(AddEntryResponse, false) {
		return n.vs, true
	}
	if f.p.JavaAddPath() && !n.is(cl.Change != ChangeCompleting, f.ClientChange(c)) {
		return n.vs, true
	}
	return n.vs, false
}

// necClientReceivesAddFencedResponse is the necessary enabling set (Footprints.NecessaryInto) of ClientReceivesAddFencedResponse.
func necClientReceivesAddFencedResponse(n necView, a Action) (varList, bool) {
	if n.status(StatusOpen) || n.noLive(addRejected, false) {
		return n.vs, true
	}
	return n.vs, false
}

// necRecoveryClientReceivesAddConfirmedResponse is the necessary enabling set (Footprints.NecessaryInto) of RecoveryClientReceivesAddConfirmedResponse.
func necRecoveryClientReceivesAddConfirmedResponse(n necView, a Action) (varList, bool) {
	if n.status(StatusInRecovery) || n.noLive(AddEntryResponse, true) {
		return n.vs, true
	}
	return n.vs, false
}

// necClientReceivesFencingReadLacResponse is the necessary enabling set (Footprints.NecessaryInto) of ClientReceivesFencingReadLacResponse.
func necClientReceivesFencingReadLacResponse(n necView, a Action) (varList, bool) {
	if n.status(StatusInRecovery, RecoveryAborted) || n.noLive(FenceResponse, false) {
		return n.vs, true
	}
	return n.vs, false
}

// necClientReceivesRecoveryReadResponse is the necessary enabling set (Footprints.NecessaryInto) of ClientReceivesRecoveryReadResponse.
func necClientReceivesRecoveryReadResponse(n necView, a Action) (varList, bool) {
	if n.status(StatusInRecovery, RecoveryAborted) || n.noLive(ReadResponse, false) {
		return n.vs, true
	}
	return n.vs, false
}

// necSpecEnsembleChange is the necessary enabling set (Footprints.NecessaryInto) of ClientChangesEnsemble, RecoveryClientChangesEnsemble.
func necSpecEnsembleChange(n necView, a Action) (varList, bool) {
	f := n.f
	s := n.s
	cl := n.cl
	c := n.c
	// The node of every replaced set: disabled for all of them. A
	// change needs a timed-out bookie of the current ensemble: with
	// none, a loss to or from one of them (or a new ensemble).
	rec := a.Kind == RecoveryClientChangesEnsemble
	want := StatusOpen
	if rec {
		want = StatusInRecovery
	}
	if n.status(want) || !n.is(cl.NoPendingResends(), f.ClientPending(c)) {
		return n.vs, true
	}
	cf, _ := cl.CurrFragment()
	timedOut := false
	for b := 0; b < f.p.Bookies; b++ {
		timedOut = timedOut || cf.Ensemble.Has(b) && s.changeTimeout(f.p, c, b, rec)
	}
	if !timedOut {
		n.vs.add(f.ClientFragments(c))
		if rec && f.p.JavaAddPath() {
			// A lost write-back of an op not yet completed: the
			// ops and their acks (changeTimeout).
			n.vs.add(f.Client(c))
			n.vs.add(f.ClientPending(c))
		}
		for b := 0; b < f.p.Bookies; b++ {
			for e := 1; cf.Ensemble.Has(b) && e <= f.p.Entries; e++ {
				for _, t := range []MsgType{AddEntryRequest, AddEntryResponse, addRejected} {
					n.vs.add(f.lost(t, rec, c, b, e))
				}
			}
		}
		return n.vs, true
	}
	return n.vs, false
}

// fpRecoveryClientFencingFails is the own footprint (Footprints.Of) of RecoveryClientFencingFails.
func fpRecoveryClientFencingFails(x fp, a Action) {
	f := x.f
	c := int(a.Client)
	// Every fencing read of the client answered or failed.
	for b := 0; b < f.p.Bookies; b++ {
		for _, t := range []MsgType{FenceRequest, FenceResponse} {
			x.read(f.live(t, false, c, b, 0))
		}
	}
}

// deadRecoveryClientFencingFails is the deadness (Footprints.Dead) of RecoveryClientFencingFails.
func deadRecoveryClientFencingFails(d deadView, a Action) bool {
	// The phase only moves on from fencing.
	return d.recoveryDead() || d.cl.Status == StatusInRecovery && d.cl.RecoveryPhase != FencingPhase
}

// necRecoveryClientFencingFails is the necessary enabling set (Footprints.NecessaryInto) of RecoveryClientFencingFails.
func necRecoveryClientFencingFails(n necView, a Action) (varList, bool) {
	f := n.f
	cl := n.cl
	c := n.c
	// In the fencing phase without coverage (the client's own), and
	// no fencing read of it still deliverable.
	if n.status(StatusInRecovery) || !n.is(cl.RecoveryPhase == FencingPhase && !(&gen{p: f.p}).fenceCovered(cl), f.ClientRecovery(c)) {
		return n.vs, true
	}
	for b := 0; b < f.p.Bookies; b++ {
		for _, t := range []MsgType{FenceRequest, FenceResponse} {
			n.vs.add(f.live(t, false, c, b, 0))
		}
	}
	return n.vs, true
}

// fpRecoveryClientReadFails is the own footprint (Footprints.Of) of RecoveryClientReadFails.
func fpRecoveryClientReadFails(x fp, a Action) {
	f := x.f
	c := int(a.Client)
	e := int(a.Entry)
	// Every read of the entry answered or lost.
	for b := 0; b < f.p.Bookies; b++ {
		x.read(f.inflight(c, b, e))
		for _, t := range []MsgType{ReadRequest, ReadResponse} {
			x.read(f.live(t, false, c, b, e), f.lost(t, false, c, b, e))
		}
	}
}

// deadRecoveryClientReadFails is the deadness (Footprints.Dead) of RecoveryClientReadFails.
func deadRecoveryClientReadFails(d deadView, a Action) bool {
	cl := d.cl
	if cl.Status == RecoveryAborted {
		return cl.CurrReadEntry != a.Entry // the zombie read's (abortRecovery)
	}
	// A recovery reads each entry once, in order, until its reads end.
	return d.recoveryDead() || cl.Status == StatusInRecovery && (cl.LastRecoverable != Nil || cl.LAP >= a.Entry)
}

// necRecoveryClientReadFails is the necessary enabling set (Footprints.NecessaryInto) of RecoveryClientReadFails.
func necRecoveryClientReadFails(n necView, a Action) (varList, bool) {
	f := n.f
	cl := n.cl
	c := n.c
	e := int(a.Entry)
	// Its guard on the client's own: reading entry e, every member of
	// the write set asked; then no read of e still deliverable, and the
	// answers and losses all in (a loss or an answer enables it).
	ok := cl.RecoveryPhase == ReadWritePhase && cl.CurrReadEntry == a.Entry && int(cl.ReadNext) >= f.p.WriteQuorum
	if n.status(StatusInRecovery, RecoveryAborted) || !n.is(ok, f.ClientRecovery(c)) {
		return n.vs, true
	}
	n.vs.add(f.ClientRecovery(c))
	for b := 0; b < f.p.Bookies; b++ {
		n.vs.add(f.inflight(c, b, e))
		for _, t := range []MsgType{ReadRequest, ReadResponse} {
			n.vs.add(f.live(t, false, c, b, e))
			n.vs.add(f.lost(t, false, c, b, e))
		}
	}
	return n.vs, true
}

// fpRecoveryClientReceivesAddFencedResponse is the own footprint (Footprints.Of) of RecoveryClientReceivesAddFencedResponse.
func fpRecoveryClientReceivesAddFencedResponse(x fp, a Action) {
	c := int(a.Client)
	b := int(a.Bookie)
	e := int(a.Entry)
	x.receivedResponse(true, true, c, b, e)
}

// necRecoveryClientReceivesAddFencedResponse is the necessary enabling set (Footprints.NecessaryInto) of RecoveryClientReceivesAddFencedResponse.
func necRecoveryClientReceivesAddFencedResponse(n necView, a Action) (varList, bool) {
	if n.status(StatusInRecovery) || n.noLive(addRejected, true) {
		return n.vs, true
	}
	return n.vs, false
}
