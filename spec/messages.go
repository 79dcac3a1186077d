package spec

import "github.com/bkcheck/bkcheck/internal/msgbag"

// This file is MessagePassing.tla: messages are a history, a function from
// the whole message record to a delivery count in {-1, 0, 1}. Records are
// never removed; a record can be sent only once; loss is decided at send
// time (-1 = lost, observed later as a timeout).

// MsgType is the message type tag.
type MsgType uint8

const (
	AddEntryRequest MsgType = iota + 1
	AddEntryResponse
	FenceRequest
	FenceResponse
	ReadRequest
	ReadResponse
)

var msgTypeNames = [...]string{"?", "AddEntryRequest", "AddEntryResponse", "FenceRequest", "FenceResponse", "ReadRequest", "ReadResponse"}

func (t MsgType) String() string {
	if int(t) < len(msgTypeNames) {
		return msgTypeNames[t]
	}
	return "MsgType(?)"
}

// Read response codes.
const (
	CodeOK          uint8 = 0
	CodeNoSuchEntry uint8 = 1
	CodeUnknown     uint8 = 2 // a limbo bookie cannot say whether it ever had the entry
	// CodeReadOnly marks an AddEntryResponse rejected by a read-only bookie
	// (success FALSE, as a fenced rejection, but a different error).
	CodeReadOnly uint8 = 3
)

// MsgKey packs a message record into an integer. Records of one type have
// only some fields; the others are zero. Equal records have equal keys, so
// key order is a canonical order for the message history.
//
//	bits  0-2  type        3-5  bookie     6-7  cid
//	bit   8    recovery    9    success    10   fence   11-12 code
//	bits 13-16 entry id (entry.id, or entry_id of a read request)
//	bits 17-20 entry data (0 = Nil)     21-24 lac     25-28 lafr (gwq)
//	bits 29-31 index: the ensemble index a Java writer's add request was
//	           sent for, and its response carries back (PendingAddOp's
//	           bookieIndex ctx); 0 in every other record
type MsgKey uint32

const (
	shType     = 0
	shBookie   = 3
	shCid      = 6
	shRecovery = 8
	shSuccess  = 9
	shFence    = 10
	shCode     = 11
	shEntryID  = 13
	shData     = 17
	shLAC      = 21
	shLAFR     = 25
	shIndex    = 29
	msgKeyBits = 32
)

// Msg is one element of the message history.
type Msg = msgbag.Msg[MsgKey]

// MsgFields is the unpacked form of a MsgKey.
type MsgFields struct {
	Type     MsgType
	Bookie   int
	Cid      int
	Recovery bool
	Success  bool
	Fence    bool
	Code     uint8
	Entry    Entry // entry (data 0 = Nil); for a ReadRequest, Entry.ID is entry_id
	LAC      int8
	LAFR     int8 // last add fully replicated (gwq variant only)
	Index    int  // the ensemble index of a Java writer's add (--add-path java)
}

func b2u(b bool) MsgKey {
	if b {
		return 1
	}
	return 0
}

// Key packs the fields.
func (f MsgFields) Key() MsgKey {
	return MsgKey(f.Type)<<shType | MsgKey(f.Bookie)<<shBookie | MsgKey(f.Cid)<<shCid |
		b2u(f.Recovery)<<shRecovery | b2u(f.Success)<<shSuccess | b2u(f.Fence)<<shFence |
		MsgKey(f.Code)<<shCode | MsgKey(f.Entry.ID)<<shEntryID | MsgKey(f.Entry.Data)<<shData |
		MsgKey(f.LAC)<<shLAC | MsgKey(f.LAFR)<<shLAFR | MsgKey(f.Index)<<shIndex
}

// Fields unpacks the key.
func (k MsgKey) Fields() MsgFields {
	return MsgFields{
		Type:     k.Type(),
		Bookie:   k.Bookie(),
		Cid:      k.Cid(),
		Recovery: k.Recovery(),
		Success:  k.Success(),
		Fence:    k>>shFence&1 == 1,
		Code:     uint8(k >> shCode & 3),
		Entry:    k.Entry(),
		LAC:      int8(k >> shLAC & 15),
		LAFR:     int8(k >> shLAFR & 15),
		Index:    k.Index(),
	}
}

func (k MsgKey) Type() MsgType  { return MsgType(k >> shType & 7) }
func (k MsgKey) Bookie() int    { return int(k >> shBookie & 7) }
func (k MsgKey) Cid() int       { return int(k >> shCid & 3) }
func (k MsgKey) Recovery() bool { return k>>shRecovery&1 == 1 }
func (k MsgKey) Success() bool  { return k>>shSuccess&1 == 1 }
func (k MsgKey) Index() int     { return int(k >> shIndex & 7) }
func (k MsgKey) Entry() Entry {
	return Entry{ID: int8(k >> shEntryID & 15), Data: int8(k >> shData & 15)}
}

// channel is the part of an add message that IsEarliestMsg compares:
// type, recovery flag, cid and bookie.
func (k MsgKey) channel() MsgKey {
	return k & (7<<shType | 7<<shBookie | 3<<shCid | 1<<shRecovery)
}

// Sent reports whether a record equal to k was ever sent (k \in DOMAIN messages).
func (s *State) Sent(k MsgKey) bool { return msgbag.Sent(s.Msgs, k) }

// insert adds a new record with the given count; k must not be present.
func (s *State) insert(k MsgKey, count int8) { s.Msgs = msgbag.Insert(s.Msgs, k, count) }

// setCount sets the count of an existing record.
func (s *State) setCount(k MsgKey, count int8) { msgbag.SetCount(s.Msgs, k, count) }

// deliver takes one copy of k off the wire (MessageProcessed).
func (s *State) deliver(k MsgKey) { msgbag.Deliver(s.Msgs, k) }

// Deliverable reports whether k is receivable (count >= 1).
func (s *State) Deliverable(k MsgKey) bool { return msgbag.Deliverable(s.Msgs, k) }

// WriteTimeoutForBookie: some lost add request or response of client cid
// to/from bookie b with the given recovery flag exists.
func (s *State) WriteTimeoutForBookie(cid, b int, recovery bool) bool {
	for _, m := range s.Msgs {
		if m.Count == -1 && m.Key.Bookie() == b && m.Key.Cid() == cid && m.Key.Recovery() == recovery {
			if t := m.Key.Type(); t == AddEntryRequest || t == AddEntryResponse {
				return true
			}
		}
	}
	return false
}

// unregistered are the bookies no placement chooses: those down whose
// registration is gone (with --registration-expiry a stopped bookie stays
// registered until BookieRegistrationExpires; without it, every one down).
func (s *State) unregistered() Bookies { return s.BDown &^ s.BStale }

// changeTimeout: bookie b has a lost add request or reply of client cid
// (recovery: a write-back) that an ensemble change takes
// (WriteTimeoutForBookie). With the Java add path a write-back's failure
// starts the change only for an op not yet completed: PendingAddOp.
// writeComplete (release-4.18.0) hands a completed op's to
// notifyWriteFailed, which ReadOnlyLedgerHandle acts on at the next
// write-back's initiate (RecoveryClientReceivesAddTimeout, then
// ClientWritesBackEntry), never at once. Found by bkcheck validate: 4
// records of 4.18.2 (4 bookies, a spare) whose recovery closed the
// ledger with the bookie of a completed write-back's timeout still in
// its ensemble.
func (s *State) changeTimeout(p Params, cid, b int, recovery bool) bool {
	if !recovery || !p.JavaAddPath() {
		return s.WriteTimeoutForBookie(cid, b, recovery)
	}
	c := &s.Clients[cid]
	for _, m := range s.Msgs {
		k := m.Key
		if m.Count == -1 && k.Bookie() == b && isRecoveryAdd(k, cid) && !opCompleted(p, c, k.Entry().ID) {
			return true
		}
	}
	return false
}

// ReadTimeoutForBookie: some lost read request or response of client cid
// to/from bookie b exists.
func (s *State) ReadTimeoutForBookie(cid, b int) bool {
	for _, m := range s.Msgs {
		if m.Count == -1 && m.Key.Bookie() == b && m.Key.Cid() == cid {
			if t := m.Key.Type(); t == ReadRequest || t == ReadResponse {
				return true
			}
		}
	}
	return false
}

// ReadTimeoutCount is the number of bookies of ens with a read timeout for cid.
func (s *State) ReadTimeoutCount(cid int, ens Bookies) int {
	var timedOut Bookies
	for _, m := range s.Msgs {
		if m.Count == -1 && m.Key.Cid() == cid && ens.Has(m.Key.Bookie()) {
			if t := m.Key.Type(); t == ReadRequest || t == ReadResponse {
				timedOut |= 1 << uint(m.Key.Bookie())
			}
		}
	}
	return timedOut.Len()
}

// entryReadTimeouts is the number of bookies with a lost read request or
// response of client cid for entry id.
func (s *State) entryReadTimeouts(cid int, id int8) int {
	var timedOut Bookies
	for _, m := range s.Msgs {
		if m.Count == -1 && m.Key.Cid() == cid && m.Key.Entry().ID == id {
			if t := m.Key.Type(); t == ReadRequest || t == ReadResponse {
				timedOut |= 1 << uint(m.Key.Bookie())
			}
		}
	}
	return timedOut.Len()
}

// ClearWriteTimeout sets every lost add request/response of cid with a
// bookie in bs and the given recovery flag to 0.
func (s *State) ClearWriteTimeout(cid int, bs Bookies, recovery bool) {
	for i := range s.Msgs {
		m := &s.Msgs[i]
		if m.Count == -1 && m.Key.Cid() == cid && bs.Has(m.Key.Bookie()) && m.Key.Recovery() == recovery {
			if t := m.Key.Type(); t == AddEntryRequest || t == AddEntryResponse {
				m.Count = 0
			}
		}
	}
}

// onlyReadInFlight reports whether IgnoreFurtherReadResponses(msg, ens)
// would zero nothing but msg: no other read request or response of msg's
// client to/from a bookie of ens is deliverable. In the spec the decision
// branches of ClientReceivesRecoveryReadResponse assign messages' twice
// (IgnoreFurtherReadResponses, then MessageProcessed); TLC reads the second
// assignment as an equality test, so the branch exists only when this holds.
func (s *State) onlyReadInFlight(k MsgKey, ens Bookies) bool {
	cid := k.Cid()
	for _, m := range s.Msgs {
		if m.Key == k || m.Count < 1 || m.Key.Cid() != cid || !ens.Has(m.Key.Bookie()) {
			continue
		}
		if t := m.Key.Type(); t == ReadRequest || t == ReadResponse {
			return false
		}
	}
	return true
}
