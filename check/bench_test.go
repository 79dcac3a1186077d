package check

import (
	"context"
	"fmt"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
)

// BenchmarkCheck runs whole searches of reference models and reports
// distinct states per second and bytes allocated per distinct state.
func BenchmarkCheck(b *testing.B) {
	models := []struct {
		name string
		p    spec.Params
	}{
		{"b2-w2-a1", spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1}},
		{"b2-w2-a2", spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1}},
	}
	for _, mc := range models {
		// shards2: two shards (one worker each per worker count, so the
		// same cores) sharing a directory, in one process.
		for _, store := range []string{"mem", "badger", "shards2"} {
			for _, workers := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/store=%s/workers=%d", mc.name, store, workers), func(b *testing.B) {
					b.ReportAllocs()
					var distinct int64
					var bytesPerState float64
					var st explorer.StoreStats
					for i := 0; i < b.N; i++ {
						cfg := Config{ModelConfig: ModelConfig{Params: mc.p}, Parallel: Parallel{Workers: workers}}
						if store != "mem" {
							cfg.Store, cfg.Dir = StoreBadger, b.TempDir()
						}
						var rep *Report
						var err error
						if store == "shards2" {
							cfg.Workers = max(1, workers/2)
							rep = runShards(b, cfg, 2)[0]
						} else {
							rep, err = Run(context.Background(), cfg)
						}
						if err != nil || rep.Status != explorer.OK {
							b.Fatal(err, rep.Status)
						}
						distinct = rep.Distinct
						bytesPerState = rep.StoreBytesPerState
						st = rep.Store
					}
					b.ReportMetric(float64(distinct)*float64(b.N)/b.Elapsed().Seconds(), "states/s")
					b.ReportMetric(bytesPerState, "store-bytes/state")
					if st.VisitedDiskBytes > 0 {
						b.ReportMetric(float64(st.VisitedDiskBytes)/float64(distinct), "visited-disk-bytes/state")
						b.ReportMetric(float64(st.FrontierBytes)/float64(max(st.FrontierStates, 1)), "frontier-disk-bytes/state")
					}
				})
			}
		}
	}
}

// sampleStates collects up to n encoded states of m by a short BFS, and
// the expander that found them.
func sampleStates(tb testing.TB, m explorer.Model, n int) ([][]byte, explorer.Expander) {
	var encs [][]byte
	seen := map[string]bool{}
	m.Init(func(enc, _ []byte) { encs = append(encs, append([]byte(nil), enc...)); seen[string(enc)] = true })
	e := m.NewExpander()
	for i := 0; i < len(encs) && len(encs) < n; i++ {
		if err := e.Load(encs[i]); err != nil {
			tb.Fatal(err)
		}
		e.Successors(func(_ explorer.Action, enc, _ []byte) {
			if !seen[string(enc)] {
				seen[string(enc)] = true
				encs = append(encs, append([]byte(nil), enc...))
			}
		})
	}
	return encs, e
}

// BenchmarkExpand measures successor generation alone (decode, invariants,
// successors, encode) on the states of a model, for each model.
func BenchmarkExpand(b *testing.B) {
	for _, mc := range []struct {
		name string
		c    ModelConfig
	}{
		{"current/b2-w2-a1", ModelConfig{Params: spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1}}},
		{"current-java/b2-w2-a1", ModelConfig{Params: spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, AddPath: spec.AddPathJava}}},
		{"v4.13/shipped", ModelConfig{Model: ModelV413, Params: spec.Params{Bookies: 3, WriteQuorum: 3, AckQuorum: 2, Entries: 1}}},
	} {
		b.Run(mc.name, func(b *testing.B) {
			mc.c.EnsureDefaults()
			m, err := bind(mc.c)
			if err != nil {
				b.Fatal(err)
			}
			encs, e := sampleStates(b, m, 50000)
			b.ReportAllocs()
			b.ResetTimer()
			succ := 0
			count := func(explorer.Action, []byte, []byte) { succ++ }
			for i := 0; i < b.N; i++ {
				enc := encs[i%len(encs)]
				if err := e.Load(enc); err != nil {
					b.Fatal(err)
				}
				e.Check()
				e.Successors(count)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "states/s")
			b.ReportMetric(float64(succ)/float64(b.N), "successors/state")
		})
	}
}

// BenchmarkPOR runs whole searches with and without --por, one worker,
// and reports distinct states, the time per distinct state and the
// whole search's time (docs/performance.md, Partial-order reduction).
func BenchmarkPOR(b *testing.B) {
	reliable := spec.Params{Bookies: 3, Clients: 2, Ensemble: 3, WriteQuorum: 3, AckQuorum: 2, Entries: 2, Inflight: 1, ReliableNetwork: true}
	tlc := spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1}
	both := spec.Symmetry{Bookies: true, Clients: true}
	models := []struct {
		name string
		mc   ModelConfig
	}{
		{"reliable-b3-w3-a2-e2", ModelConfig{Params: reliable}},
		{"reliable-b3-w3-a2-e2-terminal", ModelConfig{Params: reliable, Invariants: []string{"none"}}},
		{"reliable-b3-w3-a2-e2-symmetry", ModelConfig{Params: reliable, Symmetry: both}},
		{"tlc-b2-w2-a1", ModelConfig{Params: tlc}},
		{"tlc-b2-w2-a1-terminal", ModelConfig{Params: tlc, Invariants: []string{"none"}}},
	}
	for _, m := range models {
		for _, por := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/por=%v", m.name, por), func(b *testing.B) {
				mc := m.mc
				mc.POR = por
				var rep *Report
				for i := 0; i < b.N; i++ {
					var err error
					rep, err = Run(context.Background(), Config{ModelConfig: mc, Parallel: Parallel{Workers: 1}})
					if err != nil || rep.Status != explorer.OK {
						b.Fatal(err, rep.Status)
					}
				}
				perState := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(rep.Distinct)
				b.ReportMetric(float64(rep.Distinct), "states")
				b.ReportMetric(perState, "ns/state")
				b.ReportMetric(1e9/perState, "states/s")
			})
		}
	}
}
