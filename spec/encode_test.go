package spec

import (
	"reflect"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bkcheck/bkcheck/state"
)

// reachable returns the first limit reachable states of m, in BFS order.
func reachable(t testing.TB, m *Model, limit int) []State {
	t.Helper()
	init := m.Init()
	seen := map[string]bool{string(m.Encode(nil, &init)): true}
	out := []State{init}
	var scratch State
	for i := 0; i < len(out) && len(out) < limit; i++ {
		cur := out[i]
		m.Next(&cur, &scratch, func(_ Action, s *State) {
			k := string(m.Encode(nil, s))
			if !seen[k] {
				seen[k] = true
				var c State
				c.CopyFrom(s)
				out = append(out, c)
			}
		})
	}
	return out
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, p := range []Params{
		{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1},
		{Bookies: 3, Clients: 3, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 2, Inflight: 2},
	} {
		m, err := NewModel(p)
		if err != nil {
			t.Fatal(err)
		}
		states := reachable(t, m, 20000)
		var got State
		for _, s := range states {
			enc := m.Encode(nil, &s)
			if err := m.Decode(enc, &got); err != nil {
				t.Fatalf("%v: decode: %v", p, err)
			}
			if a, b := normalise(s), normalise(got); !reflect.DeepEqual(a, b) {
				t.Fatalf("%v: round trip differs (-want +got):\n%s", p, cmp.Diff(a, b))
			}
			if string(m.Encode(nil, &got)) != string(enc) {
				t.Fatalf("%v: re-encoding differs", p)
			}
		}
	}
}

// normalise makes nil and empty message slices compare equal.
func normalise(s State) State {
	if len(s.Msgs) == 0 {
		s.Msgs = nil
	}
	return s
}

func TestDecodeRejectsMalformed(t *testing.T) {
	m, _ := NewModel(DefaultParams())
	init := m.Init()
	enc := m.Encode(nil, &init)
	if enc[len(enc)-1] != 0 {
		t.Fatalf("initial encoding %x does not end with its message count 0", enc)
	}
	// The message count 0 written in two bytes: the same state, but not its
	// one encoding.
	nonMinimal := append(append([]byte{}, enc[:len(enc)-1]...), 0x80, 0x00)
	var s State
	for _, bad := range [][]byte{nil, enc[:len(enc)-1], append(append([]byte{}, enc...), 0), {9, 0, 0, 0}, nonMinimal} {
		if err := m.Decode(bad, &s); err == nil {
			t.Errorf("Decode(%v) accepted malformed input", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	m, _ := NewModel(Params{Bookies: 3, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 2, Inflight: 2})
	for _, s := range reachable(f, m, 200) {
		f.Add(m.Encode(nil, &s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Whatever Decode accepts is the one encoding of its state: were
		// two encodings accepted for one state, a state could be stored
		// under two fingerprints.
		var s State
		if err := m.Decode(data, &s); err != nil {
			return
		}
		if enc := m.Encode(nil, &s); string(enc) != string(data) {
			t.Fatalf("Decode accepted %x, which re-encodes to %x", data, enc)
		}
	})
}

// TestFingerprintsGolden freezes the encoding and the fingerprint across
// processes and machines: the fingerprint of the initial state and a digest
// of the fingerprints of all 799 states of the smallest reference model.
// If the encoding changes on purpose, update the constants (and note that
// stored runs made with the old encoding cannot be resumed).
func TestFingerprintsGolden(t *testing.T) {
	m, _ := NewModel(Params{Bookies: 1, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1})
	init := m.Init()
	if got, want := state.Fingerprint(m.Encode(nil, &init)), uint64(0x56febe0c60c67fb7); got != want {
		t.Errorf("initial state fingerprint = %#x, golden %#x", got, want)
	}
	var fps []uint64
	for _, s := range reachable(t, m, 1<<20) {
		fps = append(fps, state.Fingerprint(m.Encode(nil, &s)))
	}
	sort.Slice(fps, func(i, j int) bool { return fps[i] < fps[j] })
	var all []byte
	for _, fp := range fps {
		for i := 0; i < 8; i++ {
			all = append(all, byte(fp>>(8*i)))
		}
	}
	if len(fps) != 799 {
		t.Fatalf("%d states", len(fps))
	}
	if got, want := state.Fingerprint(all), uint64(0x8367dfec831f072a); got != want {
		t.Errorf("state-space digest = %#x, golden %#x", got, want)
	}
}

// BenchmarkEncodeDecode measures the canonical encoding of a state and its
// decoding, on reachable states of the TLC set (2 bookies, Qw 2, Qa 1):
// every successor is encoded and every expanded state decoded, a third
// of a plain search between them.
func BenchmarkEncodeDecode(b *testing.B) {
	m, _ := NewModel(Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1})
	states := reachable(b, m, 20000)
	encs := make([][]byte, len(states))
	for i := range states {
		encs[i] = m.Encode(nil, &states[i])
	}
	b.Run("encode", func(b *testing.B) {
		var buf []byte
		for i := 0; i < b.N; i++ {
			buf = m.Encode(buf[:0], &states[i%len(states)])
		}
	})
	b.Run("decode", func(b *testing.B) {
		var s State
		for i := 0; i < b.N; i++ {
			if err := m.Decode(encs[i%len(encs)], &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
