package spec

import "testing"

// naiveBFS explores the model with a Go map of encodings: slow but obviously
// correct, an oracle independent of the explorer package.
func naiveBFS(t testing.TB, p Params) (distinct, generated, depth int) {
	t.Helper()
	m, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	init := m.Init()
	seen := map[string]bool{string(m.Encode(nil, &init)): true}
	level := [][]byte{m.Encode(nil, &init)}
	generated = 1
	var cur, scratch State
	var buf []byte
	for len(level) > 0 {
		depth++
		var next [][]byte
		for _, enc := range level {
			if err := m.Decode(enc, &cur); err != nil {
				t.Fatal(err)
			}
			m.Next(&cur, &scratch, func(a Action, s *State) {
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

func TestNaiveCounts(t *testing.T) {
	for _, tc := range []struct {
		p               Params
		distinct, depth int
	}{
		{Params{Bookies: 1, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1}, 799, 19},
		{Params{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1}, 6123, 25},
	} {
		d, g, depth := naiveBFS(t, tc.p)
		t.Logf("%v: distinct %d generated %d depth %d", tc.p, d, g, depth)
		if d != tc.distinct || depth != tc.depth {
			t.Errorf("%v: got %d/%d want %d/%d", tc.p, d, depth, tc.distinct, tc.depth)
		}
	}
}

func TestNaiveCountsLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	d, g, depth := naiveBFS(t, Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1})
	t.Logf("distinct %d generated %d depth %d", d, g, depth)
	if d != 285773 || depth != 28 {
		t.Errorf("got %d/%d", d, depth)
	}
}
