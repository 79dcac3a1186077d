package spec413

import (
	"fmt"
	"strings"
)

// ActionKind names a TLA+ action of Next, numbered in the order Next lists
// them. Its String is the TLA+ name.
type ActionKind uint8

const (
	BookieSendsAddConfirmedResponse ActionKind = iota + 1
	BookieSendsAddFencedResponse
	BookieSendsFencingReadLacResponse
	BookieSendsReadResponse
	W1CreatesLedger
	W1SendsAddEntryRequests
	W1ReceivesAddConfirmedResponse
	W1ReceivesAddFencedResponse
	W1ChangesEnsemble
	W1TriesInvalidEnsembleChange
	W1SendsPendingAddOp
	W1CloseLedgerSuccess
	W1CloseLedgerFail
	W2PlaceInRecovery
	W2ReceivesFencingReadLacResponse
	W2SendsReadRequests
	W2ReceivesNonFinalRead
	W2CompletesReadSuccessfully
	W2CompletesReadWithNoSuchEntry
	W2WritesBackEntry
	W2ReceivesAddConfirmedResponse
	W2ChangesEnsemble
	W2TriesInvalidEnsembleChange
	W2SendsPendingAddOp
	W2ClosesLedger
	numActionKinds
)

// NumActionKinds is one more than the largest ActionKind.
const NumActionKinds = numActionKinds

var actionNames = [numActionKinds]string{"?",
	"BookieSendsAddConfirmedResponse", "BookieSendsAddFencedResponse", "BookieSendsFencingReadLacResponse", "BookieSendsReadResponse",
	"W1CreatesLedger", "W1SendsAddEntryRequests", "W1ReceivesAddConfirmedResponse", "W1ReceivesAddFencedResponse",
	"W1ChangesEnsemble", "W1TriesInvalidEnsembleChange", "W1SendsPendingAddOp", "W1CloseLedgerSuccess", "W1CloseLedgerFail",
	"W2PlaceInRecovery", "W2ReceivesFencingReadLacResponse", "W2SendsReadRequests", "W2ReceivesNonFinalRead",
	"W2CompletesReadSuccessfully", "W2CompletesReadWithNoSuchEntry", "W2WritesBackEntry", "W2ReceivesAddConfirmedResponse",
	"W2ChangesEnsemble", "W2TriesInvalidEnsembleChange", "W2SendsPendingAddOp", "W2ClosesLedger",
}

func (k ActionKind) String() string {
	if k > 0 && k < numActionKinds {
		return actionNames[k]
	}
	return fmt.Sprintf("ActionKind(%d)", uint8(k))
}

// ActionKindByName returns the kind with the given TLA+ name.
func ActionKindByName(name string) (ActionKind, bool) {
	for k := ActionKind(1); k < numActionKinds; k++ {
		if actionNames[k] == name {
			return k, true
		}
	}
	return 0, false
}

// Action labels a transition: the TLA+ action and what it acted on.
// Bookie is the bookie whose message was handled, or the bookie an
// ensemble change replaced (-1: none); Entry the entry id of the message or
// of the add or read sent (0: none); Lost the bookies whose message sent in
// this step was lost (a reply: the replying bookie).
type Action struct {
	Kind   ActionKind
	Bookie int8
	Entry  int8
	Lost   Bookies
}

// String renders the action, e.g. "W1SendsAddEntryRequests e1 lost:{b2}"
// or "BookieSendsReadResponse(b3) e1".
func (a Action) String() string {
	var b strings.Builder
	b.WriteString(a.Kind.String())
	if a.Bookie >= 0 {
		fmt.Fprintf(&b, "(b%d)", a.Bookie+1)
	}
	if a.Entry > 0 {
		fmt.Fprintf(&b, " e%d", a.Entry)
	}
	if a.Lost != 0 {
		b.WriteString(" lost:" + FormatBookies(a.Lost))
	}
	return b.String()
}

// FormatBookies renders a bookie set as {b1,b3}.
func FormatBookies(bs Bookies) string {
	var parts []string
	for b := 0; b < MaxBookies; b++ {
		if bs.Has(b) {
			parts = append(parts, fmt.Sprintf("b%d", b+1))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// Model is a validated parameter set with the candidate ensembles in
// CHOOSE order. It is immutable and safe to share between goroutines; each
// goroutine brings its own scratch State.
type Model struct {
	P         Params
	ensembles []Bookies
}

// NewModel validates p and prepares the model.
func NewModel(p Params) (*Model, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Model{P: p, ensembles: p.ensembles()}, nil
}

// Init returns the unique initial state.
func (m *Model) Init() State { return Init() }

// Next calls emit for every successor of s, in a fixed order: the
// disjuncts of Next in the order the spec lists them, then message and
// loss-pattern order. A successor TLC generates k times (its action's
// guard holds in k ways) is emitted k times. The *State passed to emit is
// scratch, overwritten by the next call.
func (m *Model) Next(s, scratch *State, emit func(Action, *State)) {
	g := gen{m: m, p: m.P, s: s, n: scratch, emit: emit, copies: 1}
	g.BookieSendsAddConfirmedResponse()
	g.BookieSendsAddFencedResponse()
	g.BookieSendsFencingReadLacResponse()
	g.BookieSendsReadResponse()
	g.W1CreatesLedger()
	g.W1SendsAddEntryRequests()
	g.W1ReceivesAddConfirmedResponse()
	g.W1ReceivesAddFencedResponse()
	g.W1ChangesEnsemble()
	g.W1TriesInvalidEnsembleChange()
	g.W1SendsPendingAddOp()
	g.W1CloseLedgerSuccess()
	g.W1CloseLedgerFail()
	g.W2PlaceInRecovery()
	g.W2ReceivesFencingReadLacResponse()
	g.W2SendsReadRequests()
	g.W2ReceivesNonFinalRead()
	g.W2CompletesReadSuccessfully()
	g.W2CompletesReadWithNoSuchEntry()
	g.W2WritesBackEntry()
	g.W2ReceivesAddConfirmedResponse()
	g.W2ChangesEnsemble()
	g.W2TriesInvalidEnsembleChange()
	g.W2SendsPendingAddOp()
	g.W2ClosesLedger()
}

// gen carries one expansion: the state s being expanded and the scratch n
// each successor is built in.
type gen struct {
	m    *Model
	p    Params
	s    *State
	n    *State
	emit func(Action, *State)
	keys [MaxBookies]MsgKey
	// copies is how many times TLC generates the successor being emitted:
	// TLC evaluates an action by branching on every disjunct of a guard
	// that holds and on every witness of an existential quantifier in it
	// (the \/ of BookieSendsAddConfirmedResponse and SendPendingAddOp, the
	// \E of WriteTimeoutForBookie and EnsembleAvailable in the ensemble
	// changes), and counts each branch's successor. Distinct states do not
	// depend on it; states generated do.
	copies int
}

// out emits the successor built in n, copies times.
func (g *gen) out(a Action) {
	for range g.copies {
		g.emit(a, g.n)
	}
}

// begin starts a successor as a copy of s.
func (g *gen) begin() *State {
	g.n.CopyFrom(g.s)
	return g.n
}

func bit(b int) Bookies { return 1 << uint(b) }

func msgAction(kind ActionKind, k MsgKey) Action {
	return Action{Kind: kind, Bookie: int8(k.Bookie()), Entry: k.Entry().ID}
}

// reply completes ProcessedOneAndSendAnother(rcv, snd): rcv is processed
// and snd sent, delivered, then lost.
func (g *gen) reply(a Action, rcv, snd MsgKey) {
	g.n.setCount(rcv, 0)
	g.n.insert(snd, 1)
	g.out(a)
	g.n.setCount(snd, -1)
	a.Lost = bit(snd.Bookie())
	g.out(a)
}

// processed completes MessageProcessed(k) and emits the successor.
func (g *gen) processed(a Action, k MsgKey) {
	g.n.setCount(k, 0)
	g.out(a)
}

// SendMessagesToEnsemble sends mk(b) to every bookie b of ens unless one
// of them was sent before (the action is then disabled and it reports
// false): one successor per loss pattern, 2^|ens| of them (one for an
// empty ens). build makes the rest of the successor; it runs once, after
// the guard.
func (g *gen) SendMessagesToEnsemble(a Action, ens Bookies, mk func(b int) MsgKey, build func(n *State)) bool {
	cnt := 0
	for b := 0; b < g.p.Bookies; b++ {
		if ens.Has(b) {
			k := mk(b)
			if g.s.Sent(k) {
				return false
			}
			g.keys[cnt] = k
			cnt++
		}
	}
	build(g.begin())
	for _, k := range g.keys[:cnt] {
		g.n.insert(k, 1)
	}
	for lost := Bookies(0); ; lost = (lost - ens) & ens {
		for _, k := range g.keys[:cnt] {
			c := int8(1)
			if lost.Has(k.Bookie()) {
				c = -1
			}
			g.n.setCount(k, c)
		}
		a.Lost = lost
		g.out(a)
		if lost == ens {
			return true
		}
	}
}

// ---------------------------------------------------------------- bookies

// bookieReplies is the shape of the four bookie actions: \E msg \in DOMAIN
// messages, a deliverable request of type t, answered by
// ProcessedOneAndSendAnother(msg, reply). respond gives the reply and how
// many times TLC generates the successor (0: the action is disabled for
// this message); change makes the bookie's own change in the successor.
func (g *gen) bookieReplies(kind ActionKind, t MsgType, respond func(k MsgKey) (reply MsgKey, copies int), change func(n *State, k MsgKey)) {
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count < 1 || k.Type() != t {
			continue
		}
		reply, copies := respond(k)
		if copies == 0 || g.s.Sent(reply) {
			continue
		}
		change(g.begin(), k)
		g.copies = copies
		g.reply(msgAction(kind, k), k, reply)
		g.copies = 1
	}
}

// BookieSendsAddConfirmedResponse: a bookie that is not fenced, or gets a
// recovery add, stores the entry, takes the request's LAC and confirms.
func (g *gen) BookieSendsAddConfirmedResponse() {
	g.bookieReplies(BookieSendsAddConfirmedResponse, AddEntryRequestMessage, func(k MsgKey) (MsgKey, int) {
		if !g.s.IsEarliestMsg(k) {
			return 0, 0
		}
		// "b_fenced[msg.bookie] = FALSE \/ msg.recovery = TRUE": a branch
		// per disjunct that holds.
		copies := 0
		if !g.s.BFenced.Has(k.Bookie()) {
			copies++
		}
		if k.Recovery() {
			copies++
		}
		return AddResponse(k, true), copies
	}, func(n *State, k MsgKey) {
		b := k.Bookie()
		n.BEntries[b] = n.BEntries[b].Add(k.Entry())
		n.BLAC[b] = k.LAC()
	})
}

// BookieSendsAddFencedResponse: a fenced bookie rejects a writer's add.
func (g *gen) BookieSendsAddFencedResponse() {
	g.bookieReplies(BookieSendsAddFencedResponse, AddEntryRequestMessage, func(k MsgKey) (MsgKey, int) {
		if k.Recovery() || !g.s.BFenced.Has(k.Bookie()) || !g.s.IsEarliestMsg(k) {
			return 0, 0
		}
		return AddResponse(k, false), 1
	}, func(*State, MsgKey) {})
}

// BookieSendsFencingReadLacResponse: a bookie fences the ledger and
// answers with its LAC.
func (g *gen) BookieSendsFencingReadLacResponse() {
	g.bookieReplies(BookieSendsFencingReadLacResponse, FenceRequestMessage, func(k MsgKey) (MsgKey, int) {
		return FenceResponse(k.Bookie(), g.s.BLAC[k.Bookie()]), 1
	}, func(n *State, k MsgKey) { n.BFenced |= bit(k.Bookie()) })
}

// BookieSendsReadResponse: a bookie answers a recovery read with the entry
// or NoSuchEntry (Nil), fencing if the read fences.
func (g *gen) BookieSendsReadResponse() {
	g.bookieReplies(BookieSendsReadResponse, ReadRequestMessage, func(k MsgKey) (MsgKey, int) {
		e, _ := g.s.BEntries[k.Bookie()].WithID(k.Entry().ID) // Entry{} (Nil) if none
		return ReadResponse(k.Bookie(), e, k.Fence()), 1
	}, func(n *State, k MsgKey) {
		if k.Fence() {
			n.BFenced |= bit(k.Bookie())
		}
	})
}

// ---------------------------------------------------------------- helpers

// EnsembleAvailable counts the witnesses of \E ensemble \in SUBSET Bookies :
// ValidEnsemble(ensemble, incl, excl) and returns the first in CHOOSE order
// (SelectEnsemble's value). ValidEnsemble also excludes every ensemble of
// meta_fragments.
func (g *gen) EnsembleAvailable(incl, excl Bookies) (n int, first Bookies) {
	for _, e := range g.m.ensembles {
		if e&excl != 0 || e&incl != incl || g.s.ensembleUsed(e) {
			continue
		}
		if n == 0 {
			first = e
		}
		n++
	}
	return n, first
}

func (s *State) ensembleUsed(e Bookies) bool {
	for _, f := range s.FragmentList() {
		if f.Ensemble == e {
			return true
		}
	}
	return false
}

// ValidNextFragment: no fragment of the metadata starts after first.
func (s *State) ValidNextFragment(first int8) bool {
	for _, f := range s.FragmentList() {
		if f.First > first {
			return false
		}
	}
	return true
}

// needsResend: op was not yet sent to the writer's current ensemble. It
// returns how many of the two disjuncts hold (TLC's branches).
func (w *Writer) needsResend(op PendingAddOp) int {
	n := 0
	if op.FragmentID != w.CurrFragment.ID {
		n++
	}
	if op.Ensemble != w.CurrFragment.Ensemble {
		n++
	}
	return n
}

// NoPendingResends: no pending op still has to go to a newer ensemble.
func (w *Writer) NoPendingResends() bool {
	for _, op := range w.PendingList() {
		if w.needsResend(op) > 0 {
			return false
		}
	}
	return true
}

// MaxContiguousConfirmedEntry is the largest id whose entries 1..id all
// have AckQuorum confirmations, or 0.
func (p Params) MaxContiguousConfirmedEntry(conf *[MaxSendLimit]Bookies) int8 {
	id := int8(0)
	for id < int8(p.SendLimit) && conf[id].Len() >= p.AckQuorum {
		id++
	}
	return id
}

// statusOf is the status a writer acts in: w1 writes an OPEN ledger, w2
// recovers one.
func statusOf(wi int) Status {
	if wi == W1 {
		return StatusOpen
	}
	return StatusInRecovery
}

// ---------------------------------------------------------------- writers

// W1CreatesLedger: w1 creates the ledger with the first ensemble.
func (g *gen) W1CreatesLedger() {
	if g.s.MetaStatus != StatusNil || g.s.W[W1].MetaVersion != Nil {
		return
	}
	n, ens := g.EnsembleAvailable(0, 0)
	if n == 0 {
		return // SelectEnsemble has no witness: TLC stops with an error (Validate rules it out)
	}
	f := Fragment{ID: 1, Ensemble: ens, First: 1}
	s := g.begin()
	w := &s.W[W1]
	w.Status, w.MetaVersion, w.CurrFragment = StatusOpen, 1, f
	s.MetaStatus, s.MetaVersion = StatusOpen, 1
	s.Fragments[s.NumFragments] = f
	s.NumFragments++
	g.out(Action{Kind: W1CreatesLedger, Bookie: -1})
}

// W1SendsAddEntryRequests: w1 sends its next entry to its ensemble.
func (g *gen) W1SendsAddEntryRequests() {
	w := &g.s.W[W1]
	id := w.LAP + 1
	if w.Status != StatusOpen || int(id) > g.p.SendLimit {
		return
	}
	e, cf := Entry{ID: id, Data: id}, w.CurrFragment
	a := Action{Kind: W1SendsAddEntryRequests, Bookie: -1, Entry: id}
	g.SendMessagesToEnsemble(a, cf.Ensemble, func(b int) MsgKey { return AddRequest(b, e, w.LAC, false) }, func(n *State) {
		nw := &n.W[W1]
		nw.LAP = id
		nw.addPending(PendingAddOp{Entry: e, FragmentID: cf.ID, Ensemble: cf.Ensemble})
	})
}

// ReceiveAddConfirmedResponse: writer wi counts a bookie's confirmation,
// may advance its LAC and drops the pending ops up to it that reached Ack
// Quorum.
func (g *gen) ReceiveAddConfirmedResponse(kind ActionKind, wi int) {
	w := &g.s.W[wi]
	if w.Status != statusOf(wi) {
		return
	}
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count < 1 || k.Type() != AddEntryResponseMessage || !g.s.IsEarliestMsg(k) ||
			k.Recovery() != (wi == W2) || !k.Success() || !w.CurrFragment.Ensemble.Has(k.Bookie()) {
			continue
		}
		nw := &g.begin().W[wi]
		// AddToConfirmed: confirmed's domain is 1..SendLimit; TLA+'s
		// EXCEPT leaves a function alone outside its domain.
		if id := k.Entry().ID; int(id) <= g.p.SendLimit {
			nw.Confirmed[id-1] |= bit(k.Bookie())
		}
		lac := g.p.MaxContiguousConfirmedEntry(&nw.Confirmed)
		nw.LAC = max(nw.LAC, lac)
		// MayBeRemoveFromPending(writer, confirmed, lac). An op beyond
		// SendLimit (TypeOK fails first) has no confirmed set and stays.
		for i := int(nw.NumPending) - 1; i >= 0; i-- {
			id := nw.Pending[i].Entry.ID
			if id <= lac && int(id) <= g.p.SendLimit && nw.Confirmed[id-1].Len() >= g.p.AckQuorum {
				nw.removePendingAt(i)
			}
		}
		g.processed(msgAction(kind, k), k)
	}
}

// W1ReceivesAddConfirmedResponse: ReceiveAddConfirmedResponse(w1, FALSE).
func (g *gen) W1ReceivesAddConfirmedResponse() {
	g.ReceiveAddConfirmedResponse(W1ReceivesAddConfirmedResponse, W1)
}

// W2ReceivesAddConfirmedResponse: ReceiveAddConfirmedResponse(w2, TRUE).
func (g *gen) W2ReceivesAddConfirmedResponse() {
	g.ReceiveAddConfirmedResponse(W2ReceivesAddConfirmedResponse, W2)
}

// W1ReceivesAddFencedResponse: w1 learns it was fenced and ceases (its
// status becomes Nil).
func (g *gen) W1ReceivesAddFencedResponse() {
	w := &g.s.W[W1]
	if w.Status != StatusOpen {
		return
	}
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count < 1 || k.Type() != AddEntryResponseMessage || !g.s.IsEarliestMsg(k) ||
			k.Recovery() || k.Success() || !w.CurrFragment.Ensemble.Has(k.Bookie()) {
			continue
		}
		g.begin().W[W1].Status = StatusNil
		g.processed(msgAction(W1ReceivesAddFencedResponse, k), k)
	}
}

// ensembleChange enumerates the bookies of writer wi's ensemble an
// ensemble change may replace, with the guard ChangeEnsemble and
// InvalidEnsembleChange share: no pending resend, the writer's metadata
// version is current, the bookie has a write timeout and another ensemble
// is available. fn gets the bookie, how many times TLC generates the
// successor (timeouts times available ensembles) and the new ensemble.
func (g *gen) ensembleChange(wi int, fn func(b, copies int, newEns Bookies)) {
	w := &g.s.W[wi]
	if w.Status != statusOf(wi) || g.s.MetaStatus != statusOf(wi) || !w.NoPendingResends() || w.MetaVersion != g.s.MetaVersion {
		return
	}
	ens := w.CurrFragment.Ensemble
	for b := 0; b < g.p.Bookies; b++ {
		if !ens.Has(b) {
			continue
		}
		lost := g.s.writeTimeouts(b, wi == W2)
		if lost == 0 {
			continue
		}
		avail, newEns := g.EnsembleAvailable(ens&^bit(b), bit(b))
		if avail > 0 {
			fn(b, lost*avail, newEns)
		}
	}
}

// ChangeEnsemble: writer wi replaces a bookie that timed out with a new
// fragment from LAC+1 (or, if its current fragment starts there, a new
// ensemble for it), written to the metadata at once, and forgets that
// bookie's confirmations from LAC+1.
func (g *gen) ChangeEnsemble(kind ActionKind, wi int) {
	w := &g.s.W[wi]
	first := w.LAC + 1
	if !g.s.ValidNextFragment(first) {
		return
	}
	g.ensembleChange(wi, func(b, copies int, newEns Bookies) {
		n := g.begin()
		if first == w.CurrFragment.First {
			// UpdatedFragments: the fragments equal to the current one get
			// the new ensemble.
			cur := g.s.CurrentFragment()
			for i := range n.FragmentList() {
				if n.Fragments[i] == cur {
					n.Fragments[i].Ensemble = newEns
				}
			}
		} else {
			if int(n.NumFragments) == len(n.Fragments) {
				panic("spec413: meta_fragments overflow (model bound exceeded)")
			}
			n.Fragments[n.NumFragments] = Fragment{ID: n.NumFragments + 1, Ensemble: newEns, First: first}
			n.NumFragments++
		}
		n.MetaVersion = g.s.MetaVersion + 1
		nw := &n.W[wi]
		nw.MetaVersion = n.MetaVersion
		for id := max(first, 1); int(id) <= g.p.SendLimit; id++ {
			nw.Confirmed[id-1] &^= bit(b)
		}
		nw.CurrFragment = n.CurrentFragment()
		n.ClearWriteTimeout(b, wi == W2)
		g.copies = copies
		g.out(Action{Kind: kind, Bookie: int8(b)})
		g.copies = 1
	})
}

// W1ChangesEnsemble: ChangeEnsemble(w1, FALSE) on an OPEN ledger.
func (g *gen) W1ChangesEnsemble() { g.ChangeEnsemble(W1ChangesEnsemble, W1) }

// W2ChangesEnsemble: ChangeEnsemble(w2, TRUE) on a ledger IN_RECOVERY.
func (g *gen) W2ChangesEnsemble() { g.ChangeEnsemble(W2ChangesEnsemble, W2) }

// InvalidEnsembleChange: the ensemble change would start a fragment before
// an existing one; the writer's status becomes INVALID.
func (g *gen) InvalidEnsembleChange(kind ActionKind, wi int) {
	if g.s.ValidNextFragment(g.s.W[wi].LAC + 1) {
		return
	}
	g.ensembleChange(wi, func(b, copies int, _ Bookies) {
		g.begin().W[wi].Status = StatusInvalid
		g.copies = copies
		g.out(Action{Kind: kind, Bookie: int8(b)})
		g.copies = 1
	})
}

// W1TriesInvalidEnsembleChange: InvalidEnsembleChange(w1, FALSE).
func (g *gen) W1TriesInvalidEnsembleChange() {
	g.InvalidEnsembleChange(W1TriesInvalidEnsembleChange, W1)
}

// W2TriesInvalidEnsembleChange: InvalidEnsembleChange(w2, TRUE).
func (g *gen) W2TriesInvalidEnsembleChange() {
	g.InvalidEnsembleChange(W2TriesInvalidEnsembleChange, W2)
}

// SendPendingAddOp: after an ensemble change, the lowest pending op of
// each stale (fragment, ensemble) group goes to the bookies new in the
// current ensemble and moves to it.
func (g *gen) SendPendingAddOp(kind ActionKind, wi int) {
	w := &g.s.W[wi]
	if w.Status != statusOf(wi) {
		return
	}
	cf := w.CurrFragment
	ops := w.PendingList()
	for i, op := range ops {
		copies := w.needsResend(op)
		if copies == 0 || !lowestOfGroup(ops, op) {
			continue
		}
		a := Action{Kind: kind, Bookie: -1, Entry: op.Entry.ID}
		g.copies = copies
		g.SendMessagesToEnsemble(a, cf.Ensemble&^op.Ensemble, func(b int) MsgKey { return AddRequest(b, op.Entry, w.LAC, wi == W2) }, func(n *State) {
			nw := &n.W[wi]
			nw.removePendingAt(i)
			nw.addPending(PendingAddOp{Entry: op.Entry, FragmentID: cf.ID, Ensemble: cf.Ensemble})
		})
		g.copies = 1
	}
}

// lowestOfGroup: no op of op's fragment and ensemble has a smaller entry id.
func lowestOfGroup(ops []PendingAddOp, op PendingAddOp) bool {
	for _, op2 := range ops {
		if op2.FragmentID == op.FragmentID && op2.Ensemble == op.Ensemble && op2.Entry.ID < op.Entry.ID {
			return false
		}
	}
	return true
}

// W1SendsPendingAddOp: SendPendingAddOp(w1, FALSE).
func (g *gen) W1SendsPendingAddOp() { g.SendPendingAddOp(W1SendsPendingAddOp, W1) }

// W2SendsPendingAddOp: SendPendingAddOp(w2, TRUE).
func (g *gen) W2SendsPendingAddOp() { g.SendPendingAddOp(W2SendsPendingAddOp, W2) }

// W1CloseLedgerSuccess: w1 closes the OPEN ledger at its LAC, at any time.
func (g *gen) W1CloseLedgerSuccess() {
	w := &g.s.W[W1]
	if w.MetaVersion != g.s.MetaVersion || w.Status != StatusOpen || g.s.MetaStatus != StatusOpen {
		return
	}
	n := g.begin()
	n.W[W1].MetaVersion++
	n.W[W1].Status = StatusClosed
	n.MetaStatus, n.MetaLastEntry = StatusClosed, w.LAC
	n.MetaVersion++
	g.out(Action{Kind: W1CloseLedgerSuccess, Bookie: -1})
}

// W1CloseLedgerFail: the ledger is no longer OPEN; w1's close fails and it
// forgets the metadata version (it may still act as OPEN).
func (g *gen) W1CloseLedgerFail() {
	w := &g.s.W[W1]
	if w.MetaVersion == g.s.MetaVersion || w.Status != StatusOpen || g.s.MetaStatus == StatusOpen {
		return
	}
	g.begin().W[W1].MetaVersion = Nil
	g.out(Action{Kind: W1CloseLedgerFail, Bookie: -1})
}

// W2PlaceInRecovery: w2 marks the ledger IN_RECOVERY and sends a fencing
// read-LAC request to each bookie of the current ensemble.
func (g *gen) W2PlaceInRecovery() {
	if g.s.W[W2].Status != StatusNil || g.s.MetaStatus != StatusOpen {
		return
	}
	cf := g.s.CurrentFragment()
	g.SendMessagesToEnsemble(Action{Kind: W2PlaceInRecovery, Bookie: -1}, cf.Ensemble, FenceRequest, func(n *State) {
		n.MetaStatus = StatusInRecovery
		n.MetaVersion++
		w := &n.W[W2]
		w.Status, w.MetaVersion, w.RecoveryPhase, w.CurrFragment = StatusInRecovery, n.MetaVersion, FencingPhase, cf
	})
}

// W2ReceivesFencingReadLacResponse: w2 notes a fenced bookie and, until it
// has sent a read, the highest LAC (at least its fragment's first entry - 1)
// as its LAC and LAP. It has no status guard.
func (g *gen) W2ReceivesFencingReadLacResponse() {
	w := &g.s.W[W2]
	notStartedReadPhase := true
	for _, m := range g.s.Msgs {
		if m.Key.Type() == ReadRequestMessage {
			notStartedReadPhase = false
			break
		}
	}
	for _, m := range g.s.Msgs {
		k := m.Key
		if m.Count < 1 || k.Type() != FenceResponseMessage {
			continue
		}
		lac := max(k.LAC(), w.CurrFragment.First-1)
		nw := &g.begin().W[W2]
		nw.Fenced |= bit(k.Bookie())
		if notStartedReadPhase && lac > w.LAC {
			nw.LAC, nw.LAP = lac, lac
		}
		g.processed(msgAction(W2ReceivesFencingReadLacResponse, k), k)
	}
}

// W2SendsReadRequests: once every ack quorum of its ensemble holds a
// fenced bookie (or after a successful read), w2 reads entry LAP+1 from
// the ensemble of the fragment that holds it.
func (g *gen) W2SendsReadRequests() {
	w := &g.s.W[W2]
	if w.Status != StatusInRecovery {
		return
	}
	// \A ack_quorum of Qa bookies of the ensemble : fenced \cap ack_quorum # {}
	covered := (w.CurrFragment.Ensemble &^ w.Fenced).Len() < g.p.AckQuorum
	if w.RecoveryPhase != ReadPhase && !(w.RecoveryPhase == FencingPhase && covered) {
		return
	}
	id := w.LAP + 1
	if !g.s.NotSentRead(id) {
		return
	}
	f, ok := g.s.FragmentOfEntryId(id)
	if !ok {
		panic("spec413: FragmentOfEntryId has no witness (TLC stops with an evaluation error)")
	}
	fence := g.p.RecoveryReadsFence
	g.SendMessagesToEnsemble(Action{Kind: W2SendsReadRequests, Bookie: -1, Entry: id}, f.Ensemble,
		func(b int) MsgKey { return ReadRequest(b, id, fence) },
		func(n *State) { n.W[W2].RecoveryPhase = PendingReadResponsePhase })
}

// readResponse is what w2's three read-response actions compute for a
// deliverable ReadResponse k: the ensemble of the entry's fragment ({} for
// NoSuchEntry), has_entry and no_such_entry with k's bookie added, and
// whether every bookie of that ensemble answered or timed out
// (ReceivedAllResponses). ok is false when k is not a deliverable read
// response.
func (g *gen) readResponse(m Msg) (ens, has, nse Bookies, all, ok bool) {
	k := m.Key
	if m.Count < 1 || k.Type() != ReadResponseMessage {
		return 0, 0, 0, false, false
	}
	w := &g.s.W[W2]
	has, nse = w.HasEntry, w.NoSuchEntry
	if e := k.Entry(); e.ID != 0 {
		f, found := g.s.FragmentOfEntryId(e.ID)
		if !found {
			panic("spec413: FragmentOfEntryId has no witness (TLC stops with an evaluation error)")
		}
		ens, has = f.Ensemble, has|bit(k.Bookie())
	} else {
		nse |= bit(k.Bookie())
	}
	all = has.Len()+nse.Len()+g.s.ReadTimeoutCount(ens) == g.p.WriteQuorum
	return ens, has, nse, all, true
}

// fencedBy adds k's bookie to w2's fenced set if k is a fencing read.
func fencedBy(w *Writer, k MsgKey) {
	if k.Fence() {
		w.Fenced |= bit(k.Bookie())
	}
}

// W2ReceivesNonFinalRead: w2 counts a read response while others are
// outstanding. It has no status guard.
func (g *gen) W2ReceivesNonFinalRead() {
	for _, m := range g.s.Msgs {
		_, has, nse, all, ok := g.readResponse(m)
		if !ok || all {
			continue
		}
		k := m.Key
		nw := &g.begin().W[W2]
		nw.HasEntry, nw.NoSuchEntry = has, nse
		if e := k.Entry(); e.ID != 0 {
			nw.CurrReadEntry = e
		}
		fencedBy(nw, k)
		g.processed(msgAction(W2ReceivesNonFinalRead, k), k)
	}
}

// W2CompletesReadSuccessfully: every response is in and AckQuorum bookies
// have the entry; w2 adds a pending write-back of it as entry LAP+1 and
// reads on.
func (g *gen) W2CompletesReadSuccessfully() {
	w := &g.s.W[W2]
	for _, m := range g.s.Msgs {
		ens, has, _, all, ok := g.readResponse(m)
		if !ok || !all || has.Len() < g.p.AckQuorum {
			continue
		}
		k := m.Key
		data := k.Entry().Data
		if k.Entry().ID == 0 {
			data = w.CurrReadEntry.Data
		}
		n := g.begin()
		nw := &n.W[W2]
		nw.HasEntry, nw.NoSuchEntry, nw.CurrReadEntry = 0, 0, Entry{}
		fencedBy(nw, k)
		nw.LAP++
		nw.addPending(PendingAddOp{Entry: Entry{ID: w.LAP + 1, Data: data}, FragmentID: w.CurrFragment.ID, Ensemble: w.CurrFragment.Ensemble})
		nw.RecoveryPhase = ReadPhase
		n.ClearReadTimeouts(k, ens)
		g.out(msgAction(W2CompletesReadSuccessfully, k))
	}
}

// W2CompletesReadWithNoSuchEntry: every response is in and more than
// Qw - Qa bookies said NoSuchEntry: the read phase ends.
func (g *gen) W2CompletesReadWithNoSuchEntry() {
	for _, m := range g.s.Msgs {
		ens, _, nse, all, ok := g.readResponse(m)
		if !ok || !all || nse.Len() < g.p.WriteQuorum-g.p.AckQuorum+1 {
			continue
		}
		k := m.Key
		n := g.begin()
		nw := &n.W[W2]
		nw.HasEntry, nw.NoSuchEntry, nw.CurrReadEntry = 0, 0, Entry{}
		fencedBy(nw, k)
		nw.RecoveryPhase = WritePhase
		n.ClearReadTimeouts(k, ens)
		g.out(msgAction(W2CompletesReadWithNoSuchEntry, k))
	}
}

// W2WritesBackEntry: in the write phase, w2 sends its lowest unsent
// pending entry to its current ensemble (w2 itself does not change).
func (g *gen) W2WritesBackEntry() {
	w := &g.s.W[W2]
	if w.Status != StatusInRecovery || w.RecoveryPhase != WritePhase {
		return
	}
	ops := w.PendingList()
	for _, op := range ops {
		if !g.s.NotSentWrite(op.Entry) {
			continue
		}
		lowest := true
		for _, op2 := range ops {
			if op2.Entry.ID < op.Entry.ID && g.s.NotSentWrite(op2.Entry) {
				lowest = false
				break
			}
		}
		if !lowest {
			continue
		}
		e := op.Entry
		g.SendMessagesToEnsemble(Action{Kind: W2WritesBackEntry, Bookie: -1, Entry: e.ID}, w.CurrFragment.Ensemble,
			func(b int) MsgKey { return AddRequest(b, e, w.LAC, true) }, func(*State) {})
	}
}

// W2ClosesLedger: with every write-back confirmed, w2 closes the ledger at
// its LAC.
func (g *gen) W2ClosesLedger() {
	w := &g.s.W[W2]
	if g.s.MetaVersion != w.MetaVersion || g.s.MetaStatus != StatusInRecovery || w.Status != StatusInRecovery ||
		w.RecoveryPhase != WritePhase || w.NumPending != 0 {
		return
	}
	n := g.begin()
	n.W[W2].Status = StatusClosed
	n.W[W2].MetaVersion++
	n.MetaVersion++
	n.MetaStatus, n.MetaLastEntry = StatusClosed, w.LAC
	g.out(Action{Kind: W2ClosesLedger, Bookie: -1})
}
