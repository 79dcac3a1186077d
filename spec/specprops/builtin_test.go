package specprops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
)

// sampleStates are the states of n random walks (fixed seed) of p's
// model, each walk from the initial state to a terminal state, with
// whether each is terminal. Walks reach deep states (closed ledgers,
// several fragments, faults) that a breadth-first prefix does not.
func sampleStates(t testing.TB, p spec.Params, n int) ([]spec.State, []bool) {
	t.Helper()
	m, err := spec.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	var states []spec.State
	var terminal []bool
	var scratch spec.State
	var succ []spec.State
	var weights []float64
	for w := 0; w < n; w++ {
		s := m.Init()
		for step := 0; step < 200; step++ {
			succ, weights = succ[:0], weights[:0]
			total := 0.0
			m.Next(&s, &scratch, func(a spec.Action, next *spec.State) {
				var c spec.State
				c.CopyFrom(next)
				succ = append(succ, c)
				// Lose few messages, so that walks go deep (as
				// bkcheck simulate --loss-rate does).
				wt := 1.0
				if a.Kind != spec.ClientChangesEnsemble && a.Kind != spec.RecoveryClientChangesEnsemble {
					wt = math.Pow(0.05, float64(a.Lost.Len()))
				}
				weights = append(weights, wt)
				total += wt
			})
			states = append(states, s)
			terminal = append(terminal, len(succ) == 0)
			if len(succ) == 0 {
				break
			}
			x := rng.Float64() * total
			i := 0
			for ; i < len(succ)-1 && x >= weights[i]; i++ {
				x -= weights[i]
			}
			s = succ[i]
		}
	}
	return states, terminal
}

// equivalenceModels cover the view's extensions: the default, #2614,
// striping, gwq, faults with a lossy journal and the data-integrity check,
// a crash on a reliable network, #2615's unordered fragments.
func equivalenceModels() []spec.Params {
	d := spec.DefaultParams()
	qa2 := d
	qa2.AckQuorum, qa2.Variant = 2, "no-recovery-fence"
	striped := d
	striped.Bookies, striped.Ensemble, striped.Entries, striped.Inflight = 3, 3, 2, 2
	gwq := d
	gwq.Variant, gwq.Entries = "gwq", 2
	faults := d
	faults.Bookies, faults.WriteQuorum, faults.AckQuorum = 3, 3, 2
	faults.Crashes, faults.Journal, faults.Reformat, faults.DataIntegrity, faults.ReadOnly = 1, "no-sync", 1, true, 1
	faults.ReformatCookie = spec.CookieKept // the check runs on the re-format
	crash := d
	crash.Bookies, crash.WriteQuorum, crash.Crashes, crash.ReliableNetwork = 3, 3, 1, true
	lacFloor := d // #2615: fragments out of order
	lacFloor.Bookies, lacFloor.Entries, lacFloor.Variant = 3, 2, "no-lac-floor"
	return []spec.Params{d, qa2, striped, gwq, faults, crash, lacFloor}
}

// TestBuiltinEquivalents: every built-in invariant's CEL form agrees with
// its compiled form on every sampled state (and, for terminal forms, on
// every sampled terminal state), violations included.
func TestBuiltinEquivalents(t *testing.T) {
	for _, inv := range invariants.All {
		if _, ok := BuiltinByName(inv.Name); !ok {
			t.Errorf("built-in %s has no CEL form in Builtins", inv.Name)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	for _, p := range equivalenceModels() {
		p.EnsureDefaults()
		var defs []properties.Def
		for _, inv := range invariants.All {
			b, _ := BuiltinByName(inv.Name)
			defs = append(defs, b.Defs("")...)
		}
		set, err := Compile(p, defs)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := set.NewEvaluator()
		if err != nil {
			t.Fatal(err)
		}
		states, terminal := sampleStates(t, p, 700)
		fails := map[string]int{}
		for si := range states {
			s := &states[si]
			ev.Load(s)
			for _, inv := range invariants.All {
				b, _ := BuiltinByName(inv.Name)
				for _, d := range b.Defs("") {
					var want bool
					switch {
					case d.Kind == properties.Invariant && inv.Holds != nil:
						want = inv.Holds(&p, s)
					case d.Kind == properties.Terminal && inv.HoldsTerminal != nil:
						if !terminal[si] {
							continue
						}
						want = inv.HoldsTerminal(&p, s)
					default:
						t.Fatalf("%s: no compiled form for the %s", d.Name, d.Kind)
					}
					got, err := ev.Holds(set.Index(d.Name))
					if err != nil {
						t.Fatalf("%s on state %d: %v", d.Name, si, err)
					}
					if got != want {
						t.Fatalf("%s (%s) on %s, state %d: CEL says %v, compiled %v", d.Name, d.Kind, p, si, got, want)
					}
					if !got {
						fails[d.Name]++
					}
				}
			}
		}
		t.Logf("%s: %d states; violations: %v", p, len(states), fails)
	}
}
