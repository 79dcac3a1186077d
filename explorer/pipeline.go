package explorer

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// A search in memory expands a level as a pipeline rather than in the
// three steps of a batch (batch.go). The workers take the level's chunks
// in order, one at a time; each expands its chunk in parallel with the
// others, then waits for the chunk's turn, when every earlier chunk is
// committed, and in that turn commits it (insertAll: its candidates in
// their order) and places it (the next level, the parent links, the
// figures). Turns go in chunk order, so the table sees the successors in
// canonical order and the result is the batch's, whatever the number of
// workers; what changes is that one worker's commit and placement overlap
// the others' expansions instead of waiting for all of them, and that a
// chunk's buffers are still in the cache when it is placed. With one
// worker the pipeline is expand, commit, place, chunk after chunk.
//
// A worker holds one chunk at a time (its own slot): the worker holding
// the lowest chunk not yet committed is never waiting, so the pipeline
// cannot deadlock.
//
// The turns are sequential: a chunk's inserts and placement, about an
// eighth of the work on the TLC set with one worker, while a batch
// commits in parallel, shard by shard, and keeps only the placement (5%)
// sequential. So the pipeline can use up to about eight workers (Amdahl's
// bound with an eighth sequential; measured here on two: 1.65x one,
// against 1.36x in batches), and a search with more workers expands in
// batches, whose bound is 20 (docs/performance.md, "Every core").
const maxPipelineWorkers = 8

// memLevelEnd is how expanding a level in memory ended, when it did not
// end with all of it placed: a verdict (stopped, with its error), or
// cancellation.
type memLevelEnd struct {
	stopped     *Result
	stopErr     error
	interrupted bool
	sawNew      bool // at the depth bound: some successor is unvisited
}

// levelPlacer is the placer of a level of n states at depth, whose
// successors go to next, for the window s.window, which begins at state
// *base of the level: it counts the figures and stops at a violation
// (reported with the figures from before the level was expanded, so that
// they do not depend on how far the placement got, which depends on the
// chunks, i.e. on Workers) or when MaxStates is reached, recording the
// verdict in out.
func (s *memSearch) levelPlacer(next *memLevel, depth, n int, base *int, out *memLevelEnd) placer {
	snapshot := s.stats
	return placer{
		state: func(i int, so *stateOut) bool {
			if bad, kind, ok := so.violation(s.opt.CheckDeadlock); ok {
				r, err := s.violation(snapshot, s.window.ids[i], bad, kind, so.err)
				out.stopped, out.stopErr = &r, err
				return true
			}
			s.stats.Generated += so.nSucc
			out.sawNew = out.sawNew || so.hasNew
			return false
		},
		add: func(i int, cd *candidate, enc []byte) (bool, error) {
			s.add(next, enc, s.window.ids[i], cd.idx)
			s.stats.Distinct++
			s.stats.Depth = depth + 1
			if s.maxStatesReached() {
				s.stats.Queue = int64(n-*base-i-1) + int64(next.len())
				r, err := s.result(Unknown, maxStatesReason(s.opt.MaxStates))
				out.stopped, out.stopErr = &r, err
				return true, nil
			}
			return false, nil
		},
	}
}

// expandLevel expands cur, whose states are at depth, into next: as a
// pipeline, or in batches with more than maxPipelineWorkers workers.
func (s *memSearch) expandLevel(ctx context.Context, cur, next *memLevel, depth int, atBound bool) (memLevelEnd, error) {
	if len(s.x.workers) > maxPipelineWorkers {
		return s.expandBatches(ctx, cur, next, depth, atBound)
	}
	return s.expandPipeline(ctx, cur, next, depth, atBound)
}

// expandPipeline expands a level as a pipeline.
func (s *memSearch) expandPipeline(ctx context.Context, cur, next *memLevel, depth int, atBound bool) (memLevelEnd, error) {
	n := cur.len()
	cur.window(s.window, 0, n)
	chunkSize := s.x.chunkSize(n)
	chunks := (n + chunkSize - 1) / chunkSize

	var (
		out    memLevelEnd
		mu     sync.Mutex
		turnCh = sync.NewCond(&mu)
		turn   int  // the chunk whose turn it is
		placed int  // states placed: those of chunks before turn
		done   bool // stop: a verdict, an error or cancellation
		taken  atomic.Int64
	)
	p := s.levelPlacer(next, depth, n, new(int), &out)
	// commit runs chunk c's turn, the lock held: it reports whether the
	// level ends here.
	commit := func(w *worker, c *chunkOut) bool {
		if !atBound {
			c.insertAll(s.table, &w.counts)
		}
		if stop, _ := c.place(p); stop {
			return true
		}
		placed = c.hi
		if s.opt.ProgressEvery > 0 && placed < n && time.Since(s.lastPr) >= s.opt.ProgressEvery {
			s.stats.Queue = int64(n-placed) + int64(next.len())
			s.progress()
		}
		return false
	}
	stop := func() {
		done = true
		turnCh.Broadcast()
	}
	g, gctx := errgroup.WithContext(ctx)
	for wi, w := range s.x.workers[:min(len(s.x.workers), chunks)] {
		slot := &s.x.chunks[wi]
		g.Go(func() error {
			for {
				ci := int(taken.Add(1) - 1)
				if ci >= chunks || gctx.Err() != nil {
					return nil
				}
				slot.lo, slot.hi = ci*chunkSize, min((ci+1)*chunkSize, n)
				err := w.expandChunk(s.window, slot, atBound)
				mu.Lock()
				for turn != ci && !done {
					turnCh.Wait()
				}
				if done || err != nil || gctx.Err() != nil {
					stop()
					mu.Unlock()
					return err
				}
				if commit(w, slot) {
					stop()
				}
				turn++
				turnCh.Broadcast()
				mu.Unlock()
			}
		})
	}
	err := g.Wait()
	switch {
	case out.stopped != nil:
		return out, nil
	case err != nil && ctx.Err() == nil:
		return out, err
	case ctx.Err() != nil && placed < n:
		s.stats.Queue = int64(n-placed) + int64(next.len())
		out.interrupted = true
	}
	return out, nil
}

// expandBatches expands a level in batches (batch.go): expansion, then
// the commit shard by shard, both on every worker, then the placement.
func (s *memSearch) expandBatches(ctx context.Context, cur, next *memLevel, depth int, atBound bool) (memLevelEnd, error) {
	n := cur.len()
	var out memLevelEnd
	lo := 0
	p := s.levelPlacer(next, depth, n, &lo, &out)
	chunkSize := s.x.chunkSize(n)
	for lo < n {
		if ctx.Err() != nil {
			break
		}
		k := cur.window(s.window, lo, s.x.batchStates(chunkSize))
		batch := s.x.cut(k, chunkSize)
		if err := s.x.expand(ctx, s.window, batch, atBound); err != nil {
			if ctx.Err() != nil {
				break
			}
			return out, err
		}
		if !atBound {
			s.x.commit(batch, s.table)
		}
		for ci := range batch {
			if stop, _ := batch[ci].place(p); stop {
				return out, nil
			}
		}
		lo += k
		if s.opt.ProgressEvery > 0 && lo < n && time.Since(s.lastPr) >= s.opt.ProgressEvery {
			s.stats.Queue = int64(n-lo) + int64(next.len())
			s.progress()
		}
	}
	if lo < n {
		s.stats.Queue = int64(n-lo) + int64(next.len())
		out.interrupted = true
	}
	return out, nil
}
