package explorer

import "testing"

// TestPoolReuse: a released in-memory level hands its blocks to the next level.
func TestPoolReuse(t *testing.T) {
	var pool []*memLevel
	a := newMemLevel(&pool)
	a.l.add(make([]byte, 1000), 1)
	a.release()
	b := newMemLevel(&pool)
	if a != b || len(b.l.blocks) != 1 || cap(b.l.blocks[0]) < 1000 || b.l.len() != 0 {
		t.Fatalf("not reused %p %p %d blocks, %d states", a, b, len(b.l.blocks), b.l.len())
	}
}

// TestLevelBlocks: states come back as added, across block boundaries,
// with an oversized encoding in a block of its own, after a reset (which
// reuses blocks), and through windows, which share the level's arrays.
func TestLevelBlocks(t *testing.T) {
	var pool []*memLevel
	m := newMemLevel(&pool)
	enc := func(i int) []byte {
		n := 1 + i*7919%3000
		if i == 500 {
			n = 3 * levelBlock
		}
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(i + j)
		}
		return b
	}
	const n = 2000
	for round := 0; round < 2; round++ {
		for i := 0; i < n; i++ {
			m.l.add(enc(i), uint64(10*i))
		}
		if m.l.used < 4 {
			t.Fatalf("round %d: %d blocks for %d states", round, m.l.used, n)
		}
		var w level
		for lo := 0; lo < n; lo += 300 {
			k := m.window(&w, lo, 300)
			for j := 0; j < k; j++ {
				if got, want := w.state(j), enc(lo+j); string(got) != string(want) || w.ids[j] != uint64(10*(lo+j)) {
					t.Fatalf("round %d: window at %d, state %d: %d bytes, id %d; want %d bytes, id %d", round, lo, j, len(got), w.ids[j], len(want), 10*(lo+j))
				}
			}
		}
		w.reset()
		if m.l.len() != n || string(m.l.state(n-1)) != string(enc(n-1)) {
			t.Fatalf("round %d: resetting a window changed the level", round)
		}
		blocks := len(m.l.blocks)
		m.release()
		m = newMemLevel(&pool)
		if len(m.l.blocks) != blocks {
			t.Fatalf("round %d: %d blocks kept of %d", round, len(m.l.blocks), blocks)
		}
	}
}
