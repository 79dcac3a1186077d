package state

import (
	"fmt"
	"math/bits"
)

// fpTable is an open-addressing set of fingerprints: a flat []uint64 probed
// linearly, one word per slot for 64-bit fingerprints and two (Hi, Lo) for
// wider ones, an all-zero slot marking an empty one. It is one shard of a
// Set.
//
// Why this shape: a Go map costs several times the key size per entry and
// allocates as it grows; a flat slice costs 8 or 16 bytes / load factor,
// is cache-friendly, never allocates on insert (growth is planned by Set)
// and lets any number of goroutines run contains while no insert runs.
//
//   - The home slot of fp is hi64(mix(fp.Hi) * size) (Lemire's range
//     reduction), so a table may have any size; mix is a multiply by
//     2^64/φ, which keeps clustered inputs (tests, a weak future hash)
//     from degrading linear probing.
//   - The all-zero fingerprint lives in a flag, not in a slot.
//   - A table never grows by itself: Set plans growth (Reserve) so that
//     inserts during a parallel commit never allocate or fail.
type fpTable struct {
	slots   []uint64 // stride() words per slot
	wide    bool     // two words per slot
	used    uint64   // nonzero fingerprints held (the zero one not counted)
	hasZero bool     // FP{} is present
}

func newFPTable(size uint64, wide bool) fpTable {
	t := fpTable{wide: wide}
	t.slots = newSlots(size * t.stride())
	return t
}

// newSlots returns a zeroed slot array of n words, backed by huge pages
// where the kernel grants them (adviseHuge).
func newSlots(n uint64) []uint64 {
	s := make([]uint64, n)
	adviseHuge(s)
	return s
}

func (t *fpTable) stride() uint64 {
	if t.wide {
		return 2
	}
	return 1
}

// size is the number of slots.
func (t *fpTable) size() uint64 { return uint64(len(t.slots)) / t.stride() }

// reduce maps x to [0, n): the high word of mix(x) * n, where mix is a
// multiply by 2^64/φ (Fibonacci hashing).
func reduce(x, n uint64) uint64 {
	hi, _ := bits.Mul64(x*0x9E3779B97F4A7C15, n)
	return hi
}

// contains reports whether fp is in the table. It only reads, so any
// number of goroutines may call it while no insert runs.
func (t *fpTable) contains(fp FP) bool {
	if fp == (FP{}) {
		return t.hasZero
	}
	_, found := t.probe(fp)
	return found
}

// insert adds fp unless it is present and reports whether it added it. The
// caller guarantees room: after the insert at least one slot stays empty.
func (t *fpTable) insert(fp FP) bool {
	if fp == (FP{}) {
		added := !t.hasZero
		t.hasZero = true
		return added
	}
	i, found := t.probe(fp)
	if found {
		return false
	}
	if t.used+1 >= t.size() {
		panic(fmt.Sprintf("state: fingerprint table of %d slots is full", t.size()))
	}
	if t.wide {
		t.slots[2*i], t.slots[2*i+1] = fp.Hi, fp.Lo
	} else {
		t.slots[i] = fp.Hi
	}
	t.used++
	return true
}

// probe walks fp's probe sequence to fp's slot (found) or to the empty
// slot that ends it, where fp would go. fp must not be zero.
func (t *fpTable) probe(fp FP) (i uint64, found bool) {
	if !t.wide {
		n := uint64(len(t.slots))
		if n == 0 {
			return 0, false
		}
		for i = reduce(fp.Hi, n); ; {
			switch t.slots[i] {
			case fp.Hi:
				return i, true
			case 0:
				return i, false
			}
			if i++; i == n {
				i = 0
			}
		}
	}
	n := uint64(len(t.slots)) / 2
	if n == 0 {
		return 0, false
	}
	for i = reduce(fp.Hi, n); ; {
		h, l := t.slots[2*i], t.slots[2*i+1]
		if h == fp.Hi && l == fp.Lo {
			return i, true
		}
		if h == 0 && l == 0 {
			return i, false
		}
		if i++; i == n {
			i = 0
		}
	}
}

// resize moves the fingerprints to a new array of size slots, which must
// leave at least one empty.
func (t *fpTable) resize(size uint64) {
	if size <= t.used {
		panic(fmt.Sprintf("state: resizing a fingerprint table of %d to %d slots", t.used, size))
	}
	old := *t
	t.slots = newSlots(size * t.stride())
	old.each(func(fp FP) {
		if fp != (FP{}) {
			i, _ := t.probe(fp)
			if t.wide {
				t.slots[2*i], t.slots[2*i+1] = fp.Hi, fp.Lo
			} else {
				t.slots[i] = fp.Hi
			}
		}
	})
}

// clear empties the table, keeping its array.
func (t *fpTable) clear() {
	clear(t.slots)
	t.used = 0
	t.hasZero = false
}

// bytes is the memory held by the slot array.
func (t *fpTable) bytes() int64 { return 8 * int64(len(t.slots)) }

// len is the number of fingerprints held.
func (t *fpTable) len() uint64 {
	if t.hasZero {
		return t.used + 1
	}
	return t.used
}

// each calls f for every fingerprint in the table, FP{} first.
func (t *fpTable) each(f func(FP)) {
	if t.hasZero {
		f(FP{})
	}
	if t.wide {
		for i := 0; i+1 < len(t.slots); i += 2 {
			if fp := (FP{t.slots[i], t.slots[i+1]}); fp != (FP{}) {
				f(fp)
			}
		}
		return
	}
	for _, h := range t.slots {
		if h != 0 {
			f(FP{Hi: h})
		}
	}
}

// sortSlots sorts the slot array in place, which destroys the hash
// structure: afterwards the table must be cleared before any other use.
// The fingerprints then sit, in increasing order, in the last used slots;
// sortedView reads them (FP{} first if present).
func (t *fpTable) sortSlots() {
	if !t.wide {
		sortWords(t.slots)
		return
	}
	SortFPs(pairsAsFPs(t.slots))
}

// sortedAt returns the i-th fingerprint (in increasing order) of a table
// sorted by sortSlots.
func (t *fpTable) sortedAt(i uint64) FP {
	if t.hasZero {
		if i == 0 {
			return FP{}
		}
		i--
	}
	k := t.size() - t.used + i
	if t.wide {
		return FP{t.slots[2*k], t.slots[2*k+1]}
	}
	return FP{Hi: t.slots[k]}
}
