package bridge

import "fmt"

// How BookKeeper fails a lost add (ClientReceivesAddTimeout), which the
// harness must choose as BookKeeper could.
//
// The client has two ways to fail an outstanding write
// (bookkeeper-server, proto/PerChannelBookieClient and BookieClientImpl,
// read at release-4.18.0):
//
//   - the clock: BookieClientImpl.monitorPendingOperations calls every
//     channel's checkTimeoutOnPendingOperations against one
//     addEntryTimeout, so a write times out only with every write sent
//     before it (to any bookie) that is still unanswered: none of those
//     can be answered after it;
//   - its connection closing: channelInactive errors every request
//     outstanding on that connection (errorOutOutstandingEntries,
//     BookieHandleNotAvailableException), whatever was sent to other
//     bookies; the next request opens a new connection.
//
// The model's rule (spec.gen.ClientReceivesAddTimeout: no older add of
// the same channel still deliverable) is the union of the two. The
// harness fires the clock (SteeredBookKeeper.timeOut) when the trace
// answers no older write to another bookie later, closes the connection
// otherwise, and refuses the step where neither can produce the trace.
// The lost write's frame is stalled at the proxy (run.lose): after the
// clock its connection stays open and delivers nothing more to the bookie
// (a trace that needs it to is refused when it does, run.deliver); a
// close ends the stall, and the client's next write opens a new
// connection.

// addSendSteps gives, for each state of the trace, the step at which each
// add message present in it was sent: a request's own step, a response's
// its request's (the clock runs from the request: the completion's
// start). A request sent again while a copy is in flight keeps the
// earlier step, the older reading.
func addSendSteps(states []itfState) []map[string]int {
	out := make([]map[string]int, len(states))
	out[0] = map[string]int{}
	lastSent := map[string]int{} // by addIdentity
	for j := 1; j < len(states); j++ {
		cur := make(map[string]int, len(out[j-1]))
		for k, v := range out[j-1] {
			cur[k] = v
		}
		for _, m := range sentAt(states[j-1], states[j]) {
			if !isAdd(m) {
				continue
			}
			id := addIdentity(m)
			if isRequest(m.Type) {
				lastSent[id] = j
			}
			if at, ok := lastSent[id]; ok {
				cur[m.key()] = at
			}
		}
		out[j] = cur
	}
	return out
}

func isAdd(m message) bool {
	return m.Type == "AddEntryRequestMessage" || m.Type == "AddEntryResponseMessage"
}

// addIdentity is what a request and its response share: the write of one
// entry by one client to one bookie at one ensemble index.
func addIdentity(m message) string {
	return fmt.Sprintf("%s/%s/%d/%v/%v", m.Client, m.Bookie, m.Entry, m.Fields["index"], m.Fields["recovery"])
}

// lostAddFailure says how BookKeeper can fail the lost add message lost
// at the trace's step cur (states[cur-1] to states[cur]): by the clock, or
// else by closing the client's connection to the bookie (closeLink, with
// the older write the clock would have failed first); refused is
// non-empty when neither produces the trace.
func lostAddFailure(states []itfState, sent []map[string]int, cur int, lost message) (closeLink bool, older, refused string) {
	at := sent[cur-1][lost.key()]
	older = ""
	for j := cur + 1; j < len(states) && older == ""; j++ {
		after := map[string]int{}
		for _, m := range messages(states[j]) {
			after[m.key()] = m.Count
		}
		for _, m := range messages(states[j-1]) {
			answered := m.Type == "AddEntryResponseMessage" && m.Count > 0 && after[m.key()] < m.Count
			if !answered || m.Client != lost.Client || m.Bookie == lost.Bookie || (m.Fields["recovery"] == true) != (lost.Fields["recovery"] == true) {
				continue
			}
			// Sent at the same step (one initiate's loop, microseconds
			// apart) counts as older: a clock cannot tell them apart.
			if s, ok := sent[j-1][m.key()]; ok && s <= at {
				older = fmt.Sprintf("write of entry %d to %s (sent at step %d, answered at step %d)", javaEntry(m.Entry), m.Bookie, s+1, j+1)
			}
		}
	}
	if older == "" {
		return false, "", ""
	}
	// A close errors everything outstanding on the connection: nothing of
	// it may be delivered later.
	for _, m := range messages(states[cur]) {
		if m.Count != 1 || m.Client != lost.Client || m.Bookie != lost.Bookie {
			continue
		}
		for j := cur + 1; j < len(states); j++ {
			c := countOf(states[j], m.key())
			if c == 1 {
				continue
			}
			if c == 0 {
				return false, older, fmt.Sprintf("BookKeeper cannot fail %s's write of entry %d to %s here: not by its timeout, since the clock would have timed out first the older %s; "+
					"nor by closing %s's connection to %s, which would also fail %s, delivered at step %d",
					lost.Client, javaEntry(lost.Entry), lost.Bookie, older, lost.Client, lost.Bookie, m, j+1)
			}
			break // lost later: the close may fail it as well
		}
	}
	return true, older, ""
}

// countOf is the count of message key in state s (0 if absent).
func countOf(s itfState, key string) int {
	for _, m := range messages(s) {
		if m.key() == key {
			return m.Count
		}
	}
	return 0
}
