package liveness

import (
	"context"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
)

// torus is k counters modulo n, each step incrementing one of them (kind
// i+1): n^k states, k edges each, one strongly connected graph. States are
// padded to pad bytes, the size of a small protocol state.
type torus struct{ k, n, pad int }

func (m torus) Init(emit func(enc, key []byte))       { emit(make([]byte, m.pad), nil) }
func (m torus) NewExpander() explorer.Expander        { return &torusExp{m: m} }
func (m torus) DescribeAction(explorer.Action) string { return "" }

type torusExp struct {
	m        torus
	cur, buf []byte
}

func (e *torusExp) Load(enc []byte) error { e.cur = append(e.cur[:0], enc...); return nil }
func (e *torusExp) Check() string         { return "" }
func (e *torusExp) CheckTerminal() string { return "" }
func (e *torusExp) Successors(emit func(explorer.Action, []byte, []byte)) {
	for i := 0; i < e.m.k; i++ {
		e.buf = append(e.buf[:0], e.cur...)
		e.buf[i] = byte((int(e.buf[i]) + 1) % e.m.n)
		emit(explorer.Action{Kind: uint8(i + 1)}, e.buf, nil)
	}
}

// BenchmarkTorus builds the graph of a 4-counter torus (810,000 states,
// 3.24M edges, 64-byte states) and analyses one property pending
// everywhere under weak fairness of each action: the whole graph is one
// fair component.
func BenchmarkTorus(b *testing.B) {
	m := torus{k: 4, n: 30, pad: 64}
	var fr []Fairness
	for i := 1; i <= m.k; i++ {
		fr = append(fr, Fairness{Name: "inc", Kinds: []uint8{uint8(i)}})
	}
	var res *Result
	for b.Loop() {
		var err error
		res, err = Check(context.Background(), m, Options{Props: 1, Pending: func(explorer.Expander) uint64 { return 1 }, Fair: fr})
		if err != nil {
			b.Fatal(err)
		}
		if res.Status != explorer.Violation || res.States != 810000 {
			b.Fatalf("%v, %d states", res.Status, res.States)
		}
	}
	b.ReportMetric(float64(res.States)/res.Build.Seconds(), "states/s")
	b.ReportMetric(float64(res.States)/res.Elapsed.Seconds(), "states/s-total")
	b.ReportMetric(res.BytesPerState, "B/state")
	b.ReportMetric(res.BytesPerEdge, "B/edge")
	b.ReportMetric(float64(res.PeakBytes)/(1<<20), "MiB-peak")
	b.ReportMetric(res.Analysis.Seconds(), "s-analysis")
}
