package state

import (
	"fmt"
	"math/bits"
)

// fpTable is an open-addressing set of 64-bit fingerprints: a flat []uint64
// probed linearly, 0 marking an empty slot. It is the fingerprint table of
// both stores: MemVisited's whole set, and BadgerVisited's exact set and
// recent windows.
//
// Why this shape: a Go map[uint64]struct{} costs several times 8 bytes per
// entry and allocates buckets as it grows; a flat slice costs 8 bytes /
// load factor, is cache-friendly, never allocates on insert (except to
// grow), and lets any number of goroutines run contains with no locking
// while no insert runs (contains only reads).
//
//   - The home slot of fp is hi64(mix(fp) * len), the high word of a
//     128-bit product (Lemire's range reduction), so a table may have any
//     size: BadgerVisited sizes its tables to exactly what the memory
//     budget allows. For a power-of-two size it is the top bits of
//     mix(fp), the classic Fibonacci hashing MemVisited always used.
//   - mix is a multiply by 2^64/φ. Fingerprints are already hashes, but
//     the multiply keeps clustered inputs (tests, a weak future hash) from
//     degrading linear probing, for one multiplication.
//   - fp 0 lives in a flag, not in a slot (0 marks empty slots), rather
//     than being remapped to another value, which would make it collide
//     with that value for no reason.
//
// Growth is the user's policy, set when the table is made: a growing table
// (growingFPTable) doubles when an insert of a new fingerprint finds it at
// its load limit; a fixed one (fixedFPTable) never reallocates on its own:
// its user reads full() and resizes, clears or replaces it, and may fill it
// past the limit as long as one slot stays empty.
type fpTable struct {
	slots   []uint64 // 0 marks an empty slot
	used    uint64   // nonzero fingerprints held (fp 0 not counted)
	limit   uint64   // full() from this many: len(slots)*maxLoad/100
	maxLoad uint64   // load limit, in percent
	grows   bool     // insert doubles the table at the limit
	hasZero bool     // fp 0 is present
}

// growingFPTable returns an empty table of size slots that doubles
// whenever a new fingerprint would take it past maxLoad percent.
func growingFPTable(size, maxLoad uint64) fpTable {
	return fpTable{slots: make([]uint64, size), limit: size * maxLoad / 100, maxLoad: maxLoad, grows: true}
}

// fixedFPTable returns an empty table of size slots that reports full() at
// maxLoad percent and never grows by itself.
func fixedFPTable(size, maxLoad uint64) fpTable {
	return fpTable{slots: make([]uint64, size), limit: size * maxLoad / 100, maxLoad: maxLoad}
}

// home is fp's first slot.
func (t *fpTable) home(fp uint64) uint64 { return reduce(fp, uint64(len(t.slots))) }

// reduce maps fp to [0, n): the high word of mix(fp) * n, where mix is a
// multiply by 2^64/φ (Fibonacci hashing).
func reduce(fp, n uint64) uint64 {
	hi, _ := bits.Mul64(fp*0x9E3779B97F4A7C15, n)
	return hi
}

// contains reports whether fp is in the table. It only reads, so any
// number of goroutines may call it while no insert runs.
func (t *fpTable) contains(fp uint64) bool {
	if fp == 0 {
		return t.hasZero
	}
	_, found := t.probe(fp)
	return found
}

// insert adds fp unless it is present and reports whether it added it. A
// new fingerprint that finds the table at its limit makes a growing table
// double first; a fixed table takes it while at least one slot stays empty
// (which keeps every probe finite) and panics otherwise.
func (t *fpTable) insert(fp uint64) bool {
	if fp == 0 {
		added := !t.hasZero
		t.hasZero = true
		return added
	}
	i, found := t.probe(fp)
	if found {
		return false
	}
	if t.used >= t.limit {
		switch n := t.size(); {
		case t.grows:
			t.resize(max(2*n, 2))
			i, _ = t.probe(fp)
		case t.used+1 >= n:
			panic(fmt.Sprintf("state: fingerprint table of %d slots is full", n))
		}
	}
	t.slots[i] = fp
	t.used++
	return true
}

// probe walks fp's probe sequence to fp's slot (found) or to the empty
// slot that ends it, where fp would go (i is 0 in a table of no slots).
func (t *fpTable) probe(fp uint64) (i uint64, found bool) {
	n := uint64(len(t.slots))
	for i = reduce(fp, n); i < n; {
		switch t.slots[i] {
		case fp:
			return i, true
		case 0:
			return i, false
		}
		if i++; i == n {
			i = 0
		}
	}
	return 0, false
}

// resize moves the fingerprints to a new array of size slots (which must
// leave at least one empty); the load limit keeps its percentage.
func (t *fpTable) resize(size uint64) {
	if size <= t.used {
		panic(fmt.Sprintf("state: resizing a fingerprint table of %d to %d slots", t.used, size))
	}
	old := t.slots
	t.slots = make([]uint64, size)
	t.limit = size * t.maxLoad / 100
	for _, fp := range old {
		if fp != 0 {
			i, _ := t.probe(fp)
			t.slots[i] = fp
		}
	}
}

// clear empties the table, keeping its array.
func (t *fpTable) clear() {
	clear(t.slots)
	t.used = 0
	t.hasZero = false
}

// size is the number of slots.
func (t *fpTable) size() uint64 { return uint64(len(t.slots)) }

// full reports whether the table is at its load limit.
func (t *fpTable) full() bool { return t.used >= t.limit }

// loadBelow reports whether fewer than pct percent of the slots are used.
func (t *fpTable) loadBelow(pct uint64) bool { return t.used*100 < t.size()*pct }

// bytes is the memory held by the slot array.
func (t *fpTable) bytes() int64 { return 8 * int64(len(t.slots)) }

// each calls f for every fingerprint in the table, fp 0 first.
func (t *fpTable) each(f func(uint64)) {
	if t.hasZero {
		f(0)
	}
	for _, fp := range t.slots {
		if fp != 0 {
			f(fp)
		}
	}
}
