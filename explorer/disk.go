package explorer

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/bkcheck/bkcheck/state"
)

// The search on disk (Options.Dir) keeps everything that grows with the
// state space in the run directory, compactly, and holds memory to a
// budget:
//
//   - A BFS level is a record file (state.RecWriter): per state its
//     parent's rank in the previous level and its successor index (the
//     head) and its encoding (the payload, prefix-coded against the
//     previous state and zstd-compressed): about 2-3 bytes per state on
//     the shipped configuration, against 133 for plain records.
//   - The parent links of every level are the same heads without the
//     encodings (links-*.rec): a counterexample is rebuilt by walking them
//     back and replaying the successor indices (trace.go).
//   - The visited set is a state.RunStore: sorted, Elias-Fano coded runs
//     of fingerprints in Badger, one or a few per level.
//   - In memory, a state.Set of fingerprints. While it can hold every
//     visited fingerprint within the budget ("exact"), it answers alone,
//     as the in-memory search's table does. Once it cannot, it holds only
//     the fingerprints of the records written since the last flush
//     ("pending"): a record it does not know is written to the next level
//     as a candidate, and at the end of the level (or when the table is
//     full) the pending fingerprints are sorted and merge-joined with
//     every run (delayed duplicate detection). Candidates found there are
//     dropped from the level; the rest become a new run.
//
// States are identified by (depth, rank): the rank is a state's position
// in its level, which is canonical (the order of first discovery), so the
// record of state (d, r) names its parent as (d-1, parent rank).
//
// Several processes can share one search (shard.go); this file holds what
// one shard does, and the whole search when there is one.
type diskSearch struct {
	m      Model
	opt    Options
	fpr    state.Fingerprinter
	fpLen  int // bytes of a fingerprint in fps-*.bin and batches: bits/8
	root   string
	dir    string // this shard's directory (root when unsharded)
	shard  int
	shards int

	runs        *state.RunStore
	table       *state.Set // exact: every owned fingerprint; else pending
	exact       bool
	tableBudget int64
	sortBuf     []state.FP
	x           *expander
	window      *level

	// Sharded search only.
	sent *state.Set // fingerprints this shard sent during the level
	co   *coord

	noExpander *ModelError // the model's NewExpander panicked

	stats  Stats
	start  time.Time
	prior  time.Duration
	lastPr time.Time
	store  StoreStats
}

const (
	levelKind = "level"
	linksKind = "links"
	ranksKind = "ranks"
)

func (s *diskSearch) recPath(kind string, depth int) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s-%06d.rec", kind, depth))
}

func (s *diskSearch) fpsPath(depth int) string {
	return filepath.Join(s.dir, fmt.Sprintf("fps-%06d.bin", depth))
}

func runOnDisk(ctx context.Context, m Model, opt Options) (Result, error) {
	s, err := openDiskSearch(m, opt)
	if err != nil {
		return Result{}, err
	}
	res, err := s.run(ctx)
	if s.runs != nil {
		if cerr := s.runs.Close(); err == nil && cerr != nil {
			err = cerr
		}
		s.store.VisitedDiskBytes = state.DirBytes(filepath.Join(s.dir, "visited"))
	}
	res.Fingerprint = opt.Fingerprint
	s.store.TableBytes = s.table.Bytes()
	if s.stats.Distinct > 0 {
		s.store.TableBytesPerState = float64(s.store.TableBytes) / float64(s.stats.Distinct)
	}
	s.store.Exact = s.exact
	s.store.LinkDiskBytes = s.linkBytes()
	if s.co != nil {
		s.store.Exchange.BarrierWait = s.co.waited
	}
	res.Store = s.store
	return res, err
}

func openDiskSearch(m Model, opt Options) (*diskSearch, error) {
	fpr := state.NewFingerprinter(opt.Fingerprint)
	s := &diskSearch{
		m: m, opt: opt, fpr: fpr, fpLen: opt.Fingerprint / 8, root: opt.Dir, dir: opt.Dir,
		shard: opt.Shard, shards: opt.Shards,
		window: new(level), start: time.Now(),
	}
	s.lastPr = s.start
	if s.shards > 1 {
		s.dir = ShardDir(opt.Dir, opt.Shard)
		s.co = &coord{dir: filepath.Join(opt.Dir, "sync"), shard: opt.Shard, shards: opt.Shards, poll: opt.SyncPoll, waiting: opt.Waiting, every: opt.WaitingEvery, timeout: opt.ShardTimeout}
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("explorer: creating run directory: %w", err)
	}
	// Memory: Badger's memtables and record-file buffers first, a sort
	// buffer for writing runs from an exact table, the rest to the
	// fingerprint tables (a third of it to the table of sent fingerprints
	// when sharded).
	// A tenth of the budget stays free: the Go heap limit is the budget,
	// and a heap at its limit spends its time collecting.
	overhead := int64(64<<20) + opt.Memory/10 + int64(opt.Workers)*(4<<20)
	if s.shards > 1 {
		overhead += int64(s.shards) * (3 << 20)
	}
	sortBytes := min(opt.Memory/16, 256<<20)
	tables := max(opt.Memory-overhead-sortBytes, 8<<20)
	sortFPs := max(sortBytes/16, 1<<16)
	if opt.testing.tableBytes > 0 {
		tables, sortFPs = opt.testing.tableBytes, int64(opt.testing.sortFPs)
	}
	s.sortBuf = make([]state.FP, 0, sortFPs)
	s.tableBudget = tables
	shards := state.SetShards(opt.Workers)
	if s.shards > 1 {
		s.tableBudget = tables * 2 / 3
		s.sent = state.NewSet(shards, fpr.Wide(), tables/3)
	}
	s.table = state.NewSet(shards, fpr.Wide(), s.tableBudget)
	s.exact = true
	s.x, s.noExpander = newExpander(m, opt, fpr, s.table)
	return s, nil
}

// openRuns opens the visited store, once the run directory is known to
// hold this search (or none).
func (s *diskSearch) openRuns() error {
	runs, err := state.OpenRunStore(state.RunStoreOptions{Dir: filepath.Join(s.dir, "visited"), Bits: s.opt.Fingerprint})
	if err != nil {
		return err
	}
	s.runs = runs
	return nil
}

func (s *diskSearch) elapsed() time.Duration { return s.prior + time.Since(s.start) }

func (s *diskSearch) result(st Status, reason string) (Result, error) {
	s.stats.Elapsed = s.elapsed()
	return Result{Status: st, Stats: s.stats, Reason: reason}, nil
}

func (s *diskSearch) progress() {
	if s.opt.Progress == nil {
		return
	}
	s.lastPr = time.Now()
	st := s.stats
	st.Elapsed = s.elapsed()
	s.opt.Progress(st)
}

// owner is the shard that owns fingerprint fp: a hash of Hi independent
// of the bits that pick the table shard (the top bits) and the home slot.
func owner(fp state.FP, shards int) int {
	if shards == 1 {
		return 0
	}
	x := fp.Hi
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	hi, _ := bits.Mul64(x, uint64(shards))
	return int(hi)
}

// checkpoint records cp, completed with the current statistics.
func (s *diskSearch) checkpoint(cp *checkpoint) error {
	if s.runs != nil {
		if err := s.runs.Sync(); err != nil {
			return err
		}
	}
	cp.Format, cp.ModelID, cp.Fingerprint, cp.Shards = checkpointFormat, s.opt.ModelID, s.opt.Fingerprint, s.shards
	cp.Distinct, cp.Generated, cp.StatsDepth = s.stats.Distinct, s.stats.Generated, s.stats.Depth
	cp.ElapsedS = s.elapsed().Seconds()
	cp.PeakDisk, cp.Frontier, cp.FrontierN = s.store.PeakDiskBytes, s.store.FrontierBytes, s.store.FrontierStates
	return writeJSONFile(checkpointPath(s.dir), cp)
}

// sameModel reports whether a stored model identity is this run's.
func (s *diskSearch) sameModel(stored string) bool {
	if s.opt.SameModel != nil {
		return s.opt.SameModel(stored)
	}
	return stored == s.opt.ModelID
}

// begin establishes level depth to expand: a fresh run's initial states
// or a resumed run's checkpoint.
func (s *diskSearch) begin() (cp *checkpoint, done *Result, err error) {
	_, statErr := os.Stat(checkpointPath(s.dir))
	resume := s.opt.Resume || (s.shards > 1 && statErr == nil)
	if !resume && statErr == nil {
		return nil, nil, fmt.Errorf("%w: %s already holds a run; resume it or choose another directory", ErrRunExists, s.dir)
	}
	if !resume {
		if err := s.openRuns(); err != nil {
			return nil, nil, err
		}
		return s.initial()
	}
	cp, err = readCheckpoint(s.dir)
	if err != nil {
		return nil, nil, err
	}
	if !s.sameModel(cp.ModelID) {
		return nil, nil, fmt.Errorf("%w: the run in %s checks\n  %s\nbut this invocation asks for\n  %s", ErrResumeMismatch, s.dir, cp.ModelID, s.opt.ModelID)
	}
	if cp.Fingerprint != s.opt.Fingerprint {
		return nil, nil, fmt.Errorf("%w: the run in %s uses %d-bit fingerprints, this invocation asks for %d", ErrResumeMismatch, s.dir, cp.Fingerprint, s.opt.Fingerprint)
	}
	if cp.Shards != s.shards {
		return nil, nil, fmt.Errorf("%w: the run in %s has %d shards, this invocation asks for %d", ErrResumeMismatch, s.dir, cp.Shards, s.shards)
	}
	if err := s.openRuns(); err != nil {
		return nil, nil, err
	}
	s.stats = Stats{Distinct: cp.Distinct, Generated: cp.Generated, Depth: cp.StatsDepth, Queue: cp.LevelTotal}
	s.prior = time.Duration(cp.ElapsedS * float64(time.Second))
	s.store.PeakDiskBytes, s.store.FrontierBytes, s.store.FrontierStates = cp.PeakDisk, cp.Frontier, cp.FrontierN
	if cp.Done {
		r, err := s.finished(cp)
		r.AlreadyFinished = true
		return nil, &r, err
	}
	return cp, nil, nil
}

// restore brings the visited set back to the runs of levels 1..upTo and
// fills the table from them if they fit, exactly.
func (s *diskSearch) restore(upTo int) error {
	if err := s.runs.Truncate(upTo); err != nil {
		return err
	}
	s.table.Clear()
	slot := int64(8)
	if s.fpr.Wide() {
		slot = 16
	}
	s.exact = int64(s.runs.Len())*slot*100/60 <= s.tableBudget
	if !s.exact {
		return nil
	}
	return s.runs.Each(func(fp state.FP) { s.table.Add(fp) })
}

// initial writes level 1: the distinct initial states this shard owns, in
// the order the model emits them. Every shard computes all of them and
// ranks them by that order, so level 1 needs no exchange.
func (s *diskSearch) initial() (*checkpoint, *Result, error) {
	if s.shards > 1 {
		if err := s.co.join(s.opt); err != nil {
			return nil, nil, err
		}
	}
	if err := s.runs.Truncate(0); err != nil {
		return nil, nil, err
	}
	lw, err := s.createLevel(1, s.shards > 1)
	if err != nil {
		return nil, nil, err
	}
	var rank, own int64
	var fps []state.FP
	full, merr := initial(s.m, s.fpr, s.opt.MaxStates, &s.stats, func(i uint32, enc []byte, fp state.FP) {
		if owner(fp, s.shards) == s.shard {
			lw.add(uint64(rank), i, enc, fp)
			if s.shards > 1 {
				lw.rank(uint64(rank))
			}
			fps = append(fps, fp)
			own++
		}
		rank++
	})
	if rank > 0 {
		s.stats.Depth = 1
	}
	s.stats.Queue = rank
	if merr != nil {
		// Final, like a violation: recorded, with no state to trace.
		lw.abort()
		r, err := s.violation(badState{kind: kindError, err: merr})
		return nil, &r, err
	}
	if full {
		lw.abort()
		r, err := s.result(Unknown, maxStatesReason(s.opt.MaxStates))
		return nil, &r, err
	}
	if err := lw.finish(); err != nil {
		return nil, nil, err
	}
	state.SortFPs(fps)
	rw := s.runs.NewRun(1)
	for _, fp := range fps {
		rw.Add(fp)
		s.table.Add(fp)
	}
	if err := rw.Finish(); err != nil {
		return nil, nil, err
	}
	os.Remove(s.fpsPath(1))
	cp := &checkpoint{Depth: 1, LevelLen: own, LevelTotal: rank}
	return cp, nil, s.checkpoint(cp)
}

func (s *diskSearch) run(ctx context.Context) (Result, error) {
	if ctx.Err() != nil {
		return s.result(Unknown, "interrupted")
	}
	if s.noExpander != nil {
		// Nothing is touched: the directory stays as it was.
		res := errorResult(s.noExpander)
		res.Elapsed = s.elapsed()
		return res, nil
	}
	cp, done, err := s.begin()
	if err != nil || done != nil {
		if done == nil {
			done = &Result{}
		}
		return *done, err
	}
	s.progress()
	if s.shards > 1 {
		return s.runSharded(ctx, cp)
	}
	if err := s.restore(cp.Depth); err != nil {
		return Result{}, err
	}
	depth, n := cp.Depth, cp.LevelLen
	for n > 0 {
		out, err := s.expandLevel(ctx, depth, n)
		if err != nil {
			return Result{}, err
		}
		switch {
		case out.interrupted:
			return s.result(Unknown, "interrupted")
		case out.bad != nil:
			return s.violation(*out.bad)
		case out.cut:
			return s.result(Unknown, maxStatesReason(s.opt.MaxStates))
		case out.atBound:
			s.discardLevel(depth + 1)
			if err := s.runs.Truncate(depth); err != nil {
				return Result{}, err
			}
			s.stats.Queue = 0
			if out.count > 0 {
				return s.result(Unknown, fmt.Sprintf("max depth %d reached", s.opt.MaxDepth))
			}
			return s.finish()
		}
		s.stats.Queue = out.count
		s.stats.Depth = depth
		if out.count > 0 {
			s.stats.Depth = depth + 1
		}
		s.noteDisk()
		if err := s.checkpoint(&checkpoint{Depth: depth + 1, LevelLen: out.count, LevelTotal: out.count}); err != nil {
			return Result{}, err
		}
		os.Remove(s.recPath(levelKind, depth))
		depth, n = depth+1, out.count
		s.progress()
	}
	return s.finish()
}

// finish records a completed search and removes the files only a search
// in progress needs.
func (s *diskSearch) finish() (Result, error) {
	for _, pat := range []string{levelKind + "-*.rec", "fps-*.bin"} {
		matches, _ := filepath.Glob(filepath.Join(s.dir, pat))
		for _, p := range matches {
			os.Remove(p)
		}
	}
	if s.shards > 1 {
		matches, _ := filepath.Glob(filepath.Join(s.root, "exchange", "level-*", fmt.Sprintf("*-%03d.rec", s.shard)))
		for _, p := range matches {
			os.Remove(p)
			os.Remove(filepath.Dir(p)) // the last shard removes the directory
		}
	}
	s.stats.Queue = 0
	r, err := s.result(OK, "")
	if err == nil {
		err = s.checkpoint(&checkpoint{Done: true, Status: OK.String()})
	}
	return r, err
}

// noteDisk records the largest level file and the run directory's size.
func (s *diskSearch) noteDisk() {
	total := state.DirBytes(s.dir) + state.DirBytes(filepath.Join(s.dir, "visited"))
	s.store.PeakDiskBytes = max(s.store.PeakDiskBytes, total)
}

func (s *diskSearch) discardLevel(depth int) {
	for _, p := range []string{s.recPath(levelKind, depth), s.recPath(linksKind, depth), s.recPath(ranksKind, depth), s.fpsPath(depth)} {
		os.Remove(p)
	}
}

// badState is the first state of a level that violates something, or
// that the model failed on (kindError; depth 0: computing the initial
// states).
type badState struct {
	depth int
	rank  int64
	name  string
	kind  violationKind
	err   *ModelError
	snap  Stats
}

// levelOutcome is how expanding a level ended.
type levelOutcome struct {
	count       int64 // states of the next level
	interrupted bool
	bad         *badState
	cut         bool // MaxStates reached
	atBound     bool // MaxDepth reached (count: unvisited successors)
}

// levelWriter writes the level being built: the level file, its parent
// links and, until the level is settled, the fingerprints of its records.
type levelWriter struct {
	t, l, r *state.RecWriter
	fpf     *os.File
	fpw     *bufio.Writer
	fpPath  string
	n       int64
	head    []byte
	fpb     [16]byte
	bits    int // fingerprint width
	err     error
}

func (s *diskSearch) createLevel(depth int, withRanks bool) (*levelWriter, error) {
	lw := &levelWriter{bits: s.opt.Fingerprint, fpPath: s.fpsPath(depth)}
	var err error
	if lw.t, err = state.CreateFastRecWriter(s.recPath(levelKind, depth)); err != nil {
		return nil, err
	}
	if lw.l, err = state.CreateRecWriter(s.recPath(linksKind, depth)); err != nil {
		lw.t.Abort()
		return nil, err
	}
	if withRanks {
		if lw.r, err = state.CreateRecWriter(s.recPath(ranksKind, depth)); err != nil {
			lw.t.Abort()
			lw.l.Abort()
			return nil, err
		}
	}
	if lw.fpf, err = os.Create(lw.fpPath); err != nil {
		lw.abort()
		return nil, fmt.Errorf("explorer: %w", err)
	}
	lw.fpw = bufio.NewWriterSize(lw.fpf, 256<<10)
	return lw, nil
}

// add appends a record: a state, its parent's rank and its successor index.
func (lw *levelWriter) add(parent uint64, idx uint32, enc []byte, fp state.FP) {
	lw.head = binary.AppendUvarint(lw.head[:0], uint64(idx))
	lw.t.Append(parent, lw.head, enc)
	lw.l.Append(parent, lw.head, nil)
	if _, err := lw.fpw.Write(appendFP(lw.fpb[:0], fp, lw.bits)); err != nil && lw.err == nil {
		lw.err = fmt.Errorf("explorer: writing %s: %w", lw.fpPath, err)
	}
	lw.n++
}

// rank records the rank of the next record (level 1 of a sharded
// search): ranks files hold one record per state, keyed by its rank.
func (lw *levelWriter) rank(rank uint64) {
	lw.r.Append(rank, nil, nil)
}

// flushFPs makes the fingerprints written so far readable.
func (lw *levelWriter) flushFPs() error {
	if err := lw.fpw.Flush(); err != nil && lw.err == nil {
		lw.err = fmt.Errorf("explorer: writing %s: %w", lw.fpPath, err)
	}
	return lw.err
}

func (lw *levelWriter) finish() error {
	err := lw.flushFPs()
	if e := finishAll(lw.t, lw.l, lw.r); err == nil {
		err = e
	}
	if lw.fpf != nil {
		lw.fpf.Close()
	}
	return err
}

func (lw *levelWriter) abort() {
	for _, w := range []*state.RecWriter{lw.t, lw.l, lw.r} {
		if w != nil {
			w.Abort()
		}
	}
	if lw.fpf != nil {
		lw.fpf.Close()
		os.Remove(lw.fpPath)
	}
}

// finishAll finishes record writers (nil ones skipped) in parallel: each
// ends with an fsync.
func finishAll(ws ...*state.RecWriter) error {
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		if w != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = w.Finish()
			}()
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// readFPs calls f for the fingerprints of records [from, to) of the
// fingerprint file at path.
func readFPs(path string, fpLen int, from, to int64, f func(k int64, fp state.FP)) error {
	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("explorer: %w", err)
	}
	defer file.Close()
	br := bufio.NewReaderSize(io.NewSectionReader(file, from*int64(fpLen), (to-from)*int64(fpLen)), 1<<20)
	var b [16]byte
	for k := from; k < to; k++ {
		if _, err := io.ReadFull(br, b[:fpLen]); err != nil {
			return fmt.Errorf("explorer: reading %s: %w", path, err)
		}
		f(k, decodeFP(b[:], fpLen*8))
	}
	return nil
}

// appendFP appends a fingerprint of the given width in bits/8 bytes.
func appendFP(b []byte, fp state.FP, bits int) []byte {
	b = binary.LittleEndian.AppendUint64(b, fp.Hi)
	switch bits {
	case 96:
		b = binary.LittleEndian.AppendUint32(b, uint32(fp.Lo>>32))
	case 128:
		b = binary.LittleEndian.AppendUint64(b, fp.Lo)
	}
	return b
}

// decodeFP reads what appendFP wrote (b holds at least bits/8 bytes).
func decodeFP(b []byte, bits int) state.FP {
	fp := state.FP{Hi: binary.LittleEndian.Uint64(b)}
	switch bits {
	case 96:
		fp.Lo = uint64(binary.LittleEndian.Uint32(b[8:])) << 32
	case 128:
		fp.Lo = binary.LittleEndian.Uint64(b[8:])
	}
	return fp
}

// settler decides which records of a level being built are new, segment
// by segment: the records written since the last flush.
type settler struct {
	s        *diskSearch
	depth    int  // the level being built
	probe    bool // past the depth bound: only whether anything is new matters
	lw       *levelWriter
	segStart int64
	drops    []int64 // records found to be old, in increasing order
}

// flush settles the records [segStart, lw.n). With an exact table they
// are all new: their fingerprints become runs (sorted in chunks). Else
// the pending table is sorted and merge-joined with the runs: what is
// found there is dropped, the rest becomes a run, and the table is
// cleared. toPending switches an exact table to pending first.
func (st *settler) flush(toPending bool) error {
	s, lw := st.s, st.lw
	if err := lw.flushFPs(); err != nil {
		return err
	}
	if s.exact {
		if st.probe && !toPending {
			// Nothing is dropped, and the runs would be discarded.
			st.segStart = lw.n
			return nil
		}
		if err := st.runsFromFile(false); err != nil {
			return err
		}
		if toPending {
			s.exact = false
			parallelShards(s.opt.Workers, s.table.Shards(), s.table.ClearShard)
		}
		st.segStart = lw.n
		return nil
	}
	parallelShards(s.opt.Workers, s.table.Shards(), s.table.SortShard)
	sorted := s.table.Sorted()
	var old []uint64
	if err := s.runs.FindExisting(sorted, func(i uint64) { old = append(old, i) }); err != nil {
		return err
	}
	slices.Sort(old)
	old = slices.Compact(old)
	rw := s.runs.NewRun(st.depth)
	var oldFPs []state.FP
	for i, o := uint64(0), 0; i < sorted.Len(); i++ {
		if o < len(old) && old[o] == i {
			oldFPs = append(oldFPs, sorted.At(i))
			o++
			continue
		}
		rw.Add(sorted.At(i))
	}
	if err := rw.Finish(); err != nil {
		return err
	}
	parallelShards(s.opt.Workers, s.table.Shards(), s.table.ClearShard)
	if len(oldFPs) > 0 {
		oldSet := state.NewSet(1, s.fpr.Wide(), 0)
		for _, fp := range oldFPs {
			oldSet.Add(fp)
		}
		err := readFPs(lw.fpPath, s.fpLen, st.segStart, lw.n, func(k int64, fp state.FP) {
			if oldSet.Contains(fp) {
				st.drops = append(st.drops, k)
			}
		})
		if err != nil {
			return err
		}
	}
	st.segStart = lw.n
	return nil
}

// runsFromFile writes the fingerprints of records [segStart, lw.n) as
// sorted runs, as many as the sort buffer needs, and ends the segment.
// With check, they are first merge-joined with the runs and those found
// there are dropped (the table is not touched: it may hold more).
func (st *settler) runsFromFile(check bool) error {
	s := st.s
	if err := st.lw.flushFPs(); err != nil {
		return err
	}
	type rec struct {
		fp state.FP
		k  int64
	}
	var recs []rec
	buf := s.sortBuf[:0]
	write := func() error {
		if len(buf) == 0 {
			return nil
		}
		var old []uint64
		if check {
			slices.SortFunc(recs, func(a, b rec) int { return a.fp.Compare(b.fp) })
			for i, r := range recs {
				buf[i] = r.fp
			}
			if err := s.runs.FindExisting(state.FPSlice(buf), func(i uint64) { old = append(old, i) }); err != nil {
				return err
			}
			slices.Sort(old)
			old = slices.Compact(old)
			for _, i := range old {
				st.drops = append(st.drops, recs[i].k)
			}
			slices.Sort(st.drops)
		} else {
			state.SortFPsParallel(buf, s.opt.Workers)
		}
		rw := s.runs.NewRun(st.depth)
		for i, o := 0, 0; i < len(buf); i++ {
			if o < len(old) && old[o] == uint64(i) {
				o++
				continue
			}
			rw.Add(buf[i])
		}
		buf, recs = buf[:0], recs[:0]
		return rw.Finish()
	}
	var werr error
	err := readFPs(st.lw.fpPath, s.fpLen, st.segStart, st.lw.n, func(k int64, fp state.FP) {
		buf = append(buf, fp)
		if check {
			recs = append(recs, rec{fp, k})
		}
		if len(buf) == cap(s.sortBuf) && werr == nil {
			werr = write()
		}
	})
	if err == nil {
		err = werr
	}
	if err == nil {
		err = write()
	}
	st.segStart = st.lw.n
	return err
}

// tentative is the number of records not (yet) known to be dropped.
func (st *settler) tentative() int64 { return st.lw.n - int64(len(st.drops)) }

// commitEach commits the chunks of a batch into the table and calls
// place for each chunk, in order, once it is committed. If the table is
// full it is flushed (or, exact, switched to pending) first; if even then
// the whole batch does not fit, the chunks are committed one at a time,
// with flushes between them.
func (st *settler) commitEach(batch []chunkOut, place func(ci int) (stop bool, err error)) error {
	s := st.s
	fits := s.x.commit(batch, s.table)
	if !fits {
		if err := st.flush(true); err != nil {
			return err
		}
		fits = s.x.commit(batch, s.table)
	}
	for ci := range batch {
		if !fits && !s.x.commit(batch[ci:ci+1], s.table) {
			if err := st.flush(true); err != nil {
				return err
			}
			if !s.x.commit(batch[ci:ci+1], s.table) {
				return fmt.Errorf("explorer: the fingerprint table (%d bytes, %d shards) cannot hold the successors of one chunk of states (%d successors); give the search more memory", s.table.Bytes(), s.table.Shards(), len(batch[ci].cands))
			}
		}
		if stop, err := place(ci); stop || err != nil {
			return err
		}
	}
	return nil
}

// settle flushes the last segment and, if records were dropped, rewrites
// the level and its links without them; it returns the level's size.
func (st *settler) settle() (int64, error) {
	if err := st.flush(false); err != nil {
		return 0, err
	}
	lw := st.lw
	if err := lw.finish(); err != nil {
		return 0, err
	}
	n := lw.n - int64(len(st.drops))
	if len(st.drops) > 0 {
		if err := st.s.dropRecords(st.depth, st.drops); err != nil {
			return 0, err
		}
	}
	st.s.noteLevel(st.depth, n)
	return n, nil
}

// noteLevel records the size of level depth's file if it is the
// largest level so far: the frontier's bytes per state on disk.
func (s *diskSearch) noteLevel(depth int, n int64) {
	if fi, err := os.Stat(s.recPath(levelKind, depth)); err == nil && n > s.store.FrontierStates {
		s.store.FrontierBytes, s.store.FrontierStates = fi.Size(), n
	}
}

// dropRecords rewrites the level and links files of depth without the
// given records (increasing indices).
func (s *diskSearch) dropRecords(depth int, drops []int64) error {
	for _, kind := range []string{levelKind, linksKind} {
		path := s.recPath(kind, depth)
		r, err := state.OpenRecReader(path, true)
		if err != nil {
			return err
		}
		w, err := state.CreateRecWriter(path + ".tmp")
		if err != nil {
			r.Close()
			return err
		}
		var k, out int64
		d := 0
		for r.Next() {
			if d < len(drops) && drops[d] == k {
				d++
			} else {
				w.Append(r.Key(), r.Head(), r.Payload())
				out++
			}
			k++
		}
		err = r.Err()
		r.Close()
		if err != nil {
			w.Abort()
			return err
		}
		if err := w.Finish(); err != nil {
			return err
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			return fmt.Errorf("explorer: %w", err)
		}
	}
	syncDir(s.dir)
	return nil
}

// levelReader reads the level to expand in windows, with each state's
// rank: its index, or (sharded) the rank recorded in the ranks file.
type levelReader struct {
	t, r *state.RecReader
	n    int64
	read int64
}

func (s *diskSearch) openLevel(depth int, n int64) (*levelReader, error) {
	t, err := state.OpenRecReader(s.recPath(levelKind, depth), true)
	if err != nil {
		return nil, err
	}
	lr := &levelReader{t: t, n: n}
	if s.shards > 1 {
		if lr.r, err = state.OpenRecReader(s.recPath(ranksKind, depth), true); err != nil {
			t.Close()
			return nil, err
		}
	}
	return lr, nil
}

func (lr *levelReader) fill(w *level, max int) (int, error) {
	w.reset()
	k := 0
	for ; k < max && lr.read < lr.n; k++ {
		if !lr.t.Next() {
			return k, lr.short(lr.t)
		}
		rank := uint64(lr.read)
		if lr.r != nil {
			if !lr.r.Next() {
				return k, lr.short(lr.r)
			}
			rank = lr.r.Key()
		}
		w.add(lr.t.Payload(), rank)
		lr.read++
	}
	return k, nil
}

func (lr *levelReader) short(r *state.RecReader) error {
	if err := r.Err(); err != nil {
		return err
	}
	return fmt.Errorf("explorer: a level file ends after %d of %d states", lr.read, lr.n)
}

func (lr *levelReader) close() {
	lr.t.Close()
	if lr.r != nil {
		lr.r.Close()
	}
}

// expandLevel expands level depth (n states) of an unsharded search and
// builds level depth+1.
func (s *diskSearch) expandLevel(ctx context.Context, depth int, n int64) (levelOutcome, error) {
	var out levelOutcome
	cur, err := s.openLevel(depth, n)
	if err != nil {
		return out, err
	}
	defer cur.close()
	s.discardLevel(depth + 1)
	lw, err := s.createLevel(depth+1, false)
	if err != nil {
		return out, err
	}
	snapshot := s.stats
	base := s.stats.Distinct
	out.atBound = s.opt.MaxDepth > 0 && depth >= s.opt.MaxDepth
	st := &settler{s: s, depth: depth + 1, lw: lw, probe: out.atBound}
	chunkSize := s.x.chunkSize(int(min(n, 1<<30)))
	for lo := int64(0); lo < n; {
		if ctx.Err() != nil {
			s.stats.Queue = n - lo + st.tentative()
			lw.abort()
			out.interrupted = true
			return out, nil
		}
		k, err := cur.fill(s.window, s.x.batchStates(chunkSize))
		if err != nil {
			lw.abort()
			return out, err
		}
		batch := s.x.cut(k, chunkSize)
		if err := s.x.expand(ctx, s.window, batch, false); err != nil {
			lw.abort()
			if ctx.Err() != nil {
				s.stats.Queue = n - lo + st.tentative()
				out.interrupted = true
				return out, nil
			}
			return out, err
		}
		p := placer{
			state: func(i int, so *stateOut) bool {
				if bad, kind, ok := so.violation(s.opt.CheckDeadlock); ok {
					out.bad = &badState{depth: depth, rank: int64(s.window.ids[i]), name: bad, kind: kind, err: so.err, snap: snapshot}
					return true
				}
				s.stats.Generated += so.nSucc
				return false
			},
			add: func(i int, cd *candidate, enc []byte) (bool, error) {
				rank := s.window.ids[i]
				lw.add(rank, cd.idx, enc, cd.fp)
				if out.atBound {
					return false, nil
				}
				s.stats.Distinct = base + st.tentative()
				if s.opt.MaxStates == 0 || s.stats.Distinct < s.opt.MaxStates {
					return false, nil
				}
				if !s.exact {
					// Settle what is placed so far; the table also
					// holds the batch's next candidates.
					if err := st.runsFromFile(true); err != nil {
						return true, err
					}
					s.stats.Distinct = base + st.tentative()
				}
				if s.stats.Distinct >= s.opt.MaxStates {
					s.stats.Depth = depth + 1
					s.stats.Queue = n - int64(rank) - 1 + st.tentative()
					out.cut = true
					return true, nil
				}
				return false, nil
			},
		}
		err = st.commitEach(batch, func(ci int) (bool, error) { return batch[ci].place(p) })
		if err != nil || out.bad != nil || out.cut {
			lw.abort()
			return out, err
		}
		lo += int64(k)
		if s.opt.ProgressEvery > 0 && lo < n && time.Since(s.lastPr) >= s.opt.ProgressEvery {
			s.stats.Queue = n - lo + st.tentative()
			s.progress()
		}
	}
	if err := cur.t.Err(); err != nil {
		lw.abort()
		return out, err
	}
	count, err := st.settle()
	if err != nil {
		return out, err
	}
	out.count = count
	if !out.atBound {
		s.stats.Distinct = base + count
	}
	os.Remove(s.fpsPath(depth + 1))
	return out, nil
}

// violation ends the search at a bad state, rebuilding its trace from the
// parent links, and records the verdict in the checkpoint.
func (s *diskSearch) violation(b badState) (Result, error) {
	trace, err := s.traceTo(b.depth, b.rank)
	if err != nil {
		return Result{}, err
	}
	b.snap.Elapsed = s.elapsed()
	s.stats = b.snap
	status := Violation
	if b.kind == kindError {
		status = Error
	}
	err = s.checkpoint(&checkpoint{Done: true, Status: status.String(), Invariant: b.name, LevelTotal: b.snap.Queue,
		Deadlock: b.kind == kindDeadlock, Terminal: b.kind == kindTerminal, BadDepth: b.depth, BadRank: b.rank, Error: b.err})
	if err != nil {
		return Result{}, err
	}
	return violationResult(b.snap, b.name, b.kind, b.err, trace), nil
}

// finished rebuilds the result of a run that had already ended.
func (s *diskSearch) finished(cp *checkpoint) (Result, error) {
	switch cp.Status {
	case OK.String():
		s.stats.Queue = 0
		return s.result(OK, "")
	case Violation.String(), Error.String():
		kind := kindInvariant
		switch {
		case cp.Status == Error.String():
			kind = kindError
			if cp.Error == nil {
				return Result{}, fmt.Errorf("explorer: checkpoint %s has status error but no error", checkpointPath(s.dir))
			}
		case cp.Deadlock:
			kind = kindDeadlock
		case cp.Terminal:
			kind = kindTerminal
		}
		trace, err := s.traceTo(cp.BadDepth, cp.BadRank)
		if err != nil {
			return Result{}, err
		}
		s.stats.Elapsed = s.elapsed()
		return violationResult(s.stats, cp.Invariant, kind, cp.Error, trace), nil
	}
	return Result{}, fmt.Errorf("explorer: checkpoint has unknown status %q", cp.Status)
}

// traceTo rebuilds the path to state (depth, rank) from the parent links
// of every shard and replays it; depth 0 (no state: the model failed
// computing the initial states) has no trace.
func (s *diskSearch) traceTo(depth int, rank int64) ([]Step, error) {
	if depth == 0 {
		return nil, nil
	}
	path := make([]uint32, 0, depth)
	for d := depth; d >= 1; d-- {
		parent, idx, err := s.link(d, rank)
		if err != nil {
			return nil, err
		}
		path = append(path, idx)
		rank = int64(parent)
	}
	return replay(s.m, path)
}

// ShardDir is where shard i (0-based) of a sharded search in dir keeps
// its own files; the run's record and the exchange between shards stay in
// dir.
func ShardDir(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("shard-%03d", i)) }

// shardDir is the directory of shard i.
func (s *diskSearch) shardDir(i int) string {
	if s.shards == 1 {
		return s.root
	}
	return ShardDir(s.root, i)
}

// link returns the parent rank and successor index of state (depth, rank).
func (s *diskSearch) link(depth int, rank int64) (uint64, uint32, error) {
	for i := range s.shards {
		dir := s.shardDir(i)
		k := rank
		if s.shards > 1 {
			var ok bool
			var err error
			if k, ok, err = findRank(filepath.Join(dir, fmt.Sprintf("%s-%06d.rec", ranksKind, depth)), rank); err != nil {
				return 0, 0, err
			} else if !ok {
				continue
			}
		}
		return recordHead(filepath.Join(dir, fmt.Sprintf("%s-%06d.rec", linksKind, depth)), k)
	}
	return 0, 0, fmt.Errorf("explorer: no shard holds state %d of level %d", rank, depth)
}

// findRank returns the index of the record of the given rank in a ranks
// file, if the file has one.
func findRank(path string, rank int64) (int64, bool, error) {
	r, err := state.OpenRecReader(path, false)
	if err != nil {
		return 0, false, err
	}
	defer r.Close()
	if err := r.Seek(uint64(rank)); err != nil {
		return 0, false, err
	}
	for r.Next() {
		if got := int64(r.Key()); got == rank {
			return r.Index(), true, nil
		} else if got > rank {
			break
		}
	}
	return 0, false, r.Err()
}

// recordHead returns the parent rank (the key) and successor index (the
// head) of record k of a links file.
func recordHead(path string, k int64) (uint64, uint32, error) {
	r, err := state.OpenRecReader(path, false)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	if err := r.SeekIndex(k); err != nil {
		return 0, 0, err
	}
	for r.Next() {
		if r.Index() == k {
			idx, n := binary.Uvarint(r.Head())
			if n <= 0 {
				return 0, 0, fmt.Errorf("explorer: %s: corrupt record %d", path, k)
			}
			return r.Key(), uint32(idx), nil
		}
	}
	if err := r.Err(); err != nil {
		return 0, 0, err
	}
	return 0, 0, fmt.Errorf("explorer: %s has no record %d", path, k)
}

// linkBytes is the disk space of this shard's links and ranks files.
func (s *diskSearch) linkBytes() int64 {
	var n int64
	for _, pat := range []string{linksKind + "-*.rec", ranksKind + "-*.rec"} {
		matches, _ := filepath.Glob(filepath.Join(s.dir, pat))
		for _, p := range matches {
			if fi, err := os.Stat(p); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}
