package spec

import (
	"encoding/json"
	"fmt"

	"github.com/bkcheck/bkcheck/vocab"
)

// This file is the model's vocabulary (package vocab): its state
// variables, declared once with the rule for when each is present, its
// actions and variants, and the cold-path forms of a state. Encode,
// Decode and the symmetry relabelling (encode.go, symmetry.go) are the
// hot paths and stay hand-written; spec/completeness_test.go walks this
// table to pin them.

// The presence rules of the optional state variables: every reader of
// the state (the ITF form, the text form, the encoding) asks these.

// HasLAFR: LAFR tracking (the GWQ proposal) adds b_lafr, clients' lafr
// and the lafr of add requests and fence responses.
func (p Params) HasLAFR() bool { return p.variant().GuaranteedWriteQuorum }

// HasChecked: a bookie that checks and stores an add in two steps records
// the adds checked and not yet stored (b_checked).
func (p Params) HasChecked() bool { return p.variant().SplitAddCheck }

// HasDeletion: ledger deletion adds meta_deleted, b_collected and
// b_volatile_fence.
func (p Params) HasDeletion() bool { return p.DeleteLedger }

// HasCheckpoints: DbLedgerStorage's checkpoints decide what a crash keeps
// (--checkpoints).
func (p Params) HasCheckpoints() bool { return p.Checkpoints }

// HasAutoRecovery: the Auditor and the ReplicationWorker run
// (--autorecovery): ur_missing and the worker's rw_ variables.
func (p Params) HasAutoRecovery() bool { return p.AutoRecovery }

// HasDecommission: an operator decommissions a bookie (--decommission):
// decom_bookie and decom_done.
func (p Params) HasDecommission() bool { return p.Decommission }

// HasHandles: whether a bookie holds a handle for the ledger matters
// (b_handle): to split-add-check, whose race needs an add that finds no
// handle, and to ledger deletion, whose fix (PR #4462) remembers a fence
// only through a loaded handle.
func (p Params) HasHandles() bool { return p.HasChecked() || p.HasDeletion() }

// FencesCanBeLost: a crash can lose a fence whose journal record is not
// yet durable (b_unflushed_fence). With no-sync every fence waits for the
// next fsync; with a synced or disabled journal a bookie that answers a
// fencing read without data (NoSuchEntry, no ledger, Unknown, an I/O
// error) does not wait for its fence record (ReadEntryProcessor), unless
// the variant makes every such reply wait (durable-fence-reply).
func (p Params) FencesCanBeLost() bool {
	return p.Crashes > 0 && (p.Journal == JournalNoSync || !p.variant().DurableFenceReply)
}

// variant is p's variant (a variant with no change if the name is
// unknown: Validate rejects such parameters before any model is built).
func (p Params) variant() *Variant {
	if v := lookupVariant(p.Variant); v != nil {
		return v
	}
	return &Variant{}
}

// stateVar is one state variable: its name, shape and presence, and its
// ITF encoder and decoder.
type stateVar struct {
	vocab.Var
	present func(p Params) bool // nil: always
	// since: traces of bkcheck 0.1 lack the variable; absent, it reads as
	// its initial value.
	since  bool
	itf    func(m *vocabModel, s *State) any
	decode func(d itfDec, v any, s *State)
}

func always(Params) bool { return true }

// stateVars are the model's variables in declaration order (the ITF
// trace's vars): the TLA+ spec's nine, then the extensions'.
var stateVars = []stateVar{
	{Var: vocab.Var{Name: "messages", Shape: vocab.Messages, Doc: "every message sent, with its delivery count (1 in flight, 0 processed, -1 lost)"},
		itf: (*vocabModel).messagesITF, decode: func(d itfDec, v any, s *State) { d.messages(v, s) }},
	{Var: vocab.Var{Name: "meta_status", Doc: "the ledger's status in the metadata store"},
		itf:    func(_ *vocabModel, s *State) any { return statusITF[s.MetaStatus] },
		decode: func(d itfDec, v any, s *State) { s.MetaStatus = vocab.Lookup(d.Decoder, statusITF, d.Str(v)) }},
	{Var: vocab.Var{Name: "meta_fragments", Shape: vocab.Sequence, Doc: "the ledger's fragments in the metadata store"},
		itf:    func(m *vocabModel, s *State) any { return m.fragmentsITF(s.MetaFragmentList()) },
		decode: func(d itfDec, v any, s *State) { s.NumMetaFragments = d.fragments(v, s.MetaFragments[:]) }},
	{Var: vocab.Var{Name: "meta_last_entry", Doc: "the last entry of the closed ledger (0 while open)"},
		itf:    func(_ *vocabModel, s *State) any { return int(s.MetaLastEntry) },
		decode: func(d itfDec, v any, s *State) { s.MetaLastEntry = d.Int(v, 0, MaxEntries) }},
	{Var: vocab.Var{Name: "meta_version", Doc: "the metadata's version (compare-and-set)"},
		itf:    func(_ *vocabModel, s *State) any { return int(s.MetaVersion) },
		decode: func(d itfDec, v any, s *State) { s.MetaVersion = d.Int(v, 0, 127) }},
	{Var: vocab.Var{Name: "b_entries", Shape: vocab.PerBookie, Doc: "the entries each bookie stores"},
		itf:    func(m *vocabModel, s *State) any { return m.entrySets(&s.BEntries) },
		decode: func(d itfDec, v any, s *State) { d.entrySets(v, &s.BEntries) }},
	{Var: vocab.Var{Name: "b_fenced", Shape: vocab.PerBookie, Doc: "whether each bookie has fenced the ledger"},
		itf: func(m *vocabModel, s *State) any { return m.perBookie(func(b int) any { return s.BFenced.Has(b) }) },
		decode: func(d itfDec, v any, s *State) {
			for _, kv := range d.perBookie(v) {
				if b := d.bookie(kv[0]); d.Bool(kv[1]) {
					s.BFenced |= 1 << uint(b)
				}
			}
		}},
	{Var: vocab.Var{Name: "b_lac", Shape: vocab.PerBookie, Doc: "each bookie's LAC (the highest it was told)"},
		itf:    func(m *vocabModel, s *State) any { return m.perBookie(func(b int) any { return int(s.BLAC[b]) }) },
		decode: func(d itfDec, v any, s *State) { d.perBookieInts(v, &s.BLAC) }},
	{Var: vocab.Var{Name: "clients", Shape: vocab.PerClient, Doc: "each client's record: the writer's or a recovery client's view of the ledger"},
		itf: (*vocabModel).clientsITF, decode: func(d itfDec, v any, s *State) { d.clients(v, s) }},
	{Var: vocab.Var{Name: "b_lafr", Shape: vocab.PerBookie, Doc: "each bookie's LAFR (last add fully replicated)", When: "variants with LAFR tracking (gwq)"}, present: Params.HasLAFR,
		itf:    func(m *vocabModel, s *State) any { return m.perBookie(func(b int) any { return int(s.BLAFR[b]) }) },
		decode: func(d itfDec, v any, s *State) { d.perBookieInts(v, &s.BLAFR) }},
	faultSet("b_down", "the bookies down: crashed, wiped, or never started", func(s *State) *Bookies { return &s.BDown }, false),
	faultSet("b_wiped", "the bookies down with a wiped disk (cookie validation keeps them down)", func(s *State) *Bookies { return &s.BWiped }, true),
	faultSet("b_read_only", "the bookies that turned read-only", func(s *State) *Bookies { return &s.BReadOnly }, false),
	faultSet("b_disk_full", "the read-only bookies whose disks are below the high-priority threshold", func(s *State) *Bookies { return &s.BDiskFull }, true),
	faultSet("b_limbo", "the bookies in limbo after the data-integrity check", func(s *State) *Bookies { return &s.BLimbo }, false),
	{Var: vocab.Var{Name: "b_stale_registration", Shape: vocab.BookieSet, Doc: "the bookies down whose ZooKeeper registration has not expired yet: the clients still see them writable, and placement can choose them", When: "--registration-expiry"},
		present: func(p Params) bool { return p.RegistrationExpiry }, since: true,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.BStale) },
		decode: func(d itfDec, v any, s *State) { s.BStale = d.bookies(v) }},
	{Var: vocab.Var{Name: "faults_used", Doc: "how much of each fault budget is used", When: "any fault"}, present: Params.Faulty,
		itf: (*vocabModel).faultsUsedITF, decode: func(d itfDec, v any, s *State) { d.faultsUsed(v, s) }},
	{Var: vocab.Var{Name: "b_check_pending", Shape: vocab.BookieSet, Doc: "the bookies whose pre-boot data-integrity check, started at a restart after an unclean shutdown, has not run yet (the bookie serves meanwhile)", When: "--data-integrity, --crashes, --journal disabled"}, present: Params.DeferredCheck, since: true,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.BCheckPending) },
		decode: func(d itfDec, v any, s *State) { s.BCheckPending = d.bookies(v) }},
	{Var: vocab.Var{Name: "b_unflushed", Shape: vocab.PerBookie, Doc: "the entries each bookie acknowledged and has not yet made durable", When: "--journal no-sync or disabled"}, present: Params.LossyJournal,
		itf:    func(m *vocabModel, s *State) any { return m.entrySets(&s.BUnflushed) },
		decode: func(d itfDec, v any, s *State) { d.entrySets(v, &s.BUnflushed) }},
	{Var: vocab.Var{Name: "b_durable_lac", Shape: vocab.PerBookie, Doc: "each bookie's LAC as of its last journal flush", When: "--journal no-sync or disabled"}, present: Params.LossyJournal,
		itf: func(m *vocabModel, s *State) any {
			return m.perBookie(func(b int) any { return int(s.BDurableLAC[b]) })
		},
		decode: func(d itfDec, v any, s *State) { d.perBookieInts(v, &s.BDurableLAC) }},
	{Var: vocab.Var{Name: "b_unflushed_fence", Shape: vocab.BookieSet, Doc: "the bookies whose fence record is not yet durable in their journal", When: "--crashes (with a synced or disabled journal: fences answered without data)"}, present: Params.FencesCanBeLost, since: true,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.BUnflushedFence) },
		decode: func(d itfDec, v any, s *State) { s.BUnflushedFence = d.bookies(v) }},
	{Var: vocab.Var{Name: "b_index_key", Shape: vocab.BookieSet, Doc: "the bookies whose ledger index holds the ledger durably (its master key), as of their last effective checkpoint", When: "--checkpoints"}, present: Params.HasCheckpoints, since: true,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.BIndexKey) },
		decode: func(d itfDec, v any, s *State) { s.BIndexKey = d.bookies(v) }},
	{Var: vocab.Var{Name: "b_index_fenced", Shape: vocab.BookieSet, Doc: "the bookies whose ledger index holds the fenced flag durably", When: "--checkpoints"}, present: Params.HasCheckpoints, since: true,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.BIndexFenced) },
		decode: func(d itfDec, v any, s *State) { s.BIndexFenced = d.bookies(v) }},
	{Var: vocab.Var{Name: "b_key_record", Shape: vocab.BookieSet, Doc: "the bookies whose journal holds a master-key record of the ledger after its log mark", When: "--checkpoints"}, present: Params.HasCheckpoints, since: true,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.BKeyRecord) },
		decode: func(d itfDec, v any, s *State) { s.BKeyRecord = d.bookies(v) }},
	{Var: vocab.Var{Name: "b_fence_record", Shape: vocab.BookieSet, Doc: "the bookies whose journal holds a durable fence record of the ledger after its log mark", When: "--checkpoints"}, present: Params.HasCheckpoints, since: true,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.BFenceRecord) },
		decode: func(d itfDec, v any, s *State) { s.BFenceRecord = d.bookies(v) }},
	{Var: vocab.Var{Name: "b_cache_dirty", Shape: vocab.BookieSet, Doc: "the bookies whose write cache holds entries of the ledger not yet flushed by a checkpoint", When: "--checkpoints"}, present: Params.HasCheckpoints, since: true,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.BCacheDirty) },
		decode: func(d itfDec, v any, s *State) { s.BCacheDirty = d.bookies(v) }},
	{Var: vocab.Var{Name: "ur_missing", Shape: vocab.BookieSet, Doc: "the ledger's under-replication mark (its urL znode): the missing bookies it was marked with; empty when not marked", When: "--autorecovery"}, present: Params.HasAutoRecovery, since: true,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.URMissing) },
		decode: func(d itfDec, v any, s *State) { s.URMissing = d.bookies(v) }},
	{Var: vocab.Var{Name: "rw_phase", Doc: "the ReplicationWorker: idle, locked (holds the ledger's lock), copied (a fragment copied, its ensemble not yet updated), deferred (lock held until the grace period ends) or recovering (its admin client recovers the ledger)", When: "--autorecovery"}, present: Params.HasAutoRecovery, since: true,
		itf:    func(_ *vocabModel, s *State) any { return rwPhaseNames[s.RWPhase] },
		decode: func(d itfDec, v any, s *State) { s.RWPhase = vocab.Lookup(d.Decoder, rwPhaseNames, d.Str(v)) }},
	{Var: vocab.Var{Name: "rw_tried", Doc: "the fragments (by position in meta_fragments, from 1) the worker's current rereplicate run has tried", When: "--autorecovery"}, present: Params.HasAutoRecovery, since: true,
		itf:    func(_ *vocabModel, s *State) any { return triedITF(s.RWTried) },
		decode: func(d itfDec, v any, s *State) { s.RWTried = d.tried(v) }},
	{Var: vocab.Var{Name: "rw_fragment", Doc: "the first entry of the fragment the worker copied and has not yet swapped into the metadata (0: none)", When: "--autorecovery"}, present: Params.HasAutoRecovery, since: true,
		itf:    func(_ *vocabModel, s *State) any { return int(s.RWFirst) },
		decode: func(d itfDec, v any, s *State) { s.RWFirst = d.Int(v, 0, MaxEntries+1) }},
	{Var: vocab.Var{Name: "rw_replacements", Doc: "which new bookie replaces which old one in that fragment (the copy's oldBookie2NewBookie)", When: "--autorecovery"}, present: Params.HasAutoRecovery, since: true,
		itf:    func(m *vocabModel, s *State) any { return m.mappingITF(s.RWMap) },
		decode: func(d itfDec, v any, s *State) { s.RWMap = d.mapping(v) }},
	{Var: vocab.Var{Name: "rw_unreadable", Doc: "the worker's unableToReadEntriesForReplication for the ledger: Nil when it holds no set, else the entries in it (a set stays once made, emptied as entries are read)", When: "--autorecovery"}, present: Params.HasAutoRecovery, since: true,
		itf:    func(_ *vocabModel, s *State) any { return unreadableITF(s.RWCache) },
		decode: func(d itfDec, v any, s *State) { s.RWCache = d.unreadable(v) }},
	{Var: vocab.Var{Name: "decom_bookie", Shape: vocab.BookieSet, Doc: "the bookie an operator's decommissionbookie waits on (empty: none started)", When: "--decommission"}, present: Params.HasDecommission, since: true,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.DecomBookie) },
		decode: func(d itfDec, v any, s *State) { s.DecomBookie = d.bookies(v) }},
	{Var: vocab.Var{Name: "decom_done", Doc: "whether decommissionbookie has returned: no segment of the ledger that stores entries names the bookie", When: "--decommission"}, present: Params.HasDecommission, since: true,
		itf:    func(_ *vocabModel, s *State) any { return s.DecomDone },
		decode: func(d itfDec, v any, s *State) { s.DecomDone = d.Bool(v) }},
	{Var: vocab.Var{Name: "meta_deleted", Doc: "whether the ledger's metadata is deleted", When: "--delete-ledger"}, present: Params.HasDeletion,
		itf:    func(_ *vocabModel, s *State) any { return s.MetaDeleted },
		decode: func(d itfDec, v any, s *State) { s.MetaDeleted = d.Bool(v) }},
	{Var: vocab.Var{Name: "b_collected", Shape: vocab.BookieSet, Doc: "the bookies that garbage-collected the deleted ledger", When: "--delete-ledger"}, present: Params.HasDeletion,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.BCollected) },
		decode: func(d itfDec, v any, s *State) { s.BCollected = d.bookies(v) }},
	{Var: vocab.Var{Name: "b_volatile_fence", Shape: vocab.BookieSet, Doc: "the bookies whose fence of the deleted ledger is only in memory", When: "--delete-ledger"}, present: Params.HasDeletion,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.BVolatileFence) },
		decode: func(d itfDec, v any, s *State) { s.BVolatileFence = d.bookies(v) }},
	{Var: vocab.Var{Name: "b_handle", Shape: vocab.BookieSet, Doc: "the bookies holding a handle for the ledger in memory (created by the first request since the bookie started; gone with a crash or garbage collection)", When: "--variant split-add-check or --delete-ledger"}, present: Params.HasHandles, since: true,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(s.BHandle) },
		decode: func(d itfDec, v any, s *State) { s.BHandle = d.bookies(v) }},
	{Var: vocab.Var{Name: "b_checked", Shape: vocab.PerBookie, Doc: "the normal adds each bookie found not fenced and has not stored yet", When: "variants that check and store an add in two steps (split-add-check)"}, present: Params.HasChecked,
		itf:    func(m *vocabModel, s *State) any { return m.entrySets(&s.BChecked) },
		decode: func(d itfDec, v any, s *State) { d.entrySets(v, &s.BChecked) }},
}

// faultSet is a bookie-set variable present with any fault. Traces of
// bkcheck 0.1 lack the variables marked since: they read as empty.
func faultSet(name, doc string, field func(*State) *Bookies, since bool) stateVar {
	return stateVar{Var: vocab.Var{Name: name, Shape: vocab.BookieSet, Doc: doc, When: "any fault"}, present: Params.Faulty,
		since:  since,
		itf:    func(m *vocabModel, s *State) any { return m.bookieSet(*field(s)) },
		decode: func(d itfDec, v any, s *State) { *field(s) = d.bookies(v) }}
}

func init() {
	for i := range stateVars {
		if stateVars[i].present == nil {
			stateVars[i].present = always
			stateVars[i].When = "always"
		}
	}
}

// Descriptor is the current model's vocabulary: its state variables,
// actions and variants. (Its invariants are package invariants'; package
// check joins them.)
var Descriptor = func() *vocab.Descriptor {
	d := &vocab.Descriptor{Name: "current", Doc: "BookKeeperProtocol.tla with bkcheck's extensions (faults, striping, variants)"}
	for _, v := range stateVars {
		d.Vars = append(d.Vars, v.Var)
	}
	for k := ActionKind(1); k < NumActionKinds; k++ {
		d.Actions = append(d.Actions, actionInfo(k))
	}
	for _, v := range Variants {
		d.Variants = append(d.Variants, vocab.Variant{Name: v.Name, Description: v.Description, Source: v.Source, Issue: v.Issue})
	}
	return d
}()

// Vocabulary is the model with parameters p as the cold paths see it (p
// valid, defaults filled in).
func Vocabulary(p Params) vocab.Model { return &vocabModel{P: p} }

type vocabModel struct{ P Params }

func (m *vocabModel) Descriptor() *vocab.Descriptor { return Descriptor }
func (m *vocabModel) Params() string                { return m.P.String() }

func (m *vocabModel) ParamsJSON() (json.RawMessage, error) {
	p := m.P
	p.EnsureDefaults()
	return ParamsSchema.EncodeJSON(&p)
}

func (m *vocabModel) Vars() []vocab.Var {
	var out []vocab.Var
	for _, v := range stateVars {
		if v.present(m.P) {
			out = append(out, v.Var)
		}
	}
	return out
}

func (m *vocabModel) Init() any { return m.P.Init() }

func (m *vocabModel) ActionString(a any) string { return a.(Action).String() }

func (m *vocabModel) ITF(state any) map[string]any {
	s := state.(State)
	out := map[string]any{}
	for _, v := range stateVars {
		if v.present(m.P) {
			out[v.Name] = v.itf(m, &s)
		}
	}
	return out
}

// VarITF implements vocab.Model; state may also be a *State.
func (m *vocabModel) VarITF(state any, name string) (any, bool) {
	s, ok := state.(*State)
	if !ok {
		st := state.(State)
		s = &st
	}
	for _, v := range stateVars {
		if v.Name == name && v.present(m.P) {
			return v.itf(m, s), true
		}
	}
	return nil, false
}

func (m *vocabModel) FromITF(d *vocab.Decoder, st map[string]any) any {
	dd := itfDec{Decoder: d, p: m.P}
	s := m.P.Init()
	for _, v := range stateVars {
		if !v.present(m.P) {
			continue
		}
		d.At(v.Name, func() {
			val, ok := st[v.Name]
			switch {
			case ok:
				v.decode(dd, val, &s)
			case !v.since:
				d.Fail("missing field %q", v.Name)
			}
		})
	}
	return s
}

func (m *vocabModel) ActionITF(action any) (string, map[string]any) {
	a := action.(Action)
	picks := map[string]any{}
	if a.Client >= 0 {
		picks["client"] = clientName(int(a.Client))
	}
	if a.Bookie >= 0 {
		picks["bookie"] = bookieName(int(a.Bookie))
	}
	if a.Entry > 0 {
		picks["entry"] = int(a.Entry)
	}
	picks["lost"] = m.bookieSet(a.Lost)
	return a.Kind.String(), picks
}

// renamedActions maps action names of older traces to today's.
var renamedActions = map[string]string{
	"BookieLosesData": "BookieRejoinsEmpty", // 0.1: --data-loss
}

func (m *vocabModel) ActionFromITF(d *vocab.Decoder, name string, picks map[string]any) any {
	dd := itfDec{Decoder: d, p: m.P}
	a := Action{Client: -1, Bookie: -1}
	if renamed, ok := renamedActions[name]; ok {
		name = renamed
	}
	k, ok := ActionKindByName(name)
	if !ok {
		d.Fail("unknown action %q", name)
	}
	a.Kind = k
	if c, ok := picks["client"]; ok {
		a.Client = int8(dd.client(c))
	}
	if b, ok := picks["bookie"]; ok {
		a.Bookie = int8(dd.bookie(b))
	}
	if e, ok := picks["entry"]; ok {
		a.Entry = d.Int(e, 1, MaxEntries+1)
	}
	if l, ok := picks["lost"]; ok {
		a.Lost = dd.bookies(l)
	}
	return a
}

func (m *vocabModel) Participants(last any) []vocab.Participant {
	s := last.(State)
	var out []vocab.Participant
	for c := 0; c < m.P.Clients; c++ {
		out = append(out, vocab.Participant{ID: clientName(c), Label: fmt.Sprintf("%s (%s)", clientName(c), clientRole(&s.Clients[c]))})
	}
	out = append(out, vocab.Participant{ID: "meta", Label: "metadata store"})
	for b := 0; b < m.P.Bookies; b++ {
		out = append(out, vocab.Participant{ID: bookieName(b), Label: bookieName(b)})
	}
	return out
}

// clientRole names the part a client played by the end of a trace.
func clientRole(c *Client) string {
	switch {
	case c.RecoveryPhase != NotStarted:
		return "recovery client"
	case c.Status != StatusNil:
		return "writer"
	}
	return "client"
}

// VarITF is the ITF value of the variable name in s, nil if the variable
// is not present under p (the CEL view reads variables it has no typed
// accessor for this way).
func (p Params) VarITF(s *State, name string) any {
	v, _ := (&vocabModel{P: p}).VarITF(s, name)
	return v
}

// VocabularyFromJSON is Vocabulary for the parameters a trace records:
// the schema's JSON (kebab-case keys), or the Go field names traces of
// bkcheck 0.1.0 used.
func VocabularyFromJSON(raw json.RawMessage) (vocab.Model, error) {
	var p Params
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, err
	}
	if _, legacy := keys["Bookies"]; legacy {
		var err error
		if p, err = DecodeLegacyParams(raw); err != nil {
			return nil, err
		}
	} else if err := ParamsSchema.DecodeJSON(raw, &p); err != nil {
		return nil, err
	}
	p.EnsureDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return Vocabulary(p), nil
}

// ParamsOf returns the parameters of a vocabulary of this model.
func ParamsOf(m vocab.Model) (Params, bool) {
	vm, ok := m.(*vocabModel)
	if !ok {
		return Params{}, false
	}
	return vm.P, true
}

// ResolveTrace finds this model for a trace that names it (a
// traces.Resolver for code that knows only this model; package check
// resolves every model).
func ResolveTrace(model string, params json.RawMessage) (vocab.Model, error) {
	if model != "" && model != Descriptor.Name {
		return nil, fmt.Errorf("a trace of model %q, not %q", model, Descriptor.Name)
	}
	return VocabularyFromJSON(params)
}
