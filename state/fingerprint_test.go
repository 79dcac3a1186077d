package state

import (
	"math"
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

// TestWideFingerprintGolden freezes the wide fingerprints: Hi is the
// 64-bit fingerprint, Lo XXH3-64 (published values for "" and "a"), cut to
// its top 32 bits for 96-bit fingerprints.
func TestWideFingerprintGolden(t *testing.T) {
	seq := make([]byte, 33)
	for i := range seq {
		seq[i] = byte(i + 1)
	}
	cases := []struct {
		in []byte
		lo uint64
	}{
		{nil, 0x2d06800538d394c2}, // XXH3_64bits(""), the published value
		{[]byte{0}, 0xc44bdff4074eecdb},
		{[]byte("a"), 0xe6c632b61e964e1f}, // published value
		{[]byte("bkcheck"), 0x90686b8e57aaa28a},
		{seq, 0xeaaad53957a947fc},
	}
	for _, c := range cases {
		hi := Fingerprint(c.in)
		if got := NewFingerprinter(128).Of(c.in); got != (FP{hi, c.lo}) {
			t.Errorf("128-bit fingerprint of %q = %v, want %#x %#x", c.in, got, hi, c.lo)
		}
		if got := NewFingerprinter(96).Of(c.in); got != (FP{hi, c.lo &^ 0xFFFFFFFF}) {
			t.Errorf("96-bit fingerprint of %q = %v", c.in, got)
		}
		if got := NewFingerprinter(64).Of(c.in); got != (FP{Hi: hi}) {
			t.Errorf("64-bit fingerprint of %q = %v", c.in, got)
		}
	}
	for _, bits := range []int{0, 32, 63, 65, 256} {
		if ValidFingerprintBits(bits) {
			t.Errorf("%d bits accepted", bits)
		}
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

func TestCollisionProbabilityBits(t *testing.T) {
	n, g := int64(3e9), int64(15e9)
	p64 := CollisionProbabilityBits(n, g, 64)
	if p64 != CollisionProbability(n, g) || p64 < 1 {
		t.Errorf("64 bits: %g", p64)
	}
	if p := CollisionProbabilityBits(n, g, 96); math.Abs(p-p64/math.Exp2(32)) > 1e-20 || p > 1e-9 {
		t.Errorf("96 bits: %g", p)
	}
	if p := CollisionProbabilityBits(n, g, 128); p > 1e-18 {
		t.Errorf("128 bits: %g", p)
	}
}
