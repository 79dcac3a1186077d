package spec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bkcheck/bkcheck/vocab"
)

// This file is a state's readable form: its variables as rows, named as
// in the TLA+ specification, values written much as TLC prints them.

// Rows flattens a state into named values in a fixed order, one per
// variable element, so two states can be compared line by line. The
// variables present are those of stateVars under p.
func (p Params) Rows(s *State) []vocab.Row {
	var out []vocab.Row
	add := func(name, format string, args ...any) {
		out = append(out, vocab.Row{Name: name, Value: fmt.Sprintf(format, args...)})
	}
	add("meta_status", "%s", s.MetaStatus)
	add("meta_version", "%d", s.MetaVersion)
	add("meta_fragments", "%s", p.FormatFragments(s.MetaFragmentList()))
	add("meta_last_entry", "%d", s.MetaLastEntry)
	for b := 0; b < p.Bookies; b++ {
		add(fmt.Sprintf("b_entries[b%d]", b+1), "%s", FormatEntries(s.BEntries[b]))
		add(fmt.Sprintf("b_fenced[b%d]", b+1), "%s", tlaBool(s.BFenced.Has(b)))
		add(fmt.Sprintf("b_lac[b%d]", b+1), "%d", s.BLAC[b])
	}
	if p.Faulty() {
		add("b_down", "%s", FormatBookies(s.BDown))
		add("b_wiped", "%s", FormatBookies(s.BWiped))
		add("b_read_only", "%s", FormatBookies(s.BReadOnly))
		add("b_disk_full", "%s", FormatBookies(s.BDiskFull))
		add("b_limbo", "%s", FormatBookies(s.BLimbo))
		if p.RegistrationExpiry {
			add("b_stale_registration", "%s", FormatBookies(s.BStale))
		}
		add("faults_used", "crashes %d, disk losses %d, re-formats %d, read-only %d, disk full %d, corrupt reads %d",
			s.CrashesUsed, s.DiskLossUsed, s.ReformatUsed, s.ReadOnlyUsed, s.DiskFullUsed, s.CorruptUsed)
	}
	if p.DeferredCheck() {
		add("b_check_pending", "%s", FormatBookies(s.BCheckPending))
	}
	if p.HasDeletion() {
		add("meta_deleted", "%s", tlaBool(s.MetaDeleted))
		add("b_collected", "%s", FormatBookies(s.BCollected))
		add("b_volatile_fence", "%s", FormatBookies(s.BVolatileFence))
	}
	if p.HasHandles() {
		add("b_handle", "%s", FormatBookies(s.BHandle))
	}
	if p.HasChecked() {
		for b := 0; b < p.Bookies; b++ {
			add(fmt.Sprintf("b_checked[b%d]", b+1), "%s", FormatEntries(s.BChecked[b]))
		}
	}
	if p.LossyJournal() {
		for b := 0; b < p.Bookies; b++ {
			add(fmt.Sprintf("b_unflushed[b%d]", b+1), "%s", FormatEntries(s.BUnflushed[b]))
			add(fmt.Sprintf("b_durable_lac[b%d]", b+1), "%d", s.BDurableLAC[b])
		}
	}
	if p.FencesCanBeLost() {
		add("b_unflushed_fence", "%s", FormatBookies(s.BUnflushedFence))
	}
	if p.HasCheckpoints() {
		add("b_index_key", "%s", FormatBookies(s.BIndexKey))
		add("b_index_fenced", "%s", FormatBookies(s.BIndexFenced))
		add("b_key_record", "%s", FormatBookies(s.BKeyRecord))
		add("b_fence_record", "%s", FormatBookies(s.BFenceRecord))
		add("b_cache_dirty", "%s", FormatBookies(s.BCacheDirty))
	}
	if p.HasAutoRecovery() {
		add("ur_missing", "%s", FormatBookies(s.URMissing))
		add("rw_phase", "%s", rwPhaseNames[s.RWPhase])
		add("rw_tried", "%s", formatTried(s.RWTried))
		add("rw_fragment", "%d", s.RWFirst)
		add("rw_replacements", "%s", formatMapping(s.RWMap))
		add("rw_unreadable", "%s", formatUnreadable(s.RWCache))
	}
	if p.HasDecommission() {
		add("decom_bookie", "%s", FormatBookies(s.DecomBookie))
		add("decom_done", "%t", s.DecomDone)
	}
	lafr := p.HasLAFR()
	if lafr {
		for b := 0; b < p.Bookies; b++ {
			add(fmt.Sprintf("b_lafr[b%d]", b+1), "%d", s.BLAFR[b])
		}
	}
	for i := 0; i < p.Clients; i++ {
		c := &s.Clients[i]
		pre := fmt.Sprintf("clients[c%d].", i+1)
		if lafr {
			add(pre+"lafr", "%d", c.LAFR)
		}
		add(pre+"status", "%s", c.Status)
		add(pre+"meta_version", "%s", nilText(c.MetaVersion))
		add(pre+"fragments", "%s", p.FormatFragments(c.FragmentList()))
		add(pre+"pending_add_ops", "%s", p.formatPending(c.PendingList()))
		add(pre+"lap", "%d", c.LAP)
		add(pre+"lac", "%d", c.LAC)
		conf := make([]string, p.Entries)
		for e := range conf {
			conf[e] = FormatBookies(c.Confirmed[e])
		}
		add(pre+"confirmed", "<<%s>>", strings.Join(conf, ", "))
		add(pre+"fenced", "%s", FormatBookies(c.Fenced))
		add(pre+"recovery_ensemble", "%s", p.FormatEnsemble(c.RecoveryEns, c.RecoveryLay))
		add(pre+"curr_read_entry", "%s", nilText(c.CurrReadEntry))
		rs := make([]string, 0, c.NumResponses)
		for _, k := range c.Responses() {
			rs = append(rs, FormatMessage(k))
		}
		add(pre+"read_responses", "{%s}", strings.Join(rs, ", "))
		add(pre+"recovery_phase", "%d", c.RecoveryPhase)
		add(pre+"last_recoverable_entry", "%s", nilText(c.LastRecoverable))
		if p.SequenceReads() {
			add(pre+"read_next", "%d", c.ReadNext)
		}
		if p.JavaAddPath() {
			add(pre+"ensemble_change", "%s", changeNames[c.Change])
			add(pre+"change_failed", "%s", FormatFailures(c.ChangeFailed))
			add(pre+"change_original", "%s", p.FormatEnsemble(c.ChangeOrig, c.ChangeOrigLay))
			add(pre+"delayed_failed", "%s", FormatFailures(c.DelayedFailed))
			add(pre+"ensemble_changes", "%d", c.Changes)
			done := make([]string, p.Entries)
			for e := range done {
				done[e] = p.FormatEnsemble(c.DoneEns[e], c.DoneLay[e])
			}
			add(pre+"acked_op_ensembles", "<<%s>>", strings.Join(done, ", "))
			if p.CreateWindow {
				created := "Nil"
				if cr := c.Created; cr.Ensemble != 0 {
					created = fmt.Sprintf("[fragment %d, %s]", cr.FragmentID, p.FormatEnsemble(cr.Ensemble, cr.Layout))
				}
				add(pre+"created_add_op", "%s", created)
			}
		}
	}
	for _, m := range s.Msgs {
		add("messages["+FormatMessage(m.Key)+"]", "%s", DeliveryState(m.Count))
	}
	return out
}

func (m *vocabModel) Rows(state any) []vocab.Row {
	s := state.(State)
	return m.P.Rows(&s)
}

func tlaBool(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

func nilText(v int8) string {
	if v == Nil {
		return "Nil"
	}
	return fmt.Sprint(v)
}

// DeliveryState renders a message's delivery count.
func DeliveryState(count int8) string {
	switch count {
	case 2:
		return "two copies in flight (2)"
	case 1:
		return "in flight (1)"
	case 0:
		return "processed (0)"
	case -1:
		return "lost (-1)"
	}
	return fmt.Sprint(count)
}

// FormatFragments renders a fragment sequence as <<[1: {b1,b2} from e1], ...>>;
// with striping (E > Qw) each ensemble is the ordered list it is, as
// <<[1: <<b1,b4,b3>> from e1]>>: a position's bookie decides which
// entries it is sent (the write set of entry e starts at position e mod E),
// so an ensemble change that replaces b2 by b4 must show where b4 went.
func (p Params) FormatFragments(fs []Fragment) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("[%d: %s from e%d]", f.ID, p.FormatEnsemble(f.Ensemble, f.Layout), f.First)
	}
	return "<<" + strings.Join(parts, ", ") + ">>"
}

// FormatEnsemble renders an ensemble: a set {b1,b2,b3} unless ordered;
// ordered (striping, or the Java add path), the bookies in position order, <<b1,b4,b3>> (an empty
// ensemble, one not in use, stays {}).
func (p Params) FormatEnsemble(ens Bookies, lay Layout) string {
	if !p.Ordered() || ens == 0 {
		return FormatBookies(ens)
	}
	parts := make([]string, p.Ensemble)
	for i := range parts {
		parts[i] = fmt.Sprintf("b%d", lay.At(i)+1)
	}
	return "<<" + strings.Join(parts, ",") + ">>"
}

// FormatEntries renders a bookie's entries as {e1, e2}; an entry whose data
// differs from its id shows both ({e1=2}).
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

func (p Params) formatPending(ops []PendingAddOp) string {
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("[e%d, fragment %d, %s]", op.Entry.ID, op.FragmentID, p.FormatEnsemble(op.Ensemble, op.Layout))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// FormatMessage renders a message record with its direction, e.g.
// "AddEntryRequest c1->b2 e1 lac=0". A Java writer's add sent for an
// ensemble index other than 0 says so ("index=1").
func FormatMessage(k MsgKey) string {
	f := k.Fields()
	c, b := fmt.Sprintf("c%d", f.Cid+1), fmt.Sprintf("b%d", f.Bookie+1)
	rec := ""
	if f.Recovery {
		rec = " recovery"
	}
	if f.Index > 0 {
		rec += fmt.Sprintf(" index=%d", f.Index)
	}
	switch f.Type {
	case AddEntryRequest:
		if f.LAFR > 0 {
			return fmt.Sprintf("AddEntryRequest %s->%s e%d lac=%d lafr=%d%s", c, b, f.Entry.ID, f.LAC, f.LAFR, rec)
		}
		return fmt.Sprintf("AddEntryRequest %s->%s e%d lac=%d%s", c, b, f.Entry.ID, f.LAC, rec)
	case AddEntryResponse:
		res := "ok"
		switch {
		case f.Code == CodeReadOnly:
			res = "read-only"
		case !f.Success:
			res = "fenced"
		}
		return fmt.Sprintf("AddEntryResponse %s->%s e%d %s%s", b, c, f.Entry.ID, res, rec)
	case FenceRequest:
		return fmt.Sprintf("FenceRequest %s->%s", c, b)
	case FenceResponse:
		if f.LAFR > 0 {
			return fmt.Sprintf("FenceResponse %s->%s lac=%d lafr=%d", b, c, f.LAC, f.LAFR)
		}
		return fmt.Sprintf("FenceResponse %s->%s lac=%d", b, c, f.LAC)
	case ReadRequest:
		fence := ""
		if f.Fence {
			fence = " fence"
		}
		return fmt.Sprintf("ReadRequest %s->%s e%d%s", c, b, f.Entry.ID, fence)
	case ReadResponse:
		code := "OK"
		switch f.Code {
		case CodeNoSuchEntry:
			code = "NoSuchEntry"
		case CodeUnknown:
			code = "Unknown"
		}
		return fmt.Sprintf("ReadResponse %s->%s e%d %s", b, c, f.Entry.ID, code)
	}
	return fmt.Sprintf("message %#x", uint32(k))
}

// formatTried renders fragment positions (from 1) as {1,3}.
func formatTried(t uint16) string {
	var parts []string
	for i := 0; i < maxFragments; i++ {
		if t&(1<<uint(i)) != 0 {
			parts = append(parts, strconv.Itoa(i+1))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// formatMapping renders a map from bookie to bookie as {b1: b3}.
func formatMapping(f Failures) string {
	var parts []string
	for b := 0; b < MaxBookies; b++ {
		if t, ok := f.At(b); ok {
			parts = append(parts, fmt.Sprintf("b%d: b%d", b+1, t+1))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// formatUnreadable renders the worker's unreadable entries: Nil when it
// holds no set for the ledger, else {e1,e3}.
func formatUnreadable(c uint16) string {
	if c&cacheSet == 0 {
		return "Nil"
	}
	var parts []string
	for i := 0; i < MaxEntries; i++ {
		if c&(1<<uint(i)) != 0 {
			parts = append(parts, fmt.Sprintf("e%d", i+1))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
