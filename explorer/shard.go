package explorer

import (
	"container/heap"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/state"
)

// A sharded search is one breadth-first search run by Shards processes
// that share a directory (a volume every pod or task mounts). Each state is
// owned by one shard, chosen by a hash of its fingerprint (owner); a shard
// keeps the frontier, visited set and parent links of the states it owns.
// Each level takes three phases, separated by barriers on the shared file
// system:
//
//  1. Expand: each shard expands its part of the level in rank order and
//     writes every successor it has not sent before during this level
//     (its own table of sent fingerprints) to a batch file for the
//     successor's owner: exchange/level-D/FROM-TO.rec, records of
//     (fingerprint, parent rank, successor index, encoding), which come out
//     in canonical order since the shard expands in rank order. It posts
//     sync/expanded-D.SHARD.json: its generated count and its first bad
//     state, if any.
//  2. Merge: each shard merges the batches addressed to it by (parent
//     rank, successor index) — the canonical order of the whole level —
//     and keeps the first of each fingerprint that its visited set (exact
//     table or runs, as in an unsharded search) does not hold: its part of
//     the next level, with parent links. It posts sync/merged-D.SHARD.json:
//     how many states it kept.
//  3. Rank: each shard reads every shard's parent links of the new level,
//     merges them by the same key and so learns the rank (position in the
//     level's canonical order) of each of its states: the ranks file.
//
// The level, the parent of each state and therefore the counts and the
// counterexample are exactly those of an unsharded search, for any number
// of shards. A shard that dies is restarted with the same command: it
// continues from its checkpoint, skipping the phases whose marker it has
// posted (their files are durable before the marker), while the others
// wait at the next barrier.
type coord struct {
	dir     string
	shard   int
	shards  int
	poll    time.Duration
	waiting func(depth int, missing []int, waited time.Duration) // Options.Waiting
	every   time.Duration                                        // Options.WaitingEvery
	timeout time.Duration                                        // Options.ShardTimeout
	waited  time.Duration                                        // at the barriers so far (ExchangeStats.BarrierWait)
}

// HeartbeatEvery is how often a running shard rewrites its heartbeat,
// sync/alive.NNN. It is fixed, not derived from the shard's own
// ShardTimeout, because the shards waiting for it may have been given
// another one; MinShardTimeout keeps every bound a few heartbeats long.
const HeartbeatEvery = time.Second

// MinShardTimeout is the shortest ShardTimeout that cannot mistake a
// live shard for a dead one: five heartbeats, so that a shard whose
// writes to a slow shared file system are late by a few seconds is still
// waited for.
const MinShardTimeout = 5 * HeartbeatEvery

// ShardTimeoutError is returned by a shard that waited at a barrier for
// ShardTimeout for shards that neither posted their marker nor showed any
// sign of life. Nothing of the run is lost: the shard had checkpointed
// its last level and posted its markers, so the same command, given to
// every shard again, continues the search.
type ShardTimeoutError struct {
	Depth   int    // the BFS level whose barrier was not passed
	Phase   string // "expanded" or "merged"
	Missing []int  // the shards (0-based) that never arrived
	// Silent are the shards of Missing that never wrote a heartbeat to
	// this directory at all: when every other shard is silent, and the
	// scheduler started them all with this one, the directory is most
	// likely not the one they write to (not shared).
	Silent  []int
	Shards  int           // the shards of the search
	Timeout time.Duration // ShardTimeout
}

func (e *ShardTimeoutError) Error() string {
	who := make([]string, len(e.Missing))
	for i, s := range e.Missing {
		who[i] = fmt.Sprintf("%d/%d", s+1, e.Shards)
	}
	return fmt.Sprintf("shard %s did not reach level %d (%s phase) and showed no sign of life for %v", strings.Join(who, ", "), e.Depth, e.Phase, e.Timeout)
}

func (c *coord) alivePath(shard int) string {
	return filepath.Join(c.dir, fmt.Sprintf("alive.%03d", shard))
}

// heartbeat rewrites this shard's heartbeat every HeartbeatEvery until
// the returned stop is called (which waits for the writer to end, so no
// goroutine outlives the search). The content (host, pid, a counter)
// changes with every write and with every restart; the others compare
// contents, not modification times, so clocks that differ between
// machines cannot make a live shard look dead. A write that fails is
// tried again at the next beat: a shard that cannot write is, to the
// others, as good as gone.
func (c *coord) heartbeat() (stop func()) {
	host, _ := os.Hostname()
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(HeartbeatEvery)
		defer t.Stop()
		for seq := 0; ; seq++ {
			os.WriteFile(c.alivePath(c.shard), fmt.Appendf(nil, "%s %d %d\n", host, os.Getpid(), seq), 0o644)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-ended }
}

// runRecord is sync/run.json: what every shard of the search must agree on.
type runRecord struct {
	ModelID     string `json:"model_id"`
	Shards      int    `json:"shards"`
	Fingerprint int    `json:"fingerprint_bits"`
	Format      int    `json:"format"`
}

// join records the search's identity in the shared directory, or checks
// that the one recorded there (by the shard that came first) is this one.
func (c *coord) join(opt Options) error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Errorf("explorer: %w", err)
	}
	path := filepath.Join(c.dir, "run.json")
	want := runRecord{ModelID: opt.ModelID, Shards: opt.Shards, Fingerprint: opt.Fingerprint, Format: checkpointFormat}
	b, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, c.shard)
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("explorer: %w", err)
	}
	// A hard link fails if the name exists: exactly one shard creates it.
	lerr := os.Link(tmp, path)
	os.Remove(tmp)
	if lerr == nil {
		syncDir(c.dir)
		return nil
	}
	got, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("explorer: %w", err)
	}
	var have runRecord
	if err := json.Unmarshal(got, &have); err != nil {
		return fmt.Errorf("explorer: %s is corrupt: %w", path, err)
	}
	same := have.ModelID == opt.ModelID
	if opt.SameModel != nil {
		same = opt.SameModel(have.ModelID)
	}
	switch {
	case have.Format != checkpointFormat:
		return fmt.Errorf("%w: %s was written by another version of bkcheck", ErrResumeMismatch, opt.Dir)
	case !same:
		return fmt.Errorf("%w: the search in %s checks\n  %s\nbut this shard was asked for\n  %s", ErrResumeMismatch, opt.Dir, have.ModelID, opt.ModelID)
	case have.Shards != opt.Shards:
		return fmt.Errorf("%w: the search in %s has %d shards, this shard was started as one of %d", ErrResumeMismatch, opt.Dir, have.Shards, opt.Shards)
	case have.Fingerprint != opt.Fingerprint:
		return fmt.Errorf("%w: the search in %s uses %d-bit fingerprints, this shard %d-bit", ErrResumeMismatch, opt.Dir, have.Fingerprint, opt.Fingerprint)
	}
	return nil
}

func (c *coord) path(phase string, depth, shard int) string {
	return filepath.Join(c.dir, fmt.Sprintf("%s-%06d.%03d.json", phase, depth, shard))
}

// post records this shard's marker for a phase of level depth.
func (c *coord) post(phase string, depth int, v any) error {
	return writeJSONFile(c.path(phase, depth, c.shard), v)
}

// posted reads this shard's marker into v, if it was posted.
func (c *coord) posted(phase string, depth int, v any) (bool, error) {
	b, err := os.ReadFile(c.path(phase, depth, c.shard))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("explorer: %w", err)
	}
	return true, json.Unmarshal(b, v)
}

// gather waits until every shard has posted its marker for a phase of
// level depth and calls f with each. It returns ctx's error if cancelled.
func (c *coord) gather(ctx context.Context, phase string, depth int, f func(shard int, b []byte) error) error {
	got := make([][]byte, c.shards)
	missing := c.shards
	// Poll from 1ms up to c.poll: small levels pass a barrier in
	// milliseconds, large ones cost no more than one read per shard per
	// c.poll.
	wait := time.Millisecond
	start, told := time.Now(), time.Duration(0)
	// The last heartbeat read from each shard, and when (on this
	// machine's clock) it last changed: a shard is gone when it has not
	// posted and its heartbeat has not changed for c.timeout.
	beat := make([]string, c.shards)
	changed := make([]time.Time, c.shards)
	for i := range changed {
		changed[i] = start
	}
	for {
		for i := range c.shards {
			if got[i] != nil {
				continue
			}
			b, err := os.ReadFile(c.path(phase, depth, i))
			if err == nil && json.Valid(b) {
				got[i] = b
				missing--
			}
		}
		if missing == 0 {
			break
		}
		if c.timeout > 0 {
			now := time.Now()
			var gone, silent []int
			for i := range c.shards {
				if got[i] != nil {
					continue
				}
				// Empty: read between the writer's truncation and its
				// write; no news either way.
				if b, err := os.ReadFile(c.alivePath(i)); err == nil && len(b) > 0 && string(b) != beat[i] {
					beat[i], changed[i] = string(b), now
				}
				if now.Sub(changed[i]) >= c.timeout {
					gone = append(gone, i)
					if beat[i] == "" {
						silent = append(silent, i)
					}
				}
			}
			if gone != nil {
				return &ShardTimeoutError{Depth: depth, Phase: phase, Missing: gone, Silent: silent, Shards: c.shards, Timeout: c.timeout}
			}
		}
		if waited := time.Since(start); c.waiting != nil && waited-told >= c.every {
			var who []int
			for i := range c.shards {
				if got[i] == nil {
					who = append(who, i)
				}
			}
			c.waiting(depth, who, waited)
			told = waited
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, c.poll)
	}
	c.waited += time.Since(start)
	for i, b := range got {
		if err := f(i, b); err != nil {
			return fmt.Errorf("explorer: marker %s: %w", c.path(phase, depth, i), err)
		}
	}
	return nil
}

// forget deletes this shard's markers of level depth.
func (c *coord) forget(depth int) {
	for _, phase := range []string{"expanded", "merged"} {
		os.Remove(c.path(phase, depth, c.shard))
	}
}

type expandedMarker struct {
	Generated int64      `json:"generated"`
	Bad       *badMarker `json:"bad,omitempty"`
	Out       []int64    `json:"sent"` // records sent to each shard
	Elapsed   float64    `json:"elapsed_s"`
}

type badMarker struct {
	Rank  int64       `json:"rank"`
	Name  string      `json:"name"`
	Kind  int         `json:"kind"`
	Error *ModelError `json:"error,omitempty"` // kindError: how the model failed
}

type mergedMarker struct {
	Count int64 `json:"count"`
}

func (s *diskSearch) exchangeDir(depth int) string {
	return filepath.Join(s.root, "exchange", fmt.Sprintf("level-%06d", depth))
}

func (s *diskSearch) outboxPath(depth, from, to int) string {
	return filepath.Join(s.exchangeDir(depth), fmt.Sprintf("%03d-%03d.rec", from, to))
}

// runSharded runs the levels of a sharded search from checkpoint cp.
func (s *diskSearch) runSharded(ctx context.Context, cp *checkpoint) (Result, error) {
	defer s.co.heartbeat()()
	depth, own, total := cp.Depth, cp.LevelLen, cp.LevelTotal
	var m mergedMarker
	merged, err := s.co.posted("merged", depth, &m)
	if err != nil {
		return Result{}, err
	}
	upTo := depth
	if merged {
		upTo = depth + 1
	}
	if err := s.restore(upTo); err != nil {
		return Result{}, err
	}
	for total > 0 {
		snapshot := s.stats
		atBound := s.opt.MaxDepth > 0 && depth >= s.opt.MaxDepth

		var e expandedMarker
		done, err := s.co.posted("expanded", depth, &e)
		if err != nil {
			return Result{}, err
		}
		if !done {
			var interrupted bool
			if e, interrupted, err = s.expandShard(ctx, depth, own); err != nil {
				return Result{}, err
			} else if interrupted {
				return s.result(Unknown, "interrupted")
			}
			if err := s.co.post("expanded", depth, e); err != nil {
				return Result{}, err
			}
		}
		var gen int64
		var bad *badMarker
		err = s.co.gather(ctx, "expanded", depth, func(_ int, b []byte) error {
			var em expandedMarker
			if err := json.Unmarshal(b, &em); err != nil {
				return err
			}
			gen += em.Generated
			if em.Bad != nil && (bad == nil || em.Bad.Rank < bad.Rank) {
				bad = em.Bad
			}
			return nil
		})
		if ctx.Err() != nil {
			return s.result(Unknown, "interrupted")
		}
		if err != nil {
			return Result{}, err
		}
		if bad != nil {
			return s.violation(badState{depth: depth, rank: bad.Rank, name: bad.Name, kind: violationKind(bad.Kind), err: bad.Error, snap: snapshot})
		}
		s.stats.Generated = snapshot.Generated + gen

		if ok, err := s.co.posted("merged", depth, &m); err != nil {
			return Result{}, err
		} else if !ok {
			if m.Count, err = s.mergeShard(ctx, depth); err != nil {
				return Result{}, err
			}
			if ctx.Err() != nil {
				return s.result(Unknown, "interrupted")
			}
			if err := s.co.post("merged", depth, m); err != nil {
				return Result{}, err
			}
		}
		var count int64
		err = s.co.gather(ctx, "merged", depth, func(_ int, b []byte) error {
			var mm mergedMarker
			if err := json.Unmarshal(b, &mm); err != nil {
				return err
			}
			count += mm.Count
			return nil
		})
		if ctx.Err() != nil {
			return s.result(Unknown, "interrupted")
		}
		if err != nil {
			return Result{}, err
		}
		if atBound {
			s.stats.Queue = 0
			if count > 0 {
				return s.result(Unknown, fmt.Sprintf("max depth %d reached", s.opt.MaxDepth))
			}
			return s.finish()
		}
		s.stats.Distinct = snapshot.Distinct + count
		if count > 0 {
			s.stats.Depth = depth + 1
		}
		s.stats.Queue = count
		if err := s.rankShard(depth + 1); err != nil {
			return Result{}, err
		}
		s.noteLevel(depth+1, m.Count)
		s.noteDisk()
		if err := s.checkpoint(&checkpoint{Depth: depth + 1, LevelLen: m.Count, LevelTotal: count}); err != nil {
			return Result{}, err
		}
		// Nobody needs these any more: this shard's previous level and
		// the batches it merged; markers two levels back.
		os.Remove(s.recPath(levelKind, depth))
		for j := range s.shards {
			os.Remove(s.outboxPath(depth, j, s.shard))
		}
		os.Remove(s.exchangeDir(depth))
		if depth > 1 {
			s.co.forget(depth - 1)
		}
		depth, own, total = depth+1, m.Count, count
		s.store.Exchange.Levels++
		s.progress()
	}
	return s.finish()
}

// outbox is a batch file for one owner.
type outbox struct {
	w *state.RecWriter
	n int64
}

// expandShard expands this shard's part of level depth, sending each
// successor to its owner. interrupted reports a cancelled context.
func (s *diskSearch) expandShard(ctx context.Context, depth int, own int64) (expandedMarker, bool, error) {
	var e expandedMarker
	start := time.Now()
	if err := os.MkdirAll(s.exchangeDir(depth), 0o755); err != nil {
		return e, false, fmt.Errorf("explorer: %w", err)
	}
	boxes := make([]outbox, s.shards)
	abort := func() {
		for _, b := range boxes {
			if b.w != nil {
				b.w.Abort()
			}
		}
	}
	for j := range boxes {
		w, err := state.CreateFastRecWriter(s.outboxPath(depth, s.shard, j))
		if err != nil {
			abort()
			return e, false, err
		}
		boxes[j].w = w
	}
	cur, err := s.openLevel(depth, own)
	if err != nil {
		abort()
		return e, false, err
	}
	defer cur.close()
	s.sent.Clear()
	s.x.setTable(s.sent)
	defer s.x.setTable(s.table)
	var head []byte
	chunkSize := s.x.chunkSize(int(min(own, 1<<30)))
	for lo := int64(0); lo < own && e.Bad == nil; {
		if ctx.Err() != nil {
			abort()
			return e, true, nil
		}
		k, err := cur.fill(s.window, s.x.batchStates(chunkSize))
		if err != nil {
			abort()
			return e, false, err
		}
		batch := s.x.cut(k, chunkSize)
		if err := s.x.expand(ctx, s.window, batch, false); err != nil {
			abort()
			if ctx.Err() != nil {
				return e, true, nil
			}
			return e, false, err
		}
		if !s.x.commit(batch, s.sent) {
			// The table of sent fingerprints only saves sending
			// duplicates: forget it and go on.
			s.sent.Clear()
			if !s.x.commit(batch, s.sent) {
				// Not even one batch fits: send it all, the owners
				// deduplicate.
				for ci := range batch {
					for k := range batch[ci].cands {
						batch[ci].cands[k].isNew = true
					}
				}
			}
		}
		p := placer{
			state: func(i int, so *stateOut) bool {
				if bad, kind, ok := so.violation(s.opt.CheckDeadlock); ok {
					e.Bad = &badMarker{Rank: int64(s.window.ids[i]), Name: bad, Kind: int(kind), Error: so.err}
					return true
				}
				e.Generated += so.nSucc
				return false
			},
			add: func(i int, cd *candidate, enc []byte) (bool, error) {
				b := &boxes[owner(cd.fp, s.shards)]
				head = appendFP(head[:0], cd.fp, s.opt.Fingerprint)
				head = binary.AppendUvarint(head, uint64(cd.idx))
				b.w.Append(s.window.ids[i], head, enc)
				b.n++
				return false, nil
			},
		}
		for ci := range batch {
			if stop, _ := batch[ci].place(p); stop {
				break
			}
		}
		lo += int64(k)
	}
	if e.Bad == nil {
		if err := cur.t.Err(); err != nil {
			abort()
			return e, false, err
		}
	}
	ws := make([]*state.RecWriter, len(boxes))
	for j := range boxes {
		ws[j] = boxes[j].w
		e.Out = append(e.Out, boxes[j].n)
	}
	if err := finishAll(ws...); err != nil {
		return e, false, err
	}
	for j := range boxes {
		if j == s.shard {
			continue // stays on this machine
		}
		s.store.Exchange.SentRecords += boxes[j].n
		if fi, err := os.Stat(s.outboxPath(depth, s.shard, j)); err == nil {
			s.store.Exchange.SentBytes += fi.Size()
		}
	}
	syncDir(s.exchangeDir(depth))
	e.Elapsed = time.Since(start).Seconds()
	return e, false, nil
}

// mergeSource is one sorted stream of records being merged.
type mergeSource struct {
	r      *state.RecReader
	parent uint64
	idx    uint64
	fp     state.FP
	own    bool // for rankShard: this shard's links
}

// next reads the stream's next record; false at its end. With bits > 0,
// records carry a fingerprint of that width first (appendFP).
func (m *mergeSource) next(bits int) (bool, error) {
	if !m.r.Next() {
		return false, m.r.Err()
	}
	h := m.r.Head()
	if bits > 0 {
		n := bits / 8
		if len(h) < n {
			return false, errors.New("explorer: corrupt batch record")
		}
		m.fp = decodeFP(h, bits)
		h = h[n:]
	}
	var k int
	m.parent = m.r.Key()
	if m.idx, k = binary.Uvarint(h); k <= 0 {
		return false, errors.New("explorer: corrupt batch record")
	}
	return true, nil
}

// mergeHeap orders streams by (parent rank, successor index).
type mergeHeap []*mergeSource

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	return h[i].parent < h[j].parent || h[i].parent == h[j].parent && h[i].idx < h[j].idx
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeSource)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// openMerge opens the streams at paths and returns them as a heap.
func openMerge(paths []string, bits int, own int) (*mergeHeap, func(), error) {
	h := &mergeHeap{}
	var all []*mergeSource
	closeAll := func() {
		for _, m := range all {
			m.r.Close()
		}
	}
	for i, p := range paths {
		r, err := state.OpenRecReader(p, true)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		m := &mergeSource{r: r, own: i == own}
		all = append(all, m)
		ok, err := m.next(bits)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		if ok {
			*h = append(*h, m)
		}
	}
	heap.Init(h)
	return h, closeAll, nil
}

// advance moves the top stream to its next record.
func (h *mergeHeap) advance(bits int) error {
	top := (*h)[0]
	ok, err := top.next(bits)
	if err != nil {
		return err
	}
	if ok {
		heap.Fix(h, 0)
	} else {
		heap.Pop(h)
	}
	return nil
}

// mergeShard merges the batches sent to this shard during level depth
// into its part of level depth+1 and returns how many states it kept.
func (s *diskSearch) mergeShard(ctx context.Context, depth int) (int64, error) {
	paths := make([]string, s.shards)
	for j := range paths {
		paths[j] = s.outboxPath(depth, j, s.shard)
	}
	h, closeAll, err := openMerge(paths, s.opt.Fingerprint, -1)
	if err != nil {
		return 0, err
	}
	defer closeAll()
	s.discardLevel(depth + 1)
	lw, err := s.createLevel(depth+1, false)
	if err != nil {
		return 0, err
	}
	st := &settler{s: s, depth: depth + 1, lw: lw}
	c := &s.x.chunks[0]
	batch := s.x.chunks[:1]
	var parents []uint64
	// Half the table's slots at most, so that one batch fits a table
	// emptied by a flush.
	slot := int64(8)
	if s.fpr.Wide() {
		slot = 16
	}
	batchRecords := int(min(1<<16, max(s.tableBudget/slot/2, 64)))
	for h.Len() > 0 {
		if ctx.Err() != nil {
			lw.abort()
			return 0, nil
		}
		c.cands, c.arena, parents = c.cands[:0], c.arena[:0], parents[:0]
		for h.Len() > 0 && len(c.cands) < batchRecords {
			top := (*h)[0]
			if !s.table.Contains(top.fp) {
				off := len(c.arena)
				c.arena = append(c.arena, top.r.Payload()...)
				c.cands = append(c.cands, candidate{fp: top.fp, idx: uint32(top.idx), off: int32(off), end: int32(len(c.arena)), shard: uint16(s.table.ShardOf(top.fp))})
				parents = append(parents, top.parent)
			}
			if err := h.advance(s.opt.Fingerprint); err != nil {
				lw.abort()
				return 0, err
			}
		}
		c.group(s.table.Shards())
		err := st.commitEach(batch, func(int) (bool, error) {
			for k := range c.cands {
				if cd := &c.cands[k]; cd.isNew {
					lw.add(parents[k], cd.idx, c.arena[cd.off:cd.end], cd.fp)
				}
			}
			return false, nil
		})
		if err != nil {
			lw.abort()
			return 0, err
		}
	}
	count, err := st.settle()
	if err != nil {
		return 0, err
	}
	os.Remove(s.fpsPath(depth + 1))
	return count, nil
}

// rankShard gives this shard's states of level depth their ranks: it
// merges every shard's parent links of the level (sorted by the same key
// as the level's canonical order) and writes the position of each of its
// own records to the ranks file.
func (s *diskSearch) rankShard(depth int) error {
	paths := make([]string, s.shards)
	for j := range paths {
		paths[j] = filepath.Join(s.shardDir(j), fmt.Sprintf("%s-%06d.rec", linksKind, depth))
	}
	h, closeAll, err := openMerge(paths, 0, s.shard)
	if err != nil {
		return err
	}
	defer closeAll()
	w, err := state.CreateRecWriter(s.recPath(ranksKind, depth))
	if err != nil {
		return err
	}
	var rank uint64
	for h.Len() > 0 {
		if (*h)[0].own {
			w.Append(rank, nil, nil)
		}
		rank++
		if err := h.advance(0); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Finish()
}
