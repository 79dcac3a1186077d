package spec

// The partial-order reduction's declarations for the Java client's add path (javaclient.go), reached
// from the action table (actiontable.go): each action's own footprint
// (what Footprints.Of adds to the rules of its category), when it is dead
// (Footprints.Dead), and what must change to enable it
// (Footprints.NecessaryInto). footprint.go holds the variables and the
// rules of each category; spec/porbound checks the declarations against
// whole graphs.

// fpClientCreatesAddOp is the own footprint (Footprints.Of) of ClientCreatesAddOp.
func fpClientCreatesAddOp(x fp, a Action) {
	c := int(a.Client)
	// The handle's ensemble and change phase (javaWriterStep, above)
	// and whether the last op's writes went out (deferredAdd).
	x.writerAdds(c, false)
}

// fpClientReceivesAddTimeout is the own footprint (Footprints.Of) of ClientReceivesAddTimeout.
func fpClientReceivesAddTimeout(x fp, a Action) { x.lostAddFails(a, false) }

// fpRecoveryClientReceivesAddTimeout is the own footprint (Footprints.Of) of RecoveryClientReceivesAddTimeout.
func fpRecoveryClientReceivesAddTimeout(x fp, a Action) { x.lostAddFails(a, true) }

// lostAddFails: a lost add request or reply of the writer (rec: of the
// recovery's write-backs; the label does not say which) is processed,
// once no older add of its channel is deliverable (olderAddInFlight); the
// rest is the client's own record (clientWrites, javaWriterStep).
func (x fp) lostAddFails(a Action, rec bool) {
	f := x.f
	c := int(a.Client)
	b := int(a.Bookie)
	e := int(a.Entry)
	for _, t := range []MsgType{AddEntryRequest, AddEntryResponse, addRejected} {
		x.read(f.sent(t, rec, c, b, e), f.lost(t, rec, c, b, e))
		x.write(f.lost(t, rec, c, b, e))
		for e2 := 1; e2 < e; e2++ {
			x.read(f.live(t, rec, c, b, e2))
		}
	}
}

// fpClientUpdatesEnsembleMetadata is the own footprint (Footprints.Of) of ClientUpdatesEnsembleMetadata.
func fpClientUpdatesEnsembleMetadata(x fp, a Action) {
	f := x.f
	// The MetadataUpdateLoop: the store's status and version, a
	// replacement among the writable bookies, the new fragment.
	x.readWritable()
	x.readMeta()
	x.write(f.Meta(), f.MetaFragments())
}

// fpClientCompletesEnsembleChange is the own footprint (Footprints.Of) of ClientCompletesEnsembleChange.
func fpClientCompletesEnsembleChange(x fp, a Action) {
	c := int(a.Client)
	// Re-sends (unsetSuccessAndSendWriteRequest) and the deferred
	// op's writes, to bookies and of entries the label does not
	// name; a re-sent request merges with its copy still unanswered
	// (and makes an answered one deliverable again).
	x.writerAdds(c, true)
	x.readDown()
}

// deadClientCreatesAddOp is the deadness (Footprints.Dead) of ClientCreatesAddOp.
func deadClientCreatesAddOp(d deadView, a Action) bool {
	f := d.f
	cl := d.cl
	return d.writerDead() || int(cl.LAP) >= f.p.Entries // LAP only grows
}

// necWriterChangeStep is the necessary enabling set (Footprints.NecessaryInto) of ClientUpdatesEnsembleMetadata, ClientCompletesEnsembleChange.
func necWriterChangeStep(n necView, a Action) (varList, bool) {
	f := n.f
	cl := n.cl
	c := n.c
	// The Java writer's loop steps: enabled in every state where the
	// handle's change is at the step (each has a successor then).
	want := ChangeUpdating
	if a.Kind == ClientCompletesEnsembleChange {
		want = ChangeCompleting
	}
	if n.status(StatusOpen) || !n.is(cl.Change == want, f.ClientChange(c)) {
		return n.vs, true
	}
	return n.vs, false
}

// necClientReceivesAddTimeout is the necessary enabling set (Footprints.NecessaryInto) of ClientReceivesAddTimeout.
func necClientReceivesAddTimeout(n necView, a Action) (varList, bool) {
	// An open writer not completing a change.
	if n.status(StatusOpen) || !n.is(n.cl.Change != ChangeCompleting, n.f.ClientChange(n.c)) {
		return n.vs, true
	}
	return n.lostAdd(false), true
}

// necRecoveryClientReceivesAddTimeout is the necessary enabling set (Footprints.NecessaryInto) of RecoveryClientReceivesAddTimeout.
func necRecoveryClientReceivesAddTimeout(n necView, a Action) (varList, bool) {
	if n.status(StatusInRecovery) {
		return n.vs, true
	}
	if needSpare.ok(n.f.p) {
		// With a spare only a completed op's failure: its acks or its
		// leaving the queue.
		n.vs.add(n.f.Client(n.c))
		n.vs.add(n.f.ClientPending(n.c))
	}
	return n.lostAdd(true), true
}

// lostAdd is what must change to enable an add's timeout (rec: a
// write-back's) in the slot of n: a lost record of the slot, and no
// older add of the channel deliverable.
func (n *necView) lostAdd(rec bool) varList {
	f := n.f
	c, b, e := n.c, n.b, n.e
	lost := false
	for _, m := range n.s.Msgs {
		k := m.Key
		lost = lost || m.Count == -1 && isAdd(k, c, rec) && k.Bookie() == b && int(k.Entry().ID) == e
	}
	for _, t := range []MsgType{AddEntryRequest, AddEntryResponse, addRejected} {
		if !lost {
			n.vs.add(f.lost(t, rec, c, b, e))
			continue
		}
		for e2 := 1; e2 < e; e2++ {
			n.vs.add(f.live(t, rec, c, b, e2))
		}
	}
	return n.vs
}
