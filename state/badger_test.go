package state

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/dgraph-io/badger/v4"
)

// tinyCache, given to openBadger as the budget, opens the store with the
// smallest budget and none of it for the fingerprint cache, which then
// overflows after minTableLen states.
const tinyCache = -1

func openBadger(t testing.TB, dir string, budget int64) *BadgerVisited {
	t.Helper()
	opt := BadgerOptions{Dir: dir, MemoryBudget: budget}
	if budget == tinyCache {
		opt.MemoryBudget = MinBadgerMemoryBudget
		opt.testingKnobs.noCache = true
	}
	v, err := OpenBadgerVisited(opt)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// compareWithMem inserts the same random stream (with many duplicates,
// fp 0 included) into b and a MemVisited and checks every answer.
func compareWithMem(t *testing.T, b *BadgerVisited, m *MemVisited, rng *rand.Rand, n int, universe uint64) {
	t.Helper()
	for i := range n {
		fp := rng.Uint64N(universe)
		if i%7 == 0 {
			fp = rng.Uint64() // mostly new, full 64-bit range
		}
		if got, want := b.Contains(fp), m.Contains(fp); got != want {
			t.Fatalf("insert %d: Contains(%#x) = %v, MemVisited says %v", i, fp, got, want)
		}
		parent := NoParent
		if m.Len() > 0 {
			parent = rng.Uint64N(m.Len())
		}
		gs, ga := b.Insert(fp, parent)
		ws, wa := m.Insert(fp, parent)
		if ga != wa || (wa && gs != ws) {
			t.Fatalf("insert %d: Insert(%#x) = %d, %v; MemVisited says %d, %v", i, fp, gs, ga, ws, wa)
		}
		if b.Len() != m.Len() {
			t.Fatalf("insert %d: Len = %d, want %d", i, b.Len(), m.Len())
		}
	}
}

// checkSame checks Len, Lookup of every state and Contains of every
// fingerprint (and of some absent ones) against m.
func checkSame(t *testing.T, b *BadgerVisited, m *MemVisited, rng *rand.Rand) {
	t.Helper()
	if b.Len() != m.Len() {
		t.Fatalf("Len = %d, want %d", b.Len(), m.Len())
	}
	for seq := range m.Len() {
		fp, parent := b.Lookup(seq)
		wfp, wparent := m.Lookup(seq)
		if fp != wfp || parent != wparent {
			t.Fatalf("Lookup(%d) = %#x, %d; want %#x, %d", seq, fp, parent, wfp, wparent)
		}
		if !b.Contains(fp) {
			t.Fatalf("Contains(%#x) (seq %d) = false", fp, seq)
		}
	}
	for range 1000 {
		fp := rng.Uint64()
		if got, want := b.Contains(fp), m.Contains(fp); got != want {
			t.Fatalf("Contains(%#x) = %v, want %v", fp, got, want)
		}
	}
}

func TestBadgerMatchesMem(t *testing.T) {
	for _, tc := range []struct {
		name     string
		budget   int64
		n        int
		overflow bool
	}{
		{"exact", 0, 100_000, false},
		// With no cache budget the exact set keeps its minimum size:
		// Contains then runs on the Bloom filter, the windows and Badger
		// reads.
		{"tiny-cache", tinyCache, 100_000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			b := openBadger(t, t.TempDir(), tc.budget)
			defer b.Close()
			m := NewMemVisited(0)
			compareWithMem(t, b, m, rng, tc.n, uint64(tc.n))
			if b.Overflowed() != tc.overflow {
				t.Fatalf("Overflowed = %v, want %v", b.Overflowed(), tc.overflow)
			}
			checkSame(t, b, m, rng)
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
			checkSame(t, b, m, rng)
			t.Logf("%d states, %.1f cache bytes/state, %d bytes on disk", b.Len(), b.BytesPerState(), b.DiskBytes())
		})
	}
}

func TestBadgerReopen(t *testing.T) {
	for _, budget := range []int64{0, tinyCache} {
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(3, 4))
		b := openBadger(t, dir, budget)
		m := NewMemVisited(0)
		compareWithMem(t, b, m, rng, 50_000, 40_000)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		b = openBadger(t, dir, budget)
		checkSame(t, b, m, rng)
		// And it carries on where it stopped.
		compareWithMem(t, b, m, rng, 20_000, 80_000)
		checkSame(t, b, m, rng)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBadgerTruncate(t *testing.T) {
	for _, budget := range []int64{0, tinyCache} {
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(5, 6))
		b := openBadger(t, dir, budget)
		m := NewMemVisited(0)
		compareWithMem(t, b, m, rng, 30_000, 1<<62)
		cut := m.Len()
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
		// Inserts after the "checkpoint", some flushed, some not.
		var later []uint64
		for range 20_000 {
			fp := rng.Uint64()
			if _, added := b.Insert(fp, 0); added {
				later = append(later, fp)
			}
		}
		if err := b.Truncate(cut); err != nil {
			t.Fatal(err)
		}
		if b.Len() != cut {
			t.Fatalf("Len after Truncate(%d) = %d", cut, b.Len())
		}
		for _, fp := range later {
			if b.Contains(fp) && !m.Contains(fp) {
				t.Fatalf("Contains(%#x) after Truncate", fp)
			}
		}
		checkSame(t, b, m, rng)
		// Re-insert: the same fingerprints get the same new seqs as in m.
		compareWithMem(t, b, m, rng, 10_000, 1<<62)
		for i, fp := range later[:5000] {
			gs, ga := b.Insert(fp, uint64(i))
			ws, wa := m.Insert(fp, uint64(i))
			if gs != ws || ga != wa {
				t.Fatalf("re-Insert(%#x) = %d, %v; want %d, %v", fp, gs, ga, ws, wa)
			}
		}
		checkSame(t, b, m, rng)
		if err := b.Truncate(b.Len() + 1); err == nil {
			t.Fatal("Truncate beyond Len succeeded")
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		b = openBadger(t, dir, budget)
		checkSame(t, b, m, rng)
		if err := b.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if b.Len() != 0 || b.Contains(later[0]) {
			t.Fatalf("after Truncate(0): Len %d", b.Len())
		}
		b.Close()
	}
}

// copyDir copies the regular files of src into a new directory, as a crude
// snapshot of a store whose process was killed. Badger works in the
// background (memtables flushed to tables, files deleted), so a copy taken
// while a file disappears or appears is not a state the disk was ever in:
// such a copy is thrown away and taken again.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	for attempt := 0; attempt < 100; attempt++ {
		dst := t.TempDir()
		before, err := regularFiles(src)
		if err != nil {
			t.Fatal(err)
		}
		ok := true
		for _, name := range before {
			if err := copyFile(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					ok = false
					break
				}
				t.Fatal(err)
			}
		}
		after, err := regularFiles(src)
		if err != nil {
			t.Fatal(err)
		}
		if ok && slices.Equal(before, after) {
			return dst
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("could not snapshot %s: its files kept changing", src)
	return ""
}

// regularFiles lists the sorted names of the regular files in dir, the lock
// file excepted.
func regularFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && e.Name() != "LOCK" {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestBadgerCrash opens a copy of the directory of a store that was never
// closed: what was flushed must be there, and the store must be consistent
// (Len states, each findable, nothing else).
func TestBadgerCrash(t *testing.T) {
	for _, budget := range []int64{0, tinyCache} {
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(7, 8))
		b := openBadger(t, dir, budget)
		m := NewMemVisited(0)
		compareWithMem(t, b, m, rng, 40_000, 1<<62)
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
		flushed := m.Len()
		compareWithMem(t, b, m, rng, 10_000, 1<<62) // not flushed
		snap := copyDir(t, dir)

		c := openBadger(t, snap, budget)
		n := c.Len()
		if n < flushed || n > m.Len() {
			t.Fatalf("recovered Len %d, want between %d and %d", n, flushed, m.Len())
		}
		t.Logf("budget %d: flushed %d, inserted %d, recovered %d", budget, flushed, m.Len(), n)
		// The recovered store is a prefix of what was inserted.
		mp := NewMemVisited(0)
		for seq := range n {
			fp, parent := m.Lookup(seq)
			mp.Insert(fp, parent)
		}
		checkSame(t, c, mp, rng)
		for seq := n; seq < m.Len(); seq++ {
			fp, _ := m.Lookup(seq)
			if c.Contains(fp) {
				t.Fatalf("recovered store contains seq %d beyond Len %d", seq, n)
			}
		}
		// It can go on, be truncated and reopened.
		compareWithMem(t, c, mp, rng, 5_000, 1<<62)
		if err := c.Truncate(flushed); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		c = openBadger(t, snap, budget)
		if c.Len() != flushed {
			t.Fatalf("Len after Truncate and reopen = %d, want %d", c.Len(), flushed)
		}
		c.Close()
		b.Close()
	}
}

// TestBadgerMemory inserts many states under a 64 MiB budget and bounds the
// Go heap. Long tier.
func TestBadgerMemory(t *testing.T) {
	testtier.Long(t, "fills a store past its memory budget")
	const (
		budget = 64 << 20
		n      = 5_000_000
	)
	b := openBadger(t, t.TempDir(), budget)
	defer b.Close()
	rng := rand.New(rand.NewPCG(9, 10))
	var peak, live uint64
	var ms runtime.MemStats
	start := time.Now()
	for i := range n {
		b.Insert(rng.Uint64(), uint64(i))
		if i%250_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			if i%1_000_000 == 0 {
				// Live data: what a collection leaves.
				runtime.GC()
				runtime.ReadMemStats(&ms)
				live = max(live, ms.HeapInuse)
			}
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapInuse)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	live = max(live, ms.HeapInuse)
	t.Logf("%d states in %v (%.0f inserts/s): peak HeapInuse %.1f MiB, peak live %.1f MiB, cache %.1f bytes/state, disk %.1f bytes/state, overflow %v",
		b.Len(), elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(),
		float64(peak)/(1<<20), float64(live)/(1<<20), b.BytesPerState(),
		float64(b.DiskBytes())/float64(b.Len()), b.Overflowed())
	if b.Len() != n {
		t.Fatalf("Len = %d", b.Len())
	}
	// Loose bounds: Badger allocates outside what the budget controls
	// (compaction buffers, transactions), and the Go runtime lets the heap
	// reach about twice the live data before collecting (GOGC=100).
	// Measured alone: live 85-110 MiB, peak 155-180 MiB; with other test
	// packages competing for the two cores, compactions fall behind and
	// live reached 131 MiB, so the live bound is 3x the budget.
	if live > 3*budget {
		t.Errorf("live heap %d > 3 * budget", live)
	}
	if peak > 4*budget {
		t.Errorf("peak HeapInuse %d > 4 * budget", peak)
	}
}

func benchStates(b *testing.B, dir string, budget int64, n int) *BadgerVisited {
	v := openBadger(b, dir, budget)
	rng := rand.New(rand.NewPCG(11, 12))
	for range n {
		v.Insert(rng.Uint64(), 0)
	}
	if err := v.Flush(); err != nil {
		b.Fatal(err)
	}
	return v
}

func BenchmarkBadgerInsert(b *testing.B) {
	for _, bc := range []struct {
		name   string
		budget int64
	}{{"budget=256MiB", 256 << 20}, {"tiny-cache", tinyCache}} {
		b.Run(bc.name, func(b *testing.B) {
			v := openBadger(b, b.TempDir(), bc.budget)
			defer v.Close()
			rng := rand.New(rand.NewPCG(13, 14))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v.Insert(rng.Uint64(), uint64(i))
			}
			if err := v.Flush(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(v.BytesPerState(), "bytes/state")
			b.ReportMetric(float64(v.DiskBytes())/float64(v.Len()), "disk-bytes/state")
		})
	}
}

func BenchmarkBadgerContains(b *testing.B) {
	const n = 1_000_000
	for _, bc := range []struct {
		name   string
		budget int64
	}{{"budget=256MiB", 256 << 20}, {"tiny-cache", tinyCache}} {
		b.Run(bc.name, func(b *testing.B) {
			v := benchStates(b, b.TempDir(), bc.budget, n)
			defer v.Close()
			// Half present (the same stream again), half absent.
			rng := rand.New(rand.NewPCG(11, 12))
			present := make([]uint64, n)
			for i := range present {
				present[i] = rng.Uint64()
			}
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := rand.New(rand.NewPCG(rand.Uint64(), 0))
				for pb.Next() {
					if r.IntN(2) == 0 {
						v.Contains(present[r.IntN(n)])
					} else {
						v.Contains(r.Uint64())
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(v.BytesPerState(), "bytes/state")
		})
	}
}

// TestBadgerBlocks crosses block boundaries with and without flushes and
// truncates at, just before and just after boundaries, reopening the store
// and looking up every state each time.
func TestBadgerBlocks(t *testing.T) {
	const bs = blockStates
	for _, budget := range []int64{0, tinyCache} {
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(15, 16))
		b := openBadger(t, dir, budget)
		var ref []pendingState
		insert := func(k int) {
			t.Helper()
			for range k {
				fp, parent := rng.Uint64(), NoParent
				if len(ref) > 0 {
					parent = rng.Uint64N(uint64(len(ref)))
				}
				seq, added := b.Insert(fp, parent)
				if !added || seq != uint64(len(ref)) {
					t.Fatalf("Insert = %d, %v; want %d, true", seq, added, len(ref))
				}
				ref = append(ref, pendingState{fp, parent})
			}
		}
		check := func(stage string) {
			t.Helper()
			if b.Len() != uint64(len(ref)) {
				t.Fatalf("%s: Len = %d, want %d", stage, b.Len(), len(ref))
			}
			// Backwards, so that the block cache is missed at each block.
			for seq := len(ref) - 1; seq >= 0; seq-- {
				fp, parent := b.Lookup(uint64(seq))
				if fp != ref[seq].fp || parent != ref[seq].parent {
					t.Fatalf("%s: Lookup(%d) = %#x, %d; want %#x, %d", stage, seq, fp, parent, ref[seq].fp, ref[seq].parent)
				}
				if !b.Contains(fp) {
					t.Fatalf("%s: Contains(%#x) (seq %d) = false", stage, fp, seq)
				}
			}
		}
		reopen := func(stage string) {
			t.Helper()
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			b = openBadger(t, dir, budget)
			check(stage + ", reopened")
		}
		flush := func() {
			t.Helper()
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
		}

		// A partial block is flushed, then completed and followed by
		// another without a flush.
		insert(bs - 1)
		flush()
		check("partial block flushed")
		insert(2)
		check("across the first boundary")
		reopen("across the first boundary")
		// Then more blocks than the write batch holds (pendingMax).
		insert(pendingMax + 5*bs)
		check("many blocks")
		flush()
		flush() // nothing new: must not rewrite anything wrongly
		insert(3)
		reopen("many blocks")

		for _, boundary := range []int{12 * bs, 8 * bs, bs} {
			for _, d := range []int{1, 0, -1} {
				cut := boundary + d
				stage := fmt.Sprintf("Truncate(%d*%d%+d)", boundary/bs, bs, d)
				dropped := ref[cut:]
				if err := b.Truncate(uint64(cut)); err != nil {
					t.Fatal(err)
				}
				ref = ref[:cut:cut]
				check(stage)
				for _, p := range dropped {
					if b.Contains(p.fp) {
						t.Fatalf("%s: Contains(%#x) of a dropped state", stage, p.fp)
					}
				}
				// A few inserts (maybe crossing the boundary again), some
				// flushed, then a reopen.
				insert(rng.IntN(3))
				if d != 0 {
					flush()
				}
				insert(rng.IntN(3))
				reopen(stage)
			}
		}
		// Grow again across several boundaries, truncate to 0, reopen.
		insert(3*bs + 7)
		flush()
		insert(bs)
		reopen("regrown")
		if err := b.Truncate(0); err != nil {
			t.Fatal(err)
		}
		ref = ref[:0]
		reopen("Truncate(0)")
		insert(bs + 1)
		reopen("after Truncate(0)")
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBadgerRecoverBlocks damages the b/ space as an interrupted Truncate
// could (a partial block followed by full ones, a hole): reopening keeps
// the states up to the first partial block or hole and drops the rest.
func TestBadgerRecoverBlocks(t *testing.T) {
	const bs = blockStates
	for _, budget := range []int64{0, tinyCache} {
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(17, 18))
		b := openBadger(t, dir, budget)
		m := NewMemVisited(0)
		compareWithMem(t, b, m, rng, 6*bs, 1<<62)
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
		if m.Len() < 5*bs {
			t.Fatalf("only %d states", m.Len())
		}
		// Block 1 cut to 100 states; block 4 removed (a hole).
		short, err := b.readBlock(1, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = b.db.Update(func(txn *badger.Txn) error {
			if err := txn.Set(blockKey(1), short[:100*recLen]); err != nil {
				return err
			}
			return txn.Delete(blockKey(4))
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		b = openBadger(t, dir, budget)
		const n = bs + 100
		mp := NewMemVisited(0)
		for seq := range uint64(n) {
			fp, parent := m.Lookup(seq)
			mp.Insert(fp, parent)
		}
		checkSame(t, b, mp, rng)
		for seq := uint64(n); seq < m.Len(); seq++ {
			if fp, _ := m.Lookup(seq); b.Contains(fp) {
				t.Fatalf("recovered store contains seq %d beyond Len %d", seq, n)
			}
		}
		compareWithMem(t, b, mp, rng, 2*bs, 1<<62)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		b = openBadger(t, dir, budget)
		checkSame(t, b, mp, rng)
		b.Close()
	}
}
