// Package state owns the byte level of bkcheck: canonical state encodings,
// their fingerprints and the stores that remember which fingerprints have
// been visited.
package state

import (
	"errors"
	"math"

	"github.com/cespare/xxhash/v2"
)

// Fingerprint returns the 64-bit fingerprint of a canonical state encoding.
//
// It is xxHash64 with seed 0 over the bytes, nothing else: no per-process
// seed (unlike hash/maphash) and no dependence on the machine's word size or
// byte order, because fingerprints are written to disk, compared across
// resumed runs and frozen by a golden test. Changing it invalidates every
// stored run.
func Fingerprint(enc []byte) uint64 {
	return xxhash.Sum64(enc)
}

// CollisionProbability is TLC's "optimistic" estimate of the probability
// that two distinct states shared a fingerprint during a search that found
// distinct states out of generated ones: n*(g-n)/2^64. TLC prints it as
// "calculated (optimistic): val = ..."; we report the same figure so the two
// tools can be compared line for line. It is an estimate, not a bound.
func CollisionProbability(distinct, generated int64) float64 {
	if distinct <= 0 || generated <= distinct {
		return 0
	}
	return float64(distinct) * float64(generated-distinct) / math.Exp2(64)
}

// Errors returned by Reader.
var (
	ErrTruncated    = errors.New("state: encoding truncated")
	ErrOverflow     = errors.New("state: varint overflows 64 bits")
	ErrNonCanonical = errors.New("state: varint not minimally encoded")
	ErrTrailing     = errors.New("state: trailing bytes after encoding")
)

// Writer builds a canonical encoding. Reuse one Writer (Reset) per goroutine
// so that encoding a state does not allocate once the buffer has grown.
//
// Varints are the minimal LEB128 form (as encoding/binary writes them); the
// Reader rejects any other form, so every value has exactly one encoding and
// equal states always get equal fingerprints.
type Writer struct {
	buf []byte
}

// Reset empties the writer, keeping its buffer.
func (w *Writer) Reset() { w.buf = w.buf[:0] }

// Byte appends one byte.
func (w *Writer) Byte(b byte) { w.buf = append(w.buf, b) }

// Uvarint appends v as an unsigned LEB128 varint.
func (w *Writer) Uvarint(v uint64) {
	for v >= 0x80 {
		w.buf = append(w.buf, byte(v)|0x80)
		v >>= 7
	}
	w.buf = append(w.buf, byte(v))
}

// Varint appends v zig-zag encoded, so small negative numbers stay short.
func (w *Writer) Varint(v int64) {
	w.Uvarint(uint64(v<<1) ^ uint64(v>>63))
}

// Bytes returns the encoding so far. It aliases the writer's buffer: copy it
// before the next Reset if it must outlive that.
func (w *Writer) Bytes() []byte { return w.buf }

// Len returns the number of bytes written since the last Reset.
func (w *Writer) Len() int { return len(w.buf) }

// Reader decodes what a Writer wrote. It never panics: malformed input from
// a corrupt store or a fuzzer yields an error, and the first error sticks so
// a decoder may check once at the end (Err or Done).
type Reader struct {
	buf []byte
	off int
	err error
}

// NewReader returns a Reader over b (not copied).
func NewReader(b []byte) *Reader { return &Reader{buf: b} }

// Reset makes r read b from the start and clears any error.
func (r *Reader) Reset(b []byte) { *r = Reader{buf: b} }

// Err returns the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Remaining returns the number of unread bytes.
func (r *Reader) Remaining() int { return len(r.buf) - r.off }

// Byte reads one byte.
func (r *Reader) Byte() (byte, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.off >= len(r.buf) {
		r.err = ErrTruncated
		return 0, r.err
	}
	b := r.buf[r.off]
	r.off++
	return b, nil
}

// Uvarint reads an unsigned varint written by Writer.Uvarint.
func (r *Reader) Uvarint() (uint64, error) {
	if r.err != nil {
		return 0, r.err
	}
	var v uint64
	for i, shift := 0, uint(0); ; i, shift = i+1, shift+7 {
		if r.off >= len(r.buf) {
			r.err = ErrTruncated
			return 0, r.err
		}
		b := r.buf[r.off]
		r.off++
		if i == 9 && b > 1 {
			r.err = ErrOverflow
			return 0, r.err
		}
		if b < 0x80 {
			if b == 0 && i > 0 {
				r.err = ErrNonCanonical
				return 0, r.err
			}
			return v | uint64(b)<<shift, nil
		}
		v |= uint64(b&0x7f) << shift
	}
}

// Varint reads a signed varint written by Writer.Varint.
func (r *Reader) Varint() (int64, error) {
	u, err := r.Uvarint()
	if err != nil {
		return 0, err
	}
	return int64(u>>1) ^ -int64(u&1), nil
}

// Done returns the first error met, or ErrTrailing if bytes remain unread.
func (r *Reader) Done() error {
	if r.err != nil {
		return r.err
	}
	if r.off != len(r.buf) {
		return ErrTrailing
	}
	return nil
}
