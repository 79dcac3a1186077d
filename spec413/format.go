package spec413

import (
	"fmt"
	"strings"
)

// This file is the readable form of a state: its variables named as in the
// TLA+ specification, values written much as TLC prints them.

// Vars calls add for every variable of s (every element of a function or
// record variable) in a fixed order, so that two states can be compared
// line by line. Never-sent messages do not appear; a sent one is
// messages[record].
func (m *Model) Vars(s *State, add func(name, value string)) {
	add("meta_status", s.MetaStatus.String())
	add("meta_version", fmt.Sprint(s.MetaVersion))
	frags := make([]string, s.NumFragments)
	for i, f := range s.FragmentList() {
		frags[i] = FormatFragment(f)
	}
	add("meta_fragments", "<<"+strings.Join(frags, ", ")+">>")
	add("meta_last_entry", fmt.Sprint(s.MetaLastEntry))
	for b := 0; b < m.P.Bookies; b++ {
		add(fmt.Sprintf("b_entries[b%d]", b+1), FormatEntries(s.BEntries[b]))
		add(fmt.Sprintf("b_fenced[b%d]", b+1), tlaBool(s.BFenced.Has(b)))
		add(fmt.Sprintf("b_lac[b%d]", b+1), fmt.Sprint(s.BLAC[b]))
	}
	for i := range s.W {
		w := &s.W[i]
		pre := fmt.Sprintf("w%d.", i+1)
		add(pre+"meta_version", nilOr(w.MetaVersion))
		add(pre+"status", w.Status.String())
		add(pre+"curr_fragment", FormatFragment(w.CurrFragment))
		ops := make([]string, w.NumPending)
		for j, op := range w.PendingList() {
			ops[j] = fmt.Sprintf("[entry |-> %s, fragment_id |-> %d, ensemble |-> %s]", FormatEntry(op.Entry), op.FragmentID, FormatBookies(op.Ensemble))
		}
		add(pre+"pending_add_ops", "{"+strings.Join(ops, ", ")+"}")
		add(pre+"lap", fmt.Sprint(w.LAP))
		add(pre+"lac", fmt.Sprint(w.LAC))
		conf := make([]string, m.P.SendLimit)
		for e := range conf {
			conf[e] = FormatBookies(w.Confirmed[e])
		}
		add(pre+"confirmed", "<<"+strings.Join(conf, ", ")+">>")
		add(pre+"fenced", FormatBookies(w.Fenced))
		add(pre+"curr_read_entry", FormatEntry(w.CurrReadEntry))
		add(pre+"has_entry", FormatBookies(w.HasEntry))
		add(pre+"no_such_entry", FormatBookies(w.NoSuchEntry))
		add(pre+"recovery_phase", fmt.Sprint(w.RecoveryPhase))
	}
	for _, msg := range s.Msgs {
		add("messages["+FormatMessage(msg.Key)+"]", deliveryState(msg.Count))
	}
}

func tlaBool(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

func nilOr(v int8) string {
	if v == Nil {
		return "Nil"
	}
	return fmt.Sprint(v)
}

func deliveryState(count int8) string {
	switch count {
	case 1:
		return "1 (in flight)"
	case 0:
		return "0 (processed)"
	}
	return "-1 (lost)"
}

// FormatEntry renders an entry as [id |-> 1, data |-> 1], or Nil.
func FormatEntry(e Entry) string {
	if e.ID == 0 {
		return "Nil"
	}
	data := "Nil"
	if e.Data != 0 {
		data = fmt.Sprint(e.Data)
	}
	return fmt.Sprintf("[id |-> %d, data |-> %s]", e.ID, data)
}

// FormatEntries renders a bookie's entries as {e1, e2}; an entry whose
// data differs from its id shows both ({e2=1}).
func FormatEntries(es EntrySet) string {
	var parts []string
	for _, e := range es.List() {
		if e.Data == e.ID {
			parts = append(parts, fmt.Sprintf("e%d", e.ID))
		} else {
			parts = append(parts, fmt.Sprintf("e%d=%d", e.ID, e.Data))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// FormatFragment renders a fragment as [1: {b1,b2,b3} from e1], or Nil.
func FormatFragment(f Fragment) string {
	if f.ID == 0 {
		return "Nil"
	}
	return fmt.Sprintf("[%d: %s from e%d]", f.ID, FormatBookies(f.Ensemble), f.First)
}

// FormatMessage renders a message record with its direction, e.g.
// "AddEntryRequest w1->b2 e1 lac=0" or "ReadResponse b3->w2 NoSuchEntry".
// An add's writer is w2 when it is a recovery add.
func FormatMessage(k MsgKey) string {
	b, e := fmt.Sprintf("b%d", k.Bookie()+1), k.Entry()
	w := "w1"
	if k.Recovery() {
		w = "w2"
	}
	fence := ""
	if k.Fence() {
		fence = " fence"
	}
	switch k.Type() {
	case AddEntryRequestMessage:
		return fmt.Sprintf("AddEntryRequest %s->%s e%d lac=%d%s", w, b, e.ID, k.LAC(), entryData(e))
	case AddEntryResponseMessage:
		res := "ok"
		if !k.Success() {
			res = "fenced"
		}
		return fmt.Sprintf("AddEntryResponse %s->%s e%d%s %s", b, w, e.ID, entryData(e), res)
	case FenceRequestMessage:
		return fmt.Sprintf("FenceRequest w2->%s", b)
	case FenceResponseMessage:
		return fmt.Sprintf("FenceResponse %s->w2 lac=%d", b, k.LAC())
	case ReadRequestMessage:
		return fmt.Sprintf("ReadRequest w2->%s e%d%s", b, e.ID, fence)
	case ReadResponseMessage:
		if e.ID == 0 {
			return fmt.Sprintf("ReadResponse %s->w2 NoSuchEntry%s", b, fence)
		}
		return fmt.Sprintf("ReadResponse %s->w2 e%d%s%s", b, e.ID, entryData(e), fence)
	}
	return fmt.Sprintf("message %#x", uint32(k))
}

// entryData shows an entry's data when it is not its id.
func entryData(e Entry) string {
	if e.Data == e.ID {
		return ""
	}
	return fmt.Sprintf(" (data %d)", e.Data)
}
