package bridge

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestSpentFences holds the rule of fence.go on bk-2614's trace (c2's
// fencing read to b2 is never delivered; its fence answer from b1 at step
// 9 ends its fencing phase; its read of entry 0 to b2 is delivered at
// step 11) and on variants of it: the close comes only before the last
// fence answer of the phase, only for a fencing read in flight that the
// trace never delivers and that has a later request of its connection
// delivered, and never where the close would fail something else the
// trace delivers later.
func TestSpentFences(t *testing.T) {
	base, _, err := readITFStates(filepath.Join("..", "docs", "traces", "bugs", "bk-2614.itf.json"))
	if err != nil {
		t.Fatal(err)
	}
	fence := map[string]any{"bookie": "b2", "cid": "c2", "type": "FenceRequestMessage"}
	other := map[string]any{"bookie": "b2", "cid": "c2", "entry_id": 9.0, "fence": false, "type": "ReadRequestMessage"}
	for _, tc := range []struct {
		name   string
		edit   func([]itfState) []itfState
		cur    int
		client string
		want   string // "bookie at-step", or "" for no close
	}{
		{name: "the answer that ends the phase", cur: 8, client: "c2", want: "b2 11"},
		{name: "an answer before another one", cur: 7, client: "c2"},
		{name: "another client", cur: 8, client: "c1"},
		{name: "the phase never ends", cur: 8, client: "c2", edit: func(s []itfState) []itfState { return s[:9] }},
		{name: "nothing behind it is delivered", cur: 8, client: "c2", edit: func(s []itfState) []itfState { return s[:10] }},
		{name: "the fencing read is lost", cur: 8, client: "c2", edit: func(s []itfState) []itfState {
			return setCount(s, fence, -1, 7, len(s))
		}},
		{name: "the fencing read is delivered later", cur: 8, client: "c2", edit: func(s []itfState) []itfState {
			return setCount(s, fence, 0, 13, len(s))
		}},
		{name: "the close would fail a request the trace delivers later", cur: 8, client: "c2", edit: func(s []itfState) []itfState {
			return setCount(setCount(s, other, 1, 6, 12), other, 0, 12, len(s))
		}},
		{name: "the close would fail a request the trace never delivers", cur: 8, client: "c2", want: "b2 11", edit: func(s []itfState) []itfState {
			return setCount(s, other, 1, 6, len(s))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			states := clone(t, base)
			if tc.edit != nil {
				states = tc.edit(states)
			}
			got := ""
			for _, sf := range spentFences(states, tc.cur, tc.client) {
				got += sf.fence.Bookie + " " + itoa(sf.at+1)
				if sf.behind.Client != tc.client || sf.behind.Bookie != sf.fence.Bookie {
					t.Errorf("behind %v is not of the fencing read's connection", sf.behind)
				}
			}
			if got != tc.want {
				t.Errorf("spentFences(step %d, %s) = %q, want %q", tc.cur+1, tc.client, got, tc.want)
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// clone copies a trace's states deeply, so that a variant can change them.
func clone(t *testing.T, states []itfState) []itfState {
	b, err := json.Marshal(states)
	if err != nil {
		t.Fatal(err)
	}
	var out []itfState
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// setCount sets message fields' count to n in states[from:to], adding it
// where it is absent.
func setCount(states []itfState, fields map[string]any, n, from, to int) []itfState {
	want, _ := json.Marshal(fields)
	for i := from; i < to && i < len(states); i++ {
		m, _ := states[i]["messages"].(map[string]any)
		pairs, _ := m["#map"].([]any)
		found := false
		for _, p := range pairs {
			kv, _ := p.([]any)
			if b, _ := json.Marshal(kv[0]); string(b) == string(want) {
				kv[1], found = float64(n), true
			}
		}
		if !found {
			pairs = append(pairs, []any{fields, float64(n)})
		}
		m["#map"] = pairs
	}
	return states
}
