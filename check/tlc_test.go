package check_test

import (
	"context"
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/regress"
)

// tlcFile holds TLC's figures for the reference spec, tlc413File those for
// the release-4.13 spec: the files every test that compares with TLC reads.
const (
	tlcFile    = "../testdata/regress/tlc.toml"
	tlc413File = "../testdata/regress/tlc413.toml"
)

// TestTLCCounts pins bkcheck's state space to TLC's on both specs:
// distinct states, states generated and depth (with and without symmetry),
// or the violated invariant and the length of TLC's shortest trace.
func TestTLCCounts(t *testing.T) {
	var cases []regress.Case
	for _, file := range []string{tlcFile, tlc413File} {
		cs, err := regress.LoadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) < 7 {
			t.Fatalf("%s has %d runs", file, len(cs))
		}
		cases = append(cases, cs...)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Expect.Slow {
				testtier.Long(t, "marked slow")
			}
			if (c.Expect.Distinct == 0 || c.Expect.Depth == 0) && c.Expect.Length == 0 {
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
