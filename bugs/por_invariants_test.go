package bugs_test

import (
	"context"
	"testing"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
)

// TestPORSameVerdictEachInvariant checks --por one invariant at a time,
// on models where several of them fail: the reduction keeps a set only
// if it holds an enabled transition invisible to the invariants, and a
// set may hold visible ones too (docs/reduction.md, "Visibility"), so
// every invariant that fails in the full model must fail in the reduced
// one, whichever transitions make it fail. Each invariant that declares
// what it reads runs alone, with and without --por (and with symmetry
// where the model has it), and must get the same verdict; a
// counterexample found with --por must replay on the full model.
func TestPORSameVerdictEachInvariant(t *testing.T) {
	p := func(b, w, a, entries int, reliable bool, variant string) spec.Params {
		q := spec.DefaultParams()
		q.Bookies, q.WriteQuorum, q.AckQuorum, q.Entries, q.ReliableNetwork, q.Variant = b, w, a, entries, reliable, variant
		return q
	}
	both := spec.Symmetry{Bookies: true, Clients: true}
	models := []struct {
		name string
		p    spec.Params
		sym  spec.Symmetry
		long bool
	}{
		{"b1-w1-a1", p(1, 1, 1, 1, false, ""), spec.Symmetry{}, false},
		{"b2-w1-a1", p(2, 1, 1, 1, false, ""), both, false},
		{"b2-w2-a1 no-recovery-fence", p(2, 2, 1, 1, false, spec.VariantNoRecoveryFence), both, true},
		{"b3-w3-a2 reliable", p(3, 3, 2, 1, true, ""), spec.Symmetry{}, false},
		{"b3-w3-a2 reliable gwq", p(3, 3, 2, 1, true, spec.VariantGWQ), both, false},
		{"b2-w2-a2 reliable no-recovery-fence", p(2, 2, 2, 1, true, spec.VariantNoRecoveryFence), both, false},
		{"b2-w2-a1", p(2, 2, 1, 1, false, ""), spec.Symmetry{}, true},
		{"b3-w3-a2 reliable 2 entries", p(3, 3, 2, 2, true, ""), both, true},
	}
	violations, runs := 0, 0
	for _, m := range models {
		if m.long && !testtier.IsLong() {
			continue
		}
		for _, inv := range invariants.All {
			if inv.Reads == nil {
				continue
			}
			for _, sym := range []spec.Symmetry{{}, m.sym} {
				mc := check.ModelConfig{Params: m.p, Invariants: []string{inv.Name}, Symmetry: sym}
				full := run(t, mc)
				mc.POR = true
				red := run(t, mc)
				runs++
				if red.Status != full.Status || red.Result.Violation != nil && red.Result.Violation.Invariant != full.Result.Violation.Invariant {
					t.Errorf("%s %s --symmetry %v: %v with --por, %v without", m.name, inv.Name, sym, red.Status, full.Status)
					continue
				}
				if red.Trace != nil {
					violations++
					if err := check.Replay(red.Trace); err != nil {
						t.Errorf("%s %s --symmetry %v: the --por counterexample does not replay: %v", m.name, inv.Name, sym, err)
					}
				}
				t.Logf("%s %s --symmetry %v: %v; %d states with --por, %d without", m.name, inv.Name, sym, full.Status, red.Distinct, full.Distinct)
				if sym == m.sym {
					break
				}
			}
		}
	}
	t.Logf("%d runs, %d of them violations", runs, violations)
	if violations < 8 {
		t.Errorf("only %d violations among %d runs: the test proves too little", violations, runs)
	}
}

func run(t *testing.T, mc check.ModelConfig) *check.Report {
	t.Helper()
	cfg := check.DefaultConfig()
	cfg.ModelConfig = mc
	rep, err := check.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%s: %v", mc.Describe(), err)
	}
	return rep
}
