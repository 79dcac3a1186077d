package spec413

import "github.com/bkcheck/bkcheck/internal/msgbag"

// This file is MessagePassing_v4_13.tla: messages are a history, a function
// from the whole message record to a delivery count in {-1, 0, 1}. Records
// are never removed and can be sent once; loss is decided at send time (-1,
// observed later as a timeout); a processed message counts 0.

// MsgType is a message record's type.
type MsgType uint8

const (
	AddEntryRequestMessage MsgType = iota + 1
	AddEntryResponseMessage
	FenceRequestMessage
	FenceResponseMessage
	ReadRequestMessage
	ReadResponseMessage
)

var msgTypeNames = [...]string{"?", "AddEntryRequestMessage", "AddEntryResponseMessage", "FenceRequestMessage", "FenceResponseMessage", "ReadRequestMessage", "ReadResponseMessage"}

func (t MsgType) String() string {
	if int(t) < len(msgTypeNames) {
		return msgTypeNames[t]
	}
	return "MsgType(?)"
}

// MsgKey packs a message record. A record of one type has only some fields
// (the others are zero here), so equal records have equal keys, and key
// order is a canonical order for the history: by type, then bookie.
//
//	bits 17-19 type       14-16 bookie    13 recovery  12 success  11 fence
//	bits  7-10 entry id (a read request's entry_id)
//	bits  4-6  entry data (0: the entry is Nil)          0-3 lac
//
// The records, as the spec builds them:
//
//	AddEntryRequest  [bookie, entry, lac, recovery]
//	AddEntryResponse [bookie, entry, recovery, success]
//	FenceRequest     [bookie]
//	FenceResponse    [bookie, lac]
//	ReadRequest      [bookie, entry_id, fence]
//	ReadResponse     [bookie, entry (or Nil), fence]
type MsgKey uint32

const (
	shLAC      = 0
	shData     = 4
	shEntryID  = 7
	shFence    = 11
	shSuccess  = 12
	shRecovery = 13
	shBookie   = 14
	shType     = 17
	msgKeyBits = 20
)

// Msg is one element of the message history.
type Msg = msgbag.Msg[MsgKey]

func flag(b bool) MsgKey {
	if b {
		return 1
	}
	return 0
}

func entryKey(e Entry) MsgKey {
	return MsgKey(e.ID)<<shEntryID | MsgKey(e.Data)<<shData
}

func counter(v int8) MsgKey {
	if v < 0 || v > maxEntryID {
		panic("spec413: entry id or lac out of the model's bounds")
	}
	return MsgKey(v)
}

// AddRequest is a writer's AddEntryRequestMessage.
func AddRequest(b int, e Entry, lac int8, recovery bool) MsgKey {
	return MsgKey(AddEntryRequestMessage)<<shType | MsgKey(b)<<shBookie | entryKey(e) | counter(lac)<<shLAC | flag(recovery)<<shRecovery
}

// AddResponse is GetAddEntryResponse(req, success).
func AddResponse(req MsgKey, success bool) MsgKey {
	keep := MsgKey(7<<shBookie | 1<<shRecovery | 15<<shEntryID | 7<<shData)
	return MsgKey(AddEntryResponseMessage)<<shType | req&keep | flag(success)<<shSuccess
}

// FenceRequest is the fencing read-LAC request to bookie b.
func FenceRequest(b int) MsgKey { return MsgKey(FenceRequestMessage)<<shType | MsgKey(b)<<shBookie }

// FenceResponse is bookie b's answer to it, with its LAC.
func FenceResponse(b int, lac int8) MsgKey {
	return MsgKey(FenceResponseMessage)<<shType | MsgKey(b)<<shBookie | counter(lac)<<shLAC
}

// ReadRequest is a recovery read of entry id from bookie b.
func ReadRequest(b int, id int8, fence bool) MsgKey {
	return MsgKey(ReadRequestMessage)<<shType | MsgKey(b)<<shBookie | counter(id)<<shEntryID | flag(fence)<<shFence
}

// ReadResponse is bookie b's answer: the entry, or Nil (Entry{}) for
// NoSuchEntry. A NoSuchEntry answer does not name the entry it answers.
func ReadResponse(b int, e Entry, fence bool) MsgKey {
	return MsgKey(ReadResponseMessage)<<shType | MsgKey(b)<<shBookie | entryKey(e) | flag(fence)<<shFence
}

func (k MsgKey) Type() MsgType  { return MsgType(k >> shType & 7) }
func (k MsgKey) Bookie() int    { return int(k >> shBookie & 7) }
func (k MsgKey) Recovery() bool { return k>>shRecovery&1 == 1 }
func (k MsgKey) Success() bool  { return k>>shSuccess&1 == 1 }
func (k MsgKey) Fence() bool    { return k>>shFence&1 == 1 }
func (k MsgKey) LAC() int8      { return int8(k >> shLAC & 15) }

// Entry is the record's entry (ID 0: Nil); for a read request, Entry().ID
// is its entry_id.
func (k MsgKey) Entry() Entry {
	return Entry{ID: int8(k >> shEntryID & 15), Data: int8(k >> shData & 7)}
}

// valid reports whether k is a key the constructors above can build.
func (k MsgKey) valid() bool {
	if k>>msgKeyBits != 0 {
		return false
	}
	var c MsgKey
	e, b := k.Entry(), k.Bookie()
	if e.Data > MaxSendLimit {
		return false
	}
	switch k.Type() {
	case AddEntryRequestMessage:
		if e.ID < 1 || e.Data < 1 {
			return false
		}
		c = AddRequest(b, e, k.LAC(), k.Recovery())
	case AddEntryResponseMessage:
		if e.ID < 1 || e.Data < 1 {
			return false
		}
		c = AddResponse(AddRequest(b, e, 0, k.Recovery()), k.Success())
	case FenceRequestMessage:
		c = FenceRequest(b)
	case FenceResponseMessage:
		c = FenceResponse(b, k.LAC())
	case ReadRequestMessage:
		if e.ID < 1 {
			return false
		}
		c = ReadRequest(b, e.ID, k.Fence())
	case ReadResponseMessage:
		if (e.ID == 0) != (e.Data == 0) {
			return false
		}
		c = ReadResponse(b, e, k.Fence())
	default:
		return false
	}
	return c == k
}

// channel is what IsEarliestMsg compares: type, recovery flag and bookie.
func (k MsgKey) channel() MsgKey { return k & (7<<shType | 7<<shBookie | 1<<shRecovery) }

// Sent reports whether k \in DOMAIN messages.
func (s *State) Sent(k MsgKey) bool { return msgbag.Sent(s.Msgs, k) }

// insert adds a record k, which must not be present, with a count.
func (s *State) insert(k MsgKey, count int8) { s.Msgs = msgbag.Insert(s.Msgs, k, count) }

// setCount sets the count of a record that was sent.
func (s *State) setCount(k MsgKey, count int8) { msgbag.SetCount(s.Msgs, k, count) }

// IsEarliestMsg: no other deliverable message of k's type, recovery flag
// and bookie has a smaller entry id.
func (s *State) IsEarliestMsg(k MsgKey) bool {
	ch, id := k.channel(), k.Entry().ID
	for _, m := range s.Msgs {
		if m.Count >= 1 && m.Key.channel() == ch && m.Key.Entry().ID < id {
			return false
		}
	}
	return true
}

func isAdd(t MsgType) bool  { return t == AddEntryRequestMessage || t == AddEntryResponseMessage }
func isRead(t MsgType) bool { return t == ReadRequestMessage || t == ReadResponseMessage }

// writeTimeouts counts the witnesses of WriteTimeoutForBookie(messages, b,
// recovery): lost add requests and responses of bookie b with that flag.
// TLC evaluates the \E of an action's guard by branching, so each witness
// is one copy of the successor.
func (s *State) writeTimeouts(b int, recovery bool) int {
	n := 0
	for _, m := range s.Msgs {
		if m.Count == -1 && m.Key.Bookie() == b && isAdd(m.Key.Type()) && m.Key.Recovery() == recovery {
			n++
		}
	}
	return n
}

// ReadTimeoutCount is the number of bookies of ens with a lost read
// request or response (for any entry).
func (s *State) ReadTimeoutCount(ens Bookies) int {
	var out Bookies
	for _, m := range s.Msgs {
		if m.Count == -1 && ens.Has(m.Key.Bookie()) && isRead(m.Key.Type()) {
			out |= 1 << uint(m.Key.Bookie())
		}
	}
	return out.Len()
}

// ClearWriteTimeout sets bookie b's lost add requests and responses with
// the given recovery flag to 0.
func (s *State) ClearWriteTimeout(b int, recovery bool) {
	for i := range s.Msgs {
		m := &s.Msgs[i]
		if m.Count == -1 && m.Key.Bookie() == b && isAdd(m.Key.Type()) && m.Key.Recovery() == recovery {
			m.Count = 0
		}
	}
}

// ClearReadTimeouts marks k processed and sets the lost read requests and
// responses of the bookies of ens to 0.
func (s *State) ClearReadTimeouts(k MsgKey, ens Bookies) {
	for i := range s.Msgs {
		m := &s.Msgs[i]
		if m.Key == k || m.Count == -1 && ens.Has(m.Key.Bookie()) && isRead(m.Key.Type()) {
			m.Count = 0
		}
	}
}

// NotSentRead: no read request for entry id was ever sent.
func (s *State) NotSentRead(id int8) bool {
	for _, m := range s.Msgs {
		if m.Key.Type() == ReadRequestMessage && m.Key.Entry().ID == id {
			return false
		}
	}
	return true
}

// NotSentWrite: no recovery add request for e was ever sent.
func (s *State) NotSentWrite(e Entry) bool {
	for _, m := range s.Msgs {
		if m.Key.Type() == AddEntryRequestMessage && m.Key.Recovery() && m.Key.Entry() == e {
			return false
		}
	}
	return true
}
