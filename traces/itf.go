package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/bkcheck/bkcheck/internal/atomicfile"
	"github.com/bkcheck/bkcheck/spec"
)

// ITF is the Informal Trace Format (Apalache ADR-015, .itf.json): the
// canonical machine-readable form of a bkcheck counterexample. Values use
// the ADR's encodings: records as objects, sequences as arrays, sets as
// {"#set": [...]}, functions as {"#map": [[k, v], ...]}; model values (Nil,
// statuses, message types, bookie and client ids) as strings. Every state
// after the first records the action taken and its parameters in the
// variables mbt::actionTaken and mbt::nondetPicks, as Quint does.

// ErrITF is wrapped by every error about malformed ITF input.
var ErrITF = errors.New("malformed ITF trace")

const (
	varAction = "mbt::actionTaken"
	varPicks  = "mbt::nondetPicks"
)

// Version is bkcheck's version, recorded in ITF metadata.
var Version = "0.1.0"

// itfMeta is what #meta records about the run.
type itfMeta struct {
	Format      string          `json:"format"`
	FormatDesc  string          `json:"format-description"`
	Source      string          `json:"source"`
	Version     string          `json:"bkcheck-version"`
	Params      json.RawMessage `json:"params"` // spec.ParamsSchema's JSON
	Invariant   string          `json:"invariant"`
	Statement   string          `json:"statement"`
	Deadlock    bool            `json:"deadlock,omitempty"`
	Terminal    bool            `json:"terminal,omitempty"`
	Kind        string          `json:"kind,omitempty"`       // a CEL property's kind
	Expression  string          `json:"expression,omitempty"` // a CEL property's expression
	Description string          `json:"description"`
}

// stateVars lists the TLA+ variables of a trace of p, in declaration order.
func stateVars(p spec.Params) []string {
	vars := []string{"messages", "meta_status", "meta_fragments", "meta_last_entry", "meta_version", "b_entries", "b_fenced", "b_lac", "clients"}
	if p.Variant == "gwq" {
		vars = append(vars, "b_lafr")
	}
	if p.Faulty() {
		vars = append(vars, "b_down", "b_wiped", "b_read_only", "b_disk_full", "b_limbo", "faults_used")
	}
	if p.LossyJournal() {
		vars = append(vars, "b_unflushed", "b_durable_lac", "b_unflushed_fence")
	}
	if p.DeleteLedger {
		vars = append(vars, "meta_deleted", "b_collected", "b_volatile_fence")
	}
	if splitAddCheck(p) {
		vars = append(vars, "b_checked")
	}
	return append(vars, varAction, varPicks)
}

func bookieName(b int) string { return fmt.Sprintf("b%d", b+1) }
func clientName(c int) string { return fmt.Sprintf("c%d", c+1) }

func set(xs ...any) map[string]any { return map[string]any{"#set": nonNil(xs)} }

func nonNil(xs []any) []any {
	if xs == nil {
		return []any{}
	}
	return xs
}

func mapv(pairs ...[2]any) map[string]any {
	out := make([]any, len(pairs))
	for i, p := range pairs {
		out[i] = []any{p[0], p[1]}
	}
	return map[string]any{"#map": out}
}

func bookieSet(bs spec.Bookies, n int) map[string]any {
	var xs []any
	for b := 0; b < n; b++ {
		if bs.Has(b) {
			xs = append(xs, bookieName(b))
		}
	}
	return set(xs...)
}

func nilOr(v int8) any {
	if v == spec.Nil {
		return "Nil"
	}
	return int(v)
}

var statusITF = map[spec.Status]string{
	spec.StatusNil: "Nil", spec.StatusOpen: "STATUS_OPEN", spec.StatusInRecovery: "STATUS_IN_RECOVERY",
	spec.StatusClosed: "STATUS_CLOSED", spec.ClientWithdrawn: "CLIENT_WITHDRAWN", spec.RecoveryAborted: "RECOVERY_ABORTED",
}

var msgTypeITF = map[spec.MsgType]string{
	spec.AddEntryRequest: "AddEntryRequestMessage", spec.AddEntryResponse: "AddEntryResponseMessage",
	spec.FenceRequest: "FenceRequestMessage", spec.FenceResponse: "FenceResponseMessage",
	spec.ReadRequest: "ReadRequestMessage", spec.ReadResponse: "ReadResponseMessage",
}

var codeITF = map[uint8]string{spec.CodeOK: "OK", spec.CodeNoSuchEntry: "NoSuchEntry", spec.CodeUnknown: "Unknown", spec.CodeReadOnly: "ReadOnly"}

// entrySetsITF is a map from each bookie to a set of entries.
func entrySetsITF(sets *[spec.MaxBookies]spec.EntrySet, bookies int) map[string]any {
	var kvs [][2]any
	for b := 0; b < bookies; b++ {
		var es []any
		for _, e := range sets[b].List() {
			es = append(es, entryITF(e))
		}
		kvs = append(kvs, [2]any{bookieName(b), set(es...)})
	}
	return mapv(kvs...)
}

func entryITF(e spec.Entry) map[string]any {
	var data any = int(e.Data)
	if e.Data == 0 {
		data = "Nil"
	}
	return map[string]any{"id": int(e.ID), "data": data}
}

// messageITF renders a message record with the fields its type has in the
// spec (plus lafr under gwq and code on rejected adds).
func messageITF(k spec.MsgKey, p spec.Params) map[string]any {
	f := k.Fields()
	m := map[string]any{"type": msgTypeITF[f.Type], "bookie": bookieName(f.Bookie), "cid": clientName(f.Cid)}
	gwq := p.Variant == "gwq"
	switch f.Type {
	case spec.AddEntryRequest:
		m["entry"], m["lac"], m["recovery"] = entryITF(f.Entry), int(f.LAC), f.Recovery
		if gwq {
			m["lafr"] = int(f.LAFR)
		}
	case spec.AddEntryResponse:
		m["entry"], m["recovery"], m["success"] = entryITF(f.Entry), f.Recovery, f.Success
		if f.Code == spec.CodeReadOnly {
			m["code"] = codeITF[f.Code]
		}
	case spec.FenceResponse:
		if gwq {
			m["lafr"] = int(f.LAFR)
		} else {
			m["lac"] = int(f.LAC)
		}
	case spec.ReadRequest:
		m["entry_id"], m["fence"] = int(f.Entry.ID), f.Fence
	case spec.ReadResponse:
		m["entry"], m["fence"], m["code"] = entryITF(f.Entry), f.Fence, codeITF[f.Code]
	}
	return m
}

func fragmentITF(fr spec.Fragment, p spec.Params) map[string]any {
	m := map[string]any{"id": int(fr.ID), "ensemble": bookieSet(fr.Ensemble, p.Bookies), "first_entry_id": int(fr.First)}
	if p.Striped() {
		lay := make([]any, p.Ensemble)
		for i := range lay {
			lay[i] = bookieName(fr.Layout.At(i))
		}
		m["layout"] = lay
	}
	return m
}

// stateITF renders one state as the ITF object of its variables.
func stateITF(p spec.Params, s *spec.State) map[string]any {
	out := map[string]any{}
	msgs := make([][2]any, len(s.Msgs))
	for i, m := range s.Msgs {
		msgs[i] = [2]any{messageITF(m.Key, p), int(m.Count)}
	}
	out["messages"] = mapv(msgs...)
	out["meta_status"] = statusITF[s.MetaStatus]
	frags := []any{}
	for _, fr := range s.MetaFragmentList() {
		frags = append(frags, fragmentITF(fr, p))
	}
	out["meta_fragments"] = frags
	out["meta_last_entry"] = int(s.MetaLastEntry)
	out["meta_version"] = int(s.MetaVersion)
	var fenced, lac, lafr [][2]any
	for b := 0; b < p.Bookies; b++ {
		fenced = append(fenced, [2]any{bookieName(b), s.BFenced.Has(b)})
		lac = append(lac, [2]any{bookieName(b), int(s.BLAC[b])})
		lafr = append(lafr, [2]any{bookieName(b), int(s.BLAFR[b])})
	}
	out["b_entries"], out["b_fenced"], out["b_lac"] = entrySetsITF(&s.BEntries, p.Bookies), mapv(fenced...), mapv(lac...)
	if p.Variant == "gwq" {
		out["b_lafr"] = mapv(lafr...)
	}
	if p.Faulty() {
		out["b_down"] = bookieSet(s.BDown, p.Bookies)
		out["b_wiped"] = bookieSet(s.BWiped, p.Bookies)
		out["b_read_only"] = bookieSet(s.BReadOnly, p.Bookies)
		out["b_disk_full"] = bookieSet(s.BDiskFull, p.Bookies)
		out["b_limbo"] = bookieSet(s.BLimbo, p.Bookies)
		out["faults_used"] = map[string]any{"crashes": int(s.CrashesUsed), "disk_loss": int(s.DiskLossUsed), "reformat": int(s.ReformatUsed),
			"read_only": int(s.ReadOnlyUsed), "disk_full": int(s.DiskFullUsed), "corrupt_reads": int(s.CorruptUsed)}
	}
	if p.DeleteLedger {
		out["meta_deleted"] = s.MetaDeleted
		out["b_collected"] = bookieSet(s.BCollected, p.Bookies)
		out["b_volatile_fence"] = bookieSet(s.BVolatileFence, p.Bookies)
	}
	if splitAddCheck(p) {
		out["b_checked"] = entrySetsITF(&s.BChecked, p.Bookies)
	}
	if p.LossyJournal() {
		var durable [][2]any
		for b := 0; b < p.Bookies; b++ {
			durable = append(durable, [2]any{bookieName(b), int(s.BDurableLAC[b])})
		}
		out["b_unflushed"], out["b_durable_lac"] = entrySetsITF(&s.BUnflushed, p.Bookies), mapv(durable...)
		out["b_unflushed_fence"] = bookieSet(s.BUnflushedFence, p.Bookies)
	}
	var clients [][2]any
	for i := 0; i < p.Clients; i++ {
		c := &s.Clients[i]
		fr := []any{}
		for _, f := range c.FragmentList() {
			fr = append(fr, fragmentITF(f, p))
		}
		var curr any = "Nil"
		if cf, ok := c.CurrFragment(); ok {
			curr = fragmentITF(cf, p)
		}
		var ops []any
		for _, op := range c.PendingList() {
			o := map[string]any{"entry": entryITF(op.Entry), "fragment_id": int(op.FragmentID), "ensemble": bookieSet(op.Ensemble, p.Bookies)}
			if p.Striped() {
				lay := make([]any, p.Ensemble)
				for j := range lay {
					lay[j] = bookieName(op.Layout.At(j))
				}
				o["layout"] = lay
			}
			ops = append(ops, o)
		}
		var conf [][2]any
		for e := 0; e < p.Entries; e++ {
			conf = append(conf, [2]any{e + 1, bookieSet(c.Confirmed[e], p.Bookies)})
		}
		var rs []any
		for _, k := range c.Responses() {
			rs = append(rs, messageITF(k, p))
		}
		rec := map[string]any{
			"id": clientName(i), "meta_version": nilOr(c.MetaVersion), "status": statusITF[c.Status],
			"fragments": fr, "curr_fragment": curr, "pending_add_ops": set(ops...),
			"lap": int(c.LAP), "lac": int(c.LAC), "confirmed": mapv(conf...),
			"fenced": bookieSet(c.Fenced, p.Bookies), "recovery_ensemble": bookieSet(c.RecoveryEns, p.Bookies),
			"curr_read_entry": nilOr(c.CurrReadEntry), "read_responses": set(rs...),
			"recovery_phase": int(c.RecoveryPhase), "last_recoverable_entry": nilOr(c.LastRecoverable),
		}
		if p.Variant == "gwq" {
			rec["lafr"] = int(c.LAFR)
		}
		if p.Striped() {
			lay := make([]any, p.Ensemble)
			for j := range lay {
				lay[j] = bookieName(c.RecoveryLay.At(j))
			}
			rec["recovery_layout"] = lay
		}
		clients = append(clients, [2]any{clientName(i), rec})
	}
	out["clients"] = mapv(clients...)
	return out
}

func picksITF(a spec.Action, p spec.Params) map[string]any {
	m := map[string]any{}
	if a.Client >= 0 {
		m["client"] = clientName(int(a.Client))
	}
	if a.Bookie >= 0 {
		m["bookie"] = bookieName(int(a.Bookie))
	}
	if a.Entry > 0 {
		m["entry"] = int(a.Entry)
	}
	m["lost"] = bookieSet(a.Lost, p.Bookies)
	return m
}

// EncodeITF writes t as an ITF JSON document.
func EncodeITF(w io.Writer, t *Trace) error {
	p := t.Params
	p.EnsureDefaults()
	params, err := spec.ParamsSchema.EncodeJSON(&p)
	if err != nil {
		return err
	}
	doc := map[string]any{
		"#meta": itfMeta{
			Format: "ITF", FormatDesc: "https://apalache-mc.org/docs/adr/015adr-trace.html", Source: "bkcheck",
			Version: Version, Params: params, Invariant: t.Invariant, Statement: t.Statement,
			Deadlock: t.Deadlock, Terminal: t.Terminal, Kind: t.Kind, Expression: t.Expression,
			Description: fmt.Sprintf("%s of %d states found by bkcheck on %s", map[bool]string{false: "counterexample", true: "witness"}[t.Kind == "probe"], len(t.Steps), p),
		},
		"params": []string{},
		"vars":   stateVars(p),
	}
	states := make([]any, len(t.Steps))
	for i, st := range t.Steps {
		s := stateITF(p, &st.State)
		s["#meta"] = map[string]any{"index": i}
		if st.Initial {
			s[varAction] = "init"
			s[varPicks] = map[string]any{}
		} else {
			s[varAction] = st.Action.Kind.String()
			s[varPicks] = picksITF(st.Action, p)
		}
		states[i] = s
	}
	doc["states"] = states
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ---------------------------------------------------------------- decoding

// dec reads ITF values into spec types, remembering the first error with
// the path where it happened.
type dec struct {
	p    spec.Params
	err  error
	path []string
}

func (d *dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s: %s", ErrITF, strings.Join(d.path, "."), fmt.Sprintf(format, args...))
	}
}

func (d *dec) at(name string, f func()) {
	d.path = append(d.path, name)
	f()
	d.path = d.path[:len(d.path)-1]
}

func (d *dec) obj(v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		d.fail("want an object, got %T", v)
		return map[string]any{}
	}
	return m
}

func (d *dec) field(m map[string]any, name string) any {
	v, ok := m[name]
	if !ok {
		d.fail("missing field %q", name)
	}
	return v
}

// since reads a field that traces of older bkcheck versions lack: absent,
// it is def (the zero value such traces' models had).
func since(m map[string]any, name string, def any) any {
	if v, ok := m[name]; ok {
		return v
	}
	return def
}

func (d *dec) int(v any, lo, hi int) int8 {
	n, ok := v.(json.Number)
	if !ok {
		if o, isObj := v.(map[string]any); isObj {
			if s, ok := o["#bigint"].(string); ok {
				n = json.Number(s)
			}
		}
	}
	i, err := strconv.Atoi(string(n))
	if err != nil || i < lo || i > hi {
		d.fail("want an integer in [%d,%d], got %v", lo, hi, v)
		return 0
	}
	return int8(i)
}

func (d *dec) nilInt(v any, hi int) int8 {
	if s, ok := v.(string); ok && s == "Nil" {
		return spec.Nil
	}
	return d.int(v, 0, hi)
}

func (d *dec) bool(v any) bool {
	b, ok := v.(bool)
	if !ok {
		d.fail("want a boolean, got %v", v)
	}
	return b
}

func (d *dec) str(v any) string {
	s, ok := v.(string)
	if !ok {
		d.fail("want a string, got %v", v)
	}
	return s
}

func (d *dec) list(v any) []any {
	l, ok := v.([]any)
	if !ok {
		d.fail("want an array, got %T", v)
	}
	return l
}

func (d *dec) tagged(v any, tag string) []any {
	o, ok := v.(map[string]any)
	if !ok {
		d.fail("want {%q: [...]}, got %T", tag, v)
		return nil
	}
	l, ok := o[tag].([]any)
	if !ok {
		d.fail("want {%q: [...]}", tag)
	}
	return l
}

// pairs reads a {"#map": [[k, v], ...]}.
func (d *dec) pairs(v any) [][2]any {
	var out [][2]any
	for _, e := range d.tagged(v, "#map") {
		kv, ok := e.([]any)
		if !ok || len(kv) != 2 {
			d.fail("a #map entry is not a [key, value] pair")
			return nil
		}
		out = append(out, [2]any{kv[0], kv[1]})
	}
	return out
}

// perBookie is pairs for a function of the bookies: every bookie b1..bN
// of the trace's parameters must be a key exactly once, so that a trace
// whose #meta claims other parameters than its states show is rejected.
func (d *dec) perBookie(v any) [][2]any { return d.perID(v, "b", d.p.Bookies) }

// perID is pairs for a function whose keys must be prefix1..prefixN, each
// exactly once.
func (d *dec) perID(v any, prefix string, n int) [][2]any {
	kvs := d.pairs(v)
	seen := make([]bool, n+1)
	for _, kv := range kvs {
		if i := d.id(kv[0], prefix, n); d.err == nil {
			if seen[i+1] {
				d.fail("%s%d appears twice", prefix, i+1)
			}
			seen[i+1] = true
		}
	}
	for i := 1; i <= n && d.err == nil; i++ {
		if !seen[i] {
			d.fail("no %s%d, though #meta.params has %d", prefix, i, n)
		}
	}
	return kvs
}

func (d *dec) id(v any, prefix string, n int) int {
	s := d.str(v)
	i, err := strconv.Atoi(strings.TrimPrefix(s, prefix))
	if err != nil || !strings.HasPrefix(s, prefix) || i < 1 || i > n {
		d.fail("want %s1..%s%d, got %q", prefix, prefix, n, s)
		return 0
	}
	return i - 1
}

func (d *dec) bookie(v any) int { return d.id(v, "b", d.p.Bookies) }
func (d *dec) client(v any) int { return d.id(v, "c", d.p.Clients) }

func (d *dec) bookies(v any) spec.Bookies {
	var out spec.Bookies
	for _, x := range d.tagged(v, "#set") {
		out |= 1 << uint(d.bookie(x))
	}
	return out
}

func (d *dec) layout(v any) spec.Layout {
	var l spec.Layout
	xs := d.list(v)
	if len(xs) != d.p.Ensemble {
		d.fail("a layout has %d positions, want %d", len(xs), d.p.Ensemble)
	}
	for i, x := range xs {
		if i < d.p.Ensemble {
			l = l.With(i, d.bookie(x))
		}
	}
	return l
}

// entrySets reads what entrySetsITF writes into dst.
func (d *dec) entrySets(v any, dst *[spec.MaxBookies]spec.EntrySet) {
	for _, kv := range d.perBookie(v) {
		b := d.bookie(kv[0])
		for _, e := range d.tagged(kv[1], "#set") {
			en := d.entry(e)
			if en.ID < 1 || int(en.ID) > d.p.Entries || en.Data < 1 {
				d.fail("stored entry %v out of range", en)
				continue
			}
			dst[b] = dst[b].Add(en)
		}
	}
}

func (d *dec) entry(v any) spec.Entry {
	m := d.obj(v)
	e := spec.Entry{ID: d.int(d.field(m, "id"), 0, spec.MaxEntries+1)}
	if s, ok := m["data"].(string); ok && s == "Nil" {
		return e
	}
	e.Data = d.int(d.field(m, "data"), 1, spec.MaxEntries)
	return e
}

// fragments decodes a list of fragments into dst and returns how many
// there are.
func (d *dec) fragments(v any, dst []spec.Fragment) int8 {
	var n int8
	for i, f := range d.list(v) {
		if i >= len(dst) {
			d.fail("too many fragments")
			break
		}
		dst[i] = d.fragment(f)
		n++
	}
	return n
}

func (d *dec) fragment(v any) spec.Fragment {
	m := d.obj(v)
	f := spec.Fragment{
		ID:       d.int(d.field(m, "id"), 0, 127),
		Ensemble: d.bookies(d.field(m, "ensemble")),
		First:    d.int(d.field(m, "first_entry_id"), 0, spec.MaxEntries+1),
	}
	if d.p.Striped() {
		d.at("layout", func() { f.Layout = d.layout(d.field(m, "layout")) })
	}
	return f
}

func lookup[K comparable](d *dec, table map[K]string, s string) K {
	for k, v := range table {
		if v == s {
			return k
		}
	}
	d.fail("unknown value %q", s)
	var zero K
	return zero
}

func (d *dec) message(v any) spec.MsgKey {
	m := d.obj(v)
	f := spec.MsgFields{
		Type:   lookup(d, msgTypeITF, d.str(d.field(m, "type"))),
		Bookie: d.bookie(d.field(m, "bookie")),
		Cid:    d.client(d.field(m, "cid")),
	}
	if e, ok := m["entry"]; ok {
		f.Entry = d.entry(e)
	}
	if x, ok := m["entry_id"]; ok {
		f.Entry.ID = d.int(x, 0, spec.MaxEntries+1)
	}
	if x, ok := m["lac"]; ok {
		f.LAC = d.int(x, 0, spec.MaxEntries)
	}
	if x, ok := m["lafr"]; ok {
		f.LAFR = d.int(x, 0, spec.MaxEntries)
	}
	if x, ok := m["recovery"]; ok {
		f.Recovery = d.bool(x)
	}
	if x, ok := m["success"]; ok {
		f.Success = d.bool(x)
	}
	if x, ok := m["fence"]; ok {
		f.Fence = d.bool(x)
	}
	if x, ok := m["code"]; ok {
		f.Code = lookup(d, codeITF, d.str(x))
	}
	return f.Key()
}

func (d *dec) state(v any) spec.State {
	p := d.p
	s := p.Init()
	m := d.obj(v)
	d.at("messages", func() {
		for _, kv := range d.pairs(d.field(m, "messages")) {
			s.Msgs = append(s.Msgs, spec.Msg{Key: d.message(kv[0]), Count: d.int(kv[1], -1, 1)})
		}
		sort.Slice(s.Msgs, func(i, j int) bool { return s.Msgs[i].Key < s.Msgs[j].Key })
		for i := 1; i < len(s.Msgs); i++ {
			if s.Msgs[i].Key == s.Msgs[i-1].Key {
				d.fail("the same message record appears twice")
			}
		}
	})
	d.at("meta_status", func() { s.MetaStatus = lookup(d, statusITF, d.str(d.field(m, "meta_status"))) })
	d.at("meta_fragments", func() { s.NumMetaFragments = d.fragments(d.field(m, "meta_fragments"), s.MetaFragments[:]) })
	d.at("meta_last_entry", func() { s.MetaLastEntry = d.int(d.field(m, "meta_last_entry"), 0, spec.MaxEntries) })
	d.at("meta_version", func() { s.MetaVersion = d.int(d.field(m, "meta_version"), 0, 127) })
	d.at("b_entries", func() { d.entrySets(d.field(m, "b_entries"), &s.BEntries) })
	d.at("b_fenced", func() {
		for _, kv := range d.perBookie(d.field(m, "b_fenced")) {
			if b := d.bookie(kv[0]); d.bool(kv[1]) {
				s.BFenced |= 1 << uint(b)
			}
		}
	})
	d.at("b_lac", func() {
		for _, kv := range d.perBookie(d.field(m, "b_lac")) {
			s.BLAC[d.bookie(kv[0])] = d.int(kv[1], 0, spec.MaxEntries)
		}
	})
	if p.Variant == "gwq" {
		d.at("b_lafr", func() {
			for _, kv := range d.perBookie(d.field(m, "b_lafr")) {
				s.BLAFR[d.bookie(kv[0])] = d.int(kv[1], 0, spec.MaxEntries)
			}
		})
	}
	if p.Faulty() {
		d.at("b_down", func() { s.BDown = d.bookies(d.field(m, "b_down")) })
		noBookies := map[string]any{"#set": []any{}}
		d.at("b_wiped", func() { s.BWiped = d.bookies(since(m, "b_wiped", noBookies)) })
		d.at("b_read_only", func() { s.BReadOnly = d.bookies(d.field(m, "b_read_only")) })
		d.at("b_disk_full", func() { s.BDiskFull = d.bookies(since(m, "b_disk_full", noBookies)) })
		d.at("b_limbo", func() { s.BLimbo = d.bookies(d.field(m, "b_limbo")) })
		d.at("faults_used", func() {
			fu := d.obj(d.field(m, "faults_used"))
			s.CrashesUsed = d.int(d.field(fu, "crashes"), 0, p.Crashes)
			zero := json.Number("0")
			s.DiskLossUsed = d.int(since(fu, "disk_loss", zero), 0, p.DiskLoss)
			s.ReformatUsed = d.int(since(fu, "reformat", since(fu, "data_loss", zero)), 0, p.Reformat) // 0.1: data_loss
			s.ReadOnlyUsed = d.int(d.field(fu, "read_only"), 0, p.ReadOnly)
			s.DiskFullUsed = d.int(since(fu, "disk_full", zero), 0, p.DiskFull)
			s.CorruptUsed = d.int(since(fu, "corrupt_reads", zero), 0, p.CorruptReads)
		})
	}
	if p.DeleteLedger {
		d.at("meta_deleted", func() { s.MetaDeleted = d.bool(d.field(m, "meta_deleted")) })
		d.at("b_collected", func() { s.BCollected = d.bookies(d.field(m, "b_collected")) })
		d.at("b_volatile_fence", func() { s.BVolatileFence = d.bookies(d.field(m, "b_volatile_fence")) })
	}
	if splitAddCheck(p) {
		d.at("b_checked", func() { d.entrySets(d.field(m, "b_checked"), &s.BChecked) })
	}
	if p.LossyJournal() {
		d.at("b_unflushed", func() { d.entrySets(d.field(m, "b_unflushed"), &s.BUnflushed) })
		d.at("b_durable_lac", func() {
			for _, kv := range d.perBookie(d.field(m, "b_durable_lac")) {
				s.BDurableLAC[d.bookie(kv[0])] = d.int(kv[1], 0, spec.MaxEntries)
			}
		})
		d.at("b_unflushed_fence", func() { s.BUnflushedFence = d.bookies(d.field(m, "b_unflushed_fence")) })
	}
	d.at("clients", func() {
		for _, kv := range d.perID(d.field(m, "clients"), "c", d.p.Clients) {
			i := d.client(kv[0])
			d.at(clientName(i), func() { s.Clients[i] = d.client1(kv[1]) })
		}
	})
	return s
}

func (d *dec) client1(v any) spec.Client {
	p := d.p
	m := d.obj(v)
	var c spec.Client
	c.MetaVersion = d.nilInt(d.field(m, "meta_version"), 127)
	c.Status = lookup(d, statusITF, d.str(d.field(m, "status")))
	c.NumFragments = d.fragments(d.field(m, "fragments"), c.Fragments[:])
	var ops []spec.PendingAddOp
	for _, o := range d.tagged(d.field(m, "pending_add_ops"), "#set") {
		om := d.obj(o)
		op := spec.PendingAddOp{Entry: d.entry(d.field(om, "entry")), FragmentID: d.int(d.field(om, "fragment_id"), 0, 127), Ensemble: d.bookies(d.field(om, "ensemble"))}
		if p.Striped() {
			op.Layout = d.layout(d.field(om, "layout"))
		}
		ops = append(ops, op)
	}
	if len(ops) > len(c.Pending) {
		d.fail("too many pending add ops")
		ops = ops[:len(c.Pending)]
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Less(ops[j]) })
	copy(c.Pending[:], ops)
	c.NumPending = int8(len(ops))
	c.LAP = d.int(d.field(m, "lap"), 0, spec.MaxEntries)
	c.LAC = d.int(d.field(m, "lac"), 0, spec.MaxEntries)
	if p.Variant == "gwq" {
		c.LAFR = d.int(d.field(m, "lafr"), 0, spec.MaxEntries)
	}
	for _, kv := range d.pairs(d.field(m, "confirmed")) {
		e := d.int(kv[0], 1, p.Entries)
		if e >= 1 {
			c.Confirmed[e-1] = d.bookies(kv[1])
		}
	}
	c.Fenced = d.bookies(d.field(m, "fenced"))
	c.RecoveryEns = d.bookies(d.field(m, "recovery_ensemble"))
	if p.Striped() {
		c.RecoveryLay = d.layout(d.field(m, "recovery_layout"))
	}
	c.CurrReadEntry = d.nilInt(d.field(m, "curr_read_entry"), spec.MaxEntries+1)
	var rs []spec.MsgKey
	for _, r := range d.tagged(d.field(m, "read_responses"), "#set") {
		rs = append(rs, d.message(r))
	}
	if len(rs) > len(c.ReadResponses) {
		d.fail("too many read responses")
		rs = rs[:len(c.ReadResponses)]
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
	copy(c.ReadResponses[:], rs)
	c.NumResponses = int8(len(rs))
	c.RecoveryPhase = uint8(d.int(d.field(m, "recovery_phase"), 0, 2))
	c.LastRecoverable = d.nilInt(d.field(m, "last_recoverable_entry"), spec.MaxEntries+1)
	// curr_fragment must be Last(fragments), as in every reachable state.
	if cf, ok := c.CurrFragment(); ok {
		if d.err == nil && !bytes.Equal(mustJSON(fragmentITF(cf, p)), mustJSON(normalise(d.field(m, "curr_fragment")))) {
			d.fail("curr_fragment is not the last of fragments")
		}
	} else if s, _ := m["curr_fragment"].(string); s != "Nil" {
		d.fail("curr_fragment must be Nil when fragments is empty")
	}
	return c
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// normalise turns json.Number back into plain numbers for comparison.
func normalise(v any) any {
	switch x := v.(type) {
	case json.Number:
		i, _ := x.Int64()
		return int(i)
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalise(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalise(e)
		}
		return out
	}
	return v
}

// renamedActions maps action names of older traces to today's.
var renamedActions = map[string]string{
	"BookieLosesData": "BookieRejoinsEmpty", // 0.1: --data-loss
}

func (d *dec) action(st map[string]any) spec.Action {
	a := spec.Action{Client: -1, Bookie: -1}
	name := d.str(d.field(st, varAction))
	if renamed, ok := renamedActions[name]; ok {
		name = renamed
	}
	k, ok := spec.ActionKindByName(name)
	if !ok {
		d.fail("unknown action %q", name)
	}
	a.Kind = k
	picks := d.obj(d.field(st, varPicks))
	if c, ok := picks["client"]; ok {
		a.Client = int8(d.client(c))
	}
	if b, ok := picks["bookie"]; ok {
		a.Bookie = int8(d.bookie(b))
	}
	if e, ok := picks["entry"]; ok {
		a.Entry = d.int(e, 1, spec.MaxEntries+1)
	}
	if l, ok := picks["lost"]; ok {
		a.Lost = d.bookies(l)
	}
	return a
}

// DecodeITF reads an ITF document written by EncodeITF. It never panics:
// malformed input gives an error wrapping ErrITF that says where.
func DecodeITF(r io.Reader) (*Trace, error) {
	jd := json.NewDecoder(r)
	jd.UseNumber()
	var raw map[string]json.RawMessage
	if err := jd.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrITF, err)
	}
	var meta itfMeta
	if err := json.Unmarshal(raw["#meta"], &meta); err != nil {
		return nil, fmt.Errorf("%w: #meta: %v", ErrITF, err)
	}
	if meta.Source != "bkcheck" {
		return nil, fmt.Errorf("%w: #meta.source is %q, not a bkcheck trace", ErrITF, meta.Source)
	}
	p, err := decodeParams(meta.Params)
	if err != nil {
		return nil, fmt.Errorf("%w: #meta.params: %v", ErrITF, err)
	}
	var states []any
	sd := json.NewDecoder(bytes.NewReader(raw["states"]))
	sd.UseNumber()
	if err := sd.Decode(&states); err != nil {
		return nil, fmt.Errorf("%w: states: %v", ErrITF, err)
	}
	if len(states) == 0 {
		return nil, fmt.Errorf("%w: no states", ErrITF)
	}
	d := &dec{p: p}
	t := &Trace{Params: p, Invariant: meta.Invariant, Statement: meta.Statement, Deadlock: meta.Deadlock, Terminal: meta.Terminal,
		Kind: meta.Kind, Expression: meta.Expression}
	switch t.Kind {
	case "", "invariant", "terminal", "eventually", "probe":
	default:
		return nil, fmt.Errorf("%w: #meta.kind is %q, not invariant, terminal, eventually or probe", ErrITF, t.Kind)
	}
	for i, sv := range states {
		d.at(fmt.Sprintf("states[%d]", i), func() {
			st := d.obj(sv)
			step := Step{Initial: i == 0, State: d.state(st)}
			if i > 0 {
				step.Action = d.action(st)
			}
			t.Steps = append(t.Steps, step)
		})
		if d.err != nil {
			return nil, d.err
		}
	}
	return t, nil
}

// decodeParams reads #meta.params: the schema's JSON (kebab-case keys), or
// the Go field names traces of bkcheck 0.1.0 used.
func decodeParams(raw json.RawMessage) (spec.Params, error) {
	var p spec.Params
	if len(raw) == 0 {
		return p, errors.New("missing")
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return p, err
	}
	if _, legacy := keys["Bookies"]; legacy {
		var err error
		if p, err = spec.DecodeLegacyParams(raw); err != nil {
			return p, err
		}
	} else if err := spec.ParamsSchema.DecodeJSON(raw, &p); err != nil {
		return p, err
	}
	p.EnsureDefaults()
	return p, p.Validate()
}

// ReadITFFile reads the ITF trace in the file at path (DecodeITF).
func ReadITFFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return DecodeITF(f)
}

// WriteITFFile writes t as ITF JSON to path, atomically: the file appears
// whole or not at all, readable by everyone (traces are meant to be shared).
func WriteITFFile(path string, t *Trace) error {
	return atomicfile.Write(path, func(w io.Writer) error { return EncodeITF(w, t) })
}

// splitAddCheck reports whether p's variant splits a bookie's add in two
// steps (its state then records the adds checked but not stored).
func splitAddCheck(p spec.Params) bool {
	v, _ := spec.VariantByName(p.Variant)
	return v.SplitAddCheck
}
