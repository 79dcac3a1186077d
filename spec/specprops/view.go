package specprops

import (
	"fmt"
	"reflect"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/spec"
)

// The state view: what a property's expression sees. Its variables carry
// the names of the ITF trace's variables (traces/itf.go), its records the
// fields of the ITF records; TestViewMatchesITF keeps the two in step.
// Integers the TLA+ spec may set to Nil are -1 here (the constant Nil).

const maxFragments = len(spec.State{}.MetaFragments)

// Record types.
var (
	entryType = newRecordType("Entry", "an entry record [id, data]",
		&field{name: "id", t: types.IntType, doc: "the entry id (entries are numbered from 1)", get: func(r *rec) ref.Val { return intVal(int(r.e.ID)) }},
		&field{name: "data", t: types.IntType, doc: "its data: the writer writes entry e with data e; Nil (-1) in a NoSuchEntry read response",
			get: func(r *rec) ref.Val {
				if r.e.Data == 0 {
					return intVal(-1)
				}
				return intVal(int(r.e.Data))
			}},
	)
	fragmentType = newRecordType("Fragment", "a fragment (ledger segment) [id, ensemble, first_entry_id]",
		&field{name: "id", t: types.IntType, doc: "fragment number, from 1 (0 for fragment_of an entry no fragment holds)", get: func(r *rec) ref.Val { return intVal(int(r.fragment().ID)) }, read: fragmentRead},
		&field{name: "ensemble", t: types.NewListType(types.StringType), doc: "its bookies", get: func(r *rec) ref.Val { return bookieSet(r.fragment().Ensemble) }, read: fragmentRead},
		&field{name: "first_entry_id", t: types.IntType, doc: "the first entry it holds; it holds entries up to the next fragment's first minus one", get: func(r *rec) ref.Val { return intVal(int(r.fragment().First)) }, read: fragmentRead},
		&field{name: "layout", t: types.NewListType(types.StringType), doc: "with striping (E > Qw): the bookie at each ensemble position; empty otherwise",
			get: func(r *rec) ref.Val { return layoutList(r.v, r.fragment().Layout) }, read: fragmentRead},
	)
	pendingType = newRecordType("PendingAddOp", "a pending add op [entry, fragment_id, ensemble]",
		&field{name: "entry", t: entryType.t, doc: "the entry being added", get: func(r *rec) ref.Val { return entryVal(r.pending().Entry) }, read: pendingRead},
		&field{name: "fragment_id", t: types.IntType, doc: "the fragment it was sent in", get: func(r *rec) ref.Val { return intVal(int(r.pending().FragmentID)) }, read: pendingRead},
		&field{name: "ensemble", t: types.NewListType(types.StringType), doc: "the bookies it was sent to (its fragment's ensemble)", get: func(r *rec) ref.Val { return bookieSet(r.pending().Ensemble) }, read: pendingRead},
		&field{name: "layout", t: types.NewListType(types.StringType), doc: "with striping: the ensemble's positions", get: func(r *rec) ref.Val { return layoutList(r.v, r.pending().Layout) }, read: pendingRead},
	)
	messageType = newRecordType("Message", "a message record; fields a type does not have are 0, false or \"\" (has() tells)",
		msgField("type", types.StringType, "AddEntryRequestMessage, AddEntryResponseMessage, FenceRequestMessage, FenceResponseMessage, ReadRequestMessage or ReadResponseMessage", nil,
			func(f spec.MsgFields) ref.Val { return msgTypeStr[f.Type] }),
		msgField("bookie", types.StringType, "the bookie it goes to or comes from", nil, func(f spec.MsgFields) ref.Val { return bookieStrs[f.Bookie] }),
		msgField("cid", types.StringType, "the client it comes from or goes to", nil, func(f spec.MsgFields) ref.Val { return clientStrs[f.Cid] }),
		msgField("entry", entryType.t, "the entry (adds, add responses, read responses)", typesOf(spec.AddEntryRequest, spec.AddEntryResponse, spec.ReadResponse),
			func(f spec.MsgFields) ref.Val { return entryVal(f.Entry) }),
		msgField("entry_id", types.IntType, "the entry a read request asks for", typesOf(spec.ReadRequest), func(f spec.MsgFields) ref.Val { return intVal(int(f.Entry.ID)) }),
		msgField("lac", types.IntType, "the LAC an add request carries, or a fence response returns", typesOf(spec.AddEntryRequest, spec.FenceResponse), func(f spec.MsgFields) ref.Val { return intVal(int(f.LAC)) }),
		msgField("lafr", types.IntType, "gwq: the LAFR an add request carries or a fence response returns", typesOf(spec.AddEntryRequest, spec.FenceResponse), func(f spec.MsgFields) ref.Val { return intVal(int(f.LAFR)) }),
		msgField("recovery", types.BoolType, "an add (or its response) of the recovery client's write-back", typesOf(spec.AddEntryRequest, spec.AddEntryResponse), func(f spec.MsgFields) ref.Val { return boolVal(f.Recovery) }),
		msgField("success", types.BoolType, "an add response: stored (true) or rejected (fenced, read-only)", typesOf(spec.AddEntryResponse), func(f spec.MsgFields) ref.Val { return boolVal(f.Success) }),
		msgField("fence", types.BoolType, "a recovery read that fences", typesOf(spec.ReadRequest, spec.ReadResponse), func(f spec.MsgFields) ref.Val { return boolVal(f.Fence) }),
		msgField("code", types.StringType, "a read response: OK, NoSuchEntry or Unknown; an add response rejected by a read-only bookie: ReadOnly", typesOf(spec.ReadResponse),
			func(f spec.MsgFields) ref.Val { return codeStr[f.Code&3] }),
		&field{name: "count", t: types.IntType, doc: "messages only: 1 in flight (deliverable), 0 processed, -1 lost (seen later as a timeout)",
			get: func(r *rec) ref.Val { _, n := r.message(); return intVal(int(n)) }, set: func(r *rec) bool { return r.c == ownerMeta }, read: messageRead},
	)
	clientType = newRecordType("Client", "one client's record (the writer, or a client recovering the ledger)",
		&field{name: "id", t: types.StringType, doc: "c1, c2, ...", get: func(r *rec) ref.Val { return clientStrs[r.c] }},
		clientField("meta_version", types.IntType, "the metadata version it last read or wrote (Nil before)", func(c *spec.Client) ref.Val { return nilInt(c.MetaVersion) }),
		clientField("status", types.StringType, "Nil, STATUS_OPEN (writing), STATUS_IN_RECOVERY (recovering), STATUS_CLOSED, CLIENT_WITHDRAWN (gave up: fenced, or creation failed) or RECOVERY_ABORTED", func(c *spec.Client) ref.Val { return statusVal(c.Status) }),
		&field{name: "fragments", t: types.NewListType(fragmentType.t), doc: "its copy of the ledger's fragments",
			get: func(r *rec) ref.Val { return &r.v.clientFragLists[r.c] }, read: clientRead("fragments")},
		&field{name: "curr_fragment", t: fragmentType.t, doc: "Last(fragments); not set (has() is false) when there is none",
			get: func(r *rec) ref.Val {
				c := r.client()
				if c.NumFragments == 0 {
					return zeroFragment
				}
				return &r.v.clientFrags[r.c][c.NumFragments-1]
			}, set: func(r *rec) bool { return r.client().NumFragments > 0 }, read: clientRead("fragments")},
		&field{name: "pending_add_ops", t: types.NewListType(pendingType.t), doc: "adds sent and not yet acknowledged by Qa bookies (by all Qw with gwq)",
			get: func(r *rec) ref.Val { return &r.v.pendingLists[r.c] }, read: clientRead("pending_add_ops")},
		clientField("lap", types.IntType, "last add pushed: the last entry it sent", func(c *spec.Client) ref.Val { return intVal(int(c.LAP)) }),
		clientField("lac", types.IntType, "last add confirmed: every entry up to it has Qa acks; what the writer told its application", func(c *spec.Client) ref.Val { return intVal(int(c.LAC)) }),
		clientField("lafr", types.IntType, "gwq: last add fully replicated (every entry up to it is on Qw bookies)", func(c *spec.Client) ref.Val { return intVal(int(c.LAFR)) }),
		&field{name: "confirmed", t: types.NewMapType(types.IntType, types.NewListType(types.StringType)), doc: "entry id -> the bookies that acknowledged it",
			get: func(r *rec) ref.Val { return &r.v.confirmed[r.c] }},
		clientField("fenced", types.NewListType(types.StringType), "recovery: the bookies whose fencing response it received", func(c *spec.Client) ref.Val { return bookieSet(c.Fenced) }),
		clientField("recovery_ensemble", types.NewListType(types.StringType), "recovery: the bookies of the last fragment it reads from and writes back to", func(c *spec.Client) ref.Val { return bookieSet(c.RecoveryEns) }),
		&field{name: "recovery_layout", t: types.NewListType(types.StringType), doc: "with striping: the recovery ensemble's positions",
			get: func(r *rec) ref.Val { return layoutList(r.v, r.client().RecoveryLay) }, read: clientRead("recovery_ensemble")},
		clientField("curr_read_entry", types.IntType, "recovery: the entry being read (Nil when none)", func(c *spec.Client) ref.Val { return nilInt(c.CurrReadEntry) }),
		&field{name: "read_responses", t: types.NewListType(messageType.t), doc: "recovery: the read responses received for curr_read_entry",
			get: func(r *rec) ref.Val { return &r.v.respLists[r.c] }, read: clientRead("read_responses")},
		clientField("recovery_phase", types.IntType, "0 not started, 1 fencing, 2 reading and writing back", func(c *spec.Client) ref.Val { return intVal(int(c.RecoveryPhase)) }),
		clientField("last_recoverable_entry", types.IntType, "recovery: the last entry it will close the ledger at (Nil until known)", func(c *spec.Client) ref.Val { return nilInt(c.LastRecoverable) }),
	)
	faultsType = newRecordType("Faults", "how much of each fault budget is used",
		faultField("crashes", "bookie crashes", func(s *spec.State) int8 { return s.CrashesUsed }),
		faultField("disk_loss", "wiped disks", func(s *spec.State) int8 { return s.DiskLossUsed }),
		faultField("reformat", "re-formats", func(s *spec.State) int8 { return s.ReformatUsed }),
		faultField("read_only", "bookies turned read-only", func(s *spec.State) int8 { return s.ReadOnlyUsed }),
		faultField("disk_full", "bookies whose disks filled", func(s *spec.State) int8 { return s.DiskFullUsed }),
		faultField("corrupt_reads", "reads answered from a corrupt log", func(s *spec.State) int8 { return s.CorruptUsed }),
	)
	paramsType  = newParamsType()
	recordTypes = []*recordType{entryType, fragmentType, pendingType, messageType, clientType, faultsType, paramsType}
)

func fragmentRead(r *rec) string {
	switch r.c {
	case ownerNone:
		return ""
	case ownerMeta:
		return "meta_fragments"
	}
	return fmt.Sprintf("clients[%s].fragments", clientName(r.c))
}

func pendingRead(r *rec) string {
	return fmt.Sprintf("clients[%s].pending_add_ops", clientName(r.c))
}

func messageRead(r *rec) string {
	if r.c == ownerMeta {
		k, _ := r.message()
		return "messages[" + spec.FormatMessage(k) + "]"
	}
	return fmt.Sprintf("clients[%s].read_responses", clientName(r.c))
}

func clientRead(name string) func(r *rec) string {
	return func(r *rec) string { return fmt.Sprintf("clients[%s].%s", clientName(r.c), name) }
}

func clientField(name string, t *types.Type, doc string, get func(c *spec.Client) ref.Val) *field {
	return &field{name: name, t: t, doc: doc, get: func(r *rec) ref.Val { return get(r.client()) }, read: clientRead(name)}
}

func faultField(name, doc string, get func(s *spec.State) int8) *field {
	return &field{name: name, t: types.IntType, doc: doc, get: func(r *rec) ref.Val { return intVal(int(get(r.v.s))) },
		read: func(*rec) string { return "faults_used" }}
}

func typesOf(ts ...spec.MsgType) map[spec.MsgType]bool {
	m := map[spec.MsgType]bool{}
	for _, t := range ts {
		m[t] = true
	}
	return m
}

func msgField(name string, t *types.Type, doc string, has map[spec.MsgType]bool, get func(f spec.MsgFields) ref.Val) *field {
	f := &field{name: name, t: t, doc: doc, read: messageRead,
		get: func(r *rec) ref.Val { k, _ := r.message(); return get(k.Fields()) }}
	if has != nil {
		f.set = func(r *rec) bool {
			k, _ := r.message()
			ok := has[k.Type()]
			if name == "code" && k.Type() == spec.AddEntryResponse {
				ok = k.Fields().Code == spec.CodeReadOnly
			}
			if name == "lafr" || name == "lac" {
				gwq := r.v.p.HasLAFR()
				switch {
				case name == "lafr":
					ok = ok && gwq
				case k.Type() == spec.FenceResponse:
					ok = !gwq
				}
			}
			return ok
		}
	}
	return f
}

// layoutList is a layout as a list of bookie names (empty without
// striping). Layouts are rare (striping only) and allocate.
func layoutList(v *view, l spec.Layout) ref.Val {
	if v == nil || !v.p.Ordered() {
		return emptyList
	}
	vals := make([]ref.Val, v.p.Ensemble)
	for i := range vals {
		vals[i] = bookieStrs[l.At(i)]
	}
	return &list{kind: lkVals, vals: vals}
}

// newParamsType declares params: one field per parameter setting (named
// as the setting, '-' as '_'), plus bookie_ids and client_ids, TLA+'s
// Bookies and Clients.
func newParamsType() *recordType {
	var fields []*field
	pt := reflect.TypeFor[spec.Params]()
	for _, sf := range spec.ParamsSchema.Fields() {
		gf, _ := pt.FieldByName(sf.GoName)
		var t *types.Type
		switch {
		case sf.IsBool():
			t = types.BoolType
		case sf.IsList():
			t = types.NewListType(types.StringType)
		case gf.Type.Kind() == reflect.String:
			t = types.StringType
		default:
			t = types.IntType
		}
		idx := gf.Index
		fields = append(fields, &field{name: properties.ParamName(sf.Name), t: t, doc: sf.Help, get: func(r *rec) ref.Val {
			return paramValue(reflect.ValueOf(r.v.p).FieldByIndex(idx))
		}})
	}
	fields = append(fields,
		&field{name: "bookie_ids", t: types.NewListType(types.StringType), doc: "the bookies' names b1..bN (TLA+'s Bookies)",
			get: func(r *rec) ref.Val { return bookieSet(spec.Bookies(1<<uint(r.v.p.Bookies) - 1)) }},
		&field{name: "client_ids", t: types.NewListType(types.StringType), doc: "the clients' names c1..cN (TLA+'s Clients)",
			get: func(r *rec) ref.Val { return &list{kind: lkVals, vals: clientStrs[:r.v.p.Clients]} }},
	)
	rt := newRecordType("Params", "the parameters of the run (defaults filled in)", fields...)
	// Parameters do not change: a view computes their values once.
	for i, f := range rt.fields {
		i, get := i, f.get
		f.get = func(r *rec) ref.Val {
			if r.v.paramVals != nil {
				return r.v.paramVals[i]
			}
			return get(r)
		}
	}
	return rt
}

func paramValue(v reflect.Value) ref.Val {
	switch v.Kind() {
	case reflect.Bool:
		return boolVal(v.Bool())
	case reflect.String:
		return types.String(v.String())
	case reflect.Slice:
		var vals []ref.Val
		for i := 0; i < v.Len(); i++ {
			vals = append(vals, types.String(v.Index(i).String()))
		}
		return &list{kind: lkVals, vals: vals}
	}
	return intVal(int(v.Int()))
}

// variable is one top-level name of the view.
type variable struct {
	name string
	t    *types.Type
	doc  string
	// get reads it; read names the state-table row it reads ("" none).
	get  func(v *view) ref.Val
	read string
}

var bookieList = types.NewListType(types.StringType)

// variables are the view's top-level names: the typed ones, then those
// read through the model's ITF form (withITFVariables).
var variables = withITFVariables(typedVariables)

// typedVariables are the variables with a typed accessor, in the ITF
// trace's order, then the constants.
var typedVariables = []variable{
	{"messages", types.NewListType(messageType.t), "every message ever sent, in a fixed order, each with its count (the spec's message history)", func(v *view) ref.Val { return &v.msgList }, ""},
	{"meta_status", types.StringType, "the ledger's status in the metadata store: Nil (not created), STATUS_OPEN, STATUS_IN_RECOVERY or STATUS_CLOSED", func(v *view) ref.Val { return statusVal(v.s.MetaStatus) }, "meta_status"},
	{"meta_fragments", types.NewListType(fragmentType.t), "the ledger's fragments as the metadata store has them", func(v *view) ref.Val { return &v.metaFragList }, "meta_fragments"},
	{"meta_last_entry", types.IntType, "the last entry of a closed ledger (0 until closed)", func(v *view) ref.Val { return intVal(int(v.s.MetaLastEntry)) }, "meta_last_entry"},
	{"meta_version", types.IntType, "the metadata version (compare-and-set counter; 0 before creation)", func(v *view) ref.Val { return intVal(int(v.s.MetaVersion)) }, "meta_version"},
	{"b_entries", types.NewMapType(types.StringType, types.NewListType(entryType.t)), "bookie -> the entries it stores (its journal)", func(v *view) ref.Val { return &v.maps[mkEntries] }, ""},
	{"b_fenced", types.NewMapType(types.StringType, types.BoolType), "bookie -> whether it has fenced the ledger (rejects normal adds)", func(v *view) ref.Val { return &v.maps[mkFenced] }, ""},
	{"b_lac", types.NewMapType(types.StringType, types.IntType), "bookie -> the LAC it learnt from add requests", func(v *view) ref.Val { return &v.maps[mkLAC] }, ""},
	{"clients", types.NewMapType(types.StringType, clientType.t), "client id (c1, ...) -> its record", func(v *view) ref.Val { return &v.maps[mkClients] }, ""},
	{"b_lafr", types.NewMapType(types.StringType, types.IntType), "gwq: bookie -> the LAFR it learnt", func(v *view) ref.Val { return &v.maps[mkLAFR] }, ""},
	{"b_down", bookieList, "faults: bookies down (crashed, or kept down by a wiped disk)", func(v *view) ref.Val { return bookieSet(v.s.BDown) }, "b_down"},
	{"b_wiped", bookieList, "faults: bookies down with a wiped disk, until re-formatted", func(v *view) ref.Val { return bookieSet(v.s.BWiped) }, "b_wiped"},
	{"b_read_only", bookieList, "faults: read-only bookies (reject normal adds)", func(v *view) ref.Val { return bookieSet(v.s.BReadOnly) }, "b_read_only"},
	{"b_disk_full", bookieList, "faults: bookies whose disks are full (reject recovery adds too)", func(v *view) ref.Val { return bookieSet(v.s.BDiskFull) }, "b_disk_full"},
	{"b_limbo", bookieList, "faults: bookies in limbo after the data-integrity check (answer Unknown for what they lack)", func(v *view) ref.Val { return bookieSet(v.s.BLimbo) }, "b_limbo"},
	{"faults_used", faultsType.t, "faults: how much of each budget is used", func(v *view) ref.Val { return &v.faults }, ""},
	{"b_unflushed", types.NewMapType(types.StringType, types.NewListType(entryType.t)), "lossy journal: bookie -> entries acknowledged but not yet durable", func(v *view) ref.Val { return &v.maps[mkUnflushed] }, ""},
	{"b_durable_lac", types.NewMapType(types.StringType, types.IntType), "lossy journal: bookie -> its LAC as of its last flush", func(v *view) ref.Val { return &v.maps[mkDurable] }, ""},
	{"b_unflushed_fence", bookieList, "no-sync journal: bookies fenced whose fence is not yet durable", func(v *view) ref.Val { return bookieSet(v.s.BUnflushedFence) }, "b_unflushed_fence"},
	{"meta_deleted", types.BoolType, "--delete-ledger: whether the ledger's metadata was deleted", func(v *view) ref.Val { return boolVal(v.s.MetaDeleted) }, "meta_deleted"},
	{"b_collected", bookieList, "--delete-ledger: bookies whose garbage collector removed the ledger (entries and fence)", func(v *view) ref.Val { return bookieSet(v.s.BCollected) }, "b_collected"},
	{"b_volatile_fence", bookieList, "--delete-ledger: bookies whose fence is only in memory (lost when the ledger is collected)", func(v *view) ref.Val { return bookieSet(v.s.BVolatileFence) }, "b_volatile_fence"},
	{"b_checked", types.NewMapType(types.StringType, types.NewListType(entryType.t)), "split-add-check: bookie -> entries it accepted but has not yet written", func(v *view) ref.Val { return &v.maps[mkChecked] }, ""},
	{"ur_missing", bookieList, "--autorecovery: the ledger's under-replication mark, the missing bookies it was marked with (empty: not marked)", func(v *view) ref.Val { return bookieSet(v.s.URMissing) }, "ur_missing"},
	{"decom_bookie", bookieList, "--decommission: the bookie an operator's decommissionbookie waits on (empty: none started)", func(v *view) ref.Val { return bookieSet(v.s.DecomBookie) }, "decom_bookie"},
	{"decom_done", types.BoolType, "--decommission: whether decommissionbookie has returned", func(v *view) ref.Val { return boolVal(v.s.DecomDone) }, "decom_done"},
	// Constants.
	{"params", paramsType.t, "the parameters of the run (params.write_quorum, ...)", func(v *view) ref.Val { return &v.paramsRec }, ""},
	{"Nil", types.IntType, "-1: the value of an integer the spec sets to Nil", func(*view) ref.Val { return intVal(-1) }, ""},
}

// The model's variables this view has no typed accessor for are read
// through the model's own ITF form (spec.Params.VarITF, converted as the
// ITF view converts, type dyn): a variable a model adds is in CEL at
// once, and gets a typed, allocation-free accessor above when properties
// read it often.
func withITFVariables(typedVars []variable) []variable {
	out := append([]variable(nil), typedVars...)
	typed := map[string]bool{}
	for _, vr := range typedVars {
		typed[vr.name] = true
	}
	for _, d := range spec.Descriptor.Vars {
		if typed[d.Name] {
			continue
		}
		name := d.Name
		out = append(out, variable{name, types.DynType, d.Doc + " (" + d.When + "; read through the model's ITF form)",
			func(v *view) ref.Val {
				val, err := properties.ITFValue(v.p.VarITF(v.s, name))
				if err != nil {
					return types.NewErr("%s: %v", name, err)
				}
				return val
			}, name})
	}
	return out
}

var variableIndex = func() map[string]int {
	m := map[string]int{}
	for i, vr := range variables {
		m[vr.name] = i
	}
	return m
}()

// view is one goroutine's window on a state: CEL values that read it in
// place. Point it at a state with load; nothing is copied.
type view struct {
	p   spec.Params
	s   *spec.State
	rec *properties.Recorder // non-nil while explaining: reads are noted

	clients         [spec.MaxClients]rec
	metaFrags       [maxFragments]rec
	clientFrags     [spec.MaxClients][maxFragments]rec
	pending         [spec.MaxClients][spec.MaxEntries]rec
	resps           [spec.MaxClients][spec.MaxBookies]rec
	msgs            []rec
	faults          rec
	paramsRec       rec
	paramVals       []ref.Val // by params field
	entries         [spec.MaxBookies]list
	unflushed       [spec.MaxBookies]list
	checked         [spec.MaxBookies]list
	metaFragList    list
	clientFragLists [spec.MaxClients]list
	pendingLists    [spec.MaxClients]list
	respLists       [spec.MaxClients]list
	msgList         list
	maps            [mkConfirmed]mapv
	confirmed       [spec.MaxClients]mapv
}

func newView(p spec.Params) *view {
	v := &view{p: p}
	v.paramsRec = rec{rt: paramsType, v: v}
	vals := make([]ref.Val, len(paramsType.fields))
	for i, f := range paramsType.fields {
		vals[i] = f.get(&v.paramsRec)
	}
	v.paramVals = vals
	v.faults = rec{rt: faultsType, v: v}
	for c := range v.clients {
		v.clients[c] = rec{rt: clientType, v: v, c: c}
		for i := range v.clientFrags[c] {
			v.clientFrags[c][i] = rec{rt: fragmentType, v: v, c: c, i: i}
		}
		for i := range v.pending[c] {
			v.pending[c][i] = rec{rt: pendingType, v: v, c: c, i: i}
		}
		for i := range v.resps[c] {
			v.resps[c][i] = rec{rt: messageType, v: v, c: c, i: i}
		}
		v.clientFragLists[c] = list{kind: lkFragments, v: v, c: c}
		v.pendingLists[c] = list{kind: lkPending, v: v, c: c}
		v.respLists[c] = list{kind: lkResponses, v: v, c: c}
		v.confirmed[c] = mapv{kind: mkConfirmed, v: v, c: c}
	}
	for i := range v.metaFrags {
		v.metaFrags[i] = rec{rt: fragmentType, v: v, c: ownerMeta, i: i}
	}
	for b := range v.entries {
		v.entries[b] = list{kind: lkEntries, v: v, c: b}
		v.unflushed[b] = list{kind: lkEntries, v: v, c: b, i: 1}
		v.checked[b] = list{kind: lkEntries, v: v, c: b, i: 2}
	}
	v.metaFragList = list{kind: lkFragments, v: v, c: ownerMeta}
	v.msgList = list{kind: lkMessages, v: v}
	for k := range v.maps {
		v.maps[k] = mapv{kind: mapKind(k), v: v}
	}
	return v
}

// load points the view at s (which must stay unchanged while it is read).
func (v *view) load(s *spec.State) {
	v.s = s
	if n := len(s.Msgs); n > len(v.msgs) {
		v.msgs = make([]rec, n+16)
		for i := range v.msgs {
			v.msgs[i] = rec{rt: messageType, v: v, c: ownerMeta, i: i}
		}
	}
}

func (v *view) message(i int) ref.Val { return &v.msgs[i] }

// ResolveName implements interpreter.Activation: the top-level names.
func (v *view) ResolveName(name string) (any, bool) {
	i, ok := variableIndex[name]
	if !ok {
		return nil, false
	}
	vr := &variables[i]
	if v.rec != nil && vr.read != "" {
		v.rec.Note(vr.read)
	}
	return vr.get(v), true
}

// Parent implements interpreter.Activation.
func (v *view) Parent() interpreter.Activation { return nil }

// ViewVariable describes a top-level name of the view, for documentation.
type ViewVariable struct {
	Name, Type, Doc string
}

// ViewRecord describes a record type of the view and its fields.
type ViewRecord struct {
	Name, Doc string
	Fields    []ViewVariable
}

// View describes the state view: its top-level names and record types, as
// docs/properties.md lists them.
func View() ([]ViewVariable, []ViewRecord) {
	var vars []ViewVariable
	for _, vr := range variables {
		vars = append(vars, ViewVariable{vr.name, properties.TypeName(vr.t), vr.doc})
	}
	var recs []ViewRecord
	for _, rt := range recordTypes {
		r := ViewRecord{Name: rt.name, Doc: rt.doc}
		for _, f := range rt.fields {
			r.Fields = append(r.Fields, ViewVariable{f.name, properties.TypeName(f.t), f.doc})
		}
		recs = append(recs, r)
	}
	return vars, recs
}
