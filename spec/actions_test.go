package spec

import (
	"slices"
	"testing"
)

// TestLiveRecords: gen.live yields exactly the deliverable records of the
// state being expanded, in key order, for histories that fit its bitmask
// and for longer ones.
func TestLiveRecords(t *testing.T) {
	for _, n := range []int{0, 1, 17, 64, 65, 130} {
		s := &State{}
		var want []Msg
		for i := range n {
			m := Msg{Key: MsgKey(3*i + 1), Count: int8(i%3 - 1)}
			s.Msgs = append(s.Msgs, m)
			if m.Count >= 1 {
				want = append(want, m)
			}
		}
		g := gen{s: s}
		g.listLive()
		var got []Msg
		for m := range g.live {
			got = append(got, m)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d records: live yields %v, want %v", n, got, want)
		}
	}
}
