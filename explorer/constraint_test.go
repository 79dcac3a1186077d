package explorer

import "testing"

// constrainedModel is a funcModel whose expanders implement Constrainer
// with the given predicate.
type constrainedModel struct {
	*funcModel
	in func(s []int64) bool
}

func (m constrainedModel) NewExpander() Expander {
	return &constrainedExpander{funcExpander: &funcExpander{m: m.funcModel}, in: m.in}
}

type constrainedExpander struct {
	*funcExpander
	in func(s []int64) bool
}

func (e *constrainedExpander) InModel() bool { return e.in(e.cur) }

// TestConstraint: a state outside the constraint is kept and checked but
// not expanded, and is no terminal state. On the n×n grid with x+y <= k
// the search knows the states with x+y <= k+1 (the last diagonal checked,
// never expanded); a deadlock search finds no deadlock although that
// diagonal has no successors; an invariant that fails on the last
// diagonal is still reported; and 1 and 3 workers agree, as does the
// simulation, which never walks beyond it.
func TestConstraint(t *testing.T) {
	const n, k = 9, 4
	in := func(s []int64) bool { return s[0]+s[1] <= k }
	m := constrainedModel{gridModel(n, n), in}
	// States with x+y = d for d <= k+1: d+1 each.
	var distinct, generated int64 = 0, 1
	for d := int64(0); d <= k+1; d++ {
		distinct += d + 1
	}
	// Every expanded state (x+y <= k) emits one successor per neighbour.
	for x := int64(0); x < n; x++ {
		for y := int64(0); y < n; y++ {
			if x+y > k {
				continue
			}
			for _, nb := range [][2]int64{{x + 1, y}, {x, y + 1}, {x - 1, y}, {x, y - 1}} {
				if nb[0] >= 0 && nb[1] >= 0 && nb[0] < n && nb[1] < n {
					generated++
				}
			}
		}
	}
	for _, workers := range []int{1, 3} {
		res := run(t, m, Options{Workers: workers, CheckDeadlock: true})
		wantStats(t, res, OK, distinct, generated, k+2)
	}
	m.check = func(s []int64) string {
		if s[0]+s[1] == k+1 {
			return "BeyondTheEdge"
		}
		return ""
	}
	res := run(t, m, Options{Workers: 2})
	if res.Status != Violation || res.Violation.Invariant != "BeyondTheEdge" || len(res.Violation.Trace) != k+2 {
		t.Fatalf("an invariant failing outside the constraint: %+v", res)
	}
	m.check = nil
	m.terminal = func([]int64) string { return "Terminal" }
	if res := run(t, m, Options{}); res.Status != OK {
		t.Fatalf("a state outside the constraint was taken for a terminal one: %+v", res)
	}
	m.terminal = nil
	sim, err := Simulate(t.Context(), m, SimOptions{Walks: 200, Depth: 40, Seed: 1, CheckDeadlock: true})
	if err != nil {
		t.Fatal(err)
	}
	if sim.Status == Violation || sim.Distinct > distinct {
		t.Fatalf("walks went on beyond the constraint, or ended there as deadlocks: %+v", sim)
	}
}
