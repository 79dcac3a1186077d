package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Errors recorded by Reader.
var (
	ErrTruncated    = errors.New("encoding truncated")
	ErrOverflow     = errors.New("varint overflows 64 bits")
	ErrNonCanonical = errors.New("varint not minimally encoded")
	ErrTrailing     = errors.New("trailing bytes after the encoding")
)

// Reader is a cursor over a canonical state encoding: bytes, and unsigned
// varints in the minimal LEB128 form that encoding/binary.AppendUvarint
// writes. Any other form of a varint is rejected, so every value has exactly
// one encoding and a decoder built on Reader can promise that whatever it
// accepts re-encodes to the same bytes, which is what makes fingerprints of
// encodings fingerprints of states.
//
// Reading never panics. The first error sticks and later reads return 0, so
// a decoder reads a whole state and checks Err once at the end: the hot
// methods stay small enough to be inlined into the model's decoder, which
// runs millions of times a second.
type Reader struct {
	b   []byte
	i   int
	err error
}

// Reset makes r read b (not copied) from the start and clears any error.
func (r *Reader) Reset(b []byte) { *r = Reader{b: b} }

// Err returns the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Remaining returns the number of unread bytes.
func (r *Reader) Remaining() int { return len(r.b) - r.i }

// Fail records err unless an error is already recorded. Decoders use it for
// their own structural checks so that the first problem is the one reported.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.i < len(r.b) {
		v := r.b[r.i]
		r.i++
		return v
	}
	r.Fail(ErrTruncated)
	return 0
}

// Uvarint reads a minimally encoded unsigned LEB128 varint.
func (r *Reader) Uvarint() uint64 {
	if r.i < len(r.b) && r.b[r.i] < 0x80 {
		v := r.b[r.i]
		r.i++
		return uint64(v)
	}
	return r.uvarintSlow()
}

func (r *Reader) uvarintSlow() uint64 {
	// Up to 5 bytes (35 bits, a message record's width) from one 8-byte
	// load, without a branch per byte: where 8 bytes remain, the varint's
	// end is the first byte with its high bit clear.
	if r.i+8 <= len(r.b) {
		x := binary.LittleEndian.Uint64(r.b[r.i:])
		if stop := ^x & 0x0000008080808080; stop != 0 {
			n := bits.TrailingZeros64(stop)/8 + 1
			if n > 1 && x>>(8*(n-1))&0xff == 0 {
				r.Fail(ErrNonCanonical)
				return 0
			}
			x &= 1<<(8*n) - 1
			r.i += n
			return x&0x7f | x>>1&(0x7f<<7) | x>>2&(0x7f<<14) | x>>3&(0x7f<<21) | x>>4&(0x7f<<28)
		}
	}
	return r.uvarintLoop()
}

func (r *Reader) uvarintLoop() uint64 {
	var v uint64
	for n, shift := 0, uint(0); ; n, shift = n+1, shift+7 {
		if r.i >= len(r.b) {
			r.Fail(ErrTruncated)
			return 0
		}
		b := r.b[r.i]
		r.i++
		if n == 9 && b > 1 {
			r.Fail(ErrOverflow)
			return 0
		}
		if b < 0x80 {
			if b == 0 && n > 0 {
				r.Fail(ErrNonCanonical)
				return 0
			}
			return v | uint64(b)<<shift
		}
		v |= uint64(b&0x7f) << shift
	}
}

// Done returns the first error met, or an error naming the unread bytes if
// the encoding goes on past what the decoder read.
func (r *Reader) Done() error {
	if r.err == nil && r.i != len(r.b) {
		r.err = fmt.Errorf("%w: %d", ErrTrailing, len(r.b)-r.i)
	}
	return r.err
}
