package explorer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bkcheck/bkcheck/internal/testtier"
)

// diskVariant is one way of running a search on disk.
type diskVariant struct {
	name    string
	workers int
	fp      int
	shards  int
	table   int64 // bytes of fingerprint table(s); 0: from Memory
}

// diskVariants covers the exact table, a table so small that the search
// works from its runs (several flushes per level, records dropped after
// the merge-join), wide fingerprints and shards.
var diskVariants = []diskVariant{
	{name: "exact/workers=1", workers: 1},
	{name: "exact/workers=3/fp=64", workers: 3, fp: 64},
	{name: "pending/workers=1", workers: 1, table: 64 << 10},
	{name: "pending/workers=2/fp=128", workers: 2, fp: 128, table: 64 << 10},
	{name: "shards=2", workers: 1, shards: 2},
	{name: "shards=3/pending/fp=64", workers: 2, fp: 64, shards: 3, table: 48 << 10},
	{name: "shards=4", workers: 1, shards: 4},
}

func (v diskVariant) options(base Options, dir string) Options {
	opt := base
	opt.Workers, opt.Fingerprint, opt.Dir, opt.Shards = v.workers, v.fp, dir, v.shards
	opt.SyncPoll = 2e6
	if v.table > 0 {
		opt.testing.tableBytes, opt.testing.sortFPs = v.table, 500
	}
	return opt
}

// runDisk runs variant v in a fresh directory and returns shard 0's result
// (all shards must agree).
func runDisk(t *testing.T, m Model, base Options, v diskVariant) Result {
	t.Helper()
	dir := t.TempDir()
	if v.shards <= 1 {
		return run(t, m, v.options(base, dir))
	}
	res := runShardsIn(t, m, base, v, dir, nil)
	for i := 1; i < len(res); i++ {
		if diff := cmp.Diff(res[0], res[i], ignoreStore); diff != "" {
			t.Fatalf("%s: shard %d differs from shard 0:\n%s", v.name, i, diff)
		}
	}
	return res[0]
}

// runShardsIn runs the shards of v as goroutines in dir. ctxs, if given,
// are the shards' contexts.
func runShardsIn(t *testing.T, m Model, base Options, v diskVariant, dir string, ctxs []context.Context) []Result {
	t.Helper()
	res := make([]Result, v.shards)
	errs := make([]error, v.shards)
	var wg sync.WaitGroup
	for i := range v.shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opt := v.options(base, dir)
			opt.Shard = i
			ctx := context.Background()
			if ctxs != nil {
				ctx = ctxs[i]
			}
			res[i], errs[i] = Run(ctx, m, opt)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s shard %d: %v", v.name, i, err)
		}
	}
	return res
}

// TestDiskMetamorphic: every way of searching on disk gives the in-memory
// search's verdict, figures and counterexample, on runs that end in all
// the possible ways.
func TestDiskMetamorphic(t *testing.T) {
	walk := hashWalkModel(20011, -1)
	d, _, _ := refBFS(walk)
	type tc struct {
		name   string
		m      Model
		opt    Options
		shards bool // sharded variants apply
	}
	cases := []tc{
		{"walk", walk, Options{}, true},
		{"walk-violation", hashWalkModel(20011, 7777), Options{}, true},
		{"walk-maxstates", walk, Options{MaxStates: d / 2}, false},
		{"walk-maxdepth", walk, Options{MaxDepth: 5}, true},
		{"grid", gridModel(12, 9), Options{}, true},
		{"tree-deadlock", treeModel(9), Options{CheckDeadlock: true}, true},
		{"counter-inits", counterModel(12, 0, 0, 5, 7), Options{}, true},
	}
	if testtier.IsLong() {
		// Deep searches: many levels, barriers and checkpoints.
		cases = append(cases,
			tc{"walk-maxdepth-complete", walk, Options{MaxDepth: 1000}, true},
			tc{"grid-deep", gridModel(40, 30), Options{}, true},
			tc{"counter-deep", counterModel(50, 0, 0, 5, 7), Options{}, true},
			tc{"walk-large", hashWalkModel(200003, 177777), Options{}, true})
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := run(t, c.m, c.opt)
			t.Logf("%v distinct=%d generated=%d depth=%d reason=%q", want.Status, want.Distinct, want.Generated, want.Depth, want.Reason)
			for vi, v := range diskVariants {
				if v.shards > 1 && !c.shards {
					continue
				}
				// The default tier runs every variant on every other
				// case (each variant on several ends of a search).
				if !testtier.IsLong() && (ci+vi)%2 == 1 && c.name != "walk" {
					continue
				}
				got := runDisk(t, c.m, c.opt, v)
				if diff := cmp.Diff(want, got, ignoreStore); diff != "" {
					t.Errorf("%s differs from the search in memory:\n%s", v.name, diff)
				}
				if v.table > 0 && c.name == "walk" && got.Store.Exact {
					t.Errorf("%s: the table held everything; the test proves nothing", v.name)
				}
			}
		})
	}
}

// TestDiskResume interrupts a search on disk after each of several levels
// and resumes it, with other worker counts, demanding the figures of an
// uninterrupted search; a resumed finished search reports its result
// again.
func TestDiskResume(t *testing.T) {
	m := hashWalkModel(20011, 7777)
	want := run(t, m, Options{})
	for _, v := range []diskVariant{diskVariants[0], diskVariants[3]} {
		dir := t.TempDir()
		for stop := 2; ; stop += 3 {
			ctx, cancel := context.WithCancel(context.Background())
			opt := v.options(Options{Resume: stop > 2}, dir)
			opt.Workers = 1 + stop%3
			opt.Progress = func(s Stats) {
				if s.Depth >= stop {
					cancel()
				}
			}
			got, err := Run(ctx, m, opt)
			cancel()
			if err != nil {
				t.Fatalf("%s: stop at %d: %v", v.name, stop, err)
			}
			if got.Status != Unknown {
				if diff := cmp.Diff(want, got, ignoreStore); diff != "" {
					t.Fatalf("%s: resumed run differs:\n%s", v.name, diff)
				}
				again := run(t, m, v.options(Options{Resume: true}, dir))
				if !again.AlreadyFinished || got.AlreadyFinished {
					t.Fatalf("%s: AlreadyFinished %v for the finished run reported again, %v for the run that finished", v.name, again.AlreadyFinished, got.AlreadyFinished)
				}
				again.AlreadyFinished = false
				if diff := cmp.Diff(want, again, ignoreStore); diff != "" {
					t.Fatalf("%s: finished run reported again differs:\n%s", v.name, diff)
				}
				break
			}
			if got.Reason != "interrupted" {
				t.Fatalf("%s: %v %q", v.name, got.Status, got.Reason)
			}
		}
	}
}

// TestShardKilled interrupts one shard of a search in the middle of a
// level and restarts it while the others wait at the barrier: the result
// is the unsharded one.
func TestShardKilled(t *testing.T) {
	for _, m := range []Model{hashWalkModel(20011, -1), hashWalkModel(20011, 7777)} {
		want := run(t, m, Options{})
		for _, v := range []diskVariant{diskVariants[4], diskVariants[5]} {
			dir := t.TempDir()
			ctxs := make([]context.Context, v.shards)
			for i := range ctxs {
				ctxs[i] = context.Background()
			}
			victim, cancel := context.WithCancel(context.Background())
			ctxs[v.shards-1] = victim
			var once sync.Once
			base := Options{Progress: func(s Stats) {
				if s.Depth >= 6 {
					once.Do(cancel)
				}
			}}
			done := make(chan []Result)
			go func() {
				// The survivors; they wait for the victim's restart.
				survivors := v
				res := make([]Result, v.shards)
				var wg sync.WaitGroup
				for i := 0; i < v.shards-1; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						opt := survivors.options(Options{}, dir)
						opt.Shard = i
						r, err := Run(context.Background(), m, opt)
						if err != nil {
							t.Errorf("shard %d: %v", i, err)
						}
						res[i] = r
					}()
				}
				wg.Wait()
				done <- res
			}()
			opt := v.options(base, dir)
			opt.Shard = v.shards - 1
			first, err := Run(victim, m, opt)
			if err != nil {
				t.Fatal(err)
			}
			if first.Status != Unknown || first.Reason != "interrupted" {
				t.Fatalf("%s: the victim was not interrupted: %v %q", v.name, first.Status, first.Reason)
			}
			opt.Progress = nil
			last := run(t, m, opt)
			res := <-done
			res[v.shards-1] = last
			for i, r := range res {
				if diff := cmp.Diff(want, r, ignoreStore); diff != "" {
					t.Errorf("%s: shard %d differs from the search in memory:\n%s", v.name, i, diff)
				}
			}
		}
	}
}

// TestShardMismatch: a shard started with another model, shard count or
// fingerprint width than the search in its directory is refused.
func TestShardMismatch(t *testing.T) {
	m := gridModel(5, 5)
	dir := t.TempDir()
	v := diskVariant{name: "2", workers: 1, shards: 2}
	runShardsIn(t, m, Options{ModelID: "grid"}, v, dir, nil)
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{ModelID: "other"}, "checks"},
		{Options{ModelID: "grid", Fingerprint: 128}, "fingerprint"},
	} {
		opt := v.options(c.opt, dir)
		opt.Fingerprint = c.opt.Fingerprint
		_, err := Run(context.Background(), m, opt)
		if !errors.Is(err, ErrResumeMismatch) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v", c.opt, err)
		}
	}
	opt := v.options(Options{ModelID: "grid"}, dir)
	opt.Shards = 3
	if _, err := Run(context.Background(), m, opt); !errors.Is(err, ErrResumeMismatch) {
		t.Errorf("3 shards: %v", err)
	}
	// Format 1 directories are refused with a clear message.
	old := t.TempDir()
	os.WriteFile(filepath.Join(old, "checkpoint.json"), []byte(`{"format":1}`), 0o644)
	_, err := Run(context.Background(), m, Options{Dir: old, Resume: true})
	if !errors.Is(err, ErrResumeMismatch) || !strings.Contains(err.Error(), "another version") {
		t.Errorf("format 1: %v", err)
	}
}

// TestDiskFiles: what a finished search on disk leaves: links and runs,
// no level, fingerprint or exchange files.
func TestDiskFiles(t *testing.T) {
	dir := t.TempDir()
	res := run(t, gridModel(30, 30), Options{Dir: dir})
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	for _, n := range names {
		if strings.HasPrefix(n, "fps-") || strings.HasPrefix(n, "level-") {
			t.Errorf("%s left behind", n)
		}
	}
	if res.Store.VisitedDiskBytes == 0 || res.Store.LinkDiskBytes == 0 || res.Store.FrontierStates == 0 {
		t.Errorf("store figures %+v", res.Store)
	}
	t.Log(fmt.Sprint(names))
}

// TestShardWaiting: a shard whose peer never comes says, at the barrier,
// which shard it waits for (Options.Waiting), and stops when cancelled.
func TestShardWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []int
	opt := diskVariant{name: "alone", workers: 1, shards: 2}.options(Options{ModelID: "grid"}, t.TempDir())
	opt.WaitingEvery = 20 * time.Millisecond
	opt.Waiting = func(depth int, missing []int, waited time.Duration) {
		if got == nil {
			got = append([]int{}, missing...)
		}
		cancel()
	}
	_, err := Run(ctx, gridModel(5, 5), opt)
	if !errors.Is(err, context.Canceled) && err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !slices.Equal(got, []int{1}) {
		t.Fatalf("waiting for %v, want shard 1", got)
	}
}

// TestShardTimeout: shards waiting at a barrier for a shard that stopped
// (here: it was given --max-depth 3 and ended there, so it never reaches
// level 4) give up after ShardTimeout with a *ShardTimeoutError naming
// it and the level; the directory is resumable, and all three shards
// started again finish with the figures of one process.
func TestShardTimeout(t *testing.T) {
	m := gridModel(6, 6)
	want := run(t, m, Options{Workers: 1})
	dir := t.TempDir()
	v := diskVariant{name: "shards=3", workers: 1, shards: 3}
	errs := make([]error, v.shards)
	var wg sync.WaitGroup
	for i := range v.shards {
		wg.Go(func() {
			opt := v.options(Options{ModelID: "grid"}, dir)
			opt.Shard, opt.ShardTimeout = i, 300*time.Millisecond
			if i == 2 {
				opt.MaxDepth = 3
			}
			_, errs[i] = Run(context.Background(), m, opt)
		})
	}
	wg.Wait()
	if errs[2] != nil {
		t.Fatalf("shard 2, bounded at depth 3: %v", errs[2])
	}
	for i := range 2 {
		var te *ShardTimeoutError
		if !errors.As(errs[i], &te) {
			t.Fatalf("shard %d: %v, want a ShardTimeoutError", i, errs[i])
		}
		if !slices.Equal(te.Missing, []int{2}) || te.Depth != 4 || te.Phase != "expanded" || te.Shards != 3 {
			t.Errorf("shard %d: %+v, want shard 2 missing at level 4, expanded", i, *te)
		}
		if msg := te.Error(); !strings.Contains(msg, "shard 3/3 did not reach level 4") {
			t.Errorf("shard %d: message %q", i, msg)
		}
	}
	res := runShardsIn(t, m, Options{ModelID: "grid"}, v, dir, nil)
	for i, r := range res {
		if diff := cmp.Diff(want, r, ignoreStore); diff != "" {
			t.Errorf("shard %d resumed differs from one process:\n%s", i, diff)
		}
	}
}

// TestShardExchangeStats: each shard counts what it sent to the others
// (never more than the successors generated, at least a fingerprint's
// worth of bytes each) and the levels it took part in, one per BFS
// level; a search of one process reports none.
func TestShardExchangeStats(t *testing.T) {
	m := gridModel(6, 6)
	v := diskVariant{name: "shards=3", workers: 1, shards: 3}
	res := runShardsIn(t, m, Options{ModelID: "grid"}, v, t.TempDir(), nil)
	var sent int64
	for i, r := range res {
		x := r.Store.Exchange
		if x.Levels != r.Depth || x.SentRecords == 0 || x.SentBytes < x.SentRecords*8 {
			t.Errorf("shard %d: %+v for a search of depth %d", i, x, r.Depth)
		}
		sent += x.SentRecords
	}
	if sent > res[0].Generated {
		t.Errorf("the shards sent %d successors, more than the %d generated", sent, res[0].Generated)
	}
	one := runDisk(t, m, Options{ModelID: "grid"}, diskVariant{name: "one", workers: 1})
	if one.Store.Exchange != (ExchangeStats{}) {
		t.Errorf("one process: %+v", one.Store.Exchange)
	}
}
