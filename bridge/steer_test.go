package bridge

import "testing"

// TestSteer: without steering the weights stand; with it, a decision is
// weighed by the uncovered actions of its class, and one whose class has
// none keeps its weight.
func TestSteer(t *testing.T) {
	ds := []decision{{kind: "deliver AddEntryRequest", weight: 4}, {kind: "timeout", weight: 1}, {kind: "crash", weight: 1}}
	if got := steer(ds, nil); got[0].weight != 4 || got[1].weight != 1 {
		t.Fatalf("no steering changed weights: %+v", got)
	}
	uncovered := func() map[string]bool {
		return map[string]bool{"BookieSendsAddFencedResponse": true, "BookieSendsAddReadOnlyResponse": true, "ClientReceivesAddTimeout": true}
	}
	got := steer(ds, uncovered)
	if want := 4 * (1 + 2*steerBoost); got[0].weight != want {
		t.Errorf("deliver AddEntryRequest: weight %d, want %d", got[0].weight, want)
	}
	if want := 1 + steerBoost; got[1].weight != want {
		t.Errorf("timeout: weight %d, want %d", got[1].weight, want)
	}
	if got[2].weight != 1 {
		t.Errorf("crash: weight %d, want 1", got[2].weight)
	}
	if ds[0].weight != 4 {
		t.Error("steer changed its input")
	}
}

// TestSteersNameActions: every action a class names is one of the model's.
func TestSteersNameActions(t *testing.T) {
	known := map[string]bool{}
	for _, m := range mappings {
		known[m.action] = true
	}
	for kind, as := range steers {
		for _, a := range as {
			if !known[a] {
				t.Errorf("steers[%q] names %q, not an action of the model", kind, a)
			}
		}
	}
}
