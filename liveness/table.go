package liveness

// table maps a state's key fingerprint to its node: open addressing with
// linear probing, the fingerprint (already a hash) as its own slot
// index. 12 bytes per slot, at most 3/4 full.
type table struct {
	fps  []uint64
	ids  []uint32 // node+1; 0: empty slot
	n    int
	mask uint64
}

func (t *table) lookup(fp uint64) (uint32, bool) {
	if t.n == 0 {
		return 0, false
	}
	for i := fp & t.mask; ; i = (i + 1) & t.mask {
		switch id := t.ids[i]; {
		case id == 0:
			return 0, false
		case t.fps[i] == fp:
			return id - 1, true
		}
	}
}

// insert adds fp, which lookup did not find.
func (t *table) insert(fp uint64, id uint32) {
	if (t.n+1)*4 > len(t.ids)*3 {
		t.grow()
	}
	for i := fp & t.mask; ; i = (i + 1) & t.mask {
		if t.ids[i] == 0 {
			t.fps[i], t.ids[i] = fp, id+1
			t.n++
			return
		}
	}
}

func (t *table) grow() {
	size := 2 * len(t.ids)
	if size == 0 {
		size = 1024
	}
	old := *t
	*t = table{fps: make([]uint64, size), ids: make([]uint32, size), mask: uint64(size - 1)}
	for i, id := range old.ids {
		if id != 0 {
			t.insert(old.fps[i], id-1)
		}
	}
}

func (t *table) bytes() int64 { return int64(cap(t.fps))*8 + int64(cap(t.ids))*4 }
