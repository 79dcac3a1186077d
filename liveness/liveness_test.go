package liveness

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
)

// Action kinds of the toy graphs.
const (
	A uint8 = iota + 1
	B
	C
)

type edge struct {
	kind uint8
	to   int
}

// prop is an eventually property over a toy graph's nodes: "eventually
// goal" (trigger nil) or "trigger ~> goal".
type prop struct{ trigger, goal []int }

// toy is an explicit graph, node 0 initial, multiplied with the pending
// masks of its properties exactly as check's eventually pass does: a
// state is (node, mask owed on arrival); Load evaluates the node.
type toy struct {
	succ    map[int][]edge
	props   []prop
	outside []int // nodes outside the state constraints
}

func (m *toy) Init(emit func(enc, key []byte)) {
	var mask uint64
	for j, p := range m.props {
		if p.trigger == nil {
			mask |= 1 << j
		}
	}
	emit(toyEnc(0, mask), nil)
}

func toyEnc(node int, mask uint64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{byte(node)}, mask)
}

func (m *toy) NewExpander() explorer.Expander          { return &toyExp{m: m} }
func (m *toy) DescribeAction(a explorer.Action) string { return fmt.Sprint(a.Kind) }

type toyExp struct {
	m       *toy
	node    int
	pending uint64
}

func (e *toyExp) Load(enc []byte) error {
	e.node = int(enc[0])
	mask := binary.LittleEndian.Uint64(enc[1:])
	for j, p := range e.m.props {
		bit := uint64(1) << j
		switch {
		case slices.Contains(p.goal, e.node):
			mask &^= bit
		case p.trigger != nil && slices.Contains(p.trigger, e.node):
			mask |= bit
		}
	}
	e.pending = mask
	return nil
}

func (e *toyExp) Check() string         { return "" }
func (e *toyExp) CheckTerminal() string { return "" }
func (e *toyExp) InModel() bool         { return !slices.Contains(e.m.outside, e.node) }
func (e *toyExp) Successors(emit func(explorer.Action, []byte, []byte)) {
	for _, s := range e.m.succ[e.node] {
		emit(explorer.Action{Kind: s.kind}, toyEnc(s.to, e.pending), nil)
	}
}

func pendingOf(e explorer.Expander) uint64 {
	switch x := e.(type) {
	case *toyExp:
		return x.pending
	case *symExp:
		return 1
	case panickyExp:
		return x.pending
	}
	panic("unknown expander")
}

func fair(kinds ...uint8) []Fairness {
	var f []Fairness
	for _, k := range kinds {
		f = append(f, Fairness{Name: fmt.Sprint(k), Kinds: []uint8{k}})
	}
	return f
}

func TestToyGraphs(t *testing.T) {
	ev := []prop{{goal: []int{9}}} // node 9 never exists: always owed
	for _, tc := range []struct {
		name   string
		m      *toy
		fair   []Fairness
		want   []int // per property: 0 holds; else the lasso's length in states
		loop   []int // per property: the lasso's Loop
		states int64
	}{
		{"fair cycle",
			&toy{succ: map[int][]edge{0: {{A, 1}}, 1: {{A, 2}}, 2: {{A, 1}}}, props: ev},
			nil, []int{4}, []int{1}, 3},
		{"fair cycle with WF of its action",
			&toy{succ: map[int][]edge{0: {{A, 1}}, 1: {{A, 2}}, 2: {{A, 1}}}, props: ev},
			fair(A), []int{4}, []int{1}, 3},
		// 1 <-> 2 by B forever, A enabled at both and never taken.
		{"unfair cycle, no fairness: violated",
			&toy{succ: map[int][]edge{0: {{B, 1}}, 1: {{B, 2}, {A, 3}}, 2: {{B, 1}, {A, 3}}}, props: []prop{{goal: []int{3}}}},
			nil, []int{4}, []int{1}, 4},
		{"unfair cycle, WF(A): holds",
			&toy{succ: map[int][]edge{0: {{B, 1}}, 1: {{B, 2}, {A, 3}}, 2: {{B, 1}, {A, 3}}}, props: []prop{{goal: []int{3}}}},
			fair(A), []int{0}, nil, 4},
		{"cycle with A disabled at one state, WF(A): violated",
			&toy{succ: map[int][]edge{0: {{B, 1}}, 1: {{B, 2}, {A, 3}}, 2: {{B, 1}}}, props: []prop{{goal: []int{3}}}},
			fair(A), []int{4}, []int{1}, 4},
		{"WF(B): B enabled throughout the cycle, never taken",
			&toy{succ: map[int][]edge{0: {{C, 1}}, 1: {{C, 2}, {B, 4}}, 2: {{C, 3}, {B, 4}}, 3: {{A, 1}, {B, 4}}}, props: []prop{{goal: []int{4}}}},
			fair(A, B), []int{0}, nil, 5},
		{"WF(A), WF(C): a cycle through every state",
			&toy{succ: map[int][]edge{0: {{C, 1}}, 1: {{C, 2}, {B, 4}}, 2: {{C, 3}, {B, 4}}, 3: {{A, 1}, {B, 4}}}, props: []prop{{goal: []int{4}}}},
			fair(A, C), []int{5}, []int{1}, 5},
		{"a self-loop only: stuttering, terminal",
			&toy{succ: map[int][]edge{0: {{A, 0}}}, props: ev},
			fair(A), []int{1}, []int{-1}, 1},
		{"a self-loop and a way out: next is fair, so it is taken",
			&toy{succ: map[int][]edge{0: {{A, 0}, {B, 1}}}, props: []prop{{goal: []int{1}}}},
			nil, []int{0}, nil, 2},
		{"a terminal state with the property pending",
			&toy{succ: map[int][]edge{0: {{A, 1}, {A, 2}}, 2: {{B, 3}}}, props: []prop{{goal: []int{3}}}},
			nil, []int{2}, []int{-1}, 4},
		{"the cycle lies past a state outside the constraints",
			&toy{succ: map[int][]edge{0: {{A, 1}}, 1: {{A, 2}}, 2: {{A, 3}}, 3: {{A, 2}}}, props: ev, outside: []int{1}},
			nil, []int{0}, nil, 2},
		{"leads-to met on every fair path",
			&toy{succ: map[int][]edge{0: {{A, 1}}, 1: {{A, 2}, {B, 3}}, 2: {{A, 0}}, 3: {{B, 1}, {A, 2}}},
				props: []prop{{trigger: []int{1}, goal: []int{2}}}},
			fair(A), []int{0}, nil, 0},
		{"leads-to without fairness: the B cycle avoids Q",
			&toy{succ: map[int][]edge{0: {{A, 1}}, 1: {{A, 2}, {B, 3}}, 2: {{A, 0}}, 3: {{B, 1}, {A, 2}}},
				props: []prop{{trigger: []int{1}, goal: []int{2}}}},
			nil, []int{5}, []int{2}, 5},
		{"two properties, one holds",
			&toy{succ: map[int][]edge{0: {{A, 1}}, 1: {{A, 2}}, 2: {{A, 1}}}, props: []prop{{goal: []int{2}}, {goal: []int{5}}}},
			nil, []int{0, 6}, []int{0, 3}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Check(context.Background(), tc.m, Options{Props: len(tc.m.props), Pending: pendingOf, Fair: tc.fair})
			if err != nil {
				t.Fatal(err)
			}
			if tc.states > 0 && res.States != tc.states {
				t.Errorf("states %d, want %d", res.States, tc.states)
			}
			violated := false
			for j, want := range tc.want {
				l := res.Lassos[j]
				if want == 0 {
					if l != nil {
						t.Errorf("property %d: a counterexample of %d states, want none", j, len(l.Steps))
					}
					continue
				}
				violated = true
				if l == nil {
					t.Fatalf("property %d holds, want a counterexample of %d states", j, want)
				}
				if len(l.Steps) != want || l.Loop != tc.loop[j] {
					t.Errorf("property %d: %d states, loop %d; want %d, loop %d", j, len(l.Steps), l.Loop, want, tc.loop[j])
				}
				checkLasso(t, tc.m, tc.fair, l)
			}
			if want := map[bool]explorer.Status{false: explorer.OK, true: explorer.Violation}[violated]; res.Status != want {
				t.Errorf("status %v, want %v", res.Status, want)
			}
		})
	}
}

// checkLasso confirms a lasso against the model: every step a transition,
// the loop closes, the property pending throughout the cycle (or at the
// terminal state, which has no non-self successor), and each fairness
// witness is what it says.
func checkLasso(t *testing.T, m explorer.Model, fr []Fairness, l *Lasso) {
	t.Helper()
	exp := m.NewExpander()
	var inits [][]byte
	m.Init(func(enc, _ []byte) { inits = append(inits, enc) })
	if !slices.ContainsFunc(inits, func(b []byte) bool { return string(b) == string(l.Steps[0].State) }) {
		t.Fatalf("the first state is not initial")
	}
	kindsOut := func(enc []byte) (map[uint8]bool, bool) {
		if err := exp.Load(enc); err != nil {
			t.Fatal(err)
		}
		out, moves := map[uint8]bool{}, false
		exp.Successors(func(a explorer.Action, next, _ []byte) {
			if string(next) != string(enc) {
				out[a.Kind], moves = true, true
			}
		})
		return out, moves
	}
	for i := 1; i < len(l.Steps); i++ {
		if err := exp.Load(l.Steps[i-1].State); err != nil {
			t.Fatal(err)
		}
		ok := false
		exp.Successors(func(a explorer.Action, enc, _ []byte) {
			ok = ok || a == l.Steps[i].Action && string(enc) == string(l.Steps[i].State)
		})
		if !ok {
			t.Fatalf("step %d is not a transition", i)
		}
	}
	last := l.Steps[len(l.Steps)-1].State
	bit := uint64(1) << l.Property
	if l.Loop < 0 {
		exp.Load(last)
		if pendingOf(exp)&bit == 0 {
			t.Errorf("the property is not pending at the terminal state")
		}
		if _, moves := kindsOut(last); moves {
			t.Errorf("the last state of a terminal counterexample has a successor")
		}
		return
	}
	if string(last) != string(l.Steps[l.Loop].State) {
		t.Fatalf("the last state is not state %d", l.Loop)
	}
	if len(l.Steps)-1 <= l.Loop {
		t.Fatalf("empty cycle")
	}
	for i := l.Loop; i < len(l.Steps); i++ {
		exp.Load(l.Steps[i].State)
		if pendingOf(exp)&bit == 0 {
			t.Errorf("the property is not pending at step %d of the cycle", i)
		}
	}
	if len(l.Fair) != len(fr) {
		t.Fatalf("%d witnesses for %d constraints", len(l.Fair), len(fr))
	}
	for c, w := range l.Fair {
		if w.Step < l.Loop || w.Step >= len(l.Steps) {
			t.Errorf("constraint %s: witness step %d outside the cycle [%d, %d)", fr[c].Name, w.Step, l.Loop, len(l.Steps))
			continue
		}
		if w.Taken {
			if w.Step == l.Loop || !slices.Contains(fr[c].Kinds, l.Steps[w.Step].Action.Kind) {
				t.Errorf("constraint %s: step %d does not take it", fr[c].Name, w.Step)
			}
			continue
		}
		out, _ := kindsOut(l.Steps[w.Step].State)
		for _, k := range fr[c].Kinds {
			if out[k] {
				t.Errorf("constraint %s: enabled at step %d, said disabled", fr[c].Name, w.Step)
			}
		}
	}
}

// symModel: states (phase, a, b), keys up to swapping a and b. Phase 0
// goes to 1, phase 1 back to 0 with a and b swapped: in the quotient a
// cycle of two states, in actual states one of four.
type symModel struct{}

func (symModel) Init(emit func(enc, key []byte)) {
	emit([]byte{0, 1, 2}, symKey([]byte{0, 1, 2}))
}
func symKey(s []byte) []byte                           { return []byte{s[0], min(s[1], s[2]), max(s[1], s[2])} }
func (symModel) NewExpander() explorer.Expander        { return &symExp{} }
func (symModel) DescribeAction(explorer.Action) string { return "" }

type symExp struct{ s []byte }

func (e *symExp) Load(enc []byte) error { e.s = append(e.s[:0], enc...); return nil }
func (e *symExp) Check() string         { return "" }
func (e *symExp) CheckTerminal() string { return "" }
func (e *symExp) Successors(emit func(explorer.Action, []byte, []byte)) {
	n := []byte{1, e.s[1], e.s[2]}
	if e.s[0] == 1 {
		n = []byte{0, e.s[2], e.s[1]}
	}
	emit(explorer.Action{Kind: A + e.s[0]}, n, symKey(n))
}

// TestSymmetricCycle: a cycle of the quotient is repeated until the
// actual state returns.
func TestSymmetricCycle(t *testing.T) {
	res, err := Check(context.Background(), symModel{}, Options{Props: 1, Pending: pendingOf, Fair: fair(A, B)})
	if err != nil {
		t.Fatal(err)
	}
	if res.States != 2 || res.Status != explorer.Violation {
		t.Fatalf("%d states, %v; want 2, a violation", res.States, res.Status)
	}
	l := res.Lassos[0]
	if len(l.Steps) != 5 || l.Loop != 0 {
		t.Fatalf("%d states, loop %d; want 5 (two rounds), loop 0", len(l.Steps), l.Loop)
	}
	checkLasso(t, symModel{}, fair(A, B), l)
}

// TestBounds: a state bound or a cancelled context gives unknown, never
// ok; a violation in the part built is still reported.
func TestBounds(t *testing.T) {
	chain := &toy{succ: map[int][]edge{}, props: []prop{{goal: []int{200}}}}
	for i := 0; i < 100; i++ {
		chain.succ[i] = []edge{{A, i + 1}}
	}
	chain.succ[100] = []edge{{A, 50}}
	res, err := Check(context.Background(), chain, Options{Props: 1, Pending: pendingOf, MaxStates: 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != explorer.Unknown || res.Expanded >= 101 {
		t.Errorf("bounded: %v after %d expanded, want unknown", res.Status, res.Expanded)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, _ := Check(ctx, chain, Options{Props: 1, Pending: pendingOf}); res.Status != explorer.Unknown {
		t.Errorf("cancelled: %v, want unknown", res.Status)
	}
	res, _ = Check(context.Background(), chain, Options{Props: 1, Pending: pendingOf})
	if res.Status != explorer.Violation || res.Lassos[0].Loop != 50 || len(res.Lassos[0].Steps) != 102 {
		t.Errorf("whole: %v, want the cycle 50..100 after a stem of 51 states", res.Status)
	}
	// A violation within the bound is found all the same.
	early := &toy{succ: map[int][]edge{0: {{A, 1}}, 1: {{A, 0}, {A, 2}}}, props: []prop{{goal: []int{200}}}}
	for i := 2; i < 100; i++ {
		early.succ[i] = []edge{{A, i + 1}}
	}
	res, _ = Check(context.Background(), early, Options{Props: 1, Pending: pendingOf, MaxStates: 10})
	if res.Status != explorer.Violation || res.Lassos[0].Loop != 0 {
		t.Errorf("bounded with an early cycle: %v, want the violation 0 -> 1 -> 0", res.Status)
	}
}

// TestModelFailure: a model that panics gives the error verdict with the
// path to the state it failed on.
func TestModelFailure(t *testing.T) {
	m := &toy{succ: map[int][]edge{0: {{A, 1}}, 1: {{A, 2}}, 2: {{A, 99}}}, props: []prop{{goal: []int{5}}}}
	res, err := Check(context.Background(), panicky{m}, Options{Props: 1, Pending: pendingOf})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != explorer.Error || res.Failure == nil || len(res.Failure.Trace) != 3 || res.Failure.Error.Call != explorer.CallSuccessors {
		t.Fatalf("%v %+v, want an error in Successors after 3 states", res.Status, res.Failure)
	}
}

type panicky struct{ *toy }

func (p panicky) NewExpander() explorer.Expander { return panickyExp{&toyExp{m: p.toy}} }

type panickyExp struct{ *toyExp }

func (e panickyExp) Successors(emit func(explorer.Action, []byte, []byte)) {
	if e.node == 2 {
		panic("boom")
	}
	e.toyExp.Successors(emit)
}
