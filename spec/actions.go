package spec

import "fmt"

// ActionKind names a TLA+ action of Next, numbered in the order Next lists them.
type ActionKind uint8

const (
	BookieSendsAddConfirmedResponse ActionKind = iota + 1
	BookieSendsAddFencedResponse
	BookieSendsFencingReadLacResponse
	BookieSendsReadResponse
	ClientCreatesLedger
	ClientSendsAddEntryRequests
	ClientReceivesAddConfirmedResponse
	ClientReceivesAddFencedResponse
	ClientChangesEnsemble
	ClientResendsPendingAddOp
	ClientClosesLedgerSuccess
	ClientClosesLedgerFail
	ClientStartsRecovery
	ClientReceivesFencingReadLacResponse
	ClientSendsRecoveryReadRequests
	ClientReceivesRecoveryReadResponse
	ClientWritesBackEntry
	RecoveryClientReceivesAddConfirmedResponse
	RecoveryClientChangesEnsemble
	RecoveryClientSendsPendingAddOp
	RecoveryClientClosesLedger
	// Extensions beyond the TLA+ spec (enabled by fault budgets).
	BookieCrashes
	BookieRestarts
	BookieLosesData
	BookieBecomesReadOnly
	ClientReceivesAddErrorResponse
	ClientFailsToCreateLedger
	BookieSendsAddReadOnlyResponse
	numActionKinds
)

// NumActionKinds is one more than the largest ActionKind.
const NumActionKinds = numActionKinds

const (
	_ = iota
)

var actionNames = [...]string{"?",
	"BookieSendsAddConfirmedResponse", "BookieSendsAddFencedResponse", "BookieSendsFencingReadLacResponse",
	"BookieSendsReadResponse", "ClientCreatesLedger", "ClientSendsAddEntryRequests",
	"ClientReceivesAddConfirmedResponse", "ClientReceivesAddFencedResponse", "ClientChangesEnsemble",
	"ClientResendsPendingAddOp", "ClientClosesLedgerSuccess", "ClientClosesLedgerFail", "ClientStartsRecovery",
	"ClientReceivesFencingReadLacResponse", "ClientSendsRecoveryReadRequests", "ClientReceivesRecoveryReadResponse",
	"ClientWritesBackEntry", "RecoveryClientReceivesAddConfirmedResponse", "RecoveryClientChangesEnsemble",
	"RecoveryClientSendsPendingAddOp", "RecoveryClientClosesLedger",
	"BookieCrashes", "BookieRestarts", "BookieLosesData", "BookieBecomesReadOnly",
	"ClientReceivesAddErrorResponse", "ClientFailsToCreateLedger", "BookieSendsAddReadOnlyResponse",
}

func (k ActionKind) String() string {
	if int(k) < len(actionNames) {
		return actionNames[k]
	}
	return fmt.Sprintf("ActionKind(%d)", k)
}

// ActionKindByName returns the kind with the given TLA+ name.
func ActionKindByName(name string) (ActionKind, bool) {
	for i := 1; i < len(actionNames); i++ {
		if actionNames[i] == name {
			return ActionKind(i), true
		}
	}
	return 0, false
}

// Action labels a transition: the TLA+ action and its parameters. Client
// and Bookie are -1 when the action has no such parameter; Entry is 0 when
// it has no entry. Lost is the set of bookies whose message sent in this step
// was lost (for a reply, the replying bookie).
type Action struct {
	Kind   ActionKind
	Client int8
	Bookie int8
	Entry  int8
	Lost   Bookies
}

// String renders the action as in a TLA+ trace, e.g.
// "ClientSendsAddEntryRequests(c1) e1 lost:{b2}".
func (a Action) String() string {
	s := a.Kind.String()
	switch {
	case a.Client >= 0 && a.Bookie >= 0:
		s += fmt.Sprintf("(b%d, c%d)", a.Bookie+1, a.Client+1)
	case a.Client >= 0:
		s += fmt.Sprintf("(c%d)", a.Client+1)
	case a.Bookie >= 0:
		s += fmt.Sprintf("(b%d)", a.Bookie+1)
	}
	if a.Kind == ClientFailsToCreateLedger {
		s += " NotEnoughBookies"
	}
	if a.Entry > 0 {
		s += fmt.Sprintf(" e%d", a.Entry)
	}
	if a.Lost != 0 {
		if a.Kind == ClientChangesEnsemble || a.Kind == RecoveryClientChangesEnsemble {
			s += " replaced:" + FormatBookies(a.Lost)
		} else {
			s += " lost:" + FormatBookies(a.Lost)
		}
	}
	return s
}

// FormatBookies renders a bookie set as {b1,b3}.
func FormatBookies(bs Bookies) string {
	out := "{"
	for b := 0; b < MaxBookies; b++ {
		if bs.Has(b) {
			if len(out) > 1 {
				out += ","
			}
			out += fmt.Sprintf("b%d", b+1)
		}
	}
	return out + "}"
}

// Next calls emit once for every successor of s, in a fixed order: the
// disjuncts of Next in the order the spec lists them, then message and loss
// pattern order. The *State passed to emit is scratch space owned by the
// caller-supplied scratch and is overwritten by the next call.
func (m *Model) Next(s, scratch *State, emit func(Action, *State)) {
	p := m.P
	g := gen{p: p, m: m, s: s, n: scratch, emit: emit}
	g.bookieActions()
	if p.Faulty() {
		for b := 0; b < p.Bookies; b++ {
			g.BookieCrashes(b)
			g.BookieRestarts(b)
			g.BookieLosesData(b)
			g.BookieBecomesReadOnly(b)
		}
	}
	for cid := 0; cid < p.Clients; cid++ {
		g.ClientCreatesLedger(cid)
		if p.Faulty() {
			g.ClientFailsToCreateLedger(cid)
			g.ClientReceivesAddErrorResponse(cid)
		}
		g.ClientSendsAddEntryRequests(cid)
		g.ClientReceivesAddConfirmedResponse(cid)
		g.ClientReceivesAddFencedResponse(cid)
		g.ClientChangesEnsemble(cid)
		g.ClientResendsPendingAddOp(cid)
		g.ClientClosesLedgerSuccess(cid)
		g.ClientClosesLedgerFail(cid)
		g.ClientStartsRecovery(cid)
		g.ClientReceivesFencingReadLacResponse(cid)
		g.ClientSendsRecoveryReadRequests(cid)
		g.ClientReceivesRecoveryReadResponse(cid)
		g.ClientWritesBackEntry(cid)
		g.RecoveryClientReceivesAddConfirmedResponse(cid)
		g.RecoveryClientChangesEnsemble(cid)
		g.RecoveryClientSendsPendingAddOp(cid)
		g.RecoveryClientClosesLedger(cid)
	}
}

// gen carries one expansion: the state s being expanded and the scratch n
// each successor is built in.
type gen struct {
	p    Params
	m    *Model
	s    *State
	n    *State
	emit func(Action, *State)
	keys [MaxBookies]MsgKey
	// twice is set while an action whose guard is a disjunction with both
	// sides true is being emitted. TLC branches on every disjunct of an
	// action, so it generates such successors twice; emitting them twice
	// keeps our "generated" count equal to TLC's. Distinct counts are not
	// affected.
	twice bool
}

// out emits the successor built in n (twice under TLC's disjunct branching).
func (g *gen) out(a Action) {
	if g.m.excluded&(1<<uint(a.Kind)) != 0 {
		return
	}
	g.emit(a, g.n)
	if g.twice {
		g.emit(a, g.n)
	}
}

// begin starts a successor as a copy of s and returns the client cid of it.
func (g *gen) begin(cid int) *Client {
	g.n.CopyFrom(g.s)
	if cid < 0 {
		return nil
	}
	return &g.n.Clients[cid]
}

// reply completes ProcessedOneAndSendAnother(rcv, snd) on the successor
// being built: rcv is marked processed and snd is sent, delivered or lost.
func (g *gen) reply(a Action, rcv, snd MsgKey) {
	g.n.setCount(rcv, 0)
	g.n.insert(snd, 1)
	g.out(a)
	if g.p.ReliableNetwork {
		return
	}
	g.n.setCount(snd, -1)
	a.Lost = 1 << uint(snd.Bookie())
	g.out(a)
}

// processed completes MessageProcessed(k) and emits the successor.
func (g *gen) processed(a Action, k MsgKey) {
	g.n.setCount(k, 0)
	g.out(a)
}

// sendToBookies completes SendMessagesToEnsemble for one message per bookie
// of ens, built by mk: one successor per loss pattern (2^|ens|). It reports
// false, emitting nothing, when some message was sent before (the action is
// then disabled). It must be called before the successor is begun, since it
// checks against s; build the rest of the successor in the begin callback.
func (g *gen) sendToBookies(a Action, ens Bookies, mk func(b int) MsgKey, build func()) bool {
	n := 0
	for b := 0; b < g.p.Bookies; b++ {
		if ens.Has(b) {
			k := mk(b)
			if g.s.Sent(k) {
				return false
			}
			g.keys[n] = k
			n++
		}
	}
	build()
	for i := 0; i < n; i++ {
		g.n.insert(g.keys[i], 1)
	}
	// Enumerate loss patterns as subsets of ens, counting up. A message to
	// a crashed bookie is always lost.
	free, forced := ens&^g.s.BDown, ens&g.s.BDown
	if g.p.ReliableNetwork {
		free = 0
	}
	for sub := Bookies(0); ; sub = (sub - free) & free {
		lost := sub | forced
		for i := 0; i < n; i++ {
			cnt := int8(1)
			if lost.Has(g.keys[i].Bookie()) {
				cnt = -1
			}
			g.n.setCount(g.keys[i], cnt)
		}
		a.Lost = lost
		g.out(a)
		if sub == free {
			break
		}
	}
	return true
}

func msgAction(kind ActionKind, k MsgKey) Action {
	return Action{Kind: kind, Client: int8(k.Cid()), Bookie: int8(k.Bookie()), Entry: k.Entry().ID}
}

func clientAction(kind ActionKind, cid int) Action {
	return Action{Kind: kind, Client: int8(cid), Bookie: -1}
}

// ---------------------------------------------------------------- bookies

func (g *gen) bookieActions() {
	// The four bookie actions each quantify over DOMAIN messages; one pass
	// per action keeps the successor order equal to Next's disjunct order.
	g.BookieSendsAddConfirmedResponse()
	g.BookieSendsAddFencedResponse()
	g.BookieSendsFencingReadLacResponse()
	g.BookieSendsReadResponse()
}

func addResponse(req MsgKey, success bool) MsgKey {
	f := req.Fields()
	return MsgFields{Type: AddEntryResponse, Bookie: f.Bookie, Cid: f.Cid, Entry: f.Entry, Recovery: f.Recovery, Success: success}.Key()
}

// BookieSendsAddConfirmedResponse: a bookie stores an entry (if not fenced,
// or if the add is a recovery add), overwrites its LAC with the request's
// and replies success.
func (g *gen) BookieSendsAddConfirmedResponse() {
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count < 1 || k.Type() != AddEntryRequest || !g.s.IsEarliestMsg(k) {
			continue
		}
		b := k.Bookie()
		if g.s.BFenced.Has(b) && !k.Recovery() || g.s.BDown.Has(b) || g.s.BReadOnly.Has(b) {
			continue
		}
		resp := addResponse(k, true)
		if g.s.Sent(resp) {
			continue
		}
		g.begin(-1)
		g.n.BEntries[b] = g.n.BEntries[b].Add(k.Entry())
		if f := k.Fields(); g.m.V.GuaranteedWriteQuorum {
			// gwq: bookie LAC and LAFR are running maxima.
			g.n.BLAC[b] = max(g.n.BLAC[b], f.LAC)
			g.n.BLAFR[b] = max(g.n.BLAFR[b], f.LAFR)
		} else {
			g.n.BLAC[b] = f.LAC // overwritten: may go down
		}
		// Guard "b_fenced[b] = FALSE \/ msg.recovery = TRUE": both disjuncts.
		g.twice = !g.s.BFenced.Has(b) && k.Recovery()
		g.reply(msgAction(BookieSendsAddConfirmedResponse, k), k, resp)
		g.twice = false
	}
}

// BookieSendsAddFencedResponse: a fenced bookie rejects a non-recovery add.
func (g *gen) BookieSendsAddFencedResponse() {
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count < 1 || k.Type() != AddEntryRequest || g.s.BDown.Has(k.Bookie()) || !g.s.IsEarliestMsg(k) {
			continue
		}
		var resp MsgKey
		kind := BookieSendsAddFencedResponse
		switch b := k.Bookie(); {
		case g.s.BReadOnly.Has(b) && !(g.s.BFenced.Has(b) && !k.Recovery()):
			// A read-only bookie rejects every add (recovery adds too).
			f := k.Fields()
			resp = MsgFields{Type: AddEntryResponse, Bookie: f.Bookie, Cid: f.Cid, Entry: f.Entry, Recovery: f.Recovery, Code: CodeReadOnly}.Key()
			kind = BookieSendsAddReadOnlyResponse
		case !k.Recovery() && g.s.BFenced.Has(b):
			resp = addResponse(k, false)
		default:
			continue
		}
		if g.s.Sent(resp) {
			continue
		}
		g.begin(-1)
		g.reply(msgAction(kind, k), k, resp)
	}
}

// BookieSendsFencingReadLacResponse: a bookie fences the ledger (even one
// it never saw) and answers with its LAC.
func (g *gen) BookieSendsFencingReadLacResponse() {
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count < 1 || k.Type() != FenceRequest || g.s.BDown.Has(k.Bookie()) {
			continue
		}
		b := k.Bookie()
		resp := MsgFields{Type: FenceResponse, Bookie: b, Cid: k.Cid(), LAC: g.s.BLAC[b]}
		if g.m.V.GuaranteedWriteQuorum {
			resp = MsgFields{Type: FenceResponse, Bookie: b, Cid: k.Cid(), LAFR: g.s.BLAFR[b]} // fencing returns LAFR
		}
		if g.s.Sent(resp.Key()) {
			continue
		}
		g.begin(-1)
		g.n.BFenced |= 1 << uint(b)
		g.reply(msgAction(BookieSendsFencingReadLacResponse, k), k, resp.Key())
	}
}

// BookieSendsReadResponse: a bookie answers a (fencing) recovery read with
// the entry, or NoSuchEntry.
func (g *gen) BookieSendsReadResponse() {
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count < 1 || k.Type() != ReadRequest || g.s.BDown.Has(k.Bookie()) {
			continue
		}
		f := k.Fields()
		resp := MsgFields{Type: ReadResponse, Bookie: f.Bookie, Cid: f.Cid, Fence: f.Fence}
		switch e, ok := g.s.BEntries[f.Bookie].WithID(f.Entry.ID); {
		case ok:
			resp.Entry, resp.Code = e, CodeOK
		case g.s.BLimbo.Has(f.Bookie):
			resp.Entry, resp.Code = Entry{ID: f.Entry.ID}, CodeUnknown
		default:
			resp.Entry, resp.Code = Entry{ID: f.Entry.ID}, CodeNoSuchEntry
		}
		rk := resp.Key()
		if g.s.Sent(rk) {
			continue
		}
		g.begin(-1)
		if f.Fence {
			g.n.BFenced |= 1 << uint(f.Bookie)
		}
		g.reply(msgAction(BookieSendsReadResponse, k), k, rk)
	}
}

// ---------------------------------------------------------------- helpers

// SelectEnsemble is CHOOSE E \in SUBSET Bookies : ValidEnsemble(E, incl,
// excl): the first valid ensemble in TLC's order (all candidates have
// WriteQuorum bookies, so lexicographic order of their sorted members).
// ValidEnsemble also excludes every ensemble of meta_fragments.
func (g *gen) SelectEnsemble(incl, excl Bookies) (Bookies, bool) {
	excl |= g.s.BDown | g.s.BReadOnly // extensions: only writable bookies join an ensemble
	for _, e := range g.m.ensembles {
		if e&excl != 0 || e&incl != incl {
			continue
		}
		used := false
		for _, f := range g.s.MetaFragmentList() {
			if f.Ensemble == e {
				used = true
				break
			}
		}
		if !used {
			return e, true
		}
	}
	return 0, false
}

// ensembles lists every set of E bookies in TLC's CHOOSE order (E = Qw in
// the TLA+ spec).
func (p Params) ensembles() []Bookies {
	var out []Bookies
	var rec func(start int, set Bookies, left int)
	rec = func(start int, set Bookies, left int) {
		if left == 0 {
			out = append(out, set)
			return
		}
		for b := start; b <= p.Bookies-left; b++ {
			rec(b+1, set|1<<uint(b), left-1)
		}
	}
	rec(0, 0, p.Ensemble)
	return out
}

// MaxContiguousConfirmedEntry is the largest id whose prefix 1..id has all
// reached AckQuorum, or 0.
func (p Params) MaxContiguousConfirmedEntry(conf *[MaxEntries]Bookies) int8 {
	return p.maxContiguousAtQuorum(conf, p.AckQuorum)
}

// maxContiguousAtQuorum is the largest id whose prefix 1..id has all reached
// quorum q (gwq's MaxContiguousEntryAtQuorum), or 0.
func (p Params) maxContiguousAtQuorum(conf *[MaxEntries]Bookies, q int) int8 {
	id := int8(0)
	for i := 0; i < p.Entries; i++ {
		if conf[i].Len() < q {
			break
		}
		id = int8(i + 1)
	}
	return id
}

func (c *Client) needsResend(op PendingAddOp) bool {
	cf, _ := c.CurrFragment()
	return op.FragmentID != cf.ID || op.Ensemble != cf.Ensemble || op.Layout != cf.Layout
}

// sortedLayout lays a set out in increasing bookie order (striping only).
func (p Params) sortedLayout(ens Bookies) Layout {
	if !p.Striped() {
		return 0
	}
	var l Layout
	i := 0
	for b := 0; b < p.Bookies; b++ {
		if ens.Has(b) {
			l = l.With(i, b)
			i++
		}
	}
	return l
}

// replaceFailed is the striped ensemble change: each failed position gets a
// replacement bookie, positions keep their order. Candidates are tried in
// lexicographic order of the replacement set (assigned in position order);
// the first whose ensemble differs from every fragment in the metadata wins,
// mirroring SelectEnsemble's CHOOSE.
func (g *gen) replaceFailed(cf Fragment, failed Bookies) (Bookies, Layout, bool) {
	avail := Bookies(1<<uint(g.p.Bookies)-1) &^ (cf.Ensemble | failed | g.s.BDown | g.s.BReadOnly)
	k := failed.Len()
	var cands []int
	for b := 0; b < g.p.Bookies; b++ {
		if avail.Has(b) {
			cands = append(cands, b)
		}
	}
	var pick [MaxBookies]int
	var found bool
	var ens Bookies
	var lay Layout
	var rec func(start, depth int)
	rec = func(start, depth int) {
		if found {
			return
		}
		if depth == k {
			l, j := cf.Layout, 0
			set := cf.Ensemble &^ failed
			for pos := 0; pos < g.p.Ensemble; pos++ {
				if failed.Has(l.At(pos)) {
					l = l.With(pos, pick[j])
					set |= 1 << uint(pick[j])
					j++
				}
			}
			for _, f := range g.s.MetaFragmentList() {
				if f.Ensemble == set && f.Layout == l {
					return
				}
			}
			found, ens, lay = true, set, l
			return
		}
		for i := start; i < len(cands); i++ {
			pick[depth] = cands[i]
			rec(i+1, depth+1)
		}
	}
	rec(0, 0)
	return ens, lay, found
}

// fenceCovered: no ack quorum of any write set of the recovery ensemble
// is left unfenced. Without striping that is HasQuorumCoverage(fenced,
// |recovery_ensemble|); with striping every one of the E write sets needs
// Qw - Qa + 1 fenced bookies (BookKeeper's QuorumCoverageSet).
func (g *gen) fenceCovered(c *Client) bool {
	if !g.p.Striped() {
		return g.p.HasQuorumCoverage(c.Fenced, c.RecoveryEns.Len())
	}
	for start := 0; start < g.p.Ensemble; start++ {
		ws := g.p.writeSet(int8(start), c.RecoveryEns, c.RecoveryLay)
		if (ws & c.Fenced).Len() < g.p.WriteQuorum-g.p.AckQuorum+1 {
			return false
		}
	}
	return true
}

// NoPendingResends: no pending op still has to be sent to a newer ensemble.
func (c *Client) NoPendingResends() bool {
	for _, op := range c.PendingList() {
		if c.needsResend(op) {
			return false
		}
	}
	return true
}

func addRequest(cid, b int, e Entry, lac, lafr int8, recovery bool) MsgKey {
	return MsgFields{Type: AddEntryRequest, Bookie: b, Cid: cid, Entry: e, LAC: lac, LAFR: lafr, Recovery: recovery}.Key()
}

// ---------------------------------------------------------------- writer

// ClientCreatesLedger: the first client to act creates the ledger with the
// first available ensemble.
func (g *gen) ClientCreatesLedger(cid int) {
	// The status test is implied in the reference spec (only a client that
	// withdrew has a Nil version and a non-Nil status, after the ledger
	// existed); it matters once creation can fail.
	if g.s.MetaStatus != StatusNil || g.s.Clients[cid].MetaVersion != Nil || g.s.Clients[cid].Status != StatusNil {
		return
	}
	ens, ok := g.SelectEnsemble(0, 0)
	if !ok {
		return
	}
	f := Fragment{ID: 1, Ensemble: ens, First: 1, Layout: g.p.sortedLayout(ens)}
	c := g.begin(cid)
	c.Status = StatusOpen
	c.MetaVersion = 1
	c.NumFragments = 0
	for _, mf := range g.s.MetaFragmentList() {
		c.appendFragment(mf)
	}
	c.appendFragment(f)
	g.n.MetaStatus = StatusOpen
	g.n.MetaVersion = 1
	g.n.MetaFragments[g.n.NumMetaFragments] = f
	g.n.NumMetaFragments++
	g.out(clientAction(ClientCreatesLedger, cid))
}

// ClientSendsAddEntryRequests: the writer sends the next entry to every
// bookie of its current ensemble, within the inflight limit.
func (g *gen) ClientSendsAddEntryRequests(cid int) {
	c := &g.s.Clients[cid]
	if c.Status != StatusOpen || int(c.LAP-c.LAC) > g.p.Inflight-1 || int(c.LAP)+1 > g.p.Entries {
		return
	}
	e := Entry{ID: c.LAP + 1, Data: c.LAP + 1}
	cf, _ := c.CurrFragment()
	a := clientAction(ClientSendsAddEntryRequests, cid)
	a.Entry = e.ID
	g.sendToBookies(a, g.p.WriteSet(e.ID, cf), func(b int) MsgKey { return addRequest(cid, b, e, c.LAC, c.LAFR, false) }, func() {
		nc := g.begin(cid)
		nc.LAP = e.ID
		nc.addPending(PendingAddOp{Entry: e, FragmentID: cf.ID, Ensemble: cf.Ensemble, Layout: cf.Layout})
	})
}

// receiveAddConfirmedResponse is ReceiveAddConfirmedResponse(c, recovery).
func (g *gen) receiveAddConfirmedResponse(kind ActionKind, cid int, recovery bool) {
	c := &g.s.Clients[cid]
	cf, _ := c.CurrFragment()
	for _, m := range g.s.Msgs {
		k := m.Key
		if k.Cid() != cid || m.Count < 1 || k.Type() != AddEntryResponse || !g.s.IsEarliestMsg(k) {
			continue
		}
		f := k.Fields()
		if f.Recovery != recovery || !f.Success || !g.p.WriteSet(f.Entry.ID, cf).Has(f.Bookie) {
			continue
		}
		nc := g.begin(cid)
		nc.Confirmed[f.Entry.ID-1] |= 1 << uint(f.Bookie)
		lac := g.p.MaxContiguousConfirmedEntry(&nc.Confirmed)
		if lac > nc.LAC {
			nc.LAC = lac
		}
		if g.m.V.GuaranteedWriteQuorum {
			// gwq: an add stays pending until it and its prefix reached Qw.
			lafr := g.p.maxContiguousAtQuorum(&nc.Confirmed, g.p.WriteQuorum)
			nc.LAFR = max(nc.LAFR, lafr)
			for i := int(nc.NumPending) - 1; i >= 0; i-- {
				if nc.Pending[i].Entry.ID <= lafr {
					nc.removePendingAt(i)
				}
			}
		} else {
			// MayBeRemoveFromPending with the freshly computed lac.
			for i := int(nc.NumPending) - 1; i >= 0; i-- {
				op := nc.Pending[i]
				if nc.Confirmed[op.Entry.ID-1].Len() >= g.p.AckQuorum && op.Entry.ID <= lac {
					nc.removePendingAt(i)
				}
			}
		}
		g.processed(msgAction(kind, k), k)
	}
}

// ClientReceivesAddConfirmedResponse: the writer counts an ack and may
// advance its LAC.
func (g *gen) ClientReceivesAddConfirmedResponse(cid int) {
	if g.s.Clients[cid].Status == StatusOpen {
		g.receiveAddConfirmedResponse(ClientReceivesAddConfirmedResponse, cid, false)
	}
}

// ClientReceivesAddFencedResponse: the writer learns it was fenced and withdraws.
func (g *gen) ClientReceivesAddFencedResponse(cid int) {
	c := &g.s.Clients[cid]
	if c.Status != StatusOpen {
		return
	}
	cf, _ := c.CurrFragment()
	for _, m := range g.s.Msgs {
		k := m.Key
		if k.Cid() != cid || m.Count < 1 || k.Type() != AddEntryResponse || !g.s.IsEarliestMsg(k) {
			continue
		}
		f := k.Fields()
		if f.Recovery || f.Success || f.Code == CodeReadOnly || !cf.Ensemble.Has(f.Bookie) {
			continue
		}
		nc := g.begin(cid)
		nc.Status = ClientWithdrawn
		g.processed(msgAction(ClientReceivesAddFencedResponse, k), k)
	}
}

// changeEnsemble is ChangeEnsemble(c, recovery): replace every timed-out
// bookie of the current ensemble; the writer writes the metadata at once
// (compare-and-set on its version), a recovery client only at close.
func (g *gen) changeEnsemble(kind ActionKind, cid int, recovery bool) {
	c := &g.s.Clients[cid]
	if !c.NoPendingResends() {
		return
	}
	if !recovery && c.MetaVersion != g.s.MetaVersion {
		return
	}
	cf, _ := c.CurrFragment()
	// The failed set must be non-empty, all timed out, and leave no timed-out
	// bookie among the good ones: exactly the timed-out bookies.
	var failed Bookies
	for b := 0; b < g.p.Bookies; b++ {
		if cf.Ensemble.Has(b) && g.s.WriteTimeoutForBookie(cid, b, recovery) {
			failed |= 1 << uint(b)
		}
	}
	if failed == 0 {
		return
	}
	good := cf.Ensemble &^ failed
	var newEns Bookies
	var newLay Layout
	var ok bool
	if g.p.Striped() {
		newEns, newLay, ok = g.replaceFailed(cf, failed)
	} else {
		newEns, ok = g.SelectEnsemble(good, failed)
	}
	if !ok {
		return
	}
	first := c.LAC + 1
	if g.m.V.GuaranteedWriteQuorum {
		// gwq: the new fragment starts after the last fully replicated
		// entry, and a failed bookie holding an acknowledged entry of it
		// is pinned: replacing it would leave that entry below Qw.
		first = c.LAFR + 1
		for id := first; id <= c.LAC; id++ {
			if id >= 1 && c.Confirmed[id-1]&failed != 0 {
				return
			}
		}
	}
	nc := g.begin(cid)
	if first == cf.First {
		// UpdatedFragments replaces the last fragment's ensemble in place.
		nc.Fragments[nc.NumFragments-1].Ensemble = newEns
		nc.Fragments[nc.NumFragments-1].Layout = newLay
	} else {
		nc.appendFragment(Fragment{ID: c.NumFragments + 1, Ensemble: newEns, First: first, Layout: newLay})
	}
	if !recovery {
		g.n.NumMetaFragments = nc.NumFragments
		g.n.MetaFragments = nc.Fragments
		g.n.MetaVersion = g.s.MetaVersion + 1
		nc.MetaVersion = g.s.MetaVersion + 1
	}
	for id := int(first); id <= g.p.Entries; id++ {
		if id >= 1 {
			nc.Confirmed[id-1] &^= failed
		}
	}
	g.n.ClearWriteTimeout(cid, failed, recovery)
	a := clientAction(kind, cid)
	a.Lost = failed
	g.out(a)
}

// ClientChangesEnsemble: the writer replaces bookies that timed out.
func (g *gen) ClientChangesEnsemble(cid int) {
	if g.s.Clients[cid].Status == StatusOpen && g.s.MetaStatus == StatusOpen {
		g.changeEnsemble(ClientChangesEnsemble, cid, false)
	}
}

// resendPendingAddOp is ResendPendingAddOp(c, recovery): after an ensemble
// change, the lowest pending op of each stale (fragment, ensemble) group is
// sent to the bookies that are new in the current ensemble.
func (g *gen) resendPendingAddOp(kind ActionKind, cid int, recovery bool) {
	c := &g.s.Clients[cid]
	cf, _ := c.CurrFragment()
	for i, op := range c.PendingList() {
		if !c.needsResend(op) {
			continue
		}
		lowest := true
		for _, op2 := range c.PendingList() {
			if op2.FragmentID == op.FragmentID && op2.Ensemble == op.Ensemble && op2.Layout == op.Layout && op2.Entry.ID < op.Entry.ID {
				lowest = false
				break
			}
		}
		if !lowest {
			continue
		}
		newBookies := g.p.WriteSet(op.Entry.ID, cf) &^ g.p.OpWriteSet(op)
		// NeedsResend is a disjunction; both sides may hold.
		g.twice = op.FragmentID != cf.ID && op.Ensemble != cf.Ensemble
		a := clientAction(kind, cid)
		a.Entry = op.Entry.ID
		i, op := i, op
		g.sendToBookies(a, newBookies, func(b int) MsgKey { return addRequest(cid, b, op.Entry, c.LAC, c.LAFR, recovery) }, func() {
			nc := g.begin(cid)
			nc.removePendingAt(i)
			nc.addPending(PendingAddOp{Entry: op.Entry, FragmentID: cf.ID, Ensemble: cf.Ensemble, Layout: cf.Layout})
		})
		g.twice = false
	}
}

// ClientResendsPendingAddOp: the writer resends a pending entry after an
// ensemble change.
func (g *gen) ClientResendsPendingAddOp(cid int) {
	if g.s.Clients[cid].Status == StatusOpen {
		g.resendPendingAddOp(ClientResendsPendingAddOp, cid, false)
	}
}

// ClientClosesLedgerSuccess: the writer closes its ledger at its LAC, at any
// time, if the metadata is still OPEN at its version.
func (g *gen) ClientClosesLedgerSuccess(cid int) {
	c := &g.s.Clients[cid]
	if c.MetaVersion != g.s.MetaVersion || c.Status != StatusOpen || g.s.MetaStatus != StatusOpen {
		return
	}
	if g.m.V.GuaranteedWriteQuorum && c.NumPending != 0 {
		return // gwq: close only when every add reached Qw
	}
	nc := g.begin(cid)
	nc.MetaVersion = c.MetaVersion + 1
	nc.Status = StatusClosed
	g.n.MetaStatus = StatusClosed
	g.n.MetaLastEntry = c.LAC
	g.n.MetaVersion = g.s.MetaVersion + 1
	g.out(clientAction(ClientClosesLedgerSuccess, cid))
}

// ClientClosesLedgerFail: the writer finds the ledger no longer OPEN and withdraws.
func (g *gen) ClientClosesLedgerFail(cid int) {
	c := &g.s.Clients[cid]
	if c.Status != StatusOpen || g.s.MetaStatus == StatusOpen {
		return
	}
	nc := g.begin(cid)
	nc.Status = ClientWithdrawn
	nc.MetaVersion = Nil
	g.out(clientAction(ClientClosesLedgerFail, cid))
}

// ---------------------------------------------------------------- recovery

// ClientStartsRecovery: a client that never touched the ledger marks it
// IN_RECOVERY and sends fencing LAC reads to the last fragment's ensemble.
func (g *gen) ClientStartsRecovery(cid int) {
	c := &g.s.Clients[cid]
	if c.Status != StatusNil || (g.s.MetaStatus != StatusOpen && g.s.MetaStatus != StatusInRecovery) {
		return
	}
	last := g.s.MetaFragments[g.s.NumMetaFragments-1]
	a := clientAction(ClientStartsRecovery, cid)
	g.sendToBookies(a, last.Ensemble, func(b int) MsgKey { return MsgFields{Type: FenceRequest, Bookie: b, Cid: cid}.Key() }, func() {
		nc := g.begin(cid)
		g.n.MetaStatus = StatusInRecovery
		g.n.MetaVersion = g.s.MetaVersion + 1
		nc.Status = StatusInRecovery
		nc.MetaVersion = g.s.MetaVersion + 1
		nc.RecoveryPhase = FencingPhase
		nc.NumFragments = g.s.NumMetaFragments
		nc.Fragments = g.s.MetaFragments
		nc.RecoveryEns = last.Ensemble
		nc.RecoveryLay = last.Layout
	})
}

// ClientReceivesFencingReadLacResponse: the recovery client notes a fenced
// bookie and the highest LAC seen (at least the start of the last fragment).
func (g *gen) ClientReceivesFencingReadLacResponse(cid int) {
	c := &g.s.Clients[cid]
	if c.RecoveryPhase != FencingPhase {
		return
	}
	cf, _ := c.CurrFragment()
	for _, m := range g.s.Msgs {
		k := m.Key
		if k.Cid() != cid || m.Count < 1 || k.Type() != FenceResponse {
			continue
		}
		f := k.Fields()
		lac := f.LAC
		if g.m.V.GuaranteedWriteQuorum {
			lac = f.LAFR // gwq: recovery starts after the last fully replicated entry
		}
		if lac <= cf.First-1 {
			lac = cf.First - 1
		}
		nc := g.begin(cid)
		nc.Fenced |= 1 << uint(f.Bookie)
		if lac > nc.LAC {
			nc.LAC = lac
		}
		if lac > nc.LAP {
			nc.LAP = lac
		}
		if g.m.V.GuaranteedWriteQuorum && lac > nc.LAFR {
			nc.LAFR = lac
		}
		g.processed(msgAction(ClientReceivesFencingReadLacResponse, k), k)
	}
}

// HasQuorumCoverage: at least cohort - AckQuorum + 1 members.
func (p Params) HasQuorumCoverage(s Bookies, cohort int) bool {
	return s.Len() >= cohort-p.AckQuorum+1
}

// ClientSendsRecoveryReadRequests: once fencing has quorum coverage (or the
// previous entry was recovered), read the next entry from the recovery
// ensemble with fencing reads.
func (g *gen) ClientSendsRecoveryReadRequests(cid int) {
	c := &g.s.Clients[cid]
	if c.Status != StatusInRecovery {
		return
	}
	ok := (c.RecoveryPhase == ReadWritePhase && c.LastRecoverable == Nil && c.CurrReadEntry == Nil) ||
		(c.RecoveryPhase == FencingPhase && g.fenceCovered(c))
	if !ok {
		return
	}
	next := c.LAP + 1
	a := clientAction(ClientSendsRecoveryReadRequests, cid)
	a.Entry = next
	g.sendToBookies(a, g.p.writeSet(next, c.RecoveryEns, c.RecoveryLay), func(b int) MsgKey {
		return MsgFields{Type: ReadRequest, Bookie: b, Cid: cid, Entry: Entry{ID: next}, Fence: g.m.V.RecoveryReadsFence}.Key()
	}, func() {
		nc := g.begin(cid)
		nc.RecoveryPhase = ReadWritePhase
		nc.CurrReadEntry = next
		nc.Fenced = 0
	})
}

// ClientReceivesRecoveryReadResponse: one positive read makes the entry
// recoverable, quorum coverage of NoSuchEntry ends the reads, and all
// responses in without either aborts recovery. A decision is possible only
// when no other read of this client is still in flight (see onlyReadInFlight).
func (g *gen) ClientReceivesRecoveryReadResponse(cid int) {
	c := &g.s.Clients[cid]
	if c.Status != StatusInRecovery || c.RecoveryPhase != ReadWritePhase {
		return
	}
	cf, _ := c.CurrFragment()
	for _, m := range g.s.Msgs {
		k := m.Key
		if k.Cid() != cid || m.Count < 1 || k.Type() != ReadResponse || k.Entry().ID != c.CurrReadEntry {
			continue
		}
		// read_responses \union {msg}
		anyOK := k.Fields().Code == CodeOK
		nse, total := 0, 0
		counted := false
		for _, r := range c.Responses() {
			total++
			if r == k {
				counted = true
			}
			switch r.Fields().Code {
			case CodeOK:
				anyOK = true
			case CodeNoSuchEntry:
				nse++
			}
		}
		if !counted {
			total++
			if k.Fields().Code == CodeNoSuchEntry {
				nse++
			}
		}
		a := msgAction(ClientReceivesRecoveryReadResponse, k)
		switch {
		case anyOK: // ReadPositive
			if !g.s.onlyReadInFlight(k, c.RecoveryEns) {
				continue
			}
			nc := g.begin(cid)
			nc.CurrReadEntry = Nil
			nc.clearResponses()
			nc.LAP = c.LAP + 1
			nc.addPending(PendingAddOp{Entry: Entry{ID: c.LAP + 1, Data: k.Entry().Data}, FragmentID: cf.ID, Ensemble: cf.Ensemble, Layout: cf.Layout})
		case nse >= g.p.WriteQuorum-g.p.AckQuorum+1: // ReadNegative
			if !g.s.onlyReadInFlight(k, c.RecoveryEns) {
				continue
			}
			nc := g.begin(cid)
			nc.CurrReadEntry = Nil
			nc.clearResponses()
			nc.RecoveryEns, nc.RecoveryLay = 0, 0
			nc.LastRecoverable = k.Entry().ID - 1
		case total+g.s.ReadTimeoutCount(cid, g.p.writeSet(c.CurrReadEntry, c.RecoveryEns, c.RecoveryLay)) == g.p.WriteQuorum: // ReadUnknown
			if !g.s.onlyReadInFlight(k, c.RecoveryEns) {
				continue
			}
			nc := g.begin(cid)
			nc.Status = RecoveryAborted
			nc.CurrReadEntry = Nil
			nc.clearResponses()
			nc.RecoveryEns, nc.RecoveryLay = 0, 0
		default: // NotEnoughReadResponses
			nc := g.begin(cid)
			nc.addResponse(k)
		}
		g.processed(a, k)
	}
}

// notSentWrite: no recovery add of this entry was ever sent by cid.
func (g *gen) notSentWrite(cid int, e Entry) bool {
	for _, m := range g.s.Msgs {
		k := m.Key
		if k.Type() == AddEntryRequest && k.Cid() == cid && k.Recovery() && k.Entry() == e {
			return false
		}
	}
	return true
}

// ClientWritesBackEntry: the recovery client writes the lowest recovered,
// not yet written entry to its current ensemble.
func (g *gen) ClientWritesBackEntry(cid int) {
	c := &g.s.Clients[cid]
	if c.Status != StatusInRecovery || c.RecoveryPhase != ReadWritePhase {
		return
	}
	cf, _ := c.CurrFragment()
	for _, op := range c.PendingList() {
		if !g.notSentWrite(cid, op.Entry) {
			continue
		}
		lowest := true
		for _, op2 := range c.PendingList() {
			if op2.Entry.ID < op.Entry.ID && g.notSentWrite(cid, op2.Entry) {
				lowest = false
				break
			}
		}
		if !lowest {
			continue
		}
		a := clientAction(ClientWritesBackEntry, cid)
		a.Entry = op.Entry.ID
		op := op
		g.sendToBookies(a, g.p.WriteSet(op.Entry.ID, cf), func(b int) MsgKey { return addRequest(cid, b, op.Entry, c.LAC, c.LAFR, true) }, func() {
			g.begin(-1)
		})
	}
}

// RecoveryClientReceivesAddConfirmedResponse: an ack of a write-back.
func (g *gen) RecoveryClientReceivesAddConfirmedResponse(cid int) {
	if g.s.Clients[cid].Status == StatusInRecovery {
		g.receiveAddConfirmedResponse(RecoveryClientReceivesAddConfirmedResponse, cid, true)
	}
}

// RecoveryClientChangesEnsemble: the recovery client replaces bookies that
// timed out on write-backs, without touching the metadata yet.
func (g *gen) RecoveryClientChangesEnsemble(cid int) {
	if g.s.Clients[cid].Status == StatusInRecovery && g.s.MetaStatus == StatusInRecovery {
		g.changeEnsemble(RecoveryClientChangesEnsemble, cid, true)
	}
}

// RecoveryClientSendsPendingAddOp: resend a write-back after an ensemble change.
func (g *gen) RecoveryClientSendsPendingAddOp(cid int) {
	if g.s.Clients[cid].Status == StatusInRecovery {
		g.resendPendingAddOp(RecoveryClientSendsPendingAddOp, cid, true)
	}
}

// RecoveryClientClosesLedger: all write-backs done, the recovery client
// closes the ledger at the last recoverable entry with its own fragments.
func (g *gen) RecoveryClientClosesLedger(cid int) {
	c := &g.s.Clients[cid]
	if g.s.MetaVersion != c.MetaVersion || g.s.MetaStatus != StatusInRecovery || c.Status != StatusInRecovery ||
		c.RecoveryPhase != ReadWritePhase || c.LastRecoverable == Nil || c.NumPending != 0 {
		return
	}
	nc := g.begin(cid)
	nc.Status = StatusClosed
	nc.MetaVersion = c.MetaVersion + 1
	g.n.MetaVersion = g.s.MetaVersion + 1
	g.n.NumMetaFragments = c.NumFragments
	g.n.MetaFragments = c.Fragments
	g.n.MetaStatus = StatusClosed
	g.n.MetaLastEntry = c.LastRecoverable
	g.out(clientAction(RecoveryClientClosesLedger, cid))
}

// ---------------------------------------------------------------- faults
//
// Beyond the TLA+ spec: bookie crashes, data loss and read-only bookies,
// each bounded by a budget. With every budget 0 none is enabled.

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
		k := m.Key
		if k.Cid() != cid || m.Count < 1 || k.Type() != AddEntryResponse || !g.s.IsEarliestMsg(k) {
			continue
		}
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
