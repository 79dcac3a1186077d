package explorer

import "testing"

// TestPoolReuse: a released in-memory level hands its arena to the next level.
func TestPoolReuse(t *testing.T) {
	var pool []*memLevel
	a := newMemLevel(&pool)
	a.l.add(make([]byte, 1000), 1)
	a.release()
	b := newMemLevel(&pool)
	if a != b || cap(b.l.arena) < 1000 {
		t.Fatalf("not reused %p %p %d", a, b, cap(b.l.arena))
	}
}
