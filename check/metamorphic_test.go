package check

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
)

// TestMetamorphic runs the same models with 1, 2 and 4 workers through the
// in-memory and the Badger store and demands identical results: verdict,
// every count, depth, the violated invariant and the counterexample itself.
func TestMetamorphic(t *testing.T) {
	sets := []ModelConfig{
		{Params: spec.Params{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1}},
		{Params: spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, Variant: "no-recovery-fence"}},
		{Model: ModelV413, Params: spec.Params{Bookies: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1}},
	}
	if testtier.IsLong() {
		sets = append(sets, ModelConfig{Params: spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1}})
	}
	for _, p := range sets {
		var want *Report
		var wantName string
		for _, store := range []string{"mem", "badger"} {
			for _, workers := range []int{1, 2, 4} {
				name := fmt.Sprintf("%s/workers=%d", store, workers)
				cfg := Config{ModelConfig: p, Parallel: Parallel{Workers: workers}}
				if store == "badger" {
					cfg.Store, cfg.Dir, cfg.Memory = StoreBadger, t.TempDir(), 160<<20
				}
				got, err := Run(context.Background(), cfg)
				if err != nil {
					t.Fatalf("%s %s: %v", p.Describe(), name, err)
				}
				got.Elapsed = 0
				if want == nil {
					want, wantName = got, name
					t.Logf("%s: %v, %d distinct, %d generated, depth %d", p.Describe(), got.Status, got.Distinct, got.Generated, got.Depth)
					continue
				}
				if !reflect.DeepEqual(got.Result, want.Result) {
					t.Errorf("%s: %s differs from %s:\n got %+v\nwant %+v", p.Describe(), name, wantName, got.Result.Stats, want.Result.Stats)
				}
			}
		}
	}
}
