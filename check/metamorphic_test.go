package check

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/state"
)

// TestMetamorphic runs the same models with 1, 2 and 4 workers through the
// in-memory and the Badger store and demands identical results: verdict,
// every count, depth, the violated invariant and the counterexample itself.
func TestMetamorphic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 18 searches")
	}
	sets := []spec.Params{
		{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1},
		{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1},
		{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, Variant: "no-recovery-fence"},
	}
	for _, p := range sets {
		var want *Report
		var wantName string
		for _, store := range []string{"mem", "badger"} {
			for _, workers := range []int{1, 2, 4} {
				name := fmt.Sprintf("%s/workers=%d", store, workers)
				opt := explorer.Options{Workers: workers}
				if store == "badger" {
					dir := t.TempDir()
					bv, err := state.OpenBadgerVisited(state.BadgerOptions{Dir: filepath.Join(dir, "visited"), MemoryBudget: 64 << 20})
					if err != nil {
						t.Fatal(err)
					}
					opt.Visited, opt.Dir, opt.ModelID = bv, dir, p.String()
					defer bv.Close()
				}
				got, err := Run(context.Background(), Config{Params: p, Search: opt})
				if err != nil {
					t.Fatalf("%v %s: %v", p, name, err)
				}
				got.Elapsed = 0
				if want == nil {
					want, wantName = got, name
					t.Logf("%v: %v, %d distinct, %d generated, depth %d", p, got.Status, got.Distinct, got.Generated, got.Depth)
					continue
				}
				if !reflect.DeepEqual(got.Result, want.Result) {
					t.Errorf("%v: %s differs from %s:\n got %+v\nwant %+v", p, name, wantName, got.Result.Stats, want.Result.Stats)
				}
			}
		}
	}
}
