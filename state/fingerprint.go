// Package state owns the byte level of bkcheck: canonical state encodings,
// their fingerprints and the stores that remember which fingerprints have
// been visited.
package state

import (
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
