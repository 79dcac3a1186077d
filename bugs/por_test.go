package bugs_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/bugs"
	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/regress"
	"github.com/bkcheck/bkcheck/spec"
)

// TestPORSameVerdict is --por's metamorphic proof: every case of the
// regression suite (testdata/regress) and every historical bug and its
// fix that the reduction covers gets the same verdict and the same
// violated property with --por (and without symmetry) as the case as
// given; a counterexample found with --por replays on the full model.
// Cases the reduction does not cover (faults, the Java add path, release
// 4.13's model) must be refused, not run. The slow cases run in the long
// tier.
func TestPORSameVerdict(t *testing.T) {
	cases, err := regress.Load("../testdata/regress")
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, bugs.Cases()...)
	compared, reduced, refused := 0, 0, 0
	for _, c := range cases {
		if c.Expect.Slow && !testtier.IsLong() {
			continue
		}
		por := c.Config
		por.POR, por.Symmetry = true, spec.Symmetry{}
		por.Dir, por.Store = "", check.StoreMem
		por.EnsureDefaults()
		if err := por.Validate(); err != nil {
			if !strings.Contains(err.Error(), "por") {
				t.Fatalf("%s: %v", c.Label(), err)
			}
			refused++
			continue // the reduction does not cover the case
		}
		full := c.Config
		full.Dir, full.Store = "", check.StoreMem
		want, err := check.Run(context.Background(), full)
		if err != nil {
			t.Fatalf("%s: %v", c.Label(), err)
		}
		got, err := check.Run(context.Background(), por)
		if err != nil {
			t.Fatalf("%s --por: %v", c.Label(), err)
		}
		compared++
		if got.Status != want.Status || inv(got) != inv(want) {
			t.Errorf("%s: %s %q with --por, %s %q without", c.Label(), got.Status, inv(got), want.Status, inv(want))
			continue
		}
		if got.Trace != nil {
			if err := check.Replay(got.Trace); err != nil {
				t.Errorf("%s: the --por counterexample does not replay: %v", c.Label(), err)
			}
		}
		if got.Distinct < want.Distinct && want.Config.Symmetry == (spec.Symmetry{}) {
			reduced++
		}
		t.Logf("%s: %s; %d states with --por, %d without (symmetry %v)", c.Label(), got.Status, got.Distinct, want.Distinct, want.Config.Symmetry)
	}
	t.Logf("%d cases compared, %d of them reduced, %d refused", compared, reduced, refused)
	if compared < 5 || reduced == 0 {
		t.Errorf("%d cases compared, %d reduced: the test proves too little", compared, reduced)
	}
}

func inv(r *check.Report) string {
	if r.Violation == nil {
		return ""
	}
	return r.Violation.Invariant
}
