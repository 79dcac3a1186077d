package spec

import "math/bits"

// This file declares, for a partial-order reduction, what each transition
// may read and write: the variables, and the rules every step of a
// category follows; each action's own footprint, deadness and necessary
// enabling set are declared beside the actions of its family
// (actions_footprint.go, faults_footprint.go, javaclient_footprint.go,
// bugs_footprint.go, autorecovery_footprint.go,
// decommission_footprint.go), reached from its row of the action table.
// A transition is an Action label; its footprint must
// hold in every state, so it over-approximates what the action's code in
// actions.go reads and writes for any state in which the label fires.
// Two transitions whose footprints do not conflict (neither writes what
// the other reads or writes) commute and cannot disable each other; a
// disabled transition can be enabled only by one that writes what it
// reads. spec/porbound checks these declarations against the
// relations measured on whole reachable graphs (declared ⊇ measured).
//
// The variables are finer than the state's fields where that is what
// makes transitions independent:
//   - a bookie's store (entries, LAC, LAFR) apart from its fence bit: a
//     fencing read reads the store and writes the fence, an add reads the
//     fence and writes the store;
//   - each message slot (type, recovery flag, client, bookie, entry id;
//     the other fields are what the record carries) as three variables:
//     sent (a record of the slot exists, with its content), live (count
//     1, deliverable) and lost (count -1, a timeout). Receiving writes
//     live; a timeout read reads lost; a send writes sent and one of the
//     other two;
//   - inflight(c, b, e): a read request or response of the slot is live.
//     A bookie answering a read without loss moves live from the request
//     to the response and leaves inflight as it was, so the recovery
//     client's "no other read in flight" test (onlyReadInFlight) is
//     independent of it.
//
// Footprints are declared for the TLA+ spec's actions under the options
// that change only what those actions compute (variants gwq,
// no-recovery-fence, no-lac-floor, add-checks-metadata; striping;
// partial replacement; recovery from the LAC; a reliable network), and
// for every bookie fault: crashes (with every journal mode: the crash,
// the restart and the journal's sync, and a creation that finds too few
// bookies up), re-formats with the cookie deleted, lost disks, read-only
// bookies and full disks (ReadOnly(b), read by a bookie's add steps and
// ensemble choices; the EREADONLY answer and its failure), corrupt reads
// (a failed read answers its request in the read response's slot, and
// spends CorruptBudget) and unavailable bookies (down from the initial
// state and never up: Down(b) is never written for them); and for the
// Java add path (every step of the Java writer writes its whole record,
// and its ensemble change one more variable, ClientChange); and for data
// integrity (limbo and a pending check in the store; a restart's check
// and the deferred one read the metadata and write store and fence); and
// for checkpoints (the write cache, the index and the journal's records
// after the mark in the store and fence). A crash adds the
// variables Down(b) (read by a bookie's steps, by every send, since a
// message to a down bookie is lost, and by ensemble choices) and the
// budgets spent; it writes the bookie's store and fence (what its
// journal had not made durable) and every deliverable message of the
// bookie (now lost). Where a crash or a re-format can still take a fence
// back, a fence is a plain variable, not a flag only ever turned on, and
// it is frozen only once durable. And for ledger deletion (the deleted
// flag is part of the metadata's status; a bookie's collection, and the
// adds it checked with split-add-check, are part of its store; a fence
// remembered in memory only is part of its fence, which the collection
// can clear, so a fence is then a plain variable and never frozen) and
// for the bookies' ledger handles (Handle(b): every answer loads one,
// a flag only turned on; a crash, a wiped disk and the collection drop
// it). And for sequence recovery reads (the next read's request goes to
// a member of the write set its label does not name, as the first one's
// does; it writes the recovery's progress) and the re-reading close
// (only its guards change). And for AutoRecovery and decommission: the
// under-replication mark (URMissing), the worker (Worker) and the
// decommission (Decom), each written by its own steps; the Auditor's
// check and the worker's steps read what LedgerChecker reads (the
// metadata, every store, which bookies are down), a copy writes the
// stores of the new bookies it names, an ensemble update the store's
// fragments, and the grace period's end starts the admin client's
// recovery. Their graphs have cycles; the reduction's cycle proviso
// (spec/stubborn) covers them. An action without a footprint leaves the
// model uncovered (Model.NotCovered), and a reduction must then expand
// every state fully.

// VarSet is a set of footprint variables.
type VarSet []uint64

// varList is a list of variables, NecessaryInto's answer as it builds it.
type varList []int

func (l *varList) add(vs ...int) { *l = append(*l, vs...) }

func (s VarSet) add(vs ...int) {
	for _, v := range vs {
		s[v/64] |= 1 << uint(v%64)
	}
}

// Has reports whether v is in the set.
func (s VarSet) Has(v int) bool { return s[v/64]&(1<<uint(v%64)) != 0 }

// Meets reports whether the two sets share a variable.
func (s VarSet) Meets(t VarSet) bool {
	for i := range s {
		if s[i]&t[i] != 0 {
			return true
		}
	}
	return false
}

// Footprint is what a transition may read (its guard and its effect),
// write, and set: a set variable is a flag the transition only ever
// turns on (a bookie's fence), which two transitions can both do in
// either order with the same result. Writes includes Sets.
type Footprint struct{ Reads, Writes, Sets VarSet }

// Conflicts reports whether two transitions may be dependent: one writes
// what the other reads or writes, other than both setting a flag.
func (f Footprint) Conflicts(g Footprint) bool { return f.ConflictsOutside(g, nil) }

// ConflictsOutside is Conflicts ignoring the variables of frozen (nil:
// none): ones no transition can change any more, whose writes are then
// no-ops that commute with everything (Frozen).
func (f Footprint) ConflictsOutside(g Footprint, frozen VarSet) bool {
	for i := range f.Writes {
		fw, gw := f.Writes[i], g.Writes[i]
		if frozen != nil {
			fw, gw = fw&^frozen[i], gw&^frozen[i]
		}
		if fw&g.Reads[i] != 0 || gw&f.Reads[i] != 0 || fw&gw&^(f.Sets[i]&g.Sets[i]) != 0 {
			return true
		}
	}
	return false
}

// MayEnable reports whether f may enable g: f writes what g reads.
func (f Footprint) MayEnable(g Footprint) bool { return f.Writes.Meets(g.Reads) }

// Footprints numbers a model's variables and declares each transition's
// footprint.
type Footprints struct {
	p       Params
	entries int // entry ids 0..entries-1 in message slots (0: fence messages; Entries+1: a recovery read past the end)
	slots   int // message slots
	n       int // variables
}

// Footprints returns the model's footprint declarations, and false where
// the model has options they do not cover.
func (m *Model) Footprints() (*Footprints, bool) {
	p := m.P
	if m.NotCovered() != "" {
		return nil, false
	}
	f := &Footprints{p: p, entries: p.Entries + 2}
	f.slots = int(addRejected) * 2 * p.Clients * p.Bookies * f.entries
	f.n = f.Decom() + 1 // one past the last variable
	return f, true
}

// faultBase is the first of the crash variables: each bookie's down flag,
// then the crash budget spent.
func (f *Footprints) faultBase() int {
	return f.msgBase() + 3*f.slots + f.p.Clients*f.p.Bookies*f.entries
}

// Down is whether bookie b is down (BDown), whether its disk is wiped
// (BWiped: cookie validation keeps it down) and whether it is still
// registered (BStale, --registration-expiry), one variable for all: a
// crash or a disk loss writes it, a restart, a re-format or the
// registration's expiry clears it; a bookie's steps, a send (a message
// to a down bookie is lost) and an ensemble choice read it.
func (f *Footprints) Down(b int) int { return f.faultBase() + b }

// CrashBudget is the crashes spent (CrashesUsed).
func (f *Footprints) CrashBudget() int { return f.faultBase() + f.p.Bookies }

// ReformatBudget is the re-formats spent (ReformatUsed).
func (f *Footprints) ReformatBudget() int { return f.faultBase() + f.p.Bookies + 1 }

// DiskLossBudget is the disks lost (DiskLossUsed).
func (f *Footprints) DiskLossBudget() int { return f.faultBase() + f.p.Bookies + 2 }

// ReadOnly is whether bookie b rejects adds (BReadOnly, and BDiskFull:
// recovery adds too), one variable for both: turning read-only or filling
// the disk writes it; a bookie's add steps (which answer EREADONLY
// instead) and an ensemble choice (only writable bookies join) read it.
func (f *Footprints) ReadOnly(b int) int { return f.faultBase() + f.p.Bookies + 3 + b }

// ReadOnlyBudget is the bookies turned read-only (ReadOnlyUsed).
func (f *Footprints) ReadOnlyBudget() int { return f.faultBase() + 2*f.p.Bookies + 3 }

// DiskFullBudget is the disks filled (DiskFullUsed).
func (f *Footprints) DiskFullBudget() int { return f.faultBase() + 2*f.p.Bookies + 4 }

// CorruptBudget is the reads failed on a corrupt entry log (CorruptUsed).
func (f *Footprints) CorruptBudget() int { return f.faultBase() + 2*f.p.Bookies + 5 }

// ClientChange is the Java writer c's ensemble change (Change, Changes,
// ChangeFailed, DelayedFailed: --add-path java), apart from the rest of
// its record, which its close also writes: only its sends, receives,
// timeouts and loop steps write it, so the loop's steps, disabled while
// the change is elsewhere, need one of those (not the close) to enable
// them.
func (f *Footprints) ClientChange(c int) int { return f.faultBase() + 2*f.p.Bookies + 6 + c }

// Handle is whether bookie b holds a handle for the ledger in memory
// (BHandle: --delete-ledger, split-add-check): every answer to a request
// sets it (a flag only turned on), a crash, a wiped disk and the garbage
// collection clear it; the collection (whether it remembers the fence)
// and the split add check read it.
func (f *Footprints) Handle(b int) int { return f.ClientChange(f.p.Clients) + b }

// Deleted is whether the ledger is deleted from the metadata store
// (MetaDeleted, --delete-ledger): written only by the deletion, read by
// whatever reads the metadata and by the garbage collection, which it
// enables.
func (f *Footprints) Deleted() int { return f.Handle(f.p.Bookies) }

// URMissing is the ledger's under-replication mark (URMissing,
// --autorecovery): the Auditor's marks grow it, the worker's
// WorkerMarksLedgerReplicated clears it, and the worker's lock needs it.
func (f *Footprints) URMissing() int { return f.Deleted() + 1 }

// Worker is the ReplicationWorker (RWPhase, RWTried, RWFirst, RWMap,
// RWCache): written only by its own steps; whether it stopped is read by
// every AutoRecovery step (the death watcher stops the Auditor too) and
// by the decommission command (which needs an Auditor).
func (f *Footprints) Worker() int { return f.Deleted() + 2 }

// Decom is the decommission (DecomBookie, DecomDone, --decommission):
// read by a restart and a re-format of the bookie, which it rules out.
func (f *Footprints) Decom() int { return f.Deleted() + 3 }

// lose: every deliverable message to or from bookie b becomes lost (the
// fault's lose), and the reads in flight with them.
func (x fp) lose(b int) {
	f := x.f
	for t := AddEntryRequest; t <= addRejected; t++ {
		for _, rec := range []bool{false, true} {
			for c := 0; c < f.p.Clients; c++ {
				for e := 0; e < f.entries; e++ {
					x.read(f.live(t, rec, c, b, e))
					x.write(f.live(t, rec, c, b, e), f.lost(t, rec, c, b, e))
				}
			}
		}
	}
	for c := 0; c < f.p.Clients; c++ {
		for e := 0; e < f.entries; e++ {
			x.write(f.inflight(c, b, e))
		}
	}
}

// readDown: the transition reads every bookie's down flag (it chooses
// bookies, or sends to some).
func (x fp) readDown() {
	for b := 0; b < x.f.p.Bookies; b++ {
		x.read(x.f.Down(b))
	}
}

// receivedResponse: the spec's receive of an add response (a rejection
// if rejected): its slot, and IsEarliestMsg, which compares responses
// whatever their success.
func (x fp) receivedResponse(rejected, rec bool, c, b, e int) {
	if rejected {
		x.received(addRejected, rec, c, b, e)
	} else {
		x.received(AddEntryResponse, rec, c, b, e)
	}
	x.earliest(AddEntryResponse, rec, c, b, e)
	x.earliest(addRejected, rec, c, b, e)
}

// failed: an EREADONLY answer (a rejected add's slot) to the spec's
// writer or recovery client, as its status says, is marked failed (-1),
// for the next ensemble change to replace the bookie.
func (x fp) failed(c, b, e int) {
	f := x.f
	for _, rec := range []bool{false, true} {
		x.read(f.sent(addRejected, rec, c, b, e), f.live(addRejected, rec, c, b, e))
		x.write(f.live(addRejected, rec, c, b, e), f.lost(addRejected, rec, c, b, e))
	}
}

// writerAdds: the Java writer's step reads whether each of its add
// requests was sent (and with which LAC: opLAC), and with sends, sends
// or re-sends any of them, lost or not.
func (x fp) writerAdds(c int, sends bool) {
	f := x.f
	for b := 0; b < f.p.Bookies; b++ {
		for e := 1; e <= f.p.Entries; e++ {
			x.read(f.sent(AddEntryRequest, false, c, b, e), f.live(AddEntryRequest, false, c, b, e))
			if sends {
				x.write(f.sent(AddEntryRequest, false, c, b, e), f.live(AddEntryRequest, false, c, b, e), f.lost(AddEntryRequest, false, c, b, e))
			}
		}
	}
}

// readChecker: what LedgerChecker.checkLedger and the LAC read of an
// AutoRecovery step read (the metadata, every bookie's store, whether it
// is down or still registered, and whether it is read-only, which
// isLastSegmentOpenAndMissingBookies asks), and whether the worker
// stopped.
func (x fp) readChecker() {
	x.readMeta()
	x.readWritable()
	for b := 0; b < x.f.p.Bookies; b++ {
		x.read(x.f.Store(b))
	}
	x.read(x.f.Worker())
}

// readClient: the transition reads all of client c's record (a client
// step its own; the steps that wait for the admin client's recovery,
// that client's).
func (x fp) readClient(c int) {
	x.read(x.f.Client(c), x.f.ClientStatus(c), x.f.ClientLAC(c), x.f.ClientPending(c), x.f.ClientFragments(c), x.f.ClientRecovery(c))
}

// readWritable: the transition chooses bookies among the writable ones:
// those up and not read-only.
func (x fp) readWritable() {
	x.readDown()
	for b := 0; b < x.f.p.Bookies; b++ {
		x.read(x.f.ReadOnly(b))
	}
}

// NumVars is the number of variables.
func (f *Footprints) NumVars() int { return f.n }

// NewSet returns an empty set of f's variables.
func (f *Footprints) NewSet() VarSet { return make(VarSet, (f.n+63)/64) }

// The variables, numbered: bookie stores, bookie fences, clients, the
// metadata, then per message slot sent, live and lost, then inflight.

// Store is bookie b's stored entries, LAC and LAFR, and with
// --data-integrity whether it is in limbo and whether a pre-boot check is
// pending (a restart starts one, a crash or a wiped disk drops it); with
// --delete-ledger whether it has garbage-collected the ledger; with
// split-add-check the adds it checked and has not stored yet.
func (f *Footprints) Store(b int) int { return b }

// Fence is bookie b's fence bit, and with --delete-ledger whether a
// collected ledger's fence is kept in memory only (BVolatileFence).
func (f *Footprints) Fence(b int) int { return f.p.Bookies + b }

// Client is client c's record but its status, LAC, pending adds,
// fragments and recovery progress (its LAP, confirmations, LAFR and
// metadata version).
func (f *Footprints) Client(c int) int { return 2*f.p.Bookies + c }

// ClientPending is client c's pending add ops, ClientFragments its
// fragments, and ClientRecovery its recovery's progress (phase, the entry
// it reads, the responses, the fenced bookies, the last recoverable
// entry, the recovery ensemble): parts of a client that few of its steps
// write, so that a guard reading one of them needs only those steps.
func (f *Footprints) ClientPending(c int) int   { return f.Meta() + 3 + c }
func (f *Footprints) ClientFragments(c int) int { return f.Meta() + 3 + f.p.Clients + c }
func (f *Footprints) ClientRecovery(c int) int  { return f.Meta() + 3 + 2*f.p.Clients + c }

// ClientStatus is client c's status, and ClientLAC its LAC: what the
// invariants read of a client, written by fewer transitions than the
// rest of it.
func (f *Footprints) ClientStatus(c int) int { return 2*f.p.Bookies + f.p.Clients + c }
func (f *Footprints) ClientLAC(c int) int    { return 2*f.p.Bookies + 2*f.p.Clients + c }

// ClientClass is which of OPEN, CLOSED, CLIENT_WITHDRAWN or none of them
// client c's status is: all the invariants but quiescence ask of it. It
// changes when a writer opens, closes or withdraws, and when a recovery
// client closes, not when a client starts a recovery or aborts one.
func (f *Footprints) ClientClass(c int) int { return 2*f.p.Bookies + 3*f.p.Clients + c }

// Meta is the metadata's status and version, MetaFragments its
// fragments, and MetaEnd whether it is CLOSED and at which last entry:
// every client step that reads the metadata reads all three, but the
// invariants read only the last two, which starting a recovery (status
// IN_RECOVERY) leaves alone.
func (f *Footprints) Meta() int          { return 2*f.p.Bookies + 4*f.p.Clients }
func (f *Footprints) MetaFragments() int { return f.Meta() + 1 }
func (f *Footprints) MetaEnd() int       { return f.Meta() + 2 }

func (f *Footprints) msgBase() int { return f.Meta() + 3 + 3*f.p.Clients }

// addRejected is the slot type of add responses that reject the add
// (success FALSE): a slot of their own, apart from the confirmations,
// since the writer receives the two in different transitions.
const addRejected = ReadResponse + 1

// slotType is the slot type of record k.
func slotType(k MsgKey) MsgType {
	if k.Type() == AddEntryResponse && !k.Success() {
		return addRejected
	}
	return k.Type()
}

func (f *Footprints) slot(t MsgType, rec bool, c, b, e int) int {
	r := 0
	if rec {
		r = 1
	}
	return (((int(t-1)*2+r)*f.p.Clients+c)*f.p.Bookies+b)*f.entries + e
}

func (f *Footprints) sent(t MsgType, rec bool, c, b, e int) int {
	return f.msgBase() + 3*f.slot(t, rec, c, b, e)
}
func (f *Footprints) live(t MsgType, rec bool, c, b, e int) int { return f.sent(t, rec, c, b, e) + 1 }
func (f *Footprints) lost(t MsgType, rec bool, c, b, e int) int { return f.sent(t, rec, c, b, e) + 2 }
func (f *Footprints) inflight(c, b, e int) int {
	return f.msgBase() + 3*f.slots + (c*f.p.Bookies+b)*f.entries + e
}

// fp builds one footprint.
type fp struct {
	f          *Footprints
	r, w, sets VarSet
}

func (x fp) read(vs ...int) {
	for _, v := range vs {
		x.r.add(v)
	}
}

func (x fp) write(vs ...int) {
	for _, v := range vs {
		x.w.add(v)
	}
}

// readMeta: the transition reads the metadata (and whether it is
// deleted).
func (x fp) readMeta() {
	x.read(x.f.Meta(), x.f.MetaFragments(), x.f.MetaEnd())
	if x.f.p.DeleteLedger {
		x.read(x.f.Deleted())
	}
}

// set: the transition turns the flag v on, whatever it was.
func (x fp) set(v int) {
	x.w.add(v)
	x.sets.add(v)
}

// received: the transition receives a record of the slot (reads its
// content and that it is live, and marks it processed).
func (x fp) received(t MsgType, rec bool, c, b, e int) {
	x.read(x.f.sent(t, rec, c, b, e), x.f.live(t, rec, c, b, e))
	x.write(x.f.live(t, rec, c, b, e))
}

// earliest: the IsEarliestMsg test of an add message of entry e.
func (x fp) earliest(t MsgType, rec bool, c, b, e int) {
	for e2 := 1; e2 < e; e2++ {
		x.read(x.f.live(t, rec, c, b, e2))
	}
}

// sentTo: the transition sends one record of the slot, lost or not.
func (x fp) sentTo(t MsgType, rec bool, c, b, e int, lost bool) {
	x.read(x.f.sent(t, rec, c, b, e))
	x.write(x.f.sent(t, rec, c, b, e))
	if lost {
		x.write(x.f.lost(t, rec, c, b, e))
	} else {
		x.write(x.f.live(t, rec, c, b, e))
	}
}

// sentToAny: SendMessagesToEnsemble of slot (t, rec, c, *, e) to a set of
// bookies the label does not name; those in lost are the lost ones.
func (x fp) sentToAny(t MsgType, rec bool, c, e int, lost Bookies) {
	x.readDown() // a message to a down bookie is lost
	for b := 0; b < x.f.p.Bookies; b++ {
		x.read(x.f.sent(t, rec, c, b, e))
		x.write(x.f.sent(t, rec, c, b, e), x.f.live(t, rec, c, b, e))
		if lost.Has(b) {
			x.write(x.f.lost(t, rec, c, b, e))
		}
	}
}

// Of returns the footprint of transition a.
func (f *Footprints) Of(a Action) Footprint {
	p, c, b := f.p, int(a.Client), int(a.Bookie)
	x := fp{f: f, r: f.NewSet(), w: f.NewSet(), sets: f.NewSet()}
	if c >= 0 && !a.Kind.bookieStep() && a.Kind != ClientDeletesLedger {
		// Every client step reads its own record (its status first)
		// and writes what clientWrites says.
		x.readClient(c)
		w := clientWrites[a.Kind]
		if w&wCore != 0 {
			x.write(f.Client(c))
		}
		if w&wPending != 0 {
			x.write(f.ClientPending(c))
		}
		if w&wFragments != 0 {
			x.write(f.ClientFragments(c))
		}
		if w&wRecovery != 0 {
			x.write(f.ClientRecovery(c))
		}
		if w&wStatus != 0 {
			x.write(f.ClientStatus(c))
			if a.Kind != ClientStartsRecovery && a.Kind != WorkerGraceExpires && a.Kind != ClientReceivesRecoveryReadResponse && a.Kind != RecoveryClientReceivesAddTimeout &&
				a.Kind != RecoveryClientFencingFails && a.Kind != RecoveryClientReadFails && a.Kind != RecoveryClientReceivesAddFencedResponse {
				x.write(f.ClientClass(c))
			}
		}
		if w&wLAC != 0 {
			x.write(f.ClientLAC(c))
		}
	}
	if c >= 0 && p.JavaAddPath() && a.Kind.javaWriterStep() {
		// The Java writer's steps run writeComplete, handleBookieFailure
		// and the ensemble change loop: any of them can change any part
		// of the handle (its ops, acks, LAC, failures, fragments, status).
		x.read(f.ClientChange(c))
		x.write(f.Client(c), f.ClientStatus(c), f.ClientClass(c), f.ClientLAC(c), f.ClientPending(c), f.ClientFragments(c), f.ClientRecovery(c), f.ClientChange(c))
	}
	if a.Kind.bookieStep() {
		x.read(f.Down(b)) // a down bookie answers nothing
	}
	if own := decl(a.Kind).fp; own != nil {
		own(x, a)
	}
	return Footprint{Reads: x.r, Writes: x.w, Sets: x.sets}
}

// javaWriterStep reports whether the kind is a step of the Java writer
// (--add-path java): its sends, receives, timeouts and ensemble change.
func (k ActionKind) javaWriterStep() bool {
	switch k {
	case ClientSendsAddEntryRequests, ClientReceivesAddConfirmedResponse, ClientReceivesAddFencedResponse,
		ClientReceivesAddErrorResponse, ClientReceivesAddTimeout, ClientUpdatesEnsembleMetadata, ClientCompletesEnsembleChange,
		ClientCreatesAddOp:
		return true
	}
	return false
}

// bookieStep reports whether the kind is a bookie's (its Client is the
// client whose message it answers, not the one acting).
func (k ActionKind) bookieStep() bool {
	switch k {
	case BookieSendsAddConfirmedResponse, BookieSendsAddFencedResponse, BookieSendsFencingReadLacResponse,
		BookieSendsReadResponse, BookieChecksAdd, BookieFailsRead, BookieSendsAddReadOnlyResponse:
		return true
	}
	return false
}

// What a client step of each kind may write of its client.
const (
	wCore = 1 << iota
	wStatus
	wLAC
	wPending
	wFragments
	wRecovery
)

var clientWrites = [numActionKinds]uint8{
	ClientCreatesLedger:                        wCore | wStatus | wFragments,
	ClientSendsAddEntryRequests:                wCore | wPending,
	ClientCreatesAddOp:                         wCore,
	ClientReceivesAddConfirmedResponse:         wCore | wLAC | wPending,
	ClientReceivesAddFencedResponse:            wStatus,
	ClientChangesEnsemble:                      wCore | wFragments,
	ClientResendsPendingAddOp:                  wPending,
	ClientClosesLedgerSuccess:                  wCore | wStatus,
	ClientClosesLedgerFail:                     wCore | wStatus,
	ClientStartsRecovery:                       wCore | wStatus | wFragments | wRecovery,
	ClientReceivesFencingReadLacResponse:       wCore | wLAC | wRecovery,
	ClientSendsRecoveryReadRequests:            wRecovery,
	ClientSendsNextRecoveryRead:                wRecovery,
	ClientReceivesRecoveryReadResponse:         wCore | wStatus | wPending | wRecovery,
	ClientWritesBackEntry:                      0, // and, aborting, what fpClientWritesBackEntry adds
	RecoveryClientReceivesAddConfirmedResponse: wCore | wLAC | wPending,
	RecoveryClientChangesEnsemble:              wCore | wFragments,
	RecoveryClientSendsPendingAddOp:            wPending,
	RecoveryClientClosesLedger:                 wCore | wStatus | wLAC | wRecovery, // a close that finds the ledger closed takes its last entry, deleted fails
	ClientFailsToCreateLedger:                  wCore | wStatus,
	WorkerGraceExpires:                         wCore | wStatus | wFragments | wRecovery, // the admin client's recovery starts
	RecoveryClientReceivesAddTimeout:           wCore | wStatus | wRecovery,
	RecoveryClientFencingFails:                 wCore | wStatus | wRecovery,
	RecoveryClientReadFails:                    wCore | wStatus | wRecovery,
	RecoveryClientReceivesAddFencedResponse:    wCore | wStatus | wRecovery,
}

// Dead reports whether transition a is disabled in s and in every state
// reachable from s, so that a reduction can leave it out of every set it
// builds in s: nothing can make it fire. It holds because some of the
// state only moves one way (in the options Footprints covers): a client's
// status goes Nil → OPEN → CLOSED or CLIENT_WITHDRAWN, or Nil →
// IN_RECOVERY → CLOSED or RECOVERY_ABORTED, and a Nil client becomes the
// writer only while the ledger does not exist; the metadata's status
// never leaves CLOSED; a writer's LAP and a recovery client's LAP only
// grow, and once it has a last recoverable entry it reads no more; a
// fence or read message is sent once per slot and a record, once
// received, is never deliverable again. spec/porbound checks the
// claim on whole graphs (a dead transition fires in no state reachable
// from where it was dead).
func (f *Footprints) Dead(s *State, a Action) bool {
	c := int(a.Client)
	var cl *Client
	if c >= 0 {
		cl = &s.Clients[c]
	}
	if !f.p.writerHas(a.Kind) {
		return true // the other writer's add path: it never fires
	}
	switch a.Kind {
	case AuditorMarksLedgerUnderreplicated, AuditorChecksLedger, WorkerAcquiresLedger, WorkerReplicatesFragment,
		WorkerUpdatesEnsemble, WorkerDefersLedger, WorkerMarksLedgerReplicated, WorkerReleasesLedger,
		WorkerGraceExpires, WorkerDiesOnInconsistentRange, AdminDecommissionsBookie:
		// A worker whose thread died stays stopped, and the death
		// watcher stopped the Auditor with it.
		if s.RWPhase == RWStopped {
			return true
		}
	}
	switch a.Kind {
	case ClientChangesEnsemble, RecoveryClientChangesEnsemble, ClientResendsPendingAddOp, RecoveryClientSendsPendingAddOp:
		// An ensemble change needs a lost or failed message, which a
		// reliable network has only from a crash, a re-format or a lost
		// disk (their broken connections) or a read-only bookie's
		// EREADONLY, and a re-send needs an ensemble change.
		if f.p.ReliableNetwork && f.p.Crashes == 0 && f.p.Reformat == 0 && f.p.DiskLoss == 0 && !rejectsWrites(f.p) {
			return true
		}
	}
	if dead := decl(a.Kind).dead; dead != nil {
		return dead(deadView{f: f, s: s, c: c, cl: cl}, a)
	}
	return false
}

// Necessary returns, for a transition a disabled in s, variables of which
// any sequence of transitions that enables it must write one (a
// necessary enabling set, as the writers of these): those of a conjunct
// of its guard that is false in s. It is a's reads when no narrower
// conjunct is known to be false.
func (f *Footprints) Necessary(s *State, a Action) VarSet {
	vs, ok := f.NecessaryInto(nil, s, f.LiveInto(f.NewSet(), s), a)
	if !ok {
		return f.Of(a).Reads
	}
	set := f.NewSet()
	set.add(vs...)
	return set
}

// LiveInto returns in dst (cleared first) the live variables of s: those
// of the message slots with a deliverable record. NecessaryInto asks it
// for every disabled transition it is given; one pass over the messages
// per state answers them all.
func (f *Footprints) LiveInto(dst VarSet, s *State) VarSet {
	clear(dst)
	for _, m := range s.Msgs {
		if k := m.Key; m.Count >= 1 {
			dst.add(f.live(slotType(k), k.Recovery(), k.Cid(), k.Bookie(), int(k.Entry().ID)))
		}
	}
	return dst
}

// NecessaryInto is Necessary as a list of variables (repeats allowed),
// appended to dst[:0], for a caller that keeps the footprints and live,
// s's live variables (LiveInto): ok is false when the answer is a's
// reads. The answer is a variable or two of a thousand: a set would be
// cleared and scanned whole for them, for every disabled transition a
// stubborn set brings in (a third of choosing one).
func (f *Footprints) NecessaryInto(dst []int, s *State, live VarSet, a Action) (_ []int, ok bool) {
	nec := decl(a.Kind).necessary
	if nec == nil {
		return dst[:0], false // its reads
	}
	// Every action whose declaration reads the client (cl) has one: the
	// client's steps, and the bookies' answers (the client of the
	// message).
	n := necView{f: f, s: s, live: live, c: int(a.Client), b: int(a.Bookie), e: int(a.Entry), vs: varList(dst[:0])}
	if n.c >= 0 {
		n.cl = &s.Clients[n.c]
	}
	return nec(n, a)
}

// Frozen returns the variables no transition can change from s on: the
// fence of a bookie fenced for good (FrozenFences). Only fences can be
// frozen, so the set is a function of FrozenFences.
func (f *Footprints) Frozen(s *State) VarSet {
	vs := f.NewSet()
	frozen := f.FrozenFences(s)
	for b := 0; b < f.p.Bookies; b++ {
		if frozen.Has(b) {
			vs.add(f.Fence(b))
		}
	}
	return vs
}

// FrozenFences are the bookies fenced for good in s: nothing but a crash
// (a fence whose journal record is not yet durable), deletion or a wiped
// disk unfences one, and Footprints covers only crashes; a durable fence
// stays durable (a fencing read or a sync of a fenced bookie leaves it
// so).
func (f *Footprints) FrozenFences(s *State) Bookies {
	if f.p.DeleteLedger {
		return 0 // the collection, and a crash after it, can clear any fence
	}
	if int(s.ReformatUsed) < f.p.Reformat || int(s.DiskLossUsed) < f.p.DiskLoss {
		return 0 // a re-format or a lost disk can still wipe any bookie
	}
	if f.p.FencesCanBeLost() {
		return s.BFenced &^ s.BUnflushedFence
	}
	return s.BFenced
}

// PropertyReads declares what a property of states reads, in the terms
// of the footprint variables, so that a reduction knows which
// transitions can change its value (are visible to it).
type PropertyReads struct {
	Meta          bool // the metadata store, all of it
	MetaFragments bool // its fragments
	MetaEnd       bool // whether it is CLOSED, and its last entry
	Stores        bool // the bookies' stored entries (and LACs)
	ClientStatus  bool // every client's status
	ClientClass   bool // whether each client is OPEN, CLOSED, CLIENT_WITHDRAWN or none of them
	// ClientLAC: the LAC of every client whose status is not Nil,
	// IN_RECOVERY or RECOVERY_ABORTED (the invariants ignore a
	// recovering client's LAC).
	ClientLAC bool
	LiveAdds  bool // whether add requests are in flight
	// FieldWise: the property is a conjunction of checks each of one
	// field of the state (TypeOK's range checks), which makes no
	// transition visible to it. The transition that first puts a field
	// out of range writes it from what it reads; the reduced search
	// executes that transition too, after the same transitions it
	// depends on, so with the same reads and the same bad value
	// (Valmari's argument for strong stubborn sets on an acyclic graph),
	// and it checks every state it reaches.
	FieldWise bool
	// All: it may read anything (every transition is visible).
	All bool
}

// Union is what either reads.
func (r PropertyReads) Union(o PropertyReads) PropertyReads {
	return PropertyReads{Meta: r.Meta || o.Meta, MetaFragments: r.MetaFragments || o.MetaFragments, MetaEnd: r.MetaEnd || o.MetaEnd, Stores: r.Stores || o.Stores, ClientStatus: r.ClientStatus || o.ClientStatus, ClientClass: r.ClientClass || o.ClientClass,
		ClientLAC: r.ClientLAC || o.ClientLAC, LiveAdds: r.LiveAdds || o.LiveAdds, FieldWise: r.FieldWise || o.FieldWise, All: r.All || o.All}
}

// Visible returns the variables a transition must write, in s, to be
// visible to properties reading r. A client's LAC counts only while its
// status is one the properties read it in: a transition that writes the
// LAC of a client in recovery is invisible in s and stays so in every
// state reached by transitions independent of it, because every step
// that writes a LAC is its client's and reads the client's status, so a
// transition changing that status conflicts with it.
func (f *Footprints) Visible(s *State, r PropertyReads) VarSet {
	vs := f.NewSet()
	if r.All {
		for i := range vs {
			vs[i] = ^uint64(0)
		}
		return vs
	}
	if r.Meta {
		vs.add(f.Meta())
	}
	if r.Meta || r.MetaFragments {
		vs.add(f.MetaFragments())
	}
	if r.Meta || r.MetaEnd {
		vs.add(f.MetaEnd())
	}
	if f.p.DeleteLedger && (r.Meta || r.MetaFragments || r.MetaEnd || r.Stores) {
		// The invariants hold of a deleted ledger vacuously: what reads
		// the metadata or the stores reads whether it is deleted.
		vs.add(f.Deleted())
	}
	for b := 0; b < f.p.Bookies && r.Stores; b++ {
		vs.add(f.Store(b))
	}
	for c := 0; c < f.p.Clients; c++ {
		if r.ClientStatus {
			vs.add(f.ClientStatus(c))
		}
		if r.ClientClass {
			vs.add(f.ClientClass(c))
		}
		switch st := s.Clients[c].Status; {
		case !r.ClientLAC, st == StatusNil, st == StatusInRecovery, st == RecoveryAborted:
		default:
			vs.add(f.ClientLAC(c))
		}
		for b := 0; b < f.p.Bookies && r.LiveAdds; b++ {
			for e := 1; e <= f.p.Entries; e++ {
				vs.add(f.live(AddEntryRequest, false, c, b, e))
				vs.add(f.live(AddEntryRequest, true, c, b, e))
			}
		}
	}
	return vs
}

// Universe lists every transition label the actions Footprints covers
// can produce for the model, in a fixed order: a reduction must know the
// disabled transitions too, since one that conflicts with its choice may
// become enabled later. spec/porbound checks that every label of
// whole graphs is listed, and a reduction stops with an error on an
// enabled label that is not.
func (f *Footprints) Universe() []Action {
	p := f.p
	var out []Action
	all := Bookies(1)<<uint(p.Bookies) - 1
	lossPatterns := func(within Bookies) []Bookies {
		if p.ReliableNetwork && p.Crashes == 0 && p.DiskLoss == 0 { // a message to a down bookie is lost
			return []Bookies{0}
		}
		var ps []Bookies
		for sub := Bookies(0); ; sub = (sub - within) & within {
			ps = append(ps, sub)
			if sub == within {
				break
			}
		}
		return ps
	}
	entries := func(k ActionKind) (lo, hi int) {
		switch k {
		case BookieSendsFencingReadLacResponse, ClientReceivesFencingReadLacResponse:
			return 0, 0
		case BookieSendsReadResponse, BookieFailsRead, ClientReceivesRecoveryReadResponse, ClientSendsRecoveryReadRequests, ClientSendsNextRecoveryRead,
			RecoveryClientReadFails:
			return 1, p.Entries + 1 // a recovery reads one past the last entry
		}
		return 1, p.Entries
	}
	for k := ActionKind(1); k < numActionKinds; k++ {
		if !p.writerHas(k) {
			continue // the other writer's action: it never fires
		}
		for c := 0; c < p.Clients; c++ {
			lo, hi := entries(k)
			switch k {
			case BookieSendsAddConfirmedResponse, BookieSendsAddFencedResponse, BookieSendsFencingReadLacResponse, BookieSendsReadResponse,
				BookieSendsAddReadOnlyResponse, BookieFailsRead:
				if k == BookieSendsAddReadOnlyResponse && !rejectsWrites(p) || k == BookieFailsRead && p.CorruptReads == 0 {
					continue
				}
				for b := 0; b < p.Bookies; b++ {
					for e := lo; e <= hi; e++ {
						for _, l := range lossPatterns(1 << uint(b)) {
							out = append(out, Action{Kind: k, Client: int8(c), Bookie: int8(b), Entry: int8(e), Lost: l})
						}
					}
				}
			case ClientReceivesAddConfirmedResponse, ClientReceivesAddFencedResponse, RecoveryClientReceivesAddConfirmedResponse, RecoveryClientReceivesAddFencedResponse,
				ClientReceivesFencingReadLacResponse, ClientReceivesRecoveryReadResponse, ClientReceivesAddErrorResponse:
				if k == ClientReceivesAddErrorResponse && !rejectsWrites(p) {
					continue
				}
				for b := 0; b < p.Bookies; b++ {
					for e := lo; e <= hi; e++ {
						out = append(out, Action{Kind: k, Client: int8(c), Bookie: int8(b), Entry: int8(e)})
					}
				}
			case ClientReceivesAddTimeout, RecoveryClientReceivesAddTimeout:
				for b := 0; b < p.Bookies; b++ {
					for e := lo; e <= hi; e++ {
						out = append(out, Action{Kind: k, Client: int8(c), Bookie: int8(b), Entry: int8(e)})
					}
				}
			case ClientUpdatesEnsembleMetadata:
				// Lost is the set replaced, empty when nothing is written.
				for sub := Bookies(0); sub <= all; sub++ {
					out = append(out, Action{Kind: k, Client: int8(c), Bookie: -1, Lost: sub})
				}
			case ClientCompletesEnsembleChange:
				for _, l := range lossPatterns(all) {
					out = append(out, Action{Kind: k, Client: int8(c), Bookie: -1, Lost: l})
				}
			case ClientCreatesLedger, ClientClosesLedgerSuccess, ClientClosesLedgerFail, RecoveryClientClosesLedger, RecoveryClientFencingFails:
				out = append(out, Action{Kind: k, Client: int8(c), Bookie: -1})
			case ClientCreatesAddOp:
				if p.CreatesAddOps() {
					out = append(out, Action{Kind: k, Client: int8(c), Bookie: -1})
				}
			case ClientDeletesLedger:
				if p.DeleteLedger {
					out = append(out, Action{Kind: k, Client: int8(c), Bookie: -1})
				}
			case BookieChecksAdd:
				for b := 0; b < p.Bookies && p.variant().SplitAddCheck; b++ {
					for e := lo; e <= hi; e++ {
						out = append(out, Action{Kind: k, Client: int8(c), Bookie: int8(b), Entry: int8(e)})
					}
				}
			case ClientStartsRecovery:
				for _, l := range lossPatterns(all) {
					out = append(out, Action{Kind: k, Client: int8(c), Bookie: -1, Lost: l})
				}
			case ClientSendsAddEntryRequests, ClientResendsPendingAddOp, RecoveryClientSendsPendingAddOp,
				ClientWritesBackEntry, ClientSendsRecoveryReadRequests, ClientSendsNextRecoveryRead:
				if k == ClientSendsNextRecoveryRead && !p.SequenceReads() {
					continue
				}
				for e := lo; e <= hi; e++ {
					for _, l := range lossPatterns(all) {
						out = append(out, Action{Kind: k, Client: int8(c), Bookie: -1, Entry: int8(e), Lost: l})
					}
				}
			case RecoveryClientReadFails:
				for e := lo; e <= hi && p.SequenceReads(); e++ {
					out = append(out, Action{Kind: k, Client: int8(c), Bookie: -1, Entry: int8(e)})
				}
			case ClientChangesEnsemble, RecoveryClientChangesEnsemble:
				// Lost is the set replaced: any non-empty one.
				for failed := Bookies(1); failed <= all; failed++ {
					out = append(out, Action{Kind: k, Client: int8(c), Bookie: -1, Lost: failed})
				}
			case ClientFailsToCreateLedger:
				if p.Faulty() {
					out = append(out, Action{Kind: k, Client: int8(c), Bookie: -1})
				}
			}
		}
	}
	// The crashes' steps, last: seeds are tried in this order, and a
	// crash's set is the whole bookie.
	for b := 0; b < p.Bookies && p.Crashes > 0; b++ {
		for _, k := range []ActionKind{BookieCrashes, BookieRestarts, BookieSyncsJournal} {
			out = append(out, Action{Kind: k, Client: -1, Bookie: int8(b)})
		}
	}
	for b := 0; b < p.Bookies && p.RegistrationExpiry; b++ {
		out = append(out, Action{Kind: BookieRegistrationExpires, Client: -1, Bookie: int8(b)})
	}
	for b := 0; b < p.Bookies && p.Reformat > 0; b++ {
		out = append(out, Action{Kind: BookieRejoinsEmpty, Client: -1, Bookie: int8(b)})
	}
	for b := 0; b < p.Bookies && p.DiskLoss > 0; b++ {
		out = append(out, Action{Kind: BookieLosesDisk, Client: -1, Bookie: int8(b)})
	}
	for b := 0; b < p.Bookies && p.ReadOnly > 0; b++ {
		out = append(out, Action{Kind: BookieBecomesReadOnly, Client: -1, Bookie: int8(b)})
		out = append(out, Action{Kind: BookieBecomesWritable, Client: -1, Bookie: int8(b)})
	}
	for b := 0; b < p.Bookies && p.DiskFull > 0; b++ {
		out = append(out, Action{Kind: BookieFillsDisk, Client: -1, Bookie: int8(b)})
	}
	for b := 0; b < p.Bookies && p.DeferredCheck(); b++ {
		out = append(out, Action{Kind: BookieRunsPreBootCheck, Client: -1, Bookie: int8(b)})
	}
	for b := 0; b < p.Bookies && p.DeleteLedger; b++ {
		out = append(out, Action{Kind: BookieCollectsLedger, Client: -1, Bookie: int8(b)})
	}
	for b := 0; b < p.Bookies && p.Checkpoints; b++ {
		out = append(out, Action{Kind: BookieCheckpoints, Client: -1, Bookie: int8(b)}, Action{Kind: BookieCheckpointsIdle, Client: -1, Bookie: int8(b)})
	}
	if p.AutoRecovery {
		// The marks name the bookies they add (Lost); a fragment's copy
		// its first entry (Entry, up to one past the last: an empty last
		// fragment) and the new bookies (Lost, none when it fails).
		worker := func(k ActionKind, e int, lost Bookies) Action {
			return Action{Kind: k, Client: -1, Bookie: -1, Entry: int8(e), Lost: lost}
		}
		for _, k := range []ActionKind{AuditorMarksLedgerUnderreplicated, AuditorChecksLedger} {
			for lost := Bookies(1); lost <= all && (k != AuditorChecksLedger || p.PeriodicCheck()); lost++ {
				out = append(out, worker(k, 0, lost))
			}
		}
		for e := 1; e <= p.Entries+1; e++ {
			for lost := Bookies(0); lost <= all; lost++ {
				out = append(out, worker(WorkerReplicatesFragment, e, lost))
			}
			out = append(out, worker(WorkerUpdatesEnsemble, e, 0))
			if !p.variant().SkipInconsistentRange {
				out = append(out, worker(WorkerDiesOnInconsistentRange, e, 0))
			}
		}
		for _, k := range []ActionKind{WorkerAcquiresLedger, WorkerDefersLedger, WorkerMarksLedgerReplicated, WorkerReleasesLedger, WorkerGraceExpires} {
			out = append(out, worker(k, 0, 0))
		}
		for _, l := range lossPatterns(all) {
			out = append(out, Action{Kind: WorkerGraceExpires, Client: int8(p.AdminClient()), Bookie: -1, Lost: l})
		}
	}
	for b := 0; b < p.Bookies && p.Decommission; b++ {
		out = append(out, Action{Kind: AdminDecommissionsBookie, Client: -1, Bookie: int8(b)}, Action{Kind: AdminFinishesDecommission, Client: -1, Bookie: int8(b)})
	}
	return out
}

// Progress is a measure that every transition the options Footprints
// covers strictly increases, compared as Less does, so that their state
// graph has no cycle (which a reduction needs: on a cycle it could put a
// transition off for ever). Records are never removed, and a send adds
// at least one; settled counts a processed request (count 0) four times,
// a processed response twice and a lost or failed record (-1) once, and
// takes as much off for a second copy in flight (count 2; copies), so
// that a delivery of one copy of two counts as one of the last: a
// receive turns a deliverable record (1) into a processed one, an
// ensemble change or a timeout a lost one into a processed one, an
// EREADONLY answer a deliverable one into a failed one, and a Java
// bookie's answer to a re-sent request (which makes its earlier answer
// deliverable again) gains a processed request for a processed response; the
// steps that touch no message move a client's status along Nil → OPEN →
// CLOSED or CLIENT_WITHDRAWN, or Nil → IN_RECOVERY → CLOSED or
// RECOVERY_ABORTED, which only increase as numbers; a re-send to no
// new bookie moves a pending op to the current fragment; and the
// application's create (--create-window) holds an op, which current
// counts too (the add that takes it sends records or starts a change).
//
// Status comes second (it never goes back, and a Java writer that gives
// up the ledger can undo the count of its last loop, below), then the
// Java client's ensemble changes (--add-path java): 16·(3·loops started +
// the phase (updating 0, completing 1, none 2)) grows on each step of the
// writer's loop, and its completion may re-send a request already
// answered (settled goes down then, records do not); a recovery's change
// counts a loop (recoveryChanges) less one for each pending write-back it
// leaves to re-send (fewer than 16), and each re-send, which may repeat a
// record (copies), takes one off.
//
// With faults, faults comes first: 4·(crashes + re-formats + lost disks)
// − 2·down + 2·(read-only switches + full disks + failed reads) −
// pending pre-boot checks. A crash, a re-format or a lost disk spends
// budget (4) and takes a bookie down (−2) or brings it up, dropping its
// pending check; a restart brings it up (+2) and may start a check (−1);
// running the check ends it (+1); the other faults spend budget; the
// other steps leave it alone. With --delete-ledger, deletion comes next:
// the ledger deleted, and the bookies that collected it (neither ever
// undone); with handles, after current, the handles loaded and the adds
// checked (split-add-check): an answer loads a handle (and stores a
// checked add) but settles a record first, and a crash, a wiped disk or
// the collection, which drop them, count earlier. A journal sync changes nothing
// else, and then comes durable, which it increases: minus what is not yet
// durable (entries, a LAC behind, a fence record). Last comes what is
// checkpointed (--checkpoints): 2·(index keys + index fences) − key
// records − fence records − dirty write caches.
//
// AutoRecovery's graphs have cycles (a worker releases a ledger it could
// not repair and takes it again; a mark is cleared and set again), so no
// measure increases on all of their edges. Last comes autorecovery:
// 256·(the decommission started, and done) + 128·bookies marked missing
// + 4·fragments tried + the worker's phase rank (workerRank), which the
// marks, the lock, a copy and its ensemble update increase. The edges
// that do not increase Progress are where the search's cycle proviso
// applies (spec/stubborn): a state is reduced only by a set whose
// transitions all increase it.
type Progress struct {
	faults, deletion, status, changes, records, settled, current, handles, durable, checkpointed, autorecovery int
}

// workerRank orders the ReplicationWorker's phases for Progress: a copy
// (locked → copied, one more fragment tried) and its ensemble update
// (copied → locked) both increase 4·tried + rank; the steps that end a
// run (back to idle, deferred, stopped) need not, and are what closes
// AutoRecovery's cycles.
var workerRank = [...]int{RWIdle: 0, RWLocked: 3, RWCopied: 1, RWDeferred: 1, RWRecovering: 2, RWStopped: 0}

// statusRank orders a client's statuses for Progress: every change of a
// client's status raises it (a closing writer's close ends CLOSED or
// withdrawn, never OPEN again). A failed recovery's read still in flight
// (zombieRead) counts one less, so that its end raises it.
var statusRank = [numStatuses]int{StatusNil: 0, StatusOpen: 1, StatusInRecovery: 2, StatusClosing: 2, StatusClosed: 3, ClientWithdrawn: 4, RecoveryAborted: 5}

// ProgressOf returns s's measure.
func ProgressOf(s *State) Progress {
	var pr Progress
	pr.faults = 4*(int(s.CrashesUsed)+int(s.ReformatUsed)+int(s.DiskLossUsed)) - 2*s.BDown.Len() - s.BStale.Len() +
		2*(int(s.ReadOnlyUsed)+int(s.DiskFullUsed)+int(s.CorruptUsed)) - s.BCheckPending.Len() -
		(s.BReadOnly &^ s.BDiskFull).Len() // a read-only bookie's return to writable raises it too
	for b := range s.BUnflushed {
		pr.durable -= bits.OnesCount64(uint64(s.BUnflushed[b]))
		if s.BDurableLAC[b] != s.BLAC[b] {
			pr.durable--
		}
	}
	pr.durable -= s.BUnflushedFence.Len()
	pr.deletion = s.BCollected.Len()
	if s.MetaDeleted {
		pr.deletion++
	}
	pr.handles = s.BHandle.Len()
	for b := range s.BChecked {
		pr.handles += bits.OnesCount64(uint64(s.BChecked[b]))
	}
	pr.checkpointed = 2*(s.BIndexKey.Len()+s.BIndexFenced.Len()) - s.BKeyRecord.Len() - s.BFenceRecord.Len() - s.BCacheDirty.Len()
	pr.autorecovery = 256*(s.DecomBookie.Len()+int(b2u(s.DecomDone))) + 128*s.URMissing.Len() + 4*bits.OnesCount16(s.RWTried) + workerRank[s.RWPhase]
	for _, m := range s.Msgs {
		pr.records++
		w := 2 // a response; a request weighs 4
		if t := m.Key.Type(); t == AddEntryRequest || t == FenceRequest || t == ReadRequest {
			w = 4
		}
		switch {
		case m.Count == -1:
			pr.settled++
		case m.Count == 0:
			pr.settled += w
		default:
			pr.settled -= w * int(m.Count-1) // copies: a second copy in flight
		}
	}
	for i := range s.Clients {
		c := &s.Clients[i]
		pr.status += statusRank[c.Status]
		if zombieRead(c) {
			pr.status-- // its end (endRead) raises it again
		}
		pr.changes += 16 * (3*int(c.Changes) + changeRank[c.Change])
		for _, op := range c.PendingList() {
			if c.NumFragments > 0 && !c.needsResend(op) {
				pr.current++
			} else if c.Status == StatusInRecovery && c.Changes > 0 {
				pr.changes-- // a Java recovery's re-send
			}
		}
		if c.Created.Ensemble != 0 {
			pr.current++ // ClientCreatesAddOp; the add that clears it sends records or starts a change
		}
	}
	return pr
}

// changeRank orders the Java writer's ensemble change phases as a loop
// runs them: a loop starts (ChangeUpdating, with Changes one more), writes
// the metadata (ChangeCompleting) and completes (ChangeNone), or starts
// again for failures delayed meanwhile (Changes one more again).
var changeRank = [...]int{ChangeUpdating: 0, ChangeCompleting: 1, ChangeNone: 2}

// Less reports whether p comes before q.
func (p Progress) Less(q Progress) bool {
	switch {
	case p.faults != q.faults:
		return p.faults < q.faults
	case p.deletion != q.deletion:
		return p.deletion < q.deletion
	case p.status != q.status:
		return p.status < q.status
	case p.changes != q.changes:
		return p.changes < q.changes
	case p.records != q.records:
		return p.records < q.records
	case p.settled != q.settled:
		return p.settled < q.settled
	case p.current != q.current:
		return p.current < q.current
	case p.handles != q.handles:
		return p.handles < q.handles
	case p.durable != q.durable:
		return p.durable < q.durable
	case p.checkpointed != q.checkpointed:
		return p.checkpointed < q.checkpointed
	}
	return p.autorecovery < q.autorecovery
}

// loadsHandle: handling a request loads the ledger's handle (reply), as
// does the split add check.
func (x fp) loadsHandle(b int) {
	if x.f.p.HasHandles() {
		x.set(x.f.Handle(b))
	}
}

// dropsHandle: a crash, a re-format, a lost disk and the collection drop
// the bookie's handle (the collection reads it: whether the fence is
// remembered).
func (x fp) dropsHandle(b int) {
	if x.f.p.HasHandles() {
		x.read(x.f.Handle(b))
		x.write(x.f.Handle(b))
	}
}

// fence is a bookie step's fence: a fence a crash can still take back is
// a plain variable (a fencing read turns it on or makes it durable, a
// sync makes it durable), not a flag only ever turned on.
func (x fp) fence(b int) {
	f, p := x.f, x.f.p
	if p.FencesCanBeLost() || p.Reformat > 0 || p.DiskLoss > 0 {
		x.read(f.Fence(b))
		x.write(f.Fence(b))
	} else {
		x.set(f.Fence(b))
	}
	if p.Checkpoints {
		// A durable fence record goes to the journal after the mark
		// (with variant fence-journals-key, the master key too).
		x.write(f.Store(b))
	}
}

// deadView is what the actions' Dead declarations read: the state, and
// the action's client (c, and cl: nil for an action without one).
type deadView struct {
	f  *Footprints
	s  *State
	c  int
	cl *Client
}

// writerDead: the client is not, and can no longer become, the writer.
func (d deadView) writerDead() bool {
	return !(d.cl.Status == StatusOpen || d.cl.Status == StatusNil && d.s.MetaStatus == StatusNil)
}

// closerDead: the client is not, and can no longer become, a writer that
// closes (an open writer, or one closing on an unrecoverable error).
func (d deadView) closerDead() bool {
	return d.writerDead() && d.cl.Status != StatusClosing
}

// recoveryDead: the client is not, and can no longer become, a
// recovery client.
func (d deadView) recoveryDead() bool {
	return !(d.cl.Status == StatusInRecovery || d.cl.Status == StatusNil && d.s.MetaStatus != StatusClosed)
}

// spent: the slot's only record was sent and received.
func (d deadView) spent(t MsgType, b, e int) bool {
	for _, m := range d.s.Msgs {
		k := m.Key
		if k.Type() == t && k.Cid() == d.c && k.Bookie() == b && int(k.Entry().ID) == e && !k.Recovery() {
			return m.Count < 1
		}
	}
	return false
}

// necView is what the actions' NecessaryInto declarations read (the
// state, its live variables, the action's client, bookie and entry) and
// the list they append to (vs). It is passed by value: the hot path
// allocates nothing.
type necView struct {
	f       *Footprints
	s       *State
	live    VarSet
	c, b, e int
	cl      *Client // nil for an action without a client
	vs      varList
}

// noLive: no record of the slots is deliverable; they become so only
// when sent (written: their live variables).
func (n *necView) noLive(t MsgType, recs ...bool) bool {
	for _, rec := range recs {
		if n.live.Has(n.f.live(t, rec, n.c, n.b, n.e)) {
			return false
		}
	}
	for _, rec := range recs {
		n.vs.add(n.f.live(t, rec, n.c, n.b, n.e))
	}
	return true
}

// status: the client's status is none of ok (it then needs its status
// to change).
func (n *necView) status(ok ...Status) bool {
	for _, st := range ok {
		if n.s.Clients[n.c].Status == st {
			return false
		}
	}
	n.vs.add(n.f.ClientStatus(n.c))
	return true
}

// own: what only the client's own steps write (and, with meta, the
// metadata): a send's guard is the client's state and that no record it
// would send was sent before, which stays false once false, so a send
// whose guard fails needs its client (or the metadata its targets come
// from) to change.
func (n *necView) own(meta bool) {
	f, c := n.f, n.c
	n.vs.add(f.Client(c), f.ClientStatus(c), f.ClientLAC(c), f.ClientPending(c), f.ClientFragments(c), f.ClientRecovery(c))
	if meta {
		n.vs.add(f.Meta(), f.MetaFragments(), f.MetaEnd())
	}
	// A label names its lost messages, and a message to a down bookie is
	// always lost: a crash or a restart changes which labels are enabled.
	for b := 0; b < f.p.Bookies && (f.p.Crashes > 0 || f.p.DiskLoss > 0); b++ {
		n.vs.add(f.Down(b))
	}
}

// worker: the worker is not in one of the phases the step needs; only
// its own steps move it.
func (n *necView) worker(phases ...uint8) bool {
	for _, ph := range phases {
		if n.s.RWPhase == ph {
			return false
		}
	}
	n.vs.add(n.f.Worker())
	return true
}

// pendingOf: a pending op of entry e (that must be re-sent, with resend),
// which the client's pending ops and current fragment say. An op is
// created in the current fragment, so one comes to need a re-send only
// when the client's fragments change.
func (n *necView) pendingOf(resend bool) bool {
	for _, op := range n.cl.PendingList() {
		if int(op.Entry.ID) == n.e && (!resend || n.cl.needsResend(op)) {
			return true
		}
	}
	if resend {
		n.vs.add(n.f.ClientFragments(n.c))
	} else {
		n.vs.add(n.f.ClientPending(n.c))
	}
	return false
}

// is: the conjunct holds; if not, it reads vars.
func (n *necView) is(ok bool, vars ...int) bool {
	if !ok {
		n.vs.add(vars...)
	}
	return ok
}

// metaVars are the metadata's variables.
func (n *necView) metaVars() []int {
	vs := []int{n.f.Meta(), n.f.MetaFragments(), n.f.MetaEnd()}
	if n.f.p.DeleteLedger {
		vs = append(vs, n.f.Deleted()) // a guard on MetaDeleted (readMeta)
	}
	return vs
}
