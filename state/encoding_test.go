package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestReaderRoundTrip reads back random mixes of bytes and varints written
// with encoding/binary, the writer the model uses.
func TestReaderRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var r Reader
	for iter := 0; iter < 2000; iter++ {
		var enc []byte
		var vals []uint64
		var isByte []bool
		for n := rng.IntN(20); n > 0; n-- {
			if rng.IntN(2) == 0 {
				v := uint64(rng.IntN(256))
				enc = append(enc, byte(v))
				vals, isByte = append(vals, v), append(isByte, true)
			} else {
				v := rng.Uint64() >> rng.UintN(64)
				enc = binary.AppendUvarint(enc, v)
				vals, isByte = append(vals, v), append(isByte, false)
			}
		}
		r.Reset(enc)
		for i, want := range vals {
			var got uint64
			if isByte[i] {
				got = uint64(r.Byte())
			} else {
				got = r.Uvarint()
			}
			if got != want || r.Err() != nil {
				t.Fatalf("item %d = %d, %v; want %d", i, got, r.Err(), want)
			}
		}
		if err := r.Done(); err != nil {
			t.Fatalf("Done: %v", err)
		}
	}
}

func TestUvarintEdges(t *testing.T) {
	var r Reader
	vals := []uint64{0, 127, 128, 1<<63 - 1, 1 << 63, math.MaxUint64}
	for k := 1; k < 64; k++ { // every length, at both ends
		vals = append(vals, 1<<k-1, 1<<k)
	}
	for _, v := range vals {
		for _, pad := range []int{0, 8} { // with 8 bytes to spare: the one-load path
			enc := binary.AppendUvarint(nil, v)
			r.Reset(append(enc, make([]byte, pad)...))
			if got := r.Uvarint(); got != v || r.Err() != nil || r.Remaining() != pad {
				t.Errorf("Uvarint(%d) round trip, %d bytes after = %d, %v, %d left", v, pad, got, r.Err(), r.Remaining())
			}
		}
	}
}

func TestReaderErrors(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		read func(*Reader)
		want error
	}{
		{"byte on empty", nil, func(r *Reader) { r.Byte() }, ErrTruncated},
		{"uvarint on empty", nil, func(r *Reader) { r.Uvarint() }, ErrTruncated},
		{"uvarint cut", []byte{0x80, 0x80}, func(r *Reader) { r.Uvarint() }, ErrTruncated},
		{"overflow 10th byte", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, func(r *Reader) { r.Uvarint() }, ErrOverflow},
		{"overflow 11 bytes", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x00}, func(r *Reader) { r.Uvarint() }, ErrOverflow},
		{"non-minimal zero", []byte{0x80, 0x00}, func(r *Reader) { r.Uvarint() }, ErrNonCanonical},
		{"non-minimal one", []byte{0x81, 0x80, 0x00}, func(r *Reader) { r.Uvarint() }, ErrNonCanonical},
		// The same with 8 bytes or more to read: the one-load path.
		{"non-minimal zero, padded", []byte{0x80, 0x00, 1, 2, 3, 4, 5, 6, 7}, func(r *Reader) { r.Uvarint() }, ErrNonCanonical},
		{"non-minimal 5 bytes, padded", []byte{0x81, 0x80, 0x80, 0x80, 0x00, 1, 2, 3, 4}, func(r *Reader) { r.Uvarint() }, ErrNonCanonical},
		{"overflow, padded", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 1}, func(r *Reader) { r.Uvarint() }, ErrOverflow},
		{"trailing", []byte{1, 2}, func(r *Reader) { r.Byte() }, ErrTrailing},
		{"sticky", []byte{0x80}, func(r *Reader) { r.Uvarint(); r.Byte(); r.Fail(errors.New("later")) }, ErrTruncated},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r Reader
			r.Reset(c.in)
			c.read(&r)
			if err := r.Done(); !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
		})
	}
	var r Reader
	r.Reset([]byte{0x80})
	r.Uvarint()
	r.Reset([]byte{5})
	if b := r.Byte(); b != 5 || r.Err() != nil || r.Remaining() != 0 {
		t.Errorf("Reset did not clear the error: %d %v", b, r.Err())
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
		var r Reader
		r.Reset(data)
		var out []byte
		for i := 0; r.Err() == nil && r.Remaining() > 0; i++ {
			if (prog>>(i%8))&1 == 0 {
				b := r.Byte()
				out = append(out, b)
			} else if v := r.Uvarint(); r.Err() == nil {
				out = binary.AppendUvarint(out, v)
			}
		}
		if r.Done() == nil && !bytes.Equal(out, data) {
			t.Fatalf("accepted %x but re-encodes to %x", data, out)
		}
	})
}
