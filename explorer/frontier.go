package explorer

// memLevel keeps a whole BFS level in memory; a window is a view of it.
// Released levels go back to their pool so that the next level reuses the
// arena instead of growing a new one from nothing (which cost a gigabyte
// of allocation and copying per run on mid-sized models).
type memLevel struct {
	l    level
	pool *[]*memLevel
}

func newMemLevel(pool *[]*memLevel) *memLevel {
	if n := len(*pool); n > 0 {
		m := (*pool)[n-1]
		*pool = (*pool)[:n-1]
		return m
	}
	return &memLevel{pool: pool}
}

func (m *memLevel) release() {
	m.l.reset()
	*m.pool = append(*m.pool, m)
}

func (m *memLevel) len() int { return m.l.len() }

// window makes w a view of the states [lo, lo+max) (fewer at the end) and
// returns how many it holds.
func (m *memLevel) window(w *level, lo, max int) int {
	hi := min(lo+max, m.l.len())
	w.reset()
	if hi <= lo {
		return 0
	}
	start := m.l.offs[lo]
	end := len(m.l.arena)
	if hi < m.l.len() {
		end = m.l.offs[hi]
	}
	// A view, not a copy: the window shares the level's arena.
	w.arena = m.l.arena[start:end:end]
	for i := lo; i < hi; i++ {
		w.offs = append(w.offs, m.l.offs[i]-start)
	}
	w.ids = append(w.ids, m.l.ids[lo:hi]...)
	return hi - lo
}
