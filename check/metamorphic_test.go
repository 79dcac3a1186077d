package check

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
)

// sameResult compares results by verdict, figures and counterexample:
// not by the store's own figures, the fingerprint width or the time.
var sameResult = cmp.Options{
	cmpopts.IgnoreFields(explorer.Stats{}, "Elapsed"),
	cmpopts.IgnoreFields(explorer.Result{}, "Store", "Fingerprint"),
}

// runShards runs a search as n shards, one goroutine each, sharing dir,
// and returns each shard's report.
func runShards(t testing.TB, cfg Config, n int) []*Report {
	t.Helper()
	reps := make([]*Report, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cfg
			c.Shard = fmt.Sprintf("%d/%d", i+1, n)
			reps[i], errs[i] = Run(context.Background(), c)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d/%d: %v", i+1, n, err)
		}
	}
	return reps
}

// TestMetamorphic runs the same models in memory and on disk, with 1, 2
// and 4 workers, 64- and 128-bit fingerprints, and as 1 to 4 shards, and
// demands identical results: verdict, every count, depth, the violated
// invariant and the counterexample itself.
func TestMetamorphic(t *testing.T) {
	sets := []ModelConfig{
		{Params: spec.Params{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1}},
		{Params: spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, Variant: "no-recovery-fence"}},
		{Model: ModelV413, Params: spec.Params{Bookies: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1}},
	}
	if testtier.IsLong() {
		sets = append(sets, ModelConfig{Params: spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1}})
	}
	type variant struct {
		name    string
		store   string
		workers int
		fp      int
		shards  int
	}
	variants := []variant{
		{"mem/workers=1", StoreMem, 1, 0, 1},
		{"mem/workers=2", StoreMem, 2, 0, 1},
		{"mem/workers=4/fp=128", StoreMem, 4, 128, 1},
		{"badger/workers=1/fp=64", StoreBadger, 1, 64, 1},
		{"badger/workers=2", StoreBadger, 2, 0, 1},
		{"badger/workers=4/fp=128", StoreBadger, 4, 128, 1},
		{"badger/shards=3/fp=64", StoreBadger, 2, 64, 3},
		{"badger/shards=2", StoreBadger, 1, 0, 2},
	}
	for k, p := range sets {
		var want *Report
		var wantName string
		for i, v := range variants {
			// The default tier runs every variant on the small set and
			// four on the larger ones (a violation, shards included).
			if k > 0 && !testtier.IsLong() && i%2 == 1 {
				continue
			}
			cfg := Config{ModelConfig: p, Parallel: Parallel{Workers: v.workers}}
			cfg.Fingerprint = v.fp
			if v.store == StoreBadger {
				cfg.Store, cfg.Dir, cfg.Memory = StoreBadger, t.TempDir(), 160<<20
			}
			var got *Report
			if v.shards > 1 {
				reps := runShards(t, cfg, v.shards)
				for i, r := range reps[1:] {
					if diff := cmp.Diff(reps[0].Result, r.Result, sameResult); diff != "" {
						t.Errorf("%s %s: shard %d differs from shard 1:\n%s", p.Describe(), v.name, i+2, diff)
					}
				}
				got = reps[0]
			} else {
				var err error
				if got, err = Run(context.Background(), cfg); err != nil {
					t.Fatalf("%s %s: %v", p.Describe(), v.name, err)
				}
			}
			if want == nil {
				want, wantName = got, v.name
				t.Logf("%s: %v, %d distinct, %d generated, depth %d", p.Describe(), got.Status, got.Distinct, got.Generated, got.Depth)
				continue
			}
			if diff := cmp.Diff(want.Result, got.Result, sameResult); diff != "" {
				t.Errorf("%s: %s differs from %s:\n%s", p.Describe(), v.name, wantName, diff)
			}
		}
	}
}

// TestPORMetamorphic: a search with --por gives the same result (every
// count, the depth, the verdict and the counterexample) with 1 and 2
// workers, in memory and on disk, with and without symmetry in each. The
// default tier runs the four on the small lossy model and two on the
// larger ones (1 and 2 workers, one in memory and one on disk).
func TestPORMetamorphic(t *testing.T) {
	reliable := spec.Params{Bookies: 3, Clients: 2, Ensemble: 3, WriteQuorum: 3, AckQuorum: 2, Entries: 1, Inflight: 1, ReliableNetwork: true}
	lossy := spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1}
	// AutoRecovery's graph has cycles: the cycle proviso's choice must not
	// depend on the search order either.
	ar := spec.Params{Bookies: 3, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, ReliableNetwork: true,
		DiskLoss: 1, AutoRecovery: true}
	for k, mc := range []ModelConfig{
		{Params: ar, POR: true, Symmetry: spec.Symmetry{Bookies: true}},
		{Params: reliable, POR: true},
		{Params: reliable, POR: true, Symmetry: spec.Symmetry{Bookies: true, Clients: true}},
		{Params: lossy, POR: true, Invariants: []string{"EntriesReachWriteQuorum"}},
		{Params: lossy, POR: true, Invariants: []string{"EntriesReachWriteQuorum"}, Symmetry: spec.Symmetry{Bookies: true, Clients: true}},
	} {
		var first *Report
		for si, store := range []string{StoreMem, StoreBadger} {
			for _, workers := range []int{1, 2} {
				if k < 3 && !testtier.IsLong() && (si+workers+k)%2 == 0 { // k >= 3: the lossy model
					continue
				}
				cfg := Config{ModelConfig: mc, Parallel: Parallel{Workers: workers}}
				if store == StoreBadger {
					cfg.Store, cfg.Dir, cfg.Memory = StoreBadger, t.TempDir(), 160<<20
				}
				rep, err := Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if rep.Reduction == nil || rep.Reduction.States == 0 {
					t.Fatalf("%s: no reduction reported", mc.Describe())
				}
				if first == nil {
					first = rep
					continue
				}
				if diff := cmp.Diff(first.Result, rep.Result, sameResult); diff != "" {
					t.Errorf("%s --symmetry %v, store %s, %d workers: differs from the first run:\n%s", mc.Describe(), mc.Symmetry, store, workers, diff)
				}
			}
		}
		t.Logf("%s --symmetry %v --por: %s, %d states", mc.Describe(), mc.Symmetry, first.Status, first.Distinct)
	}
}
