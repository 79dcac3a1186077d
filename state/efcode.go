package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// A block of a sorted run stores up to runBlockFPs fingerprints in
// increasing order, their Hi parts Elias-Fano coded and their Lo parts (if
// any) verbatim:
//
//	uvarint n            number of fingerprints, >= 1
//	uint64  base         Hi of the first (little-endian)
//	byte    L            low bits per value
//	uvarint highWords    then highWords little-endian words: the high
//	                     parts in unary (value i sets bit (x_i>>L)+i, where
//	                     x_i = Hi_i-base)
//	uvarint lowWords     then lowWords words: the low L bits of each x_i,
//	                     packed from bit 0 up
//	n*loBytes bytes      Lo parts, big-endian, top loBytes bytes of Lo
//
// Elias-Fano needs about 2 + log2(range/n) bits per value: for n
// uniformly random 64-bit values out of a run of R, 66 - log2(R) bits, so
// 4.6 bytes per state for a run of 500 million (64-bit fingerprints), 8.6
// for 96-bit ones. The Hi parts may repeat (wide fingerprints that share
// their first 64 bits); Elias-Fano codes non-decreasing sequences.
const runBlockFPs = 1 << 16

var errBadBlock = errors.New("state: corrupt run block")

// appendEFBlock appends the encoding of fps (sorted, non-empty) to dst.
func appendEFBlock(dst []byte, fps []FP, loBytes int) []byte {
	n := uint64(len(fps))
	base := fps[0].Hi
	rng := fps[n-1].Hi - base
	var l uint
	if q := rng / n; q > 0 {
		l = uint(63 - bits.LeadingZeros64(q))
	}
	highBits := n + rng>>l + 1
	highWords := (highBits + 63) / 64
	lowWords := (n*uint64(l) + 63) / 64
	dst = binary.AppendUvarint(dst, n)
	dst = binary.LittleEndian.AppendUint64(dst, base)
	dst = append(dst, byte(l))
	dst = binary.AppendUvarint(dst, highWords)
	hi := len(dst)
	dst = append(dst, make([]byte, 8*highWords)...)
	dst = binary.AppendUvarint(dst, lowWords)
	lo := len(dst)
	dst = append(dst, make([]byte, 8*lowWords)...)
	high, low := dst[hi:hi+int(8*highWords)], dst[lo:lo+int(8*lowWords)]
	mask := uint64(1)<<l - 1
	for i, fp := range fps {
		x := fp.Hi - base
		pos := x>>l + uint64(i)
		w := high[8*(pos/64):]
		binary.LittleEndian.PutUint64(w, binary.LittleEndian.Uint64(w)|1<<(pos%64))
		if l == 0 {
			continue
		}
		v := x & mask
		p := uint64(i) * uint64(l)
		w = low[8*(p/64):]
		binary.LittleEndian.PutUint64(w, binary.LittleEndian.Uint64(w)|v<<(p%64))
		if p%64+uint64(l) > 64 {
			w = low[8*(p/64+1):]
			binary.LittleEndian.PutUint64(w, binary.LittleEndian.Uint64(w)|v>>(64-p%64))
		}
	}
	for _, fp := range fps {
		switch loBytes {
		case 4:
			dst = binary.BigEndian.AppendUint32(dst, uint32(fp.Lo>>32))
		case 8:
			dst = binary.BigEndian.AppendUint64(dst, fp.Lo)
		}
	}
	return dst
}

// decodeEFBlock decodes a block into out (reset first) and returns it.
func decodeEFBlock(b []byte, loBytes int, out []FP) ([]FP, error) {
	out = out[:0]
	n, k := binary.Uvarint(b)
	if k <= 0 || n == 0 || n > runBlockFPs || len(b) < k+9 {
		return out, errBadBlock
	}
	b = b[k:]
	base := binary.LittleEndian.Uint64(b)
	l := uint(b[8])
	b = b[9:]
	if l > 63 {
		return out, errBadBlock
	}
	highWords, k := binary.Uvarint(b)
	if k <= 0 || highWords > uint64(len(b)-k)/8 {
		return out, errBadBlock
	}
	high := b[k : k+int(8*highWords)]
	b = b[k+int(8*highWords):]
	lowWords, k := binary.Uvarint(b)
	if k <= 0 || lowWords > uint64(len(b)-k)/8 || lowWords != (n*uint64(l)+63)/64 {
		return out, errBadBlock
	}
	low := b[k : k+int(8*lowWords)]
	los := b[k+int(8*lowWords):]
	if uint64(len(los)) != n*uint64(loBytes) {
		return out, errBadBlock
	}
	mask := uint64(1)<<l - 1
	var i uint64
	for w := uint64(0); w < highWords && i < n; w++ {
		word := binary.LittleEndian.Uint64(high[8*w:])
		for word != 0 && i < n {
			pos := w*64 + uint64(bits.TrailingZeros64(word))
			word &= word - 1
			if pos < i {
				return out, errBadBlock
			}
			x := (pos - i) << l
			if l > 0 {
				p := i * uint64(l)
				v := binary.LittleEndian.Uint64(low[8*(p/64):]) >> (p % 64)
				if p%64+uint64(l) > 64 {
					v |= binary.LittleEndian.Uint64(low[8*(p/64+1):]) << (64 - p%64)
				}
				x |= v & mask
			}
			fp := FP{Hi: base + x}
			switch loBytes {
			case 4:
				fp.Lo = uint64(binary.BigEndian.Uint32(los[4*i:])) << 32
			case 8:
				fp.Lo = binary.BigEndian.Uint64(los[8*i:])
			}
			out = append(out, fp)
			i++
		}
	}
	if i != n {
		return out, fmt.Errorf("%w: %d of %d values", errBadBlock, i, n)
	}
	return out, nil
}
