package state

import (
	"fmt"
	"math/bits"
)

// Set is an exact set of fingerprints in memory, cut into shards by the
// top bits of FP.Hi so that a commit can insert in parallel, one goroutine
// per shard, and so that sorting each shard sorts the whole set (a shard
// holds one contiguous range of fingerprints).
//
// Growth is planned, not automatic: before a batch of inserts, Reserve is
// told how many fingerprints each shard may receive and decides, within the
// memory budget, which shards double; Grow carries that out (any number of
// shards in parallel) and Insert then never allocates or fails. A shard
// doubles when it would pass growLoad percent and, once the budget allows
// no more doubling, may fill up to maxLoad percent; past that Reserve
// reports that the set is full.
//
// Contains may be called by any number of goroutines while no Grow or
// Insert runs; Grow and Insert may run concurrently for different shards.
type Set struct {
	shards  []fpTable
	shift   uint // shard = Hi >> shift
	wide    bool
	budget  int64 // bytes of slot arrays; 0: unlimited
	planned []uint64
}

const (
	minShardSlots = 16
	growLoad      = 70
	maxLoad       = 90
)

// NewSet returns an empty set of the given number of shards (a power of
// two, at least 1) for wide (more than 64-bit) fingerprints or not, whose
// slot arrays may take budget bytes (0: no limit).
func NewSet(shards int, wide bool, budget int64) *Set {
	if shards < 1 || shards&(shards-1) != 0 {
		panic(fmt.Sprintf("state: %d shards is not a power of two", shards))
	}
	s := &Set{shards: make([]fpTable, shards), shift: uint(64 - bits.TrailingZeros(uint(shards))), wide: wide, budget: budget}
	for i := range s.shards {
		s.shards[i] = newFPTable(minShardSlots, wide)
	}
	s.planned = make([]uint64, shards)
	return s
}

// SetShards is the number of shards a Set for w workers gets: a power of
// two with several shards per worker, so that the commit's work divides
// evenly.
func SetShards(workers int) int {
	n := 16
	for n < 4*workers {
		n *= 2
	}
	return n
}

// Shards is the number of shards.
func (s *Set) Shards() int { return len(s.shards) }

// Wide reports whether the set holds fingerprints wider than 64 bits.
func (s *Set) Wide() bool { return s.wide }

// ShardOf is the shard that holds fp.
func (s *Set) ShardOf(fp FP) int { return int(fp.Hi >> s.shift) }

// Contains reports whether fp is in the set.
func (s *Set) Contains(fp FP) bool { return s.shards[fp.Hi>>s.shift].contains(fp) }

func (s *Set) slotBytes() int64 {
	if s.wide {
		return 16
	}
	return 8
}

// Reserve plans room for counts[i] more fingerprints in shard i (counts
// has one entry per shard) and reports whether there is enough: false
// means the set is full within its budget and must be cleared (or the
// batch split) first. All shards keep one size (fingerprints are uniform,
// so their loads are even, and a budget is never left stranded in a few
// shards that grew early); planned growth is carried out by Grow.
func (s *Set) Reserve(counts []int) bool {
	size := s.shards[0].size()
	var need uint64
	for i := range s.shards {
		need = max(need, s.shards[i].used+uint64(counts[i]))
	}
	for need > size*growLoad/100 {
		if s.budget > 0 && int64(2*size)*int64(len(s.shards))*s.slotBytes() > s.budget {
			// The last step takes whatever the budget allows.
			if most := uint64(s.budget / (int64(len(s.shards)) * s.slotBytes())); most >= size+size/4 {
				size = most
			}
			break
		}
		size *= 2
	}
	if need > size*maxLoad/100 || need+1 >= size {
		size = s.shards[0].size()
		for i := range s.planned {
			s.planned[i] = size
		}
		return false
	}
	for i := range s.planned {
		s.planned[i] = size
	}
	return true
}

// Expect sizes the set, before its first insert, for n fingerprints, as
// a Reserve of n spread evenly over the shards would (within the budget),
// so that a set known to grow that far is not rehashed at every doubling
// on the way.
func (s *Set) Expect(n int) {
	counts := make([]int, len(s.shards))
	for i := range counts {
		counts[i] = (n + len(counts) - 1) / len(counts)
	}
	if s.Reserve(counts) {
		for i := range s.shards {
			s.Grow(i)
		}
	}
}

// Grow carries out the growth Reserve planned for shard i.
func (s *Set) Grow(i int) {
	if t := &s.shards[i]; s.planned[i] > t.size() {
		t.resize(s.planned[i])
	}
}

// Insert adds fp to shard i (which must be ShardOf(fp)) unless present and
// reports whether it added it. Room must have been reserved.
func (s *Set) Insert(i int, fp FP) bool { return s.shards[i].insert(fp) }

// Add inserts fp, growing the set as needed (ignoring the budget): for
// loading a set from disk, one goroutine.
func (s *Set) Add(fp FP) bool {
	t := &s.shards[s.ShardOf(fp)]
	if (t.used+1)*100 > t.size()*growLoad {
		size := 2 * t.size()
		for i := range s.shards {
			s.shards[i].resize(size)
		}
	}
	return t.insert(fp)
}

// Len is the number of fingerprints in the set.
func (s *Set) Len() uint64 {
	var n uint64
	for i := range s.shards {
		n += s.shards[i].len()
	}
	return n
}

// Bytes is the memory held by the slot arrays.
func (s *Set) Bytes() int64 {
	var n int64
	for i := range s.shards {
		n += s.shards[i].bytes()
	}
	return n
}

// Clear empties the set, keeping its arrays.
func (s *Set) Clear() {
	for i := range s.shards {
		s.ClearShard(i)
	}
}

// ClearShard empties shard i (shards may be cleared in parallel).
func (s *Set) ClearShard(i int) { s.shards[i].clear() }

// Each calls f for every fingerprint, shard by shard.
func (s *Set) Each(f func(FP)) {
	for i := range s.shards {
		s.shards[i].each(f)
	}
}

// SortShard sorts shard i in place (shards may be sorted in parallel).
// Once every shard is sorted, Sorted reads the set in increasing order;
// the set must then be cleared before it is used as a set again.
func (s *Set) SortShard(i int) { s.shards[i].sortSlots() }

// Sorted returns the fingerprints of a set whose shards are all sorted,
// in increasing order.
func (s *Set) Sorted() *SortedSet {
	v := &SortedSet{s: s, starts: make([]uint64, len(s.shards)+1)}
	for i := range s.shards {
		v.starts[i+1] = v.starts[i] + s.shards[i].len()
	}
	return v
}

// SortedSet is a read-only view of a sorted Set, indexable in order.
type SortedSet struct {
	s      *Set
	starts []uint64 // prefix sums of the shard sizes
	shard  int      // shard of the last At, a cursor for sequential reads
}

// Len is the number of fingerprints.
func (v *SortedSet) Len() uint64 { return v.starts[len(v.starts)-1] }

// At returns the i-th smallest fingerprint. Sequential access is O(1).
func (v *SortedSet) At(i uint64) FP {
	for i < v.starts[v.shard] {
		v.shard--
	}
	for i >= v.starts[v.shard+1] {
		v.shard++
	}
	return v.s.shards[v.shard].sortedAt(i - v.starts[v.shard])
}
