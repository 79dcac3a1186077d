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
