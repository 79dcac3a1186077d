package state

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func sortedFPs(r *rand.Rand, n int, bits int) []FP {
	f := NewFingerprinter(bits)
	seen := map[FP]bool{}
	var fps []FP
	for len(fps) < n {
		fp := FP{Hi: r.Uint64(), Lo: r.Uint64()}
		if !f.Wide() {
			fp.Lo = 0
		} else if bits == 96 {
			fp.Lo &^= 0xFFFFFFFF
		}
		if !seen[fp] {
			seen[fp] = true
			fps = append(fps, fp)
		}
	}
	slices.SortFunc(fps, FP.Compare)
	return fps
}

// TestEFBlockRoundTrip: blocks decode to what was encoded, for every
// width, dense and sparse values, repeated Hi parts and single values;
// corrupt blocks are reported, never a panic.
func TestEFBlockRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, bits := range []int{64, 96, 128} {
		lo := loBytesOf(bits)
		cases := [][]FP{
			{{Hi: 5}},
			{{Hi: 0}, {Hi: 1}, {Hi: 2}, {Hi: ^uint64(0)}},
			sortedFPs(r, 1000, bits),
			sortedFPs(r, runBlockFPs, bits),
		}
		dense := make([]FP, 3000)
		for i := range dense {
			dense[i] = FP{Hi: 1<<40 + uint64(i)*3}
		}
		cases = append(cases, dense)
		if bits > 64 {
			cases = append(cases, []FP{{Hi: 9, Lo: 1 << 32}, {Hi: 9, Lo: 2 << 32}, {Hi: 9, Lo: 3 << 40}, {Hi: 10}})
		}
		for _, fps := range cases {
			b := appendEFBlock(nil, fps, lo)
			got, err := decodeEFBlock(b, lo, nil)
			if err != nil || !slices.Equal(got, fps) {
				t.Fatalf("%d bits, %d values: err %v, equal %v", bits, len(fps), err, slices.Equal(got, fps))
			}
			for range min(50, 200000/len(b)) {
				bad := slices.Clone(b)
				bad[r.IntN(len(bad))] ^= byte(1 + r.IntN(255))
				decodeEFBlock(bad, lo, nil) // must not panic
				decodeEFBlock(b[:r.IntN(len(b))], lo, nil)
			}
		}
	}
	// About 2 + log2(range/n) bits per value: 64-bit values, n = 2^16.
	fps := sortedFPs(r, runBlockFPs, 64)
	if per := float64(len(appendEFBlock(nil, fps, 0))) / float64(len(fps)); per > 6.5 {
		t.Errorf("%.2f bytes per fingerprint", per)
	}
}

func openRuns(t *testing.T, dir string, bits int) *RunStore {
	t.Helper()
	st, err := OpenRunStore(RunStoreOptions{Dir: dir, Bits: bits})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func writeRun(t *testing.T, st *RunStore, level int, fps []FP) {
	t.Helper()
	w := st.NewRun(level)
	for _, fp := range fps {
		w.Add(fp)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestRunStore: runs persist across reopening; FindExisting finds exactly
// the candidates some run holds, skipping blocks; Truncate drops whole
// levels; a run cut short by a crash (blocks without metadata) vanishes;
// another width is refused.
func TestRunStore(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, bits := range []int{64, 96} {
		dir := t.TempDir()
		st := openRuns(t, dir, bits)
		all := sortedFPs(r, runBlockFPs+1000, bits)
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		levels := [][]FP{all[:10], all[10 : runBlockFPs+100], all[runBlockFPs+100:]}
		for i, l := range levels {
			l = slices.Clone(l)
			slices.SortFunc(l, FP.Compare)
			writeRun(t, st, i+1, l)
		}
		writeRun(t, st, 4, nil) // empty: not recorded
		if err := st.Sync(); err != nil {
			t.Fatal(err)
		}
		// A run whose metadata never got written.
		w := st.NewRun(9)
		for _, fp := range sortedFPs(r, runBlockFPs+3, bits) {
			w.Add(fp)
		}
		w.flushBlock()
		w.wb.Flush()
		st.Close()

		st = openRuns(t, dir, bits)
		if st.Len() != uint64(len(all)) || st.Runs() != 3 || st.MaxLevel() != 3 {
			t.Fatalf("reopened: %d fingerprints in %d runs up to level %d", st.Len(), st.Runs(), st.MaxLevel())
		}
		check := func(present map[FP]bool) {
			t.Helper()
			cands := sortedFPs(r, 2000, bits)
			for i := 0; i < len(all); i += 97 {
				cands = append(cands, all[i])
			}
			slices.SortFunc(cands, FP.Compare)
			cands = slices.Compact(cands)
			found := map[FP]bool{}
			if err := st.FindExisting(FPSlice(cands), func(i uint64) { found[cands[i]] = true }); err != nil {
				t.Fatal(err)
			}
			for _, c := range cands {
				if found[c] != present[c] {
					t.Fatalf("%v: found %v, present %v", c, found[c], present[c])
				}
			}
		}
		present := map[FP]bool{}
		for _, fp := range all {
			present[fp] = true
		}
		check(present)
		var n int
		st.Each(func(fp FP) {
			if !present[fp] {
				t.Fatalf("Each: %v", fp)
			}
			n++
		})
		if n != len(all) {
			t.Fatalf("Each: %d", n)
		}
		if err := st.Truncate(1); err != nil {
			t.Fatal(err)
		}
		st.Close()
		st = openRuns(t, dir, bits)
		clear(present)
		for _, fp := range levels[0] {
			present[fp] = true
		}
		if st.Len() != 10 {
			t.Fatalf("truncated: %d", st.Len())
		}
		check(present)
		st.Close()
		if _, err := OpenRunStore(RunStoreOptions{Dir: dir, Bits: 160 - bits}); err == nil {
			t.Error("another width accepted")
		}
	}
	if _, err := OpenRunStore(RunStoreOptions{}); err == nil {
		t.Error("no directory accepted")
	}
}

// TestRunsCompact: a run takes, per fingerprint, about what Elias-Fano
// promises: 2 + log2(2^64/n) bits for the Hi parts of n uniform
// fingerprints, plus the Lo bytes (under 10 bytes per 96-bit fingerprint
// once a run holds more than about 2^20 of them).
func TestRunsCompact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	const n = 1 << 17
	for _, bits := range []int{64, 96, 128} {
		dir := t.TempDir()
		st := openRuns(t, dir, bits)
		writeRun(t, st, 1, sortedFPs(r, n, bits))
		st.Sync()
		var vlog int64
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if filepath.Ext(e.Name()) == ".vlog" {
				info, _ := e.Info()
				vlog += AllocatedSize(info)
			}
		}
		st.Close()
		want := (2+64-math.Log2(n))/8 + float64(loBytesOf(bits))
		per := float64(vlog) / n
		t.Logf("%d bits: %.2f bytes per fingerprint (Elias-Fano: %.2f)", bits, per, want)
		if per > want+0.3 {
			t.Errorf("%d bits: %.2f bytes per fingerprint in the value log, want about %.2f", bits, per, want)
		}
	}
}

func BenchmarkFindExisting(b *testing.B) {
	r := rand.New(rand.NewPCG(4, 4))
	st, err := OpenRunStore(RunStoreOptions{Dir: b.TempDir(), Bits: 96})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	w := st.NewRun(1)
	for _, fp := range sortedFPs(r, 1<<20, 96) {
		w.Add(fp)
	}
	w.Finish()
	cands := FPSlice(sortedFPs(r, 1<<18, 96))
	b.ResetTimer()
	for range b.N {
		st.FindExisting(cands, func(uint64) {})
	}
	b.ReportMetric(float64(b.N)*float64(st.Len())/b.Elapsed().Seconds(), "fps/s")
}

// TestRunStoreInUse: a directory another store (another bkcheck) has open
// is refused with a message that says so and names the holder's pid, not
// Badger's raw lock error (issue #22, item 4).
func TestRunStoreInUse(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenRunStore(RunStoreOptions{Dir: dir, Bits: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = OpenRunStore(RunStoreOptions{Dir: dir, Bits: 64})
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("in use by another process (pid %d;", os.Getpid())) {
		t.Fatalf("second open: %v", err)
	}
}
