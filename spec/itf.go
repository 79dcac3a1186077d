package spec

import (
	"encoding/json"
	"sort"

	"github.com/bkcheck/bkcheck/vocab"
)

// This file is the state's ITF form (Apalache ADR-015), variable by
// variable: what package traces writes and reads for this model. Each
// variable's encoder and decoder sit in its row of stateVars (vocab.go).

func bookieName(b int) string { return vocab.ID("b", b) }
func clientName(c int) string { return vocab.ID("c", c) }

var statusITF = map[Status]string{
	StatusNil: "Nil", StatusOpen: "STATUS_OPEN", StatusInRecovery: "STATUS_IN_RECOVERY",
	StatusClosed: "STATUS_CLOSED", ClientWithdrawn: "CLIENT_WITHDRAWN", RecoveryAborted: "RECOVERY_ABORTED",
	StatusClosing: "CLOSING",
}

var msgTypeITF = map[MsgType]string{
	AddEntryRequest: "AddEntryRequestMessage", AddEntryResponse: "AddEntryResponseMessage",
	FenceRequest: "FenceRequestMessage", FenceResponse: "FenceResponseMessage",
	ReadRequest: "ReadRequestMessage", ReadResponse: "ReadResponseMessage",
}

var codeITF = map[uint8]string{CodeOK: "OK", CodeNoSuchEntry: "NoSuchEntry", CodeUnknown: "Unknown", CodeReadOnly: "ReadOnly"}

func (m *vocabModel) bookieSet(bs Bookies) map[string]any {
	var xs []any
	for b := 0; b < m.P.Bookies; b++ {
		if bs.Has(b) {
			xs = append(xs, bookieName(b))
		}
	}
	return vocab.Set(xs...)
}

// failuresITF is a failure map as a function from ensemble index
// (0-based, as Java's) to bookie.
func (m *vocabModel) failuresITF(f Failures) any {
	var kvs [][2]any
	for i := 0; i < m.P.Ensemble; i++ {
		if b, ok := f.At(i); ok {
			kvs = append(kvs, [2]any{i, bookieName(b)})
		}
	}
	return vocab.Map(kvs...)
}

// mappingITF is a map from bookie to bookie (State.RWMap).
func (m *vocabModel) mappingITF(f Failures) any {
	var kvs [][2]any
	for b := 0; b < m.P.Bookies; b++ {
		if t, ok := f.At(b); ok {
			kvs = append(kvs, [2]any{bookieName(b), bookieName(t)})
		}
	}
	return vocab.Map(kvs...)
}

// unreadableITF is the worker's set of unreadable entries, or Nil.
func unreadableITF(c uint16) any {
	if c&cacheSet == 0 {
		return "Nil"
	}
	xs := []any{}
	for i := 0; i < MaxEntries; i++ {
		if c&(1<<uint(i)) != 0 {
			xs = append(xs, i+1)
		}
	}
	return map[string]any{"#set": xs}
}

// triedITF is a set of fragment positions (from 1).
func triedITF(t uint16) any {
	xs := []any{}
	for i := 0; i < maxFragments; i++ {
		if t&(1<<uint(i)) != 0 {
			xs = append(xs, i+1)
		}
	}
	return map[string]any{"#set": xs}
}

// perBookie is a function of the bookies with value f(b).
func (m *vocabModel) perBookie(f func(b int) any) map[string]any {
	kvs := make([][2]any, m.P.Bookies)
	for b := range kvs {
		kvs[b] = [2]any{bookieName(b), f(b)}
	}
	return vocab.Map(kvs...)
}

// entrySets is a map from each bookie to a set of entries.
func (m *vocabModel) entrySets(sets *[MaxBookies]EntrySet) map[string]any {
	return m.perBookie(func(b int) any {
		var es []any
		for _, e := range sets[b].List() {
			es = append(es, entryITF(e))
		}
		return vocab.Set(es...)
	})
}

func entryITF(e Entry) map[string]any {
	var data any = int(e.Data)
	if e.Data == 0 {
		data = "Nil"
	}
	return map[string]any{"id": int(e.ID), "data": data}
}

// messageITF renders a message record with the fields its type has in the
// spec (plus lafr under gwq, code on rejected adds, and the ensemble index
// of the Java writer's adds).
func (m *vocabModel) messageITF(k MsgKey) map[string]any {
	f := k.Fields()
	out := map[string]any{"type": msgTypeITF[f.Type], "bookie": bookieName(f.Bookie), "cid": clientName(f.Cid)}
	lafr := m.P.HasLAFR()
	switch f.Type {
	case AddEntryRequest:
		out["entry"], out["lac"], out["recovery"] = entryITF(f.Entry), int(f.LAC), f.Recovery
		if lafr {
			out["lafr"] = int(f.LAFR)
		}
		m.javaIndex(out, f)
	case AddEntryResponse:
		out["entry"], out["recovery"], out["success"] = entryITF(f.Entry), f.Recovery, f.Success
		if f.Code == CodeReadOnly {
			out["code"] = codeITF[f.Code]
		}
		m.javaIndex(out, f)
	case FenceResponse:
		if lafr {
			out["lafr"] = int(f.LAFR)
		} else {
			out["lac"] = int(f.LAC)
		}
		if f.Code != CodeOK {
			out["code"] = codeITF[f.Code] // a limbo bookie's Unknown
		}
	case ReadRequest:
		out["entry_id"], out["fence"] = int(f.Entry.ID), f.Fence
	case ReadResponse:
		out["entry"], out["fence"], out["code"] = entryITF(f.Entry), f.Fence, codeITF[f.Code]
	}
	return out
}

// javaIndex adds the ensemble index a Java writer's add was sent for.
func (m *vocabModel) javaIndex(out map[string]any, f MsgFields) {
	if m.P.JavaAddPath() && !f.Recovery {
		out["index"] = f.Index
	}
}

func (m *vocabModel) layoutITF(l Layout) []any {
	lay := make([]any, m.P.Ensemble)
	for i := range lay {
		lay[i] = bookieName(l.At(i))
	}
	return lay
}

func (m *vocabModel) fragmentITF(fr Fragment) map[string]any {
	out := map[string]any{"id": int(fr.ID), "ensemble": m.bookieSet(fr.Ensemble), "first_entry_id": int(fr.First)}
	if m.P.Ordered() {
		out["layout"] = m.layoutITF(fr.Layout)
	}
	return out
}

func (m *vocabModel) fragmentsITF(fs []Fragment) []any {
	out := []any{}
	for _, f := range fs {
		out = append(out, m.fragmentITF(f))
	}
	return out
}

func (m *vocabModel) messagesITF(s *State) any {
	msgs := make([][2]any, len(s.Msgs))
	for i, msg := range s.Msgs {
		msgs[i] = [2]any{m.messageITF(msg.Key), int(msg.Count)}
	}
	return vocab.Map(msgs...)
}

func (m *vocabModel) clientsITF(s *State) any {
	p := m.P
	var clients [][2]any
	for i := 0; i < p.Clients; i++ {
		c := &s.Clients[i]
		var curr any = "Nil"
		if cf, ok := c.CurrFragment(); ok {
			curr = m.fragmentITF(cf)
		}
		var ops []any
		for _, op := range c.PendingList() {
			o := map[string]any{"entry": entryITF(op.Entry), "fragment_id": int(op.FragmentID), "ensemble": m.bookieSet(op.Ensemble)}
			if p.Ordered() {
				o["layout"] = m.layoutITF(op.Layout)
			}
			ops = append(ops, o)
		}
		var conf [][2]any
		for e := 0; e < p.Entries; e++ {
			conf = append(conf, [2]any{e + 1, m.bookieSet(c.Confirmed[e])})
		}
		var rs []any
		for _, k := range c.Responses() {
			rs = append(rs, m.messageITF(k))
		}
		rec := map[string]any{
			"id": clientName(i), "meta_version": vocab.NilOr(c.MetaVersion), "status": statusITF[c.Status],
			"fragments": m.fragmentsITF(c.FragmentList()), "curr_fragment": curr, "pending_add_ops": vocab.Set(ops...),
			"lap": int(c.LAP), "lac": int(c.LAC), "confirmed": vocab.Map(conf...),
			"fenced": m.bookieSet(c.Fenced), "recovery_ensemble": m.bookieSet(c.RecoveryEns),
			"curr_read_entry": vocab.NilOr(c.CurrReadEntry), "read_responses": vocab.Set(rs...),
			"recovery_phase": int(c.RecoveryPhase), "last_recoverable_entry": vocab.NilOr(c.LastRecoverable),
		}
		if p.HasLAFR() {
			rec["lafr"] = int(c.LAFR)
		}
		if p.SequenceReads() {
			rec["read_next"] = int(c.ReadNext)
		}
		if p.Ordered() {
			rec["recovery_layout"] = m.layoutITF(c.RecoveryLay)
		}
		if p.JavaAddPath() {
			var done [][2]any
			for e := 0; e < p.Entries; e++ {
				done = append(done, [2]any{e + 1, m.bookieSet(c.DoneEns[e])})
			}
			rec["ensemble_change"] = changeNames[c.Change]
			rec["change_failed"] = m.failuresITF(c.ChangeFailed)
			rec["change_original"] = m.bookieSet(c.ChangeOrig)
			rec["delayed_failed"] = m.failuresITF(c.DelayedFailed)
			rec["ensemble_changes"] = int(c.Changes)
			rec["acked_op_ensembles"] = vocab.Map(done...)
			if p.Ordered() {
				// Layouts of what is not set are left out (Nil, or no key):
				// the zero layout would name b1 at every position.
				var lays [][2]any
				for e := 0; e < p.Entries; e++ {
					if c.DoneEns[e] != 0 {
						lays = append(lays, [2]any{e + 1, m.layoutITF(c.DoneLay[e])})
					}
				}
				var orig any = "Nil"
				if c.ChangeOrig != 0 {
					orig = m.layoutITF(c.ChangeOrigLay)
				}
				rec["change_original_layout"] = orig
				rec["acked_op_layouts"] = vocab.Map(lays...)
			}
			if p.CreateWindow {
				var created any = "Nil"
				if cr := c.Created; cr.Ensemble != 0 {
					o := map[string]any{"fragment_id": int(cr.FragmentID), "ensemble": m.bookieSet(cr.Ensemble)}
					if p.Ordered() {
						o["layout"] = m.layoutITF(cr.Layout)
					}
					created = o
				}
				rec["created_add_op"] = created
			}
		}
		clients = append(clients, [2]any{clientName(i), rec})
	}
	return vocab.Map(clients...)
}

func (m *vocabModel) faultsUsedITF(s *State) any {
	return map[string]any{"crashes": int(s.CrashesUsed), "disk_loss": int(s.DiskLossUsed), "reformat": int(s.ReformatUsed),
		"read_only": int(s.ReadOnlyUsed), "disk_full": int(s.DiskFullUsed), "corrupt_reads": int(s.CorruptUsed)}
}

// ---------------------------------------------------------------- decoding

// itfDec reads ITF values into this model's types.
type itfDec struct {
	*vocab.Decoder
	p Params
}

func (d itfDec) bookie(v any) int { return d.ID(v, "b", d.p.Bookies) }
func (d itfDec) client(v any) int { return d.ID(v, "c", d.p.Clients) }

func (d itfDec) perBookie(v any) [][2]any { return d.PerID(v, "b", d.p.Bookies) }

func (d itfDec) bookies(v any) Bookies {
	var out Bookies
	for _, x := range d.Tagged(v, "#set") {
		out |= 1 << uint(d.bookie(x))
	}
	return out
}

func (d itfDec) perBookieInts(v any, dst *[MaxBookies]int8) {
	for _, kv := range d.perBookie(v) {
		dst[d.bookie(kv[0])] = d.Int(kv[1], 0, MaxEntries)
	}
}

func (d itfDec) mapping(v any) Failures {
	var f Failures
	for _, kv := range d.Pairs(v) {
		f = f.Put(d.bookie(kv[0]), d.bookie(kv[1]))
	}
	return f
}

func (d itfDec) unreadable(v any) uint16 {
	if s, ok := v.(string); ok && s == "Nil" {
		return 0
	}
	c := cacheSet
	for _, x := range d.Tagged(v, "#set") {
		if i := d.Int(x, 1, d.p.Entries); i >= 1 {
			c |= 1 << uint(i-1)
		}
	}
	return c
}

func (d itfDec) tried(v any) uint16 {
	var t uint16
	for _, x := range d.Tagged(v, "#set") {
		if i := d.Int(x, 1, maxFragments); i >= 1 {
			t |= 1 << uint(i-1)
		}
	}
	return t
}

func (d itfDec) failures(v any) Failures {
	var f Failures
	for _, kv := range d.Pairs(v) {
		if i := d.Int(kv[0], 0, d.p.Ensemble-1); i >= 0 {
			f = f.Put(int(i), d.bookie(kv[1]))
		}
	}
	return f
}

func (d itfDec) layout(v any) Layout {
	var l Layout
	xs := d.List(v)
	if len(xs) != d.p.Ensemble {
		d.Fail("a layout has %d positions, want %d", len(xs), d.p.Ensemble)
	}
	for i, x := range xs {
		if i < d.p.Ensemble {
			l = l.With(i, d.bookie(x))
		}
	}
	return l
}

// entrySets reads what entrySets writes into dst.
func (d itfDec) entrySets(v any, dst *[MaxBookies]EntrySet) {
	for _, kv := range d.perBookie(v) {
		b := d.bookie(kv[0])
		for _, e := range d.Tagged(kv[1], "#set") {
			en := d.entry(e)
			if en.ID < 1 || int(en.ID) > d.p.Entries || en.Data < 1 {
				d.Fail("stored entry %v out of range", en)
				continue
			}
			dst[b] = dst[b].Add(en)
		}
	}
}

func (d itfDec) entry(v any) Entry {
	m := d.Obj(v)
	e := Entry{ID: d.Int(d.Field(m, "id"), 0, MaxEntries+1)}
	if s, ok := m["data"].(string); ok && s == "Nil" {
		return e
	}
	e.Data = d.Int(d.Field(m, "data"), 1, MaxEntries)
	return e
}

// fragments decodes a list of fragments into dst and returns how many
// there are.
func (d itfDec) fragments(v any, dst []Fragment) int8 {
	var n int8
	for i, f := range d.List(v) {
		if i >= len(dst) {
			d.Fail("too many fragments")
			break
		}
		dst[i] = d.fragment(f)
		n++
	}
	return n
}

func (d itfDec) fragment(v any) Fragment {
	m := d.Obj(v)
	f := Fragment{
		ID:       d.Int(d.Field(m, "id"), 0, 127),
		Ensemble: d.bookies(d.Field(m, "ensemble")),
		First:    d.Int(d.Field(m, "first_entry_id"), 0, MaxEntries+1),
	}
	if d.p.Ordered() {
		d.At("layout", func() { f.Layout = d.layout(d.Field(m, "layout")) })
	}
	return f
}

func (d itfDec) message(v any) MsgKey {
	m := d.Obj(v)
	f := MsgFields{
		Type:   vocab.Lookup(d.Decoder, msgTypeITF, d.Str(d.Field(m, "type"))),
		Bookie: d.bookie(d.Field(m, "bookie")),
		Cid:    d.client(d.Field(m, "cid")),
	}
	if e, ok := m["entry"]; ok {
		f.Entry = d.entry(e)
	}
	if x, ok := m["entry_id"]; ok {
		f.Entry.ID = d.Int(x, 0, MaxEntries+1)
	}
	if x, ok := m["lac"]; ok {
		f.LAC = d.Int(x, 0, MaxEntries)
	}
	if x, ok := m["lafr"]; ok {
		f.LAFR = d.Int(x, 0, MaxEntries)
	}
	if x, ok := m["recovery"]; ok {
		f.Recovery = d.Bool(x)
	}
	if x, ok := m["success"]; ok {
		f.Success = d.Bool(x)
	}
	if x, ok := m["fence"]; ok {
		f.Fence = d.Bool(x)
	}
	if x, ok := m["code"]; ok {
		f.Code = vocab.Lookup(d.Decoder, codeITF, d.Str(x))
	}
	if x, ok := m["index"]; ok {
		f.Index = int(d.Int(x, 0, d.p.Ensemble-1))
	}
	return f.Key()
}

func (d itfDec) messages(v any, s *State) {
	for _, kv := range d.Pairs(v) {
		s.Msgs = append(s.Msgs, Msg{Key: d.message(kv[0]), Count: d.Int(kv[1], -1, 1)})
	}
	sort.Slice(s.Msgs, func(i, j int) bool { return s.Msgs[i].Key < s.Msgs[j].Key })
	for i := 1; i < len(s.Msgs); i++ {
		if s.Msgs[i].Key == s.Msgs[i-1].Key {
			d.Fail("the same message record appears twice")
		}
	}
}

func (d itfDec) faultsUsed(v any, s *State) {
	p := d.p
	fu := d.Obj(v)
	s.CrashesUsed = d.Int(d.Field(fu, "crashes"), 0, p.Crashes)
	num := func(name string) any { return vocab.Since(fu, name, json.Number("0")) }
	s.DiskLossUsed = d.Int(num("disk_loss"), 0, p.DiskLoss)
	s.ReformatUsed = d.Int(vocab.Since(fu, "reformat", num("data_loss")), 0, p.Reformat) // 0.1: data_loss
	s.ReadOnlyUsed = d.Int(d.Field(fu, "read_only"), 0, p.ReadOnly)
	s.DiskFullUsed = d.Int(num("disk_full"), 0, p.DiskFull)
	s.CorruptUsed = d.Int(num("corrupt_reads"), 0, p.CorruptReads)
}

func (d itfDec) clients(v any, s *State) {
	for _, kv := range d.PerID(v, "c", d.p.Clients) {
		i := d.client(kv[0])
		d.At(clientName(i), func() { s.Clients[i] = d.client1(kv[1], s) })
	}
}

func (d itfDec) client1(v any, _ *State) Client {
	p := d.p
	m := d.Obj(v)
	var c Client
	c.MetaVersion = d.NilInt(d.Field(m, "meta_version"), 127)
	c.Status = vocab.Lookup(d.Decoder, statusITF, d.Str(d.Field(m, "status")))
	c.NumFragments = d.fragments(d.Field(m, "fragments"), c.Fragments[:])
	var ops []PendingAddOp
	for _, o := range d.Tagged(d.Field(m, "pending_add_ops"), "#set") {
		om := d.Obj(o)
		op := PendingAddOp{Entry: d.entry(d.Field(om, "entry")), FragmentID: d.Int(d.Field(om, "fragment_id"), 0, 127), Ensemble: d.bookies(d.Field(om, "ensemble"))}
		if p.Ordered() {
			op.Layout = d.layout(d.Field(om, "layout"))
		}
		ops = append(ops, op)
	}
	if len(ops) > len(c.Pending) {
		d.Fail("too many pending add ops")
		ops = ops[:len(c.Pending)]
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Less(ops[j]) })
	copy(c.Pending[:], ops)
	c.NumPending = int8(len(ops))
	c.LAP = d.Int(d.Field(m, "lap"), 0, MaxEntries)
	c.LAC = d.Int(d.Field(m, "lac"), 0, MaxEntries)
	if p.HasLAFR() {
		c.LAFR = d.Int(d.Field(m, "lafr"), 0, MaxEntries)
	}
	for _, kv := range d.Pairs(d.Field(m, "confirmed")) {
		e := d.Int(kv[0], 1, p.Entries)
		if e >= 1 {
			c.Confirmed[e-1] = d.bookies(kv[1])
		}
	}
	c.Fenced = d.bookies(d.Field(m, "fenced"))
	c.RecoveryEns = d.bookies(d.Field(m, "recovery_ensemble"))
	if p.Ordered() {
		c.RecoveryLay = d.layout(d.Field(m, "recovery_layout"))
	}
	c.CurrReadEntry = d.NilInt(d.Field(m, "curr_read_entry"), MaxEntries+1)
	var rs []MsgKey
	for _, r := range d.Tagged(d.Field(m, "read_responses"), "#set") {
		rs = append(rs, d.message(r))
	}
	if len(rs) > len(c.ReadResponses) {
		d.Fail("too many read responses")
		rs = rs[:len(c.ReadResponses)]
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
	copy(c.ReadResponses[:], rs)
	c.NumResponses = int8(len(rs))
	c.RecoveryPhase = uint8(d.Int(d.Field(m, "recovery_phase"), 0, 2))
	c.LastRecoverable = d.NilInt(d.Field(m, "last_recoverable_entry"), MaxEntries+1)
	if p.SequenceReads() {
		c.ReadNext = d.Int(d.Field(m, "read_next"), 0, p.WriteQuorum)
	}
	if p.JavaAddPath() {
		c.Change = vocab.Lookup(d.Decoder, changeNames, d.Str(d.Field(m, "ensemble_change")))
		c.ChangeFailed = d.failures(d.Field(m, "change_failed"))
		c.ChangeOrig = d.bookies(d.Field(m, "change_original"))
		c.DelayedFailed = d.failures(d.Field(m, "delayed_failed"))
		c.Changes = d.Int(d.Field(m, "ensemble_changes"), 0, p.MaxEnsembleChanges)
		for _, kv := range d.Pairs(d.Field(m, "acked_op_ensembles")) {
			if e := d.Int(kv[0], 1, p.Entries); e >= 1 {
				c.DoneEns[e-1] = d.bookies(kv[1])
			}
		}
		if p.Ordered() {
			if v := d.Field(m, "change_original_layout"); v != "Nil" {
				c.ChangeOrigLay = d.layout(v)
			}
			for _, kv := range d.Pairs(d.Field(m, "acked_op_layouts")) {
				if e := d.Int(kv[0], 1, p.Entries); e >= 1 {
					c.DoneLay[e-1] = d.layout(kv[1])
				}
			}
		}
		// A trace written before the field existed (a --bookkeeper trace
		// of an earlier bkcheck) holds no created op in any state.
		if v, ok := m["created_add_op"]; ok && p.CreateWindow {
			if v != "Nil" {
				om := d.Obj(v)
				c.Created = CreatedAddOp{FragmentID: d.Int(d.Field(om, "fragment_id"), 0, 127), Ensemble: d.bookies(d.Field(om, "ensemble"))}
				if p.Ordered() {
					c.Created.Layout = d.layout(d.Field(om, "layout"))
				}
			}
		}
	}
	// curr_fragment must be Last(fragments), as in every reachable state.
	if cf, ok := c.CurrFragment(); ok {
		vm := &vocabModel{P: p}
		if d.Err() == nil && !vocab.SameJSON(vm.fragmentITF(cf), vocab.Normalise(d.Field(m, "curr_fragment"))) {
			d.Fail("curr_fragment is not the last of fragments")
		}
	} else if s, _ := m["curr_fragment"].(string); s != "Nil" {
		d.Fail("curr_fragment must be Nil when fragments is empty")
	}
	return c
}
