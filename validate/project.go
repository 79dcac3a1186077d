package validate

import (
	"fmt"
	"sort"

	"github.com/bkcheck/bkcheck/record"
	"github.com/bkcheck/bkcheck/spec"
)

// This file is the model's side of the door: what a step of the model
// shows to an observer placed where the harness is (the proxy on every
// connection, the clients' callbacks, ZooKeeper, the harness's own hand on
// the bookies), in the record's vocabulary. Everything else a step does (a
// bookie's journal, its fenced flag, a client's internal state) is silent.

// shown is one event a step shows; key is its message, for a send.
type shown struct {
	ev  record.Event
	key spec.MsgKey
}

// view is what one step of the model shows.
type view struct {
	// shown are the events the record must hold, in the step's group.
	shown []shown
	// consumed are the messages the step processed or dropped unread
	// (count 1 to 0): a recorded delivery is checked against them.
	consumed []spec.MsgKey
}

func (v *view) add(e record.Event) { v.shown = append(v.shown, shown{ev: e}) }

func isRequest(t spec.MsgType) bool {
	return t == spec.AddEntryRequest || t == spec.FenceRequest || t == spec.ReadRequest
}

func clientName(c int) string { return fmt.Sprintf("c%d", c+1) }
func bookieName(b int) string { return fmt.Sprintf("b%d", b+1) }

// project is what the step a from prev to cur shows.
func project(p spec.Params, a spec.Action, prev, cur *spec.State) view {
	var v view
	// Both histories are sorted by key, and a record is never removed:
	// walk them together.
	i := 0
	for _, m := range cur.Msgs {
		for i < len(prev.Msgs) && prev.Msgs[i].Key < m.Key {
			i++
		}
		old := i < len(prev.Msgs) && prev.Msgs[i].Key == m.Key
		var was int8
		if old {
			was = prev.Msgs[i].Count
		}
		// A record sent again (an ensemble change's re-send of an add the
		// bookie already answered, the bookie's answer to it, a second
		// copy while the first is in flight): a new frame, though the
		// history keeps one record per message.
		resent := old && (m.Count >= 1 && m.Count > was || was == 0 && m.Count == -1)
		switch {
		case (!old || resent) && m.Count == -1 && isRequest(m.Key.Type()) && cur.BDown.Has(m.Key.Bookie()):
			// A request to a bookie that is down: the client's connection
			// is refused, no frame exists; its failure is a later timeout.
		case !old || resent:
			v.shown = append(v.shown, shown{record.Event{Kind: record.Send, Msg: message(m.Key)}, m.Key})
		case was >= 1 && m.Count == was-1:
			v.consumed = append(v.consumed, m.Key)
		case was == -1 && m.Count == 0:
			v.add(record.Event{Kind: record.Timeout, Msg: requestOf(m.Key)})
		}
	}
	if cur.MetaDeleted && !prev.MetaDeleted {
		v.add(record.Event{Kind: record.Deleted})
	} else if !cur.MetaDeleted && metaChanged(prev, cur) {
		v.add(record.Event{Kind: record.Meta, Meta: ledger(p, cur)})
	}
	for c := 0; c < p.Clients; c++ {
		pc, cc := &prev.Clients[c], &cur.Clients[c]
		if pc.Status == spec.StatusOpen && cc.LAC > pc.LAC {
			for e := pc.LAC + 1; e <= cc.LAC; e++ {
				v.add(record.Event{Kind: record.Acked, Client: clientName(c), Entry: int(e)})
			}
		}
		// A handle closing itself on an unrecoverable error shows
		// nothing yet (its adds' failures are not recorded); its close's
		// metadata write does.
		if pc.Status != cc.Status && cc.Status != spec.StatusNil && cc.Status != spec.StatusClosing {
			v.add(record.Event{Kind: record.Status, Client: clientName(c), Status: cc.Status.String()})
		}
	}
	if kind, ok := faults[a.Kind]; ok {
		v.add(record.Event{Kind: kind, Bookie: bookieName(int(a.Bookie))})
	}
	return v
}

// faults are the model's actions that are the harness's hand on a bookie.
var faults = map[spec.ActionKind]string{
	spec.BookieCrashes:         record.Crash,
	spec.BookieRestarts:        record.Restart,
	spec.BookieLosesDisk:       record.DiskLost,
	spec.BookieRejoinsEmpty:    record.Rejoin,
	spec.BookieBecomesReadOnly: record.ReadOnly,
	spec.BookieFillsDisk:       record.DiskFull,
}

func metaChanged(prev, cur *spec.State) bool {
	if prev.MetaStatus != cur.MetaStatus || prev.MetaVersion != cur.MetaVersion || prev.MetaLastEntry != cur.MetaLastEntry {
		return true
	}
	return prev.NumMetaFragments != cur.NumMetaFragments || prev.MetaFragments != cur.MetaFragments
}

// ledger is the model's metadata in the record's terms. Without an
// ordered ensemble (the TLA+ spec's sets) the bookies are sorted; a
// recorded ensemble is then compared as a set (sameLedger).
func ledger(p spec.Params, s *spec.State) *record.Ledger {
	l := &record.Ledger{Status: s.MetaStatus.String(), Version: int(s.MetaVersion)}
	for _, f := range s.MetaFragmentList() {
		e := record.Ensemble{First: int(f.First)}
		if p.Ordered() {
			for i := 0; i < p.Ensemble; i++ {
				e.Bookies = append(e.Bookies, bookieName(f.Layout.At(i)))
			}
		} else {
			for b := 0; b < p.Bookies; b++ {
				if f.Ensemble.Has(b) {
					e.Bookies = append(e.Bookies, bookieName(b))
				}
			}
		}
		l.Ensembles = append(l.Ensembles, e)
	}
	if s.MetaStatus == spec.StatusClosed {
		last := int(s.MetaLastEntry)
		l.LastEntry = &last
	}
	return l
}

// message is the model's message as the wire shows it: every field the
// record can hold, the return code the first BookKeeper gives for it.
func message(k spec.MsgKey) *record.Message {
	f := k.Fields()
	m := &record.Message{Type: typeName(f.Type), Client: clientName(f.Cid), Bookie: bookieName(f.Bookie)}
	switch f.Type {
	case spec.AddEntryRequest:
		m.Entry, m.Recovery = int(f.Entry.ID), f.Recovery
		lac := int(f.LAC)
		m.LAC = &lac
	case spec.AddEntryResponse:
		m.Entry = int(f.Entry.ID)
	case spec.ReadRequest:
		m.Entry, m.Fence = int(f.Entry.ID), f.Fence
	case spec.ReadResponse:
		m.Entry = int(f.Entry.ID)
	}
	if !isRequest(f.Type) {
		m.RC = returnCodes(f)[0]
	}
	return m
}

// requestOf is the request a timed-out message stands for: the request
// itself, or the request a lost response answered.
func requestOf(k spec.MsgKey) *record.Message {
	f := k.Fields()
	m := &record.Message{Client: clientName(f.Cid), Bookie: bookieName(f.Bookie)}
	switch f.Type {
	case spec.AddEntryRequest, spec.AddEntryResponse:
		m.Type, m.Entry = "AddEntryRequest", int(f.Entry.ID)
	case spec.FenceRequest, spec.FenceResponse:
		m.Type = "FenceRequest"
	case spec.ReadRequest, spec.ReadResponse:
		m.Type, m.Entry = "ReadRequest", int(f.Entry.ID)
	}
	return m
}

func typeName(t spec.MsgType) string { return t.String() }

// returnCodes are the return codes with which a BookKeeper bookie sends
// the model's response f (BookieProtocol's codes, in the v2 protocol): one
// declaration of the correspondence, read by projection and matching.
func returnCodes(f spec.MsgFields) []string {
	switch f.Type {
	case spec.AddEntryResponse:
		switch {
		case f.Success:
			return []string{record.EOK}
		case f.Code == spec.CodeReadOnly:
			return []string{record.EReadOnly}
		}
		return []string{record.EFenced}
	case spec.FenceResponse:
		// ReadEntryProcessor answers a fencing read of the LAC with the
		// LAC it has, or with no entry or no ledger when it has none: the
		// model's fence response carries the LAC in each case.
		return []string{record.EOK, record.ENoEntry, record.ENoLedger}
	case spec.ReadResponse:
		switch f.Code {
		case spec.CodeOK:
			return []string{record.EOK}
		case spec.CodeUnknown:
			return []string{record.EUnknown}
		}
		return []string{record.ENoEntry, record.ENoLedger}
	}
	return nil
}

// matchMessage says whether the recorded message r is the model's k:
// the fields the record gives, compared.
func matchMessage(r *record.Message, k spec.MsgKey) bool {
	f := k.Fields()
	if r.Type != typeName(f.Type) || r.Client != clientName(f.Cid) || r.Bookie != bookieName(f.Bookie) {
		return false
	}
	switch f.Type {
	case spec.AddEntryRequest:
		if r.Entry != int(f.Entry.ID) || r.Recovery != f.Recovery || (r.LAC != nil && *r.LAC != int(f.LAC)) {
			return false
		}
	case spec.AddEntryResponse, spec.ReadResponse:
		if r.Entry != int(f.Entry.ID) {
			return false
		}
	case spec.ReadRequest:
		if r.Entry != int(f.Entry.ID) || r.Fence != f.Fence {
			return false
		}
	}
	if !isRequest(f.Type) && !contains(returnCodes(f), r.RC) {
		return false
	}
	return true
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// matchEvent says whether a recorded event is one a step of the model shows.
func matchEvent(p spec.Params, rec, got record.Event, gotKey spec.MsgKey) bool {
	if rec.Kind != got.Kind {
		return false
	}
	switch rec.Kind {
	case record.Send:
		return matchMessage(rec.Msg, gotKey)
	case record.Timeout:
		r, g := rec.Msg, got.Msg
		return r.Type == g.Type && r.Client == g.Client && r.Bookie == g.Bookie && r.Entry == g.Entry
	case record.Meta:
		return sameLedger(p, rec.Meta, got.Meta)
	}
	return rec.Client == got.Client && rec.Bookie == got.Bookie && rec.Entry == got.Entry && rec.Status == got.Status
}

func sameLedger(p spec.Params, rec, model *record.Ledger) bool {
	if rec.Status != model.Status || rec.Version != model.Version || len(rec.Ensembles) != len(model.Ensembles) {
		return false
	}
	if (rec.LastEntry == nil) != (model.LastEntry == nil) || (rec.LastEntry != nil && *rec.LastEntry != *model.LastEntry) {
		return false
	}
	for i, e := range rec.Ensembles {
		bs := append([]string(nil), e.Bookies...)
		if !p.Ordered() {
			sort.Strings(bs)
		}
		if e.First != model.Ensembles[i].First || fmt.Sprint(bs) != fmt.Sprint(model.Ensembles[i].Bookies) {
			return false
		}
	}
	return true
}
