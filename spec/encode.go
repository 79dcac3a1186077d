package spec

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/bkcheck/bkcheck/internal/msgbag"
	"github.com/bkcheck/bkcheck/state"
)

// The canonical encoding of a State: equal states have equal bytes and
// different states different bytes, so a fingerprint of the bytes is a
// fingerprint of the state. Only the parts the parameters use are written
// (bookies 1..Bookies, clients 1..Clients, entries 1..Entries), so the
// encoding is short: a few dozen bytes plus about four per message.
//
//	meta:     status version last_entry nfrag {id ensemble first}*
//	bookies:  fenced-set, then per bookie: lac entries(uvarint bitmask)
//	clients:  per client: meta_version status nfrag {frag}* npending
//	          {id data fragment_id ensemble}* lap lac confirmed[Entries]
//	          fenced recovery_ensemble curr_read_entry nresp {key uvarint}*
//	          recovery_phase last_recoverable_entry
//	          [java add path: change failed orig delayed orig_layout
//	          done_ensemble[Entries] (layouts of ordered ensembles)]
//	messages: n {key<<2 | count+1 as uvarint}* (in key order)

// Encode appends the canonical encoding of s to dst.
func (m *Model) Encode(dst []byte, s *State) []byte { return m.encode(dst, s, nil) }

// encode appends the encoding of s relabelled by rl, or of s itself when
// rl is nil: relabelling and encoding in one pass, without building the
// relabelled state (the canonicalizer encodes a relabelling of every
// successor; a copy of the whole state for it was a sixth of a symmetric
// search). TestEncodeRelabelled checks it against Encode of permute.
func (m *Model) encode(dst []byte, s *State, rl *relabeller) []byte {
	p := &m.P
	ordered := m.has.ordered
	ens := p.Ensemble
	frag := func(dst []byte, f Fragment) []byte {
		dst = append(dst, byte(f.ID), byte(rl.set(f.Ensemble)), byte(f.First))
		if ordered {
			dst = binary.AppendUvarint(dst, uint64(rl.layout(f.Layout, ens)))
		}
		return dst
	}
	dst = append(dst, byte(s.MetaStatus), byte(s.MetaVersion), byte(s.MetaLastEntry), byte(s.NumMetaFragments))
	for _, f := range s.MetaFragmentList() {
		dst = frag(dst, f)
	}
	dst = append(dst, byte(rl.set(s.BFenced)))
	gwq := m.V.GuaranteedWriteQuorum
	for r := 0; r < p.Bookies; r++ {
		b := rl.bookie(r)
		dst = append(dst, byte(s.BLAC[b]))
		if gwq {
			dst = append(dst, byte(s.BLAFR[b]))
		}
		dst = binary.AppendUvarint(dst, uint64(s.BEntries[b]))
	}
	for r := 0; r < p.Clients; r++ {
		c := &s.Clients[rl.client(r)]
		dst = append(dst, byte(c.MetaVersion), byte(c.Status), byte(c.NumFragments))
		for _, f := range c.FragmentList() {
			dst = frag(dst, f)
		}
		dst = append(dst, byte(c.NumPending))
		for _, op := range rl.pending(c, ordered, ens) {
			dst = append(dst, byte(op.Entry.ID), byte(op.Entry.Data), byte(op.FragmentID), byte(op.Ensemble))
			if ordered {
				dst = binary.AppendUvarint(dst, uint64(op.Layout))
			}
		}
		dst = append(dst, byte(c.LAP), byte(c.LAC))
		if gwq {
			dst = append(dst, byte(c.LAFR))
		}
		for e := 0; e < p.Entries; e++ {
			dst = append(dst, byte(rl.set(c.Confirmed[e])))
		}
		dst = append(dst, byte(rl.set(c.Fenced)), byte(rl.set(c.RecoveryEns)))
		if ordered {
			// A layout not in use is 0 (b1 at every position), and stays so.
			lay := c.RecoveryLay
			if c.RecoveryEns != 0 {
				lay = rl.layout(lay, ens)
			}
			dst = binary.AppendUvarint(dst, uint64(lay))
		}
		dst = append(dst, byte(c.CurrReadEntry), byte(c.NumResponses))
		for _, k := range rl.responses(c) {
			dst = binary.AppendUvarint(dst, uint64(k))
		}
		dst = append(dst, c.RecoveryPhase, byte(c.LastRecoverable))
		if m.has.sequenceReads {
			dst = append(dst, byte(c.ReadNext))
		}
		if m.has.javaAddPath {
			dst = append(dst, c.Change)
			dst = binary.AppendUvarint(dst, uint64(rl.failures(c.ChangeFailed)))
			dst = append(dst, byte(rl.set(c.ChangeOrig)))
			dst = binary.AppendUvarint(dst, uint64(rl.failures(c.DelayedFailed)))
			dst = append(dst, byte(c.Changes))
			// A layout not in use is 0 (b1 at every position), and stays so.
			if ordered {
				lay := c.ChangeOrigLay
				if c.ChangeOrig != 0 {
					lay = rl.layout(lay, ens)
				}
				dst = binary.AppendUvarint(dst, uint64(lay))
			}
			for e := 0; e < p.Entries; e++ {
				dst = append(dst, byte(rl.set(c.DoneEns[e])))
				if ordered {
					lay := c.DoneLay[e]
					if c.DoneEns[e] != 0 {
						lay = rl.layout(lay, ens)
					}
					dst = binary.AppendUvarint(dst, uint64(lay))
				}
			}
			if m.has.createWindow {
				cr := c.Created
				dst = append(dst, byte(cr.FragmentID), byte(rl.set(cr.Ensemble)))
				if ordered {
					lay := cr.Layout
					if cr.Ensemble != 0 {
						lay = rl.layout(lay, ens)
					}
					dst = binary.AppendUvarint(dst, uint64(lay))
				}
			}
		}
	}
	if m.has.faulty {
		dst = append(dst, byte(rl.set(s.BDown)), byte(rl.set(s.BWiped)), byte(rl.set(s.BReadOnly)), byte(rl.set(s.BDiskFull)), byte(rl.set(s.BLimbo)),
			byte(s.CrashesUsed), byte(s.DiskLossUsed), byte(s.ReformatUsed), byte(s.ReadOnlyUsed), byte(s.DiskFullUsed), byte(s.CorruptUsed))
		if p.RegistrationExpiry {
			dst = append(dst, byte(rl.set(s.BStale)))
		}
	}
	if m.has.deferredCheck {
		dst = append(dst, byte(rl.set(s.BCheckPending)))
	}
	if m.V.SplitAddCheck {
		for r := 0; r < p.Bookies; r++ {
			dst = binary.AppendUvarint(dst, uint64(s.BChecked[rl.bookie(r)]))
		}
	}
	if p.DeleteLedger {
		dst = append(dst, byte(b2u(s.MetaDeleted)), byte(rl.set(s.BCollected)), byte(rl.set(s.BVolatileFence)))
	}
	if m.has.handles {
		dst = append(dst, byte(rl.set(s.BHandle)))
	}
	if m.has.fencesCanBeLost {
		dst = append(dst, byte(rl.set(s.BUnflushedFence)))
	}
	if p.Checkpoints {
		dst = append(dst, byte(rl.set(s.BIndexKey)), byte(rl.set(s.BIndexFenced)), byte(rl.set(s.BKeyRecord)), byte(rl.set(s.BFenceRecord)), byte(rl.set(s.BCacheDirty)))
	}
	if p.AutoRecovery {
		dst = append(dst, byte(rl.set(s.URMissing)), s.RWPhase, byte(s.RWTried), byte(s.RWTried>>8), byte(s.RWFirst))
		dst = binary.AppendUvarint(dst, uint64(rl.mapping(s.RWMap)))
		dst = binary.AppendUvarint(dst, uint64(s.RWCache))
	}
	if p.Decommission {
		dst = append(dst, byte(rl.set(s.DecomBookie)), byte(b2u(s.DecomDone)))
	}
	if m.has.lossyJournal {
		for r := 0; r < p.Bookies; r++ {
			b := rl.bookie(r)
			dst = append(dst, byte(s.BDurableLAC[b]))
			dst = binary.AppendUvarint(dst, uint64(s.BUnflushed[b]))
		}
	}
	return msgbag.Append(dst, rl.messages(s.Msgs))
}

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("malformed state encoding")

// reader adds the model's structural checks to state.Reader, whose sticky
// first error lets Decode read a whole state and check once at the end.
type reader struct{ state.Reader }

func (r *reader) fail(format string, args ...any) {
	if r.Err() == nil {
		r.Fail(fmt.Errorf(format, args...))
	}
}

func (r *reader) rangeErr(what string, v, lo, hi int) int8 {
	r.fail("%s %d out of range [%d,%d]", what, v, lo, hi)
	return 0
}

// small reads a byte holding an int8 in [lo, hi] (Nil = -1 when lo = -1).
func (r *reader) small(what string, lo, hi int) int8 {
	v := int(int8(r.Byte()))
	if v < lo || v > hi {
		return r.rangeErr(what, v, lo, hi)
	}
	return int8(v)
}

func (r *reader) bookies(what string, n int) Bookies {
	v := Bookies(r.Byte())
	if int(v)>>uint(n) != 0 {
		r.fail("%s names a bookie beyond b%d", what, n)
	}
	return v
}

// failures reads a failure map: indexes within the ensemble, bookies
// within the cluster.
func (r *reader) failures(what string, p *Params) Failures {
	v := r.Uvarint()
	if v>>(4*uint(p.Ensemble)) != 0 {
		r.fail("%s has an index beyond %d", what, p.Ensemble-1)
		return 0
	}
	f := Failures(v)
	for i := 0; i < p.Ensemble; i++ {
		if b, ok := f.At(i); ok && b >= p.Bookies {
			r.fail("%s names a bookie beyond b%d", what, p.Bookies)
		}
	}
	return f
}

func (r *reader) fragments(sh *shape, dst *[maxFragments]Fragment) int8 {
	n := r.small("fragment count", 0, maxFragments)
	for i := 0; i < int(n) && r.Err() == nil; i++ {
		dst[i] = Fragment{
			ID:       r.small("fragment id", 0, 127),
			Ensemble: r.bookies("fragment ensemble", sh.bookies),
			First:    r.small("first entry id", 0, MaxEntries+1),
			Layout:   r.layout(sh),
		}
	}
	return n
}

// shape is what decoding needs of the parameters, computed once per
// Decode: passing Params (some 300 bytes) by value to the helpers called
// for every field was an eighth of decoding.
type shape struct {
	bookies, ensemble int
	ordered           bool
}

// layout reads an ensemble layout (present only for ordered ensembles).
func (r *reader) layout(sh *shape) Layout {
	if !sh.ordered {
		return 0
	}
	v := r.Uvarint()
	if v>>(3*uint(sh.ensemble)) != 0 {
		r.fail("layout %#x has more than %d positions", v, sh.ensemble)
	}
	return Layout(v)
}

// Decode parses an encoding made by Encode with the same parameters into s,
// reusing s's message buffer. It never panics: malformed input gives an
// error wrapping ErrMalformed.
func (m *Model) Decode(enc []byte, s *State) error {
	p := &m.P
	sh := &shape{bookies: p.Bookies, ensemble: p.Ensemble, ordered: m.has.ordered}
	msgs := s.Msgs[:0]
	*s = m.blank
	r := &reader{}
	r.Reset(enc)
	s.MetaStatus = Status(r.small("meta status", 0, int(StatusClosed)))
	s.MetaVersion = r.small("meta version", 0, 127)
	s.MetaLastEntry = r.small("meta last entry", 0, MaxEntries)
	s.NumMetaFragments = r.fragments(sh, &s.MetaFragments)
	s.BFenced = r.bookies("fenced bookies", p.Bookies)
	for b := 0; b < p.Bookies && r.Err() == nil; b++ {
		s.BLAC[b] = r.small("bookie lac", 0, MaxEntries)
		if m.V.GuaranteedWriteQuorum {
			s.BLAFR[b] = r.small("bookie lafr", 0, MaxEntries)
		}
		es := r.Uvarint()
		if r.Err() == nil && es>>(uint(p.Entries)*MaxEntries) != 0 {
			r.fail("bookie b%d stores an entry beyond e%d", b+1, p.Entries)
		}
		s.BEntries[b] = EntrySet(es)
	}
	for i := 0; i < p.Clients && r.Err() == nil; i++ {
		c := &s.Clients[i]
		c.MetaVersion = r.small("client meta version", -1, 127)
		c.Status = Status(r.small("client status", 0, int(numStatuses)-1))
		c.NumFragments = r.fragments(sh, &c.Fragments)
		c.NumPending = r.small("pending count", 0, MaxEntries)
		for j := 0; j < int(c.NumPending) && r.Err() == nil; j++ {
			c.Pending[j] = PendingAddOp{
				Entry:      Entry{ID: r.small("pending entry id", 1, p.Entries), Data: r.small("pending entry data", 1, p.Entries)},
				FragmentID: r.small("pending fragment id", 0, 127),
				Ensemble:   r.bookies("pending ensemble", p.Bookies),
				Layout:     r.layout(sh),
			}
			if j > 0 && r.Err() == nil && !c.Pending[j-1].Less(c.Pending[j]) {
				r.fail("pending ops not in canonical order")
			}
		}
		c.LAP = r.small("lap", 0, MaxEntries)
		c.LAC = r.small("lac", 0, MaxEntries)
		if m.V.GuaranteedWriteQuorum {
			c.LAFR = r.small("lafr", 0, MaxEntries)
		}
		for e := 0; e < p.Entries; e++ {
			c.Confirmed[e] = r.bookies("confirmed", p.Bookies)
		}
		c.Fenced = r.bookies("client fenced", p.Bookies)
		c.RecoveryEns = r.bookies("recovery ensemble", p.Bookies)
		c.RecoveryLay = r.layout(sh)
		c.CurrReadEntry = r.small("curr read entry", -1, MaxEntries+1)
		c.NumResponses = r.small("read response count", 0, MaxBookies)
		for j := 0; j < int(c.NumResponses) && r.Err() == nil; j++ {
			k := r.Uvarint()
			if r.Err() == nil && (k >= 1<<msgKeyBits || MsgKey(k).Type() != ReadResponse) {
				r.fail("read response %d is not a read response record", j)
			}
			c.ReadResponses[j] = MsgKey(k)
			if j > 0 && r.Err() == nil && c.ReadResponses[j-1] >= c.ReadResponses[j] {
				r.fail("read responses not in canonical order")
			}
		}
		c.RecoveryPhase = uint8(r.small("recovery phase", 0, int(ReadWritePhase)))
		c.LastRecoverable = r.small("last recoverable entry", -1, MaxEntries+1)
		if m.has.sequenceReads {
			c.ReadNext = r.small("replicas asked", 0, p.WriteQuorum)
		}
		if m.has.javaAddPath {
			c.Change = uint8(r.small("ensemble change phase", 0, int(ChangeCompleting)))
			c.ChangeFailed = r.failures("ensemble change failed bookies", p)
			c.ChangeOrig = r.bookies("ensemble change original ensemble", p.Bookies)
			c.DelayedFailed = r.failures("delayed write failed bookies", p)
			c.Changes = r.small("ensemble changes", 0, p.MaxEnsembleChanges)
			c.ChangeOrigLay = r.layout(sh)
			for e := 0; e < p.Entries; e++ {
				c.DoneEns[e] = r.bookies("acknowledged op ensemble", p.Bookies)
				c.DoneLay[e] = r.layout(sh)
			}
			if m.has.createWindow {
				c.Created.FragmentID = r.small("created op fragment id", 0, 127)
				c.Created.Ensemble = r.bookies("created op ensemble", p.Bookies)
				c.Created.Layout = r.layout(sh)
			}
		}
	}
	if m.has.faulty {
		s.BDown = r.bookies("down bookies", p.Bookies)
		s.BWiped = r.bookies("wiped bookies", p.Bookies)
		s.BReadOnly = r.bookies("read-only bookies", p.Bookies)
		s.BDiskFull = r.bookies("disk-full bookies", p.Bookies)
		s.BLimbo = r.bookies("limbo bookies", p.Bookies)
		s.CrashesUsed = r.small("crashes used", 0, p.Crashes)
		s.DiskLossUsed = r.small("disk losses used", 0, p.DiskLoss)
		s.ReformatUsed = r.small("re-formats used", 0, p.Reformat)
		s.ReadOnlyUsed = r.small("read-only faults used", 0, p.ReadOnly)
		s.DiskFullUsed = r.small("disk-full faults used", 0, p.DiskFull)
		s.CorruptUsed = r.small("corrupt reads used", 0, p.CorruptReads)
		if p.RegistrationExpiry {
			s.BStale = r.bookies("stale registrations", p.Bookies)
		}
	}
	if m.has.deferredCheck {
		s.BCheckPending = r.bookies("pending pre-boot checks", p.Bookies)
	}
	if m.V.SplitAddCheck {
		for b := 0; b < p.Bookies && r.Err() == nil; b++ {
			s.BChecked[b] = EntrySet(r.Uvarint())
			if !s.BChecked[b].Within(p.Entries) {
				r.fail("bookie %d: checked adds out of range", b+1)
			}
		}
	}
	if p.DeleteLedger {
		s.MetaDeleted = r.small("meta deleted", 0, 1) == 1
		s.BCollected = r.bookies("collected", p.Bookies)
		s.BVolatileFence = r.bookies("volatile fences", p.Bookies)
	}
	if m.has.handles {
		s.BHandle = r.bookies("ledger handles", p.Bookies)
	}
	if m.has.fencesCanBeLost {
		s.BUnflushedFence = r.bookies("unflushed fences", p.Bookies)
	}
	if p.Checkpoints {
		s.BIndexKey = r.bookies("index keys", p.Bookies)
		s.BIndexFenced = r.bookies("index fences", p.Bookies)
		s.BKeyRecord = r.bookies("key records", p.Bookies)
		s.BFenceRecord = r.bookies("fence records", p.Bookies)
		s.BCacheDirty = r.bookies("dirty write caches", p.Bookies)
	}
	if p.AutoRecovery {
		s.URMissing = r.bookies("under-replicated mark", p.Bookies)
		s.RWPhase = uint8(r.small("worker phase", 0, int(RWStopped)))
		lo := r.Byte()
		hi := r.small("worker tried fragments", 0, 1<<(maxFragments-8)-1)
		s.RWTried = uint16(lo) | uint16(hi)<<8
		s.RWFirst = r.small("worker fragment", 0, MaxEntries+1)
		s.RWMap = Failures(r.Uvarint())
		for b := p.Bookies; b < MaxBookies; b++ {
			if _, ok := s.RWMap.At(b); ok {
				r.fail("worker map names an unknown bookie")
			}
		}
		s.RWCache = uint16(r.Uvarint())
		if s.RWCache&^cacheSet>>uint(p.Entries) != 0 || s.RWCache&^cacheSet != 0 && s.RWCache&cacheSet == 0 {
			r.fail("worker's unreadable entries out of range")
		}
	}
	if p.Decommission {
		s.DecomBookie = r.bookies("decommissioned bookie", p.Bookies)
		if s.DecomBookie.Len() > 1 {
			r.fail("more than one decommissioned bookie")
		}
		s.DecomDone = r.small("decommission done", 0, 1) == 1
	}
	if m.has.lossyJournal {
		for b := 0; b < p.Bookies && r.Err() == nil; b++ {
			s.BDurableLAC[b] = r.small("durable lac", 0, MaxEntries)
			s.BUnflushed[b] = EntrySet(r.Uvarint())
			if !s.BUnflushed[b].Within(p.Entries) || s.BUnflushed[b]&^s.BEntries[b] != 0 {
				r.fail("bookie %d: unflushed entries out of range or not stored", b+1)
			}
		}
	}
	s.Msgs = msgbag.Read(&r.Reader, msgs, msgKeyBits, func(k MsgKey) string {
		switch {
		case k.Type() < AddEntryRequest || k.Type() > ReadResponse:
			return "has an invalid record"
		case k.Bookie() >= p.Bookies || k.Cid() >= p.Clients:
			return "names an unknown bookie or client"
		}
		return ""
	})
	if err := r.Done(); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return nil
}
