package specprops

import "github.com/bkcheck/bkcheck/properties"

// Builtin is a built-in (compiled) property of package invariants written
// in CEL: the same verdict on every state (TestBuiltinEquivalents), the
// same verdicts and traces on the regression suite (check's
// TestCELBuiltinsMatchRegress). The viewer explains a compiled property's
// violation through this form; docs/properties.md shows them as examples.
type Builtin struct {
	Name      string
	Invariant string // holds in every state; "" if none
	Terminal  string // holds in every terminal state; "" if none
}

// AutoRecovery's questions in CEL, as docs/guarantees.md and
// docs/findings.md ask them.
const (
	// AllCopies: every entry up to the closed ledger's last has a copy on
	// every bookie of its write set (the fragment the metadata names now).
	AllCopies = `seq(1, meta_last_entry).all(e, fragment_of(e).id > 0 && copies(e) == size(write_set(e)))`
	// Repaired: a ledger marked under-replicated is later not marked.
	Repaired = `size(ur_missing) > 0 ~> size(ur_missing) == 0`
	// Decommissioned: a decommission of a bookie of a closed ledger
	// returns (docs/model.md, "Decommission", says why closed).
	Decommissioned = `size(decom_bookie) > 0 && meta_status == "STATUS_CLOSED" ~> decom_done`
)

// Builtins are the CEL forms of invariants.All.
var Builtins = []Builtin{
	{Name: "TypeOK", Invariant: `meta_status in ["Nil", "STATUS_OPEN", "STATUS_IN_RECOVERY", "STATUS_CLOSED"] &&
  meta_last_entry >= 0 && meta_version >= 0 &&
  b_lac.all(b, lac, lac >= 0) &&
  b_entries.all(b, es, es.all(e, e.id >= 1 && e.id <= params.entries && e.data >= 1 && e.data <= params.entries)) &&
  clients.all(id, c, c.lac >= 0 && c.lap >= 0 && c.recovery_phase <= 2 &&
    c.fenced.all(b, b in params.bookie_ids) && c.recovery_ensemble.all(b, b in params.bookie_ids) &&
    c.fragments.all(f, size(f.ensemble) == params.ensemble && f.ensemble.all(b, b in params.bookie_ids)))`},
	{Name: "NoDivergenceBetweenClientAndMetaData", Invariant: `meta_status != "STATUS_CLOSED" ||
  (clients.exists_one(id, c, c.status == "STATUS_CLOSED" && c.lac == meta_last_entry) &&
   clients.all(id, c, c.status in ["Nil", "STATUS_IN_RECOVERY", "RECOVERY_ABORTED"] || c.lac <= meta_last_entry))`},
	{Name: "AllAckedEntriesAreReadable", Invariant: `clients.all(id, c, !(c.status in ["STATUS_OPEN", "STATUS_CLOSED"]) ||
  seq(1, c.lac).all(e, holders(e).exists(b, b in fragment_of(e).ensemble)))`},
	{Name: "AllCommittedEntriesReachAckQuorum", Invariant: `meta_status != "STATUS_CLOSED" ||
  seq(1, meta_last_entry).all(e, holders(e).filter(b, b in fragment_of(e).ensemble).size() >= params.ack_quorum)`},
	{Name: "NoOutOfOrderEntries", Invariant: `b_entries.all(b, es, es.all(e, e.data == e.id))`},
	{Name: "AckedEntriesHaveAckQuorumCopies", Invariant: `clients.all(id, c, !(c.status in ["STATUS_OPEN", "STATUS_CLOSED"]) ||
  seq(1, c.lac).all(e, copies(e) >= params.ack_quorum))`},
	{Name: "EntriesReachWriteQuorum",
		Invariant: `meta_status != "STATUS_CLOSED" ||
  clients.exists(id, c, c.status in ["STATUS_OPEN", "STATUS_IN_RECOVERY"]) ||
  messages.exists(m, m.count == 1 && m.type == "AddEntryRequestMessage") ||
  seq(1, meta_last_entry).all(e, fragment_of(e).id > 0 && copies(e) == size(write_set(e)))`,
		Terminal: `meta_status != "STATUS_CLOSED" ||
  seq(1, meta_last_entry).all(e, fragment_of(e).id > 0 && copies(e) == size(write_set(e)))`},
	{Name: "TailFragmentsReachWriteQuorum", Invariant: `seq(0, size(meta_fragments) - 2).all(i,
  seq(meta_fragments[i].first_entry_id, meta_fragments[i + 1].first_entry_id - 1).all(e,
    write_set(e, meta_fragments[i]).all(b, b in holders(e))))`},
	{Name: "AllEntriesOfClosedLedgerReachedWriteQuorum", Invariant: `meta_status != "STATUS_CLOSED" ||
  seq(1, meta_last_entry).all(e, fragment_of(e).id > 0 && copies(e) == size(write_set(e)))`},
	{Name: "FragmentsInOrder", Invariant: `seq(1, size(meta_fragments) - 1).all(i, meta_fragments[i].first_entry_id > meta_fragments[i - 1].first_entry_id) &&
  clients.all(id, c, seq(1, size(c.fragments) - 1).all(i, c.fragments[i].first_entry_id > c.fragments[i - 1].first_entry_id))`},
	{Name: "NoEntryAcknowledged", Invariant: `!clients.exists(id, c, c.lac > 0 && c.status == "STATUS_OPEN")`},
	{Name: "NoAckWithWriteSetCrashed", Invariant: `params.crashes == 0 || faults_used.crashes < params.crashes || size(b_down) != params.crashes ||
  !b_down.all(b, messages.exists(m, m.type == "AddEntryRequestMessage" && !m.recovery && m.entry.id == 1 && m.bookie == b)) ||
  b_down.exists(b, b in holders(1)) ||
  !clients.exists(id, c, c.lac >= 1 && c.status == "STATUS_OPEN")`},
	{Name: "LedgerCreationSucceeds", Invariant: `meta_status != "Nil" || !clients.exists(id, c, c.status == "CLIENT_WITHDRAWN")`},
}

// BuiltinByName is the CEL form of the built-in named name.
func BuiltinByName(name string) (Builtin, bool) {
	for _, b := range Builtins {
		if b.Name == name {
			return b, true
		}
	}
	return Builtin{}, false
}

// Defs are the CEL properties that stand for b: an invariant and/or a
// terminal property, named by suffix (suffix "" keeps b's name, which only
// an invariant-only or terminal-only built-in can do).
func (b Builtin) Defs(suffix string) []properties.Def {
	var out []properties.Def
	if b.Invariant != "" {
		out = append(out, properties.Def{Name: b.Name + suffix, Kind: properties.Invariant, Expr: b.Invariant})
	}
	if b.Terminal != "" {
		name := b.Name + suffix
		if b.Invariant != "" {
			name += ".terminal"
		}
		out = append(out, properties.Def{Name: name, Kind: properties.Terminal, Expr: b.Terminal})
	}
	return out
}
