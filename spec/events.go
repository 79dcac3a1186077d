package spec

import (
	"fmt"
	"strings"

	"github.com/bkcheck/bkcheck/internal/msgbag"
	"github.com/bkcheck/bkcheck/vocab"
)

// This file is what a step shows in a sequence diagram (vocab.Event):
// messages processed and lost as arrows; metadata, bookie and client
// changes and faults as notes.

// msgEnds are a message's sender, receiver and text.
func msgEnds(k MsgKey) (from, to, text string) {
	c, b := clientName(k.Cid()), bookieName(k.Bookie())
	switch k.Type() {
	case AddEntryRequest, FenceRequest, ReadRequest:
		return c, b, FormatMessage(k)
	}
	return b, c, FormatMessage(k)
}

func (m *vocabModel) Events(action, prev, cur any) []vocab.Event {
	ps, cs := prev.(State), cur.(State)
	return m.P.StepEvents(action.(Action), &ps, &cs)
}

// StepEvents lists what the step from prev to cur shows: messages
// processed (arrows), messages lost (lost arrows), metadata, bookie and
// client changes and faults (notes).
func (p Params) StepEvents(a Action, prev, cur *State) []vocab.Event {
	ev := msgbag.Events(prev.Msgs, cur.Msgs, msgEnds)
	if prev.MetaStatus != cur.MetaStatus || prev.MetaVersion != cur.MetaVersion || p.FormatFragments(prev.MetaFragmentList()) != p.FormatFragments(cur.MetaFragmentList()) {
		if a.Client >= 0 {
			ev = append(ev, vocab.Event{Kind: "msg", From: clientName(int(a.Client)), To: "meta", Text: a.Kind.String()})
		}
		note := fmt.Sprintf("%s v%d %s", cur.MetaStatus, cur.MetaVersion, p.FormatFragments(cur.MetaFragmentList()))
		if cur.MetaStatus == StatusClosed {
			note += fmt.Sprintf(" last entry %d", cur.MetaLastEntry)
		}
		ev = append(ev, vocab.Event{Kind: "note", From: "meta", Text: note})
	}
	for bk := 0; bk < p.Bookies; bk++ {
		var notes []string
		if !prev.BFenced.Has(bk) && cur.BFenced.Has(bk) {
			notes = append(notes, "fenced")
		}
		if prev.BEntries[bk] != cur.BEntries[bk] {
			notes = append(notes, "entries "+FormatEntries(cur.BEntries[bk]))
		}
		if prev.BLAC[bk] != cur.BLAC[bk] {
			notes = append(notes, fmt.Sprintf("lac %d", cur.BLAC[bk]))
		}
		mine := int(a.Bookie) == bk
		switch {
		case mine && a.Kind == BookieLosesDisk:
			notes = append(notes, "DISK WIPED: cookie validation keeps it down")
		case mine && a.Kind == BookieRejoinsEmpty:
			notes = append(notes, "re-formatted: rejoined with an EMPTY DISK")
		case prev.BDown.Has(bk) && !cur.BDown.Has(bk):
			notes = append(notes, "restarted")
		case !prev.BDown.Has(bk) && cur.BDown.Has(bk):
			notes = append(notes, "CRASHED")
		}
		if mine && a.Kind == BookieSyncsJournal {
			notes = append(notes, "journal synced")
		}
		if mine && a.Kind == BookieRegistrationExpires {
			notes = append(notes, "registration expired: no longer chosen by placement")
		}
		if !prev.BLimbo.Has(bk) && cur.BLimbo.Has(bk) {
			notes = append(notes, "in limbo (data-integrity check)")
		}
		if !prev.BReadOnly.Has(bk) && cur.BReadOnly.Has(bk) {
			notes = append(notes, "turned read-only")
		}
		if !prev.BDiskFull.Has(bk) && cur.BDiskFull.Has(bk) {
			notes = append(notes, "disk full")
		}
		if len(notes) > 0 {
			ev = append(ev, vocab.Event{Kind: "note", From: bookieName(bk), Text: strings.Join(notes, ", ")})
		}
	}
	for c := 0; c < p.Clients; c++ {
		pc, cc := &prev.Clients[c], &cur.Clients[c]
		var notes []string
		if pc.Status != cc.Status {
			notes = append(notes, cc.Status.String())
		}
		if pc.LAC != cc.LAC {
			notes = append(notes, fmt.Sprintf("lac %d", cc.LAC))
		}
		if pc.LastRecoverable != cc.LastRecoverable && cc.LastRecoverable != Nil {
			notes = append(notes, fmt.Sprintf("last recoverable entry %d", cc.LastRecoverable))
		}
		if a.Kind == ClientFailsToCreateLedger && int(a.Client) == c {
			notes = append(notes, "NotEnoughBookies")
		}
		if p.JavaAddPath() {
			notes = append(notes, javaNotes(pc, cc)...)
		}
		if len(notes) > 0 {
			ev = append(ev, vocab.Event{Kind: "note", From: clientName(c), Text: strings.Join(notes, ", ")})
		}
	}
	return ev
}

// javaNotes tells a Java writer's step in LedgerHandle's terms: the
// ensemble change's flag and failures, delayed failures, the callbacks.
func javaNotes(pc, cc *Client) []string {
	var notes []string
	switch {
	case pc.Change == ChangeNone && cc.Change == ChangeUpdating:
		notes = append(notes, "handleBookieFailure: changingEnsemble = true, replacing "+FormatFailures(cc.ChangeFailed))
	case pc.Change == ChangeCompleting && cc.Change == ChangeUpdating:
		notes = append(notes, "delayed failures: ensembleChangeLoop again, replacing "+FormatFailures(cc.ChangeFailed))
	case pc.Change == ChangeUpdating && cc.Change == ChangeCompleting:
		notes = append(notes, "MetadataUpdateLoop done")
	case pc.Change == ChangeCompleting && cc.Change == ChangeNone:
		notes = append(notes, "changingEnsemble = false, unsetSuccessAndSendWriteRequest")
	}
	if cc.DelayedFailed != pc.DelayedFailed && cc.DelayedFailed != 0 {
		notes = append(notes, "notifyWriteFailed: delayedWriteFailedBookies "+FormatFailures(cc.DelayedFailed))
	}
	for e := range cc.Confirmed {
		if cc.DoneEns[e] == 0 && pc.Confirmed[e] != cc.Confirmed[e] {
			notes = append(notes, fmt.Sprintf("e%d ackSet %s", e+1, FormatBookies(cc.Confirmed[e])))
		}
	}
	return notes
}

func (m *vocabModel) Undelivered(prev, cur, last any) []vocab.Event {
	return msgbag.Undelivered(prev.(State).Msgs, cur.(State).Msgs, last.(State).Msgs, msgEnds)
}
