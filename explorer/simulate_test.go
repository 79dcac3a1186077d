package explorer

import (
	"context"
	"reflect"
	"testing"
)

// TestSimulateWeight: a weight steers the walks. In a line of states where
// every state may also step to a dead end, uniform walks stop after about
// two steps; weighting the dead end down lets them run to the depth bound.
// Weighted results, like uniform ones, do not depend on the worker count.
func TestSimulateWeight(t *testing.T) {
	m := &funcModel{
		name: "line",
		init: [][]int64{{0}},
		next: func(s []int64, emit func(Action, []int64)) {
			if s[0] < 0 {
				return // the dead end
			}
			emit(act(0), []int64{s[0] + 1})
			emit(act(1), []int64{-1})
		},
	}
	sim := func(weight func(Action) float64, workers int) SimResult {
		t.Helper()
		res, err := Simulate(context.Background(), m, SimOptions{Seed: 7, Walks: 1000, Depth: 50, Workers: workers, Weight: weight})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	avoidDeadEnd := func(a Action) float64 {
		if a.Kind == 1 {
			return 0.01
		}
		return 1
	}
	uniform, weighted := sim(nil, 2), sim(avoidDeadEnd, 2)
	t.Logf("mean walk length: uniform %.1f, weighted %.1f", uniform.MeanLength, weighted.MeanLength)
	if uniform.MeanLength > 4 || weighted.MeanLength < 25 {
		t.Errorf("mean walk length: uniform %.1f (want about 3), weighted %.1f (want about 40)", uniform.MeanLength, weighted.MeanLength)
	}
	if other := sim(avoidDeadEnd, 1); other.Walks != weighted.Walks || other.States != weighted.States || other.Distinct != weighted.Distinct {
		t.Errorf("1 and 2 workers differ: %+v vs %+v", other, weighted)
	}
}

// TestSimulateCountsCompletedWalks: the figures of a simulation are those
// of the walks it completed. A batch runs its walks in parallel, and
// the walks after the violating one are not part of the result: the
// states they visited count neither among the states visited nor among
// the distinct ones (which once counted them, and exceeded the states
// visited: 6098 of 364 here). The walks spread fast, so those after the
// violating one visit thousands of states no completed walk did.
func TestSimulateCountsCompletedWalks(t *testing.T) {
	m := &funcModel{
		name: "spread",
		init: [][]int64{{0}},
		next: func(s []int64, emit func(Action, []int64)) {
			emit(act(0), []int64{s[0] + 1})
			emit(act(1), []int64{s[0]*3 + 1000})
			emit(act(2), []int64{s[0]*5 + 100000})
		},
		check: func(s []int64) string {
			if s[0] == 3 { // three act(0) steps in a row: about one walk in 27
				return "NotThree"
			}
			return ""
		},
	}
	for _, c := range []struct {
		name    string
		opt     SimOptions
		violate bool
	}{
		{"violation in the first batch", SimOptions{Seed: 1, Walks: 1000, Depth: 30}, true},
		{"quiet", SimOptions{Seed: 1, Walks: 3, Depth: 2}, false},
	} {
		for _, workers := range []int{1, 2} {
			opt := c.opt
			opt.Workers = workers
			res, err := Simulate(context.Background(), m, opt)
			if err != nil {
				t.Fatal(err)
			}
			if (res.Violation != nil) != c.violate {
				t.Fatalf("%s, %d workers: %v", c.name, workers, res.Status)
			}
			if res.Distinct > res.States || res.Distinct == 0 {
				t.Errorf("%s, %d workers: %d distinct states of %d visited in %d walks", c.name, workers, res.Distinct, res.States, res.Walks)
			}
		}
	}
}

// goalModel is a funcModel whose expanders answer goals.
type goalModel struct {
	*funcModel
	goals func(s []int64, held []bool)
}

func (m goalModel) NewExpander() Expander {
	return goalExpander{m.funcModel.NewExpander().(*funcExpander), m.goals}
}

type goalExpander struct {
	*funcExpander
	goals func(s []int64, held []bool)
}

func (e goalExpander) Goals(held []bool) { e.goals(e.cur, held) }

// TestSimulateGoals: a goal never ends a walk or the simulation; the
// first walk (in walk order, for any number of workers) that reaches a
// goal is its witness, up to the first state where it holds; a goal no
// walk reaches has none. StopAtGoals ends the simulation once every goal
// is reached.
func TestSimulateGoals(t *testing.T) {
	m := goalModel{
		funcModel: &funcModel{
			name: "line",
			init: [][]int64{{0}},
			next: func(s []int64, emit func(Action, []int64)) {
				emit(act(0), []int64{s[0] + 1})
				emit(act(1), []int64{s[0] + 2})
			},
		},
		goals: func(s []int64, held []bool) {
			held[0] = s[0] >= 5 && s[0]%5 == 0 // reached by most walks, several times
			held[1] = s[0] < 0                 // never
		},
	}
	sim := func(workers int, stop bool) SimResult {
		t.Helper()
		res, err := Simulate(context.Background(), m, SimOptions{Seed: 9, Walks: 1000, Depth: 20, Workers: workers, Goals: 2, StopAtGoals: stop})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := sim(1, false), sim(3, false)
	if a.Status != Unknown || a.Walks != 1000 || a.MeanLength != 20 {
		t.Fatalf("a goal ended walks or the simulation: %v, %d walks of mean length %.1f", a.Status, a.Walks, a.MeanLength)
	}
	w := a.Goals[0]
	if w == nil || a.Goals[1] != nil {
		t.Fatalf("goals: %+v", a.Goals)
	}
	last := decodeTrace(t, w.Trace)
	if v := last[len(last)-1][0]; v != 5 && v != 10 {
		t.Errorf("the witness ends in %d, not where the goal first holds", v)
	}
	if b.Goals[0] == nil || b.Goals[0].WalkSeed != w.WalkSeed || !reflect.DeepEqual(b.Goals[0].Trace, w.Trace) {
		t.Errorf("1 and 3 workers give different witnesses")
	}
	alone, err := Simulate(context.Background(), m, SimOptions{Seed: w.WalkSeed, Walks: 1, Depth: 20, Goals: 2})
	if err != nil || alone.Goals[0] == nil || !reflect.DeepEqual(alone.Goals[0].Trace, w.Trace) {
		t.Errorf("the witness's walk seed alone does not give it again")
	}
	m.goals = func(s []int64, held []bool) { held[0] = s[0] == 7 }
	res, err := Simulate(context.Background(), m, SimOptions{Seed: 9, Walks: 100000, Depth: 20, Workers: 2, Goals: 1, StopAtGoals: true})
	if err != nil || res.Goals[0] == nil || res.Walks != batchWalks {
		t.Errorf("StopAtGoals: %d walks, witness %v (err %v); want the first batch only", res.Walks, res.Goals[0], err)
	}
}
