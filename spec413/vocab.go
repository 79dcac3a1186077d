package spec413

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/bkcheck/bkcheck/internal/msgbag"
	"github.com/bkcheck/bkcheck/vocab"
)

// This file is the model's vocabulary (package vocab): its variables as
// BookKeeperProtocol_v4_13.tla declares them, and the cold-path forms of a
// state (ITF values, text rows, diagram events). Encode and Decode
// (encode.go) are the hot paths and stay hand-written.

// Name is the model's name in the registry (--model).
const Name = "v4.13"

// stateVar is one state variable with its ITF encoder and decoder. Every
// variable of this model is always present.
type stateVar struct {
	vocab.Var
	itf    func(m *vocabModel, s *State) any
	decode func(d itfDec, v any, s *State)
}

var stateVars = []stateVar{
	{Var: vocab.Var{Name: "messages", Shape: vocab.Messages, Doc: "every message sent, with its delivery count (1 in flight, 0 processed, -1 lost)", When: "always"},
		itf: (*vocabModel).messagesITF, decode: func(d itfDec, v any, s *State) { d.messages(v, s) }},
	{Var: vocab.Var{Name: "meta_status", Doc: "the ledger status", When: "always"},
		itf:    func(_ *vocabModel, s *State) any { return s.MetaStatus.String() },
		decode: func(d itfDec, v any, s *State) { s.MetaStatus = vocab.Lookup(d.Decoder, statusTable, d.Str(v)) }},
	{Var: vocab.Var{Name: "meta_fragments", Shape: vocab.Sequence, Doc: "ledger fragments", When: "always"},
		itf: func(m *vocabModel, s *State) any {
			out := []any{}
			for _, f := range s.FragmentList() {
				out = append(out, m.fragmentITF(f))
			}
			return out
		},
		decode: func(d itfDec, v any, s *State) {
			for i, f := range d.List(v) {
				if i >= len(s.Fragments) {
					d.Fail("too many fragments")
					break
				}
				s.Fragments[i] = d.fragment(f)
				s.NumFragments++
			}
		}},
	{Var: vocab.Var{Name: "meta_last_entry", Doc: "the endpoint of the ledger", When: "always"},
		itf:    func(_ *vocabModel, s *State) any { return int(s.MetaLastEntry) },
		decode: func(d itfDec, v any, s *State) { s.MetaLastEntry = d.Int(v, 0, maxEntryID) }},
	{Var: vocab.Var{Name: "meta_version", Doc: "ledger metadata version", When: "always"},
		itf:    func(_ *vocabModel, s *State) any { return int(s.MetaVersion) },
		decode: func(d itfDec, v any, s *State) { s.MetaVersion = d.Int(v, 0, 127) }},
	{Var: vocab.Var{Name: "b_entries", Shape: vocab.PerBookie, Doc: "the entries stored in each bookie", When: "always"},
		itf: func(m *vocabModel, s *State) any {
			return m.perBookie(func(b int) any {
				var es []any
				for _, e := range s.BEntries[b].List() {
					es = append(es, entryITF(e))
				}
				return vocab.Set(es...)
			})
		},
		decode: func(d itfDec, v any, s *State) {
			for _, kv := range d.PerID(v, "b", d.p.Bookies) {
				b := d.bookie(kv[0])
				for _, e := range d.Tagged(kv[1], "#set") {
					en := d.entry(e)
					if en.ID < 1 || en.Data < 1 || en.Data > MaxSendLimit {
						d.Fail("stored entry %v out of range", en)
						continue
					}
					s.BEntries[b] = s.BEntries[b].Add(en)
				}
			}
		}},
	{Var: vocab.Var{Name: "b_fenced", Shape: vocab.PerBookie, Doc: "the fenced status of each bookie", When: "always"},
		itf: func(m *vocabModel, s *State) any { return m.perBookie(func(b int) any { return s.BFenced.Has(b) }) },
		decode: func(d itfDec, v any, s *State) {
			for _, kv := range d.PerID(v, "b", d.p.Bookies) {
				if b := d.bookie(kv[0]); d.Bool(kv[1]) {
					s.BFenced |= 1 << uint(b)
				}
			}
		}},
	{Var: vocab.Var{Name: "b_lac", Shape: vocab.PerBookie, Doc: "the last add confirmed of each bookie", When: "always"},
		itf: func(m *vocabModel, s *State) any { return m.perBookie(func(b int) any { return int(s.BLAC[b]) }) },
		decode: func(d itfDec, v any, s *State) {
			for _, kv := range d.PerID(v, "b", d.p.Bookies) {
				s.BLAC[d.bookie(kv[0])] = d.Int(kv[1], 0, maxEntryID)
			}
		}},
	writerVar(W1, "the writer's state"),
	writerVar(W2, "the recovery client's state"),
}

func writerVar(i int, doc string) stateVar {
	return stateVar{Var: vocab.Var{Name: writerName(i), Doc: doc, When: "always"},
		itf:    func(m *vocabModel, s *State) any { return m.writerITF(&s.W[i]) },
		decode: func(d itfDec, v any, s *State) { s.W[i] = d.writer(v) }}
}

func writerName(i int) string { return fmt.Sprintf("w%d", i+1) }

var statusTable = func() map[Status]string {
	t := map[Status]string{}
	for s := StatusNil; s < numStatuses; s++ {
		t[s] = s.String()
	}
	return t
}()

var msgTypeTable = func() map[MsgType]string {
	t := map[MsgType]string{}
	for k := AddEntryRequestMessage; k <= ReadResponseMessage; k++ {
		t[k] = k.String()
	}
	return t
}()

// Descriptor is the model's vocabulary. Its invariants are declared in
// invariants.go, its one option in Options.
var Descriptor = func() *vocab.Descriptor {
	d := &vocab.Descriptor{Name: Name, Doc: "BookKeeperProtocol_v4_13.tla, release 4.13: writer w1, recovery client w2"}
	for _, v := range stateVars {
		d.Vars = append(d.Vars, v.Var)
	}
	for k := ActionKind(1); k < NumActionKinds; k++ {
		d.Actions = append(d.Actions, vocab.Action{Name: k.String(), Origin: vocab.FromSpec})
	}
	for _, inv := range Invariants {
		d.Invariants = append(d.Invariants, vocab.Invariant{Name: inv.Name, Statement: inv.Statement, Source: "INVARIANTS of BookKeeperProtocol_v4_13.cfg", Default: true})
	}
	return d
}()

// Vocabulary is the model with parameters p as the cold paths see it.
func Vocabulary(p Params) vocab.Model { return &vocabModel{P: p} }

// ParamsOf returns the parameters of a vocabulary of this model.
func ParamsOf(m vocab.Model) (Params, bool) {
	vm, ok := m.(*vocabModel)
	if !ok {
		return Params{}, false
	}
	return vm.P, true
}

// paramsJSON is how a trace records the parameters: the flags' names.
type paramsJSON struct {
	Bookies            int  `json:"bookies"`
	WriteQuorum        int  `json:"write-quorum"`
	AckQuorum          int  `json:"ack-quorum"`
	SendLimit          int  `json:"entries"`
	RecoveryReadsFence bool `json:"recovery-reads-fence"`
}

// VocabularyFromJSON is Vocabulary for the parameters a trace records.
func VocabularyFromJSON(raw json.RawMessage) (vocab.Model, error) {
	var pj paramsJSON
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pj); err != nil {
		return nil, err
	}
	p := Params{Bookies: pj.Bookies, WriteQuorum: pj.WriteQuorum, AckQuorum: pj.AckQuorum, SendLimit: pj.SendLimit, Options: Options{RecoveryReadsFence: pj.RecoveryReadsFence}}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return Vocabulary(p), nil
}

type vocabModel struct{ P Params }

func (m *vocabModel) Descriptor() *vocab.Descriptor { return Descriptor }

func (m *vocabModel) Params() string {
	return fmt.Sprintf("model=%s bookies=%d write-quorum=%d ack-quorum=%d entries=%d recovery-reads-fence=%t",
		Name, m.P.Bookies, m.P.WriteQuorum, m.P.AckQuorum, m.P.SendLimit, m.P.RecoveryReadsFence)
}

func (m *vocabModel) ParamsJSON() (json.RawMessage, error) {
	return json.Marshal(paramsJSON{m.P.Bookies, m.P.WriteQuorum, m.P.AckQuorum, m.P.SendLimit, m.P.RecoveryReadsFence})
}

func (m *vocabModel) Vars() []vocab.Var { return Descriptor.Vars }

func (m *vocabModel) Init() any { return Init() }

func (m *vocabModel) ActionString(a any) string { return a.(Action).String() }

func (m *vocabModel) Rows(state any) []vocab.Row {
	s := state.(State)
	var out []vocab.Row
	mm := &Model{P: m.P}
	mm.Vars(&s, func(name, value string) { out = append(out, vocab.Row{Name: name, Value: value}) })
	return out
}

func (m *vocabModel) ITF(state any) map[string]any {
	s := state.(State)
	out := map[string]any{}
	for _, v := range stateVars {
		out[v.Name] = v.itf(m, &s)
	}
	return out
}

// VarITF implements vocab.Model; state may also be a *State (read in
// place: the search's expander passes its loaded state so).
func (m *vocabModel) VarITF(state any, name string) (any, bool) {
	s, ok := state.(*State)
	if !ok {
		st := state.(State)
		s = &st
	}
	for _, v := range stateVars {
		if v.Name == name {
			return v.itf(m, s), true
		}
	}
	return nil, false
}

func (m *vocabModel) FromITF(d *vocab.Decoder, st map[string]any) any {
	dd := itfDec{Decoder: d, p: m.P}
	s := Init()
	for _, v := range stateVars {
		d.At(v.Name, func() {
			if val, ok := st[v.Name]; ok {
				v.decode(dd, val, &s)
			} else {
				d.Fail("missing field %q", v.Name)
			}
		})
	}
	return s
}

func (m *vocabModel) ActionITF(action any) (string, map[string]any) {
	a := action.(Action)
	picks := map[string]any{}
	if a.Bookie >= 0 {
		picks["bookie"] = vocab.ID("b", int(a.Bookie))
	}
	if a.Entry > 0 {
		picks["entry"] = int(a.Entry)
	}
	picks["lost"] = m.bookieSet(a.Lost)
	return a.Kind.String(), picks
}

func (m *vocabModel) ActionFromITF(d *vocab.Decoder, name string, picks map[string]any) any {
	dd := itfDec{Decoder: d, p: m.P}
	a := Action{Bookie: -1}
	k, ok := ActionKindByName(name)
	if !ok {
		d.Fail("unknown action %q", name)
	}
	a.Kind = k
	if b, ok := picks["bookie"]; ok {
		a.Bookie = int8(dd.bookie(b))
	}
	if e, ok := picks["entry"]; ok {
		a.Entry = d.Int(e, 1, maxEntryID)
	}
	if l, ok := picks["lost"]; ok {
		a.Lost = dd.bookies(l)
	}
	return a
}

// ---------------------------------------------------------------- ITF values

func (m *vocabModel) bookieSet(bs Bookies) map[string]any {
	var xs []any
	for b := 0; b < m.P.Bookies; b++ {
		if bs.Has(b) {
			xs = append(xs, vocab.ID("b", b))
		}
	}
	return vocab.Set(xs...)
}

func (m *vocabModel) perBookie(f func(b int) any) map[string]any {
	kvs := make([][2]any, m.P.Bookies)
	for b := range kvs {
		kvs[b] = [2]any{vocab.ID("b", b), f(b)}
	}
	return vocab.Map(kvs...)
}

// entryITF is an entry record; Nil (ID 0) is the model value, and a
// NoSuchEntry response's entry has data Nil.
func entryITF(e Entry) any {
	if e.ID == 0 {
		return "Nil"
	}
	var data any = int(e.Data)
	if e.Data == 0 {
		data = "Nil"
	}
	return map[string]any{"id": int(e.ID), "data": data}
}

func (m *vocabModel) fragmentITF(f Fragment) any {
	if f.ID == 0 {
		return "Nil"
	}
	return map[string]any{"id": int(f.ID), "ensemble": m.bookieSet(f.Ensemble), "first_entry_id": int(f.First)}
}

// messageITF is a message record with the fields its type has in the spec.
func messageITF(k MsgKey) map[string]any {
	out := map[string]any{"type": k.Type().String(), "bookie": vocab.ID("b", k.Bookie())}
	switch k.Type() {
	case AddEntryRequestMessage:
		out["entry"], out["lac"], out["recovery"] = entryITF(k.Entry()), int(k.LAC()), k.Recovery()
	case AddEntryResponseMessage:
		out["entry"], out["recovery"], out["success"] = entryITF(k.Entry()), k.Recovery(), k.Success()
	case FenceResponseMessage:
		out["lac"] = int(k.LAC())
	case ReadRequestMessage:
		out["entry_id"], out["fence"] = int(k.Entry().ID), k.Fence()
	case ReadResponseMessage:
		out["entry"], out["fence"] = entryITF(k.Entry()), k.Fence()
	}
	return out
}

func (m *vocabModel) messagesITF(s *State) any {
	kvs := make([][2]any, len(s.Msgs))
	for i, msg := range s.Msgs {
		kvs[i] = [2]any{messageITF(msg.Key), int(msg.Count)}
	}
	return vocab.Map(kvs...)
}

func (m *vocabModel) writerITF(w *Writer) any {
	var ops []any
	for _, op := range w.PendingList() {
		ops = append(ops, map[string]any{"entry": entryITF(op.Entry), "fragment_id": int(op.FragmentID), "ensemble": m.bookieSet(op.Ensemble)})
	}
	conf := make([][2]any, m.P.SendLimit)
	for e := range conf {
		conf[e] = [2]any{e + 1, m.bookieSet(w.Confirmed[e])}
	}
	return map[string]any{
		"meta_version": vocab.NilOr(w.MetaVersion), "status": w.Status.String(), "curr_fragment": m.fragmentITF(w.CurrFragment),
		"pending_add_ops": vocab.Set(ops...), "lap": int(w.LAP), "lac": int(w.LAC), "confirmed": vocab.Map(conf...),
		"fenced": m.bookieSet(w.Fenced), "curr_read_entry": entryITF(w.CurrReadEntry),
		"has_entry": m.bookieSet(w.HasEntry), "no_such_entry": m.bookieSet(w.NoSuchEntry), "recovery_phase": int(w.RecoveryPhase),
	}
}

// ---------------------------------------------------------------- decoding

type itfDec struct {
	*vocab.Decoder
	p Params
}

func (d itfDec) bookie(v any) int { return d.ID(v, "b", d.p.Bookies) }

func (d itfDec) bookies(v any) Bookies {
	var out Bookies
	for _, x := range d.Tagged(v, "#set") {
		out |= 1 << uint(d.bookie(x))
	}
	return out
}

func (d itfDec) entry(v any) Entry {
	if s, ok := v.(string); ok && s == "Nil" {
		return Entry{}
	}
	m := d.Obj(v)
	e := Entry{ID: d.Int(d.Field(m, "id"), 1, maxEntryID)}
	if s, ok := m["data"].(string); ok && s == "Nil" {
		return e
	}
	e.Data = d.Int(d.Field(m, "data"), 1, MaxSendLimit)
	return e
}

func (d itfDec) fragment(v any) Fragment {
	if s, ok := v.(string); ok && s == "Nil" {
		return Fragment{}
	}
	m := d.Obj(v)
	return Fragment{
		ID:       d.Int(d.Field(m, "id"), 1, 127),
		Ensemble: d.bookies(d.Field(m, "ensemble")),
		First:    d.Int(d.Field(m, "first_entry_id"), 0, maxEntryID+1),
	}
}

func (d itfDec) message(v any) MsgKey {
	m := d.Obj(v)
	t := vocab.Lookup(d.Decoder, msgTypeTable, d.Str(d.Field(m, "type")))
	b := d.bookie(d.Field(m, "bookie"))
	if d.Err() != nil {
		return 0
	}
	switch t {
	case AddEntryRequestMessage:
		return AddRequest(b, d.entry(d.Field(m, "entry")), d.Int(d.Field(m, "lac"), 0, maxEntryID), d.Bool(d.Field(m, "recovery")))
	case AddEntryResponseMessage:
		req := AddRequest(b, d.entry(d.Field(m, "entry")), 0, d.Bool(d.Field(m, "recovery")))
		return AddResponse(req, d.Bool(d.Field(m, "success")))
	case FenceRequestMessage:
		return FenceRequest(b)
	case FenceResponseMessage:
		return FenceResponse(b, d.Int(d.Field(m, "lac"), 0, maxEntryID))
	case ReadRequestMessage:
		return ReadRequest(b, d.Int(d.Field(m, "entry_id"), 0, maxEntryID), d.Bool(d.Field(m, "fence")))
	default:
		return ReadResponse(b, d.entry(d.Field(m, "entry")), d.Bool(d.Field(m, "fence")))
	}
}

func (d itfDec) messages(v any, s *State) {
	for _, kv := range d.Pairs(v) {
		k := d.message(kv[0])
		n := d.Int(kv[1], -1, 1)
		if d.Err() != nil {
			return
		}
		s.Msgs = append(s.Msgs, Msg{Key: k, Count: n})
	}
	sort.Slice(s.Msgs, func(i, j int) bool { return s.Msgs[i].Key < s.Msgs[j].Key })
	for i := 1; i < len(s.Msgs); i++ {
		if s.Msgs[i].Key == s.Msgs[i-1].Key {
			d.Fail("the same message record appears twice")
		}
	}
}

func (d itfDec) writer(v any) Writer {
	m := d.Obj(v)
	w := initWriter()
	w.MetaVersion = d.NilInt(d.Field(m, "meta_version"), 127)
	w.Status = vocab.Lookup(d.Decoder, statusTable, d.Str(d.Field(m, "status")))
	w.CurrFragment = d.fragment(d.Field(m, "curr_fragment"))
	var ops []PendingAddOp
	for _, o := range d.Tagged(d.Field(m, "pending_add_ops"), "#set") {
		om := d.Obj(o)
		ops = append(ops, PendingAddOp{Entry: d.entry(d.Field(om, "entry")), FragmentID: d.Int(d.Field(om, "fragment_id"), 0, 127), Ensemble: d.bookies(d.Field(om, "ensemble"))})
	}
	if len(ops) > len(w.Pending) {
		d.Fail("too many pending add ops")
		ops = ops[:len(w.Pending)]
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Less(ops[j]) })
	copy(w.Pending[:], ops)
	w.NumPending = int8(len(ops))
	w.LAP = d.Int(d.Field(m, "lap"), 0, maxEntryID)
	w.LAC = d.Int(d.Field(m, "lac"), 0, maxEntryID)
	for _, kv := range d.Pairs(d.Field(m, "confirmed")) {
		if e := d.Int(kv[0], 1, d.p.SendLimit); e >= 1 {
			w.Confirmed[e-1] = d.bookies(kv[1])
		}
	}
	w.Fenced = d.bookies(d.Field(m, "fenced"))
	w.CurrReadEntry = d.entry(d.Field(m, "curr_read_entry"))
	w.HasEntry = d.bookies(d.Field(m, "has_entry"))
	w.NoSuchEntry = d.bookies(d.Field(m, "no_such_entry"))
	w.RecoveryPhase = uint8(d.Int(d.Field(m, "recovery_phase"), 0, int(WritePhase)))
	return w
}

// ---------------------------------------------------------------- diagrams

func (m *vocabModel) Participants(last any) []vocab.Participant {
	out := []vocab.Participant{{ID: "w1", Label: "w1 (writer)"}, {ID: "w2", Label: "w2 (recovery client)"}, {ID: "meta", Label: "metadata store"}}
	for b := 0; b < m.P.Bookies; b++ {
		out = append(out, vocab.Participant{ID: vocab.ID("b", b), Label: vocab.ID("b", b)})
	}
	return out
}

// msgEnds are a message's sender, receiver and text: an add is w2's
// when it is a recovery add; fencing and reads are w2's.
func msgEnds(k MsgKey) (from, to, text string) {
	w, b := "w2", vocab.ID("b", k.Bookie())
	if (k.Type() == AddEntryRequestMessage || k.Type() == AddEntryResponseMessage) && !k.Recovery() {
		w = "w1"
	}
	switch k.Type() {
	case AddEntryRequestMessage, FenceRequestMessage, ReadRequestMessage:
		return w, b, FormatMessage(k)
	}
	return b, w, FormatMessage(k)
}

func (m *vocabModel) Events(action, prev, cur any) []vocab.Event {
	a, ps, cs := action.(Action), prev.(State), cur.(State)
	ev := msgbag.Events(ps.Msgs, cs.Msgs, msgEnds)
	if ps.MetaStatus != cs.MetaStatus || ps.MetaVersion != cs.MetaVersion || ps.NumFragments != cs.NumFragments {
		w := "w1"
		if strings.HasPrefix(a.Kind.String(), "W2") {
			w = "w2"
		}
		ev = append(ev, vocab.Event{Kind: "msg", From: w, To: "meta", Text: a.Kind.String()})
		frags := make([]string, cs.NumFragments)
		for i, f := range cs.FragmentList() {
			frags[i] = FormatFragment(f)
		}
		note := fmt.Sprintf("%s v%d <<%s>>", cs.MetaStatus, cs.MetaVersion, strings.Join(frags, ", "))
		if cs.MetaStatus == StatusClosed {
			note += fmt.Sprintf(" last entry %d", cs.MetaLastEntry)
		}
		ev = append(ev, vocab.Event{Kind: "note", From: "meta", Text: note})
	}
	for b := 0; b < m.P.Bookies; b++ {
		var notes []string
		if !ps.BFenced.Has(b) && cs.BFenced.Has(b) {
			notes = append(notes, "fenced")
		}
		if ps.BEntries[b] != cs.BEntries[b] {
			notes = append(notes, "entries "+FormatEntries(cs.BEntries[b]))
		}
		if ps.BLAC[b] != cs.BLAC[b] {
			notes = append(notes, fmt.Sprintf("lac %d", cs.BLAC[b]))
		}
		if len(notes) > 0 {
			ev = append(ev, vocab.Event{Kind: "note", From: vocab.ID("b", b), Text: strings.Join(notes, ", ")})
		}
	}
	for i := range cs.W {
		pw, cw := &ps.W[i], &cs.W[i]
		var notes []string
		if pw.Status != cw.Status {
			notes = append(notes, cw.Status.String())
		}
		if pw.LAC != cw.LAC {
			notes = append(notes, fmt.Sprintf("lac %d", cw.LAC))
		}
		if pw.RecoveryPhase != cw.RecoveryPhase {
			notes = append(notes, fmt.Sprintf("recovery phase %d", cw.RecoveryPhase))
		}
		if len(notes) > 0 {
			ev = append(ev, vocab.Event{Kind: "note", From: writerName(i), Text: strings.Join(notes, ", ")})
		}
	}
	return ev
}

func (m *vocabModel) Undelivered(prev, cur, last any) []vocab.Event {
	return msgbag.Undelivered(prev.(State).Msgs, cur.(State).Msgs, last.(State).Msgs, msgEnds)
}
