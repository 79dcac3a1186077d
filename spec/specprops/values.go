package specprops

import (
	"fmt"
	"reflect"
	"strconv"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/spec"
)

// This file holds the CEL values of the state view: records (a client, a
// fragment, an entry, a message, ...), lists and maps. They read the
// state in place when CEL asks, and every value an evaluation can meet is
// either preallocated in the view or taken from a global table, so that
// evaluation does not allocate (BenchmarkBuiltins reports it).

// The view's names of the enumerated values, declared once: the values
// hold them, and the enumerated fields' checks (enums.go) list them.
var (
	statusNames = map[spec.Status]string{
		spec.StatusNil: "Nil", spec.StatusOpen: "STATUS_OPEN", spec.StatusInRecovery: "STATUS_IN_RECOVERY",
		spec.StatusClosed: "STATUS_CLOSED", spec.ClientWithdrawn: "CLIENT_WITHDRAWN", spec.RecoveryAborted: "RECOVERY_ABORTED",
	}
	msgTypeNames = map[spec.MsgType]string{
		spec.AddEntryRequest: "AddEntryRequestMessage", spec.AddEntryResponse: "AddEntryResponseMessage",
		spec.FenceRequest: "FenceRequestMessage", spec.FenceResponse: "FenceResponseMessage",
		spec.ReadRequest: "ReadRequestMessage", spec.ReadResponse: "ReadResponseMessage",
	}
	codeNames = map[uint8]string{spec.CodeOK: "OK", spec.CodeNoSuchEntry: "NoSuchEntry", spec.CodeUnknown: "Unknown", spec.CodeReadOnly: "ReadOnly"}
)

// Preallocated scalars (small ints: properties.Int).
var (
	bookieStrs [spec.MaxBookies]ref.Val
	clientStrs [spec.MaxClients]ref.Val
	statusList []ref.Val // by Status value
	msgTypeStr [8]ref.Val
	codeStr    [4]ref.Val
)

func init() {
	for b := range bookieStrs {
		bookieStrs[b] = types.String(bookieName(b))
	}
	for c := range clientStrs {
		clientStrs[c] = types.String(clientName(c))
	}
	for st, name := range statusNames {
		for len(statusList) <= int(st) {
			statusList = append(statusList, nil)
		}
		statusList[st] = types.String(name)
	}
	for t, name := range msgTypeNames {
		msgTypeStr[t] = types.String(name)
	}
	for c, name := range codeNames {
		codeStr[c] = types.String(name)
	}
	for bits := range bookieSets {
		bookieSets[bits] = &list{kind: lkBookies, bits: uint64(bits)}
	}
	for id := range entryRecs {
		for d := range entryRecs[id] {
			entryRecs[id][d] = &rec{rt: entryType, e: spec.Entry{ID: int8(id), Data: int8(d)}}
		}
	}
	zeroFragment = &rec{rt: fragmentType, c: ownerNone}
}

func bookieName(b int) string { return "b" + strconv.Itoa(b+1) }
func clientName(c int) string { return "c" + strconv.Itoa(c+1) }

// intVal is x as a CEL int, from the table when it is there.
func intVal(x int) ref.Val { return properties.Int(x) }

// nilInt renders an integer the spec may set to Nil (-1 in the view).
func nilInt(x int8) ref.Val { return intVal(int(x)) }

func boolVal(b bool) ref.Val {
	if b {
		return types.True
	}
	return types.False
}

func statusVal(s spec.Status) ref.Val {
	if int(s) < len(statusList) && statusList[s] != nil {
		return statusList[s]
	}
	return types.String(s.String())
}

// parseID reads "b3" (prefix b, 1..n) as 2; ok is false for anything else.
func parseID(v ref.Val, prefix byte, n int) (int, bool) {
	s, ok := v.(types.String)
	if !ok || len(s) < 2 || s[0] != prefix {
		return 0, false
	}
	i := 0
	for _, r := range s[1:] {
		if r < '0' || r > '9' {
			return 0, false
		}
		i = i*10 + int(r-'0')
		if i > 64 {
			return 0, false
		}
	}
	if i < 1 || i > n {
		return 0, false
	}
	return i - 1, true
}

// ------------------------------------------------------------- records

// recordType is a CEL object type of the view: its fields, their types,
// meanings and getters.
type recordType struct {
	name   string
	t      *types.Type
	doc    string
	fields []*field
	byName map[string]*field
}

// field is one field of a record type.
type field struct {
	name string
	t    *types.Type
	doc  string
	get  func(r *rec) ref.Val
	// set reports whether the field is present (has()); nil: always.
	set func(r *rec) bool
	// read names the state-table row the field reads, "" for none.
	read func(r *rec) string
	ft   *types.FieldType
}

func newRecordType(name, doc string, fields ...*field) *recordType {
	rt := &recordType{name: name, t: types.NewObjectType("bkcheck." + name), doc: doc, fields: fields, byName: map[string]*field{}}
	for _, f := range fields {
		f := f
		rt.byName[f.name] = f
		f.ft = &types.FieldType{
			Type: f.t,
			IsSet: func(obj any) bool {
				r, ok := obj.(*rec)
				return ok && (f.set == nil || f.set(r))
			},
			GetFrom: func(obj any) (any, error) {
				r, ok := obj.(*rec)
				if !ok || r.rt != rt {
					return nil, fmt.Errorf("no field %s on %T", f.name, obj)
				}
				return r.field(f), nil
			},
		}
	}
	return rt
}

func (rt *recordType) fieldNames() []string {
	out := make([]string, len(rt.fields))
	for i, f := range rt.fields {
		out[i] = f.name
	}
	return out
}

// Owners of fragment, pending-op and message records.
const (
	ownerMeta = -1 // meta_fragments, or the messages variable
	ownerNone = -2 // the zero fragment (fragment_of an entry no fragment holds)
)

// rec is a record of the view. Which one it is depends on its type: a
// client (c), a fragment (c = owner client or ownerMeta, i = position), a
// pending add op (c, i), a message (c = owner client or ownerMeta, i), an
// entry (e), the fault counters or the parameters.
type rec struct {
	rt   *recordType
	v    *view
	c, i int
	e    spec.Entry
}

func (r *rec) field(f *field) ref.Val {
	if r.v != nil && r.v.rec != nil && f.read != nil {
		if name := f.read(r); name != "" {
			r.v.rec.Note(name)
		}
	}
	return f.get(r)
}

func (r *rec) client() *spec.Client { return &r.v.s.Clients[r.c] }

func (r *rec) fragment() spec.Fragment {
	switch {
	case r.c == ownerNone || r.v == nil:
		return spec.Fragment{}
	case r.c == ownerMeta:
		return r.v.s.MetaFragments[r.i]
	}
	return r.v.s.Clients[r.c].Fragments[r.i]
}

func (r *rec) pending() spec.PendingAddOp { return r.v.s.Clients[r.c].Pending[r.i] }

func (r *rec) message() (spec.MsgKey, int8) {
	if r.c == ownerMeta {
		m := r.v.s.Msgs[r.i]
		return m.Key, m.Count
	}
	return r.v.s.Clients[r.c].ReadResponses[r.i], 0
}

// ConvertToNative implements ref.Val.
func (r *rec) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("a %s cannot be converted to %v", r.rt.name, t)
}

// ConvertToType implements ref.Val.
func (r *rec) ConvertToType(t ref.Type) ref.Val {
	return properties.ConvertType(r, r.rt.t, r.rt.name, t)
}

// Equal implements ref.Val: records of one type are equal when every field is.
func (r *rec) Equal(other ref.Val) ref.Val {
	o, ok := other.(*rec)
	if !ok || o.rt != r.rt {
		return types.False
	}
	if o == r {
		return types.True
	}
	for _, f := range r.rt.fields {
		if f.get(r).Equal(f.get(o)) != types.True {
			return types.False
		}
	}
	return types.True
}

// Type implements ref.Val.
func (r *rec) Type() ref.Type { return r.rt.t }

// Value implements ref.Val: the record itself, which field getters read.
func (r *rec) Value() any { return r }

// Get implements traits.Indexer: field access on a dynamically typed record.
func (r *rec) Get(index ref.Val) ref.Val {
	name, ok := index.(types.String)
	if !ok {
		return types.NewErr("a %s has fields, not elements (got index %v)", r.rt.name, index)
	}
	f, ok := r.rt.byName[string(name)]
	if !ok {
		return types.NewErr("no such field '%s' on %s", name, r.rt.name)
	}
	return r.field(f)
}

// IsSet implements traits.FieldTester (has()).
func (r *rec) IsSet(index ref.Val) ref.Val {
	name, ok := index.(types.String)
	if !ok {
		return types.NewErr("no such field %v", index)
	}
	f, ok := r.rt.byName[string(name)]
	if !ok {
		return types.NewErr("no such field '%s' on %s", name, r.rt.name)
	}
	return boolVal(f.set == nil || f.set(r))
}

// --------------------------------------------------------------- lists

type listKind uint8

const (
	lkBookies   listKind = iota // a set of bookies, bits (global values)
	lkVals                      // fixed values (vals)
	lkEntries                   // the entries of bookie c: b_entries (i = 0), b_unflushed (i = 1) or b_checked (i = 2)
	lkFragments                 // meta_fragments (c = ownerMeta) or client c's fragments
	lkPending                   // client c's pending_add_ops
	lkMessages                  // the messages variable
	lkResponses                 // client c's read_responses
)

// list is a CEL list over part of the state (or a constant one; seq's
// are properties.Seq's).
type list struct {
	kind listKind
	v    *view
	c, i int
	bits uint64
	vals []ref.Val
}

var (
	bookieSets   [256]*list
	entryRecs    [spec.MaxEntries + 2][spec.MaxEntries + 1]*rec // [id][data]; data 0 is Nil
	zeroFragment *rec
	emptyList    = &list{kind: lkVals}
)

func bookieSet(bs spec.Bookies) *list { return bookieSets[bs] }

func entryVal(e spec.Entry) ref.Val {
	if e.ID >= 0 && int(e.ID) < len(entryRecs) && e.Data >= 0 && int(e.Data) < len(entryRecs[0]) {
		return entryRecs[e.ID][e.Data]
	}
	return &rec{rt: entryType, e: e}
}

func (l *list) entrySet() spec.EntrySet {
	switch l.i {
	case 1:
		return l.v.s.BUnflushed[l.c]
	case 2:
		return l.v.s.BChecked[l.c]
	}
	return l.v.s.BEntries[l.c]
}

func (l *list) size() int {
	switch l.kind {
	case lkBookies:
		return spec.Bookies(l.bits).Len()
	case lkVals:
		return len(l.vals)
	case lkEntries:
		n := 0
		for x := uint64(l.entrySet()); x != 0; x &= x - 1 {
			n++
		}
		return n
	case lkFragments:
		if l.c == ownerMeta {
			return int(l.v.s.NumMetaFragments)
		}
		return int(l.v.s.Clients[l.c].NumFragments)
	case lkPending:
		return int(l.v.s.Clients[l.c].NumPending)
	case lkMessages:
		return len(l.v.s.Msgs)
	case lkResponses:
		return int(l.v.s.Clients[l.c].NumResponses)
	}
	return 0
}

// each calls fn on the elements in order until it returns false.
func (l *list) each(fn func(i int, x ref.Val) bool) {
	switch l.kind {
	case lkBookies:
		i := 0
		for b := 0; b < spec.MaxBookies; b++ {
			if l.bits&(1<<uint(b)) != 0 {
				if !fn(i, bookieStrs[b]) {
					return
				}
				i++
			}
		}
	case lkEntries:
		i := 0
		set := l.entrySet()
		for x := uint64(set); x != 0; x &= x - 1 {
			bit := trailingZeros(x)
			if !fn(i, entryVal(spec.Entry{ID: int8(bit/spec.MaxEntries + 1), Data: int8(bit%spec.MaxEntries + 1)})) {
				return
			}
			i++
		}
	default:
		n := l.size()
		for i := 0; i < n; i++ {
			if !fn(i, l.at(i)) {
				return
			}
		}
	}
}

func trailingZeros(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

// at is element i (0 <= i < size).
func (l *list) at(i int) ref.Val {
	switch l.kind {
	case lkVals:
		return l.vals[i]
	case lkFragments:
		if l.c == ownerMeta {
			return &l.v.metaFrags[i]
		}
		return &l.v.clientFrags[l.c][i]
	case lkPending:
		return &l.v.pending[l.c][i]
	case lkMessages:
		return l.v.message(i)
	case lkResponses:
		return &l.v.resps[l.c][i]
	}
	var out ref.Val
	l.each(func(j int, x ref.Val) bool {
		if j == i {
			out = x
			return false
		}
		return true
	})
	return out
}

// ConvertToNative implements ref.Val.
func (l *list) ConvertToNative(t reflect.Type) (any, error) {
	return types.NewRefValList(types.DefaultTypeAdapter, l.materialize()).ConvertToNative(t)
}

func (l *list) materialize() []ref.Val {
	out := make([]ref.Val, 0, l.size())
	l.each(func(_ int, x ref.Val) bool { out = append(out, x); return true })
	return out
}

// ConvertToType implements ref.Val.
func (l *list) ConvertToType(t ref.Type) ref.Val {
	return properties.ConvertType(l, types.ListType, "list", t)
}

// Equal implements ref.Val: lists of equal elements in the same order.
func (l *list) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.False
	}
	if o.Size() != intVal(l.size()) {
		return types.False
	}
	eq := types.True
	l.each(func(i int, x ref.Val) bool {
		if x.Equal(o.Get(intVal(i))) != types.True {
			eq = types.False
			return false
		}
		return true
	})
	return eq
}

// Type implements ref.Val.
func (l *list) Type() ref.Type { return types.ListType }

// Value implements ref.Val.
func (l *list) Value() any { return l }

// Add implements traits.Adder: concatenation.
func (l *list) Add(other ref.Val) ref.Val { return properties.Concat(l.materialize, other) }

// Contains implements traits.Container (x in list).
func (l *list) Contains(x ref.Val) ref.Val {
	if l.kind == lkBookies {
		b, ok := parseID(x, 'b', spec.MaxBookies)
		return boolVal(ok && l.bits&(1<<uint(b)) != 0)
	}
	found := types.False
	l.each(func(_ int, y ref.Val) bool {
		if y.Equal(x) == types.True {
			found = types.True
			return false
		}
		return true
	})
	return found
}

// Get implements traits.Indexer.
func (l *list) Get(index ref.Val) ref.Val {
	i, err := properties.ListIndex(index, l.size())
	if err != nil {
		return err
	}
	return l.at(i)
}

// Size implements traits.Sizer.
func (l *list) Size() ref.Val { return intVal(l.size()) }

// Iterator implements traits.Iterable.
func (l *list) Iterator() traits.Iterator { return properties.NewIterator(l.materialize()) }

// Fold implements traits.Foldable: comprehensions iterate without allocating.
func (l *list) Fold(f traits.Folder) {
	l.each(func(i int, x ref.Val) bool { return f.FoldEntry(intVal(i), x) })
}

// ---------------------------------------------------------------- maps

type mapKind uint8

const (
	mkClients   mapKind = iota // clients: c1.. -> Client
	mkEntries                  // b_entries: b1.. -> list(Entry)
	mkUnflushed                // b_unflushed
	mkFenced                   // b_fenced: b1.. -> bool
	mkLAC                      // b_lac
	mkLAFR                     // b_lafr
	mkDurable                  // b_durable_lac
	mkChecked                  // b_checked
	mkConfirmed                // clients[c].confirmed: 1.. -> list(string)
)

var mapVarNames = [...]string{"clients", "b_entries", "b_unflushed", "b_fenced", "b_lac", "b_lafr", "b_durable_lac", "b_checked", "confirmed"}

// mapv is a CEL map over part of the state.
type mapv struct {
	kind mapKind
	v    *view
	c    int // the client of confirmed
}

func (m *mapv) size() int {
	switch m.kind {
	case mkClients:
		return m.v.p.Clients
	case mkConfirmed:
		return m.v.p.Entries
	}
	return m.v.p.Bookies
}

// key is the key at position i.
func (m *mapv) key(i int) ref.Val {
	switch m.kind {
	case mkClients:
		return clientStrs[i]
	case mkConfirmed:
		return intVal(i + 1)
	}
	return bookieStrs[i]
}

// index is the position of key, if it is one of the map's.
func (m *mapv) index(key ref.Val) (int, bool) {
	switch m.kind {
	case mkClients:
		return parseID(key, 'c', m.v.p.Clients)
	case mkConfirmed:
		k, ok := key.(types.Int)
		if !ok || k < 1 || int(k) > m.v.p.Entries {
			return 0, false
		}
		return int(k) - 1, true
	}
	return parseID(key, 'b', m.v.p.Bookies)
}

// val is the value at position i, noting the read when explaining.
func (m *mapv) val(i int) ref.Val {
	v, s := m.v, m.v.s
	if v.rec != nil && m.kind != mkClients {
		if m.kind == mkConfirmed {
			v.rec.Note(fmt.Sprintf("clients[%s].confirmed", clientName(m.c)))
		} else {
			v.rec.Note(fmt.Sprintf("%s[%s]", mapVarNames[m.kind], bookieName(i)))
		}
	}
	switch m.kind {
	case mkClients:
		return &v.clients[i]
	case mkEntries:
		return &v.entries[i]
	case mkUnflushed:
		return &v.unflushed[i]
	case mkFenced:
		return boolVal(s.BFenced.Has(i))
	case mkLAC:
		return intVal(int(s.BLAC[i]))
	case mkLAFR:
		return intVal(int(s.BLAFR[i]))
	case mkDurable:
		return intVal(int(s.BDurableLAC[i]))
	case mkChecked:
		return &v.checked[i]
	case mkConfirmed:
		return bookieSet(s.Clients[m.c].Confirmed[i])
	}
	return types.NewErr("bad map")
}

// ConvertToNative implements ref.Val.
func (m *mapv) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("a state map cannot be converted to %v", t)
}

// ConvertToType implements ref.Val.
func (m *mapv) ConvertToType(t ref.Type) ref.Val {
	return properties.ConvertType(m, types.MapType, "map", t)
}

// Equal implements ref.Val.
func (m *mapv) Equal(other ref.Val) ref.Val {
	return properties.MapEqual(m.size(), m.key, m.val, other)
}

// Type implements ref.Val.
func (m *mapv) Type() ref.Type { return types.MapType }

// Value implements ref.Val.
func (m *mapv) Value() any { return m }

// Contains implements traits.Container (key in map).
func (m *mapv) Contains(key ref.Val) ref.Val {
	_, ok := m.index(key)
	return boolVal(ok)
}

// Get implements traits.Indexer.
func (m *mapv) Get(key ref.Val) ref.Val {
	v, found := m.Find(key)
	if !found {
		return types.NewErr("no such key: %v", key)
	}
	return v
}

// Find implements traits.Mapper.
func (m *mapv) Find(key ref.Val) (ref.Val, bool) {
	i, ok := m.index(key)
	if !ok {
		return nil, false
	}
	return m.val(i), true
}

// Size implements traits.Sizer.
func (m *mapv) Size() ref.Val { return intVal(m.size()) }

// Iterator implements traits.Iterable: the keys.
func (m *mapv) Iterator() traits.Iterator {
	keys := make([]ref.Val, m.size())
	for i := range keys {
		keys[i] = m.key(i)
	}
	return properties.NewIterator(keys)
}

// Fold implements traits.Foldable.
func (m *mapv) Fold(f traits.Folder) {
	for i := 0; i < m.size(); i++ {
		if !f.FoldEntry(m.key(i), m.val(i)) {
			return
		}
	}
}

// FormatFields implements properties.Record: the fields it has.
func (r *rec) FormatFields() (string, []string) {
	var parts []string
	for _, f := range r.rt.fields {
		if f.set != nil && !f.set(r) {
			continue
		}
		parts = append(parts, f.name+": "+properties.FormatVal(f.get(r)))
	}
	return r.rt.name, parts
}
