package spec413

import "math/bits"

// Nil marks an absent integer (the TLA+ model value Nil): a writer's
// meta_version before it knows the ledger. Every integer that may be Nil is
// otherwise >= 0, so comparisons with Nil are false, as in TLC.
const Nil int8 = -1

// Bookies is a set of bookies as a bitmask: bit i is bookie b(i+1).
type Bookies uint8

// Has reports whether b is in the set.
func (s Bookies) Has(b int) bool { return s>>uint(b)&1 == 1 }

// Len is the cardinality of the set.
func (s Bookies) Len() int { return bits.OnesCount8(uint8(s)) }

// Status is meta_status or a writer's status.
type Status uint8

const (
	StatusNil        Status = iota // Nil
	StatusOpen                     // STATUS_OPEN
	StatusInRecovery               // STATUS_IN_RECOVERY
	StatusClosed                   // STATUS_CLOSED
	StatusInvalid                  // STATUS_INVALID: a writer that proposed an invalid fragment
	numStatuses
)

var statusNames = [numStatuses]string{"Nil", "STATUS_OPEN", "STATUS_IN_RECOVERY", "STATUS_CLOSED", "STATUS_INVALID"}

func (s Status) String() string {
	if s < numStatuses {
		return statusNames[s]
	}
	return "Status(?)"
}

// Recovery phases (w2.recovery_phase): the spec runs w2's recovery in
// phases to keep the state space small.
const (
	NotStarted               uint8 = 0
	FencingPhase             uint8 = 1
	ReadPhase                uint8 = 2
	PendingReadResponsePhase uint8 = 3
	WritePhase               uint8 = 4
)

// Entry is an entry record [id, data]. ID 0 is the Nil entry (a writer's
// curr_read_entry before a read, the entry of a NoSuchEntry response);
// stored entries have data in 1..SendLimit.
type Entry struct{ ID, Data int8 }

// Fragment is [id, ensemble, first_entry_id]; ID 0 is a writer's Nil
// curr_fragment (fragment ids start at 1).
type Fragment struct {
	ID       int8
	Ensemble Bookies
	First    int8
}

// PendingAddOp is [entry, fragment_id, ensemble].
type PendingAddOp struct {
	Entry      Entry
	FragmentID int8
	Ensemble   Bookies
}

// Less is the canonical order of pending ops (the sorted set).
func (a PendingAddOp) Less(b PendingAddOp) bool {
	switch {
	case a.Entry.ID != b.Entry.ID:
		return a.Entry.ID < b.Entry.ID
	case a.Entry.Data != b.Entry.Data:
		return a.Entry.Data < b.Entry.Data
	case a.FragmentID != b.FragmentID:
		return a.FragmentID < b.FragmentID
	}
	return a.Ensemble < b.Ensemble
}

// The two writers: w1 creates and writes the ledger, w2 recovers it. An
// add's recovery flag is the index of the writer that sent it.
const (
	W1 = 0
	W2 = 1
)

// Writer is w1 or w2: a WriterState record. Only the first SendLimit
// elements of Confirmed (the function confirmed over 1..SendLimit) are used.
type Writer struct {
	MetaVersion   int8 // Nil or a version
	Status        Status
	CurrFragment  Fragment // ID 0: Nil
	NumPending    int8
	Pending       [maxPending]PendingAddOp // sorted set
	LAP, LAC      int8
	Confirmed     [MaxSendLimit]Bookies // confirmed[id] at index id-1
	Fenced        Bookies
	CurrReadEntry Entry // ID 0: Nil
	HasEntry      Bookies
	NoSuchEntry   Bookies
	RecoveryPhase uint8
}

// PendingList returns pending_add_ops as a slice of its array.
func (w *Writer) PendingList() []PendingAddOp { return w.Pending[:w.NumPending] }

func (w *Writer) addPending(op PendingAddOp) {
	ops := w.PendingList()
	i := 0
	for i < len(ops) && ops[i].Less(op) {
		i++
	}
	if i < len(ops) && ops[i] == op {
		return
	}
	if int(w.NumPending) == len(w.Pending) {
		panic("spec413: pending_add_ops overflow (model bound exceeded)")
	}
	copy(w.Pending[i+1:w.NumPending+1], w.Pending[i:w.NumPending])
	w.Pending[i] = op
	w.NumPending++
}

func (w *Writer) removePendingAt(i int) {
	copy(w.Pending[i:w.NumPending-1], w.Pending[i+1:w.NumPending])
	w.NumPending--
	w.Pending[w.NumPending] = PendingAddOp{}
}

// State is one state of the specification: every VARIABLE. Arrays are
// sized by the hard limits; unused elements stay zero, so equal states are
// equal structs apart from Msgs.
type State struct {
	Msgs []Msg // messages: the whole history, sorted by key

	MetaStatus    Status
	MetaVersion   int8
	MetaLastEntry int8
	NumFragments  int8
	Fragments     [maxFragments]Fragment // meta_fragments

	BFenced  Bookies
	BEntries [MaxBookies]EntrySet
	BLAC     [MaxBookies]int8

	W [2]Writer // w1, w2
}

// FragmentList returns meta_fragments as a slice of its array.
func (s *State) FragmentList() []Fragment { return s.Fragments[:s.NumFragments] }

// CopyFrom makes s a deep copy of t, reusing s's message buffer.
func (s *State) CopyFrom(t *State) {
	msgs := append(s.Msgs[:0], t.Msgs...)
	*s = *t
	s.Msgs = msgs
}

func initWriter() Writer { return Writer{MetaVersion: Nil} }

// Init is the unique initial state.
func Init() State {
	return State{W: [2]Writer{initWriter(), initWriter()}}
}

// EntrySet is a set of stored entries: bit (id-1)*MaxSendLimit + (data-1) is
// [id |-> id, data |-> data], ids 1..15, data 1..MaxSendLimit.
type EntrySet uint64

func entryBit(e Entry) EntrySet {
	if e.ID < 1 || e.ID > maxEntryID || e.Data < 1 || e.Data > MaxSendLimit {
		panic("spec413: stored entry out of the model's bounds")
	}
	return 1 << (uint(e.ID-1)*MaxSendLimit + uint(e.Data-1))
}

// Add returns the set with e added.
func (s EntrySet) Add(e Entry) EntrySet { return s | entryBit(e) }

// Has reports whether e is in the set.
func (s EntrySet) Has(e Entry) bool {
	return e.ID >= 1 && e.ID <= maxEntryID && e.Data >= 1 && e.Data <= MaxSendLimit && s&entryBit(e) != 0
}

// WithID is CHOOSE e \in s : e.id = id: the entry with that id and the
// smallest data (TLC's normalized order), and whether there is one.
func (s EntrySet) WithID(id int8) (Entry, bool) {
	if id < 1 || id > maxEntryID {
		return Entry{}, false
	}
	row := uint64(s>>(uint(id-1)*MaxSendLimit)) & (1<<MaxSendLimit - 1)
	if row == 0 {
		return Entry{}, false
	}
	return Entry{ID: id, Data: int8(bits.TrailingZeros64(row)) + 1}, true
}

// List returns the entries in (id, data) order.
func (s EntrySet) List() []Entry {
	var out []Entry
	for x := uint64(s); x != 0; x &= x - 1 {
		i := bits.TrailingZeros64(x)
		out = append(out, Entry{ID: int8(i/MaxSendLimit) + 1, Data: int8(i%MaxSendLimit) + 1})
	}
	return out
}

// CurrentFragment is Last(meta_fragments).
func (s *State) CurrentFragment() Fragment { return s.Fragments[s.NumFragments-1] }

// FragmentOfEntryId is the fragment of meta_fragments that holds entry id:
// the only one, the last if it starts at or before id, else the first (by
// position) that starts at or before id and whose successor by id starts
// after it. ok is false where the TLA+ CHOOSE has no witness (TLC would
// stop with an evaluation error).
func (s *State) FragmentOfEntryId(id int8) (Fragment, bool) {
	frags := s.FragmentList()
	if n := len(frags); n == 1 || n > 1 && frags[n-1].First <= id {
		return frags[n-1], true
	}
	for _, f := range frags {
		if f.First > id {
			continue
		}
		for _, next := range frags {
			if next.ID == f.ID+1 && next.First > id {
				return f, true
			}
		}
	}
	return Fragment{}, false
}
