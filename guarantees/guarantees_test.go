package guarantees

import (
	"context"
	"fmt"
	"testing"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
)

// verdict runs one search up to symmetry and returns "ok" or the violated
// property; a search that does not finish fails the test.
func verdict(t *testing.T, mc check.ModelConfig) string {
	t.Helper()
	mc.Symmetry = spec.Symmetry{Bookies: true, Clients: true}
	rep, err := check.Run(context.Background(), check.Config{ModelConfig: mc})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case rep.Trace != nil:
		return rep.Trace.Invariant
	case rep.Status.String() == "ok":
		return "ok"
	}
	t.Fatalf("%v: %v (%s)", mc.Params, rep.Status, rep.Reason)
	return ""
}

// TestRestrictedDataLossAgrees turns the argument behind the restricted
// searches of docs/guarantees.md into a check: on the settings small
// enough to search the full model, leaving out LossIrrelevant (data-loss
// questions) or AckIrrelevant (availability questions) changes no
// verdict.
func TestRestrictedDataLossAgrees(t *testing.T) {
	type setting struct{ e, qw, qa int }
	// 3-bookie settings are out of reach: their full data-loss spaces run
	// to hundreds of millions of states. On 2/2/2 the crash questions take
	// minutes unrestricted, so they are in the long tier.
	slow := func(st setting, p spec.Params) bool { return st.qa == 2 && (p.Crashes > 0 || p.Journal != "") }
	// One lost disk on 2/2/2 takes seconds too: the default tier has disk
	// loss on 2/2/1, and two lost disks on 2/2/2.
	long := map[string]bool{"2-2-2/disk-loss-1": true}
	named := map[string]bool{}
	for _, st := range []setting{{2, 2, 2}, {2, 2, 1}} {
		base := spec.Params{Bookies: st.e, Clients: 2, Entries: 1, Inflight: 1, Ensemble: st.e, WriteQuorum: st.qw, AckQuorum: st.qa}
		for _, lm := range lossMechanisms {
			for f := 1; f <= min(st.qw, 2); f++ {
				p := base
				lm.apply(&p, f)
				name := fmt.Sprintf("%d-%d-%d/%s-%d", st.e, st.qw, st.qa, lm.id, f)
				named[name] = true
				if (slow(st, p) || long[name]) && !testtier.IsLong() {
					continue
				}
				t.Run(name, func(t *testing.T) {
					invs := []string{"AllAckedEntriesAreReadable", "NoDivergenceBetweenClientAndMetaData"}
					full := verdict(t, check.ModelConfig{Params: p, Invariants: invs})
					rp := p
					rp.Exclude = LossIrrelevant
					if got := verdict(t, check.ModelConfig{Params: rp, Invariants: invs}); got != full {
						t.Errorf("restricted model: %s, full model: %s", got, full)
					}
				})
			}
		}
		for f := 1; f <= st.qw-st.qa+1; f++ {
			if slow(st, spec.Params{Crashes: f}) && !testtier.IsLong() {
				continue
			}
			t.Run(fmt.Sprintf("%d-%d-%d/ack-crashed-%d", st.e, st.qw, st.qa, f), func(t *testing.T) {
				p := base
				p.Crashes = f
				p.Exclude = noChange
				invs := []string{"NoAckWithWriteSetCrashed"}
				full := verdict(t, check.ModelConfig{Params: p, Invariants: invs})
				p.Exclude = append(append([]string{}, noChange...), AckIrrelevant...)
				if got := verdict(t, check.ModelConfig{Params: p, Invariants: invs}); got != full {
					t.Errorf("restricted model: %s, full model: %s", got, full)
				}
			})
		}
	}
	for name := range long {
		if !named[name] {
			t.Errorf("long names %s, which is no setting", name)
		}
	}
}

// TestPORAnswerWords: an answer the partial-order reduction decided says
// so, and an open one says how far the reduced search got.
func TestPORAnswerWords(t *testing.T) {
	for _, c := range []struct {
		a           answer
		scope, note string
	}{
		{answer{status: "ok", distinct: 1234, symmetric: true, por: true, porTried: true, porDistinct: 1234},
			"exhaustive with the partial-order reduction (--por), 1,234 orbits (symmetry over bookies and clients)", ""},
		{answer{status: "violation", length: 21, por: true, porTried: true}, "", "21-state trace found with the partial-order reduction, not necessarily the shortest"},
		{answer{status: "unknown", distinct: 15, depth: 16, symmetric: true, porTried: true, porDistinct: 20, porDepth: 17},
			"no counterexample within 15 orbits (symmetry over bookies and clients), the search reaching depth 16, nor with the partial-order reduction (--por) within 20 orbits (depth 17)", ""},
		{answer{status: "ok", distinct: 99}, "exhaustive, 99 states", ""},
	} {
		if c.scope != "" {
			if got := c.a.scope(); got != c.scope {
				t.Errorf("scope %q, want %q", got, c.scope)
			}
		}
		if c.note != "" {
			if got := c.a.traceNote(); got != c.note {
				t.Errorf("traceNote %q, want %q", got, c.note)
			}
		}
	}
}
