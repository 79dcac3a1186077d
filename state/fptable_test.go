package state

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
	"testing"
)

// tableKinds are the two growth policies, at sizes power of two or not.
var tableKinds = []struct {
	name string
	make func() fpTable
}{
	{"growing-16", func() fpTable { return growingFPTable(16, 70) }},
	{"growing-3", func() fpTable { return growingFPTable(3, 70) }},
	{"fixed-1024", func() fpTable { return fixedFPTable(1024, 70) }},
	{"fixed-1000", func() fpTable { return fixedFPTable(1000, 90) }},
}

func TestFPTableInsertContains(t *testing.T) {
	for _, k := range tableKinds {
		t.Run(k.name, func(t *testing.T) {
			tab := k.make()
			for _, step := range []struct {
				op   string // "insert" or "contains"
				fp   uint64
				want bool // added, or present
			}{
				{"contains", 0, false},
				{"contains", 7, false},
				{"insert", 0, true}, // fp 0 is a legal fingerprint
				{"contains", 0, true},
				{"insert", 0, false},
				{"insert", 7, true},
				{"insert", 7, false},
				{"contains", 7, true},
				{"contains", 8, false},
				{"insert", ^uint64(0), true},
				{"contains", ^uint64(0), true},
				{"insert", 1 << 63, true},
				{"contains", 1 << 63, true},
				{"contains", 1<<63 | 1, false},
			} {
				var got bool
				if step.op == "insert" {
					got = tab.insert(step.fp)
				} else {
					got = tab.contains(step.fp)
				}
				if got != step.want {
					t.Fatalf("%s(%#x) = %v, want %v", step.op, step.fp, got, step.want)
				}
			}
			if tab.used != 3 {
				t.Errorf("used = %d, want 3 (fp 0 is not in a slot)", tab.used)
			}
			var seen []uint64
			tab.each(func(fp uint64) { seen = append(seen, fp) })
			if len(seen) != 4 || seen[0] != 0 {
				t.Errorf("each gave %#x, want 0 first and 4 in all", seen)
			}
			tab.clear()
			if tab.contains(0) || tab.contains(7) || tab.used != 0 {
				t.Error("clear left fingerprints")
			}
		})
	}
}

// TestFPTableRandom compares each kind of table with a Go map over inserts
// with repeats and clustered values, resizing fixed tables as
// BadgerVisited does.
func TestFPTableRandom(t *testing.T) {
	for _, k := range tableKinds {
		t.Run(k.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 8))
			tab := k.make()
			ref := map[uint64]bool{}
			var order []uint64
			for range 50_000 {
				fp := testFP(r, 20_000, order)
				if added := insertResizing(&tab, fp); added == ref[fp] {
					t.Fatalf("insert(%#x) = %v, present %v", fp, added, ref[fp])
				}
				if !ref[fp] {
					ref[fp] = true
					order = append(order, fp)
				}
				probe := r.Uint64() >> r.UintN(64)
				if got := tab.contains(probe); got != ref[probe] {
					t.Fatalf("contains(%#x) = %v, want %v", probe, got, ref[probe])
				}
			}
			for fp := range ref {
				if !tab.contains(fp) {
					t.Fatalf("lost %#x", fp)
				}
			}
			if n := tab.used + b2u(tab.hasZero); n != uint64(len(ref)) {
				t.Fatalf("holds %d, want %d", n, len(ref))
			}
		})
	}
}

// testFP draws a fingerprint that is hard on a table: full-range, small
// (below small, 0 included), with the low bits all zero, or a repeat of
// one of seen.
func testFP(r *rand.Rand, small int, seen []uint64) uint64 {
	switch r.IntN(4) {
	case 0:
		return r.Uint64()
	case 1:
		return uint64(r.IntN(small))
	case 2:
		return uint64(r.IntN(1000)) << 40
	}
	if len(seen) > 0 {
		return seen[r.IntN(len(seen))]
	}
	return 0
}

// insertResizing is insert that doubles a full fixed table first, as
// BadgerVisited grows its exact table.
func insertResizing(tab *fpTable, fp uint64) bool {
	if !tab.grows && tab.full() {
		tab.resize(2 * tab.size())
	}
	return tab.insert(fp)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// TestFPTableGrowth: a growing table doubles exactly when a new
// fingerprint finds it at its load limit, not on a repeat, not for fp 0.
func TestFPTableGrowth(t *testing.T) {
	for _, tc := range []struct{ size, maxLoad uint64 }{{16, 70}, {1024, 70}, {10, 50}, {1000, 90}} {
		t.Run(fmt.Sprintf("%d@%d%%", tc.size, tc.maxLoad), func(t *testing.T) {
			tab := growingFPTable(tc.size, tc.maxLoad)
			limit := tc.size * tc.maxLoad / 100
			for fp := uint64(1); fp <= limit; fp++ {
				tab.insert(fp)
			}
			tab.insert(1) // a repeat
			tab.insert(0) // the flag
			if tab.size() != tc.size || !tab.full() {
				t.Fatalf("at the limit: size %d (want %d), full %v", tab.size(), tc.size, tab.full())
			}
			tab.insert(limit + 1)
			if tab.size() != 2*tc.size {
				t.Fatalf("after the limit: size %d, want %d", tab.size(), 2*tc.size)
			}
			if tab.full() || tab.limit != 2*tc.size*tc.maxLoad/100 {
				t.Fatalf("limit %d after doubling", tab.limit)
			}
			for fp := uint64(0); fp <= limit+1; fp++ {
				if !tab.contains(fp) {
					t.Fatalf("lost %d in growth", fp)
				}
			}
		})
	}
}

// TestFPTableFixed: a fixed table never reallocates by itself; it reports
// full() at its limit, takes fingerprints past it while a slot stays
// empty, and panics rather than fill the last one.
func TestFPTableFixed(t *testing.T) {
	for _, size := range []uint64{8, 1000, 1024} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			tab := fixedFPTable(size, 70)
			slots := &tab.slots[0]
			var fp uint64
			for fp = 1; !tab.full(); fp++ {
				tab.insert(fp)
			}
			if tab.used != size*70/100 {
				t.Fatalf("full at %d of %d", tab.used, size)
			}
			for ; tab.used < size-1; fp++ {
				if got, want := tab.loadBelow(90), tab.used*100 < size*90; got != want {
					t.Fatalf("loadBelow(90) at %d of %d = %v", tab.used, size, got)
				}
				tab.insert(fp)
			}
			if tab.size() != size || &tab.slots[0] != slots {
				t.Fatal("a fixed table reallocated itself")
			}
			if tab.insert(1) || !tab.insert(0) {
				t.Fatal("repeat or fp 0 into a full table")
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Error("filling the last slot did not panic")
					}
				}()
				tab.insert(fp)
			}()
			tab.resize(2 * size)
			if tab.size() != 2*size || tab.full() || tab.limit != 2*size*70/100 {
				t.Fatalf("resize: size %d, limit %d", tab.size(), tab.limit)
			}
			for f := uint64(0); f < fp; f++ {
				if !tab.contains(f) {
					t.Fatalf("lost %d in resize", f)
				}
			}
		})
	}
	var zero fpTable
	if zero.contains(0) || zero.contains(1) {
		t.Error("empty table contains something")
	}
}

// TestFPTablePowerOfTwoSlots: on a power-of-two table the range reduction
// is the shift MemVisited's table used, so its layout is unchanged.
func TestFPTablePowerOfTwoSlots(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, size := range []uint64{16, 1 << 10, 1 << 30} {
		shift := 64 - uint(bits.TrailingZeros64(size))
		for range 1000 {
			fp := r.Uint64()
			if got, want := reduce(fp, size), (fp*0x9E3779B97F4A7C15)>>shift; got != want {
				t.Fatalf("size %d: reduce(%#x) = %d, shift gives %d", size, fp, got, want)
			}
		}
	}
}

// TestFPTableConcurrentContains runs readers on every kind of table while
// no insert runs, between rounds of inserts (growth included). Run with
// -race: contains only reads.
func TestFPTableConcurrentContains(t *testing.T) {
	for _, k := range tableKinds {
		t.Run(k.name, func(t *testing.T) {
			tab := k.make()
			var fps []uint64
			fp := uint64(3)
			for round := range 6 {
				for range 100 << round {
					fp = fp*6364136223846793005 + 1442695040888963407
					insertResizing(&tab, fp)
					fps = append(fps, fp)
				}
				var wg sync.WaitGroup
				errs := make(chan string, 4)
				for g := range 4 {
					wg.Go(func() {
						for i := g; i < len(fps); i += 4 {
							if !tab.contains(fps[i]) || tab.contains(fps[i]^1<<62) {
								errs <- fmt.Sprintf("round %d: wrong answer for %#x", round, fps[i])
								return
							}
						}
					})
				}
				wg.Wait()
				close(errs)
				for e := range errs {
					t.Fatal(e)
				}
			}
		})
	}
}

// TestFPTableNoAlloc: insert (short of growth) and contains allocate
// nothing.
func TestFPTableNoAlloc(t *testing.T) {
	for _, k := range tableKinds {
		tab := k.make()
		tab.resize(1 << 16)
		fp := uint64(1)
		allocs := testing.AllocsPerRun(10_000, func() {
			fp = fp*6364136223846793005 + 1442695040888963407
			tab.insert(fp)
			tab.contains(fp ^ 1)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per insert and contains", k.name, allocs)
		}
	}
}
