package state

import (
	"slices"
	"sync"
	"unsafe"
)

// SortFPsParallel is SortFPs on up to workers goroutines: one radix pass
// on the top byte, then the 256 buckets sorted in parallel.
func SortFPsParallel(a []FP, workers int) {
	if workers <= 1 || len(a) < 1<<16 {
		SortFPs(a)
		return
	}
	start, count := radixPass(a, 56)
	next := make(chan int, 256)
	for b := range 256 {
		next <- b
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				if count[b] > 1 {
					sortFPsFrom(a[start[b]:start[b]+count[b]], 48)
				}
			}
		}()
	}
	wg.Wait()
}

// SortFPs sorts fingerprints in increasing order (FP.Compare). It is an
// in-place radix sort on the top bytes of Hi (American flag sort), which
// spreads random fingerprints into small buckets at once, finishing each
// bucket with a comparison sort: several times faster than a comparison
// sort through a function value, and with no extra memory.
func SortFPs(a []FP) { sortFPsFrom(a, 56) }

func sortFPsFrom(a []FP, shift uint) {
	const small = 64
	if len(a) <= small || shift > 56 {
		slices.SortFunc(a, FP.Compare)
		return
	}
	start, count := radixPass(a, shift)
	for b := range 256 {
		if count[b] <= 1 {
			continue
		}
		if shift == 0 {
			slices.SortFunc(a[start[b]:start[b]+count[b]], FP.Compare)
		} else {
			sortFPsFrom(a[start[b]:start[b]+count[b]], shift-8)
		}
	}
}

// radixPass permutes a in place into 256 buckets by the byte of Hi at
// shift (American flag sort) and returns where each bucket starts and
// its size.
func radixPass(a []FP, shift uint) (start, count [256]int) {
	for i := range a {
		count[byte(a[i].Hi>>shift)]++
	}
	var next [256]int
	sum := 0
	for b := range 256 {
		start[b], next[b] = sum, sum
		sum += count[b]
	}
	for b := range 256 {
		end := start[b] + count[b]
		for next[b] < end {
			x := a[next[b]]
			d := byte(x.Hi >> shift)
			if int(d) == b {
				next[b]++
				continue
			}
			// Swap x into its bucket; take what was there.
			for int(d) != b {
				a[next[d]], x = x, a[next[d]]
				next[d]++
				d = byte(x.Hi >> shift)
			}
			a[next[b]] = x
			next[b]++
		}
	}
	return start, count
}

// sortWords sorts 64-bit words in place (a 64-bit table shard).
func sortWords(a []uint64) { slices.Sort(a) }

// pairsAsFPs views a slot array of two words per slot as fingerprints.
func pairsAsFPs(w []uint64) []FP {
	if len(w) < 2 {
		return nil
	}
	return unsafe.Slice((*FP)(unsafe.Pointer(&w[0])), len(w)/2)
}
