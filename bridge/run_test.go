package bridge

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestNewcomers: the bookies an ensemble change put in are queued for
// the placement policy in BookKeeper's index order (the model's layout
// rotated by one), and in name order for an unordered fragment.
func TestNewcomers(t *testing.T) {
	frag := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tc := range []struct {
		name, before, after string
		want                []string
	}{
		// <<b3,b2>> is BookKeeper's [b2,b3]; both replaced, b4 at index 0 (position 1) first.
		{"ordered, two", `{"ensemble":{"#set":["b2","b3"]},"layout":["b3","b2"]}`, `{"ensemble":{"#set":["b4","b1"]},"layout":["b1","b4"]}`, []string{"b4", "b1"}},
		{"ordered, index 1", `{"ensemble":{"#set":["b2","b3"]},"layout":["b3","b2"]}`, `{"ensemble":{"#set":["b1","b2"]},"layout":["b1","b2"]}`, []string{"b1"}},
		{"ordered, striped", `{"ensemble":{"#set":["b1","b2","b3"]},"layout":["b1","b2","b3"]}`, `{"ensemble":{"#set":["b1","b4","b5"]},"layout":["b5","b4","b3"]}`, []string{"b4", "b5"}},
		{"unordered", `{"ensemble":{"#set":["b1","b2"]}}`, `{"ensemble":{"#set":["b3","b4"]}}`, []string{"b3", "b4"}},
	} {
		got := newcomers(frag(tc.before), frag(tc.after))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: newcomers = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCheckInterleaved: a bookie's fence check of an add is driven with
// its store unless a step of the same bookie comes between them.
func TestCheckInterleaved(t *testing.T) {
	st := func(action, bookie, client string, entry int) itfState {
		picks := map[string]any{"bookie": bookie, "client": client, "entry": float64(entry)}
		return itfState{"mbt::actionTaken": action, "mbt::nondetPicks": picks}
	}
	for _, tc := range []struct {
		name   string
		states []itfState
		want   int
	}{
		{"adjacent", []itfState{{}, st("BookieChecksAdd", "b1", "c1", 1), st("BookieSendsAddConfirmedResponse", "b1", "c1", 1)}, 0},
		{"another bookie between", []itfState{{}, st("BookieChecksAdd", "b1", "c1", 1), st("BookieSendsReadResponse", "b2", "c2", 1), st("BookieSendsAddConfirmedResponse", "b1", "c1", 1)}, 0},
		{"a fence of the bookie between", []itfState{{}, st("BookieChecksAdd", "b2", "c1", 1), st("BookieSendsReadResponse", "b2", "c2", 1), st("BookieSendsAddConfirmedResponse", "b2", "c1", 1)}, 2},
		{"another entry's store first", []itfState{{}, st("BookieChecksAdd", "b1", "c1", 2), st("BookieSendsAddConfirmedResponse", "b1", "c1", 1), st("BookieSendsAddConfirmedResponse", "b1", "c1", 2)}, 2},
		{"never stored", []itfState{{}, st("BookieChecksAdd", "b1", "c1", 1)}, 0},
	} {
		if got := checkInterleaved(tc.states, 1); got != tc.want {
			t.Errorf("%s: checkInterleaved = %d, want %d", tc.name, got, tc.want)
		}
	}
}
