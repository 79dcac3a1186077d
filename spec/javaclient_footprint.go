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
func fpClientReceivesAddTimeout(x fp, a Action) {
	f := x.f
	c := int(a.Client)
	b := int(a.Bookie)
	e := int(a.Entry)
	// A lost add request or reply of the writer (the label does not
	// say which) is processed, once no older add of its channel is
	// deliverable (olderAddInFlight).
	for _, t := range []MsgType{AddEntryRequest, AddEntryResponse, addRejected} {
		x.read(f.sent(t, false, c, b, e), f.lost(t, false, c, b, e))
		x.write(f.lost(t, false, c, b, e))
		for e2 := 1; e2 < e; e2++ {
			x.read(f.live(t, false, c, b, e2))
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
	f := n.f
	s := n.s
	cl := n.cl
	c := n.c
	b := n.b
	e := n.e
	// A lost record of the slot, the handle not completing a change,
	// and no older add of the channel deliverable.
	if n.status(StatusOpen) || !n.is(cl.Change != ChangeCompleting, f.ClientChange(c)) {
		return n.vs, true
	}
	lost := false
	for _, m := range s.Msgs {
		k := m.Key
		lost = lost || m.Count == -1 && isWriterAdd(k, c) && k.Bookie() == b && int(k.Entry().ID) == e
	}
	if !lost {
		for _, t := range []MsgType{AddEntryRequest, AddEntryResponse, addRejected} {
			n.vs.add(f.lost(t, false, c, b, e))
		}
		return n.vs, true
	}
	for _, t := range []MsgType{AddEntryRequest, AddEntryResponse, addRejected} {
		for e2 := 1; e2 < e; e2++ {
			n.vs.add(f.live(t, false, c, b, e2))
		}
	}
	return n.vs, true
}
