package spec

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCanonicalIsInvariant: for reachable states s and every relabelling
// pi, Canonical(pi(s)) == Canonical(s), and the canonical encoding decodes
// to a relabelling of s (same orbit). Together these make it a canonical
// form: one per orbit.
func TestCanonicalIsInvariant(t *testing.T) {
	for _, p := range []Params{
		{Bookies: 3, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 2, Inflight: 2},
		{Bookies: 3, Clients: 3, Ensemble: 3, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1}, // striped
		{Bookies: 3, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, Crashes: 1, Reformat: 1, DataIntegrity: true, ReformatCookie: CookieKept},
		// Ordered ensembles (sequence reads): a recovery that has decided
		// keeps no ensemble, and its layout, 0, must stay 0 under every
		// relabelling (it did not: two states of one orbit had two forms).
		{Bookies: 3, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, ReliableNetwork: true, RecoveryRead: RecoveryReadSequence},
	} {
		m, err := NewModel(p)
		if err != nil {
			t.Fatal(err)
		}
		sym := Symmetry{Bookies: true, Clients: true}
		canon := m.NewCanonicalizer(sym)
		var perm State
		states := reachable(t, m, 3000)
		if p.Ordered() {
			states = reachable(t, m, 20000)
		}
		perms := 0
		for _, bp := range permutationsOf(p.Bookies, true) {
			for _, cp := range permutationsOf(p.Clients, true) {
				pm := relabelling(bp, cp)
				perms++
				for i := range states {
					want := append([]byte(nil), canon.Canonical(&states[i])...)
					m.permute(&perm, &states[i], &pm)
					if got := canon.Canonical(&perm); !bytes.Equal(got, want) {
						t.Fatalf("%v: state %d and its relabelling %v/%v have different canonical forms", p, i, bp, cp)
					}
				}
			}
		}
		// The canonical form is a member of the orbit.
		var dec State
		for i := range states[:200] {
			enc := canon.Canonical(&states[i])
			if err := m.Decode(enc, &dec); err != nil {
				t.Fatalf("canonical form does not decode: %v", err)
			}
			found := false
			for _, bp := range permutationsOf(p.Bookies, true) {
				for _, cp := range permutationsOf(p.Clients, true) {
					pm := relabelling(bp, cp)
					m.permute(&perm, &states[i], &pm)
					found = found || bytes.Equal(m.Encode(nil, &perm), enc)
				}
			}
			if !found {
				t.Fatalf("%v: canonical form of state %d is not one of its relabellings", p, i)
			}
		}
		t.Logf("%v: %d states x %d relabellings", p, len(states), perms)
	}
}

// BenchmarkCanonical measures canonicalisation per state on the shipped
// configuration (4 bookies, 2 clients, Qw 3, Qa 2): relabellings tried
// and time per state.
func BenchmarkCanonical(b *testing.B) {
	p := Params{Bookies: 4, Clients: 2, Ensemble: 3, WriteQuorum: 3, AckQuorum: 2, Entries: 1, Inflight: 1}
	m, _ := NewModel(p)
	states := reachable(b, m, 20000)
	canon := m.NewCanonicalizer(Symmetry{Bookies: true, Clients: true})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		canon.Canonical(&states[i%len(states)])
	}
	b.ReportMetric(float64(canon.Tried())/float64(b.N), "relabellings/state")
}

// relabelling builds the permutation that maps bookie i to bp[i] and
// client i to cp[i], leaving unused ids in place.
func relabelling(bp, cp []int8) permutation {
	var pm permutation
	for i := range pm.bp {
		pm.bp[i] = int8(i)
	}
	for i := range pm.cp {
		pm.cp[i] = int8(i)
	}
	copy(pm.bp[:], bp)
	copy(pm.cp[:], cp)
	return pm
}

// TestPermutationMsg checks the bit-level relabelling of message records
// against unpacking, relabelling and repacking their fields.
func TestPermutationMsg(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		var pm permutation
		for i, b := range rng.Perm(MaxBookies) {
			pm.bp[i] = int8(b)
		}
		for i, c := range rng.Perm(MaxClients) {
			pm.cp[i] = int8(c)
		}
		k := MsgKey(rng.Uint32() & (1<<msgKeyBits - 1))
		f := k.Fields()
		if f.Bookie >= MaxBookies || f.Cid >= MaxClients {
			continue
		}
		f.Bookie, f.Cid = int(pm.bp[f.Bookie]), int(pm.cp[f.Cid])
		if got, want := pm.msg(k), f.Key(); got != want {
			t.Fatalf("msg(%#x) = %#x, want %#x", k, got, want)
		}
	}
}

func TestSortMsgs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 100 {
		msgs := make([]Msg, n)
		for i := range msgs {
			msgs[i] = Msg{Key: MsgKey(rng.IntN(50)), Count: int8(rng.IntN(3) - 1)}
		}
		sortMsgs(msgs)
		if !slices.IsSortedFunc(msgs, func(a, b Msg) int { return int(a.Key) - int(b.Key) }) {
			t.Fatalf("n=%d: not sorted: %v", n, msgs)
		}
	}
}
