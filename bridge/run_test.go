package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
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

// TestLostAddFailure: a lost add fails by the clock unless the trace
// answers an older write to another bookie later; then by closing its
// connection, unless something else on that connection is delivered
// later; else the step is not executable.
func TestLostAddFailure(t *testing.T) {
	type msg struct {
		typ          string // "req" or "resp"
		bookie       string
		entry, count int
		recovery     bool
	}
	state := func(ms ...msg) itfState {
		var pairs []any
		for _, m := range ms {
			f := map[string]any{"cid": "c1", "bookie": m.bookie, "entry": map[string]any{"id": float64(m.entry), "data": float64(m.entry)},
				"index": float64(0), "recovery": m.recovery}
			if m.typ == "req" {
				f["type"] = "AddEntryRequestMessage"
			} else {
				f["type"], f["success"] = "AddEntryResponseMessage", true
			}
			pairs = append(pairs, []any{f, float64(m.count)})
		}
		return itfState{"messages": map[string]any{"#map": pairs}}
	}
	req := func(b string, e, n int) msg { return msg{"req", b, e, n, false} }
	resp := func(b string, e, n int) msg { return msg{"resp", b, e, n, false} }
	// e1 goes to b1 and b2 at step 1, e2 at step 2; the timeout is state 3.
	e2LostAtB1 := []itfState{{},
		state(req("b1", 1, 1), req("b2", 1, 1)),
		state(req("b1", 1, 1), req("b2", 1, 1), req("b1", 2, -1), req("b2", 2, 1)),
		state(req("b1", 1, 1), req("b2", 1, 1), req("b1", 2, 0), req("b2", 2, 1)),
	}
	b2AnswersE1 := []itfState{
		state(req("b1", 1, 1), req("b2", 1, 0), resp("b2", 1, 1), req("b1", 2, 0), req("b2", 2, 1)),
		state(req("b1", 1, 1), req("b2", 1, 0), resp("b2", 1, 0), req("b1", 2, 0), req("b2", 2, 1)),
	}
	b1GetsE1 := state(req("b1", 1, 0), req("b2", 1, 0), resp("b2", 1, 0), req("b1", 2, 0), req("b2", 2, 1))
	e1LostAtB1 := []itfState{{},
		state(req("b1", 1, -1), req("b2", 1, 1)),
		state(req("b1", 1, -1), req("b2", 1, 1), req("b1", 2, 1), req("b2", 2, 1)),
		state(req("b1", 1, 0), req("b2", 1, 1), req("b1", 2, 1), req("b2", 2, 1)),
	}
	b2AnswersE2 := []itfState{
		state(req("b1", 1, 0), req("b2", 1, 1), req("b1", 2, 1), req("b2", 2, 0), resp("b2", 2, 1)),
		state(req("b1", 1, 0), req("b2", 1, 1), req("b1", 2, 1), req("b2", 2, 0), resp("b2", 2, 0)),
	}
	b2AnswersE1Too := []itfState{
		state(req("b1", 1, 0), req("b2", 1, 0), resp("b2", 1, 1), req("b1", 2, 1), req("b2", 2, 1)),
		state(req("b1", 1, 0), req("b2", 1, 0), resp("b2", 1, 0), req("b1", 2, 1), req("b2", 2, 1)),
	}
	cat := func(parts ...[]itfState) []itfState {
		var out []itfState
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		states    []itfState
		lost      msg
		closeLink bool
		refused   bool
	}{
		{"nothing answered later: the clock", e2LostAtB1, req("b1", 2, -1), false, false},
		{"an older write answered later: a close", cat(e2LostAtB1, b2AnswersE1), req("b1", 2, -1), true, false},
		{"and the connection delivers later: neither", cat(e2LostAtB1, b2AnswersE1, []itfState{b1GetsE1}), req("b1", 2, -1), false, true},
		{"a newer write answered later: the clock", cat(e1LostAtB1, b2AnswersE2), req("b1", 1, -1), false, false},
		{"one sent in the same step answered later: a close", cat(e1LostAtB1, b2AnswersE1Too), req("b1", 1, -1), true, false},
	} {
		lost := messages(state(tc.lost))[0]
		closeLink, older, refused := lostAddFailure(tc.states, addSendSteps(tc.states), 3, lost)
		if closeLink != tc.closeLink || (refused != "") != tc.refused || (older != "") != (tc.closeLink || tc.refused) {
			t.Errorf("%s: closeLink %v, older %q, refused %q; want closeLink %v, refused %v", tc.name, closeLink, older, refused, tc.closeLink, tc.refused)
		}
	}
}

// TestLostFrameHoldsBackItsConnection: a message the model loses is a
// stalled frame, and TCP delivers nothing behind it on its connection: a
// trace that does is NOT EXECUTABLE, naming both frames, unless the
// connection closed in between (a crash); a frame delivered ahead of an
// older one of its connection is NOT EXECUTABLE too. Against fakeJava,
// which keeps the proxy's rule.
func TestLostFrameHoldsBackItsConnection(t *testing.T) {
	add := func(typ string, entry, count int) []any {
		f := map[string]any{"type": typ, "cid": "c1", "bookie": "b1", "entry": map[string]any{"id": float64(entry), "data": float64(entry)},
			"index": float64(0), "recovery": false}
		if typ == "AddEntryResponseMessage" {
			f["success"] = true
		}
		return []any{f, float64(count)}
	}
	req := func(entry, count int) []any { return add("AddEntryRequestMessage", entry, count) }
	resp := func(entry, count int) []any { return add("AddEntryResponseMessage", entry, count) }
	st := func(action string, msgs ...[]any) itfState {
		pairs := make([]any, len(msgs))
		for i, m := range msgs {
			pairs[i] = m
		}
		return itfState{"mbt::actionTaken": action, "mbt::nondetPicks": map[string]any{"client": "c1", "bookie": "b1"},
			"messages": map[string]any{"#map": pairs}}
	}
	const send, store = "ClientSendsAddEntryRequests", "BookieSendsAddConfirmedResponse"
	for _, tc := range []struct {
		name   string
		states []itfState
		want   string // the NOT EXECUTABLE reason, "" if every step goes
	}{
		{"in order", []itfState{{},
			st(send, req(1, 1)),
			st(send, req(1, 1), req(2, 1)),
			st(store, req(1, 0), req(2, 1), resp(1, 1)),
			st(store, req(1, 0), req(2, 0), resp(1, 1), resp(2, 1)),
		}, ""},
		{"out of order", []itfState{{},
			st(send, req(1, 1)),
			st(send, req(1, 1), req(2, 1)),
			st(store, req(1, 1), req(2, 0), resp(2, 1)),
		}, "TCP delivers the frames of connection c1→b1 in order: it cannot deliver frame add request ledger -1 entry 1 before frame add request ledger -1 entry 0, sent before it on that connection"},
		{"lost, then a frame behind it delivered", []itfState{{},
			st(send, req(1, -1)),
			st(send, req(1, -1), req(2, 1)),
			st(store, req(1, -1), req(2, 0), resp(2, 1)),
		}, "TCP cannot lose frame add request ledger -1 entry 0 on connection c1→b1 (lost at step 2) and then deliver frame add request ledger -1 entry 1 behind it"},
		{"lost, a crash closes the connection, a new one delivers", []itfState{{},
			st(send, req(1, -1)),
			st("BookieCrashes", req(1, -1)),
			st("BookieRestarts", req(1, -1)),
			st(send, req(1, -1), req(2, 1)),
			st(store, req(1, -1), req(2, 0), resp(2, 1)),
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newState(tc.states, map[string]any{"bookies": float64(1), "clients": float64(1)}, Options{StepTimeout: time.Millisecond})
			java := newFakeJava(r, 1)
			r.cl, r.px, r.drv = java, java, java
			var err error
			for r.cur = 1; r.cur < len(tc.states) && err == nil; r.cur++ {
				err = r.step(context.Background(), tc.states[r.cur-1], tc.states[r.cur])
			}
			var d *divergence
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("step %d: %v\n%s", r.cur, err, strings.Join(java.lines, "\n"))
			case tc.want != "" && (!errors.As(err, &d) || d.verdict != NotExecutable || !strings.HasPrefix(d.reason, tc.want)):
				t.Errorf("got %v, want NOT EXECUTABLE: %s\n%s", err, tc.want, strings.Join(java.lines, "\n"))
			}
		})
	}
}
