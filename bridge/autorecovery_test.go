package bridge

import (
	"errors"
	"testing"
)

// TestWorkerComparisons: what the driver says of an opened gate is held
// to the model's next state: the worker dead exactly where the model's is
// stopped, its unreadable entries the model's rw_unreadable (Java counts
// entries from 0, the model from 1).
func TestWorkerComparisons(t *testing.T) {
	r := &run{}
	next := func(phase string, unreadable any) step {
		return step{next: itfState{"rw_phase": phase, "rw_unreadable": unreadable}}
	}
	for _, tc := range []struct {
		name       string
		rest       string
		unreadable []int64
		s          step
		diverges   bool
	}{
		{"at its next gate, entry 1 unreadable", "acquire", []int64{0}, next("locked", map[string]any{"#set": []any{1.0}}), false},
		{"no set made on either side", "fragment", nil, next("locked", "Nil"), false},
		{"an unreadable entry the model lacks", "acquire", []int64{0}, next("locked", "Nil"), true},
		{"another unreadable entry", "acquire", []int64{1}, next("locked", map[string]any{"#set": []any{1.0}}), true},
		{"dead where the model's worker is stopped", "dead", nil, next("stopped", "Nil"), false},
		{"dead where the model's worker lives", "dead", nil, next("locked", "Nil"), true},
		{"alive where the model's worker is stopped", "acquire", nil, next("stopped", "Nil"), true},
	} {
		g := &gated{Rest: tc.rest, Unreadable: tc.unreadable}
		err := r.rests(g, tc.s)
		if err == nil {
			err = r.unreadable(g, tc.s)
		}
		var d *divergence
		if got := errors.As(err, &d); got != tc.diverges {
			t.Errorf("%s: diverges %v (%v), want %v", tc.name, got, err, tc.diverges)
		}
	}
}

// TestStoresEntries: the metadata's side of the decommission's poll, as
// the model's AdminFinishesDecommission reads it: a segment naming the
// bookie stores entries unless it is a closed ledger's last segment that
// starts past the last entry.
func TestStoresEntries(t *testing.T) {
	frag := func(first int, bookies ...any) map[string]any {
		return map[string]any{"first_entry_id": float64(first), "ensemble": map[string]any{"#set": bookies}}
	}
	state := func(status string, last int, frags ...any) itfState {
		return itfState{"meta_status": status, "meta_last_entry": float64(last), "meta_fragments": frags}
	}
	for _, tc := range []struct {
		name string
		s    itfState
		want bool
	}{
		{"closed, the only segment names it", state("STATUS_CLOSED", 1, frag(1, "b1", "b2")), true},
		{"closed, another bookie's segment", state("STATUS_CLOSED", 1, frag(1, "b1", "b3")), false},
		{"closed, an empty last segment names it", state("STATUS_CLOSED", 1, frag(1, "b1", "b3"), frag(2, "b1", "b2")), false},
		{"closed, its first segment replaced", state("STATUS_CLOSED", 2, frag(1, "b1", "b3"), frag(2, "b1", "b2")), true},
		{"open, an empty last segment names it", state("STATUS_OPEN", 1, frag(1, "b1", "b3"), frag(2, "b1", "b2")), true},
		{"no ledger", state("Nil", 0), false},
	} {
		if got := storesEntries(tc.s, "b2"); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
