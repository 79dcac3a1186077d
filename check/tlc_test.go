package check_test

import (
	"context"
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/regress"
)

// tlcFile holds TLC's figures for the reference spec: the one file every
// test that compares with TLC reads.
const tlcFile = "../testdata/regress/tlc.toml"

// TestTLCCounts pins bkcheck's state space to TLC's on the reference spec:
// distinct states, states generated and depth, with and without symmetry.
func TestTLCCounts(t *testing.T) {
	cases, err := regress.LoadFile(tlcFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 7 {
		t.Fatalf("%s has %d runs", tlcFile, len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Expect.Slow {
				testtier.Long(t, "marked slow")
			}
			if c.Expect.Distinct == 0 || c.Expect.Depth == 0 {
				t.Fatalf("%s gives no figure to compare", c.Label())
			}
			o := regress.Run(context.Background(), c)
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			for _, d := range o.Drifts {
				t.Errorf("%s (TLC's figure)", d)
			}
		})
	}
}
