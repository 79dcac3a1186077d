package bridge

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// trail builds a trace from steps, each an action with the messages it
// sends (+name) and consumes (-name); a message is a read request or
// response named by its own string.
func trail(steps ...string) []itfState {
	count := map[string]int{}
	state := func(action string) itfState {
		var pairs []any
		for _, name := range slices.Sorted(maps.Keys(count)) {
			pairs = append(pairs, []any{map[string]any{"type": "ReadRequestMessage", "cid": "c2", "bookie": name, "entry_id": 1.0}, float64(count[name])})
		}
		return itfState{"mbt::actionTaken": action, "messages": map[string]any{"#map": pairs}}
	}
	states := []itfState{state("Init")}
	for _, s := range steps {
		fields := strings.Fields(s)
		action := fields[0]
		var sends, takes []string
		for _, f := range fields[1:] {
			switch f[0] {
			case '+':
				sends = append(sends, f[1:])
			case '-':
				takes = append(takes, f[1:])
			}
		}
		for _, m := range sends {
			count[m]++
		}
		for _, m := range takes {
			count[m]--
		}
		states = append(states, state(action))
	}
	return states
}

// javaReads is a fake of the run's sequence reads: the steps whose read is
// not sent yet, and those whose read never will be.
type javaReads struct{ waiting, never map[string]bool }

func (j *javaReads) waits(_, next itfState) bool     { return j.waiting[next.action()] }
func (j *javaReads) neverSent(_, next itfState) bool { return j.never[next.action()] }

// TestSchedule: which steps wait, in what order waiting steps go, and
// which are skipped with why, as Java's sequence reads decide.
func TestSchedule(t *testing.T) {
	type event struct {
		// after taking step at (0: the end of the trace), Java's reads
		// change: set waiting and never to these.
		at             int
		waiting, never []string
	}
	for _, tc := range []struct {
		name   string
		steps  []string
		start  []string // the steps waiting from the start
		events []event
		want   []string // the order steps go in: "3" taken, "3 skip: why"
	}{
		{name: "nothing waits",
			steps: []string{"A +r1", "B -r1", "C"},
			want:  []string{"1", "2", "3"}},
		{name: "an owed read waits, and what consumes it, while independent steps go first",
			steps:  []string{"A +x", "Owed +resp", "Deliver -resp", "Indep -x"},
			start:  []string{"Owed"},
			events: []event{{at: 4}},
			want:   []string{"1", "4", "2", "3"}},
		{name: "a read Java decided without: skipped, and the step consuming its answer too",
			steps:  []string{"Owed +resp", "Deliver -resp", "Other"},
			start:  []string{"Owed"},
			events: []event{{at: 3, never: []string{"Owed"}}},
			want:   []string{"3", "1 skip: " + skipDecided, "2 skip: " + skipPhantom}},
		{name: "the trace ends before Java asks the replica",
			steps: []string{"Owed +resp", "Other"},
			start: []string{"Owed"},
			want:  []string{"2", "1 skip: " + skipEnded}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			states := trail(tc.steps...)
			java := &javaReads{waiting: set1(tc.start), never: map[string]bool{}}
			s := newSchedule(states, java)
			var got []string
			javaAfter := func(at int) {
				for _, e := range tc.events {
					if e.at == at {
						java.waiting, java.never = set1(e.waiting), set1(e.never)
					}
				}
			}
			settle := func(final bool) {
				for {
					d, skip, ok := s.next(final)
					if !ok {
						return
					}
					if skip != "" {
						got = append(got, fmt.Sprintf("%d skip: %s", d, skip))
						continue
					}
					got = append(got, fmt.Sprint(d))
					javaAfter(d)
				}
			}
			for i := 1; i < len(states); i++ {
				if !s.arrive(i) {
					continue
				}
				got = append(got, fmt.Sprint(i))
				javaAfter(i)
				settle(false)
			}
			javaAfter(0)
			settle(true)
			if s.waiting() {
				t.Errorf("steps still wait at the end: %v", s.deferred)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("steps went %q, want %q", got, tc.want)
			}
		})
	}
}

func set1(xs []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}
