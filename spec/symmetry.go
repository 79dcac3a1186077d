package spec

import (
	"bytes"
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// Symmetry selects which ids may be permuted when states are deduplicated:
// bookie ids, client ids, or both. A state and any relabelling of it are
// then one state for the search (TLC's SYMMETRY).
type Symmetry struct {
	Bookies bool
	Clients bool
}

// ParseSymmetry reads "none", "bookies", "clients" or "bookies,clients"
// (or "clients,bookies"). A name given twice, or none with another, is
// refused: the text is taken as meant, so it must say one thing.
func ParseSymmetry(s string) (Symmetry, error) {
	var sym Symmetry
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		name := strings.TrimSpace(part)
		if name != "" && seen[name] {
			return Symmetry{}, fmt.Errorf("%q names %s twice (want none, bookies, clients or bookies,clients)", s, name)
		}
		seen[name] = true
		switch name {
		case "", "none":
		case "bookies":
			sym.Bookies = true
		case "clients":
			sym.Clients = true
		default:
			return Symmetry{}, fmt.Errorf("unknown %q (want none, bookies, clients or bookies,clients)", part)
		}
	}
	if seen["none"] && sym != (Symmetry{}) {
		return Symmetry{}, fmt.Errorf("%q combines none with %s (want none, bookies, clients or bookies,clients)", s, sym)
	}
	return sym, nil
}

func (s Symmetry) String() string {
	switch {
	case s.Bookies && s.Clients:
		return "bookies,clients"
	case s.Bookies:
		return "bookies"
	case s.Clients:
		return "clients"
	}
	return "none"
}

// MarshalText implements encoding.TextMarshaler (the setting's text form).
func (s Symmetry) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Symmetry) UnmarshalText(b []byte) error {
	sym, err := ParseSymmetry(string(b))
	if err != nil {
		return err
	}
	*s = sym
	return nil
}

// CheckSymmetry reports why a symmetry would be unsound for p, or nil.
//
// Symmetry reduction is sound when the transition relation commutes with
// relabelling. Client roles are chosen by whichever client acts first, so
// client symmetry always is. Bookie symmetry is broken where the model
// picks a bookie by its index: SelectEnsemble's CHOOSE (and the striped
// replacement choice). At creation that is harmless (from the fully
// symmetric initial state every choice lies in one orbit), and an ensemble
// change has a single candidate while at most one bookie is outside the
// ensemble. With two or more spare bookies (bookies >= E + 2) a change can
// pick among several, and the reduced search could miss states. With
// striping the ensemble positions are ordered: relabelling bookies moves
// each position's bookie along, which keeps write sets intact, so the same
// rule applies; permuting positions themselves is not a symmetry (an
// entry's write set depends on them) and is not offered.
func (p Params) CheckSymmetry(s Symmetry) error {
	if s.Clients && p.AutoRecovery {
		return fmt.Errorf("client symmetry is unsound with --autorecovery: the last client, c%d, is the ReplicationWorker's admin client (use bookies symmetry)", p.Clients)
	}
	if s.Bookies && p.Unavailable > 0 {
		return fmt.Errorf("bookie symmetry is unsound with unavailable bookies: they are fixed ones (b%d..b%d)", p.Bookies-p.Unavailable+1, p.Bookies)
	}
	if s.Bookies && p.Bookies >= p.Ensemble+2 {
		return fmt.Errorf("bookie symmetry is unsound with %d bookies and an ensemble of %d: an ensemble change can choose among %d spare bookies by index, which relabelling does not preserve (use at most E+1 = %d bookies, or clients symmetry)",
			p.Bookies, p.Ensemble, p.Bookies-p.Ensemble, p.Ensemble+1)
	}
	return nil
}

// permutation relabels bookies and clients: bookie b becomes bp[b], client
// c becomes cp[c].
type permutation struct {
	bp [MaxBookies]int8
	cp [MaxClients]int8
}

func (pm *permutation) bookies(s Bookies) Bookies {
	var out Bookies
	for ; s != 0; s &= s - 1 {
		out |= 1 << uint(pm.bp[bits.TrailingZeros8(uint8(s))])
	}
	return out
}

func (pm *permutation) layout(l Layout, e int) Layout {
	var out Layout
	for i := 0; i < e; i++ {
		out = out.With(i, int(pm.bp[l.At(i)]))
	}
	return out
}

// failures relabels the bookies of a failure map (indexes stay).
func (pm *permutation) failures(f Failures) Failures {
	var out Failures
	for i := 0; i < MaxBookies; i++ {
		if b, ok := f.At(i); ok {
			out = out.Put(i, int(pm.bp[b]))
		}
	}
	return out
}

// mapping relabels a map from bookie to bookie (State.RWMap): keys and
// values both.
func (pm *permutation) mapping(f Failures) Failures {
	var out Failures
	for i := 0; i < MaxBookies; i++ {
		if b, ok := f.At(i); ok {
			out = out.Put(int(pm.bp[i]), int(pm.bp[b]))
		}
	}
	return out
}

// msg relabels the bookie and client fields of a message record in place,
// without unpacking the other fields (this runs for every message of every
// relabelling tried: it was a fifth of a symmetric search's time).
func (pm *permutation) msg(k MsgKey) MsgKey {
	const ids = 7<<shBookie | 3<<shCid
	return k&^ids | MsgKey(pm.bp[k>>shBookie&7])<<shBookie | MsgKey(pm.cp[k>>shCid&3])<<shCid
}

func (pm *permutation) fragment(f Fragment, e int, ordered bool) Fragment {
	f.Ensemble = pm.bookies(f.Ensemble)
	if ordered {
		f.Layout = pm.layout(f.Layout, e)
	}
	return f
}

// permute writes into dst the state s with every bookie and client id
// relabelled by pm: bookie-indexed variables, bookie sets, ensembles and
// their layouts, message records, read responses, pending ops and the
// client records themselves.
func (m *Model) permute(dst, s *State, pm *permutation) {
	p := m.P
	ordered := p.Ordered()
	msgs := dst.Msgs[:0]
	*dst = *s
	for b := 0; b < p.Bookies; b++ {
		nb := pm.bp[b]
		dst.BEntries[nb], dst.BLAC[nb], dst.BLAFR[nb] = s.BEntries[b], s.BLAC[b], s.BLAFR[b]
		dst.BUnflushed[nb], dst.BDurableLAC[nb], dst.BChecked[nb] = s.BUnflushed[b], s.BDurableLAC[b], s.BChecked[b]
	}
	dst.BCollected = pm.bookies(s.BCollected)
	dst.BVolatileFence = pm.bookies(s.BVolatileFence)
	dst.BFenced = pm.bookies(s.BFenced)
	dst.BDown = pm.bookies(s.BDown)
	dst.BWiped = pm.bookies(s.BWiped)
	dst.BReadOnly = pm.bookies(s.BReadOnly)
	dst.BDiskFull = pm.bookies(s.BDiskFull)
	dst.BLimbo = pm.bookies(s.BLimbo)
	dst.BStale = pm.bookies(s.BStale)
	dst.BCheckPending = pm.bookies(s.BCheckPending)
	dst.BHandle = pm.bookies(s.BHandle)
	dst.BUnflushedFence = pm.bookies(s.BUnflushedFence)
	dst.BIndexKey, dst.BIndexFenced = pm.bookies(s.BIndexKey), pm.bookies(s.BIndexFenced)
	dst.BKeyRecord, dst.BFenceRecord = pm.bookies(s.BKeyRecord), pm.bookies(s.BFenceRecord)
	dst.BCacheDirty = pm.bookies(s.BCacheDirty)
	dst.URMissing = pm.bookies(s.URMissing)
	dst.DecomBookie = pm.bookies(s.DecomBookie)
	dst.RWMap = pm.mapping(s.RWMap)
	for i := 0; i < int(s.NumMetaFragments); i++ {
		dst.MetaFragments[i] = pm.fragment(s.MetaFragments[i], p.Ensemble, ordered)
	}
	for c := 0; c < p.Clients; c++ {
		src := &s.Clients[c]
		nc := &dst.Clients[pm.cp[c]]
		*nc = *src
		for i := 0; i < int(src.NumFragments); i++ {
			nc.Fragments[i] = pm.fragment(src.Fragments[i], p.Ensemble, ordered)
		}
		for i := 0; i < int(src.NumPending); i++ {
			op := src.Pending[i]
			op.Ensemble = pm.bookies(op.Ensemble)
			if ordered {
				op.Layout = pm.layout(op.Layout, p.Ensemble)
			}
			nc.Pending[i] = op
		}
		slices.SortFunc(nc.Pending[:nc.NumPending], func(a, b PendingAddOp) int {
			switch {
			case a.Less(b):
				return -1
			case b.Less(a):
				return 1
			}
			return 0
		})
		for e := 0; e < p.Entries; e++ {
			nc.Confirmed[e] = pm.bookies(src.Confirmed[e])
		}
		nc.Fenced = pm.bookies(src.Fenced)
		nc.RecoveryEns = pm.bookies(src.RecoveryEns)
		// A layout not in use is 0 (b1 at every position), and stays so.
		if ordered && src.RecoveryEns != 0 {
			nc.RecoveryLay = pm.layout(src.RecoveryLay, p.Ensemble)
		}
		for i := 0; i < int(src.NumResponses); i++ {
			nc.ReadResponses[i] = pm.msg(src.ReadResponses[i])
		}
		slices.Sort(nc.ReadResponses[:nc.NumResponses])
		nc.ChangeFailed = pm.failures(src.ChangeFailed)
		nc.ChangeOrig = pm.bookies(src.ChangeOrig)
		nc.DelayedFailed = pm.failures(src.DelayedFailed)
		for e := 0; e < p.Entries; e++ {
			nc.DoneEns[e] = pm.bookies(src.DoneEns[e])
		}
		// A layout not in use is 0 (b1 at every position), and stays so.
		if ordered && src.ChangeOrig != 0 {
			nc.ChangeOrigLay = pm.layout(src.ChangeOrigLay, p.Ensemble)
		}
		for e := 0; ordered && e < p.Entries; e++ {
			if src.DoneEns[e] != 0 {
				nc.DoneLay[e] = pm.layout(src.DoneLay[e], p.Ensemble)
			}
		}
		nc.Created.Ensemble = pm.bookies(src.Created.Ensemble)
		if ordered && src.Created.Ensemble != 0 {
			nc.Created.Layout = pm.layout(src.Created.Layout, p.Ensemble)
		}
	}
	for _, msg := range s.Msgs {
		msgs = append(msgs, Msg{Key: pm.msg(msg.Key), Count: msg.Count})
	}
	sortMsgs(msgs)
	dst.Msgs = msgs
}

// relabeller applies a permutation while a state is encoded
// (Model.encode), so that a relabelling is encoded without being built.
// A nil relabeller is the identity. The id-indexed parts of the encoding
// are written in new-id order, reading old id binv[r] (cinv[r]) for new
// id r; the sorted sets whose order relabelling changes (pending ops, read
// responses, messages) are relabelled into its buffers and sorted again.
type relabeller struct {
	pm   permutation
	binv [MaxBookies]int8 // the old id of new bookie r
	cinv [MaxClients]int8 // the old id of new client r
	ops  [MaxEntries]PendingAddOp
	resp [MaxBookies]MsgKey
	msgs []Msg
}

// setInverse fills binv and cinv from pm.
func (rl *relabeller) setInverse() {
	for b, nb := range rl.pm.bp {
		rl.binv[nb] = int8(b)
	}
	for c, nc := range rl.pm.cp {
		rl.cinv[nc] = int8(c)
	}
}

func (rl *relabeller) set(x Bookies) Bookies {
	if rl == nil {
		return x
	}
	return rl.pm.bookies(x)
}

func (rl *relabeller) failures(f Failures) Failures {
	if rl == nil {
		return f
	}
	return rl.pm.failures(f)
}

func (rl *relabeller) mapping(f Failures) Failures {
	if rl == nil {
		return f
	}
	return rl.pm.mapping(f)
}

func (rl *relabeller) layout(l Layout, e int) Layout {
	if rl == nil {
		return l
	}
	return rl.pm.layout(l, e)
}

// bookie is the old id of new bookie r.
func (rl *relabeller) bookie(r int) int {
	if rl == nil {
		return r
	}
	return int(rl.binv[r])
}

// client is the old id of new client r.
func (rl *relabeller) client(r int) int {
	if rl == nil {
		return r
	}
	return int(rl.cinv[r])
}

// pending is c's pending ops relabelled, in their sorted order (valid
// until the next call).
func (rl *relabeller) pending(c *Client, ordered bool, e int) []PendingAddOp {
	if rl == nil {
		return c.PendingList()
	}
	ops := rl.ops[:c.NumPending]
	for i, op := range c.PendingList() {
		op.Ensemble = rl.pm.bookies(op.Ensemble)
		if ordered {
			op.Layout = rl.pm.layout(op.Layout, e)
		}
		j := i
		for ; j > 0 && op.Less(ops[j-1]); j-- {
			ops[j] = ops[j-1]
		}
		ops[j] = op
	}
	return ops
}

// responses is c's read responses relabelled and sorted (valid until the
// next call).
func (rl *relabeller) responses(c *Client) []MsgKey {
	if rl == nil {
		return c.Responses()
	}
	out := rl.resp[:c.NumResponses]
	for i, k := range c.Responses() {
		k = rl.pm.msg(k)
		j := i
		for ; j > 0 && out[j-1] > k; j-- {
			out[j] = out[j-1]
		}
		out[j] = k
	}
	return out
}

// messages is the history relabelled and sorted (valid until the next
// call).
func (rl *relabeller) messages(ms []Msg) []Msg {
	if rl == nil {
		return ms
	}
	out := rl.msgs[:0]
	for _, msg := range ms {
		out = append(out, Msg{Key: rl.pm.msg(msg.Key), Count: msg.Count})
	}
	sortMsgs(out)
	rl.msgs = out
	return out
}

// sortMsgs sorts a relabelled history by key. Histories are short (tens of
// records) and relabelling leaves runs of them in order, so a direct
// insertion sort beats a general sort that calls a comparison function.
func sortMsgs(msgs []Msg) {
	if len(msgs) > 64 {
		slices.SortFunc(msgs, func(a, b Msg) int { return cmp.Compare(a.Key, b.Key) })
		return
	}
	for i := 1; i < len(msgs); i++ {
		m := msgs[i]
		j := i
		for ; j > 0 && msgs[j-1].Key > m.Key; j-- {
			msgs[j] = msgs[j-1]
		}
		msgs[j] = m
	}
}

// Canonicalizer computes a canonical representative of a state's orbit
// under a symmetry: the smallest encoding over a set of relabellings that
// depends only on the orbit.
//
// Trying every permutation (4! x 2! = 48 for the shipped configuration)
// would encode each successor 48 times. Instead each bookie and each
// client gets a signature built only from what relabelling preserves (its
// LAC, entries, flags, the shape of the messages to and from it, ...);
// ids are then assigned in signature order, and only ties are resolved by
// trying every order within the tied group. The candidate set is the same
// for every state of an orbit, so its smallest encoding is canonical, and
// in most states signatures differ and a single relabelling is encoded.
type Canonicalizer struct {
	m    *Model
	sym  Symmetry
	buf  []byte
	best []byte
	// per call
	bsig           [MaxBookies]uint64
	csig           [MaxClients]uint64
	border, corder []int8 // ids sorted by signature
	rl             relabeller
	bestPm         permutation // the relabelling that gave best
	tried          int
}

// Relabelling renames bookies and clients: the one that turns a state
// into its canonical form (Canonicalizer.Last).
type Relabelling struct{ pm permutation }

// Last returns the relabelling that turned the state of the last call
// to Canonical into the canonical form returned.
func (c *Canonicalizer) Last() Relabelling { return Relabelling{c.bestPm} }

// Inverse returns the relabelling that undoes r.
func (r Relabelling) Inverse() Relabelling {
	var inv Relabelling
	for b, nb := range r.pm.bp {
		inv.pm.bp[nb] = int8(b)
	}
	for c, nc := range r.pm.cp {
		inv.pm.cp[nc] = int8(c)
	}
	return inv
}

// Relabel writes into dst the state s relabelled by r (dst's message
// buffer is reused).
func (m *Model) Relabel(dst, s *State, r Relabelling) { m.permute(dst, s, &r.pm) }

// Action returns the label transition a has once its state is
// relabelled: the same transition of the relabelled state (the model is
// symmetric under the relabellings a Canonicalizer uses).
func (r Relabelling) Action(a Action) Action {
	if a.Client >= 0 {
		a.Client = r.pm.cp[a.Client]
	}
	if a.Bookie >= 0 {
		a.Bookie = r.pm.bp[a.Bookie]
	}
	a.Lost = r.pm.bookies(a.Lost)
	return a
}

// NewCanonicalizer prepares a canonicalizer for sym.
func (m *Model) NewCanonicalizer(sym Symmetry) *Canonicalizer {
	return &Canonicalizer{m: m, sym: sym}
}

// Tried reports how many relabellings were encoded since the last call to
// ResetTried (a measure of the cost of canonicalisation).
func (c *Canonicalizer) Tried() int { return c.tried }

// ResetTried sets Tried to 0.
func (c *Canonicalizer) ResetTried() { c.tried = 0 }

// permutationsOf lists the permutations of 0..n-1 (only the identity when
// !all).
func permutationsOf(n int, all bool) [][]int8 {
	id := make([]int8, n)
	for i := range id {
		id[i] = int8(i)
	}
	if !all {
		return [][]int8{id}
	}
	var out [][]int8
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			out = append(out, slices.Clone(id))
			return
		}
		for i := k; i < n; i++ {
			id[k], id[i] = id[i], id[k]
			rec(k + 1)
			id[k], id[i] = id[i], id[k]
		}
	}
	rec(0)
	return out
}

func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// signatures fills bsig and csig with relabelling-invariant summaries.
// Every term a set contributes is added per member (bit by bit), not by
// asking each bookie whether it is in the set: most sets are small.
func (c *Canonicalizer) signatures(s *State) {
	p := c.m.P
	// The parts of a message key that survive relabelling.
	var mask MsgKey = ^MsgKey(0)
	if c.sym.Bookies {
		mask &^= 7 << shBookie
	}
	if c.sym.Clients {
		mask &^= 3 << shCid
	}
	var flags [MaxBookies]uint64
	for i, set := range [...]Bookies{s.BFenced, s.BDown, s.BReadOnly, s.BLimbo, s.BWiped, s.BDiskFull, s.BUnflushedFence, s.BCollected, s.BVolatileFence, s.BCheckPending, s.BHandle, s.BIndexKey, s.BIndexFenced, s.BKeyRecord, s.BFenceRecord, s.BCacheDirty, s.URMissing, s.DecomBookie, s.BStale} {
		for x := set; x != 0; x &= x - 1 {
			flags[bits.TrailingZeros8(uint8(x))] += 1 << (24 + uint(i))
		}
	}
	for b := 0; b < p.Bookies; b++ {
		h := uint64(s.BEntries[b])*31 + uint64(s.BLAC[b])<<8 + uint64(s.BLAFR[b])<<16 +
			mix(uint64(s.BUnflushed[b])+1)*uint64(s.BDurableLAC[b]+1) + mix(uint64(s.BChecked[b])+7) + flags[b]
		c.bsig[b] = mix(h)
	}
	for cl := 0; cl < p.Clients; cl++ {
		x := &s.Clients[cl]
		h := uint64(x.Status) | uint64(uint8(x.MetaVersion))<<8 | uint64(uint8(x.LAP))<<16 | uint64(uint8(x.LAC))<<24 |
			uint64(uint8(x.LAFR))<<32 | uint64(x.RecoveryPhase)<<40 | uint64(uint8(x.CurrReadEntry))<<44 |
			uint64(uint8(x.LastRecoverable))<<52 | uint64(x.NumFragments)<<60
		h = mix(h) + mix(uint64(x.NumPending)<<8|uint64(x.NumResponses)|uint64(x.Fenced.Len())<<16|uint64(x.RecoveryEns.Len())<<24)
		c.csig[cl] = h
	}
	// Messages: each adds to the signature of its bookie and its client a
	// hash of its relabelled-away key, and ties the two together.
	for _, m := range s.Msgs {
		h := mix(uint64(m.Key&mask)<<2 | uint64(m.Count+1))
		c.bsig[m.Key.Bookie()] += h
		c.csig[m.Key.Cid()] += h * 3
	}
	// Fragments: a bookie's membership (and position, when striped) in each
	// fragment of the metadata.
	for i, f := range s.MetaFragmentList() {
		fragmentTerms(&c.bsig, f, i, p, 0)
	}
	// Client records: which bookies a client confirmed, fenced, holds in
	// its fragments; mixes bookie and client signatures both ways. The
	// client signatures are read from a snapshot so that the result does
	// not depend on the order bookies are visited in.
	csig := c.csig
	for cl := 0; cl < p.Clients; cl++ {
		x := &s.Clients[cl]
		var hb [MaxBookies]uint64
		for e := 0; e < p.Entries; e++ {
			t := mix(uint64(e + 1))
			for y := x.Confirmed[e]; y != 0; y &= y - 1 {
				hb[bits.TrailingZeros8(uint8(y))] += t
			}
		}
		for y := x.Fenced; y != 0; y &= y - 1 {
			hb[bits.TrailingZeros8(uint8(y))] += 1 << 40
		}
		for y := x.RecoveryEns; y != 0; y &= y - 1 {
			hb[bits.TrailingZeros8(uint8(y))] += 1 << 41
		}
		for i, f := range x.FragmentList() {
			fragmentTerms(&hb, f, i, p, 1)
		}
		for _, op := range x.PendingList() {
			t := mix(uint64(op.Entry.ID)<<8 | uint64(op.FragmentID)<<16)
			for y := op.Ensemble; y != 0; y &= y - 1 {
				hb[bits.TrailingZeros8(uint8(y))] += t
			}
		}
		for b := 0; b < p.Bookies; b++ {
			if h := hb[b]; h != 0 {
				c.bsig[b] += mix(h + csig[cl]*5)
				c.csig[cl] += mix(h) * 7
			}
		}
	}
}

// fragmentTerms adds to sig[b], for each bookie b of f (the i-th
// fragment), a hash of i and of b's position in f (when striped),
// shifted left by shift.
func fragmentTerms(sig *[MaxBookies]uint64, f Fragment, i int, p Params, shift uint) {
	if !p.Ordered() {
		t := mix(uint64(i+1)<<8) << shift
		for y := f.Ensemble; y != 0; y &= y - 1 {
			sig[bits.TrailingZeros8(uint8(y))] += t
		}
		return
	}
	for pos := 0; pos < p.Ensemble; pos++ {
		sig[f.Layout.At(pos)] += mix(uint64(i+1)<<8|uint64(pos+1)) << shift
	}
}

// order returns ids 0..n-1 sorted by sig (stable on ties): an insertion
// sort, for the handful of ids there are.
func order(dst []int8, sig []uint64, n int) []int8 {
	dst = dst[:0]
	for i := 0; i < n; i++ {
		j := i
		dst = append(dst, 0)
		for ; j > 0 && sig[dst[j-1]] > sig[i]; j-- {
			dst[j] = dst[j-1]
		}
		dst[j] = int8(i)
	}
	return dst
}

// Canonical returns the canonical encoding of s. The slice is valid until
// the next call.
func (c *Canonicalizer) Canonical(s *State) []byte {
	p := c.m.P
	c.signatures(s)
	c.border = order(c.border, c.bsig[:], p.Bookies)
	c.corder = order(c.corder, c.csig[:], p.Clients)
	if !c.sym.Bookies {
		for i := range c.border {
			c.border[i] = int8(i)
		}
	}
	if !c.sym.Clients {
		for i := range c.corder {
			c.corder[i] = int8(i)
		}
	}
	for i := range c.rl.pm.bp {
		c.rl.pm.bp[i] = int8(i)
	}
	for i := range c.rl.pm.cp {
		c.rl.pm.cp[i] = int8(i)
	}
	c.best = c.best[:0]
	c.permuteGroups(s, 0, true)
	return c.best
}

// permuteGroups enumerates every order within each group of equal
// signatures (bookie groups, then client groups) and keeps the smallest
// encoding. pos walks the concatenation of both orders.
func (c *Canonicalizer) permuteGroups(s *State, pos int, first bool) bool {
	p := c.m.P
	nb := p.Bookies
	if pos == nb+p.Clients {
		// The element at rank r gets id r.
		for r, b := range c.border {
			c.rl.pm.bp[b] = int8(r)
		}
		for r, cl := range c.corder {
			c.rl.pm.cp[cl] = int8(r)
		}
		c.rl.setInverse()
		c.buf = c.m.encode(c.buf[:0], s, &c.rl)
		c.tried++
		if len(c.best) == 0 || bytes.Compare(c.buf, c.best) < 0 {
			c.best, c.buf = c.buf, c.best
			c.bestPm = c.rl.pm
		}
		return false
	}
	ord, sig, i := c.border, c.bsig[:], pos
	sym := c.sym.Bookies
	if pos >= nb {
		ord, sig, i = c.corder, c.csig[:], pos-nb
		sym = c.sym.Clients
	}
	// The tie group starting at i: [i, j).
	j := i + 1
	for sym && j < len(ord) && sig[ord[j]] == sig[ord[i]] {
		j++
	}
	if j == i+1 {
		return c.permuteGroups(s, pos+1, first)
	}
	// Try every order of ord[i:j]: Heap's algorithm via recursion on the
	// first slot; the rest of the group follows as singletons by fixing
	// one element at a time.
	for k := i; k < j; k++ {
		ord[i], ord[k] = ord[k], ord[i]
		// Mark ord[i] as placed by treating the remainder as a new group.
		c.permuteRest(s, pos, i+1, j)
		ord[i], ord[k] = ord[k], ord[i]
	}
	return false
}

// permuteRest places the elements ord[from:j] of the current tie group in
// every order, then continues after the group.
func (c *Canonicalizer) permuteRest(s *State, pos, from, j int) {
	nb := c.m.P.Bookies
	ord, base := c.border, 0
	if pos >= nb {
		ord, base = c.corder, nb
	}
	if from >= j {
		c.permuteGroups(s, base+j, false)
		return
	}
	for k := from; k < j; k++ {
		ord[from], ord[k] = ord[k], ord[from]
		c.permuteRest(s, pos, from+1, j)
		ord[from], ord[k] = ord[k], ord[from]
	}
}
