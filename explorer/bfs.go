package explorer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bkcheck/bkcheck/state"
)

// Run explores the state space of m breadth-first and returns the verdict.
//
// The search is level-synchronous: the states of one depth are expanded in
// parallel, their successors committed to the visited set in canonical
// order (state order within the level, then the order in which the model
// emitted them; batch.go). Because only the commit decides which states
// are new and who their parent is, the result — counts, depth, verdict and
// trace — is the same for any number of workers, in memory or on disk
// (Options.Dir), and for any number of shards.
//
// How the figures read when the search stops early, chosen so that they do
// not depend on Workers:
//   - Violation found while expanding level d (depth d): Distinct, Generated
//     and Depth are those from before level d was expanded (all of level d
//     known, none of level d+1), Queue the size of level d.
//   - MaxStates N: the search stops at the very successor that makes
//     Distinct reach N; Generated counts up to that successor; Depth is the
//     depth of the deepest state found (d+1 once level d+1 has a state).
//   - MaxDepth D: level D is expanded (invariants checked, successors
//     counted in Generated) but its successors are only probed; Unknown if
//     any is unvisited, else the search is complete and OK.
//   - Cancellation: whatever was committed, Unknown "interrupted".
//   - The model fails (panics) on a state of level d: as a violation found
//     there, with the verdict Error (modelerror.go); in Init or
//     NewExpander: Error with all figures 0 and no trace.
//
// Run returns an error only for invalid options, a misbehaving model (a
// state it cannot decode, a trace it cannot replay) or, on disk, an I/O
// error. A model that panics is not an error but the Error verdict.
// Cancelling ctx is not an error: the result is Unknown with Reason
// "interrupted".
func Run(ctx context.Context, m Model, opt Options) (Result, error) {
	if m == nil {
		return Result{}, errors.New("explorer: nil model")
	}
	if opt.Dir != "" && opt.Fingerprint == 0 {
		// Not given: a run being continued keeps its width.
		dir := opt.Dir
		if opt.Shards > 1 {
			dir = ShardDir(opt.Dir, opt.Shard)
		}
		if cp, err := readCheckpoint(dir); err == nil {
			opt.Fingerprint = cp.Fingerprint
		}
	}
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return Result{}, err
	}
	if opt.Dir != "" {
		return runOnDisk(ctx, m, opt)
	}
	return runInMemory(ctx, m, opt)
}

// memSearch is the search in memory: an exact fingerprint table, BFS
// levels as arenas, parent links in a LinkLog.
type memSearch struct {
	m      Model
	opt    Options
	fpr    state.Fingerprinter
	table  *state.Set
	links  *state.LinkLog
	x      *expander
	window *level
	pool   []*memLevel
	stats  Stats
	start  time.Time
	lastPr time.Time
}

// memTableStates is how many fingerprints the table of a search in
// memory has room for from the start: 2^18, a table of 4 MiB (8 MiB with
// wide fingerprints). A table that starts small is rehashed at each
// doubling, which was 3% of a search of 285,773 states; a search that
// stays smaller than this loses nothing that matters.
const memTableStates = 1 << 18

// memTableShards is how many shards the table of a search in memory with
// the given number of workers has: one for a pipeline (pipeline.go),
// which inserts one chunk at a time, in chunk order; shards are for the
// parallel commit of batches.
func memTableShards(workers int) int {
	if workers > maxPipelineWorkers {
		return state.SetShards(workers)
	}
	return 1
}

func runInMemory(ctx context.Context, m Model, opt Options) (Result, error) {
	fpr := state.NewFingerprinter(opt.Fingerprint)
	s := &memSearch{
		m: m, opt: opt, fpr: fpr,
		table:  state.NewSet(memTableShards(opt.Workers), fpr.Wide(), 0),
		window: new(level),
		start:  time.Now(),
	}
	s.table.Expect(memTableStates)
	s.lastPr = s.start
	if opt.TempDir != "" {
		l, err := state.NewFileLinkLog(opt.TempDir)
		if err != nil {
			return Result{}, err
		}
		s.links = l
	} else {
		s.links = state.NewLinkLog()
	}
	defer s.links.Close()
	var res Result
	var err error
	if x, merr := newExpander(m, opt, fpr, s.table); merr != nil {
		res = errorResult(merr)
	} else {
		s.x = x
		for _, w := range x.workers {
			w.inline = len(x.workers) <= maxPipelineWorkers
		}
		res, err = s.run(ctx)
	}
	if err == nil {
		err = s.links.Err()
	}
	res.Fingerprint = opt.Fingerprint
	res.Store = StoreStats{TableBytes: s.table.Bytes(), Exact: true}
	if n := s.links.Len(); n > 0 {
		res.Store.TableBytesPerState = float64(s.table.Bytes()) / float64(n)
	}
	return res, err
}

func (s *memSearch) result(st Status, reason string) (Result, error) {
	s.stats.Elapsed = time.Since(s.start)
	return Result{Status: st, Stats: s.stats, Reason: reason}, nil
}

func (s *memSearch) maxStatesReached() bool {
	return s.opt.MaxStates > 0 && s.stats.Distinct >= s.opt.MaxStates
}

func maxStatesReason(n int64) string { return fmt.Sprintf("max states %d reached", n) }

func (s *memSearch) progress() {
	if s.opt.Progress == nil {
		return
	}
	s.lastPr = time.Now()
	st := s.stats
	st.Elapsed = time.Since(s.start)
	s.opt.Progress(st)
}

// add records a new state: its fingerprint, its parent link and its
// place in next.
func (s *memSearch) add(next *memLevel, enc []byte, parent uint64, idx uint32) {
	seq := s.links.Len()
	s.links.Append(parent, idx)
	next.l.add(enc, seq)
}

func (s *memSearch) run(ctx context.Context) (Result, error) {
	if ctx.Err() != nil {
		return s.result(Unknown, "interrupted")
	}
	cur := newMemLevel(&s.pool)
	full, merr := initial(s.m, s.fpr, s.opt.MaxStates, &s.stats, func(i uint32, enc []byte, fp state.FP) {
		s.table.Add(fp)
		s.add(cur, enc, state.NoParent, i)
	})
	if merr != nil {
		res := errorResult(merr)
		res.Elapsed = time.Since(s.start)
		return res, nil
	}
	if cur.len() > 0 {
		s.stats.Depth = 1
	}
	s.stats.Queue = int64(cur.len())
	if full {
		return s.result(Unknown, maxStatesReason(s.opt.MaxStates))
	}
	s.progress()

	for depth := 1; cur.len() > 0; depth++ {
		next := newMemLevel(&s.pool)
		atBound := s.opt.MaxDepth > 0 && depth >= s.opt.MaxDepth
		lv, err := s.expandLevel(ctx, cur, next, depth, atBound)
		switch {
		case err != nil:
			return Result{}, err
		case lv.stopped != nil:
			return *lv.stopped, lv.stopErr
		case lv.interrupted:
			return s.result(Unknown, "interrupted")
		}
		if atBound {
			s.stats.Queue = 0
			if lv.sawNew {
				return s.result(Unknown, fmt.Sprintf("max depth %d reached", s.opt.MaxDepth))
			}
			break
		}
		cur.release()
		cur = next
		s.stats.Queue = int64(cur.len())
		s.progress()
	}
	s.stats.Queue = 0
	return s.result(OK, "")
}

// violation reports what the expanded state so violates, if anything
// (ok): an invariant, a terminal property, or deadlock; or that the model
// failed on it (kindError, so.err says how).
func (so *stateOut) violation(checkDeadlock bool) (name string, kind violationKind, ok bool) {
	switch {
	case so.err != nil:
		return "", kindError, true
	case so.bad != "":
		return so.bad, kindInvariant, true
	case so.badTerm != "":
		return so.badTerm, kindTerminal, true
	case so.nSucc == 0 && checkDeadlock && !so.outside:
		return "Deadlock", kindDeadlock, true
	}
	return "", 0, false
}

type violationKind int

const (
	kindInvariant violationKind = iota
	kindDeadlock
	kindTerminal
	kindError // the model failed: the Error verdict
)

func (s *memSearch) violation(snap Stats, seq uint64, name string, kind violationKind, merr *ModelError) (Result, error) {
	var path []uint32
	for seq != state.NoParent {
		parent, idx, err := s.links.Get(seq)
		if err != nil {
			return Result{}, err
		}
		path = append(path, idx)
		seq = parent
	}
	trace, err := replay(s.m, path)
	if err != nil {
		return Result{}, err
	}
	snap.Elapsed = time.Since(s.start)
	s.stats = snap
	return violationResult(snap, name, kind, merr, trace), nil
}

// violationResult is the verdict on a bad state: Violation, or Error
// (kindError, merr says how the model failed).
func violationResult(snap Stats, name string, kind violationKind, merr *ModelError, trace []Step) Result {
	res := Result{
		Status: Violation,
		Stats:  snap,
		Violation: &ViolationInfo{Invariant: name, Deadlock: kind == kindDeadlock,
			Terminal: kind == kindTerminal, Trace: trace, Error: merr},
	}
	if kind == kindError {
		res.Status, res.Reason = Error, merr.Error()
	}
	return res
}
