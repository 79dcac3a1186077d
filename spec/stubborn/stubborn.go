// Package stubborn chooses, in each state, which enabled transitions a
// partial-order reduction expands: a strong stubborn set (Valmari) built
// from spec's footprint declarations (spec/footprint.go and the
// actions' own, spec/*_footprint.go).
//
// In a state s the set T is closed under:
//   - an enabled transition in T brings in every transition whose
//     footprint conflicts with its own (may not commute with it, or may
//     disable it), ignoring variables no transition can change any more
//     (Footprints.Frozen);
//   - a disabled transition in T brings in every transition that writes
//     one of its necessary variables (Footprints.Necessary: any path that
//     enables it writes one);
//   - transitions that can never fire again from s (Footprints.Dead) are
//     left out, since no path from s contains them.
//
// With crashes, re-formats and lost disks the same argument holds: their
// steps are transitions like any other, with footprints (a crash
// conflicts with every step of its bookie, every send and every ensemble
// choice), the variables they can change back are not frozen (a fence a
// crash, a re-format or a lost disk can still take back), and Progress
// puts the faults first (2·(crashes + re-formats + lost disks) − bookies
// down grows on each fault step and is left alone by the others), so the
// graph stays acyclic.
//
// Such a set keeps every terminal state of the full graph (Valmari's
// theorem for strong stubborn sets). For invariants, a set is used only
// if it holds an enabled transition invisible to them (one that changes
// nothing they read); it may hold visible ones besides. On an acyclic
// graph (spec's Progress, checked on every edge by the caller) every
// state the full graph reaches then has a counterpart in the reduced one
// with the same values of what the invariants read, by induction on the
// length of a path to it and on the height of the state: if the path
// holds a transition of the set, the first one commutes to the front
// (the others are outside the set) and the path from its successor is
// shorter; if not, the invisible enabled transition t of the set stays
// enabled along the path and commutes with it, so from t's successor the
// path reaches a state that differs from the target only by t, which
// changes nothing the invariants read. This is weaker than condition C2
// of ample sets (no visible transition in a reduced set; Clarke,
// Grumberg and Peled, Model Checking, ch. 10), which preserves
// stuttering-equivalent behaviours for LTL; invariants need only the
// values. spec/porbound holds it against whole graphs
// (TestVisibleValuesKept).
//
// AutoRecovery's graphs have cycles (a worker releases a ledger it could
// not repair and takes it again), and decommission's with them. There the
// cycle proviso holds instead: the caller says which enabled transitions
// do not increase Progress in s (closing), and a set holding one is not
// used, so a state is either expanded fully or only along edges that
// increase Progress. The induction above then runs on the length of the
// path and, second, on Progress (finitely many states, so it cannot
// increase for ever): the step to t's successor, the only one that
// keeps the path's length, is taken only in a state a set reduced, and
// so increases Progress; in a state expanded fully every path starts
// with a transition of the set. Every cycle of the reduced graph thus
// passes through a state expanded fully, which is what the proviso of
// ample sets (C3) asks. In each state the set chosen is the smallest
// of those seeded by one enabled invisible transition, ties to the first
// in the universe's order, so the choice is a function of the state.
package stubborn

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/bkcheck/bkcheck/spec"
)

// Reducer holds what is computed once per model: the universe of
// transitions, their footprints, and the conflict relation for each set
// of frozen fences. It is safe for concurrent use; each goroutine brings
// a Scratch.
type Reducer struct {
	fps      *spec.Footprints
	universe []spec.Action // a label for each node: transitions that differ only in their loss pattern
	index    map[spec.Action]int32
	fp       []spec.Footprint
	reads    *spec.PropertyReads
	writers  []bitset // writers[v]: the transitions that write variable v
	visBase  bitset   // transitions visible whatever the state
	visLAC   []bitset // visLAC[c]: transitions writing client c's LAC
	words    int
	p        spec.Params
	labels   int // transitions declared (the universe's labels)

	mu       sync.Mutex                 // guards computing a conflict relation
	conflict []atomic.Pointer[[]bitset] // by fenced bookies (a bit mask): conflict[t]
}

// New prepares the reduction of m for properties reading reads (nil:
// terminal-state properties only). It fails where m has options the
// footprint declarations do not cover.
func New(m *spec.Model, reads *spec.PropertyReads) (*Reducer, error) {
	fps, ok := m.Footprints()
	if !ok {
		return nil, notCovered(m)
	}
	return newFrom(fps, m.P, reads, fps.Universe()), nil
}

// Covers reports, as New would, whether the reduction covers m, without
// preparing it.
func Covers(m *spec.Model) error {
	if _, ok := m.Footprints(); !ok {
		return notCovered(m)
	}
	return nil
}

// notCovered names what of m the reduction does not cover.
func notCovered(m *spec.Model) error {
	return fmt.Errorf("%s; not: %s", covers, m.NotCovered())
}

// covers says what the partial-order reduction covers.
const covers = "the partial-order reduction covers the TLA+ spec's actions (and the variants gwq, no-recovery-fence, no-lac-floor, add-checks-metadata; striping; partial replacement; recovery from the LAC; a reliable network; crashes in every journal mode, re-formats, lost disks, read-only and full disks, corrupt reads and the variant corrupt-read-nosuch, unavailable bookies; the Java add path and its variants callbacks-after-unset and skip-change-without-failed; data integrity and its variants await-preboot-check and integrity-fences-closed; checkpoints and their variants; ledger deletion and its variants delete-forgets-fence and collect-keeps-fence; the split add check; sequence recovery reads; the re-reading close; AutoRecovery and its variant skip-inconsistent-range, and decommission, under a cycle proviso)"

func newFrom(fps *spec.Footprints, p spec.Params, reads *spec.PropertyReads, labels []spec.Action) *Reducer {
	r := &Reducer{fps: fps, reads: reads, p: p, labels: len(labels), conflict: make([]atomic.Pointer[[]bitset], 1<<uint(p.Bookies))}
	// The transitions that differ only in which messages are lost (or, for
	// an ensemble change, which bookies it replaces) are one node: they
	// read and write the same variables but for the lost and live flags,
	// so each conflicts with every other, and a stubborn set holds all or
	// none of them. A node's footprint is its members' union; Dead and
	// Necessary do not depend on the loss pattern, so the first member
	// stands for the node.
	r.index = make(map[spec.Action]int32, len(labels))
	node := map[spec.Action]int32{}
	for _, a := range labels {
		key := a
		key.Lost = 0
		i, ok := node[key]
		if !ok {
			i = int32(len(r.universe))
			node[key] = i
			r.universe = append(r.universe, a)
			r.fp = append(r.fp, spec.Footprint{Reads: fps.NewSet(), Writes: fps.NewSet(), Sets: fps.NewSet()})
		}
		r.index[a] = i
		f, u := fps.Of(a), &r.fp[i]
		for w := range f.Reads {
			u.Reads[w] |= f.Reads[w]
			// Set-only in the node if set-only in every member writing it.
			u.Sets[w] = (u.Sets[w] | f.Sets[w]) &^ (u.Writes[w] &^ u.Sets[w]) &^ (f.Writes[w] &^ f.Sets[w])
			u.Writes[w] |= f.Writes[w]
		}
	}
	n := len(r.universe)
	r.words = (n + 63) / 64
	r.writers = make([]bitset, fps.NumVars())
	for v := range r.writers {
		r.writers[v] = make(bitset, r.words)
	}
	for i := range r.universe {
		for v := range fps.NumVars() {
			if r.fp[i].Writes.Has(v) {
				r.writers[v].set(i)
			}
		}
	}
	if reads != nil {
		// Visible is what the state adds (a client's LAC, by status)
		// over a base that does not depend on it: the base is Visible
		// with every client in recovery, each LAC with its client open.
		var base spec.State
		for c := range base.Clients {
			base.Clients[c].Status = spec.StatusInRecovery
		}
		r.visBase = r.writing(fps.Visible(&base, *reads))
		m := r.p.Clients
		r.visLAC = make([]bitset, m)
		for c := range m {
			lac := fps.NewSet()
			lac[fps.ClientLAC(c)/64] |= 1 << uint(fps.ClientLAC(c)%64)
			r.visLAC[c] = r.writing(lac)
		}
	}
	return r
}

// writing returns the transitions whose writes meet vs.
func (r *Reducer) writing(vs spec.VarSet) bitset {
	b := make(bitset, r.words)
	for i := range r.universe {
		if r.fp[i].Writes.Meets(vs) {
			b.set(i)
		}
	}
	return b
}

// Size is the number of transitions declared (the universe's labels).
func (r *Reducer) Size() int { return r.labels }

// conflicts returns the conflict relation in s: with the fences of its
// fenced bookies frozen, computed on first use.
func (r *Reducer) conflicts(s *spec.State) []bitset {
	slot := &r.conflict[r.fps.FrozenFences(s)]
	if c := slot.Load(); c != nil {
		return *c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := slot.Load(); c != nil {
		return *c
	}
	frozen := r.fps.Frozen(s)
	n := len(r.universe)
	c := make([]bitset, n)
	for t := range n {
		c[t] = make(bitset, r.words)
		for u := range n {
			if r.fp[t].ConflictsOutside(r.fp[u], frozen) {
				c[t].set(u)
			}
		}
	}
	slot.Store(&c)
	return c
}

// Scratch is one goroutine's working space, and its figures.
type Scratch struct {
	r                  *Reducer
	s                  *spec.State // the state being reduced
	conf               []bitset    // its conflict relation
	enabled, set, best bitset
	dead, live         bitset // transitions known dead, and known not to be, in s
	closing            bitset // enabled transitions with an edge that does not increase spec.Progress
	rejected           bool   // a set was turned down for holding one (the cycle proviso)
	visible            bitset
	nesKnown           bitset      // disabled transitions whose enablers are in nes
	nes                []bitset    // nes[t]: the transitions that may enable t (writers of its necessary variables)
	tried              bitset      // seeds whose sets were built in this state: each held at least the best so far
	vars               []int       // NecessaryInto's answer
	liveVars           spec.VarSet // the state's live variables (Footprints.LiveInto), once a disabled transition asks
	liveVarsKnown      bool
	work, idx          []int32
	// States is how many states were reduced, Full how many of them
	// were expanded fully, and Proviso how many of those because every
	// smaller set held a transition that may close a cycle.
	States, Full, Proviso int64
}

// NewScratch returns working space for one goroutine.
func (r *Reducer) NewScratch() *Scratch {
	w := r.words
	sc := &Scratch{r: r, enabled: make(bitset, w), set: make(bitset, w), best: make(bitset, w),
		dead: make(bitset, w), live: make(bitset, w), closing: make(bitset, w), visible: make(bitset, w), nesKnown: make(bitset, w), tried: make(bitset, w),
		nes: make([]bitset, len(r.universe)), liveVars: r.fps.NewSet()}
	for i := range sc.nes {
		sc.nes[i] = make(bitset, w)
	}
	return sc
}

// Choose marks in keep which of the enabled transitions (in s) to expand;
// keep has one entry per enabled transition, and so has closing (nil:
// none) where the transition's edge from s does not increase
// spec.Progress. A set holding such a transition is not used (the cycle
// proviso: every state a reduced set expands moves up the measure, so
// every cycle of the reduced graph passes through a state expanded
// fully). It returns an error for a transition outside the universe (a
// model the declarations do not describe).
func (sc *Scratch) Choose(s *spec.State, enabled []spec.Action, closing, keep []bool) error {
	r := sc.r
	sc.States++
	clear(sc.enabled)
	clear(sc.closing)
	sc.rejected = false
	sc.idx = sc.idx[:0]
	for i, a := range enabled {
		t, ok := r.index[a]
		if !ok {
			return fmt.Errorf("stubborn: transition %v is not in the declared universe", a)
		}
		sc.idx = append(sc.idx, t)
		sc.enabled.set(int(t))
		if closing != nil && closing[i] {
			sc.closing.set(int(t))
		}
	}
	total := sc.enabled.count()
	if total <= 1 {
		return sc.full(keep)
	}
	sc.s, sc.conf = s, r.conflicts(s)
	clear(sc.dead)
	clear(sc.live)
	clear(sc.nesKnown)
	sc.liveVarsKnown = false
	clear(sc.visible)
	if r.reads != nil {
		copy(sc.visible, r.visBase)
		for c, lac := range r.visLAC {
			switch st := s.Clients[c].Status; {
			case !r.reads.ClientLAC && !r.reads.All, st == spec.StatusNil, st == spec.StatusInRecovery, st == spec.RecoveryAborted:
			default:
				sc.visible.or(lac)
			}
		}
	}
	bestN := total
	clear(sc.tried)
seeds:
	for w := range sc.enabled {
		for word := sc.enabled[w]; word != 0; word &= word - 1 {
			seed := w*64 + bits.TrailingZeros64(word)
			if sc.visible.has(seed) {
				continue
			}
			if sc.closing.has(seed) {
				sc.rejected = true
				continue
			}
			if k := sc.closure(seed, bestN); k < bestN {
				bestN = k
				copy(sc.best, sc.set)
				if k == 1 {
					break seeds
				}
			}
			sc.tried.set(seed)
		}
	}
	sc.s = nil
	if bestN >= total {
		if sc.rejected {
			sc.Proviso++
		}
		return sc.full(keep)
	}
	for i, t := range sc.idx {
		keep[i] = sc.best.has(int(t))
	}
	return nil
}

// full keeps every transition.
func (sc *Scratch) full(keep []bool) error {
	sc.Full++
	for i := range keep {
		keep[i] = true
	}
	return nil
}

// isDead reports whether transition u, disabled, is dead in the state
// being reduced (memoized).
func (sc *Scratch) isDead(u int) bool {
	switch {
	case sc.dead.has(u):
		return true
	case sc.live.has(u):
		return false
	case sc.r.fps.Dead(sc.s, sc.r.universe[u]):
		sc.dead.set(u)
		return true
	}
	sc.live.set(u)
	return false
}

// enablers returns the transitions that may enable t, disabled, in the
// state being reduced (memoized).
func (sc *Scratch) enablers(t int) bitset {
	b := sc.nes[t]
	if sc.nesKnown.has(t) {
		return b
	}
	sc.nesKnown.set(t)
	clear(b)
	r := sc.r
	if !sc.liveVarsKnown {
		sc.liveVars = r.fps.LiveInto(sc.liveVars, sc.s)
		sc.liveVarsKnown = true
	}
	vars, ok := r.fps.NecessaryInto(sc.vars, sc.s, sc.liveVars, r.universe[t])
	sc.vars = vars
	if !ok {
		for w, word := range r.fp[t].Reads {
			for ; word != 0; word &= word - 1 {
				b.or(r.writers[w*64+bits.TrailingZeros64(word)])
			}
		}
		return b
	}
	for _, v := range vars {
		b.or(r.writers[v])
	}
	return b
}

// brings returns what transition t brings into a set holding it, in the
// state being reduced: what conflicts with it if it is enabled, what may
// enable it if not. Dead transitions are left out by the caller.
func (sc *Scratch) brings(t int) bitset {
	if sc.enabled.has(t) {
		return sc.conf[t]
	}
	return sc.enablers(t)
}

// closure builds in sc.set the stubborn set seeded by seed and returns
// how many enabled transitions it holds, or limit as soon as it reaches
// limit. Seeds are tried in the
// universe's order, bookies' steps first, whose sets are the small ones
// where there are any, so that later seeds stop early.
func (sc *Scratch) closure(seed, limit int) int {
	clear(sc.set)
	sc.set.set(seed)
	sc.work = append(sc.work[:0], int32(seed))
	k := 1
	for len(sc.work) > 0 {
		t := int(sc.work[len(sc.work)-1])
		sc.work = sc.work[:len(sc.work)-1]
		for w, word := range sc.brings(t) {
			for x := word &^ sc.set[w] &^ sc.dead[w]; x != 0; x &= x - 1 {
				u := w*64 + bits.TrailingZeros64(x)
				en := sc.enabled.has(u)
				if !en && sc.isDead(u) {
					continue
				}
				sc.set.set(u)
				sc.work = append(sc.work, int32(u))
				if en && sc.closing.has(u) {
					sc.rejected = true
					return limit
				}
				if en {
					// A seed tried before: this set holds its set,
					// which held at least limit.
					if k++; k >= limit || sc.tried.has(u) {
						return limit
					}
				}
			}
		}
	}
	return k
}

// bitset is a set of transition numbers.
type bitset []uint64

func (b bitset) set(i int)      { b[i/64] |= 1 << uint(i%64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<uint(i%64)) != 0 }
func (b bitset) or(c bitset) {
	for i := range b {
		b[i] |= c[i]
	}
}
func (b bitset) count() (n int) {
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}
