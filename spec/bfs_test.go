package spec_test

import (
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/regress"
	"github.com/bkcheck/bkcheck/spec"
)

// naiveBFS explores the model with a Go map of encodings: slow but obviously
// correct, an oracle independent of the explorer package.
func naiveBFS(t testing.TB, p spec.Params) (distinct, generated, depth int) {
	t.Helper()
	m, err := spec.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	init := m.Init()
	seen := map[string]bool{string(m.Encode(nil, &init)): true}
	level := [][]byte{m.Encode(nil, &init)}
	generated = 1
	var cur, scratch spec.State
	var buf []byte
	for len(level) > 0 {
		depth++
		var next [][]byte
		for _, enc := range level {
			if err := m.Decode(enc, &cur); err != nil {
				t.Fatal(err)
			}
			m.Next(&cur, &scratch, func(a spec.Action, s *spec.State) {
				generated++
				buf = m.Encode(buf[:0], s)
				if !seen[string(buf)] {
					seen[string(buf)] = true
					next = append(next, append([]byte(nil), buf...))
				}
			})
		}
		level = next
	}
	return len(seen), generated, depth
}

// TestNaiveCounts explores TLC's reference sets (testdata/regress/tlc.toml)
// with the naive oracle above, without the explorer: the model alone must
// give TLC's distinct, generated and depth figures.
func TestNaiveCounts(t *testing.T) {
	cases, err := regress.LoadFile("../testdata/regress/tlc.toml")
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, c := range cases {
		e := c.Expect
		if c.Config.Symmetry.Bookies || c.Config.Symmetry.Clients || e.Slow {
			continue // the oracle has no symmetry; the slow set is the explorer's job
		}
		if e.Distinct > 100_000 && !testtier.IsLong() {
			continue
		}
		ran++
		d, g, depth := naiveBFS(t, c.Config.Params)
		t.Logf("%s: distinct %d generated %d depth %d", c.Name, d, g, depth)
		if int64(d) != e.Distinct || depth != e.Depth || (e.Generated != 0 && int64(g) != e.Generated) {
			t.Errorf("%s: got %d/%d/%d, TLC %d/%d/%d", c.Name, d, g, depth, e.Distinct, e.Generated, e.Depth)
		}
	}
	if ran < 2 {
		t.Fatalf("only %d sets compared", ran)
	}
}
