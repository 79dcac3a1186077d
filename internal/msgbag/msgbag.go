// Package msgbag is the messages variable of the BookKeeper TLA+ specs as
// bkcheck's models hold it: every message record ever sent, each with its
// delivery count as the specs keep it (-1 lost, 0 processed, 1
// deliverable; 2, two copies in flight, in the BookKeeper model only), in
// a slice sorted by the record's key. Sorting makes the
// representation canonical: equal variables are equal slices and encode to
// equal bytes, which is what fingerprints of encodings rely on.
//
// Both models (package spec, the current protocol, and package spec413,
// release 4.13) pack a record into a uint32 key of their own layout; the
// bag neither knows nor needs that layout.
package msgbag

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/bkcheck/bkcheck/state"
	"github.com/bkcheck/bkcheck/vocab"
)

// Key is a packed message record.
type Key interface{ ~uint32 }

// Msg is one record of the bag and its delivery count.
type Msg[K Key] struct {
	Key   K
	Count int8 // -1 lost, 0 processed, 1 or MaxCopies deliverable
}

// MaxCopies is the most copies of one record in flight. The specs send a
// record once (count 1); BookKeeper's client can put a second frame of
// the same request on a connection before the first is answered (an
// ensemble change's completion re-sends to an index an earlier loop
// re-sent to), and the bookie answers each. Two is what the encoding's
// two bits of count hold (-1..2), and what every record of a running
// BookKeeper has needed: a third copy while two are in flight merges
// with them.
const MaxCopies = 2

// Find returns the index of k in the sorted bag ms (where it would go if
// absent) and whether it is there.
func Find[K Key](ms []Msg[K], k K) (int, bool) {
	lo, hi := 0, len(ms)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ms[m].Key < k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(ms) && ms[lo].Key == k
}

// Sent reports whether k was ever sent (k \in DOMAIN messages).
func Sent[K Key](ms []Msg[K], k K) bool {
	_, ok := Find(ms, k)
	return ok
}

// Deliverable reports whether k is receivable (count >= 1).
func Deliverable[K Key](ms []Msg[K], k K) bool {
	i, ok := Find(ms, k)
	return ok && ms[i].Count >= 1
}

// Insert adds k, which must not be present, with a count, and returns the
// bag (as append does).
func Insert[K Key](ms []Msg[K], k K, count int8) []Msg[K] {
	i, _ := Find(ms, k)
	ms = append(ms, Msg[K]{})
	copy(ms[i+1:], ms[i:])
	ms[i] = Msg[K]{Key: k, Count: count}
	return ms
}

// Deliver takes one copy of k, which must be in flight, off the wire
// (count 1 becomes 0, processed, as the specs' MessageProcessed; 2
// becomes 1).
func Deliver[K Key](ms []Msg[K], k K) {
	i, ok := Find(ms, k)
	if !ok || ms[i].Count < 1 {
		panic(fmt.Sprintf("msgbag: message %#x delivered, but none is in flight", uint32(k)))
	}
	ms[i].Count--
}

// Resent is the count of k after one more copy of it is sent, not lost:
// a record never sent, processed or lost starts again at 1; one in
// flight gains a copy, up to MaxCopies.
func Resent[K Key](ms []Msg[K], k K) int8 {
	if i, ok := Find(ms, k); ok && ms[i].Count >= 1 {
		return min(ms[i].Count+1, MaxCopies)
	}
	return 1
}

// SetCount sets the count of k, which must have been sent: a model that
// changes the count of a message it never sent is wrong, so it panics.
func SetCount[K Key](ms []Msg[K], k K, count int8) {
	i, ok := Find(ms, k)
	if !ok {
		panic(fmt.Sprintf("msgbag: count of message %#x set, but it was never sent", uint32(k)))
	}
	ms[i].Count = count
}

// Append appends the canonical encoding of ms to dst: the number of
// records, then each record as the varint key<<2 | count+1.
func Append[K Key](dst []byte, ms []Msg[K]) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ms)))
	// A record is at most 34 bits, 5 varint bytes: grow once and write in
	// place (append's checks per byte were half of encoding the bag).
	n := len(dst)
	dst = slices.Grow(dst, 5*len(ms))[:n+5*len(ms)]
	for _, m := range ms {
		v := uint64(m.Key)<<2 | uint64(m.Count+1)
		for v >= 0x80 {
			dst[n] = byte(v) | 0x80
			v >>= 7
			n++
		}
		dst[n] = byte(v)
		n++
	}
	return dst[:n]
}

// Read decodes what Append wrote into ms[:0] and returns the bag. It
// accepts only canonical encodings: keys below 1<<keyBits (a count,
// two bits, is -1..MaxCopies by construction),
// keys strictly increasing, and every key for which check returns "" (a
// model's own test, such as a known message type and bookie; otherwise
// the problem, "names an unknown bookie"). The first problem is recorded
// in r; reading never panics.
func Read[K Key](r *state.Reader, ms []Msg[K], keyBits uint, check func(K) string) []Msg[K] {
	ms = ms[:0]
	n := r.Uvarint()
	if r.Err() == nil && n > uint64(r.Remaining()) {
		r.Fail(fmt.Errorf("message count %d exceeds the remaining input", n))
	}
	for i := uint64(0); i < n && r.Err() == nil; i++ {
		v := r.Uvarint()
		k, cnt := K(v>>2), int8(v&3)-1
		if r.Err() != nil {
			break
		}
		if v>>2 >= 1<<keyBits {
			r.Fail(fmt.Errorf("message %d has an invalid record", i))
		} else if problem := check(k); problem != "" {
			r.Fail(fmt.Errorf("message %d %s", i, problem))
		} else if len(ms) > 0 && ms[len(ms)-1].Key >= k {
			r.Fail(fmt.Errorf("messages not in canonical order"))
		} else {
			ms = append(ms, Msg[K]{Key: k, Count: cnt})
		}
	}
	return ms
}

// Ends says, for a sequence diagram, who sends a message, who receives
// it, and how it reads.
type Ends[K Key] func(k K) (from, to, text string)

// counts maps each message of a history to its count.
func counts[K Key](ms []Msg[K]) map[K]int8 {
	out := make(map[K]int8, len(ms))
	for _, m := range ms {
		out[m.Key] = m.Count
	}
	return out
}

// Events are what the step from history prev to cur shows of its
// messages: those processed (an arrow), lost when sent or lost in flight
// (a bookie went down), and timeouts acted on (a note).
func Events[K Key](prev, cur []Msg[K], ends Ends[K]) []vocab.Event {
	var ev []vocab.Event
	before := counts(prev)
	for _, m := range cur {
		old, existed := before[m.Key]
		from, to, text := ends(m.Key)
		switch {
		case existed && old >= 1 && m.Count == old-1:
			ev = append(ev, vocab.Event{Kind: "msg", From: from, To: to, Text: text})
		case !existed && m.Count == -1:
			ev = append(ev, vocab.Event{Kind: "lost", From: from, To: to, Text: text + " (lost)"})
		case existed && old >= 1 && m.Count == -1:
			ev = append(ev, vocab.Event{Kind: "lost", From: from, To: to, Text: text + " (lost, bookie down)"})
		case existed && old == -1 && m.Count == 0:
			ev = append(ev, vocab.Event{Kind: "note", From: from, Text: "timeout acted on: " + text})
		}
	}
	return ev
}

// Undelivered are the messages the step from prev to cur sends that are
// still in flight in last: sent, never delivered.
func Undelivered[K Key](prev, cur, last []Msg[K], ends Ends[K]) []vocab.Event {
	before, final := counts(prev), counts(last)
	var ev []vocab.Event
	for _, m := range cur {
		if _, existed := before[m.Key]; existed || m.Count != 1 || final[m.Key] != 1 {
			continue
		}
		from, to, text := ends(m.Key)
		ev = append(ev, vocab.Event{Kind: "pending", From: from, To: to, Text: text + " (sent, never delivered)"})
	}
	return ev
}
