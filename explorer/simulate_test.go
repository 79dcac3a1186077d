package explorer

import (
	"context"
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
