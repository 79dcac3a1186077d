package state

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// RunStore is the visited set on disk: sorted runs of fingerprints in a
// Badger database. A search on disk writes one run (or a few) per BFS
// level, holding the fingerprints of the states new at that level, and
// checks a whole level's worth of candidates against every run at once by
// a merge-join (delayed duplicate detection, the classic external-memory
// breadth-first search) instead of one random look-up per state.
//
// A run is cut into blocks of runBlockFPs fingerprints, each Elias-Fano
// coded (efcode.go) and stored as one Badger value; the run's metadata
// (level, count, first fingerprint of each block) is written last, in its
// own transaction, so a run exists exactly when its metadata does. Blocks
// without metadata (a run cut short by a crash) are deleted when the
// store is opened. The metadata of every run stays in memory: a merge-join
// skips, without reading it, every block in whose range no candidate falls.
//
// Keys:
//
//	m/<run id>             metadata (runMeta.encode)
//	r/<run id>/<block>     block (8-byte run id, 4-byte block, big-endian)
//
// Runs are never merged: a run of level d stays as written, so rolling the
// store back to a checkpoint (Truncate) only deletes whole runs, and the
// value log never fills with the garbage of rewritten runs.
type RunStore struct {
	db      *badger.DB
	dir     string
	bits    int
	loBytes int
	runs    []*runMeta
	nextID  uint64
	scratch []FP
	vbuf    []byte
}

// RunStoreOptions configures OpenRunStore.
type RunStoreOptions struct {
	Dir  string // created if missing
	Bits int    // fingerprint width: 64, 96 or 128
}

type runMeta struct {
	id     uint64
	level  int
	n      uint64
	firsts []FP     // first fingerprint of each block
	counts []uint32 // fingerprints in each block
}

var (
	prefixRunMeta  = []byte("m/")
	prefixRunBlock = []byte("r/")
)

func loBytesOf(bits int) int { return (bits - 64) / 8 }

// ErrInUse: the store is held by another process (Badger's directory
// lock), which is usually a second run started on the same directory —
// or, for a sharded search, a shard started twice. The caller treats it
// as bad input: nothing has been written, and retrying cannot help
// while the other process runs.
var ErrInUse = errors.New("in use by another process")

// OpenRunStore opens (creating if needed) the store in opt.Dir. A store
// holding fingerprints of another width is refused.
func OpenRunStore(opt RunStoreOptions) (*RunStore, error) {
	if opt.Dir == "" {
		return nil, errors.New("state: RunStoreOptions.Dir is empty")
	}
	if !ValidFingerprintBits(opt.Bits) {
		return nil, fmt.Errorf("state: RunStoreOptions.Bits is %d, not 64, 96 or 128", opt.Bits)
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	bo := badger.DefaultOptions(opt.Dir).
		WithLoggingLevel(badger.WARNING).
		WithMetricsEnabled(false).
		WithNumVersionsToKeep(1).
		WithSyncWrites(false).
		WithDetectConflicts(false).
		WithCompression(options.None).
		// Blocks (hundreds of KiB) go to the value log, written once;
		// the LSM tree holds only keys and the small metadata.
		WithValueThreshold(1 << 10).
		WithValueLogFileSize(256 << 20).
		WithMemTableSize(1 << 20).
		WithNumMemtables(2).
		WithNumLevelZeroTables(2).
		WithNumLevelZeroTablesStall(8).
		WithBaseTableSize(1 << 20).
		WithNumCompactors(2).
		WithBlockCacheSize(0).
		WithIndexCacheSize(0)
	db, err := badger.Open(bo)
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			// Badger keeps the holder's pid in its LOCK file.
			pid, _ := os.ReadFile(filepath.Join(opt.Dir, "LOCK"))
			return nil, fmt.Errorf("state: %s is %w (pid %s; another bkcheck on the same directory?): let it finish or stop it first", opt.Dir, ErrInUse, strings.TrimSpace(string(pid)))
		}
		return nil, fmt.Errorf("state: open badger store %s: %w", opt.Dir, err)
	}
	st := &RunStore{db: db, dir: opt.Dir, bits: opt.Bits, loBytes: loBytesOf(opt.Bits)}
	if err := st.load(); err != nil {
		db.Close()
		return nil, err
	}
	return st, nil
}

func runMetaKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64(slices.Clone(prefixRunMeta), id)
}

func runBlockKey(id uint64, block int) []byte {
	k := binary.BigEndian.AppendUint64(slices.Clone(prefixRunBlock), id)
	return binary.BigEndian.AppendUint32(k, uint32(block))
}

func (m *runMeta) encode(bits int) []byte {
	b := binary.AppendUvarint(nil, uint64(bits))
	b = binary.AppendUvarint(b, uint64(m.level))
	b = binary.AppendUvarint(b, m.n)
	b = binary.AppendUvarint(b, uint64(len(m.firsts)))
	for i, fp := range m.firsts {
		b = binary.BigEndian.AppendUint64(b, fp.Hi)
		b = binary.BigEndian.AppendUint64(b, fp.Lo)
		b = binary.AppendUvarint(b, uint64(m.counts[i]))
	}
	return b
}

func decodeRunMeta(id uint64, b []byte) (*runMeta, int, error) {
	bad := fmt.Errorf("state: corrupt metadata of run %d", id)
	var vals [4]uint64
	for i := range vals {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, 0, bad
		}
		vals[i], b = v, b[k:]
	}
	m := &runMeta{id: id, level: int(vals[1]), n: vals[2]}
	var total uint64
	for range vals[3] {
		if len(b) < 16 {
			return nil, 0, bad
		}
		fp := FP{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
		c, k := binary.Uvarint(b[16:])
		if k <= 0 || c == 0 || c > runBlockFPs {
			return nil, 0, bad
		}
		b = b[16+k:]
		m.firsts, m.counts = append(m.firsts, fp), append(m.counts, uint32(c))
		total += c
	}
	if total != m.n || len(b) != 0 {
		return nil, 0, bad
	}
	return m, int(vals[0]), nil
}

// load reads the metadata and deletes the blocks of runs without any.
func (st *RunStore) load() error {
	live := map[uint64]bool{}
	orphans := map[uint64]bool{}
	err := st.db.View(func(txn *badger.Txn) error {
		io := badger.DefaultIteratorOptions
		io.Prefix = prefixRunMeta
		it := txn.NewIterator(io)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			k := item.Key()
			if len(k) != len(prefixRunMeta)+8 {
				continue
			}
			id := binary.BigEndian.Uint64(k[len(prefixRunMeta):])
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			m, bits, err := decodeRunMeta(id, v)
			if err != nil {
				return err
			}
			if bits != st.bits {
				return fmt.Errorf("state: the store in %s holds %d-bit fingerprints, not %d-bit", st.dir, bits, st.bits)
			}
			st.runs = append(st.runs, m)
			live[id] = true
			st.nextID = max(st.nextID, id+1)
		}
		io = badger.DefaultIteratorOptions
		io.Prefix = prefixRunBlock
		io.PrefetchValues = false
		it2 := txn.NewIterator(io)
		defer it2.Close()
		for it2.Rewind(); it2.Valid(); it2.Next() {
			k := it2.Item().Key()
			if len(k) < len(prefixRunBlock)+8 {
				continue
			}
			id := binary.BigEndian.Uint64(k[len(prefixRunBlock):])
			if !live[id] {
				orphans[id] = true
			}
			st.nextID = max(st.nextID, id+1)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("state: reading the run store: %w", err)
	}
	slices.SortFunc(st.runs, func(a, b *runMeta) int { return cmp.Compare(a.id, b.id) })
	for id := range orphans {
		if err := st.db.DropPrefix(binary.BigEndian.AppendUint64(slices.Clone(prefixRunBlock), id)); err != nil {
			return fmt.Errorf("state: deleting an unfinished run: %w", err)
		}
	}
	return nil
}

// Len is the number of fingerprints in all runs.
func (st *RunStore) Len() uint64 {
	var n uint64
	for _, r := range st.runs {
		n += r.n
	}
	return n
}

// Runs is the number of runs.
func (st *RunStore) Runs() int { return len(st.runs) }

// MaxLevel is the highest level of any run (0 if none).
func (st *RunStore) MaxLevel() int {
	l := 0
	for _, r := range st.runs {
		l = max(l, r.level)
	}
	return l
}

// RunWriter writes one run; fingerprints must come in strictly increasing
// order.
type RunWriter struct {
	st   *RunStore
	meta *runMeta
	buf  []FP
	wb   *badger.WriteBatch
	err  error
}

// NewRun starts a run of the states new at level.
func (st *RunStore) NewRun(level int) *RunWriter {
	w := &RunWriter{st: st, meta: &runMeta{id: st.nextID, level: level}, buf: make([]FP, 0, runBlockFPs)}
	st.nextID++
	return w
}

// Add appends fp, which must be greater than the previous one.
func (w *RunWriter) Add(fp FP) {
	if n := len(w.buf); n > 0 && !w.buf[n-1].Less(fp) && w.err == nil {
		w.err = fmt.Errorf("state: run fingerprints out of order: %v after %v", fp, w.buf[n-1])
	}
	w.buf = append(w.buf, fp)
	if len(w.buf) == runBlockFPs {
		w.flushBlock()
	}
}

func (w *RunWriter) flushBlock() {
	if len(w.buf) == 0 || w.err != nil {
		w.buf = w.buf[:0]
		return
	}
	m := w.meta
	if w.wb == nil {
		w.wb = w.st.db.NewWriteBatch()
	}
	val := appendEFBlock(nil, w.buf, w.st.loBytes)
	if err := w.wb.Set(runBlockKey(m.id, len(m.firsts)), val); err != nil {
		w.err = fmt.Errorf("state: writing a run: %w", err)
	}
	m.firsts = append(m.firsts, w.buf[0])
	m.counts = append(m.counts, uint32(len(w.buf)))
	m.n += uint64(len(w.buf))
	w.buf = w.buf[:0]
}

// Finish writes the last block and records the run; RunStore.Sync makes
// it durable. An empty run records nothing.
func (w *RunWriter) Finish() error {
	w.flushBlock()
	if w.wb != nil {
		if err := w.wb.Flush(); err != nil && w.err == nil {
			w.err = fmt.Errorf("state: writing a run: %w", err)
		}
		w.wb = nil
	}
	if w.err != nil || w.meta.n == 0 {
		return w.err
	}
	// Badger appends the metadata to its log after the blocks, so
	// whatever prefix of the log survives a crash holds the blocks of any
	// run whose metadata it holds. Sync makes runs durable.
	st := w.st
	err := st.db.Update(func(txn *badger.Txn) error {
		return txn.Set(runMetaKey(w.meta.id), w.meta.encode(st.bits))
	})
	if err != nil {
		return fmt.Errorf("state: recording a run: %w", err)
	}
	st.runs = append(st.runs, w.meta)
	return nil
}

// Sync makes every finished run durable.
func (st *RunStore) Sync() error {
	if err := st.db.Sync(); err != nil {
		return fmt.Errorf("state: syncing the run store: %w", err)
	}
	return nil
}

// Truncate deletes every run of a level above level, durably.
func (st *RunStore) Truncate(level int) error {
	var keep, drop []*runMeta
	for _, r := range st.runs {
		if r.level > level {
			drop = append(drop, r)
		} else {
			keep = append(keep, r)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	err := st.db.Update(func(txn *badger.Txn) error {
		for _, r := range drop {
			if err := txn.Delete(runMetaKey(r.id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = st.db.Sync()
	}
	if err != nil {
		return fmt.Errorf("state: truncating the run store: %w", err)
	}
	st.runs = keep
	for _, r := range drop {
		if err := st.db.DropPrefix(binary.BigEndian.AppendUint64(slices.Clone(prefixRunBlock), r.id)); err != nil {
			return fmt.Errorf("state: truncating the run store: %w", err)
		}
	}
	return nil
}

// SortedFPs is a sequence of fingerprints in increasing order.
type SortedFPs interface {
	Len() uint64
	At(i uint64) FP
}

// FPSlice is a sorted slice as SortedFPs.
type FPSlice []FP

func (s FPSlice) Len() uint64    { return uint64(len(s)) }
func (s FPSlice) At(i uint64) FP { return s[i] }

// FindExisting calls found(i) for every i such that cands.At(i) is in some
// run, in increasing i for each run (an index may be reported once per run
// holding it, though runs never share fingerprints when written by one
// search). Each run is merge-joined with cands; its blocks in whose range
// no candidate falls are not read.
func (st *RunStore) FindExisting(cands SortedFPs, found func(i uint64)) error {
	n := cands.Len()
	if n == 0 {
		return nil
	}
	for _, r := range st.runs {
		var j uint64
		for b := range r.firsts {
			for j < n && cands.At(j).Less(r.firsts[b]) {
				j++
			}
			if j == n {
				break
			}
			if b+1 < len(r.firsts) && !cands.At(j).Less(r.firsts[b+1]) {
				continue
			}
			fps, err := st.readBlock(r, b)
			if err != nil {
				return err
			}
			for _, fp := range fps {
				for j < n && cands.At(j).Less(fp) {
					j++
				}
				if j == n {
					break
				}
				if cands.At(j) == fp {
					found(j)
				}
			}
		}
	}
	return nil
}

func (st *RunStore) readBlock(r *runMeta, b int) ([]FP, error) {
	err := st.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(runBlockKey(r.id, b))
		if err != nil {
			return err
		}
		st.vbuf, err = item.ValueCopy(st.vbuf[:0])
		return err
	})
	if err == nil {
		st.scratch, err = decodeEFBlock(st.vbuf, st.loBytes, st.scratch)
	}
	if err == nil && len(st.scratch) != int(r.counts[b]) {
		err = errBadBlock
	}
	if err != nil {
		return nil, fmt.Errorf("state: reading block %d of run %d: %w", b, r.id, err)
	}
	return st.scratch, nil
}

// Each calls f for every fingerprint of every run (each run in order).
func (st *RunStore) Each(f func(FP)) error {
	for _, r := range st.runs {
		for b := range r.firsts {
			fps, err := st.readBlock(r, b)
			if err != nil {
				return err
			}
			for _, fp := range fps {
				f(fp)
			}
		}
	}
	return nil
}

// Close closes the database.
func (st *RunStore) Close() error {
	if st.db == nil {
		return nil
	}
	err := st.db.Close()
	st.db = nil
	if err != nil {
		return fmt.Errorf("state: closing the run store: %w", err)
	}
	return nil
}

// DirBytes is the disk space taken by the regular files directly in dir.
func DirBytes(dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += AllocatedSize(info)
		}
	}
	return n
}

// AllocatedSize is the disk space of a file: its size, or less if it is
// sparse (Badger preallocates value log and memtable files sparsely) and
// the platform reports allocated blocks (Unix: Stat_t.Blocks, in 512-byte
// units).
func AllocatedSize(info os.FileInfo) int64 {
	size := info.Size()
	if sys := reflect.ValueOf(info.Sys()); sys.Kind() == reflect.Pointer && !sys.IsNil() && sys.Elem().Kind() == reflect.Struct {
		if b := sys.Elem().FieldByName("Blocks"); b.IsValid() && b.CanInt() {
			return min(size, 512*b.Int())
		}
	}
	return size
}
