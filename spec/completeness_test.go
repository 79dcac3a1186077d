package spec_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
)

// This file pins the hand-written encoding (spec/encode.go) to the State
// struct, so that a state variable added to State but forgotten in Encode
// or Decode fails a test instead of silently merging distinct states under
// one fingerprint.
//
// complFields is the presence table: every field of State (found by
// reflection, at every depth) must have a row saying under which
// configurations Encode must write it, how many elements of an array are
// in use, and how to change a leaf to another legal-looking value. A field
// missing from the table fails TestStateFieldsHaveEncodingRule, so a new
// field forces a decision. TestEncodeCompleteness then takes sampled
// reachable states of every fault and variant configuration, changes every
// present leaf in turn and requires the encoding to change, and requires
// Decode(Encode(s)) == s.

// complField is one row of the presence table.
type complField struct {
	// present says whether Encode writes the field under m (nil: always).
	// A field that is absent must keep its initial value in every
	// reachable state (the round trip checks that: Decode starts from
	// Init).
	present func(m *spec.Model) bool
	// extent, for an array or slice, is how many leading elements are in
	// use; parent is the struct holding the field.
	extent func(m *spec.Model, parent reflect.Value) int
	// flip, for a leaf, changes v to another legal-looking value.
	flip func(m *spec.Model, rng *rand.Rand, v reflect.Value)
}

// Presence predicates: the rules of spec/encode.go and traces/itf.go
// stateVars.
func gwqOnly(m *spec.Model) bool          { return m.V.GuaranteedWriteQuorum }
func orderedOnly(m *spec.Model) bool      { return m.P.Ordered() }
func faultyOnly(m *spec.Model) bool       { return m.P.Faulty() }
func lossyOnly(m *spec.Model) bool        { return m.P.LossyJournal() }
func fenceLossOnly(m *spec.Model) bool    { return m.P.FencesCanBeLost() }
func deferredOnly(m *spec.Model) bool     { return m.P.DeferredCheck() }
func handlesOnly(m *spec.Model) bool      { return m.P.HasHandles() }
func splitOnly(m *spec.Model) bool        { return m.V.SplitAddCheck }
func deletionOnly(m *spec.Model) bool     { return m.P.DeleteLedger }
func javaOnly(m *spec.Model) bool         { return m.P.JavaAddPath() }
func sequenceOnly(m *spec.Model) bool     { return m.P.SequenceReads() }
func createOnly(m *spec.Model) bool       { return m.P.JavaAddPath() && m.P.CreateWindow }
func checkpointsOnly(m *spec.Model) bool  { return m.P.Checkpoints }
func registrationOnly(m *spec.Model) bool { return m.P.RegistrationExpiry }
func autoRecoveryOnly(m *spec.Model) bool { return m.P.AutoRecovery }
func decommissionOnly(m *spec.Model) bool { return m.P.Decommission }

// Extents.
func perBookie(m *spec.Model, _ reflect.Value) int { return m.P.Bookies }
func perClient(m *spec.Model, _ reflect.Value) int { return m.P.Clients }
func perEntry(m *spec.Model, _ reflect.Value) int  { return m.P.Entries }
func countedBy(field string) func(*spec.Model, reflect.Value) int {
	return func(_ *spec.Model, parent reflect.Value) int { return int(parent.FieldByName(field).Int()) }
}
func sliceLen(_ *spec.Model, parent reflect.Value) int { return parent.FieldByName("Msgs").Len() }

// Flips. Integers move to another value of their legal range (lo, hi
// computed from the parameters); sets gain or lose one member.
func flipInt(lo, hi func(p spec.Params) int) func(*spec.Model, *rand.Rand, reflect.Value) {
	return func(m *spec.Model, rng *rand.Rand, v reflect.Value) {
		l, h := lo(m.P), hi(m.P)
		unsigned := v.CanUint()
		var cur int
		if unsigned {
			cur = int(v.Uint())
		} else {
			cur = int(v.Int())
		}
		next := cur + 1 // no other legal value: any other value
		if h > l {
			next = l + rng.IntN(h-l)
			if next >= cur {
				next++
			}
			if next > h {
				next = l
			}
		}
		if unsigned {
			v.SetUint(uint64(next))
		} else {
			v.SetInt(int64(next))
		}
	}
}

func fixed(n int) func(spec.Params) int { return func(spec.Params) int { return n } }
func entries(plus int) func(spec.Params) int {
	return func(p spec.Params) int { return p.Entries + plus }
}

// flipCount changes an element count by one (down when it can, so that
// it stays within its array).
func flipCount(_ *spec.Model, _ *rand.Rand, v reflect.Value) {
	if n := v.Int(); n > 0 {
		v.SetInt(n - 1)
	} else {
		v.SetInt(n + 1)
	}
}

func flipBookies(m *spec.Model, rng *rand.Rand, v reflect.Value) {
	v.SetUint(v.Uint() ^ 1<<uint(rng.IntN(m.P.Bookies)))
}

// flipOneBookie moves a set of at most one bookie to another such set.
func flipOneBookie(m *spec.Model, rng *rand.Rand, v reflect.Value) {
	next := uint64(0)
	if b := rng.IntN(m.P.Bookies + 1); b < m.P.Bookies {
		next = 1 << uint(b)
	}
	if next == v.Uint() {
		next = 0
		if v.Uint() == 0 {
			next = 1
		}
	}
	v.SetUint(next)
}

func flipEntrySet(m *spec.Model, rng *rand.Rand, v reflect.Value) {
	id, data := rng.IntN(m.P.Entries), rng.IntN(m.P.Entries)
	v.SetUint(v.Uint() ^ 1<<uint(id*spec.MaxEntries+data))
}

func flipLayout(m *spec.Model, rng *rand.Rand, v reflect.Value) {
	l := spec.Layout(v.Uint())
	pos := rng.IntN(m.P.Ensemble)
	b := (l.At(pos) + 1 + rng.IntN(m.P.Bookies-1)) % m.P.Bookies
	v.SetUint(uint64(l.With(pos, b)))
}

// flipFailures puts another bookie at an index of a failure map, or adds
// the index.
func flipFailures(m *spec.Model, rng *rand.Rand, v reflect.Value) {
	f := spec.Failures(v.Uint())
	i := rng.IntN(m.P.Ensemble)
	b, ok := f.At(i)
	if !ok {
		b = rng.IntN(m.P.Bookies)
	} else {
		b = (b + 1 + rng.IntN(m.P.Bookies-1)) % m.P.Bookies
	}
	v.SetUint(uint64(f.Put(i, b)))
}

// flipMsgKey toggles one bit of a record's payload (recovery, success,
// fence, code, entry, lac, lafr, index), leaving its type, bookie and
// client.
// flipTried toggles one fragment position of the worker's tried set.
func flipTried(_ *spec.Model, rng *rand.Rand, v reflect.Value) {
	v.SetUint(v.Uint() ^ 1<<uint(rng.IntN(10)))
}

// flipCache toggles whether the worker holds a set of unreadable
// entries, or one entry of it.
func flipCache(m *spec.Model, rng *rand.Rand, v reflect.Value) {
	const set = 1 << 15
	c := v.Uint()
	if c&set == 0 {
		v.SetUint(set | 1<<uint(rng.IntN(m.P.Entries)))
		return
	}
	v.SetUint(c ^ 1<<uint(rng.IntN(m.P.Entries)))
}

// flipMapping changes the new bookie one old bookie maps to (or adds it).
func flipMapping(m *spec.Model, rng *rand.Rand, v reflect.Value) {
	f := spec.Failures(v.Uint())
	b := rng.IntN(m.P.Bookies)
	t, ok := f.At(b)
	if !ok {
		t = -1
	}
	v.SetUint(uint64(f.Put(b, (t+1)%m.P.Bookies)))
}

func flipMsgKey(_ *spec.Model, rng *rand.Rand, v reflect.Value) {
	v.SetUint(v.Uint() ^ 1<<uint(8+rng.IntN(32-8)))
}

func flipBool(_ *spec.Model, _ *rand.Rand, v reflect.Value) { v.SetBool(!v.Bool()) }

// complFields is the presence table, keyed by field path: Go field names
// joined by dots, "[]" for the elements of an array or slice. Rows with
// extent are arrays and slices; rows with flip are leaves; rows with
// neither are structs (their fields have rows of their own).
var complFields = map[string]complField{
	"Msgs":         {extent: sliceLen},
	"Msgs[].Key":   {flip: flipMsgKey},
	"Msgs[].Count": {flip: flipInt(fixed(-1), fixed(1))},

	"MetaStatus":                     {flip: flipInt(fixed(0), fixed(int(spec.StatusClosed)))},
	"NumMetaFragments":               {flip: flipCount},
	"MetaFragments":                  {extent: countedBy("NumMetaFragments")},
	"MetaFragments[].ID":             {flip: flipInt(fixed(0), fixed(10))},
	"MetaFragments[].Ensemble":       {flip: flipBookies},
	"MetaFragments[].First":          {flip: flipInt(fixed(0), entries(1))},
	"MetaFragments[].Layout":         {present: orderedOnly, flip: flipLayout},
	"MetaLastEntry":                  {flip: flipInt(fixed(0), entries(0))},
	"MetaVersion":                    {flip: flipInt(fixed(0), fixed(20))},
	"BEntries":                       {extent: perBookie},
	"BEntries[]":                     {flip: flipEntrySet},
	"BFenced":                        {flip: flipBookies},
	"BLAC":                           {extent: perBookie},
	"BLAC[]":                         {flip: flipInt(fixed(0), entries(0))},
	"BLAFR":                          {present: gwqOnly, extent: perBookie},
	"BLAFR[]":                        {flip: flipInt(fixed(0), entries(0))},
	"BDown":                          {present: faultyOnly, flip: flipBookies},
	"BWiped":                         {present: faultyOnly, flip: flipBookies},
	"BReadOnly":                      {present: faultyOnly, flip: flipBookies},
	"BDiskFull":                      {present: faultyOnly, flip: flipBookies},
	"BLimbo":                         {present: faultyOnly, flip: flipBookies},
	"BStale":                         {present: registrationOnly, flip: flipBookies},
	"CrashesUsed":                    {present: faultyOnly, flip: flipInt(fixed(0), func(p spec.Params) int { return p.Crashes })},
	"DiskLossUsed":                   {present: faultyOnly, flip: flipInt(fixed(0), func(p spec.Params) int { return p.DiskLoss })},
	"ReformatUsed":                   {present: faultyOnly, flip: flipInt(fixed(0), func(p spec.Params) int { return p.Reformat })},
	"ReadOnlyUsed":                   {present: faultyOnly, flip: flipInt(fixed(0), func(p spec.Params) int { return p.ReadOnly })},
	"DiskFullUsed":                   {present: faultyOnly, flip: flipInt(fixed(0), func(p spec.Params) int { return p.DiskFull })},
	"CorruptUsed":                    {present: faultyOnly, flip: flipInt(fixed(0), func(p spec.Params) int { return p.CorruptReads })},
	"BHandle":                        {present: handlesOnly, flip: flipBookies},
	"BCheckPending":                  {present: deferredOnly, flip: flipBookies},
	"BUnflushed":                     {present: lossyOnly, extent: perBookie},
	"BUnflushed[]":                   {flip: flipEntrySet},
	"BUnflushedFence":                {present: fenceLossOnly, flip: flipBookies},
	"BIndexKey":                      {present: checkpointsOnly, flip: flipBookies},
	"BIndexFenced":                   {present: checkpointsOnly, flip: flipBookies},
	"BKeyRecord":                     {present: checkpointsOnly, flip: flipBookies},
	"BFenceRecord":                   {present: checkpointsOnly, flip: flipBookies},
	"BCacheDirty":                    {present: checkpointsOnly, flip: flipBookies},
	"URMissing":                      {present: autoRecoveryOnly, flip: flipBookies},
	"RWPhase":                        {present: autoRecoveryOnly, flip: flipInt(fixed(0), fixed(int(spec.RWStopped)))},
	"RWTried":                        {present: autoRecoveryOnly, flip: flipTried},
	"RWFirst":                        {present: autoRecoveryOnly, flip: flipInt(fixed(0), entries(1))},
	"RWMap":                          {present: autoRecoveryOnly, flip: flipMapping},
	"RWCache":                        {present: autoRecoveryOnly, flip: flipCache},
	"DecomBookie":                    {present: decommissionOnly, flip: flipOneBookie},
	"DecomDone":                      {present: decommissionOnly, flip: flipBool},
	"BDurableLAC":                    {present: lossyOnly, extent: perBookie},
	"BDurableLAC[]":                  {flip: flipInt(fixed(0), entries(0))},
	"BChecked":                       {present: splitOnly, extent: perBookie},
	"BChecked[]":                     {flip: flipEntrySet},
	"MetaDeleted":                    {present: deletionOnly, flip: flipBool},
	"BCollected":                     {present: deletionOnly, flip: flipBookies},
	"BVolatileFence":                 {present: deletionOnly, flip: flipBookies},
	"Clients":                        {extent: perClient},
	"Clients[].MetaVersion":          {flip: flipInt(fixed(-1), fixed(20))},
	"Clients[].Status":               {flip: flipInt(fixed(0), fixed(int(spec.RecoveryAborted)))},
	"Clients[].NumFragments":         {flip: flipCount},
	"Clients[].Fragments":            {extent: countedBy("NumFragments")},
	"Clients[].Fragments[].ID":       {flip: flipInt(fixed(0), fixed(10))},
	"Clients[].Fragments[].Ensemble": {flip: flipBookies},
	"Clients[].Fragments[].First":    {flip: flipInt(fixed(0), entries(1))},
	"Clients[].Fragments[].Layout":   {present: orderedOnly, flip: flipLayout},
	"Clients[].NumPending":           {flip: flipCount},
	"Clients[].Pending":              {extent: countedBy("NumPending")},
	"Clients[].Pending[].Entry":      {},
	"Clients[].Pending[].Entry.ID":   {flip: flipInt(fixed(1), entries(0))},
	"Clients[].Pending[].Entry.Data": {flip: flipInt(fixed(1), entries(0))},
	"Clients[].Pending[].FragmentID": {flip: flipInt(fixed(0), fixed(10))},
	"Clients[].Pending[].Ensemble":   {flip: flipBookies},
	"Clients[].Pending[].Layout":     {present: orderedOnly, flip: flipLayout},
	"Clients[].LAP":                  {flip: flipInt(fixed(0), entries(0))},
	"Clients[].LAC":                  {flip: flipInt(fixed(0), entries(0))},
	"Clients[].LAFR":                 {present: gwqOnly, flip: flipInt(fixed(0), entries(0))},
	"Clients[].Confirmed":            {extent: perEntry},
	"Clients[].Confirmed[]":          {flip: flipBookies},
	"Clients[].Fenced":               {flip: flipBookies},
	"Clients[].RecoveryEns":          {flip: flipBookies},
	"Clients[].RecoveryLay":          {present: orderedOnly, flip: flipLayout},
	"Clients[].CurrReadEntry":        {flip: flipInt(fixed(-1), entries(1))},
	"Clients[].NumResponses":         {flip: flipCount},
	"Clients[].ReadResponses":        {extent: countedBy("NumResponses")},
	"Clients[].ReadResponses[]":      {flip: flipMsgKey},
	"Clients[].RecoveryPhase":        {flip: flipInt(fixed(0), fixed(int(spec.ReadWritePhase)))},
	"Clients[].LastRecoverable":      {flip: flipInt(fixed(-1), entries(1))},
	"Clients[].ReadNext":             {present: sequenceOnly, flip: flipInt(fixed(0), func(p spec.Params) int { return p.WriteQuorum })},
	"Clients[].Change":               {present: javaOnly, flip: flipInt(fixed(0), fixed(int(spec.ChangeCompleting)))},
	"Clients[].ChangeFailed":         {present: javaOnly, flip: flipFailures},
	"Clients[].ChangeOrig":           {present: javaOnly, flip: flipBookies},
	"Clients[].ChangeOrigLay":        {present: javaOnly, flip: flipLayout},
	"Clients[].DelayedFailed":        {present: javaOnly, flip: flipFailures},
	"Clients[].Changes":              {present: javaOnly, flip: flipInt(fixed(0), func(p spec.Params) int { return p.MaxEnsembleChanges })},
	"Clients[].DoneEns":              {present: javaOnly, extent: perEntry},
	"Clients[].DoneEns[]":            {flip: flipBookies},
	"Clients[].DoneLay":              {present: javaOnly, extent: perEntry},
	"Clients[].DoneLay[]":            {flip: flipLayout},
	"Clients[].Created":              {present: createOnly},
	"Clients[].Created.FragmentID":   {present: createOnly, flip: flipInt(fixed(0), fixed(10))},
	"Clients[].Created.Ensemble":     {present: createOnly, flip: flipBookies},
	"Clients[].Created.Layout":       {present: createOnly, flip: flipLayout},
}

// complPaths lists every field path of t (struct fields at every depth,
// "[]" for elements of arrays and slices), in declaration order, with its
// kind: 'a' array or slice, 's' struct, 'l' leaf.
func complPaths(t reflect.Type, prefix string, out *[]string, kinds map[string]byte) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		path := f.Name
		if prefix != "" {
			path = prefix + "." + f.Name
		}
		complType(f.Type, path, out, kinds)
	}
}

func complType(t reflect.Type, path string, out *[]string, kinds map[string]byte) {
	switch t.Kind() {
	case reflect.Array, reflect.Slice:
		*out = append(*out, path)
		kinds[path] = 'a'
		if el := t.Elem(); el.Kind() == reflect.Struct {
			complPaths(el, path+"[]", out, kinds)
		} else {
			complType(el, path+"[]", out, kinds)
		}
	case reflect.Struct:
		*out = append(*out, path)
		kinds[path] = 's'
		complPaths(t, path, out, kinds)
	default:
		*out = append(*out, path)
		kinds[path] = 'l'
	}
}

// complNeedsRow reports whether path needs a row: every field does, and
// the elements of an array of scalars (a leaf row); the elements of an
// array of structs do not (their fields do).
func complNeedsRow(path string, kinds map[string]byte) bool {
	return !strings.HasSuffix(path, "[]") || kinds[path] == 'l'
}

// TestStateFieldsHaveEncodingRule: every field of spec.State, at every
// depth, has a row in the presence table, of the right shape, and every
// row names a field. A field added to State fails here until someone
// decides when Encode writes it.
func TestStateFieldsHaveEncodingRule(t *testing.T) {
	var paths []string
	kinds := map[string]byte{}
	complPaths(reflect.TypeOf(spec.State{}), "", &paths, kinds)
	for _, path := range paths {
		if !complNeedsRow(path, kinds) {
			continue
		}
		row, ok := complFields[path]
		if !ok {
			t.Errorf("State field %s (%s) has no row in complFields: decide under which parameters Encode/Decode write it (spec/encode.go), add it there and here", path, map[byte]string{'a': "array", 's': "struct", 'l': "leaf"}[kinds[path]])
			continue
		}
		switch kinds[path] {
		case 'a':
			if row.extent == nil || row.flip != nil {
				t.Errorf("complFields[%q]: an array or slice needs extent and no flip", path)
			}
		case 'l':
			if row.flip == nil || row.extent != nil {
				t.Errorf("complFields[%q]: a leaf needs flip and no extent", path)
			}
		case 's':
			if row.flip != nil || row.extent != nil {
				t.Errorf("complFields[%q]: a struct needs neither flip nor extent", path)
			}
		}
	}
	for path := range complFields {
		if _, ok := kinds[path]; !ok {
			t.Errorf("complFields has a row for %s, which is not a field of State", path)
		}
	}
}

// complLeaf is one leaf in use in a state: its path, its value inside
// the state (addressable, so that it can be changed in place) and how to
// change it.
type complLeaf struct {
	path string
	v    reflect.Value
	flip func(m *spec.Model, rng *rand.Rand, v reflect.Value)
}

// complNode is a present field of a struct, compiled from the table for
// one model so that enumerating a state's leaves needs no map look-ups.
type complNode struct {
	index    int // in the parent struct
	path     string
	row      complField
	elemPath string                                       // arrays and slices: the elements' path
	elemFlip func(*spec.Model, *rand.Rand, reflect.Value) // arrays of scalars
	fields   []complNode                                  // structs, and arrays of structs: their present fields
}

// complCompile compiles the present fields of struct type t under m.
func complCompile(m *spec.Model, t reflect.Type, prefix string) []complNode {
	var out []complNode
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		path := f.Name
		if prefix != "" {
			path = prefix + "." + f.Name
		}
		row := complFields[path]
		if row.present != nil && !row.present(m) {
			continue
		}
		n := complNode{index: i, path: path, row: row}
		switch f.Type.Kind() {
		case reflect.Array, reflect.Slice:
			n.elemPath = path + "[]"
			if el := f.Type.Elem(); el.Kind() == reflect.Struct {
				n.fields = complCompile(m, el, n.elemPath)
			} else {
				n.elemFlip = complFields[n.elemPath].flip
			}
		case reflect.Struct:
			n.fields = complCompile(m, f.Type, path)
		}
		out = append(out, n)
	}
	return out
}

// complLeaves appends the leaves Encode must write in the struct at v:
// present fields only, and of arrays only the elements in use.
func complLeaves(m *spec.Model, nodes []complNode, v reflect.Value, out []complLeaf) []complLeaf {
	for i := range nodes {
		n := &nodes[i]
		fv := v.Field(n.index)
		switch {
		case n.elemPath != "":
			for j, k := 0, n.row.extent(m, v); j < k; j++ {
				if el := fv.Index(j); n.elemFlip != nil {
					out = append(out, complLeaf{n.elemPath, el, n.elemFlip})
				} else {
					out = complLeaves(m, n.fields, el, out)
				}
			}
		case n.fields != nil:
			out = complLeaves(m, n.fields, fv, out)
		default:
			out = append(out, complLeaf{n.path, fv, n.row.flip})
		}
	}
	return out
}

// complPresentLeaves are the leaf paths present under m (whether or not a
// given state has elements in use there).
func complPresentLeaves(m *spec.Model) []string {
	var paths []string
	kinds := map[string]byte{}
	complPaths(reflect.TypeOf(spec.State{}), "", &paths, kinds)
	var out []string
	for _, path := range paths {
		if kinds[path] != 'l' {
			continue
		}
		present := true
		// The leaf and every enclosing field must be present.
		for p := path; p != ""; {
			if row, ok := complFields[p]; ok && row.present != nil && !row.present(m) {
				present = false
			}
			i := strings.LastIndexAny(p, ".[")
			if i < 0 {
				break
			}
			p = p[:i]
		}
		if present {
			out = append(out, path)
		}
	}
	return out
}

// complConditional reports whether path, or a field enclosing it, is
// present only under some parameters.
func complConditional(path string) bool {
	for p := path; ; {
		if row, ok := complFields[p]; ok && row.present != nil {
			return true
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// complConfig is one configuration of the model to sample.
type complConfig struct {
	name string
	p    spec.Params
}

// complConfigs is every fault and every variant, one at a time, then
// together; each variant with the options that make its difference
// reachable. Base: 3 bookies, 2 clients, Qw 2, Qa 1, 2 entries.
func complConfigs() []complConfig {
	base := spec.Params{Bookies: 3, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 2, Inflight: 2}
	with := func(name string, f func(p *spec.Params)) complConfig {
		p := base
		f(&p)
		return complConfig{name, p}
	}
	cs := []complConfig{
		{"reference", base},
		with("one-bookie-per-entry", func(p *spec.Params) { p.Bookies, p.WriteQuorum, p.Clients, p.Entries = 2, 1, 3, 1 }),
		with("wide-quorum", func(p *spec.Params) { p.WriteQuorum, p.Entries = 3, 1 }),
		with("striped", func(p *spec.Params) { p.Ensemble = 3 }),
		with("crashes", func(p *spec.Params) { p.Crashes = 1 }),
		with("crashes-no-sync", func(p *spec.Params) { p.Crashes, p.Journal = 1, spec.JournalNoSync }),
		with("crashes-journal-disabled-integrity", func(p *spec.Params) {
			p.Crashes, p.Journal, p.DataIntegrity = 1, spec.JournalDisabled, true
		}),
		// With InterleavedLedgerStorage the check fences nothing: the model
		// is the one without it (EnsureDefaults), which this pins too.
		with("crashes-journal-disabled-integrity-interleaved", func(p *spec.Params) {
			p.Crashes, p.Journal, p.DataIntegrity, p.LedgerStorage = 1, spec.JournalDisabled, true, spec.LedgerStorageInterleaved
		}),
		with("disk-loss-reformat", func(p *spec.Params) { p.DiskLoss, p.Reformat = 1, 1 }),
		with("reformat-integrity", func(p *spec.Params) { p.Reformat, p.DataIntegrity, p.ReformatCookie = 1, true, spec.CookieKept }),
		with("read-only", func(p *spec.Params) { p.ReadOnly = 1 }),
		with("disk-full", func(p *spec.Params) { p.DiskFull = 1 }),
		with("corrupt-reads", func(p *spec.Params) { p.CorruptReads = 1 }),
		with("delete-ledger", func(p *spec.Params) { p.DeleteLedger = true }),
		with("unavailable", func(p *spec.Params) { p.Unavailable = 1 }),
		with("java-add-path", func(p *spec.Params) { p.AddPath, p.MaxEnsembleChanges = spec.AddPathJava, 2 }),
		with("java-add-path-striped-faults", func(p *spec.Params) {
			p.AddPath, p.Bookies, p.Ensemble, p.Entries, p.Inflight, p.ReadOnly, p.Crashes = spec.AddPathJava, 4, 3, 3, 3, 1, 1
		}),
		with("java-add-path-create-window-striped", func(p *spec.Params) {
			p.AddPath, p.CreateWindow, p.Bookies, p.Ensemble, p.Entries, p.Inflight, p.MaxEnsembleChanges = spec.AddPathJava, true, 4, 3, 2, 2, 2
		}),
		with("partial-replacement-striped", func(p *spec.Params) { p.Ensemble, p.Crashes, p.PartialReplacement = 3, 2, true }),
		with("close-rereads-delete", func(p *spec.Params) { p.CloseRereads, p.DeleteLedger = true, true }),
		with("sequence-reads", func(p *spec.Params) { p.RecoveryRead = spec.RecoveryReadSequence }),
		with("checkpoints", func(p *spec.Params) { p.Crashes, p.Checkpoints = 1, true }),
		with("registration-expiry-spare", func(p *spec.Params) { p.Bookies, p.Crashes, p.RegistrationExpiry = 3, 1, true }),
		with("checkpoints-delete-flushes", func(p *spec.Params) {
			p.Crashes, p.Checkpoints, p.DeleteLedger, p.Variant = 1, true, true, spec.VariantDurableReplayFlushed
		}),
		with("sequence-reads-striped-crash", func(p *spec.Params) {
			p.RecoveryRead, p.Bookies, p.Ensemble, p.WriteQuorum, p.AckQuorum, p.Crashes = spec.RecoveryReadSequence, 3, 3, 2, 1, 1
		}),
		with("autorecovery", func(p *spec.Params) { p.Bookies, p.Crashes, p.AutoRecovery = 3, 1, true }),
		with("autorecovery-disk-loss-no-periodic-check", func(p *spec.Params) {
			p.Bookies, p.DiskLoss, p.AutoRecovery, p.AuditorPeriodicCheck = 3, 1, true, "off"
		}),
		with("autorecovery-java-add-path", func(p *spec.Params) {
			p.Bookies, p.AckQuorum, p.Crashes, p.AutoRecovery, p.AddPath, p.MaxEnsembleChanges = 4, 2, 2, true, spec.AddPathJava, 2
		}),
		with("decommission", func(p *spec.Params) {
			p.Bookies, p.Crashes, p.AutoRecovery, p.Decommission = 3, 1, true, true
		}),
		with("autorecovery-verify-all", func(p *spec.Params) {
			p.Bookies, p.Reformat, p.AutoRecovery, p.AuditorVerification = 3, 1, true, 100
		}),
		// A release line with two bugs composed, checkpoints and the Java
		// client's path (--bookkeeper).
		with("bookkeeper-4.16.3-crash-delete", func(p *spec.Params) {
			p.BookKeeper, p.Crashes, p.DeleteLedger = "4.16.3", 1, true
		}),
		with("reliable-recovery-from-lac-exclude", func(p *spec.Params) {
			p.ReliableNetwork, p.RecoveryFromLAC, p.Exclude = true, true, []string{"ClientClosesLedgerFail"}
		}),
	}
	for _, v := range spec.Variants {
		cs = append(cs, with("variant-"+v.Name, func(p *spec.Params) {
			p.Variant = v.Name
			// What makes the variant's difference reachable.
			if v.CorruptReadAsNoSuchEntry {
				p.CorruptReads = 1
			}
			if v.DeleteForgetsFence {
				p.DeleteLedger = true
			}
			if v.IntegrityFencesClosed {
				p.Reformat, p.DataIntegrity, p.ReformatCookie = 1, true, spec.CookieKept
			}
			if v.CollectKeepsFence {
				p.DeleteLedger, p.Crashes = true, 1
			}
			if v.AwaitPreBootCheck {
				p.Crashes, p.Journal, p.DataIntegrity = 1, spec.JournalDisabled, true
			}
			if v.CheckpointOnly() {
				p.Crashes, p.Checkpoints = 1, true
			}
			if v.AutoRecoveryOnly() {
				p.Bookies, p.WriteQuorum, p.AckQuorum, p.Entries, p.DiskLoss, p.Crashes, p.AutoRecovery = 3, 1, 1, 2, 1, 1, true
			}
			if v.JavaOnly() {
				p.AddPath, p.Bookies, p.Ensemble, p.Entries = spec.AddPathJava, 4, 3, 3
			}
			if v.EnsembleAtQueue {
				p.CreateWindow, p.Inflight = true, 2
			}
		}))
	}
	everything := func(name, variant string) complConfig {
		return with(name, func(p *spec.Params) {
			p.Bookies, p.Ensemble, p.Variant = 4, 3, variant
			p.Crashes, p.Journal, p.DiskLoss, p.Reformat, p.DataIntegrity = 1, spec.JournalDisabled, 1, 1, true
			p.ReformatCookie = spec.CookieKept
			p.ReadOnly, p.DiskFull, p.CorruptReads, p.DeleteLedger = 1, 1, 1, true
		})
	}
	return append(cs, everything("everything-gwq", "gwq"), everything("everything-split-add-check", "split-add-check"))
}

// TestEncodeConfigsCoverParams: every parameter is set (non-zero) in some
// configuration of complConfigs, and every variant is one, so that a new
// parameter is considered here.
func TestEncodeConfigsCoverParams(t *testing.T) {
	cs := complConfigs()
	pt := reflect.TypeOf(spec.Params{})
	for i := 0; i < pt.NumField(); i++ {
		set := false
		for _, c := range cs {
			set = set || !reflect.ValueOf(c.p).Field(i).IsZero()
		}
		if !set {
			t.Errorf("no configuration of complConfigs sets Params.%s: add one", pt.Field(i).Name)
		}
	}
	journals := map[string]bool{}
	for _, c := range cs {
		journals[c.p.Journal] = journals[c.p.Journal] || c.p.Crashes > 0
	}
	for _, j := range []string{spec.JournalSynced, spec.JournalNoSync, spec.JournalDisabled} {
		if !journals[j] {
			t.Errorf("no configuration has crashes with journal %q", j)
		}
	}
	for _, v := range spec.Variants {
		if !slices.ContainsFunc(cs, func(c complConfig) bool { return c.p.Variant == v.Name }) {
			t.Errorf("variant %s has no configuration", v.Name)
		}
	}
}

// complSample returns distinct reachable states of m: the first nBFS in
// breadth-first order, then up to nWalk more met on seeded random walks,
// which reach the deep states a short BFS does not (recovery, read
// responses, later fragments). A walk prefers successors with something
// no sampled state had yet: a field in use, or set, for the first time.
func complSample(t testing.TB, m *spec.Model, nBFS, nWalk int, seed uint64) []spec.State {
	t.Helper()
	init := m.Init()
	seen := map[string]bool{string(m.Encode(nil, &init)): true}
	out := []spec.State{init}
	var scratch spec.State
	type feature struct {
		path    string
		nonzero bool
	}
	features := map[feature]bool{}
	nodes := complCompile(m, reflect.TypeOf(spec.State{}), "")
	var leaves []complLeaf
	novel := func(s *spec.State, note bool) bool {
		n := false
		leaves = complLeaves(m, nodes, reflect.ValueOf(s).Elem(), leaves[:0])
		for _, l := range leaves {
			if f := (feature{l.path, !l.v.IsZero()}); !features[f] {
				n = true
				if !note {
					return true
				}
				features[f] = true
			}
		}
		return n
	}
	keep := func(s *spec.State) {
		k := string(m.Encode(nil, s))
		if seen[k] {
			return
		}
		seen[k] = true
		var c spec.State
		c.CopyFrom(s)
		out = append(out, c)
		novel(&c, true)
	}
	novel(&init, true)
	for i := 0; i < len(out) && len(out) < nBFS; i++ {
		cur := out[i]
		m.Next(&cur, &scratch, func(_ spec.Action, s *spec.State) {
			if len(out) < nBFS {
				keep(s)
			}
		})
	}
	rng := rand.New(rand.NewPCG(seed, 17))
	limit := len(out) + nWalk
	for walk := 0; walk < 4*nWalk && len(out) < limit; walk++ {
		cur := m.Init()
		for depth := 0; depth < 60 && len(out) < limit; depth++ {
			var succ []spec.State
			m.Next(&cur, &scratch, func(_ spec.Action, s *spec.State) {
				var c spec.State
				c.CopyFrom(s)
				succ = append(succ, c)
			})
			if len(succ) == 0 {
				break
			}
			// Look for novelty among a few successors only: it costs a
			// walk of the state's fields each.
			for try := 0; try < 3; try++ {
				if i := rng.IntN(len(succ)); novel(&succ[i], false) {
					succ = succ[i : i+1]
					break
				}
			}
			cur = succ[rng.IntN(len(succ))]
			keep(&cur)
		}
	}
	return out
}

// TestEncodeCompleteness: in sampled reachable states of every fault and
// variant configuration, Decode(Encode(s)) == s, and changing any one
// leaf that the presence table says is present changes Encode(s). Every
// present leaf must be in use (and so changed) in some sampled state.
func TestEncodeCompleteness(t *testing.T) {
	// The default tier samples 600 states of each configuration (300 put
	// every conditional leaf in use when this was set); the long tier
	// 6,000.
	nBFS, nWalk := 300, 300
	if testtier.IsLong() {
		nBFS, nWalk = 3000, 3000
	}
	start := time.Now()
	totalStates, totalFlips := 0, 0
	used := map[string]int{}
	for ci, c := range complConfigs() {
		m, err := spec.NewModel(c.p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		states := complSample(t, m, nBFS, nWalk, uint64(ci))
		rng := rand.New(rand.NewPCG(uint64(ci), 99))
		exercised := map[string]int{}
		nodes := complCompile(m, reflect.TypeOf(spec.State{}), "")
		var leaves []complLeaf
		var got spec.State
		var enc, flipped []byte
		failures := 0
		for i := range states {
			s := &states[i]
			enc = m.Encode(enc[:0], s)
			if err := m.Decode(enc, &got); err != nil {
				t.Fatalf("%s: state %d: Decode(Encode(s)): %v", c.name, i, err)
			}
			if a, b := complNormalise(*s), complNormalise(got); !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: state %d: Decode(Encode(s)) != s (-s +decoded):\n%s", c.name, i, cmp.Diff(a, b))
			}
			leaves = complLeaves(m, nodes, reflect.ValueOf(s).Elem(), leaves[:0])
			for _, leaf := range leaves {
				old := reflect.New(leaf.v.Type()).Elem()
				old.Set(leaf.v)
				leaf.flip(m, rng, leaf.v)
				if leaf.v.Equal(old) {
					t.Fatalf("%s: flip of %s left it at %v", c.name, leaf.path, old)
				}
				flipped = m.Encode(flipped[:0], s)
				if string(flipped) == string(enc) && failures < 10 {
					failures++
					t.Errorf("%s: state %d: changing %s from %v to %v does not change the encoding: Encode forgets it (spec/encode.go) or the presence table is wrong", c.name, i, leaf.path, old, leaf.v)
				}
				leaf.v.Set(old)
				exercised[leaf.path]++
				totalFlips++
			}
			if string(m.Encode(flipped[:0], s)) != string(enc) {
				t.Fatalf("%s: state %d not restored after the flips", c.name, i)
			}
		}
		// Every leaf present only under some parameters must be in use in
		// some sampled state of each configuration that has it; the others
		// (the same Encode code under every configuration) in some state of
		// some configuration.
		var never []string
		for _, path := range complPresentLeaves(m) {
			used[path] += exercised[path]
			if exercised[path] == 0 && complConditional(path) {
				never = append(never, path)
			}
		}
		if len(never) > 0 {
			t.Errorf("%s: fields present under these parameters were in use in none of the %d sampled states (sample more, or fix the presence table): %s", c.name, len(states), strings.Join(never, ", "))
		}
		totalStates += len(states)
		t.Logf("%s: %d states, %d present leaf paths, all changed", c.name, len(states), len(complPresentLeaves(m)))
	}
	var never []string
	for path := range used {
		if used[path] == 0 {
			never = append(never, path)
		}
	}
	sort.Strings(never)
	if len(never) > 0 {
		t.Errorf("fields in use in no sampled state of any configuration: %s", strings.Join(never, ", "))
	}
	t.Logf("%d configurations, %d states, %d single-field changes in %v", len(complConfigs()), totalStates, totalFlips, time.Since(start).Round(time.Millisecond))
}

// complNormalise makes nil and empty message slices compare equal.
func complNormalise(s spec.State) spec.State {
	if len(s.Msgs) == 0 {
		s.Msgs = nil
	}
	return s
}

// TestEncodeRelabelled: the canonicalizer's one-pass relabelled encoding
// equals the encoding of the relabelled state, in sampled reachable states
// of every configuration of complConfigs, under random relabellings.
func TestEncodeRelabelled(t *testing.T) {
	n := 200 // states by BFS, and as many by walks (the long tier: 400)
	if testtier.IsLong() {
		n = 400
	}
	for ci, c := range complConfigs() {
		m, err := spec.NewModel(c.p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rng := rand.New(rand.NewPCG(uint64(ci), 7))
		states := complSample(t, m, n, n, uint64(ci))
		for i := range states {
			bp, cp := make([]int8, c.p.Bookies), make([]int8, c.p.Clients)
			for j, b := range rng.Perm(c.p.Bookies) {
				bp[j] = int8(b)
			}
			for j, k := range rng.Perm(c.p.Clients) {
				cp[j] = int8(k)
			}
			if fused, built := m.EncodeRelabelledPair(&states[i], bp, cp); !bytes.Equal(fused, built) {
				t.Fatalf("%s: state %d relabelled by %v/%v: one-pass encoding %x, encoding of the relabelled state %x", c.name, i, bp, cp, fused, built)
			}
		}
	}
}
