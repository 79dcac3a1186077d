package spec413

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/bkcheck/bkcheck/internal/msgbag"
	"github.com/bkcheck/bkcheck/state"
)

// The canonical encoding of a State: equal states have equal bytes and
// different states different bytes, so a fingerprint of the bytes is a
// fingerprint of the state. Only what the parameters use is written
// (bookies 1..Bookies, confirmed 1..SendLimit):
//
//	meta:     status version last_entry nfrag {id ensemble first}*
//	bookies:  fenced-set, then per bookie: lac entries(uvarint)
//	writers:  per writer (w1, w2): meta_version status
//	          curr_fragment(id [ensemble first]) npending
//	          {id data fragment_id ensemble}* lap lac confirmed[SendLimit]
//	          fenced curr_read_entry(id [data]) has_entry no_such_entry
//	          recovery_phase
//	messages: n {key<<2 | count+1 as uvarint}* (in key order)
//
// A Nil fragment or entry is its id 0 alone.

// Encode appends the canonical encoding of s to dst.
func (m *Model) Encode(dst []byte, s *State) []byte {
	dst = append(dst, byte(s.MetaStatus), byte(s.MetaVersion), byte(s.MetaLastEntry), byte(s.NumFragments))
	for _, f := range s.FragmentList() {
		dst = append(dst, byte(f.ID), byte(f.Ensemble), byte(f.First))
	}
	dst = append(dst, byte(s.BFenced))
	for b := 0; b < m.P.Bookies; b++ {
		dst = append(dst, byte(s.BLAC[b]))
		dst = binary.AppendUvarint(dst, uint64(s.BEntries[b]))
	}
	for i := range s.W {
		w := &s.W[i]
		dst = append(dst, byte(w.MetaVersion), byte(w.Status), byte(w.CurrFragment.ID))
		if w.CurrFragment.ID != 0 {
			dst = append(dst, byte(w.CurrFragment.Ensemble), byte(w.CurrFragment.First))
		}
		dst = append(dst, byte(w.NumPending))
		for _, op := range w.PendingList() {
			dst = append(dst, byte(op.Entry.ID), byte(op.Entry.Data), byte(op.FragmentID), byte(op.Ensemble))
		}
		dst = append(dst, byte(w.LAP), byte(w.LAC))
		for e := 0; e < m.P.SendLimit; e++ {
			dst = append(dst, byte(w.Confirmed[e]))
		}
		dst = append(dst, byte(w.Fenced), byte(w.CurrReadEntry.ID))
		if w.CurrReadEntry.ID != 0 {
			dst = append(dst, byte(w.CurrReadEntry.Data))
		}
		dst = append(dst, byte(w.HasEntry), byte(w.NoSuchEntry), w.RecoveryPhase)
	}
	return msgbag.Append(dst, s.Msgs)
}

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("malformed v4.13 state encoding")

// reader adds the model's range checks to state.Reader, whose sticky first
// error lets Decode read a whole state and check once at the end.
type reader struct {
	state.Reader
	p Params
}

func (r *reader) fail(format string, args ...any) {
	if r.Err() == nil {
		r.Fail(fmt.Errorf(format, args...))
	}
}

// small reads a byte holding an int8 in [lo, hi].
func (r *reader) small(what string, lo, hi int) int8 {
	v := int(int8(r.Byte()))
	if v < lo || v > hi {
		r.fail("%s %d out of range [%d,%d]", what, v, lo, hi)
		return 0
	}
	return int8(v)
}

func (r *reader) bookies(what string) Bookies {
	v := Bookies(r.Byte())
	if int(v)>>uint(r.p.Bookies) != 0 {
		r.fail("%s names a bookie beyond b%d", what, r.p.Bookies)
	}
	return v
}

func (r *reader) fragment() Fragment {
	return Fragment{ID: r.small("fragment id", 1, maxFragments), Ensemble: r.bookies("fragment ensemble"), First: r.small("first entry id", 0, maxEntryID+1)}
}

// Decode parses an encoding made by Encode with the same parameters into s,
// reusing s's message buffer. It accepts only canonical encodings and never
// panics: malformed input gives an error wrapping ErrMalformed.
func (m *Model) Decode(enc []byte, s *State) error {
	msgs := s.Msgs[:0]
	*s = Init()
	r := &reader{p: m.P}
	r.Reset(enc)
	s.MetaStatus = Status(r.small("meta status", 0, int(StatusClosed)))
	s.MetaVersion = r.small("meta version", 0, 127)
	s.MetaLastEntry = r.small("meta last entry", 0, maxEntryID)
	s.NumFragments = r.small("fragment count", 0, maxFragments)
	for i := range s.FragmentList() {
		s.Fragments[i] = r.fragment()
	}
	s.BFenced = r.bookies("fenced bookies")
	for b := 0; b < m.P.Bookies; b++ {
		s.BLAC[b] = r.small("bookie lac", 0, maxEntryID)
		s.BEntries[b] = EntrySet(r.Uvarint())
		if s.BEntries[b]>>(maxEntryID*MaxSendLimit) != 0 {
			r.fail("bookie b%d stores an entry beyond e%d", b+1, maxEntryID)
		}
	}
	for i := range s.W {
		w := &s.W[i]
		w.MetaVersion = r.small("writer meta version", -1, 127)
		w.Status = Status(r.small("writer status", 0, int(numStatuses)-1))
		if id := r.small("curr fragment id", 0, maxFragments); id != 0 {
			w.CurrFragment = Fragment{ID: id, Ensemble: r.bookies("curr fragment ensemble"), First: r.small("curr fragment first entry id", 0, maxEntryID+1)}
		}
		w.NumPending = r.small("pending count", 0, maxPending)
		for j := range w.PendingList() {
			w.Pending[j] = PendingAddOp{
				Entry:      Entry{ID: r.small("pending entry id", 1, maxEntryID), Data: r.small("pending entry data", 1, MaxSendLimit)},
				FragmentID: r.small("pending fragment id", 1, maxFragments),
				Ensemble:   r.bookies("pending ensemble"),
			}
			if j > 0 && !w.Pending[j-1].Less(w.Pending[j]) {
				r.fail("pending ops not in canonical order")
			}
		}
		w.LAP = r.small("lap", 0, maxEntryID)
		w.LAC = r.small("lac", 0, maxEntryID)
		for e := 0; e < m.P.SendLimit; e++ {
			w.Confirmed[e] = r.bookies("confirmed")
		}
		w.Fenced = r.bookies("writer fenced")
		if id := r.small("curr read entry id", 0, maxEntryID); id != 0 {
			w.CurrReadEntry = Entry{ID: id, Data: r.small("curr read entry data", 1, MaxSendLimit)}
		}
		w.HasEntry = r.bookies("has_entry")
		w.NoSuchEntry = r.bookies("no_such_entry")
		w.RecoveryPhase = uint8(r.small("recovery phase", 0, int(WritePhase)))
		if r.Err() != nil {
			break
		}
	}
	s.Msgs = msgbag.Read(&r.Reader, msgs, msgKeyBits, func(k MsgKey) string {
		switch {
		case !k.valid():
			return "has an invalid record"
		case k.Bookie() >= m.P.Bookies:
			return "names an unknown bookie"
		}
		return ""
	})
	if err := r.Done(); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return nil
}
