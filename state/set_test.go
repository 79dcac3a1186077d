package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func randomFPs(r *rand.Rand, n int, wide bool) []FP {
	fps := make([]FP, n)
	for i := range fps {
		fps[i] = FP{Hi: r.Uint64()}
		if wide {
			fps[i].Lo = r.Uint64()
		}
	}
	return fps
}

// insertAll reserves room for fps and inserts them, as a commit does.
func insertAll(t *testing.T, s *Set, fps []FP) (added []bool, ok bool) {
	t.Helper()
	counts := make([]int, s.Shards())
	for _, fp := range fps {
		counts[s.ShardOf(fp)]++
	}
	if !s.Reserve(counts) {
		return nil, false
	}
	for i := range s.Shards() {
		s.Grow(i)
	}
	for _, fp := range fps {
		added = append(added, s.Insert(s.ShardOf(fp), fp))
	}
	return added, true
}

// TestSetMatchesMap: a Set answers as a map does, for 64- and 128-bit
// fingerprints, small and clustered ones, the zero fingerprint, and
// fingerprints sharing their Hi part.
func TestSetMatchesMap(t *testing.T) {
	for _, wide := range []bool{false, true} {
		r := rand.New(rand.NewPCG(1, 2))
		s := NewSet(16, wide, 0)
		ref := map[FP]bool{}
		for round := range 50 {
			fps := randomFPs(r, 200+round*40, wide)
			for i := range 30 {
				fps = append(fps, FP{Hi: uint64(i)}, FP{Hi: 7, Lo: uint64(i) << 40}) // zero, small, same Hi
				if i < len(fps) {
					fps = append(fps, fps[r.IntN(len(fps))]) // duplicates within the batch
				}
			}
			if !wide {
				for i := range fps {
					fps[i].Lo = 0
				}
			}
			added, ok := insertAll(t, s, fps)
			if !ok {
				t.Fatal("unlimited set refused a batch")
			}
			for i, fp := range fps {
				if added[i] == ref[fp] {
					t.Fatalf("wide=%v: Insert(%v) = %v with %v present", wide, fp, added[i], ref[fp])
				}
				ref[fp] = true
			}
			for range 100 {
				fp := randomFPs(r, 1, wide)[0]
				if s.Contains(fp) != ref[fp] {
					t.Fatalf("Contains(%v) = %v", fp, !ref[fp])
				}
			}
		}
		if s.Len() != uint64(len(ref)) {
			t.Fatalf("Len %d, want %d", s.Len(), len(ref))
		}
		for fp := range ref {
			if !s.Contains(fp) {
				t.Fatalf("%v lost", fp)
			}
		}
		// Sorted order is the map's keys, sorted.
		want := make([]FP, 0, len(ref))
		for fp := range ref {
			want = append(want, fp)
		}
		slices.SortFunc(want, FP.Compare)
		for i := range s.Shards() {
			s.SortShard(i)
		}
		v := s.Sorted()
		if v.Len() != uint64(len(want)) {
			t.Fatalf("sorted view of %d, want %d", v.Len(), len(want))
		}
		for i, fp := range want {
			if got := v.At(uint64(i)); got != fp {
				t.Fatalf("wide=%v: sorted[%d] = %v, want %v", wide, i, got, fp)
			}
		}
		// Random access too.
		for range 100 {
			i := r.IntN(len(want))
			if got := v.At(uint64(i)); got != want[i] {
				t.Fatalf("sorted[%d] = %v, want %v", i, got, want[i])
			}
		}
		s.Clear()
		if s.Len() != 0 || s.Contains(want[0]) {
			t.Fatal("Clear left fingerprints")
		}
	}
}

// TestSetBudget: a budgeted set grows up to its budget, takes the last
// step to whatever fits, refuses a batch it cannot hold without having
// inserted any of it, and takes it once cleared.
func TestSetBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const budget = 16 * 100 * 8 // 100 slots per shard at most
	s := NewSet(16, false, budget)
	var n int
	for {
		fps := randomFPs(r, 100, false)
		if _, ok := insertAll(t, s, fps); !ok {
			if s.Len() != uint64(n) {
				t.Fatalf("a refused batch changed the set: %d, want %d", s.Len(), n)
			}
			break
		}
		n += len(fps)
		if s.Bytes() > budget {
			t.Fatalf("set of %d bytes over its %d budget", s.Bytes(), budget)
		}
	}
	if s.Bytes() != budget {
		t.Errorf("set stopped at %d bytes; the last step should take the budget (%d)", s.Bytes(), budget)
	}
	if n < 16*100*60/100 { // the fullest shard decides
		t.Errorf("only %d fingerprints fitted", n)
	}
	s.Clear()
	if _, ok := insertAll(t, s, randomFPs(r, 100, false)); !ok {
		t.Error("a cleared set refused a batch")
	}
}

// TestSetExpect: a set sized for n fingerprints takes them in batches
// without growing; one sized within a budget stays within it.
func TestSetExpect(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	s := NewSet(16, false, 0)
	s.Expect(10000)
	size := s.Bytes()
	if size < 10000*8 {
		t.Fatalf("set sized for 10000 fingerprints has %d bytes", size)
	}
	for range 10 {
		if _, ok := insertAll(t, s, randomFPs(r, 1000, false)); !ok {
			t.Fatal("a set sized for the batches refused one")
		}
	}
	if s.Bytes() != size || s.Len() != 10000 {
		t.Errorf("after 10000 inserts: %d bytes (sized %d), %d fingerprints", s.Bytes(), size, s.Len())
	}
	b := NewSet(16, false, 16*100*8)
	b.Expect(1 << 20)
	if b.Bytes() > 16*100*8 {
		t.Errorf("a budgeted set sized beyond its budget: %d bytes", b.Bytes())
	}
}

// TestSetConcurrentContains: any number of readers while no insert runs,
// and inserts into different shards in parallel (run with -race).
func TestSetConcurrentContains(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	s := NewSet(16, true, 0)
	fps := randomFPs(r, 5000, true)
	counts := make([]int, s.Shards())
	for _, fp := range fps {
		counts[s.ShardOf(fp)]++
	}
	s.Reserve(counts)
	var wg sync.WaitGroup
	for sh := range s.Shards() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Grow(sh)
			for _, fp := range fps {
				if s.ShardOf(fp) == sh {
					s.Insert(sh, fp)
				}
			}
		}()
	}
	wg.Wait()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, fp := range fps {
				if !s.Contains(fp) {
					t.Errorf("%v missing", fp)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestSetInsertNoAlloc: with room reserved, inserts do not allocate.
func TestSetInsertNoAlloc(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	s := NewSet(16, false, 0)
	fps := randomFPs(r, 1000, false)
	counts := make([]int, s.Shards())
	for _, fp := range fps {
		counts[s.ShardOf(fp)]++
	}
	s.Reserve(counts)
	for i := range s.Shards() {
		s.Grow(i)
	}
	i := 0
	if a := testing.AllocsPerRun(1, func() {
		for ; i < len(fps); i++ {
			s.Insert(s.ShardOf(fps[i]), fps[i])
		}
	}); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

func BenchmarkSetInsert(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, wide := range []bool{false, true} {
		name := "64"
		if wide {
			name = "128"
		}
		b.Run(name, func(b *testing.B) {
			s := NewSet(16, wide, 0)
			fps := randomFPs(r, b.N, wide)
			counts := make([]int, s.Shards())
			for _, fp := range fps {
				counts[s.ShardOf(fp)]++
			}
			s.Reserve(counts)
			for i := range s.Shards() {
				s.Grow(i)
			}
			b.ResetTimer()
			for _, fp := range fps {
				s.Insert(s.ShardOf(fp), fp)
			}
			b.ReportMetric(float64(s.Bytes())/float64(max(s.Len(), 1)), "bytes/state")
		})
	}
}

// BenchmarkSetContains measures a probe of a 96-bit set filled to its
// growth load, 8 MiB and 1 GiB of slots, with questions two thirds of
// which are in the set (as duplicates are, among the successors of a
// large search), each question made by some work (a stand-in for making
// a successor's canonical form). "interleaved" asks each question as it
// is made, as a search that probes each successor as it is emitted: the
// work between two probes fills the core's reorder window, so their
// misses (caches and TLB) do not overlap. "batch" makes a chunk's
// questions and then asks them in a loop, as explorer does: the misses
// overlap. It reports ns per question, the work included;
// docs/performance.md, "Large tables".
func BenchmarkSetContains(b *testing.B) {
	const chunk = 2048
	for _, mib := range []int{8, 1024} {
		n := mib << 20 / 16 * growLoad / 100
		s := NewSet(16, true, 0)
		for j := range n {
			s.Add(mixFP(uint64(j)))
		}
		question := func(i int) FP {
			q := mixFP(uint64(n + i)) // not in the set
			if i%3 != 0 {
				q = mixFP(uint64(i % n))
			}
			if work(uint64(i)) == 0 {
				q.Lo++
			}
			return q
		}
		asked := func(b *testing.B) {
			var x uint64
			qs := make([]FP, chunk)
			for i := 0; i < b.N; i += chunk {
				qs = qs[:min(chunk, b.N-i)]
				for k := range qs {
					qs[k] = question(i + k)
				}
				for _, q := range qs {
					if s.Contains(q) {
						x++
					}
				}
			}
			sink = x
		}
		b.Run(fmt.Sprintf("MiB=%d/interleaved", mib), func(b *testing.B) {
			var x uint64
			for i := 0; i < b.N; i++ {
				if s.Contains(question(i)) {
					x++
				}
			}
			sink = x
		})
		b.Run(fmt.Sprintf("MiB=%d/batch", mib), func(b *testing.B) { asked(b) })
	}
}

// mixFP is the i-th random fingerprint of a benchmark (splitmix64).
func mixFP(i uint64) FP {
	z := (i + 1) * 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return FP{Hi: z ^ z>>31, Lo: z | 1}
}

// work is a few hundred instructions of dependent arithmetic.
func work(z uint64) uint64 {
	for range 48 {
		z = (z ^ z>>29) * 0xBF58476D1CE4E5B9
	}
	return z
}

var sink uint64
