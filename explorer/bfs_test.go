package explorer

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/state"
)

// ---- toy models -----------------------------------------------------------

// funcModel adapts closures over a decoded []int64 state to Model.
type funcModel struct {
	name  string
	init  [][]int64
	next  func(s []int64, emit func(a Action, t []int64))
	check func(s []int64) string // nil = no invariants
	// terminal is checked on states without successors; nil = none.
	terminal func(s []int64) string
}

func (m *funcModel) Init(emit func(enc, key []byte)) {
	var buf []byte
	for _, s := range m.init {
		buf = encode(buf, s)
		emit(buf, nil)
	}
}

func (m *funcModel) NewExpander() Expander { return &funcExpander{m: m} }

func (m *funcModel) DescribeAction(a Action) string {
	return fmt.Sprintf("%s%d%v", m.name, a.Kind, a.Params)
}

// encode writes the length and the values zig-zag encoded, over buf's
// storage.
func encode(buf []byte, s []int64) []byte {
	buf = binary.AppendUvarint(buf[:0], uint64(len(s)))
	for _, v := range s {
		buf = binary.AppendUvarint(buf, uint64(v<<1)^uint64(v>>63))
	}
	return buf
}

func decode(enc []byte, into []int64) ([]int64, error) {
	var r state.Reader
	r.Reset(enc)
	n := r.Uvarint()
	if n > 16 {
		return nil, errors.New("too long")
	}
	into = into[:0]
	for range n {
		u := r.Uvarint()
		into = append(into, int64(u>>1)^-int64(u&1))
	}
	return into, r.Done()
}

type funcExpander struct {
	m    *funcModel
	cur  []int64
	buf  []byte
	emit func(Action, []byte, []byte)
	fn   func(a Action, t []int64)
}

func (e *funcExpander) Load(enc []byte) error {
	var err error
	e.cur, err = decode(enc, e.cur)
	return err
}

func (e *funcExpander) CheckTerminal() string {
	if e.m.terminal == nil {
		return ""
	}
	return e.m.terminal(e.cur)
}

func (e *funcExpander) Check() string {
	if e.m.check == nil {
		return ""
	}
	return e.m.check(e.cur)
}

func (e *funcExpander) Successors(emit func(a Action, enc, key []byte)) {
	e.emit = emit
	if e.fn == nil { // bound once: keeps the benchmark free of per-state closures
		e.fn = func(a Action, t []int64) {
			e.buf = encode(e.buf, t)
			e.emit(a, e.buf, nil)
		}
	}
	e.m.next(e.cur, e.fn)
}

func act(kind int) Action {
	a := Action{Kind: uint8(kind)}
	for i := range a.Params {
		a.Params[i] = -1
	}
	return a
}

// gridModel walks an n×m grid in four directions from (0,0).
// Distinct n*m, depth n+m-1, generated 1 + 2*(edges).
func gridModel(n, m int64) *funcModel {
	return &funcModel{
		name: "grid",
		init: [][]int64{{0, 0}},
		next: func(s []int64, emit func(Action, []int64)) {
			x, y := s[0], s[1]
			if x+1 < n {
				emit(act(0), []int64{x + 1, y})
			}
			if y+1 < m {
				emit(act(1), []int64{x, y + 1})
			}
			if x > 0 {
				emit(act(2), []int64{x - 1, y})
			}
			if y > 0 {
				emit(act(3), []int64{x, y - 1})
			}
		},
	}
}

// counterModel counts modulo k from the given initial values.
func counterModel(k int64, init ...int64) *funcModel {
	m := &funcModel{
		name: "counter",
		next: func(s []int64, emit func(Action, []int64)) {
			emit(act(0), []int64{(s[0] + 1) % k})
		},
	}
	for _, v := range init {
		m.init = append(m.init, []int64{v})
	}
	return m
}

// treeModel is a complete binary tree of depth d in heap numbering; its
// 2^(d-1) leaves have no successors.
func treeModel(d int) *funcModel {
	limit := int64(1) << d
	return &funcModel{
		name: "tree",
		init: [][]int64{{1}},
		next: func(s []int64, emit func(Action, []int64)) {
			if 2*s[0] < limit {
				emit(act(0), []int64{2 * s[0]})
				emit(act(1), []int64{2*s[0] + 1})
			}
		},
	}
}

// hashWalkModel: values mod p, three affine successors each. Levels grow
// quickly and are full of duplicates, so they span many chunks and
// batches; good for the metamorphic test and the benchmark.
func hashWalkModel(p int64, bad int64) *funcModel {
	m := &funcModel{
		name: "walk",
		init: [][]int64{{1}, {2}, {1}},
		next: func(s []int64, emit func(Action, []int64)) {
			v := s[0]
			emit(act(0), []int64{(v*3 + 1) % p})
			emit(act(1), []int64{(v*7 + 5) % p})
			emit(act(2), []int64{(v*v + 11) % p})
		},
	}
	if bad >= 0 {
		m.check = func(s []int64) string {
			if s[0] == bad {
				return "NotBad"
			}
			return ""
		}
	}
	return m
}

// ---- reference search -----------------------------------------------------

// refBFS is an obviously-correct (slow, map-based) BFS used as an oracle for
// complete searches: distinct, generated, depth.
func refBFS(m Model) (distinct, generated int64, depth int) {
	seen := map[string]bool{}
	var cur [][]byte
	m.Init(func(enc, _ []byte) {
		generated++
		if !seen[string(enc)] {
			seen[string(enc)] = true
			cur = append(cur, append([]byte(nil), enc...))
		}
	})
	e := m.NewExpander()
	for len(cur) > 0 {
		depth++
		var next [][]byte
		for _, s := range cur {
			if err := e.Load(s); err != nil {
				panic(err)
			}
			e.Successors(func(_ Action, enc, _ []byte) {
				generated++
				if !seen[string(enc)] {
					seen[string(enc)] = true
					next = append(next, append([]byte(nil), enc...))
				}
			})
		}
		cur = next
	}
	return int64(len(seen)), generated, depth
}

// checkTrace verifies that tr is a path of m: it starts in an initial state
// and every step is an emitted successor of the previous one, with the
// recorded action.
func checkTrace(t *testing.T, m Model, tr []Step) {
	t.Helper()
	if len(tr) == 0 {
		t.Fatal("empty trace")
	}
	if !tr[0].Initial || tr[0].Action != (Action{}) {
		t.Errorf("trace[0] = %+v, want an initial step", tr[0])
	}
	isInit := false
	m.Init(func(enc, _ []byte) { isInit = isInit || string(enc) == string(tr[0].State) })
	if !isInit {
		t.Errorf("trace[0] is not an initial state")
	}
	e := m.NewExpander()
	for k := 1; k < len(tr); k++ {
		if tr[k].Initial {
			t.Errorf("trace[%d].Initial set", k)
		}
		if err := e.Load(tr[k-1].State); err != nil {
			t.Fatal(err)
		}
		ok := false
		e.Successors(func(a Action, enc, _ []byte) {
			ok = ok || (a == tr[k].Action && string(enc) == string(tr[k].State))
		})
		if !ok {
			t.Errorf("trace[%d] (%s) is not a successor of trace[%d]", k, m.DescribeAction(tr[k].Action), k-1)
		}
	}
}

func decodeTrace(t *testing.T, tr []Step) [][]int64 {
	t.Helper()
	var out [][]int64
	for _, st := range tr {
		s, err := decode(st.State, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func run(t *testing.T, m Model, opt Options) Result {
	t.Helper()
	res, err := Run(context.Background(), m, opt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func wantStats(t *testing.T, res Result, status Status, distinct, generated int64, depth int) {
	t.Helper()
	if res.Status != status || res.Distinct != distinct || res.Generated != generated || res.Depth != depth {
		t.Errorf("got %v distinct=%d generated=%d depth=%d (reason %q); want %v %d %d %d",
			res.Status, res.Distinct, res.Generated, res.Depth, res.Reason, status, distinct, generated, depth)
	}
}

// ---- tests ----------------------------------------------------------------

func TestGrid(t *testing.T) {
	for _, c := range []struct{ n, m int64 }{{1, 1}, {1, 7}, {3, 4}, {10, 10}, {40, 25}} {
		for _, workers := range []int{1, 3} {
			res := run(t, gridModel(c.n, c.m), Options{Workers: workers})
			edges := (c.n-1)*c.m + c.n*(c.m-1)
			wantStats(t, res, OK, c.n*c.m, 1+2*edges, int(c.n+c.m-1))
			if res.Queue != 0 || res.Violation != nil || res.Reason != "" {
				t.Errorf("complete result has %+v", res)
			}
		}
	}
}

func TestCounter(t *testing.T) {
	for _, k := range []int64{1, 2, 17, 1000} {
		res := run(t, counterModel(k, 0), Options{Workers: 2})
		wantStats(t, res, OK, k, 1+k, int(k))
	}
	// Duplicate initial states count as generated, not distinct; the
	// depth is measured from the nearest initial state.
	res := run(t, counterModel(10, 0, 0, 5, 5), Options{})
	wantStats(t, res, OK, 10, 4+10, 5)
}

func TestReferenceBFS(t *testing.T) {
	for _, m := range []*funcModel{gridModel(7, 9), treeModel(6), hashWalkModel(10007, -1), counterModel(5, 3, 1, 3)} {
		d, g, depth := refBFS(m)
		for _, workers := range []int{1, 2, 5} {
			res := run(t, m, Options{Workers: workers})
			wantStats(t, res, OK, d, g, depth)
		}
	}
}

func TestTreeDeadlock(t *testing.T) {
	const d = 6
	m := treeModel(d)
	// Without CheckDeadlock leaves are fine.
	res := run(t, m, Options{})
	wantStats(t, res, OK, 1<<d-1, 1<<d-1, d)

	res = run(t, m, Options{CheckDeadlock: true, Workers: 3})
	// Reported with the figures of the search before the leaf level was
	// expanded: all 2^d-1 states known, generated likewise.
	wantStats(t, res, Violation, 1<<d-1, 1<<d-1, d)
	v := res.Violation
	if v == nil || !v.Deadlock || v.Invariant != "Deadlock" {
		t.Fatalf("violation = %+v", v)
	}
	if len(v.Trace) != d {
		t.Fatalf("trace length %d, want %d", len(v.Trace), d)
	}
	checkTrace(t, m, v.Trace)
	// The first leaf in level order is the leftmost: 1, 2, 4, ...
	for k, s := range decodeTrace(t, v.Trace) {
		if s[0] != 1<<k {
			t.Errorf("trace[%d] = %v, want %d", k, s, 1<<k)
		}
	}
	if got := m.DescribeAction(v.Trace[1].Action); got != fmt.Sprint("tree0", act(0).Params) {
		t.Errorf("action = %q", got)
	}
}

func TestInvariantViolation(t *testing.T) {
	const k = 6 // x+y == k first happens at depth k+1
	m := gridModel(10, 10)
	m.check = func(s []int64) string {
		if s[0]+s[1] >= k {
			return "Near"
		}
		return ""
	}
	base := run(t, gridModel(10, 10), Options{MaxDepth: k}) // figures before level k+1 is expanded
	for _, workers := range []int{1, 4} {
		res := run(t, m, Options{Workers: workers})
		if res.Status != Violation || res.Violation.Invariant != "Near" || res.Violation.Deadlock {
			t.Fatalf("got %+v", res)
		}
		if res.Depth != k+1 || len(res.Violation.Trace) != k+1 {
			t.Errorf("depth %d, trace length %d, want %d", res.Depth, len(res.Violation.Trace), k+1)
		}
		checkTrace(t, m, res.Violation.Trace)
		tr := decodeTrace(t, res.Violation.Trace)
		for i, s := range tr { // shortest: each step moves one cell away from the origin
			if s[0]+s[1] != int64(i) {
				t.Errorf("trace[%d] = %v is not at distance %d", i, s, i)
			}
		}
		// First in level order: the level-(k+1) states are discovered
		// right-first from the previous level, so (k,0) comes first.
		if last := tr[len(tr)-1]; last[0] != k || last[1] != 0 {
			t.Errorf("bad state = %v, want [%d 0]", last, k)
		}
		// Level k+1 was found but not expanded.
		if res.Distinct != base.Distinct+k+1 {
			t.Errorf("distinct = %d, want %d", res.Distinct, base.Distinct+k+1)
		}
	}

	// An initial state may violate: trace of length 1.
	m2 := counterModel(5, 3)
	m2.check = func(s []int64) string { return map[bool]string{true: "Small"}[s[0] == 3] }
	res := run(t, m2, Options{})
	if res.Status != Violation || len(res.Violation.Trace) != 1 || !res.Violation.Trace[0].Initial {
		t.Errorf("got %+v", res)
	}
	wantStats(t, res, Violation, 1, 1, 1)
}

func TestMaxDepth(t *testing.T) {
	m := gridModel(5, 5) // depth 9
	res := run(t, m, Options{MaxDepth: 4})
	wantStats(t, res, Unknown, 1+2+3+4, res.Generated, 4)
	if res.Reason != "max depth 4 reached" {
		t.Errorf("reason = %q", res.Reason)
	}
	// Exactly deep enough: the last level is expanded, nothing new, OK.
	full := run(t, m, Options{})
	for _, d := range []int{9, 10, 100} {
		res := run(t, m, Options{MaxDepth: d})
		if diff := cmp.Diff(full, res, cmpopts.IgnoreFields(Stats{}, "Elapsed")); diff != "" {
			t.Errorf("MaxDepth %d (-full +got):\n%s", d, diff)
		}
	}
	res = run(t, m, Options{MaxDepth: 8})
	if res.Status != Unknown || res.Depth != 8 || res.Distinct != 24 {
		t.Errorf("MaxDepth 8: %+v", res)
	}
	// Leaves have no successors, so a tree is complete at its own depth.
	res = run(t, treeModel(4), Options{MaxDepth: 4})
	wantStats(t, res, OK, 15, 15, 4)
	// A cycle back into known states is not new either.
	res = run(t, counterModel(6, 0), Options{MaxDepth: 6})
	wantStats(t, res, OK, 6, 7, 6)
	// Invariants are still checked at the bound.
	m3 := treeModel(4)
	m3.check = func(s []int64) string { return map[bool]string{true: "NotTen"}[s[0] == 10] }
	res = run(t, m3, Options{MaxDepth: 4})
	if res.Status != Violation || len(res.Violation.Trace) != 4 {
		t.Errorf("violation at the bound: %+v", res)
	}
}

func TestMaxStates(t *testing.T) {
	m := gridModel(10, 10)
	for _, n := range []int64{1, 2, 50, 99, 100} {
		for _, workers := range []int{1, 4} {
			res := run(t, m, Options{MaxStates: n, Workers: workers})
			if res.Status != Unknown || res.Distinct != n || res.Reason != fmt.Sprintf("max states %d reached", n) {
				t.Errorf("MaxStates %d: %+v", n, res)
			}
			if res.Queue <= 0 {
				t.Errorf("MaxStates %d: queue %d", n, res.Queue)
			}
		}
	}
	res := run(t, m, Options{MaxStates: 101})
	wantStats(t, res, OK, 100, 1+2*180, 19)
	// Stopping inside the initial states.
	res = run(t, counterModel(10, 0, 0, 5, 7), Options{MaxStates: 2})
	wantStats(t, res, Unknown, 2, 3, 1)
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, gridModel(10, 10), Options{})
	if err != nil || res.Status != Unknown || res.Reason != "interrupted" {
		t.Errorf("pre-cancelled: %+v, %v", res, err)
	}

	// Cancel from the progress callback after level 5: the search stops
	// at the next chunk boundary with partial stats.
	for _, workers := range []int{1, 4} {
		ctx, cancel = context.WithCancel(context.Background())
		levels := 0
		res, err = Run(ctx, gridModel(30, 30), Options{Workers: workers, Progress: func(s Stats) {
			if levels++; levels == 5 {
				cancel()
			}
		}})
		cancel()
		if err != nil || res.Status != Unknown || res.Reason != "interrupted" {
			t.Fatalf("cancelled: %+v, %v", res, err)
		}
		if res.Depth != 5 || res.Distinct != 15 || res.Queue != 5 {
			t.Errorf("partial stats: %+v", res.Stats)
		}
	}
}

func TestProgress(t *testing.T) {
	var calls []Stats
	res := run(t, gridModel(6, 4), Options{Progress: func(s Stats) { calls = append(calls, s) }})
	if len(calls) != res.Depth+1 {
		t.Fatalf("%d progress calls, want %d", len(calls), res.Depth+1)
	}
	for i, s := range calls {
		if s.Depth != min(i+1, res.Depth) {
			t.Errorf("call %d: depth %d", i, s.Depth)
		}
	}
	last := calls[len(calls)-1]
	if last.Distinct != res.Distinct || last.Generated != res.Generated || last.Queue != 0 {
		t.Errorf("last progress %+v, result %+v", last, res.Stats)
	}

	// ProgressEvery fires inside a large level.
	n := 0
	run(t, hashWalkModel(200003, -1), Options{Workers: 1, ProgressEvery: time.Nanosecond, Progress: func(Stats) { n++ }})
	d, _, depth := refBFS(hashWalkModel(200003, -1))
	if n <= depth+1 || d < 10000 {
		t.Errorf("%d progress calls for depth %d", n, depth)
	}
}

// TestWorkersMetamorphic demands identical results, traces included, for
// every worker count, on runs that stop in all the possible ways.
func TestWorkersMetamorphic(t *testing.T) {
	type tc struct {
		name string
		m    Model
		opt  Options
	}
	walk := hashWalkModel(100003, -1)
	d, _, _ := refBFS(walk)
	cases := []tc{
		{"walk", walk, Options{}},
		{"walk-violation", hashWalkModel(100003, 77777), Options{}},
		{"walk-maxstates", walk, Options{MaxStates: d / 2}},
		{"walk-maxdepth", walk, Options{MaxDepth: 5}},
		{"grid", gridModel(50, 30), Options{}},
		{"tree-deadlock", treeModel(12), Options{CheckDeadlock: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var first Result
			// Up to maxPipelineWorkers a level is a pipeline; 16 expand in batches.
			for i, workers := range []int{1, 2, 4, 8, 16} {
				opt := c.opt
				opt.Workers = workers
				res := run(t, c.m, opt)
				if i == 0 {
					first = res
					t.Logf("%v distinct=%d generated=%d depth=%d reason=%q", res.Status, res.Distinct, res.Generated, res.Depth, res.Reason)
					if res.Violation != nil {
						checkTrace(t, c.m, res.Violation.Trace)
					}
					continue
				}
				if diff := cmp.Diff(first, res, ignoreStore); diff != "" {
					t.Errorf("workers %d differs from 1 (-1 +%d):\n%s", workers, workers, diff)
				}
			}
		})
	}
}

// ignoreStore compares results by verdict, figures and trace alone (a
// panic's stack is not part of the verdict).
var ignoreStore = cmp.Options{cmpopts.IgnoreFields(Stats{}, "Elapsed"), cmpopts.IgnoreFields(Result{}, "Store", "Fingerprint"),
	cmpopts.IgnoreFields(ModelError{}, "Stack")}

// appendModel is a funcModel whose expander encodes successors straight
// into the search's arena (AppendingExpander).
type appendModel struct{ *funcModel }

func (m appendModel) NewExpander() Expander { return appendExpander{&funcExpander{m: m.funcModel}} }

type appendExpander struct{ *funcExpander }

func (e appendExpander) SuccessorsAppend(buf *[]byte, emit func(a Action, off int)) {
	e.m.next(e.cur, func(a Action, t []int64) {
		off := len(*buf)
		*buf = append(*buf, encode(e.buf, t)...)
		emit(a, off)
	})
}

// TestAppendingExpander: a model that encodes into the arena gets the
// result, trace included, of the same model emitting its own encodings,
// on every worker count and every way a search stops (at the depth bound
// the arena is given back for each successor already seen).
func TestAppendingExpander(t *testing.T) {
	walk := hashWalkModel(100003, -1)
	d, _, _ := refBFS(walk)
	cases := []struct {
		name string
		m    *funcModel
		opt  Options
	}{
		{"walk", walk, Options{}},
		{"walk-violation", hashWalkModel(100003, 77777), Options{}},
		{"walk-maxstates", walk, Options{MaxStates: d / 2}},
		{"walk-maxdepth", walk, Options{MaxDepth: 5}},
		{"tree-deadlock", treeModel(12), Options{CheckDeadlock: true}},
	}
	for _, c := range cases {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/%d", c.name, workers), func(t *testing.T) {
				opt := c.opt
				opt.Workers = workers
				want := run(t, c.m, opt)
				got := run(t, appendModel{c.m}, opt)
				if diff := cmp.Diff(want, got, ignoreStore); diff != "" {
					t.Errorf("appending expander differs (-emitting +appending):\n%s", diff)
				}
			})
		}
	}
}

type brokenModel struct{ *funcModel }

func (b brokenModel) NewExpander() Expander { return brokenExpander{b.funcModel.NewExpander()} }

type brokenExpander struct{ Expander }

func (brokenExpander) Load([]byte) error { return errors.New("boom") }

func TestErrors(t *testing.T) {
	if _, err := Run(context.Background(), nil, Options{}); err == nil {
		t.Error("nil model accepted")
	}
	_, err := Run(context.Background(), gridModel(2, 2), Options{MaxDepth: -1, MaxStates: -2})
	if err == nil || !strings.Contains(err.Error(), "MaxDepth") || !strings.Contains(err.Error(), "MaxStates") {
		t.Errorf("invalid options: %v", err)
	}
	for _, workers := range []int{1, 4} {
		_, err = Run(context.Background(), brokenModel{gridModel(2, 2)}, Options{Workers: workers})
		if err == nil || !strings.Contains(err.Error(), "boom") {
			t.Errorf("load error: %v", err)
		}
	}
	res := run(t, &funcModel{name: "empty"}, Options{})
	wantStats(t, res, OK, 0, 0, 0)
}

// failingExpander fails to load the states of a walk whose value is a
// multiple of every: a model that breaks in the middle of a level.
type failingModel struct {
	*funcModel
	every int64
}

func (m failingModel) NewExpander() Expander {
	return failingExpander{&funcExpander{m: m.funcModel}, m.every}
}

type failingExpander struct {
	*funcExpander
	every int64
}

func (e failingExpander) Load(enc []byte) error {
	if err := e.funcExpander.Load(enc); err != nil {
		return err
	}
	if e.cur[0]%e.every == 0 {
		return errors.New("boom")
	}
	return nil
}

// TestLevelStops: a search in memory stopped in the middle of a level of
// many chunks, by cancellation or by a model that fails, returns (no
// worker is left waiting for a turn) with the interrupted verdict or the
// error, on every worker count, pipelined or in batches.
func TestLevelStops(t *testing.T) {
	walk := hashWalkModel(100003, -1)
	for _, workers := range []int{1, 2, 4, 16} {
		ctx, cancel := context.WithCancel(context.Background())
		var calls atomic.Int64
		m := *walk
		m.next = func(s []int64, emit func(Action, []int64)) {
			if calls.Add(1) == 30000 {
				cancel()
			}
			walk.next(s, emit)
		}
		res, err := Run(ctx, &m, Options{Workers: workers})
		cancel()
		if err != nil || res.Status != Unknown || res.Reason != "interrupted" || res.Queue == 0 {
			t.Errorf("workers %d, cancelled mid-level: %+v, %v", workers, res, err)
		}
		if _, err := Run(context.Background(), failingModel{walk, 997}, Options{Workers: workers}); err == nil || !strings.Contains(err.Error(), "boom") {
			t.Errorf("workers %d, a load failing mid-level: %v", workers, err)
		}
	}
}

func BenchmarkBFS(b *testing.B) {
	m := walkModel{p: 1<<20 + 7}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("walk/workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			var states int64
			for b.Loop() {
				res, err := Run(context.Background(), m, Options{Workers: workers})
				if err != nil || res.Status != OK {
					b.Fatal(res, err)
				}
				states += res.Distinct
			}
			b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
			b.ReportMetric(float64(states)/float64(b.N), "states/op")
		})
	}
}

// walkModel is hashWalkModel without the generic adapter: a uint64 state,
// three affine/quadratic successors mod p, no allocation per state. The
// benchmark uses it so that what it measures is the explorer.
type walkModel struct{ p uint64 }

func (m walkModel) Init(emit func(enc, key []byte)) {
	for _, v := range []uint64{1, 2} {
		emit(binary.AppendUvarint(nil, v), nil)
	}
}
func (m walkModel) NewExpander() Expander          { return &walkExpander{p: m.p} }
func (m walkModel) DescribeAction(a Action) string { return fmt.Sprint("step", a.Kind) }

type walkExpander struct {
	p, v uint64
	buf  []byte
	r    state.Reader
}

func (e *walkExpander) Load(enc []byte) error {
	e.r.Reset(enc)
	e.v = e.r.Uvarint()
	return e.r.Done()
}
func (e *walkExpander) Check() string         { return "" }
func (e *walkExpander) CheckTerminal() string { return "" }
func (e *walkExpander) Successors(emit func(Action, []byte, []byte)) {
	for k, next := range [3]uint64{(e.v*3 + 1) % e.p, (e.v*7 + 5) % e.p, (e.v*e.v + 11) % e.p} {
		e.buf = binary.AppendUvarint(e.buf[:0], next)
		emit(Action{Kind: uint8(k)}, e.buf, nil)
	}
}

func TestWalkModel(t *testing.T) {
	m := walkModel{p: 100003}
	d, g, depth := refBFS(m)
	res := run(t, m, Options{Workers: 2})
	wantStats(t, res, OK, d, g, depth)
}

// TestAllocations guards the hot path: apart from amortised growth of the
// store, the frontier and the per-chunk buffers, a search allocates nothing
// per state. 100003 states must cost far fewer than 100003 allocations.
func TestAllocations(t *testing.T) {
	testtier.Long(t, "100,003-state walk")
	m := walkModel{p: 100003}
	for _, workers := range []int{1, 2} {
		allocs := testing.AllocsPerRun(3, func() {
			if _, err := Run(context.Background(), m, Options{Workers: workers}); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("workers=%d: %.0f allocations for 100003 states", workers, allocs)
		if allocs > 2000 {
			t.Errorf("workers=%d: %.0f allocations for 100003 states", workers, allocs)
		}
	}
}

// TestTerminalProperty: a property of terminal states is checked on leaves
// only; the first failing leaf in level order is reported with its trace.
func TestTerminalProperty(t *testing.T) {
	const d = 5
	m := treeModel(d)
	// Leaves are 16..31; the property fails on odd leaves.
	m.terminal = func(s []int64) string {
		if s[0]%2 == 1 {
			return "EvenLeaves"
		}
		return ""
	}
	// Inner nodes are odd too (1, 3, ...), but they have successors.
	res := run(t, m, Options{Workers: 2})
	if res.Status != Violation || res.Violation == nil || !res.Violation.Terminal || res.Violation.Invariant != "EvenLeaves" {
		t.Fatalf("result %+v", res)
	}
	tr := decodeTrace(t, res.Violation.Trace)
	if last := tr[len(tr)-1][0]; last != 17 || len(tr) != d {
		t.Fatalf("reported leaf %d at length %d, want 17 at %d", last, len(tr), d)
	}
	checkTrace(t, m, res.Violation.Trace)
	m.terminal = func([]int64) string { return "" }
	if res := run(t, m, Options{}); res.Status != OK {
		t.Fatalf("holding terminal property: %v", res.Status)
	}
}
