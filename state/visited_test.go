package state

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

func TestMemVisitedBasic(t *testing.T) {
	v := NewMemVisited(0)
	if v.Len() != 0 || v.BytesPerState() != 0 || v.Contains(7) {
		t.Fatal("new store not empty")
	}
	seq, added := v.Insert(7, NoParent)
	if !added || seq != 0 {
		t.Fatalf("Insert(7) = %d, %v", seq, added)
	}
	if _, added := v.Insert(7, 3); added {
		t.Fatal("duplicate added")
	}
	seq, added = v.Insert(0, 0) // fp 0 is a legal fingerprint
	if !added || seq != 1 {
		t.Fatalf("Insert(0) = %d, %v", seq, added)
	}
	if _, added := v.Insert(0, 0); added {
		t.Fatal("duplicate 0 added")
	}
	if !v.Contains(0) || !v.Contains(7) || v.Contains(1) {
		t.Fatal("Contains wrong")
	}
	if fp, p := v.Lookup(0); fp != 7 || p != NoParent {
		t.Fatalf("Lookup(0) = %d, %d", fp, p)
	}
	if fp, p := v.Lookup(1); fp != 0 || p != 0 {
		t.Fatalf("Lookup(1) = %d, %d", fp, p)
	}
	if v.Len() != 2 {
		t.Fatalf("Len = %d", v.Len())
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Lookup out of range did not panic")
			}
		}()
		v.Lookup(2)
	}()
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMemVisitedRandom compares the store against a Go map over many
// inserts with repeats, clustered values and growth.
func TestMemVisitedRandom(t *testing.T) {
	for _, hint := range []int{0, 10, 100000} {
		r := rand.New(rand.NewPCG(uint64(hint), 99))
		v := NewMemVisited(hint)
		ref := map[uint64]uint64{} // fp -> seq
		var order []uint64
		var parents []uint64
		for i := 0; i < 200000; i++ {
			fp := testFP(r, 50000, order)
			parent := uint64(r.IntN(len(order) + 1))
			seq, added := v.Insert(fp, parent)
			_, had := ref[fp]
			if added == had {
				t.Fatalf("Insert(%#x): added=%v but present=%v", fp, added, had)
			}
			if added {
				if seq != uint64(len(order)) {
					t.Fatalf("seq = %d, want %d", seq, len(order))
				}
				ref[fp] = seq
				order = append(order, fp)
				parents = append(parents, parent)
			}
			probe := r.Uint64() >> r.UintN(64)
			if _, ok := ref[probe]; ok != v.Contains(probe) {
				t.Fatalf("Contains(%#x) = %v, want %v", probe, !ok, ok)
			}
		}
		if v.Len() != uint64(len(ref)) {
			t.Fatalf("Len = %d, want %d", v.Len(), len(ref))
		}
		for fp, seq := range ref {
			if !v.Contains(fp) {
				t.Fatalf("lost %#x", fp)
			}
			gfp, gp := v.Lookup(seq)
			if gfp != fp || gp != parents[seq] {
				t.Fatalf("Lookup(%d) = %#x,%d want %#x,%d", seq, gfp, gp, fp, parents[seq])
			}
		}
		if b := v.BytesPerState(); b < 16 || b > 64 {
			t.Errorf("hint %d: BytesPerState = %.1f, outside [16,64]", hint, b)
		}
		t.Logf("hint %d: %d states, %.1f bytes/state", hint, v.Len(), v.BytesPerState())
	}
}

func TestMemVisitedNoAllocAfterHint(t *testing.T) {
	v := NewMemVisited(10000)
	fp := uint64(1)
	allocs := testing.AllocsPerRun(5000, func() {
		fp = fp*6364136223846793005 + 1442695040888963407
		v.Insert(fp, 0)
		v.Contains(fp ^ 1)
	})
	if allocs != 0 {
		t.Errorf("allocs per insert = %v", allocs)
	}
}

func BenchmarkMemVisitedInsert(b *testing.B) {
	v := NewMemVisited(0)
	fp := uint64(1)
	b.ReportAllocs()
	for b.Loop() {
		fp = fp*6364136223846793005 + 1442695040888963407
		v.Insert(fp, 0)
	}
}

// BenchmarkMemVisitedContains probes a store from parallel readers (as the
// explorer's pre-filter does), half the probes present and half absent:
// with 4Ki states the table stays in cache and the probe's arithmetic
// shows; with 1Mi, memory latency dominates.
func BenchmarkMemVisitedContains(b *testing.B) {
	for _, n := range []uint64{1 << 12, 1 << 20} {
		b.Run(fmt.Sprintf("states=%d", n), func(b *testing.B) {
			v := NewMemVisited(0)
			present := make([]uint64, n)
			fp := uint64(1)
			for i := range present {
				fp = fp*6364136223846793005 + 1442695040888963407
				present[i] = fp
				v.Insert(fp, 0)
			}
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				x := rand.Uint64()
				for pb.Next() {
					x = x*6364136223846793005 + 1442695040888963407
					if x>>63 == 0 {
						v.Contains(present[(x>>20)%n])
					} else {
						v.Contains(x)
					}
				}
			})
		})
	}
}

// TestMemVisitedLinksOnDisk: the on-disk link log answers like the slices.
func TestMemVisitedLinksOnDisk(t *testing.T) {
	dir := t.TempDir()
	disk, err := NewMemVisitedLinksOnDisk(0, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	mem := NewMemVisited(0)
	rng := uint64(12345)
	for i := 0; i < 50000; i++ {
		rng = rng*6364136223846793005 + 1442695040888963407
		fp := rng >> 40 // many duplicates
		parent := uint64(i) / 3
		s1, a1 := mem.Insert(fp, parent)
		s2, a2 := disk.Insert(fp, parent)
		if a1 != a2 || (a1 && s1 != s2) {
			t.Fatalf("insert %d: mem (%d,%v) disk (%d,%v)", i, s1, a1, s2, a2)
		}
	}
	if mem.Len() != disk.Len() {
		t.Fatalf("len %d vs %d", mem.Len(), disk.Len())
	}
	for seq := uint64(0); seq < mem.Len(); seq += 7 {
		f1, p1 := mem.Lookup(seq)
		f2, p2 := disk.Lookup(seq)
		if f1 != f2 || p1 != p2 {
			t.Fatalf("lookup %d: (%x,%d) vs (%x,%d)", seq, f1, p1, f2, p2)
		}
	}
	if err := disk.Err(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("link log left %d files in its directory", len(entries))
	}
	if disk.BytesPerState() >= mem.BytesPerState() {
		t.Errorf("links on disk cost %.1f bytes/state, in memory %.1f", disk.BytesPerState(), mem.BytesPerState())
	}
	t.Logf("bytes/state: links in memory %.1f, on disk %.1f", mem.BytesPerState(), disk.BytesPerState())
}
