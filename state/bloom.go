package state

import "math/bits"

// layerBloom is the Badger store's filter over every fingerprint once its
// exact table has outgrown the memory budget (overflow mode): a scalable
// Bloom filter made of blocked Bloom filters ("layers"), each sized for
// twice the states of the one before. A fingerprint may be present if any
// layer says so.
//
// Why this shape:
//
//   - A Bloom filter, because in a breadth-first search most Contains calls
//     that get past the recent windows ask about states that are new, and
//     "certainly new" is what a Bloom filter answers, in 12 to 24 bits per
//     state against 64 / load factor for an exact table. A false positive
//     costs one Badger read, never a wrong answer: Badger's f/ index
//     decides.
//   - Blocked: a fingerprint's k bits all fall in one 512-bit block (eight
//     words, one 64-byte cache line), so a query costs one cache miss per
//     layer instead of k. The block is picked by the same range reduction
//     as fpTable's home slot; the bits within it by a second, independent
//     mix cut into k groups of 9 bits, so one 64-bit hash serves all k = 7.
//   - Layered: when the cache overflows nobody knows how many states the
//     run will reach, and a Bloom filter cannot grow without its keys
//     (here, a full scan of Badger). Adding a layer twice the size of the
//     last whenever it is full keeps memory between about 12 and 24 bits
//     per state and the number of layers logarithmic in the states.
//   - 12 bits per state with k = 7: about 0.4% false positives per full
//     layer (measured). A fingerprint is "certainly new" only if every
//     layer misses, so the rates add up: about 1.7% with 4 layers (1M
//     states from a first layer of 64Ki), 2.9% with 7 (8M). startOverflow
//     sizes the first layer for twice the states at that point, which
//     keeps the layers few.
type layerBloom struct {
	layers []bloomLayer
}

type bloomLayer struct {
	words  []uint64 // 512-bit blocks of 8 words
	blocks uint64
	cap    uint64 // states this layer is sized for
	n      uint64 // states added
}

const (
	bloomBitsPerState = 12
	bloomK            = 7 // 7 groups of 9 bits of one 64-bit hash
)

func (b *layerBloom) addLayer(capacity uint64) {
	blocks := (capacity*bloomBitsPerState + 511) / 512
	b.layers = append(b.layers, bloomLayer{
		words:  make([]uint64, blocks*8),
		blocks: blocks,
		cap:    capacity,
	})
}

func (b *layerBloom) bytes() int64 {
	var n int64
	for _, l := range b.layers {
		n += 8 * int64(len(l.words))
	}
	return n
}

// block returns the block of l for fp and the second hash whose 9-bit
// groups pick the bits within the block.
func (l *bloomLayer) block(fp uint64) ([]uint64, uint64) {
	blk := reduce(fp, l.blocks)
	h2 := bits.RotateLeft64(fp, 29) * 0xC2B2AE3D27D4EB4F
	h2 ^= h2 >> 31
	return l.words[blk*8 : blk*8+8 : blk*8+8], h2
}

func (b *layerBloom) add(fp uint64) {
	if len(b.layers) == 0 || b.layers[len(b.layers)-1].n >= b.layers[len(b.layers)-1].cap {
		next := uint64(1 << 16)
		if len(b.layers) > 0 {
			next = 2 * b.layers[len(b.layers)-1].cap
		}
		b.addLayer(next)
	}
	l := &b.layers[len(b.layers)-1]
	w, h2 := l.block(fp)
	for i := range bloomK {
		bit := (h2 >> (9 * i)) & 511
		w[bit>>6] |= 1 << (bit & 63)
	}
	l.n++
}

func (b *layerBloom) mayContain(fp uint64) bool {
	for i := range b.layers {
		w, h2 := b.layers[i].block(fp)
		hit := true
		for j := range bloomK {
			bit := (h2 >> (9 * j)) & 511
			if w[bit>>6]&(1<<(bit&63)) == 0 {
				hit = false
				break
			}
		}
		if hit {
			return true
		}
	}
	return false
}
