package state

import "fmt"

// NoParent is the parent sequence number of an initial state.
const NoParent = ^uint64(0)

// Visited is the set of fingerprints seen so far with, for each, the
// index of the state that first reached it (for counterexamples).
//
// States are identified by fingerprint alone (as in TLC): storing the
// encodings would cost tens of bytes more per state for a collision
// probability that CollisionProbability lets us report instead.
// Parent links are kept by sequence number, not by fingerprint, so that a
// trace is rebuilt by index lookups without a reverse hash table.
type Visited interface {
	// Insert records fp as discovered from parent (the sequence number of
	// the parent state; NoParent for initial states). It returns the new
	// state's sequence number and true if fp was not present, or false
	// (and an unspecified seq).
	Insert(fp uint64, parent uint64) (seq uint64, added bool)
	// Contains reports whether fp has been inserted. Any number of
	// goroutines may call Contains at once provided no Insert runs
	// concurrently: the explorer pre-filters successors in parallel this
	// way and inserts them afterwards from one goroutine.
	Contains(fp uint64) bool
	// Len returns the number of distinct fingerprints inserted.
	Len() uint64
	// Lookup returns the fingerprint and parent sequence number of state seq.
	Lookup(seq uint64) (fp uint64, parent uint64)
	// BytesPerState is the current memory cost estimate.
	BytesPerState() float64
	// Close releases the store.
	Close() error
}

// MemVisited is the in-memory Visited store: a growing fingerprint table
// (fpTable) plus two append-only slices indexed by sequence number.
//
// The table does not store sequence numbers because the search never asks
// "which seq has fp" (only "is fp new"); the seq-indexed slices answer the
// trace question "who is the parent of seq". Altogether ~27-40 bytes per
// state, depending on where growth left the capacities.
type MemVisited struct {
	table   fpTable  // every fingerprint; doubles at memMaxLoad
	fps     []uint64 // fingerprint by seq (when links is nil)
	parents []uint64 // parent seq by seq (when links is nil)
	links   *linkLog // the same on disk, for NewMemVisitedLinksOnDisk
	n       uint64
	err     error // first I/O error of the link log
}

var _ Visited = (*MemVisited)(nil)

const (
	minTableSize = 16
	// memMaxLoad is the load (percent) at which MemVisited's table doubles.
	memMaxLoad = 70
)

// memTable returns an empty growing table for about capacityHint states
// before it first has to grow: a power of two, so that every doubling
// keeps it one.
func memTable(capacityHint int) fpTable {
	size := uint64(minTableSize)
	for size*memMaxLoad/100 < uint64(max(capacityHint, 0))+1 {
		size <<= 1
	}
	return growingFPTable(size, memMaxLoad)
}

// NewMemVisited returns an empty in-memory store sized for about
// capacityHint states before it first has to grow.
func NewMemVisited(capacityHint int) *MemVisited {
	capacityHint = max(capacityHint, 0)
	return &MemVisited{
		table:   memTable(capacityHint),
		fps:     make([]uint64, 0, capacityHint),
		parents: make([]uint64, 0, capacityHint),
	}
}

// NewMemVisitedLinksOnDisk is NewMemVisited with the parent links kept in
// an unlinked file in dir (os.TempDir() if ""): memory then holds only the
// fingerprint table, 8 bytes per slot at a load factor of 0.35 to 0.7.
func NewMemVisitedLinksOnDisk(capacityHint int, dir string) (*MemVisited, error) {
	l, err := newLinkLog(dir)
	if err != nil {
		return nil, err
	}
	return &MemVisited{table: memTable(capacityHint), links: l}, nil
}

// Err reports the first I/O error of the on-disk link log, if any. Insert
// cannot return one; the search checks Err when it ends.
func (v *MemVisited) Err() error { return v.err }

// Contains implements Visited.
func (v *MemVisited) Contains(fp uint64) bool { return v.table.contains(fp) }

// Insert implements Visited.
func (v *MemVisited) Insert(fp uint64, parent uint64) (uint64, bool) {
	if !v.table.insert(fp) {
		return 0, false
	}
	return v.appendState(fp, parent), true
}

func (v *MemVisited) appendState(fp, parent uint64) uint64 {
	seq := v.n
	v.n++
	if v.links != nil {
		if _, err := v.links.append(fp, parent); err != nil && v.err == nil {
			v.err = err
		}
		return seq
	}
	v.fps = append(v.fps, fp)
	v.parents = append(v.parents, parent)
	return seq
}

// Len implements Visited.
func (v *MemVisited) Len() uint64 { return v.n }

// Lookup implements Visited. It panics if seq was never returned by Insert.
func (v *MemVisited) Lookup(seq uint64) (fp uint64, parent uint64) {
	if seq >= v.n {
		panic(fmt.Sprintf("state: Lookup(%d) with only %d states", seq, v.n))
	}
	if v.links != nil {
		fp, parent, err := v.links.get(seq)
		if err != nil && v.err == nil {
			v.err = err
		}
		return fp, parent
	}
	return v.fps[seq], v.parents[seq]
}

// BytesPerState implements Visited: allocated bytes (table and both slices,
// spare capacity included) divided by the number of states.
func (v *MemVisited) BytesPerState() float64 {
	if v.n == 0 {
		return 0
	}
	// The link log's fixed 1 MiB write buffer is not counted: it does not
	// grow with the states.
	bytes := v.table.bytes() + 8*int64(cap(v.fps)+cap(v.parents))
	return float64(bytes) / float64(v.n)
}

// Close implements Visited; it drops the memory.
func (v *MemVisited) Close() error {
	var err error
	if v.links != nil {
		err = v.links.close()
	}
	*v = MemVisited{}
	return err
}
