// Package state owns the byte level of bkcheck: canonical state encodings,
// their fingerprints, the fingerprint sets that remember which states have
// been visited (in memory, and as sorted runs in Badger), and the
// compressed record files a search on disk is made of.
package state

import (
	"fmt"
	"math"

	"github.com/cespare/xxhash/v2"
	"github.com/zeebo/xxh3"
)

// Fingerprint returns the 64-bit fingerprint of a canonical state encoding.
//
// It is xxHash64 with seed 0 over the bytes, nothing else: no per-process
// seed (unlike hash/maphash) and no dependence on the machine's word size or
// byte order, because fingerprints are written to disk, compared across
// resumed runs and machines and frozen by a golden test. Changing it
// invalidates every stored run.
func Fingerprint(enc []byte) uint64 {
	return xxhash.Sum64(enc)
}

// FP is a fingerprint of 64, 96 or 128 bits. Hi is always the 64-bit
// Fingerprint of the bytes, so that the wider fingerprints only add bits;
// Lo holds the extra bits left-aligned (the top 32 bits for 96, all 64 for
// 128) and is zero for 64-bit fingerprints. They come from XXH3-64, an
// independent hash (different algorithm and constants) of the same bytes.
type FP struct{ Hi, Lo uint64 }

// Compare orders fingerprints by Hi, then Lo: the order of sorted runs.
func (a FP) Compare(b FP) int {
	switch {
	case a.Hi < b.Hi:
		return -1
	case a.Hi > b.Hi:
		return 1
	case a.Lo < b.Lo:
		return -1
	case a.Lo > b.Lo:
		return 1
	}
	return 0
}

// Less reports a.Compare(b) < 0.
func (a FP) Less(b FP) bool { return a.Hi < b.Hi || a.Hi == b.Hi && a.Lo < b.Lo }

func (a FP) String() string {
	if a.Lo == 0 {
		return fmt.Sprintf("%#016x", a.Hi)
	}
	return fmt.Sprintf("%#016x%016x", a.Hi, a.Lo)
}

// Fingerprint widths.
const (
	DefaultFingerprintBits = 64
	// LargeRunFingerprintBits is the width runs on disk get by default:
	// at billions of states 64 bits no longer make a collision unlikely
	// (see CollisionProbabilityBits), and 96 bits keep the sorted runs on
	// disk under 10 bytes per state.
	LargeRunFingerprintBits = 96
	// CollisionWarning is the collision estimate above which a verdict
	// says that a fingerprint collision may have hidden states.
	CollisionWarning = 1e-3
)

// ValidFingerprintBits reports whether bits is a supported width: 64, 96
// or 128.
func ValidFingerprintBits(bits int) bool { return bits == 64 || bits == 96 || bits == 128 }

// Fingerprinter computes fingerprints of one width. Its zero value is not
// valid; use NewFingerprinter.
type Fingerprinter struct {
	bits   int
	loMask uint64
}

// NewFingerprinter returns the fingerprinter of the given width, which
// must satisfy ValidFingerprintBits.
func NewFingerprinter(bits int) Fingerprinter {
	switch bits {
	case 64:
		return Fingerprinter{bits: 64}
	case 96:
		return Fingerprinter{bits: 96, loMask: 0xFFFFFFFF00000000}
	case 128:
		return Fingerprinter{bits: 128, loMask: ^uint64(0)}
	}
	panic(fmt.Sprintf("state: unsupported fingerprint width %d", bits))
}

// Wide reports whether fingerprints have a Lo part (more than 64 bits).
func (f Fingerprinter) Wide() bool { return f.loMask != 0 }

// Of returns the fingerprint of key.
func (f Fingerprinter) Of(key []byte) FP {
	fp := FP{Hi: xxhash.Sum64(key)}
	if f.loMask != 0 {
		fp.Lo = xxh3.Hash(key) & f.loMask
	}
	return fp
}

// CollisionProbability is TLC's "optimistic" estimate of the probability
// that two distinct states shared a 64-bit fingerprint during a search that
// found distinct states out of generated ones: n*(g-n)/2^64. TLC prints it
// as "calculated (optimistic): val = ..."; we report the same figure so the
// two tools can be compared line for line. It is an estimate, not a bound.
func CollisionProbability(distinct, generated int64) float64 {
	return CollisionProbabilityBits(distinct, generated, 64)
}

// CollisionProbabilityBits is CollisionProbability for fingerprints of the
// given width: n*(g-n)/2^bits.
func CollisionProbabilityBits(distinct, generated int64, bits int) float64 {
	if distinct <= 0 || generated <= distinct {
		return 0
	}
	return float64(distinct) * float64(generated-distinct) / math.Exp2(float64(bits))
}
