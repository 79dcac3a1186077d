package explorer

// memLevel keeps a whole BFS level in memory; a window is a view of it.
// Released levels go back to their pool so that the next level reuses the
// blocks instead of allocating new ones (which cost a gigabyte of
// allocation per run on mid-sized models).
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
// returns how many it holds. It copies nothing: the window shares the
// level's blocks and arrays until it is reset.
func (m *memLevel) window(w *level, lo, max int) int {
	hi := min(lo+max, m.l.len())
	w.reset()
	if hi <= lo {
		return 0
	}
	*w = level{blocks: m.l.blocks[:m.l.used:m.l.used], used: m.l.used, refs: m.l.refs[lo:hi:hi], ids: m.l.ids[lo:hi:hi], view: true}
	return hi - lo
}
