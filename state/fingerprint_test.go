package state

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFingerprintGolden freezes the fingerprint function. If this fails,
// every stored run and every recorded count keyed by fingerprint is
// invalidated: do not "fix" the constants, fix the code.
func TestFingerprintGolden(t *testing.T) {
	seq := make([]byte, 33)
	for i := range seq {
		seq[i] = byte(i + 1)
	}
	cases := []struct {
		in   []byte
		want uint64
	}{
		{nil, 0xef46db3751d8e999}, // xxHash64("") with seed 0, the published value
		{[]byte{0}, 0xe934a84adb052768},
		{[]byte("a"), 0xd24ec4f1a98c6e5b}, // published value
		{[]byte("bkcheck"), 0x711e23bd66c7e384},
		{seq, 0x089471a1194be96a}, // > 32 bytes: exercises the striped loop
	}
	for _, c := range cases {
		if got := Fingerprint(c.in); got != c.want {
			t.Errorf("Fingerprint(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
	if Fingerprint([]byte{}) != Fingerprint(nil) {
		t.Error("empty and nil slices differ")
	}
}

func TestCollisionProbability(t *testing.T) {
	cases := []struct {
		n, g int64
		want float64
	}{
		{0, 0, 0},
		{10, 10, 0},
		{10, 5, 0},                  // nonsense input: no negative probability
		{1 << 32, 1<<32 + 1<<32, 1}, // 2^32 * 2^32 / 2^64
		{1000, 3000, 1000 * 2000 / math.Exp2(64)},
		{77_000_000, 500_000_000, 77e6 * 423e6 / math.Exp2(64)},
	}
	for _, c := range cases {
		got := CollisionProbability(c.n, c.g)
		if math.Abs(got-c.want) > 1e-12*math.Max(1, c.want) {
			t.Errorf("CollisionProbability(%d, %d) = %g, want %g", c.n, c.g, got, c.want)
		}
	}
	// 1e8 distinct out of 5e8 generated: 4e16 / 1.8447e19 ≈ 2.17e-3.
	if p := CollisionProbability(100_000_000, 500_000_000); p < 2.16e-3 || p > 2.18e-3 {
		t.Errorf("order of magnitude off: %g", p)
	}
}

func TestWriterReaderRoundTrip(t *testing.T) {
	var w Writer
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 2000; iter++ {
		w.Reset()
		type item struct {
			kind int
			u    uint64
			i    int64
		}
		var items []item
		for n := r.IntN(20); n > 0; n-- {
			it := item{kind: r.IntN(3)}
			switch it.kind {
			case 0:
				it.u = uint64(r.IntN(256))
				w.Byte(byte(it.u))
			case 1:
				it.u = r.Uint64() >> r.UintN(64)
				w.Uvarint(it.u)
			case 2:
				it.i = int64(r.Uint64()) >> r.UintN(64)
				w.Varint(it.i)
			}
			items = append(items, it)
		}
		if w.Len() != len(w.Bytes()) {
			t.Fatal("Len disagrees with Bytes")
		}
		rd := NewReader(w.Bytes())
		for _, it := range items {
			switch it.kind {
			case 0:
				b, err := rd.Byte()
				if err != nil || uint64(b) != it.u {
					t.Fatalf("Byte = %d, %v; want %d", b, err, it.u)
				}
			case 1:
				u, err := rd.Uvarint()
				if err != nil || u != it.u {
					t.Fatalf("Uvarint = %d, %v; want %d", u, err, it.u)
				}
			case 2:
				i, err := rd.Varint()
				if err != nil || i != it.i {
					t.Fatalf("Varint = %d, %v; want %d", i, err, it.i)
				}
			}
		}
		if err := rd.Done(); err != nil {
			t.Fatalf("Done: %v", err)
		}
	}
}

func TestVarintEdges(t *testing.T) {
	var w Writer
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, math.MaxInt64, math.MinInt64} {
		w.Reset()
		w.Varint(v)
		got, err := NewReader(w.Bytes()).Varint()
		if err != nil || got != v {
			t.Errorf("Varint(%d) round trip = %d, %v", v, got, err)
		}
	}
	for _, v := range []uint64{0, 127, 128, 1<<63 - 1, 1 << 63, math.MaxUint64} {
		w.Reset()
		w.Uvarint(v)
		rd := NewReader(w.Bytes())
		got, err := rd.Uvarint()
		if err != nil || got != v || rd.Done() != nil {
			t.Errorf("Uvarint(%d) round trip = %d, %v", v, got, err)
		}
	}
	// Small values stay small.
	w.Reset()
	w.Varint(-1)
	w.Uvarint(127)
	if !bytes.Equal(w.Bytes(), []byte{1, 127}) {
		t.Errorf("encoding = %x", w.Bytes())
	}
}

func TestReaderErrors(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		read func(*Reader) error
		want error
	}{
		{"byte on empty", nil, func(r *Reader) error { _, err := r.Byte(); return err }, ErrTruncated},
		{"uvarint on empty", nil, func(r *Reader) error { _, err := r.Uvarint(); return err }, ErrTruncated},
		{"uvarint cut", []byte{0x80, 0x80}, func(r *Reader) error { _, err := r.Uvarint(); return err }, ErrTruncated},
		{"varint cut", []byte{0xff}, func(r *Reader) error { _, err := r.Varint(); return err }, ErrTruncated},
		{"overflow 10th byte", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, func(r *Reader) error { _, err := r.Uvarint(); return err }, ErrOverflow},
		{"overflow 11 bytes", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x00}, func(r *Reader) error { _, err := r.Uvarint(); return err }, ErrOverflow},
		{"non-minimal zero", []byte{0x80, 0x00}, func(r *Reader) error { _, err := r.Uvarint(); return err }, ErrNonCanonical},
		{"non-minimal one", []byte{0x81, 0x80, 0x00}, func(r *Reader) error { _, err := r.Uvarint(); return err }, ErrNonCanonical},
		{"trailing", []byte{1, 2}, func(r *Reader) error { r.Byte(); return r.Done() }, ErrTrailing},
		{"sticky", []byte{0x80}, func(r *Reader) error { r.Uvarint(); r.Byte(); return r.Done() }, ErrTruncated},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(c.in)
			if err := c.read(r); !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
		})
	}
	var r Reader
	r.Reset([]byte{0x80})
	r.Uvarint()
	r.Reset([]byte{5})
	if b, err := r.Byte(); err != nil || b != 5 || r.Err() != nil || r.Remaining() != 0 {
		t.Errorf("Reset did not clear state: %d %v", b, err)
	}
}

// FuzzReader feeds arbitrary bytes to a decoder driven by the first byte.
// The reader must never panic, and whatever it accepts as a whole must
// re-encode to the very same bytes (one encoding per value).
func FuzzReader(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 2})
	f.Add([]byte{0xff, 0x80, 0x80, 0x01, 0x7f})
	f.Add([]byte{0x55, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		prog, data := in[0], in[1:]
		r := NewReader(data)
		var w Writer
		for i := 0; r.Err() == nil && r.Remaining() > 0; i++ {
			switch (prog >> (2 * (i % 4))) & 3 {
			case 0, 3:
				if b, err := r.Byte(); err == nil {
					w.Byte(b)
				}
			case 1:
				if u, err := r.Uvarint(); err == nil {
					w.Uvarint(u)
				}
			case 2:
				if v, err := r.Varint(); err == nil {
					w.Varint(v)
				}
			}
		}
		if r.Done() == nil && !bytes.Equal(w.Bytes(), data) {
			t.Fatalf("accepted %x but re-encodes to %x", data, w.Bytes())
		}
	})
}
