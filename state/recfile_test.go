package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestRecFileRoundTrip: records come back as written, across many blocks,
// with and without read-ahead; Seek finds the block of a key; a truncated
// or damaged file is an error, not garbage.
func TestRecFileRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	path := filepath.Join(t.TempDir(), "f.rec")
	w, err := CreateRecWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	type rec struct{ head, payload []byte }
	var recs []rec
	prev := make([]byte, 100)
	for i := range 60000 {
		p := bytes.Clone(prev)
		for range r.IntN(4) {
			p[r.IntN(len(p))] = byte(r.IntN(256))
		}
		p = p[:50+r.IntN(50)]
		if i%1000 == 0 {
			p = nil
		}
		head := binary.AppendUvarint(nil, uint64(i))
		recs = append(recs, rec{head, p})
		w.Append(uint64(i/3), head, p) // keys repeat and grow
		if len(p) > 0 {
			prev = append(p, make([]byte, 100-len(p))...)
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(path)
	t.Logf("%d records, %d bytes (%.1f per record)", len(recs), info.Size(), float64(info.Size())/float64(len(recs)))
	for _, ahead := range []bool{true, false} {
		rd, err := OpenRecReader(path, ahead)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for rd.Next() {
			if !bytes.Equal(rd.Head(), recs[i].head) || !bytes.Equal(rd.Payload(), recs[i].payload) || rd.Key() != uint64(i/3) || rd.Index() != int64(i) {
				t.Fatalf("read-ahead %v: record %d differs (key %d, index %d)", ahead, i, rd.Key(), rd.Index())
			}
			i++
		}
		if rd.Err() != nil || i != len(recs) {
			t.Fatalf("read-ahead %v: %d records, %v", ahead, i, rd.Err())
		}
		rd.Close()
	}
	for _, k := range []int64{0, 1, 29999, 59999} {
		for _, byKey := range []bool{false, true} {
			rd, _ := OpenRecReader(path, false)
			var err error
			if byKey {
				err = rd.Seek(uint64(k / 3))
			} else {
				err = rd.SeekIndex(k)
			}
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for rd.Next() {
				if rd.Index() > k {
					break
				}
				if rd.Index() == k {
					found = rd.Key() == uint64(k/3) && bytes.Equal(rd.Head(), recs[k].head)
					break
				}
			}
			if !found {
				t.Errorf("seek (by key %v) to record %d failed", byKey, k)
			}
			rd.Close()
		}
	}
	data, _ := os.ReadFile(path)
	for _, bad := range [][]byte{data[:len(data)/2], append(bytes.Clone(data[:100]), make([]byte, 50)...)} {
		os.WriteFile(path, bad, 0o644)
		rd, _ := OpenRecReader(path, true)
		for rd.Next() {
		}
		if rd.Err() == nil {
			t.Error("damaged file read without error")
		}
		rd.Close()
	}
}

// TestRecFileEmptyAndAbort: an empty file reads as empty; Abort removes it.
func TestRecFileEmptyAndAbort(t *testing.T) {
	dir := t.TempDir()
	w, _ := CreateRecWriter(filepath.Join(dir, "e.rec"))
	w.Finish()
	rd, err := OpenRecReader(filepath.Join(dir, "e.rec"), true)
	if err != nil || rd.Next() || rd.Err() != nil {
		t.Fatalf("empty file: %v %v", err, rd.Err())
	}
	rd.Close()
	w, _ = CreateRecWriter(filepath.Join(dir, "a.rec"))
	w.Append(0, nil, []byte("x"))
	w.Abort()
	if _, err := os.Stat(filepath.Join(dir, "a.rec")); err == nil {
		t.Error("aborted file left behind")
	}
}

func BenchmarkRecWriter(b *testing.B) {
	path := filepath.Join(b.TempDir(), "b.rec")
	w, _ := CreateRecWriter(path)
	p := make([]byte, 117)
	for i := range b.N {
		binary.LittleEndian.PutUint64(p[40:], uint64(i))
		w.Append(uint64(i), nil, p)
	}
	w.Finish()
	info, _ := os.Stat(path)
	b.ReportMetric(float64(info.Size())/float64(b.N), "bytes/state")
	_ = fmt.Sprint
}
