package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// BadgerOptions configures OpenBadgerVisited, which applies EnsureDefaults
// and then Validate to them.
type BadgerOptions struct {
	// Dir is the store's directory; it is created if missing.
	Dir string
	// MemoryBudget is the number of bytes of RAM the store may use for
	// Badger's memtables and caches plus its own in-memory fingerprint
	// cache. 0 means DefaultBadgerMemoryBudget; otherwise it must be at
	// least MinBadgerMemoryBudget.
	MemoryBudget int64

	// testingKnobs are set only by this package's tests.
	testingKnobs struct {
		// noCache gives the fingerprint cache none of the budget, so
		// that it overflows after minTableLen states: the tests' way into
		// overflow mode without millions of states.
		noCache bool
	}
}

const (
	// DefaultBadgerMemoryBudget is the memory budget EnsureDefaults puts
	// in place of a zero BadgerOptions.MemoryBudget.
	DefaultBadgerMemoryBudget int64 = 2 << 30
	// MinBadgerMemoryBudget is the smallest memory budget Validate
	// accepts. Below it, Badger's memtables, caches and table builders,
	// which badgerOptions does not shrink further, take the whole budget
	// and leave the fingerprint cache nothing.
	MinBadgerMemoryBudget int64 = 32 << 20
)

// EnsureDefaults sets every option left at its zero value to its default
// (MemoryBudget to DefaultBadgerMemoryBudget) and returns o; a nil o is
// taken as empty options.
func (o *BadgerOptions) EnsureDefaults() *BadgerOptions {
	if o == nil {
		o = &BadgerOptions{}
	}
	if o.MemoryBudget == 0 {
		o.MemoryBudget = DefaultBadgerMemoryBudget
	}
	return o
}

// Validate reports every problem with the options, each naming its field,
// joined in one error (nil if there is none). A zero MemoryBudget is
// valid: it stands for the default.
func (o *BadgerOptions) Validate() error {
	var errs []error
	if o.Dir == "" {
		errs = append(errs, errors.New("state: BadgerOptions.Dir is empty"))
	}
	switch b := o.MemoryBudget; {
	case b < 0:
		errs = append(errs, fmt.Errorf("state: BadgerOptions.MemoryBudget is %d, negative", b))
	case b > 0 && b < MinBadgerMemoryBudget:
		errs = append(errs, fmt.Errorf("state: BadgerOptions.MemoryBudget is %d bytes, below the minimum of %d (%d MiB)",
			b, MinBadgerMemoryBudget, MinBadgerMemoryBudget>>20))
	}
	return errors.Join(errs...)
}

// Key spaces. Both key suffixes are big-endian so that Badger's key order
// is numeric order: the b/ space iterates by block, hence by sequence
// number.
//
//	b/<block> -> (fp, parent seq) of states block*blockStates, ... (16 bytes each)
//	f/<fp>    -> seq (8 bytes)
var (
	prefixFP    = []byte("f/")
	prefixBlock = []byte("b/")
	// keyFPIndex marks that the f/ space is complete. The f/ space (fp ->
	// seq) serves only look-ups the in-memory cache cannot answer, which
	// happen once the exact table outgrows the budget. Until then it is not
	// written at all: b/ keys are few, sequential and cheap for Badger to
	// insert, random per-state f/ keys are not (they dominated the insert
	// cost). When the cache overflows, the f/ space is built from b/ once
	// and kept from then on.
	keyFPIndex = []byte("m/fp-index")
)

const (
	keyLen = 2 + 8
	// recLen is the size of a state's record in a block: fp, parent.
	recLen = 16
	// blockStates is how many states a b/ block holds: Badger then
	// writes one 64 KiB value per 4096 states instead of one key per
	// state (skiplist inserts, transaction entries and compaction work
	// per key were most of the store's cost).
	blockStates = 4096
	blockBytes  = blockStates * recLen
	// pendingMax is how many states (a multiple of blockStates) are kept
	// in v.pending, their complete blocks queued in a Badger WriteBatch
	// (which commits full transactions in the background), before the
	// batch is flushed automatically.
	pendingMax = 16 * blockStates
	// Loads of the cache's fingerprint tables, in percent: the exact
	// table grows at exactGrowLoad while the budget allows, and once it
	// does not, fills up to exactMaxLoad before the cache overflows; a
	// recent window rotates at windowLoad.
	exactGrowLoad = 70
	exactMaxLoad  = 90
	windowLoad    = 70
	minTableLen   = 1 << 10
)

// BadgerVisited is a disk-backed Visited store: every state is persisted in
// a Badger database, so a run can outgrow RAM, survive a crash (up to the
// last Flush) and be resumed. The states' records (fingerprint, parent seq)
// are packed by sequence number in blocks of blockStates; a fingerprint ->
// seq index is added once the in-memory cache overflows.
//
// Badger is fronted by an in-memory cache so that most Contains calls never
// reach it:
//
//   - While it fits in the memory budget, an exact open-addressing set of
//     every fingerprint (8 bytes / load factor per state) answers Contains
//     alone, as MemVisited's table does. Badger is then written to but never
//     read during a search.
//   - When the exact set would outgrow the budget, the store switches to
//     overflow mode: a layered Bloom filter over all fingerprints answers
//     "certainly new" for most new states; two rotating tables hold the most
//     recently inserted fingerprints (in a BFS most duplicates are states of
//     the current or previous level) and answer "certainly seen"; only what
//     remains goes to a Badger read of the f/ index.
//
// Writes go through a Badger WriteBatch: a block is queued when it is
// complete, the last, partial one is written (and rewritten as it grows) by
// Flush; the batch is flushed every pendingMax states and by Flush. The
// states of the blocks not yet committed and of the partial block are also
// kept in memory (v.pending) for Lookup and for rewriting the partial block.
//
// Insert, Flush, Truncate and Close must be called from one goroutine at a
// time; Contains may be called from any number of goroutines while none of
// those runs. Badger errors on the write path are sticky: Insert cannot
// return them, so they are reported by the next Flush, Close or Err. A read
// error in Contains or Lookup panics (the interface has no error return and
// a wrong answer would silently corrupt the search).
type BadgerVisited struct {
	db  *badger.DB
	dir string

	n uint64 // Len: states 0..n-1 are stored

	// In-memory cache.
	fpBudget int64      // bytes for exact/window tables and the Bloom filter
	overflow bool       // false: exact holds every fingerprint
	fpIndex  bool       // the f/ space is complete and maintained
	exact    fpTable    // exact mode
	cur, old fpTable    // overflow mode: recent windows
	bloom    layerBloom // overflow mode: every fingerprint

	// Write path. pending holds the states n-len(pending) .. n-1, where
	// n-len(pending) is a multiple of blockStates: blocks that are
	// complete (queued in wb, not yet known to be committed) and the
	// partial last block. Blocks before them are committed to Badger.
	wb       *badger.WriteBatch
	pending  []pendingState
	durableN uint64 // Len when the partial block was last written
	err      error  // sticky write error

	// Lookup's cache of the block it read last.
	lookMu    sync.Mutex
	lookBlock uint64 // index of the block in lookData
	lookData  []byte // nil: none
}

type pendingState struct{ fp, parent uint64 }

var _ Visited = (*BadgerVisited)(nil)

// OpenBadgerVisited opens (creating if needed) the store in opt.Dir. If the
// directory holds a store, its states are recovered: Len is the number of
// states in the run of blocks 0, 1, ... present, up to the first partial
// block, and anything beyond (left by a crash between flushes) is dropped,
// so the two key spaces agree.
func OpenBadgerVisited(opt BadgerOptions) (*BadgerVisited, error) {
	if err := opt.EnsureDefaults().Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	bo, fpBudget := badgerOptions(opt.Dir, opt.MemoryBudget)
	if opt.testingKnobs.noCache {
		fpBudget = 0
	}
	db, err := badger.Open(bo)
	if err != nil {
		return nil, fmt.Errorf("state: open badger store %s: %w", opt.Dir, err)
	}
	v := &BadgerVisited{db: db, dir: opt.Dir, fpBudget: fpBudget}
	if err := v.recover(); err != nil {
		db.Close()
		return nil, err
	}
	return v, nil
}

// badgerOptions tunes Badger for tiny keys and values written in large
// batches and splits the memory budget: Badger gets two memtables of
// budget/16 (at most 8 MiB), block and index caches of budget/32 and
// budget/16, and a reserve for the tables it builds in memory; the rest
// (about 45% of 64 MiB, 75% of 1 GiB) goes to the fingerprint cache.
func badgerOptions(dir string, budget int64) (badger.Options, int64) {
	memTable := clamp(budget/16, 2<<20, 8<<20)
	// Compactions build whole tables in memory (2x the table size up
	// front, several at once), so tables stay small and do not grow
	// with the level (Badger's default doubles them per level).
	tableSize := clamp(budget/64, 1<<20, 8<<20)
	// Badger's arena per memtable is MemTableSize + 2*15% (batch slack).
	arenas := 2 * (memTable + memTable*3/10)
	blockCache := clamp(budget/32, 1<<20, 256<<20)
	indexCache := clamp(budget/16, 2<<20, 512<<20)
	o := badger.DefaultOptions(dir).
		WithLoggingLevel(badger.WARNING).
		WithMetricsEnabled(false).
		WithNumVersionsToKeep(1).
		WithSyncWrites(false).
		WithDetectConflicts(false).
		WithCompression(options.None).
		// f/ values (8 bytes) stay in the LSM tree; b/ blocks (up to 64
		// KiB) go to the value log, appended once and never rewritten.
		// (In the LSM tree, compactions kept copying them along with the
		// f/ keys: overflow-mode runs took twice as long.)
		WithValueThreshold(1 << 10).
		// Files of 16 MiB: about a million states each, so that huge runs
		// keep few files open. (Badger preallocates 2x, sparsely.)
		WithValueLogFileSize(16 << 20).
		WithMemTableSize(memTable).
		WithNumMemtables(2).
		WithNumLevelZeroTables(4).
		WithNumLevelZeroTablesStall(10).
		WithBaseTableSize(tableSize).
		WithNumCompactors(2).
		WithBlockCacheSize(blockCache).
		WithIndexCacheSize(indexCache)
	o.TableSizeMultiplier = 1
	// Compactions and memtable flushes build tables in memory: reserve
	// for a memtable flush and a few table builders.
	builders := 2*memTable + 16*tableSize
	// pending, plus the blocks Badger holds until the batch commits.
	fpBudget := budget - arenas - blockCache - indexCache - builders - 2*pendingMax*recLen
	if fpBudget < 0 {
		fpBudget = 0
	}
	return o, fpBudget
}

func clamp(x, lo, hi int64) int64 {
	return max(lo, min(x, hi))
}

func fpKey(fp uint64) []byte {
	k := make([]byte, keyLen)
	copy(k, prefixFP)
	binary.BigEndian.PutUint64(k[2:], fp)
	return k
}

func blockKey(block uint64) []byte {
	k := make([]byte, keyLen)
	copy(k, prefixBlock)
	binary.BigEndian.PutUint64(k[2:], block)
	return k
}

// Len implements Visited.
func (v *BadgerVisited) Len() uint64 { return v.n }

// Err returns the first error met on the write path, if any.
func (v *BadgerVisited) Err() error { return v.err }

// Contains implements Visited.
func (v *BadgerVisited) Contains(fp uint64) bool {
	if !v.overflow {
		return v.exact.contains(fp)
	}
	if v.cur.contains(fp) || v.old.contains(fp) {
		return true
	}
	if !v.bloom.mayContain(fp) {
		return false
	}
	// Every f/ key of a state outside the windows has been committed
	// (rotate flushes), so Badger has it if anyone has.
	found, err := v.dbHas(fp)
	if err != nil {
		panic(fmt.Sprintf("state: badger read in Contains: %v", err))
	}
	return found
}

func (v *BadgerVisited) dbHas(fp uint64) (bool, error) {
	var k [keyLen]byte
	copy(k[:], prefixFP)
	binary.BigEndian.PutUint64(k[2:], fp)
	err := v.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(k[:])
		return err
	})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, badger.ErrKeyNotFound):
		return false, nil
	default:
		return false, err
	}
}

// Insert implements Visited.
func (v *BadgerVisited) Insert(fp uint64, parent uint64) (uint64, bool) {
	if v.Contains(fp) {
		return 0, false
	}
	seq := v.n
	v.cacheAdd(fp)
	v.n++
	v.write(seq, fp, parent)
	return seq, true
}

// pendingBase is the seq of v.pending[0], a multiple of blockStates.
func (v *BadgerVisited) pendingBase() uint64 { return v.n - uint64(len(v.pending)) }

// write records state seq (== v.n-1): in pending, in the f/ index if it is
// kept, and in Badger once its block is complete.
func (v *BadgerVisited) write(seq, fp, parent uint64) {
	v.pending = append(v.pending, pendingState{fp, parent})
	if v.fpIndex && v.err == nil {
		// f/ before the block: Badger applies a batch's transactions in
		// order, so whatever prefix survives a crash has f/ for every
		// state in b/ (recover relies on the b/ space and drops stray f/
		// keys).
		b := make([]byte, keyLen+8)
		copy(b, prefixFP)
		binary.BigEndian.PutUint64(b[2:], fp)
		binary.BigEndian.PutUint64(b[keyLen:], seq)
		v.batchSet(b[:keyLen:keyLen], b[keyLen:])
	}
	if (seq+1)%blockStates == 0 {
		v.queueBlock(seq / blockStates)
	}
	if len(v.pending) >= pendingMax {
		v.flushBatch()
	}
}

// batchSet queues a write in the write batch. Badger keeps references to k
// and val until the batch is committed.
func (v *BadgerVisited) batchSet(k, val []byte) {
	if v.err != nil {
		return
	}
	if v.wb == nil {
		v.wb = v.db.NewWriteBatch()
	}
	if err := v.wb.Set(k, val); err != nil {
		v.err = fmt.Errorf("state: badger write: %w", err)
	}
}

// queueBlock queues the write of block (complete or not) from pending.
func (v *BadgerVisited) queueBlock(block uint64) {
	if v.err != nil {
		return
	}
	off := block*blockStates - v.pendingBase()
	recs := v.pending[off:min(off+blockStates, uint64(len(v.pending)))]
	buf := make([]byte, keyLen+len(recs)*recLen)
	copy(buf, prefixBlock)
	binary.BigEndian.PutUint64(buf[2:], block)
	val := buf[keyLen:]
	for i, r := range recs {
		binary.BigEndian.PutUint64(val[i*recLen:], r.fp)
		binary.BigEndian.PutUint64(val[i*recLen+8:], r.parent)
	}
	v.batchSet(buf[:keyLen:keyLen], val)
}

// flushBatch waits until every queued write is committed to Badger (and
// visible to reads), then forgets the pending states of complete blocks.
func (v *BadgerVisited) flushBatch() {
	if v.wb != nil {
		if err := v.wb.Flush(); err != nil && v.err == nil {
			v.err = fmt.Errorf("state: badger write: %w", err)
		}
		v.wb = nil
	}
	if v.err != nil {
		// Keep pending: Lookup must not read blocks never written.
		return
	}
	if k := len(v.pending) / blockStates * blockStates; k > 0 {
		v.pending = v.pending[:copy(v.pending, v.pending[k:])]
	}
}

// Flush makes every Insert so far durable: it writes the partial block,
// waits for the write batch and syncs Badger's files to disk.
func (v *BadgerVisited) Flush() error {
	if v.n%blockStates != 0 && v.n != v.durableN {
		v.queueBlock(v.n / blockStates)
	}
	v.flushBatch()
	if v.err != nil {
		return v.err
	}
	v.durableN = v.n
	if err := v.db.Sync(); err != nil {
		return fmt.Errorf("state: badger sync: %w", err)
	}
	return nil
}

// Lookup implements Visited. It panics if seq was never returned by Insert
// or if Badger cannot be read.
func (v *BadgerVisited) Lookup(seq uint64) (fp uint64, parent uint64) {
	if seq >= v.n {
		panic(fmt.Sprintf("state: Lookup(%d) with only %d states", seq, v.n))
	}
	if base := v.pendingBase(); seq >= base {
		p := v.pending[seq-base]
		return p.fp, p.parent
	}
	v.lookMu.Lock()
	defer v.lookMu.Unlock()
	block, i := seq/blockStates, seq%blockStates
	if v.lookData == nil || v.lookBlock != block {
		data, err := v.readBlock(block, v.lookData[:0])
		if err == nil && uint64(len(data)) != blockBytes {
			err = fmt.Errorf("block %d has %d bytes", block, len(data))
		}
		if err != nil {
			panic(fmt.Sprintf("state: badger Lookup(%d): %v", seq, err))
		}
		v.lookBlock, v.lookData = block, data
	}
	r := v.lookData[i*recLen:]
	return binary.BigEndian.Uint64(r), binary.BigEndian.Uint64(r[8:])
}

// readBlock appends the value of block to buf.
func (v *BadgerVisited) readBlock(block uint64, buf []byte) ([]byte, error) {
	err := v.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(blockKey(block))
		if err != nil {
			return err
		}
		buf, err = it.ValueCopy(buf)
		return err
	})
	return buf, err
}

// Truncate forgets every state with seq >= n, durably; afterwards Len() ==
// n. It is how a run resumed from a checkpoint rolls back the inserts made
// after that checkpoint.
func (v *BadgerVisited) Truncate(n uint64) error {
	if n > v.n {
		return fmt.Errorf("state: Truncate(%d) with only %d states", n, v.n)
	}
	if err := v.Flush(); err != nil {
		return err
	}
	if n == v.n {
		return nil
	}
	// Everything is in Badger now.
	if err := v.deleteFrom(n); err != nil {
		return err
	}
	v.n = n
	if err := v.loadPartial(); err != nil {
		return err
	}
	if err := v.rebuildCache(); err != nil {
		return err
	}
	if err := v.db.Sync(); err != nil {
		return fmt.Errorf("state: badger sync: %w", err)
	}
	return nil
}

// deleteFrom deletes the records of seq >= n from the b/ space (deleting
// the blocks after n's, cutting n's block short) and, if the index is
// kept, the f/ keys they name.
func (v *BadgerVisited) deleteFrom(n uint64) error {
	v.lookMu.Lock()
	v.lookData = nil
	v.lookMu.Unlock()
	wb := v.db.NewWriteBatch()
	defer wb.Cancel()
	err := v.db.View(func(txn *badger.Txn) error {
		io := badger.DefaultIteratorOptions
		io.Prefix = prefixBlock
		io.PrefetchSize = 4
		it := txn.NewIterator(io)
		defer it.Close()
		for it.Seek(blockKey(n / blockStates)); it.Valid(); it.Next() {
			item := it.Item()
			k := item.KeyCopy(nil)
			if len(k) != keyLen {
				if err := wb.Delete(k); err != nil {
					return err
				}
				continue
			}
			start := binary.BigEndian.Uint64(k[2:]) * blockStates
			val, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			keep := 0
			if start < n {
				keep = int(min(n-start, uint64(len(val)/recLen))) * recLen
			}
			if v.fpIndex {
				for r := keep; r+recLen <= len(val); r += recLen {
					if err := wb.Delete(fpKey(binary.BigEndian.Uint64(val[r:]))); err != nil {
						return err
					}
				}
			}
			switch {
			case keep == 0:
				err = wb.Delete(k)
			case keep < len(val):
				err = wb.Set(k, val[:keep])
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = wb.Flush()
	}
	if err != nil {
		return fmt.Errorf("state: badger truncate: %w", err)
	}
	return nil
}

// loadPartial sets pending to the states of the partial block of a store
// whose every state is in Badger.
func (v *BadgerVisited) loadPartial() error {
	v.pending = v.pending[:0]
	v.durableN = v.n
	k := v.n % blockStates
	if k == 0 {
		return nil
	}
	data, err := v.readBlock(v.n/blockStates, nil)
	if err == nil && uint64(len(data)) < k*recLen {
		err = fmt.Errorf("block %d has %d bytes, want %d", v.n/blockStates, len(data), k*recLen)
	}
	if err != nil {
		return fmt.Errorf("state: badger read: %w", err)
	}
	for i := range k {
		r := data[i*recLen:]
		v.pending = append(v.pending, pendingState{binary.BigEndian.Uint64(r), binary.BigEndian.Uint64(r[8:])})
	}
	return nil
}

// recover establishes Len from the b/ space and makes the f/ space agree
// with it, then fills the in-memory cache.
func (v *BadgerVisited) recover() error {
	// Len: blocks must be 0, 1, ... each full but the last. A hole or a
	// block after a partial one (possible only if a crash interrupted a
	// Truncate) ends the store there.
	var n, next uint64
	var partial, beyond bool
	err := v.db.View(func(txn *badger.Txn) error {
		io := badger.DefaultIteratorOptions
		io.Prefix = prefixBlock
		io.PrefetchValues = false
		it := txn.NewIterator(io)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			k := item.Key()
			if partial || len(k) != keyLen || binary.BigEndian.Uint64(k[2:]) != next {
				beyond = true
				return nil
			}
			var size int
			if err := item.Value(func(b []byte) error {
				size = len(b)
				return nil
			}); err != nil {
				return err
			}
			if size > blockBytes || size%recLen != 0 {
				return fmt.Errorf("block %d has %d bytes", next, size)
			}
			n += uint64(size / recLen)
			partial = size < blockBytes
			next++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("state: badger recover: %w", err)
	}
	if beyond {
		if err := v.deleteFrom(n); err != nil {
			return err
		}
	}
	v.n = n
	if err := v.loadPartial(); err != nil {
		return err
	}
	err = v.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(keyFPIndex)
		v.fpIndex = err == nil
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("state: badger recover: %w", err)
	}
	if !v.fpIndex {
		// Any f/ keys are leftovers of an index build a crash cut short.
		if err := v.db.DropPrefix(prefixFP); err != nil {
			return fmt.Errorf("state: badger recover: %w", err)
		}
		return v.rebuildCache() // builds the index if the cache overflows
	}
	if err := v.rebuildCache(); err != nil {
		return err
	}
	// Drop f/ keys naming a seq >= n (their block did not make it to
	// disk); count the others. If they are not exactly one per state, or
	// name a fingerprint the b/ space does not hold, rewrite the f/ space.
	var good uint64
	var stray [][]byte
	consistent := true
	err = v.db.View(func(txn *badger.Txn) error {
		io := badger.DefaultIteratorOptions
		io.Prefix = prefixFP
		it := txn.NewIterator(io)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			k := item.Key()
			var seq uint64
			if err := item.Value(func(b []byte) error {
				if len(b) != 8 {
					seq = ^uint64(0)
				} else {
					seq = binary.BigEndian.Uint64(b)
				}
				return nil
			}); err != nil {
				return err
			}
			switch {
			case len(k) != keyLen:
				consistent = false
			case seq >= n:
				stray = append(stray, item.KeyCopy(nil))
			case !v.cacheMayContain(binary.BigEndian.Uint64(k[2:])):
				consistent = false
			default:
				good++
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("state: badger recover: %w", err)
	}
	if !consistent || good != n {
		return v.rewriteFP()
	}
	if len(stray) > 0 {
		wb := v.db.NewWriteBatch()
		defer wb.Cancel()
		for _, k := range stray {
			if err := wb.Delete(k); err != nil {
				return fmt.Errorf("state: badger recover: %w", err)
			}
		}
		if err := wb.Flush(); err != nil {
			return fmt.Errorf("state: badger recover: %w", err)
		}
		if err := v.db.Sync(); err != nil {
			return fmt.Errorf("state: badger sync: %w", err)
		}
	}
	return nil
}

// rewriteFP rebuilds the f/ space from the b/ space, durably.
func (v *BadgerVisited) rewriteFP() error {
	if err := v.db.DropPrefix(prefixFP); err != nil {
		return fmt.Errorf("state: badger recover: %w", err)
	}
	if err := v.buildFPIndex(); err != nil {
		return err
	}
	if err := v.db.Sync(); err != nil {
		return fmt.Errorf("state: badger recover: %w", err)
	}
	return nil
}

// scanStates calls f for every state, in seq order: those of the blocks
// committed to Badger, then the pending ones.
func (v *BadgerVisited) scanStates(f func(seq, fp uint64) error) error {
	base := v.pendingBase()
	err := v.db.View(func(txn *badger.Txn) error {
		io := badger.DefaultIteratorOptions
		io.Prefix = prefixBlock
		io.PrefetchSize = 4
		it := txn.NewIterator(io)
		defer it.Close()
		var seq uint64
		for it.Rewind(); it.Valid() && seq < base; it.Next() {
			item := it.Item()
			k := item.Key()
			if len(k) != keyLen || binary.BigEndian.Uint64(k[2:]) != seq/blockStates {
				return fmt.Errorf("block %d missing", seq/blockStates)
			}
			if err := item.Value(func(b []byte) error {
				if len(b) != blockBytes {
					return fmt.Errorf("block %d has %d bytes", seq/blockStates, len(b))
				}
				for r := 0; r < len(b); r += recLen {
					if err := f(seq, binary.BigEndian.Uint64(b[r:])); err != nil {
						return err
					}
					seq++
				}
				return nil
			}); err != nil {
				return err
			}
		}
		if seq != base {
			return fmt.Errorf("blocks end at %d states, want %d", seq, base)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, p := range v.pending {
		if err := f(base+uint64(i), p.fp); err != nil {
			return err
		}
	}
	return nil
}

// rebuildCache refills the in-memory cache from the stored states.
func (v *BadgerVisited) rebuildCache() error {
	v.overflow = false
	// Room for the states below the growth load if the budget allows.
	v.exact = fixedFPTable(min(max(v.n*100/exactGrowLoad+1, minTableLen), v.maxExactLen()), exactGrowLoad)
	v.cur, v.old, v.bloom = fpTable{}, fpTable{}, layerBloom{}
	err := v.scanStates(func(_, fp uint64) error {
		v.cacheAdd(fp)
		return nil
	})
	if err != nil {
		return fmt.Errorf("state: badger scan: %w", err)
	}
	return nil
}

// maxExactLen is the largest exact table the budget allows.
func (v *BadgerVisited) maxExactLen() uint64 {
	return uint64(max(v.fpBudget/8, minTableLen))
}

// cacheAdd records a fingerprint known not to be in the cache.
func (v *BadgerVisited) cacheAdd(fp uint64) {
	if !v.overflow {
		t := &v.exact
		if !t.full() {
			t.insert(fp)
			return
		}
		// Grow (by 2x, or less up to the budget) if the new table and
		// the old one, while rehashing, fit.
		cur := t.size()
		if size := min(2*cur, uint64(max(v.fpBudget/8-int64(cur), 0))); size >= cur+cur/4 {
			t.resize(size)
			t.insert(fp)
			return
		}
		// Out of budget: fill the table fuller before giving up on it.
		if t.loadBelow(exactMaxLoad) {
			t.insert(fp)
			return
		}
		v.startOverflow()
	}
	v.bloom.add(fp)
	if v.cur.full() {
		v.rotate()
	}
	v.cur.insert(fp)
}

// rotate forgets the older window and starts a new one. What the older
// window held must be readable from Badger first. The new window gets
// what the Bloom filter leaves of the budget (it grows with the states).
func (v *BadgerVisited) rotate() {
	v.flushBatch()
	v.old, v.cur = v.cur, v.old
	if size := v.windowLen(); v.cur.size() != size {
		v.cur = fixedFPTable(size, windowLoad)
	} else {
		v.cur.clear()
	}
}

// windowLen is the size of each recent window: the two share what the
// Bloom filter leaves of the fingerprint budget.
func (v *BadgerVisited) windowLen() uint64 {
	avail := v.fpBudget - v.bloom.bytes()
	return uint64(max(avail/16, minTableLen))
}

// cacheMayContain is Contains without the Badger read.
func (v *BadgerVisited) cacheMayContain(fp uint64) bool {
	if !v.overflow {
		return v.exact.contains(fp)
	}
	return v.bloom.mayContain(fp)
}

// startOverflow turns the exact table into a Bloom filter plus two recent
// windows.
func (v *BadgerVisited) startOverflow() {
	v.overflow = true
	v.bloom = layerBloom{}
	v.bloom.addLayer(max(2*v.n, 1<<16))
	v.exact.each(v.bloom.add)
	v.exact = fpTable{}
	size := v.windowLen()
	v.cur, v.old = fixedFPTable(size, windowLoad), fixedFPTable(size, windowLoad)
	// The windows start empty, so everything so far must be readable.
	v.flushBatch()
	if !v.fpIndex {
		if err := v.buildFPIndex(); err != nil && v.err == nil {
			v.err = err
		}
	}
}

// buildFPIndex writes the f/ space for every state so far and marks it
// complete; from then on write keeps it up to date.
func (v *BadgerVisited) buildFPIndex() error {
	wb := v.db.NewWriteBatch()
	defer wb.Cancel()
	err := v.scanStates(func(seq, fp uint64) error {
		val := make([]byte, 8)
		binary.BigEndian.PutUint64(val, seq)
		return wb.Set(fpKey(fp), val)
	})
	if err == nil {
		err = wb.Set(keyFPIndex, []byte{1})
	}
	if err == nil {
		err = wb.Flush()
	}
	if err != nil {
		return fmt.Errorf("state: building the fingerprint index: %w", err)
	}
	v.fpIndex = true
	return nil
}

// BytesPerState implements Visited: the bytes held by the in-memory cache
// (fingerprint tables, Bloom filter, pending writes) per state. Badger's
// own memtables and caches (bounded by the memory budget) and its files
// (DiskBytes) are not included.
func (v *BadgerVisited) BytesPerState() float64 {
	if v.n == 0 {
		return 0
	}
	return float64(v.CacheBytes()) / float64(v.n)
}

// CacheBytes is the memory held by the in-memory cache.
func (v *BadgerVisited) CacheBytes() int64 {
	b := v.exact.bytes() + v.cur.bytes() + v.old.bytes() + v.bloom.bytes()
	return b + recLen*int64(cap(v.pending)) + int64(cap(v.lookData))
}

// DiskBytes is the disk space of the store's files: LSM tables, value log,
// memtable write-ahead logs and manifest. (Badger's own db.Size is only
// refreshed once a minute, so the directory is listed instead.)
func (v *BadgerVisited) DiskBytes() int64 {
	ents, err := os.ReadDir(v.dir)
	if err != nil {
		lsm, vlog := v.db.Size()
		return lsm + vlog
	}
	var n int64
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += allocatedSize(info)
		}
	}
	return n
}

// allocatedSize is the disk space of a file: its size, or less if it is
// sparse (Badger preallocates value log and memtable files sparsely) and
// the platform reports allocated blocks (Unix: Stat_t.Blocks, in 512-byte
// units).
func allocatedSize(info os.FileInfo) int64 {
	size := info.Size()
	if sys := reflect.ValueOf(info.Sys()); sys.Kind() == reflect.Pointer && !sys.IsNil() && sys.Elem().Kind() == reflect.Struct {
		if b := sys.Elem().FieldByName("Blocks"); b.IsValid() && b.CanInt() {
			return min(size, 512*b.Int())
		}
	}
	return size
}

// Overflowed reports whether the exact fingerprint set has outgrown the
// memory budget (so Contains may read Badger).
func (v *BadgerVisited) Overflowed() bool { return v.overflow }

// Close flushes and syncs pending writes and closes the database.
func (v *BadgerVisited) Close() error {
	if v.db == nil {
		return nil
	}
	err := v.Flush()
	if cerr := v.db.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("state: close badger store: %w", cerr)
	}
	*v = BadgerVisited{}
	return err
}
