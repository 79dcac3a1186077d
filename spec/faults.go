package spec

// Fault actions: beyond the TLA+ spec, bookie crashes, data loss and
// read-only bookies, each bounded by a budget, and the client's answers to
// them. With every budget 0 none is enabled and the model is the reference
// spec. Next calls them from actions.go; the read-only rejection of an add
// is emitted by BookieSendsAddFencedResponse's loop (so successors keep
// their message order) through readOnlyAddResponse below.

// lose marks every deliverable message to or from bookie b as lost: the
// connections of a stopping bookie break, its peers see timeouts.
func (g *gen) lose(b int) {
	for i := range g.n.Msgs {
		if m := &g.n.Msgs[i]; m.Count == 1 && m.Key.Bookie() == b {
			m.Count = -1
		}
	}
}

// BookieCrashes: bookie b stops.
func (g *gen) BookieCrashes(b int) {
	if int(g.s.CrashesUsed) >= g.p.Crashes || g.s.BDown.Has(b) {
		return
	}
	g.begin(-1)
	g.n.BDown |= 1 << uint(b)
	g.n.CrashesUsed++
	g.lose(b)
	g.out(Action{Kind: BookieCrashes, Client: -1, Bookie: int8(b)})
}

// BookieRestarts: a crashed bookie comes back with its journal intact.
func (g *gen) BookieRestarts(b int) {
	if !g.s.BDown.Has(b) || g.p.unavailableSet().Has(b) {
		return
	}
	g.begin(-1)
	g.n.BDown &^= 1 << uint(b)
	g.out(Action{Kind: BookieRestarts, Client: -1, Bookie: int8(b)})
}

// BookieLosesData: bookie b restarts with an empty disk. Its entries, LAC
// and fencing are gone and its connections break. In limbo mode (BP-44) it
// comes back fenced and answers Unknown for entries it does not have.
func (g *gen) BookieLosesData(b int) {
	if int(g.s.DataLossUsed) >= g.p.DataLoss || g.s.BDown.Has(b) || g.s.MetaStatus == StatusNil {
		return
	}
	g.begin(-1)
	bit := Bookies(1) << uint(b)
	g.n.DataLossUsed++
	g.n.BEntries[b], g.n.BLAC[b], g.n.BLAFR[b] = 0, 0, 0
	g.n.BFenced &^= bit
	if g.p.Limbo() {
		g.n.BFenced |= bit
		g.n.BLimbo |= bit
	}
	g.lose(b)
	g.out(Action{Kind: BookieLosesData, Client: -1, Bookie: int8(b)})
}

// BookieBecomesReadOnly: bookie b's disk passes the usage threshold; from
// now on it rejects adds and still serves reads and fencing.
func (g *gen) BookieBecomesReadOnly(b int) {
	if int(g.s.ReadOnlyUsed) >= g.p.ReadOnly || g.s.BReadOnly.Has(b) {
		return
	}
	g.begin(-1)
	g.n.BReadOnly |= 1 << uint(b)
	g.n.ReadOnlyUsed++
	g.out(Action{Kind: BookieBecomesReadOnly, Client: -1, Bookie: int8(b)})
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
// read-only bookie rejects every add, recovery adds too, unless it is
// fenced and the add is a normal one (then the fenced rejection wins). It
// returns the read-only response and whether the bookie sends it.
func (g *gen) readOnlyAddResponse(k MsgKey) (MsgKey, bool) {
	b := k.Bookie()
	if !g.s.BReadOnly.Has(b) || g.s.BFenced.Has(b) && !k.Recovery() {
		return 0, false
	}
	f := k.Fields()
	return MsgFields{Type: AddEntryResponse, Bookie: f.Bookie, Cid: f.Cid, Entry: f.Entry, Recovery: f.Recovery, Code: CodeReadOnly}.Key(), true
}
