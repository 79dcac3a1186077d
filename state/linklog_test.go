package state

import "testing"

func TestLinkLog(t *testing.T) {
	file, err := NewFileLinkLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []*LinkLog{NewLinkLog(), file} {
		for i := range uint64(100000) {
			l.Append(i/3, uint32(i%7))
		}
		for _, seq := range []uint64{0, 1, 99999, 5000} {
			p, idx, err := l.Get(seq)
			if err != nil || p != seq/3 || idx != uint32(seq%7) {
				t.Fatalf("Get(%d) = %d %d %v", seq, p, idx, err)
			}
		}
		if _, _, err := l.Get(100000); err == nil {
			t.Error("Get past the end")
		}
		l.Close()
	}
}
