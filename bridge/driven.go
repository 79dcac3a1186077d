package bridge

import (
	"fmt"
	"strings"

	"github.com/bkcheck/bkcheck/check"
)

// releaseVariant says whether a trace's variant is the behaviour of
// BookKeeper releases rather than a proposed change (check.ReleaseBug
// declares which releases fixed each): a trace of one runs on any
// release, and says whether that release behaves as the variant
// (REPRODUCED) or as the fix (DIVERGED where the fix acts). A composition
// ("a+b", a release line with two such bugs) is one if each part is.
func releaseVariant(v string) bool {
	for _, part := range strings.Split(v, "+") {
		if _, ok := check.ReleaseBug(part); !ok && part != "reference" {
			return false
		}
	}
	return true
}

// unsupported returns the index of the first state the harness cannot
// drive and why (-1 when it can drive all): settings first (state 0), then
// actions.
func unsupported(params map[string]any, states []itfState) (int, string) {
	if why := refusedParams(params); why != "" {
		return 0, "the trace's settings: " + why
	}
	for i := 1; i < len(states); i++ {
		a := states[i].action()
		m := mappingOf[a]
		switch {
		case m == nil:
			return i, "the harness has no mapping for " + a
		case m.take == nil:
			return i, a + " is " + m.notDriven
		case a == "BookieChecksAdd":
			if k := raceRefused(states, i); k > 0 {
				return i, fmt.Sprintf("%s is %s; here state %d (%s) comes between the check and the store", a, splitCheck, k+1, states[k].action())
			}
		}
	}
	return -1, ""
}

// raceRefused says which step between a bookie's fence check of an add
// (state i) and its store the harness cannot run inside the bookie: the
// index of the first such state, 0 if none. The agent's AddRace runs one
// fencing request of another client in between (the fence on its own
// handle, as before PR #4701); any other step of that bookie between them
// (a second fence, a read, a crash) is not driven.
func raceRefused(states []itfState, i int) int {
	k := checkInterleaved(states, i)
	if k == 0 || !fencesAt(states[k-1], states[k]) {
		return k
	}
	bookie := states[i].picks()["bookie"]
	for j := k + 1; j < len(states); j++ {
		if states[j].picks()["bookie"] != bookie {
			continue
		}
		if storesChecked(states, i, j) {
			return 0
		}
		return j
	}
	return 0
}

// racesAdds: the trace has a fence between an add's check and its store
// (raceRefused ran it), so the bookies' agent must be able to race them.
func racesAdds(states []itfState) bool {
	for i := 1; i < len(states); i++ {
		if states[i].action() == "BookieChecksAdd" && checkInterleaved(states, i) > 0 {
			return true
		}
	}
	return false
}

// fencesAt says whether the step answers a fencing request of a bookie: a
// fencing LAC read, or a recovery read that fences (4.14 on).
func fencesAt(prev, next itfState) bool {
	switch next.action() {
	case "BookieSendsFencingReadLacResponse":
		return true
	case "BookieSendsReadResponse":
		m := consumed(prev, next, "ReadRequestMessage")
		return m != nil && m.Fields["fence"] == true
	}
	return false
}

// storesChecked says whether state j is the store (or refusal) of the add
// checked at state i.
func storesChecked(states []itfState, i, j int) bool {
	p, q := states[i].picks(), states[j].picks()
	switch states[j].action() {
	case "BookieSendsAddConfirmedResponse", "BookieSendsAddFencedResponse", "BookieSendsAddReadOnlyResponse":
		return q["client"] == p["client"] && toInt(q["entry"]) == toInt(p["entry"])
	}
	return false
}

// checkInterleaved says whether a bookie's fence check of an add
// (BookieChecksAdd, a release with split-add-check) is apart from its
// store in the trace: the index of the first state between them that is
// a step of the same bookie (a fence, a read, a crash: what could see or
// change the fence in between), 0 if none. Without one the check and the
// store are as one add on the bookie's request thread, which is how the
// harness delivers it (the check is then no step of its own); with one,
// the trace needs the race inside the bookie, which the harness does not
// control.
func checkInterleaved(states []itfState, i int) int {
	p := states[i].picks()
	bookie, client, entry := p["bookie"], p["client"], toInt(p["entry"])
	for k := i + 1; k < len(states); k++ {
		q := states[k].picks()
		if q["bookie"] != bookie {
			continue
		}
		switch states[k].action() {
		case "BookieSendsAddConfirmedResponse", "BookieSendsAddFencedResponse", "BookieSendsAddReadOnlyResponse":
			if q["client"] == client && toInt(q["entry"]) == entry {
				return 0
			}
		}
		return k
	}
	return 0
}
