package explorer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/bkcheck/bkcheck/state"
)

// The search on disk (and each shard of a sharded one) expands a BFS
// level in batches of chunks, each batch in three steps. The search in
// memory expands the same chunks the same way but commits and places
// each on its own, in chunk order, as a pipeline (pipeline.go); the
// result is the same.
//
//  1. Expand (parallel, by chunk): each worker takes chunks of the level
//     from a shared counter, decodes and checks each state and emits its
//     successors; once the chunk is expanded, a successor whose
//     fingerprint the table already holds is dropped (the table is only
//     read during this step), the others become candidates, grouped by
//     the table shard that owns them.
//  2. Commit (parallel, by table shard): each worker owns a fixed set of
//     shards and inserts their candidates, chunk after chunk in level
//     order, so the first candidate of a fingerprint in canonical order
//     (state order within the level, then the order in which the model
//     emitted them) is the one marked new, whatever the number of workers.
//     Growth of the shards is planned beforehand (state.Set.Reserve), so
//     inserts never allocate.
//  3. Place (sequential): the new candidates, in canonical order, go to the
//     next level and the parent links. This is a copy per new state; it is
//     all that stays sequential.
//
// Because only the commit decides which successors are new and step 3
// takes them in canonical order, the next level, the parent links, the
// counts and the counterexample do not depend on the number of workers.
const (
	maxChunkStates  = 512
	chunksPerWorker = 8
)

// candidate is a successor that was not in the table when its chunk was
// expanded; its encoding is arena[off:end] of the chunk.
type candidate struct {
	fp       state.FP
	action   Action
	idx      uint32 // index of the successor among all its parent emitted
	off, end int32
	shard    uint16 // table shard of fp
	isNew    bool   // set by the commit
}

// stateOut is what expanding one state of a chunk produced.
type stateOut struct {
	bad     string      // violated invariant, "" if none
	badTerm string      // violated terminal property, "" if none
	nSucc   int64       // successors emitted, duplicates included
	candEnd int         // this state's candidates end at chunkOut.cands[candEnd]
	hasNew  bool        // some successor was not in the table (probe mode only)
	outside bool        // outside the state constraints: not expanded, not terminal
	err     *ModelError // the model failed on this state (modelerror.go)
}

// chunkOut is a slot holding the expansion of window states [lo, hi).
// Slots and their buffers are reused across batches and levels, which is
// what keeps the hot path free of allocation once they have grown.
type chunkOut struct {
	lo, hi int
	states []stateOut
	cands  []candidate
	arena  []byte
	// order lists the candidates grouped by table shard (stable within a
	// shard); shard s's are order[bounds[s]:bounds[s+1]].
	order  []int32
	bounds []int32
}

// worker expands chunks with its own Expander.
type worker struct {
	exp      Expander
	cons     Constrainer // exp, if its model has state constraints
	fpr      state.Fingerprinter
	table    *state.Set // only read while workers expand
	deadlock bool
	emit     func(Action, []byte, []byte)              // w.onSuccessor, bound once to avoid a closure per state
	keyed    KeyedExpander                             // exp, if it emits keys before encodings
	emitKey  func(Action, []byte, func([]byte) []byte) // w.onSuccessorKey, bound once
	appender AppendingExpander                         // exp, if it encodes into the arena
	emitAt   func(Action, int)                         // w.onSuccessorAt, bound once

	out   *chunkOut
	probe bool // at the depth bound: only learn whether a successor is new
	// inline: the worker's chunks are committed by the pipeline
	// (insertAll), not by the commit step; counts is insertAll's scratch.
	inline bool
	counts []int
	nSucc  int64
	hasNew bool
	call   string // the model call in progress, for a panic's ModelError
}

// keyOf is the bytes that identify a state: its key, or its encoding.
func keyOf(enc, key []byte) []byte {
	if key != nil {
		return key
	}
	return enc
}

func (w *worker) onSuccessor(a Action, enc, key []byte) {
	fp, idx, isNew := w.seen(keyOf(enc, key))
	if !isNew {
		return
	}
	off := len(w.out.arena)
	w.out.arena = append(w.out.arena, enc...)
	w.keep(a, fp, idx, off)
}

// onSuccessorKey is onSuccessor for a KeyedExpander: the successor is
// encoded straight into the arena, and not at all in a probe at the
// depth bound.
func (w *worker) onSuccessorKey(a Action, key []byte, encode func([]byte) []byte) {
	fp, idx, isNew := w.seen(key)
	if !isNew {
		return
	}
	off := len(w.out.arena)
	w.out.arena = encode(w.out.arena)
	w.keep(a, fp, idx, off)
}

// onSuccessorAt is onSuccessor for an AppendingExpander: the successor's
// encoding is already in the arena, from off on.
func (w *worker) onSuccessorAt(a Action, off int) {
	fp, idx, isNew := w.seen(w.out.arena[off:])
	if !isNew {
		w.out.arena = w.out.arena[:off]
		return
	}
	w.keep(a, fp, idx, off)
}

// keep records the successor whose encoding the arena holds from off on
// as a candidate.
func (w *worker) keep(a Action, fp state.FP, idx uint32, off int) {
	out := w.out
	out.cands = append(out.cands, candidate{fp: fp, action: a, idx: idx, off: int32(off), end: int32(len(out.arena)), shard: uint16(w.table.ShardOf(fp))})
}

// seen numbers the successor with key and reports whether it is to be
// kept as a candidate (in a probe, only whether one is new).
func (w *worker) seen(key []byte) (fp state.FP, idx uint32, candidate bool) {
	idx = uint32(w.nSucc)
	w.nSucc++
	fp = w.fpr.Of(key)
	// Safe without locking: nothing inserts while workers run. A state found
	// here is visited for good; one not found may still be found by an
	// earlier state of the batch, which the commit settles.
	if !w.probe {
		return fp, idx, true // asked later, with the chunk's others (dropVisited)
	}
	if w.table.Contains(fp) {
		return fp, idx, false
	}
	if w.probe {
		w.hasNew = true
		return fp, idx, false
	}
	return fp, idx, true
}

// inModel reports whether the loaded state is within the model's state
// constraints (always, for a model without them).
func (w *worker) inModel() bool { return w.cons == nil || w.cons.InModel() }

// expandChunk fills out for the states out.lo..out.hi of cur. It stops
// after the first state that violates, or that the model fails on (a
// panic, recovered here: the state's stateOut carries it, without
// successors): the commit stops there too.
func (w *worker) expandChunk(cur *level, out *chunkOut, probe bool) (err error) {
	out.states, out.cands, out.arena = out.states[:0], out.cands[:0], out.arena[:0]
	w.out, w.probe = out, probe
	// One deferred recover per chunk, not per state: a panic ends the
	// chunk anyway.
	defer func() {
		if r := recover(); r != nil {
			out.failed(modelError(w.call, r))
		}
		w.out = nil
		// The pipeline commits its chunks itself, in chunk order
		// (pipeline.go); a batch's commit needs them grouped by shard.
		if err == nil && !w.inline {
			if !probe {
				out.dropVisited(w.table)
			}
			out.group(w.table.Shards())
		}
	}()
	for i := out.lo; i < out.hi; i++ {
		w.call = CallLoad
		if err := w.exp.Load(cur.state(i)); err != nil {
			return fmt.Errorf("explorer: model cannot load a state it produced: %w", err)
		}
		var so stateOut
		w.call = CallCheck
		if so.bad = w.exp.Check(); so.bad == "" && !w.inModel() {
			so.outside = true
		} else if so.bad == "" {
			w.nSucc, w.hasNew = 0, false
			w.call = CallSuccessors
			switch {
			case w.keyed != nil:
				w.keyed.SuccessorKeys(w.emitKey)
			case w.appender != nil:
				w.appender.SuccessorsAppend(&out.arena, w.emitAt)
			default:
				w.exp.Successors(w.emit)
			}
			so.nSucc, so.hasNew = w.nSucc, w.hasNew
			if so.nSucc == 0 {
				w.call = CallCheckTerminal
				so.badTerm = w.exp.CheckTerminal()
			}
		}
		so.candEnd = len(out.cands)
		out.states = append(out.states, so)
		if so.bad != "" || so.badTerm != "" || (w.deadlock && so.nSucc == 0 && !so.outside) {
			break
		}
	}
	return nil
}

// failed records that the model failed on the state after those in
// c.states, dropping the candidates that state emitted before it failed.
func (c *chunkOut) failed(merr *ModelError) {
	candStart, arenaStart := 0, 0
	if n := len(c.states); n > 0 {
		candStart = c.states[n-1].candEnd
	}
	if candStart > 0 {
		arenaStart = int(c.cands[candStart-1].end)
	}
	c.cands, c.arena = c.cands[:candStart], c.arena[:arenaStart]
	c.states = append(c.states, stateOut{candEnd: candStart, err: merr})
}

// dropVisited removes the candidates whose fingerprints t holds. The
// table is asked about a chunk's successors all at once, here, rather
// than about each as it is emitted. Whether a fingerprint is in the
// table does not change while workers expand, so the candidates are the
// same; what changes is the cost. A probe of a table of gigabytes is a
// cache and TLB miss of hundreds of nanoseconds: asked between two
// successors it stalls the core, asked in this loop of independent
// probes the misses overlap (state's BenchmarkSetContains;
// docs/record/2026-12-performance.md, "Large tables"). It costs each duplicate's
// encoding in the arena (for a KeyedExpander, an encoding it would not
// otherwise make), which measures cheaper than the stalls even on tables
// of tens of megabytes. The arena keeps the dropped encodings until the
// chunk is reused. A probe at the depth bound keeps no candidates and
// asks at once (seen).
func (c *chunkOut) dropVisited(t *state.Set) {
	k, start := 0, 0
	for j := range c.states {
		end := c.states[j].candEnd
		for i := start; i < end; i++ {
			if !t.Contains(c.cands[i].fp) {
				c.cands[k] = c.cands[i]
				k++
			}
		}
		start = end
		c.states[j].candEnd = k
	}
	c.cands = c.cands[:k]
}

// insertAll is the commit of one chunk on its own, in the pipeline of a
// search in memory (pipeline.go): its candidates are inserted into t in
// their order, after those of every earlier chunk, so exactly the ones the
// commit step would mark new are. One insert per candidate replaces the
// probe of dropVisited, the grouping by shard and the commit's insert.
func (c *chunkOut) insertAll(t *state.Set, counts *[]int) {
	shards := t.Shards()
	if cap(*counts) < shards {
		*counts = make([]int, shards)
	}
	cs := (*counts)[:shards]
	clear(cs)
	for i := range c.cands {
		cs[c.cands[i].shard]++
	}
	if !t.Reserve(cs) {
		panic("explorer: a table without a budget refused room")
	}
	for s := range shards {
		t.Grow(s)
	}
	for i := range c.cands {
		cd := &c.cands[i]
		cd.isNew = t.Insert(int(cd.shard), cd.fp)
	}
}

// group fills order and bounds: a stable counting sort by shard.
func (c *chunkOut) group(shards int) {
	if cap(c.bounds) < shards+1 {
		c.bounds = make([]int32, shards+1)
	}
	c.bounds = c.bounds[:shards+1]
	clear(c.bounds)
	for i := range c.cands {
		c.bounds[c.cands[i].shard+1]++
	}
	for s := 1; s <= shards; s++ {
		c.bounds[s] += c.bounds[s-1]
	}
	if cap(c.order) < len(c.cands) {
		c.order = make([]int32, len(c.cands), 2*len(c.cands))
	}
	c.order = c.order[:len(c.cands)]
	// Place using bounds[s] as the running cursor of shard s, then shift
	// bounds back by one shard.
	for i := range c.cands {
		s := c.cands[i].shard
		c.order[c.bounds[s]] = int32(i)
		c.bounds[s]++
	}
	copy(c.bounds[1:], c.bounds[:shards])
	c.bounds[0] = 0
}

// placer receives a committed chunk in canonical order: state(i, so) for
// each expanded state (i its index in the window), then add for each of
// its successors the commit marked new. Either stops the walk by returning
// true (a violation, a bound, an error).
type placer struct {
	state func(i int, so *stateOut) (stop bool)
	add   func(i int, cd *candidate, enc []byte) (stop bool, err error)
}

// place walks chunk c for p; it reports whether p stopped it.
func (c *chunkOut) place(p placer) (bool, error) {
	candStart := 0
	for j := range c.states {
		so := &c.states[j]
		i := c.lo + j
		if p.state(i, so) {
			return true, nil
		}
		for k := candStart; k < so.candEnd; k++ {
			if cd := &c.cands[k]; cd.isNew {
				if stop, err := p.add(i, cd, c.arena[cd.off:cd.end]); stop || err != nil {
					return true, err
				}
			}
		}
		candStart = so.candEnd
	}
	return false, nil
}

// initial calls add for every distinct initial state, in the order the
// model emits them, with its index among all the initial states it emits
// (what a trace replays), counting Generated and Distinct in st until
// maxStates (if > 0) is reached; it reports whether it was, or how the
// model failed if it panicked.
func initial(m Model, fpr state.Fingerprinter, maxStates int64, st *Stats, add func(i uint32, enc []byte, fp state.FP)) (full bool, merr *ModelError) {
	seen := state.NewSet(1, fpr.Wide(), 0)
	var idx uint32
	merr = catch(CallInit, func() {
		m.Init(func(enc, key []byte) {
			i := idx
			idx++
			if full {
				return
			}
			st.Generated++
			if fp := fpr.Of(keyOf(enc, key)); seen.Add(fp) {
				st.Distinct++
				add(i, enc, fp)
				full = maxStates > 0 && st.Distinct >= maxStates
			}
		})
	})
	return full, merr
}

// level is a BFS level, or one window of it: encodings packed into
// blocks plus, for each state, where it lies and its id (the sequence
// number of an in-memory search, the rank within the level of a search on
// disk).
//
// A level grows a block at a time and never moves what it holds: growing
// one contiguous arena copied every state again at each growth, which was
// a quarter of the CPU time of large searches in memory (runtime.memmove
// under growslice). Blocks, reference and id arrays are kept by reset for
// the next level to fill.
type level struct {
	blocks [][]byte // blocks[:used] hold states; the rest are spare
	used   int
	refs   []stateRef
	ids    []uint64
	// view marks a window that shares another level's arrays (memLevel.
	// window): resetting it must not hand them out for writing.
	view bool
}

// stateRef locates a state's encoding: block, and its offsets in it.
type stateRef struct{ block, off, end uint32 }

// levelBlock is the size of a block; an encoding longer than that gets a
// block of its own.
const levelBlock = 1 << 20

func (l *level) reset() {
	if l.view {
		*l = level{}
		return
	}
	for i := range l.used {
		l.blocks[i] = l.blocks[i][:0]
	}
	l.used, l.refs, l.ids = 0, l.refs[:0], l.ids[:0]
}

func (l *level) len() int { return len(l.refs) }

func (l *level) add(enc []byte, id uint64) {
	if l.used == 0 || len(l.blocks[l.used-1])+len(enc) > cap(l.blocks[l.used-1]) {
		if l.used == len(l.blocks) || cap(l.blocks[l.used]) < len(enc) {
			l.blocks = slices.Insert(l.blocks, l.used, make([]byte, 0, max(levelBlock, len(enc))))
		}
		l.used++
	}
	b := l.used - 1
	off := len(l.blocks[b])
	l.blocks[b] = append(l.blocks[b], enc...)
	l.refs = append(l.refs, stateRef{block: uint32(b), off: uint32(off), end: uint32(len(l.blocks[b]))})
	l.ids = append(l.ids, id)
}

func (l *level) state(i int) []byte {
	r := l.refs[i]
	return l.blocks[r.block][r.off:r.end:r.end]
}

// expander runs the expand and commit steps for a search.
type expander struct {
	workers []*worker
	chunks  []chunkOut
	counts  []int
}

// newExpander makes the workers, one Expander each; it reports how the
// model failed if NewExpander panicked.
func newExpander(m Model, opt Options, fpr state.Fingerprinter, table *state.Set) (*expander, *ModelError) {
	x := &expander{workers: make([]*worker, opt.Workers), chunks: make([]chunkOut, opt.Workers*chunksPerWorker)}
	for i := range x.workers {
		var exp Expander
		if merr := catch(CallNewExpander, func() { exp = m.NewExpander() }); merr != nil {
			return nil, merr
		}
		w := &worker{exp: exp, fpr: fpr, table: table, deadlock: opt.CheckDeadlock}
		w.cons, _ = exp.(Constrainer)
		w.emit = w.onSuccessor
		if w.keyed, _ = exp.(KeyedExpander); w.keyed != nil {
			w.emitKey = w.onSuccessorKey
		}
		if w.appender, _ = exp.(AppendingExpander); w.appender != nil {
			w.emitAt = w.onSuccessorAt
		}
		x.workers[i] = w
	}
	return x, nil
}

// setTable points the workers at another table (a shard's table of sent
// fingerprints, then of owned ones).
func (x *expander) setTable(t *state.Set) {
	for _, w := range x.workers {
		w.table = t
	}
}

// chunkSize is the chunk size for a level of n states.
func (x *expander) chunkSize(n int) int {
	return min(max(n/(len(x.workers)*chunksPerWorker), 1), maxChunkStates)
}

// batchStates is how many states one batch takes at most.
func (x *expander) batchStates(chunkSize int) int { return len(x.chunks) * chunkSize }

// cut splits the k states of the window into chunks of chunkSize.
func (x *expander) cut(k, chunkSize int) []chunkOut {
	batch := x.chunks[:0]
	for b := 0; b < k; {
		c := &x.chunks[len(batch)]
		c.lo, c.hi = b, min(b+chunkSize, k)
		b = c.hi
		batch = batch[:len(batch)+1]
	}
	return batch
}

// expand runs the chunks of one batch on the workers.
func (x *expander) expand(ctx context.Context, cur *level, batch []chunkOut, probe bool) error {
	if len(x.workers) == 1 || len(batch) == 1 {
		w := x.workers[0]
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
	for _, w := range x.workers[:min(len(x.workers), len(batch))] {
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

// commit inserts the batch's candidates into table, shard by shard in
// parallel, marking the new ones. It returns false, having inserted
// nothing, if the table has no room for them within its budget.
func (x *expander) commit(batch []chunkOut, table *state.Set) bool {
	shards := table.Shards()
	if cap(x.counts) < shards {
		x.counts = make([]int, shards)
	}
	counts := x.counts[:shards]
	clear(counts)
	for ci := range batch {
		b := batch[ci].bounds
		for s := range shards {
			counts[s] += int(b[s+1] - b[s])
		}
	}
	if !table.Reserve(counts) {
		return false
	}
	work := func(s int) {
		table.Grow(s)
		for ci := range batch {
			c := &batch[ci]
			for _, k := range c.order[c.bounds[s]:c.bounds[s+1]] {
				cd := &c.cands[k]
				cd.isNew = table.Insert(s, cd.fp)
			}
		}
	}
	parallelShards(len(x.workers), shards, work)
	return true
}

// parallelShards runs work(s) for every shard s, worker w taking the
// shards s with s % workers == w.
func parallelShards(workers, shards int, work func(s int)) {
	workers = min(workers, shards)
	if workers <= 1 {
		for s := range shards {
			work(s)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := w; s < shards; s += workers {
				work(s)
			}
		}()
	}
	wg.Wait()
}
