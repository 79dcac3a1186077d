package msgbag

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/state"
)

type key uint32

// TestInsertKeepsOrder: a bag built by Insert in any order is the sorted
// bag, and Find, Sent and Deliverable answer from it.
func TestInsertKeepsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		want := map[key]int8{}
		var ms []Msg[key]
		for range rng.IntN(12) {
			k := key(rng.IntN(40))
			if _, ok := want[k]; ok {
				continue
			}
			c := int8(rng.IntN(3) - 1)
			want[k] = c
			ms = Insert(ms, k, c)
		}
		if !slices.IsSortedFunc(ms, func(a, b Msg[key]) int { return int(a.Key) - int(b.Key) }) || len(ms) != len(want) {
			t.Fatalf("bag %v is not the sorted set of %v", ms, want)
		}
		for k := key(0); k < 40; k++ {
			c, sent := want[k]
			if Sent(ms, k) != sent || Deliverable(ms, k) != (sent && c == 1) {
				t.Fatalf("key %d in %v: Sent %v Deliverable %v, want sent %v count %d", k, ms, Sent(ms, k), Deliverable(ms, k), sent, c)
			}
		}
	}
}

func TestSetCount(t *testing.T) {
	ms := Insert(Insert(nil, key(7), 1), key(3), 1)
	SetCount(ms, 7, 0)
	if ms[1] != (Msg[key]{Key: 7, Count: 0}) || ms[0].Count != 1 {
		t.Fatalf("after SetCount(7, 0): %v", ms)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "never sent") {
			t.Fatalf("SetCount of an unsent key: recovered %v, want a panic naming it", r)
		}
	}()
	SetCount(ms, 5, 0)
}

// TestCopies: a send while a copy is in flight adds one, up to MaxCopies;
// a send of a record processed, lost or never sent is one copy; a
// delivery takes one, and of none in flight is the model's error.
func TestCopies(t *testing.T) {
	ms := Insert(Insert(Insert(nil, key(1), 0), key(2), -1), key(3), 1)
	for _, c := range []struct {
		k    key
		want int8
	}{{1, 1}, {2, 1}, {3, 2}, {9, 1}} {
		if got := Resent(ms, c.k); got != c.want {
			t.Errorf("Resent(%d) in %v = %d, want %d", c.k, ms, got, c.want)
		}
	}
	SetCount(ms, 3, MaxCopies)
	if got := Resent(ms, 3); got != MaxCopies {
		t.Errorf("Resent of a record with %d copies in flight = %d, want it capped at %d", MaxCopies, got, MaxCopies)
	}
	Deliver(ms, 3)
	Deliver(ms, 3)
	if i, _ := Find(ms, 3); ms[i].Count != 0 {
		t.Fatalf("two deliveries of two copies leave count %d, want 0 (processed)", ms[i].Count)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "none is in flight") {
			t.Fatalf("Deliver of a processed record: recovered %v, want a panic", r)
		}
	}()
	Deliver(ms, 3)
}

func none(key) string { return "" }

// TestRoundTrip: Read gives back what Append wrote, reusing the buffer it
// is given.
func TestRoundTrip(t *testing.T) {
	ms := []Msg[key]{{1, -1}, {2, 0}, {300, 1}, {301, MaxCopies}, {1<<20 - 1, 1}}
	enc := Append([]byte{0xAA}, ms)
	var r state.Reader
	r.Reset(enc[1:])
	buf := make([]Msg[key], 1, 8)
	got := Read(&r, buf, 20, none)
	if err := r.Done(); err != nil || !slices.Equal(got, ms) || &got[0] != &buf[0] {
		t.Fatalf("Read(Append(%v)) = %v, %v (buffer reused: %v)", ms, got, err, &got[0] == &buf[0])
	}
}

// TestReadRejects: every non-canonical or invalid encoding is an error
// naming its problem, never a panic.
func TestReadRejects(t *testing.T) {
	rec := func(k uint64, c int) uint64 { return k<<2 | uint64(c+1) }
	enc := func(n uint64, vs ...uint64) []byte {
		b := []byte{byte(n)}
		for _, v := range vs {
			b = appendUvarint(b, v)
		}
		return b
	}
	odd := func(k key) string {
		if k%2 == 1 {
			return "names an unknown bookie"
		}
		return ""
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"count beyond input", enc(5, rec(2, 0)), "message count 5 exceeds the remaining input"},
		{"truncated varint", []byte{1, 0x80}, "truncated"},
		{"key too wide", enc(1, rec(1<<8, 0)), "message 0 has an invalid record"},
		{"model's check", enc(2, rec(2, 0), rec(3, 1)), "message 1 names an unknown bookie"},
		{"unsorted", enc(2, rec(4, 0), rec(2, 0)), "messages not in canonical order"},
		{"repeated", enc(2, rec(4, 0), rec(4, 1)), "messages not in canonical order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r state.Reader
			r.Reset(tc.in)
			Read(&r, []Msg[key](nil), 8, odd)
			if err := r.Done(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Read(%x): %v, want an error containing %q", tc.in, err, tc.want)
			}
		})
	}
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// TestAppendMatchesUvarints: Append writes what one binary.AppendUvarint
// per record would, for records of every varint length.
func TestAppendMatchesUvarints(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := range 40 {
		var ms []Msg[uint32]
		for i := 0; i < n; i++ {
			ms = append(ms, Msg[uint32]{Key: rng.Uint32() >> uint(rng.IntN(32)), Count: int8(rng.IntN(3) - 1)})
		}
		want := binary.AppendUvarint([]byte{9}, uint64(len(ms)))
		for _, m := range ms {
			want = binary.AppendUvarint(want, uint64(m.Key)<<2|uint64(m.Count+1))
		}
		if got := Append([]byte{9}, ms); !bytes.Equal(got, want) {
			t.Fatalf("n=%d: %x, want %x", n, got, want)
		}
	}
}
