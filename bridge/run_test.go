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
