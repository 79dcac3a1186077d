package spec

import (
	"bytes"
	"fmt"
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

// ParseSymmetry reads "none", "bookies", "clients" or "bookies,clients".
func ParseSymmetry(s string) (Symmetry, error) {
	var sym Symmetry
	for _, part := range strings.Split(s, ",") {
		switch strings.TrimSpace(part) {
		case "", "none":
		case "bookies":
			sym.Bookies = true
		case "clients":
			sym.Clients = true
		default:
			return sym, fmt.Errorf("--symmetry: unknown %q (want none, bookies, clients or bookies,clients)", part)
		}
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
	if s.Bookies && p.Bookies >= p.Ensemble+2 {
		return fmt.Errorf("--symmetry bookies is unsound with %d bookies and an ensemble of %d: an ensemble change can choose among %d spare bookies by index, which relabelling does not preserve (use at most E+1 = %d bookies, or --symmetry clients)",
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
	for b := 0; b < MaxBookies; b++ {
		if s.Has(b) {
			out |= 1 << uint(pm.bp[b])
		}
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

func (pm *permutation) msg(k MsgKey) MsgKey {
	f := k.Fields()
	f.Bookie = int(pm.bp[f.Bookie])
	f.Cid = int(pm.cp[f.Cid])
	return f.Key()
}

func (pm *permutation) fragment(f Fragment, e int, striped bool) Fragment {
	f.Ensemble = pm.bookies(f.Ensemble)
	if striped {
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
	striped := p.Striped()
	msgs := dst.Msgs[:0]
	*dst = *s
	for b := 0; b < p.Bookies; b++ {
		nb := pm.bp[b]
		dst.BEntries[nb], dst.BLAC[nb], dst.BLAFR[nb] = s.BEntries[b], s.BLAC[b], s.BLAFR[b]
	}
	dst.BFenced = pm.bookies(s.BFenced)
	dst.BDown = pm.bookies(s.BDown)
	dst.BReadOnly = pm.bookies(s.BReadOnly)
	dst.BLimbo = pm.bookies(s.BLimbo)
	for i := 0; i < int(s.NumMetaFragments); i++ {
		dst.MetaFragments[i] = pm.fragment(s.MetaFragments[i], p.Ensemble, striped)
	}
	for c := 0; c < p.Clients; c++ {
		src := &s.Clients[c]
		nc := &dst.Clients[pm.cp[c]]
		*nc = *src
		for i := 0; i < int(src.NumFragments); i++ {
			nc.Fragments[i] = pm.fragment(src.Fragments[i], p.Ensemble, striped)
		}
		for i := 0; i < int(src.NumPending); i++ {
			op := src.Pending[i]
			op.Ensemble = pm.bookies(op.Ensemble)
			if striped {
				op.Layout = pm.layout(op.Layout, p.Ensemble)
			}
			nc.Pending[i] = op
		}
		slices.SortFunc(nc.Pending[:nc.NumPending], func(a, b PendingAddOp) int {
			switch {
			case a.less(b):
				return -1
			case b.less(a):
				return 1
			}
			return 0
		})
		for e := 0; e < p.Entries; e++ {
			nc.Confirmed[e] = pm.bookies(src.Confirmed[e])
		}
		nc.Fenced = pm.bookies(src.Fenced)
		nc.RecoveryEns = pm.bookies(src.RecoveryEns)
		if striped {
			nc.RecoveryLay = pm.layout(src.RecoveryLay, p.Ensemble)
		}
		for i := 0; i < int(src.NumResponses); i++ {
			nc.ReadResponses[i] = pm.msg(src.ReadResponses[i])
		}
		slices.Sort(nc.ReadResponses[:nc.NumResponses])
	}
	for _, msg := range s.Msgs {
		msgs = append(msgs, Msg{Key: pm.msg(msg.Key), Count: msg.Count})
	}
	slices.SortFunc(msgs, func(a, b Msg) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	dst.Msgs = msgs
}

// Canonicalizer computes a canonical representative of a state's orbit
// under a symmetry: the smallest encoding over every permutation in the
// group. It holds scratch space; one per goroutine.
type Canonicalizer struct {
	m       *Model
	perms   []permutation
	scratch State
	buf     []byte
	best    []byte
}

// NewCanonicalizer prepares the permutation group of sym (all bookie
// permutations, all client permutations, or their product).
func (m *Model) NewCanonicalizer(sym Symmetry) *Canonicalizer {
	bps := permutationsOf(m.P.Bookies, sym.Bookies)
	cps := permutationsOf(m.P.Clients, sym.Clients)
	c := &Canonicalizer{m: m}
	for _, bp := range bps {
		for _, cp := range cps {
			var pm permutation
			for i := range pm.bp {
				pm.bp[i] = int8(i)
			}
			for i := range pm.cp {
				pm.cp[i] = int8(i)
			}
			copy(pm.bp[:], bp)
			copy(pm.cp[:], cp)
			c.perms = append(c.perms, pm)
		}
	}
	return c
}

// GroupSize is the number of permutations tried per state.
func (c *Canonicalizer) GroupSize() int { return len(c.perms) }

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

// Canonical returns the canonical encoding of s: the smallest encoding of
// any relabelling of s. The slice is valid until the next call.
func (c *Canonicalizer) Canonical(s *State) []byte {
	c.best = c.m.Encode(c.best[:0], s) // the identity is the first permutation
	for i := 1; i < len(c.perms); i++ {
		c.m.permute(&c.scratch, s, &c.perms[i])
		c.buf = c.m.Encode(c.buf[:0], &c.scratch)
		if bytes.Compare(c.buf, c.best) < 0 {
			c.best, c.buf = c.buf, c.best
		}
	}
	return c.best
}
