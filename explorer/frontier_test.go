package explorer

import "testing"

// TestPoolReuse: a closed in-memory level hands its arena to the next level.
func TestPoolReuse(t *testing.T) {
	var pool []*memLevel
	a := newMemLevel(&pool)
	a.add(make([]byte, 1000), 1)
	r, _ := a.finish()
	r.close(true)
	b := newMemLevel(&pool)
	if a != b || cap(b.l.arena) < 1000 {
		t.Fatalf("not reused %p %p %d", a, b, cap(b.l.arena))
	}
}
