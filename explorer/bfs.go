package explorer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/bkcheck/bkcheck/state"
)

// Tuning of the parallel expansion. A level is cut into chunks of at most
// maxChunkStates states; workers take chunks from a shared counter (so a
// slow chunk does not idle the others) and a batch of chunksPerWorker
// chunks per worker is expanded before it is committed. Committing per batch
// rather than per level bounds the memory held by uncommitted successors and
// lets later batches skip copying states that earlier ones already found.
const (
	maxChunkStates  = 512
	chunksPerWorker = 8
	initialVisited  = 1 << 16
)

// Run explores the state space of m breadth-first and returns the verdict.
//
// The search is level-synchronous: the states of one depth are expanded in
// parallel, then their successors are committed to the visited set by one
// goroutine in canonical order (state order within the level, then the
// order in which the model emitted them). Because only the commit decides
// which states are new and who their parent is, the result — counts, depth,
// verdict and trace — is the same for any number of workers.
//
// How the figures read when the search stops early, chosen so that they do
// not depend on Workers:
//   - Violation found while expanding level d (depth d): Distinct, Generated
//     and Depth are those from before level d was expanded (all of level d
//     known, none of level d+1), Queue the size of level d.
//   - MaxStates N: the commit stops at the very successor that makes
//     Distinct reach N; Generated counts up to that successor; Depth is the
//     depth of the deepest state found (d+1 once level d+1 has a state).
//   - MaxDepth D: level D is expanded (invariants checked, successors
//     counted in Generated) but its successors are only probed; Unknown if
//     any is unvisited, else the search is complete and OK.
//   - Cancellation: whatever was committed, Unknown "interrupted".
//
// Run returns an error only for invalid options or a misbehaving model (a
// state it cannot decode, a trace it cannot replay). Cancelling ctx is not
// an error: the result is Unknown with Reason "interrupted".
func Run(ctx context.Context, m Model, opt Options) (Result, error) {
	if m == nil {
		return Result{}, errors.New("explorer: nil model")
	}
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return Result{}, err
	}
	s := &search{
		m:      m,
		opt:    opt,
		start:  time.Now(),
		window: new(level),
		chunks: make([]chunkOut, opt.Workers*chunksPerWorker),
	}
	switch {
	case opt.Visited != nil:
		s.visited = opt.Visited
	default:
		s.visited = state.NewMemVisited(initialVisited)
		defer s.visited.Close()
	}
	if opt.Dir != "" {
		d, ok := s.visited.(Durable)
		if !ok {
			return Result{}, errors.New("explorer: a run directory needs a durable visited store (Flush, Truncate)")
		}
		s.durable = d
		if !opt.Resume {
			if _, err := os.Stat(checkpointPath(opt.Dir)); err == nil {
				return Result{}, fmt.Errorf("%w: %s already holds a run; resume it or choose another directory", ErrRunExists, opt.Dir)
			}
		}
	}
	s.lastProgress = s.start
	s.workers = make([]*worker, opt.Workers)
	for i := range s.workers {
		w := &worker{exp: m.NewExpander(), visited: s.visited, deadlock: opt.CheckDeadlock}
		w.emit = w.onSuccessor
		s.workers[i] = w
	}
	return s.run(ctx)
}

// level is one BFS frontier: encodings packed into one arena plus, for each
// state, where it starts and its sequence number in the visited store.
// Levels are reused (reset, not reallocated) from one depth to the next.
type level struct {
	arena []byte
	offs  []int
	seqs  []uint64
}

func (l *level) reset() {
	l.arena, l.offs, l.seqs = l.arena[:0], l.offs[:0], l.seqs[:0]
}

func (l *level) len() int { return len(l.offs) }

func (l *level) add(enc []byte, seq uint64) {
	l.offs = append(l.offs, len(l.arena))
	l.arena = append(l.arena, enc...)
	l.seqs = append(l.seqs, seq)
}

func (l *level) state(i int) []byte {
	end := len(l.arena)
	if i+1 < len(l.offs) {
		end = l.offs[i+1]
	}
	return l.arena[l.offs[i]:end:end]
}

// candidate is a successor that was not in the visited set when its chunk
// was expanded; its encoding is arena[off:end] of the chunk.
type candidate struct {
	fp       uint64
	action   Action
	off, end int
}

// stateOut is what expanding one state of a chunk produced.
type stateOut struct {
	bad     string // violated invariant, "" if none
	badTerm string // violated terminal property, "" if none
	nSucc   int64  // successors emitted, duplicates included
	candEnd int    // this state's candidates end at chunkOut.cands[candEnd]
	hasNew  bool   // some successor was unvisited (probe mode only)
}

// chunkOut is a slot holding the expansion of level states [lo, hi). Slots
// and their buffers are reused across batches and levels, which is what
// keeps the hot path free of allocation once they have grown.
type chunkOut struct {
	lo, hi int
	states []stateOut
	cands  []candidate
	arena  []byte
}

// worker expands chunks with its own Expander.
type worker struct {
	exp      Expander
	visited  state.Visited // read only (Contains) while workers run
	deadlock bool
	emit     func(Action, []byte, []byte) // w.onSuccessor, bound once to avoid a closure per state

	out    *chunkOut
	probe  bool // at the depth bound: only learn whether a successor is new
	nSucc  int64
	hasNew bool
}

// keyOf is the bytes that identify a state: its key, or its encoding.
func keyOf(enc, key []byte) []byte {
	if key != nil {
		return key
	}
	return enc
}

func (w *worker) onSuccessor(a Action, enc, key []byte) {
	w.nSucc++
	fp := state.Fingerprint(keyOf(enc, key))
	// Safe without locking: nothing inserts while workers run. A state found
	// here is visited for good; one not found may still be found by an
	// earlier state of the batch, which the commit settles.
	if w.visited.Contains(fp) {
		return
	}
	if w.probe {
		w.hasNew = true
		return
	}
	out := w.out
	off := len(out.arena)
	out.arena = append(out.arena, enc...)
	out.cands = append(out.cands, candidate{fp: fp, action: a, off: off, end: len(out.arena)})
}

// expandChunk fills out for the states out.lo..out.hi of cur. It stops
// after the first state that violates: the commit stops there too.
func (w *worker) expandChunk(cur *level, out *chunkOut, probe bool) error {
	out.states, out.cands, out.arena = out.states[:0], out.cands[:0], out.arena[:0]
	w.out, w.probe = out, probe
	for i := out.lo; i < out.hi; i++ {
		if err := w.exp.Load(cur.state(i)); err != nil {
			return fmt.Errorf("explorer: model cannot load a state it produced: %w", err)
		}
		var so stateOut
		if so.bad = w.exp.Check(); so.bad == "" {
			w.nSucc, w.hasNew = 0, false
			w.exp.Successors(w.emit)
			so.nSucc, so.hasNew = w.nSucc, w.hasNew
			if so.nSucc == 0 {
				so.badTerm = w.exp.CheckTerminal()
			}
		}
		so.candEnd = len(out.cands)
		out.states = append(out.states, so)
		if so.bad != "" || so.badTerm != "" || (w.deadlock && so.nSucc == 0) {
			break
		}
	}
	w.out = nil
	return nil
}

type search struct {
	m            Model
	opt          Options
	visited      state.Visited
	durable      Durable // visited, when the run keeps a directory
	workers      []*worker
	window       *level // the states of the current batch, read from the level
	levelPool    []*memLevel
	chunks       []chunkOut
	stats        Stats
	start        time.Time
	priorElapsed time.Duration // time spent by earlier sessions of a resumed run
	lastProgress time.Time
}

func (s *search) elapsed() time.Duration { return s.priorElapsed + time.Since(s.start) }

func (s *search) result(st Status, reason string) (Result, error) {
	s.stats.Elapsed = s.elapsed()
	return Result{Status: st, Stats: s.stats, Reason: reason}, nil
}

func (s *search) maxStatesReached() bool {
	return s.opt.MaxStates > 0 && s.stats.Distinct >= s.opt.MaxStates
}

func (s *search) maxStatesReason() string {
	return fmt.Sprintf("max states %d reached", s.opt.MaxStates)
}

func (s *search) progress() {
	if s.opt.Progress == nil {
		return
	}
	now := time.Now()
	s.lastProgress = now
	st := s.stats
	st.Elapsed = s.elapsed()
	s.opt.Progress(st)
}

// newLevel starts the level of the given depth: a file in the run
// directory, or memory.
func (s *search) newLevel(depth int) (levelWriter, error) {
	if s.opt.Dir == "" {
		return newMemLevel(&s.levelPool), nil
	}
	return createFileLevel(levelPath(s.opt.Dir, depth))
}

// begin produces the first level to expand: the initial states of a fresh
// run, or the level saved by the last checkpoint of a resumed one.
func (s *search) begin() (cur levelReader, depth int, done *Result, err error) {
	if s.opt.Resume {
		cp, err := readCheckpoint(s.opt.Dir)
		if err != nil {
			return nil, 0, nil, err
		}
		same := cp.ModelID == s.opt.ModelID
		if s.opt.SameModel != nil {
			same = s.opt.SameModel(cp.ModelID)
		}
		if !same {
			return nil, 0, nil, fmt.Errorf("%w: the run in %s checks\n  %s\nbut this invocation asks for\n  %s", ErrResumeMismatch, s.opt.Dir, cp.ModelID, s.opt.ModelID)
		}
		s.stats = Stats{Distinct: cp.Distinct, Generated: cp.Generated, Depth: cp.StatsDepth, Queue: int64(cp.LevelLen)}
		s.priorElapsed = time.Duration(cp.ElapsedS * float64(time.Second))
		if cp.Done {
			r, err := s.finished(cp)
			return nil, 0, &r, err
		}
		if err := s.durable.Truncate(uint64(cp.Distinct)); err != nil {
			return nil, 0, nil, fmt.Errorf("explorer: rolling the visited store back to the checkpoint: %w", err)
		}
		os.Remove(levelPath(s.opt.Dir, cp.Depth+1)) // partial next level of the interrupted session
		r, err := openFileLevel(levelPath(s.opt.Dir, cp.Depth), cp.LevelLen)
		return r, cp.Depth, nil, err
	}
	w, err := s.newLevel(1)
	if err != nil {
		return nil, 0, nil, err
	}
	full := false
	s.m.Init(func(enc, key []byte) {
		if full || err != nil {
			return
		}
		s.stats.Generated++
		if seq, added := s.visited.Insert(state.Fingerprint(keyOf(enc, key)), state.NoParent); added {
			err = w.add(enc, seq)
			s.stats.Distinct++
			full = s.maxStatesReached()
		}
	})
	if err != nil {
		return nil, 0, nil, err
	}
	if w.len() > 0 {
		s.stats.Depth = 1
	}
	s.stats.Queue = int64(w.len())
	if full {
		w.discard()
		r, err := s.result(Unknown, s.maxStatesReason())
		return nil, 0, &r, err
	}
	cur, err = w.finish()
	if err == nil {
		err = s.checkpoint(&checkpoint{Depth: 1, LevelLen: cur.len()})
	}
	return cur, 1, nil, err
}

func (s *search) run(ctx context.Context) (Result, error) {
	if ctx.Err() != nil {
		return s.result(Unknown, "interrupted")
	}
	cur, depth, done, err := s.begin()
	if err != nil || done != nil {
		if done == nil {
			done = &Result{}
		}
		return *done, err
	}
	s.progress()

	for ; cur.len() > 0; depth++ {
		n := cur.len()
		next, err := s.newLevel(depth + 1)
		if err != nil {
			return Result{}, err
		}
		// A violation in this level is reported with the figures from
		// before its expansion, so they do not depend on how far the
		// commit got (which depends on batch size, i.e. on Workers).
		snapshot := s.stats
		atBound := s.opt.MaxDepth > 0 && depth >= s.opt.MaxDepth
		sawNew := false

		workers := len(s.workers)
		chunkSize := min(max(n/(workers*chunksPerWorker), 1), maxChunkStates)
		stop := func() { next.discard(); cur.close(false) }
		for lo := 0; lo < n; {
			if ctx.Err() != nil {
				s.stats.Queue = int64(n-lo) + int64(next.len())
				stop()
				return s.result(Unknown, "interrupted")
			}
			k, err := cur.fill(s.window, cap(s.chunks)*chunkSize)
			if err != nil {
				stop()
				return Result{}, err
			}
			batch := s.chunks[:0]
			for b := 0; b < k; {
				c := &s.chunks[len(batch)]
				c.lo, c.hi = b, min(b+chunkSize, k)
				b = c.hi
				batch = batch[:len(batch)+1]
			}
			if err := s.expand(ctx, batch, atBound); err != nil {
				stop()
				if ctx.Err() != nil {
					s.stats.Queue = int64(n-lo) + int64(next.len())
					return s.result(Unknown, "interrupted")
				}
				return Result{}, err
			}
			for ci := range batch {
				c := &batch[ci]
				candStart := 0
				for j := range c.states {
					so := &c.states[j]
					i := c.lo + j
					if so.bad != "" {
						stop()
						return s.violation(snapshot, s.window.seqs[i], so.bad, kindInvariant)
					}
					if so.badTerm != "" {
						stop()
						return s.violation(snapshot, s.window.seqs[i], so.badTerm, kindTerminal)
					}
					if so.nSucc == 0 && s.opt.CheckDeadlock {
						stop()
						return s.violation(snapshot, s.window.seqs[i], "Deadlock", kindDeadlock)
					}
					s.stats.Generated += so.nSucc
					if atBound {
						sawNew = sawNew || so.hasNew
						continue
					}
					parent := s.window.seqs[i]
					for _, cd := range c.cands[candStart:so.candEnd] {
						seq, added := s.visited.Insert(cd.fp, parent)
						if !added {
							continue
						}
						if err := next.add(c.arena[cd.off:cd.end], seq); err != nil {
							stop()
							return Result{}, err
						}
						s.stats.Distinct++
						s.stats.Depth = depth + 1
						if s.maxStatesReached() {
							s.stats.Queue = int64(n-lo-i-1) + int64(next.len())
							stop()
							return s.result(Unknown, s.maxStatesReason())
						}
					}
					candStart = so.candEnd
				}
			}
			lo += k
			if s.opt.ProgressEvery > 0 && lo < n && time.Since(s.lastProgress) >= s.opt.ProgressEvery {
				s.stats.Queue = int64(n-lo) + int64(next.len())
				s.progress()
			}
		}
		if atBound {
			s.stats.Queue = 0
			stop()
			if sawNew {
				return s.result(Unknown, fmt.Sprintf("max depth %d reached", s.opt.MaxDepth))
			}
			break
		}
		nr, err := next.finish()
		if err != nil {
			return Result{}, err
		}
		s.stats.Queue = int64(nr.len())
		if err := s.checkpoint(&checkpoint{Depth: depth + 1, LevelLen: nr.len()}); err != nil {
			return Result{}, err
		}
		cur.close(true)
		cur = nr
		s.progress()
	}
	cur.close(true)
	s.stats.Queue = 0
	r, err := s.result(OK, "")
	if err == nil {
		err = s.checkpoint(&checkpoint{Depth: depth, Done: true, Status: OK.String()})
	}
	return r, err
}

// expand runs the chunks of one batch on the workers.
func (s *search) expand(ctx context.Context, batch []chunkOut, probe bool) error {
	cur := s.window
	if len(s.workers) == 1 || len(batch) == 1 {
		w := s.workers[0]
		for i := range batch {
			if i > 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			if err := w.expandChunk(cur, &batch[i], probe); err != nil {
				return err
			}
		}
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	var nextChunk atomic.Int64
	for _, w := range s.workers[:min(len(s.workers), len(batch))] {
		g.Go(func() error {
			for {
				i := int(nextChunk.Add(1) - 1)
				if i >= len(batch) {
					return nil
				}
				if err := gctx.Err(); err != nil {
					return err
				}
				if err := w.expandChunk(cur, &batch[i], probe); err != nil {
					return err
				}
			}
		})
	}
	return g.Wait()
}

// violation builds the Violation result for the state with sequence number
// seq, with the statistics snap taken before its level was expanded.
type violationKind int

const (
	kindInvariant violationKind = iota
	kindDeadlock
	kindTerminal
)

func (s *search) violation(snap Stats, seq uint64, name string, kind violationKind) (Result, error) {
	deadlock, terminal := kind == kindDeadlock, kind == kindTerminal
	trace, err := s.trace(seq)
	if err != nil {
		return Result{}, err
	}
	snap.Elapsed = s.elapsed()
	s.stats = snap
	if err := s.checkpoint(&checkpoint{Done: true, Status: Violation.String(), Invariant: name, Deadlock: deadlock, Terminal: terminal, BadSeq: seq}); err != nil {
		return Result{}, err
	}
	return Result{
		Status:    Violation,
		Stats:     snap,
		Violation: &ViolationInfo{Invariant: name, Deadlock: deadlock, Terminal: terminal, Trace: trace},
	}, nil
}

// trace rebuilds the shortest path to state seq. The visited store keeps
// only fingerprints and parent links, so the path is first read backwards
// as fingerprints and then replayed forwards through the model to recover
// the actions and encodings: no state bytes are stored for this.
func (s *search) trace(seq uint64) ([]Step, error) {
	var fps []uint64
	for seq != state.NoParent {
		fp, parent := s.visited.Lookup(seq)
		fps = append(fps, fp)
		seq = parent
	}
	slices.Reverse(fps)

	steps := make([]Step, 0, len(fps))
	found := false
	s.m.Init(func(enc, key []byte) {
		if !found && state.Fingerprint(keyOf(enc, key)) == fps[0] {
			found = true
			steps = append(steps, Step{Initial: true, State: bytes.Clone(enc)})
		}
	})
	if !found {
		return nil, fmt.Errorf("explorer: replaying trace: no initial state has fingerprint %#x (model not deterministic?)", fps[0])
	}
	exp := s.m.NewExpander()
	for k := 1; k < len(fps); k++ {
		if err := exp.Load(steps[k-1].State); err != nil {
			return nil, fmt.Errorf("explorer: replaying trace step %d: %w", k, err)
		}
		found = false
		exp.Successors(func(a Action, enc, key []byte) {
			if !found && state.Fingerprint(keyOf(enc, key)) == fps[k] {
				found = true
				steps = append(steps, Step{Action: a, State: bytes.Clone(enc)})
			}
		})
		if !found {
			return nil, fmt.Errorf("explorer: replaying trace step %d: no successor has fingerprint %#x (model not deterministic?)", k, fps[k])
		}
	}
	return steps, nil
}
