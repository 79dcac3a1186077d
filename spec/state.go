package spec

// Nil marks an absent integer (the TLA+ model value Nil). Every integer the
// spec may set to Nil is otherwise >= 0, so comparisons with Nil are false,
// as in TLC.
const Nil int8 = -1

// Bookies is a set of bookies as a bitmask: bit i is bookie b(i+1).
type Bookies uint8

// Has reports whether b is in the set.
func (s Bookies) Has(b int) bool { return s&(1<<uint(b)) != 0 }

// Len is the cardinality of the set.
func (s Bookies) Len() int {
	n := 0
	for x := s; x != 0; x &= x - 1 {
		n++
	}
	return n
}

//go:generate go tool stringer -type=Status -linecomment

// Ledger and client statuses (meta_status, clients[c].status). The line
// comments are the names TLA+ gives them; stringer turns them into String
// (status_string.go).
type Status uint8

const (
	StatusNil        Status = iota // Nil
	StatusOpen                     // OPEN
	StatusInRecovery               // IN_RECOVERY
	StatusClosed                   // CLOSED
	ClientWithdrawn                // CLIENT_WITHDRAWN
	RecoveryAborted                // RECOVERY_ABORTED
	// StatusClosing is a Java writer whose handle closed itself on an
	// unrecoverable error (LedgerHandle.handleUnrecoverableErrorDuringAdd
	// calls asyncCloseInternal: the pending adds fail at once, the handle
	// takes no more), its close's metadata write not yet done. With
	// --close-rereads only; the TLA+ spec's writer withdraws instead.
	StatusClosing // CLOSING
)

// numStatuses is one more than the last status (outside the block, so
// stringer does not name it).
const numStatuses = StatusClosing + 1

// Recovery phases (clients[c].recovery_phase).
const (
	NotStarted     uint8 = 0
	FencingPhase   uint8 = 1
	ReadWritePhase uint8 = 2
)

// Entry is an entry record [id, data]. Data 0 stands for Nil, which only
// appears in NoSuchEntry read responses.
type Entry struct{ ID, Data int8 }

// Fragment is [id, ensemble, first_entry_id]. With striping (E > Qw) the
// ensemble is an ordered list: Layout gives the bookie at each position,
// and Ensemble is the same bookies as a set. Without striping the ensemble
// is a set, as in the TLA+ spec, and Layout is 0.
type Fragment struct {
	ID       int8
	Ensemble Bookies
	First    int8
	Layout   Layout
}

// Layout is an ordered ensemble: position i (0-based) holds a bookie index
// in bits 3i..3i+2.
type Layout uint32

// Index returns the position of bookie b in the first e positions of l,
// or -1.
func (l Layout) Index(b, e int) int {
	for i := 0; i < e; i++ {
		if l.At(i) == b {
			return i
		}
	}
	return -1
}

// At returns the bookie at position i.
func (l Layout) At(i int) int { return int(l >> (3 * uint(i)) & 7) }

// With returns the layout with bookie b at position i.
func (l Layout) With(i, b int) Layout {
	return l&^(7<<(3*uint(i))) | Layout(b)<<(3*uint(i))
}

// Failures is a map from ensemble index to bookie, as the Java client
// keys its failed bookies (LedgerHandle's Map<Integer, BookieId>
// failedBookies and delayedWriteFailedBookies): index i holds bookie b as
// b+1 in bits 4i..4i+3, 0 when i is not in the map.
type Failures uint32

// At returns the bookie failed at index i and whether i is in the map.
func (f Failures) At(i int) (int, bool) {
	v := int(f >> (4 * uint(i)) & 15)
	return v - 1, v != 0
}

// Put is Map.put(i, b): it overwrites what index i held.
func (f Failures) Put(i, b int) Failures {
	return f&^(15<<(4*uint(i))) | Failures(b+1)<<(4*uint(i))
}

// PutAll is Map.putAll(g): g's indexes overwrite f's.
func (f Failures) PutAll(g Failures) Failures {
	for i := 0; i < MaxBookies; i++ {
		if b, ok := g.At(i); ok {
			f = f.Put(i, b)
		}
	}
	return f
}

// Bookies is the set of the map's values.
func (f Failures) Bookies() Bookies {
	var bs Bookies
	for i := 0; i < MaxBookies; i++ {
		if b, ok := f.At(i); ok {
			bs |= 1 << uint(b)
		}
	}
	return bs
}

// Matching is the set of bookies that the map names at the index where
// lay still has them: the failures a MetadataUpdateLoop still acts on
// (its predicate's getLastEnsembleValue(metadata).get(idx).equals(addr)).
func (f Failures) Matching(lay Layout) Bookies {
	var bs Bookies
	for i := 0; i < MaxBookies; i++ {
		if b, ok := f.At(i); ok && lay.At(i) == b {
			bs |= 1 << uint(b)
		}
	}
	return bs
}

// IndexPosition is the model's ensemble position of BookKeeper's ensemble
// index i. The model numbers entries from 1 and writes entry e at the
// positions from e mod E; BookKeeper numbers them from 0 and writes entry
// e−1 at the indexes from (e−1) mod E (RoundRobinDistributionSchedule).
// So index i is position i+1 (mod E), which is how the harness creates
// the ledger. Whatever iterates an ensemble by index (a HashMap or
// HashSet of small Integer keys iterates in key order) goes through the
// positions in this order: 1, 2, …, E−1, 0.
func (p Params) IndexPosition(i int) int { return (i + 1) % p.Ensemble }

// inIndexOrder lists the members of bs in BookKeeper's index order of f's
// layout (an ordered ensemble).
func (f Fragment) inIndexOrder(p Params, bs Bookies) []int {
	var out []int
	for i := 0; i < p.Ensemble; i++ {
		if b := f.Layout.At(p.IndexPosition(i)); bs.Has(b) {
			out = append(out, b)
		}
	}
	return out
}

// PendingAddOp is [entry, fragment_id, ensemble] (and the ensemble's
// layout with striping).
type PendingAddOp struct {
	Entry      Entry
	FragmentID int8
	Ensemble   Bookies
	Layout     Layout
}

// Less is the canonical order of pending ops (the set's sorted order).
func (a PendingAddOp) Less(b PendingAddOp) bool {
	if a.Entry != b.Entry {
		if a.Entry.ID != b.Entry.ID {
			return a.Entry.ID < b.Entry.ID
		}
		return a.Entry.Data < b.Entry.Data
	}
	if a.FragmentID != b.FragmentID {
		return a.FragmentID < b.FragmentID
	}
	if a.Ensemble != b.Ensemble {
		return a.Ensemble < b.Ensemble
	}
	return a.Layout < b.Layout
}

// Client is one element of the clients variable. curr_fragment is not
// stored: in every reachable state it is Last(fragments), or Nil when
// fragments is empty (see CurrFragment).
type Client struct {
	MetaVersion     int8 // Nil or a version
	Status          Status
	NumFragments    int8
	Fragments       [maxFragments]Fragment
	NumPending      int8
	Pending         [MaxEntries]PendingAddOp // sorted set
	LAP, LAC        int8
	LAFR            int8                // last add fully replicated (gwq variant only)
	Confirmed       [MaxEntries]Bookies // confirmed[id] at index id-1
	Fenced          Bookies
	RecoveryEns     Bookies // recovery_ensemble
	RecoveryLay     Layout  // its layout, with striping
	CurrReadEntry   int8    // Nil or an entry id
	NumResponses    int8
	ReadResponses   [MaxBookies]MsgKey // sorted set of ReadResponse records
	RecoveryPhase   uint8
	LastRecoverable int8 // last_recoverable_entry: Nil or an entry id
	// ReadNext is how many members of the write set the sequence read of
	// CurrReadEntry has asked (--recovery-read sequence: the
	// SequenceReadRequest's nextReplicaIndexToReadFrom); 0 otherwise.
	ReadNext int8

	// The Java client's add path (--add-path java; javaclient.go). With
	// it, Pending is LedgerHandle.pendingAddOps (each op's Ensemble and
	// Layout are PendingAddOp.ensemble) and Confirmed[id] is the op's
	// ackSet.
	Change        uint8    // the ensemble change under way: ChangeNone, ChangeUpdating or ChangeCompleting
	ChangeFailed  Failures // the failedBookies of the running ensembleChangeLoop
	ChangeOrig    Bookies  // its origEnsemble
	ChangeOrigLay Layout   // and that ensemble's layout
	DelayedFailed Failures // delayedWriteFailedBookies
	Changes       int8     // numEnsembleChanges: ensembleChangeLoop calls so far
	// The ensemble each acknowledged op keeps (PendingAddOp.ensemble after
	// its callback: late responses still reach the op), by entry id - 1;
	// empty until the op is acknowledged.
	DoneEns [MaxEntries]Bookies
	DoneLay [MaxEntries]Layout
	// Created is the op the application thread has created and not yet
	// added (--create-window; ClientCreatesAddOp).
	Created CreatedAddOp
}

// CreatedAddOp is a PendingAddOp between PendingAddOp.create and
// pendingAddOps.add: the ensemble it took (an empty Ensemble: none), and
// no entry id yet.
type CreatedAddOp struct {
	FragmentID int8
	Ensemble   Bookies
	Layout     Layout
}

// The phases of a Java client's ensemble change (Client.Change):
// changingEnsemble is set in both.
const (
	ChangeNone       uint8 = iota // changingEnsemble = false
	ChangeUpdating                // MetadataUpdateLoop running (handleBookieFailure started it)
	ChangeCompleting              // the metadata written (or left as it was); whenCompleteAsync's callback not yet run
)

// changeNames are the phases' names in traces.
var changeNames = map[uint8]string{ChangeNone: "none", ChangeUpdating: "updating_metadata", ChangeCompleting: "completing"}

// CurrFragment returns curr_fragment and whether it is non-Nil.
func (c *Client) CurrFragment() (Fragment, bool) {
	if c.NumFragments == 0 {
		return Fragment{}, false
	}
	return c.Fragments[c.NumFragments-1], true
}

// FragmentList returns the client's fragments as a slice of its array.
func (c *Client) FragmentList() []Fragment { return c.Fragments[:c.NumFragments] }

// PendingList returns the pending add ops as a slice of its array.
func (c *Client) PendingList() []PendingAddOp { return c.Pending[:c.NumPending] }

// Responses returns read_responses as a slice of its array.
func (c *Client) Responses() []MsgKey { return c.ReadResponses[:c.NumResponses] }

func (c *Client) addPending(op PendingAddOp) {
	ops := c.Pending[:c.NumPending]
	i := 0
	for i < len(ops) && ops[i].Less(op) {
		i++
	}
	if i < len(ops) && ops[i] == op {
		return
	}
	if int(c.NumPending) == len(c.Pending) {
		panic("spec: pending_add_ops overflow (model bound exceeded)")
	}
	copy(c.Pending[i+1:c.NumPending+1], c.Pending[i:c.NumPending])
	c.Pending[i] = op
	c.NumPending++
}

func (c *Client) removePendingAt(i int) {
	copy(c.Pending[i:c.NumPending-1], c.Pending[i+1:c.NumPending])
	c.NumPending--
	c.Pending[c.NumPending] = PendingAddOp{}
}

func (c *Client) addResponse(k MsgKey) {
	rs := c.ReadResponses[:c.NumResponses]
	i := 0
	for i < len(rs) && rs[i] < k {
		i++
	}
	if i < len(rs) && rs[i] == k {
		return
	}
	if int(c.NumResponses) == len(c.ReadResponses) {
		panic("spec: read_responses overflow (model bound exceeded)")
	}
	copy(c.ReadResponses[i+1:c.NumResponses+1], c.ReadResponses[i:c.NumResponses])
	c.ReadResponses[i] = k
	c.NumResponses++
}

func (c *Client) clearResponses() {
	c.ReadResponses = [MaxBookies]MsgKey{}
	c.NumResponses = 0
}

func (c *Client) appendFragment(f Fragment) {
	if int(c.NumFragments) == len(c.Fragments) {
		panic("spec: fragments overflow (model bound exceeded)")
	}
	c.Fragments[c.NumFragments] = f
	c.NumFragments++
}

func initClient() Client {
	return Client{MetaVersion: Nil, CurrReadEntry: Nil, LastRecoverable: Nil}
}

// State is one state of the protocol: every VARIABLE of the spec. Arrays are
// sized by the hard limits and only the first Params-many elements are used;
// unused elements stay zero so that equal states are equal structs apart
// from Msgs.
type State struct {
	Msgs []Msg // messages: the whole history, sorted by key

	MetaStatus       Status
	NumMetaFragments int8
	MetaFragments    [maxFragments]Fragment
	MetaLastEntry    int8
	MetaVersion      int8

	BEntries [MaxBookies]EntrySet
	BFenced  Bookies
	BLAC     [MaxBookies]int8
	BLAFR    [MaxBookies]int8 // gwq variant only

	// Faults (only with fault budgets).
	BDown        Bookies // crashed or wiped, not yet restarted
	BWiped       Bookies // down with a wiped disk: cookie validation keeps it down until re-formatted
	BReadOnly    Bookies // read-only: rejects normal adds
	BDiskFull    Bookies // read-only with disks below the high-priority threshold: rejects recovery adds too
	BLimbo       Bookies // in limbo after the data-integrity check: answers Unknown for what it lacks
	BStale       Bookies // down, still registered: placement can choose it (--registration-expiry)
	CrashesUsed  int8
	DiskLossUsed int8
	ReformatUsed int8
	ReadOnlyUsed int8
	DiskFullUsed int8
	CorruptUsed  int8

	// The pre-boot check started at a restart after an unclean shutdown
	// (--data-integrity, --journal disabled) and not yet run: EmbeddedServer
	// does not wait for it, so the bookie serves meanwhile.
	BCheckPending Bookies

	// Journal durability (only with --journal no-sync or disabled): what
	// each bookie acknowledged but has not yet made durable, and its LAC
	// as of its last flush. A crash loses the former and goes back to the
	// latter.
	BUnflushed      [MaxBookies]EntrySet
	BUnflushedFence Bookies // fenced, fence record not yet durable (no-sync)
	BDurableLAC     [MaxBookies]int8

	// DbLedgerStorage durability (--checkpoints): per bookie, what its
	// ledger index holds durably (the ledger with its master key; the
	// fenced flag), what its journal holds after the log mark (a master
	// key record, METAENTRY_ID_LEDGER_KEY, written by the first add; a
	// durable fence record, METAENTRY_ID_FENCE_KEY), and whether its write
	// cache holds entries of the ledger (a checkpoint then flushes).
	BIndexKey, BIndexFenced  Bookies
	BKeyRecord, BFenceRecord Bookies
	BCacheDirty              Bookies

	// Variant split-add-check: normal adds a bookie found not fenced and
	// has not stored yet.
	BChecked [MaxBookies]EntrySet

	// Ledger deletion (--delete-ledger): the metadata is gone; bookies
	// that garbage-collected it; bookies whose fence of it is only in
	// memory (recentlyFencedAndDeletedLedgers), lost in a crash.
	MetaDeleted    bool
	BCollected     Bookies
	BVolatileFence Bookies

	// The bookies holding a handle for the ledger in memory (its
	// LedgerDescriptor in HandleFactoryImpl's map): created by the first
	// request a bookie handles for the ledger since it started, gone with a
	// crash or the garbage collection (split-add-check, --delete-ledger).
	BHandle Bookies

	// AutoRecovery (--autorecovery; autorecovery.go): the ledger's
	// under-replication znode (urL) with the missing bookies it was
	// marked with, 0 when not marked; the ReplicationWorker's phase, the
	// fragments (by index) its rereplicate run has tried, and the copy it
	// has made and not yet swapped into the metadata: the fragment's first
	// entry and which new bookie replaces which old one; the entries its
	// replications could not read.
	URMissing Bookies
	RWPhase   uint8
	RWTried   uint16
	RWFirst   int8
	RWMap     Failures // old bookie b -> new bookie, At(b)
	// The worker's unableToReadEntriesForReplication for the ledger:
	// cacheSet when it holds a set, and the entries in it (bit id-1).
	RWCache uint16

	// Decommission (--decommission; decommission.go): the bookie an
	// operator's decommissionbookie is waiting on (at most one), and
	// whether it has returned.
	DecomBookie Bookies
	DecomDone   bool

	Clients [MaxClients]Client
}

// MetaFragmentList returns meta_fragments as a slice.
func (s *State) MetaFragmentList() []Fragment { return s.MetaFragments[:s.NumMetaFragments] }

// CopyFrom makes s a deep copy of t, reusing s's message buffer.
func (s *State) CopyFrom(t *State) {
	msgs := append(s.Msgs[:0], t.Msgs...)
	*s = *t
	s.Msgs = msgs
}

// EntrySet is a set of entries: bit (id-1)*MaxEntries + (data-1) is set when
// [id |-> id, data |-> data] is in the set. Stored entries never have Nil data.
type EntrySet uint64

func entryBit(e Entry) EntrySet {
	return 1 << (uint(e.ID-1)*MaxEntries + uint(e.Data-1))
}

// Add returns the set with e added.
func (s EntrySet) Add(e Entry) EntrySet { return s | entryBit(e) }

// Has reports whether e is in the set.
func (s EntrySet) Has(e Entry) bool { return s&entryBit(e) != 0 }

// WithID returns the entry with the given id, preferring the smallest data
// (TLC's CHOOSE order), and whether one exists.
func (s EntrySet) WithID(id int8) (Entry, bool) {
	if id < 1 || id > MaxEntries {
		return Entry{}, false
	}
	row := uint64(s>>(uint(id-1)*MaxEntries)) & 0xff
	if row == 0 {
		return Entry{}, false
	}
	d := int8(0)
	for row&1 == 0 {
		row >>= 1
		d++
	}
	return Entry{ID: id, Data: d + 1}, true
}

// HasID reports whether some entry with this id is in the set.
func (s EntrySet) HasID(id int8) bool {
	_, ok := s.WithID(id)
	return ok
}

// List returns the entries in (id, data) order.
func (s EntrySet) List() []Entry {
	var out []Entry
	for id := int8(1); id <= MaxEntries; id++ {
		for d := int8(1); d <= MaxEntries; d++ {
			if s.Has(Entry{id, d}) {
				out = append(out, Entry{id, d})
			}
		}
	}
	return out
}

// Init returns the unique initial state.
func (p Params) Init() State {
	var s State
	s.MetaStatus = StatusNil
	for i := range s.Clients {
		s.Clients[i] = initClient()
	}
	for i := p.Clients; i < MaxClients; i++ {
		s.Clients[i] = Client{}
	}
	s.BDown = p.unavailableSet()
	return s
}

// FragmentOfEntryId is the fragment of frags that holds entry id: the last
// one if it starts at or before id, else the one whose successor starts after
// id. ok is false where the TLA+ CHOOSE would have no witness (TLC would stop
// with an evaluation error), e.g. for an empty fragment list.
func FragmentOfEntryId(id int8, frags []Fragment) (f Fragment, ok bool) {
	switch {
	case len(frags) == 0:
		return Fragment{}, false
	case len(frags) == 1:
		return frags[0], true
	case frags[len(frags)-1].First <= id:
		return frags[len(frags)-1], true
	}
	for _, f1 := range frags {
		for _, f2 := range frags {
			if f1.ID == f2.ID-1 && f1.First <= id && f2.First > id {
				return f1, true
			}
		}
	}
	return Fragment{}, false
}

// StoredOn is the set of bookies among bs that store some entry with this id.
func (s *State) StoredOn(id int8, bs Bookies) Bookies {
	var out Bookies
	for b := 0; b < MaxBookies; b++ {
		if bs.Has(b) && s.BEntries[b].HasID(id) {
			out |= 1 << uint(b)
		}
	}
	return out
}

// Within reports whether every entry has id and data in 1..n.
func (s EntrySet) Within(n int) bool {
	var ok EntrySet
	for id := 0; id < n; id++ {
		ok |= EntrySet(1<<uint(n)-1) << uint(id*MaxEntries)
	}
	return s&^ok == 0
}

// IDsEqualData reports whether every entry has data equal to its id.
func (s EntrySet) IDsEqualData() bool {
	var diag EntrySet
	for id := 0; id < MaxEntries; id++ {
		diag |= 1 << uint(id*MaxEntries+id)
	}
	return s&^diag == 0
}

// Striped reports whether entries are striped over a larger ensemble (E > Qw).
func (p Params) Striped() bool { return p.Ensemble > p.WriteQuorum }

// Ordered reports whether ensembles are ordered lists (fragments, pending
// ops and recovery ensembles carry a Layout): with striping, and on the
// Java add path, whose failures, acks and replacements are keyed by
// ensemble index (LedgerHandle.handleBookieFailure's Map<Integer,
// BookieId>, PendingAddOp's ackSet) even when E = Qw, and with sequence
// recovery reads, which ask the write set's members in order. Otherwise
// the ensemble is a set, as in the TLA+ spec.
func (p Params) Ordered() bool { return p.Striped() || p.JavaAddPath() || p.SequenceReads() }

// WriteSet is the set of bookies of fragment f that store entry id. Without
// striping (E = Qw) it is the whole ensemble. With striping it is the Qw
// ensemble positions starting at id mod E, wrapping: BookKeeper's
// round-robin distribution schedule.
func (p Params) WriteSet(id int8, f Fragment) Bookies {
	return p.writeSet(id, f.Ensemble, f.Layout)
}

func (p Params) writeSet(id int8, ens Bookies, lay Layout) Bookies {
	if !p.Striped() {
		return ens
	}
	var ws Bookies
	start := int(id) % p.Ensemble
	for i := 0; i < p.WriteQuorum; i++ {
		ws |= 1 << uint(lay.At((start+i)%p.Ensemble))
	}
	return ws
}

// OpWriteSet is the write set an add op was sent to.
func (p Params) OpWriteSet(op PendingAddOp) Bookies {
	return p.writeSet(op.Entry.ID, op.Ensemble, op.Layout)
}
