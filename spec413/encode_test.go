package spec413

import (
	"encoding/binary"
	"reflect"
	"slices"
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
			if k := string(m.Encode(nil, s)); !seen[k] {
				seen[k] = true
				var c State
				c.CopyFrom(s)
				out = append(out, c)
			}
		})
	}
	return out
}

func mustModel(t testing.TB, p Params) *Model {
	t.Helper()
	m, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// normalise makes nil and empty message slices compare equal.
func normalise(s State) State {
	if len(s.Msgs) == 0 {
		s.Msgs = nil
	}
	return s
}

// TestEncodeRoundTrip: every reachable state of several parameter sets
// (ensemble changes, several entries, both fencing settings) decodes to
// itself and re-encodes to the same bytes.
func TestEncodeRoundTrip(t *testing.T) {
	for _, p := range []Params{
		{Bookies: 1, WriteQuorum: 1, AckQuorum: 1, SendLimit: 2},
		{Bookies: 3, WriteQuorum: 2, AckQuorum: 1, SendLimit: 1, Options: Options{RecoveryReadsFence: true}},
		{Bookies: 3, WriteQuorum: 2, AckQuorum: 2, SendLimit: 2},
		Shipped(),
	} {
		t.Run(p.String(), func(t *testing.T) {
			m := mustModel(t, p)
			var got State
			for _, s := range reachable(t, m, 20000) {
				enc := m.Encode(nil, &s)
				if err := m.Decode(enc, &got); err != nil {
					t.Fatalf("decode: %v", err)
				}
				if a, b := normalise(s), normalise(got); !reflect.DeepEqual(a, b) {
					t.Fatalf("round trip differs (-want +got):\n%s", cmp.Diff(a, b))
				}
				if string(m.Encode(nil, &got)) != string(enc) {
					t.Fatal("re-encoding differs")
				}
			}
		})
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	m := mustModel(t, Shipped())
	init := m.Init()
	enc := m.Encode(nil, &init)
	if enc[len(enc)-1] != 0 {
		t.Fatalf("initial encoding %x does not end with its message count 0", enc)
	}
	states := reachable(t, m, 50)
	withMsgs := m.Encode(nil, &states[len(states)-1])
	withCount := func(count byte) []byte {
		b := append([]byte{}, enc[:len(enc)-1]...)
		return append(b, count)
	}
	for _, tc := range []struct {
		name string
		enc  []byte
	}{
		{"empty", nil},
		{"truncated", enc[:len(enc)-1]},
		{"trailing byte", append(append([]byte{}, enc...), 0)},
		{"meta status INVALID", append([]byte{byte(StatusInvalid)}, enc[1:]...)},
		{"message count 0 in two bytes", append(withCount(0x80), 0x00)},
		{"message count beyond the input", withCount(5)},
		{"messages truncated", withMsgs[:len(withMsgs)-1]},
	} {
		var s State
		if err := m.Decode(tc.enc, &s); err == nil {
			t.Errorf("%s: Decode(%x) accepted malformed input", tc.name, tc.enc)
		}
	}
}

func FuzzDecode(f *testing.F) {
	m := mustModel(f, Params{Bookies: 3, WriteQuorum: 2, AckQuorum: 1, SendLimit: 2})
	for _, s := range reachable(f, m, 300) {
		f.Add(m.Encode(nil, &s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Whatever Decode accepts is the one encoding of its state: were two
		// encodings accepted for one state, it could be stored under two
		// fingerprints.
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
// processes and machines: the initial state's fingerprint and a digest of
// the sorted fingerprints of all 1,307 states of the two-bookie, Qw 1 set.
// If the encoding changes on purpose, update the constants (stored runs
// made with the old encoding can then not be resumed).
func TestFingerprintsGolden(t *testing.T) {
	m := mustModel(t, Params{Bookies: 2, WriteQuorum: 1, AckQuorum: 1, SendLimit: 1, Options: Options{RecoveryReadsFence: true}})
	states := reachable(t, m, 1<<20)
	fps := make([]uint64, len(states))
	for i := range states {
		fps[i] = state.Fingerprint(m.Encode(nil, &states[i]))
	}
	slices.Sort(fps)
	var digest []byte
	for _, fp := range fps {
		digest = binary.LittleEndian.AppendUint64(digest, fp)
	}
	got := [3]uint64{uint64(len(fps)), state.Fingerprint(m.Encode(nil, &states[0])), state.Fingerprint(digest)}
	if want := [3]uint64{1307, 0x3bfa1af11d76bb30, 0xe514e74ff99cc947}; got != want {
		t.Errorf("states, initial fingerprint, digest = %#x, golden %#x", got, want)
	}
}
