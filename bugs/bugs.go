// Package bugs is BookKeeper's own history as a regression suite: each
// protocol bug apache/bookkeeper had (or has) as a configuration of the
// model in which bkcheck finds it, with the story of the bug and the
// configuration of its fix, which bkcheck checks clean (or, where the
// record is unclear, says what it finds). docs/bugs.md is generated from
// it, and bkcheck regress runs it. Findings (findings.go) are the
// questions still open upstream, asked of master and of each proposed
// fix: docs/findings.md.
package bugs

import (
	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/regress"
	"github.com/bkcheck/bkcheck/spec"
)

// Bug is one protocol bug of BookKeeper's.
type Bug struct {
	ID        string // e.g. "bk-2614"
	Title     string
	Refs      string // issues and pull requests
	Mechanism string // how it goes wrong, in two or three sentences
	Versions  string // releases affected
	Fix       string // what changed, where, in which release; or why there is none
	// Variant is the model's variant of the bug, which the releases that
	// have it turn on ("" for a bug no variant isolates: a fault of the
	// bookie's environment, or one every release has).
	Variant string
	// Bug is the smallest configuration bkcheck knows that shows it,
	// asked of BookKeeper as released (--bookkeeper): the last release
	// before the fix, or the newest for an open bug; Expect is what the
	// search must find there.
	Bug    check.ModelConfig
	Expect regress.Expect
	// Still, if set, is the same question on the first release with the
	// fix, which another bug of that release still fails.
	Still *Still
	// Fixed is the same question on the first release where the fix
	// answers it (the fix's release, or the first with the other bug's
	// fix too; a candidate fix: a variant of the newest release), and
	// FixedExpect its verdict; FixedBound bounds its search (0: none).
	Fixed       check.ModelConfig
	FixedExpect regress.Expect
	FixedBound  int64
	// Finding is what bkcheck adds to the record, if anything.
	Finding string
}

// Still is a bug's question on the first release with its fix, failed
// there by another bug of that release, By (the ID of a bug of All,
// whose variant the release has and the Fixed release does not).
type Still struct {
	Config check.ModelConfig
	Expect regress.Expect
	By     string
}

// p is the parameter set most bugs need, on BookKeeper release r: two
// bookies, two clients (a writer and a recovering client), E = Qw = Qa
// = 2, one entry.
func p(r string, edit func(*spec.Params)) spec.Params {
	x := spec.Params{BookKeeper: r, Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1}
	if edit != nil {
		edit(&x)
	}
	return x
}

// The releases the bugs are asked of: a fixed bug on the last release
// before its fix, the fix on the first release with it (docs/model.md,
// "BookKeeper as released", lists each line's bugs).
const (
	r4130 = "4.13.0"
	r4140 = "4.14.0"
	r4150 = "4.15.0"
	r4151 = "4.15.1"
	r4171 = "4.17.1"
	r4172 = "4.17.2"
	r4173 = "4.17.3"
	r4174 = "4.17.4"
	now   = spec.DefaultRelease // an open bug's, and its candidate fix's
)

const noDivergence = "NoDivergenceBetweenClientAndMetaData"

var both = spec.Symmetry{Bookies: true, Clients: true}

// staleAcksConfig is #3005's configuration on the Java client's add path:
// E = 3 > Qw = 2 = Qa, a spare bookie, three entries in flight, one
// bookie crash and no message loss (the failure is the crash's).
func staleAcksConfig(variant string) check.ModelConfig {
	return check.ModelConfig{
		Params: spec.Params{Bookies: 4, Clients: 1, Ensemble: 3, WriteQuorum: 2, AckQuorum: 2, Entries: 3, Inflight: 3,
			Crashes: 1, ReliableNetwork: true, AddPath: spec.AddPathJava, Variant: variant},
		Invariants: []string{"AckedEntriesHaveAckQuorumCopies", "TypeOK"}, Symmetry: spec.Symmetry{Bookies: true},
	}
}

// onRelease asks mc of BookKeeper release r.
func onRelease(r string, mc check.ModelConfig) check.ModelConfig {
	mc.BookKeeper = r
	return mc
}

// withoutCreateWindow leaves out the window between an add's create and
// its queueing (ClientCreatesAddOp), for a fix of another bug: that window
// is a bug of its own, f-create-window, which the fix does not touch.
func withoutCreateWindow(mc check.ModelConfig) check.ModelConfig {
	mc.Exclude = append(append([]string{}, mc.Exclude...), "ClientCreatesAddOp")
	return mc
}

// staleAcksLossy is staleAcksConfig with every message losable and a
// writer that gives up after one ensemble change (maxNumEnsembleChanges
// = 1): the loss ladder's rung that an exhaustive search reaches here
// (with BookKeeper's default, unlimited, the writer's changes multiply
// with every lost message beyond reach).
func staleAcksLossy(variant string) check.ModelConfig {
	mc := staleAcksConfig(variant)
	mc.ReliableNetwork, mc.MaxEnsembleChanges = false, 1
	return mc
}

// Constraints that put the events of a story in order where the state does
// not record it: the bookie loses its data only once the ledger is closed
// (the split brain of #544 and #4812, not #2612's truncation), or before
// it (the truncation, not the split brain).
const (
	reformatAfterClose = `ReformatAfterClose=faults_used.reformat == 0 || meta_status == "STATUS_CLOSED"`
	// reformatWhileOpen: the ledger closes only after the re-format (the
	// order of #2612's truncation).
	reformatWhileOpen = `ReformatWhileOpen=faults_used.reformat >= 1 || meta_status != "STATUS_CLOSED"`
)

// fixedBound bounds the fixes' searches that BookKeeper's model takes
// beyond the page's minutes (tens of millions of orbits, where the TLA+
// spec's model had one or two million states): their verdict is "no
// counterexample within" it, which proves nothing beyond it.
const fixedBound = 3_000_000

// noCheckStoreRace leaves bk-4701's race out of a question about another
// bug, on a release that still has it (before 4.17.4, every add is
// checked against the fence apart from its store): a state where a bookie
// is fenced while it holds an add it checked and has not stored yet
// arises only from that race, and is not expanded.
const noCheckStoreRace = `NoCheckStoreRace=b_fenced.all(b, !b_fenced[b] || size(b_checked[b]) == 0)`

// without4701 is the settings of a question asked of a release with
// bk-4701's race, about another bug.
var without4701 = properties.Settings{Constraint: []string{noCheckStoreRace}}

// splitBrain4812 leaves out, for #4812's three-bookie search, the actions
// that cannot put an acknowledged entry beyond a closed ledger's end once
// the ensemble holds every bookie (no spare): fenced rejections and closes
// only withdraw the writer, resends and ensemble changes need a spare,
// recovery write-backs only add copies (the argument of
// docs/guarantees.md's data-loss questions, which its
// TestRestrictedDataLossAgrees checks).
var splitBrain4812 = []string{"ClientReceivesAddFencedResponse", "BookieSendsAddFencedResponse", "ClientResendsPendingAddOp",
	"ClientClosesLedgerSuccess", "ClientClosesLedgerFail", "ClientWritesBackEntry", "ClientChangesEnsemble",
	"RecoveryClientReceivesAddConfirmedResponse", "RecoveryClientChangesEnsemble", "RecoveryClientSendsPendingAddOp"}

// truncation2615 leaves out actions the #2615 story does not need, so that
// its 3-bookie, 2-entry space stays within reach: closes by the writer,
// fenced rejections, and the recovery client's resends and close (its
// invalid fragment list appears before it would close).
var truncation2615 = []string{"ClientClosesLedgerSuccess", "ClientClosesLedgerFail", "ClientReceivesAddFencedResponse",
	"BookieSendsAddFencedResponse", "RecoveryClientSendsPendingAddOp", "RecoveryClientClosesLedger"}

// All lists the bugs in the order of docs/bugs.md.
var All = []Bug{
	{
		ID: "bk-2614", Title: "Recovery reads did not fence", Refs: "apache/bookkeeper#2614, PR #2616",
		Mechanism:   "Only the fencing LAC read fenced bookies, and it completes on quorum coverage, so one bookie of the ensemble could stay unfenced if its fence request was lost. Recovery then read the last entry, got NoSuchEntry from that bookie (enough with Qw − Qa + 1 = 1) and closed the ledger before it, while the writer's add of that entry reached the unfenced bookie and was acknowledged.",
		Versions:    "every release up to 4.13.0 (4.12.1 has the same code)",
		Fix:         "PR #2616: recovery reads carry FLAG_DO_FENCING (PendingReadOp.sendReadTo), released in 4.14.0.",
		Variant:     spec.VariantNoRecoveryFence,
		Bug:         check.ModelConfig{Params: p(r4130, nil), Symmetry: both},
		Expect:      regress.Expect{Status: "violation", Invariant: noDivergence, Length: 15, Depth: 15, Distinct: 177339},
		Still:       &Still{Config: check.ModelConfig{Params: p(r4140, nil), Symmetry: both}, Expect: regress.Expect{Status: "violation", Invariant: noDivergence, Length: 16}, By: "bk-4701"},
		Fixed:       check.ModelConfig{Params: p(r4140, nil), Symmetry: both, Settings: without4701},
		FixedExpect: regress.Expect{Status: "ok", Slow: true},
	},
	{
		ID: "bk-2615", Title: "Recovery wrote back entries of earlier fragments and proposed an invalid ensemble", Refs: "apache/bookkeeper#2615, PR #2654",
		Mechanism: "With two or more fragments, the fencing LAC read of the last fragment can return a LAC below its first entry (here 0: its bookies hold only entries with an older piggy-backed LAC). Recovery then read and wrote back entries of earlier fragments to the last fragment's ensemble; when such a write-back failed, the recovery ensemble change started a fragment at LAC + 1, before the last fragment. BookKeeper's closeRecovered refuses that (checkState), so recovery fails, and keeps failing.",
		Versions:  "up to 4.13.0",
		Fix:       "PR #2654: LedgerRecoveryOp raises the fenced LAC to the last fragment's first entry − 1; released in 4.14.0.",
		Variant:   spec.VariantNoLacFloor,
		Bug: check.ModelConfig{Params: spec.Params{BookKeeper: r4130, Bookies: 3, Clients: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 2, Inflight: 1,
			Exclude: truncation2615},
			Invariants: []string{"FragmentsInOrder", "AllAckedEntriesAreReadable"}, Symmetry: spec.Symmetry{Clients: true}},
		Expect: regress.Expect{Status: "violation", Invariant: "FragmentsInOrder", Length: 20, Slow: true},
		Fixed: check.ModelConfig{Params: spec.Params{BookKeeper: r4140, Bookies: 3, Clients: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 2, Inflight: 1,
			Exclude: truncation2615},
			Invariants: []string{"FragmentsInOrder", "AllAckedEntriesAreReadable"}, Symmetry: both, Settings: without4701},
		FixedExpect: regress.Expect{Status: "unknown", Slow: true},
		FixedBound:  fixedBound,
	},
	{
		ID: "bk-544", Title: "A bookie whose journal was emptied came back as a new bookie", Refs: "apache/bookkeeper#544, PR #712",
		Mechanism: "Cookie validation took a journal directory without a cookie for a new environment and re-stamped the cookies, so a bookie whose journal was emptied rejoined under its old identity without its entries and its fences. The trace is the split brain: recovery fences the bookie and closes the ledger, the bookie's journal is emptied and it rejoins unfenced, and the old writer, which never learnt of the close, reaches Ack quorum on it and on the bookie recovery did not fence. (Emptied while the ledger is open, the same bookie lets recovery truncate instead: #2612 below.)",
		Versions:  "before 4.6.0",
		Fix:       "PR #712: the cookie in the metadata store is the source of truth; a directory without a cookie stops the bookie (LegacyCookieValidation today). Modelled as a wiped disk that keeps the bookie down (--disk-loss) instead of a re-format (--reformat). Released in 4.6.0.",
		Bug: check.ModelConfig{Params: p(now, func(x *spec.Params) { x.Reformat = 1 }), Invariants: []string{noDivergence}, Symmetry: both,
			Settings: properties.Settings{Constraint: []string{reformatAfterClose}}},
		Expect:      regress.Expect{Status: "violation", Invariant: noDivergence, Length: 15},
		Fixed:       check.ModelConfig{Params: p(now, func(x *spec.Params) { x.DiskLoss = 1 }), Invariants: []string{noDivergence}, Symmetry: both},
		FixedExpect: regress.Expect{Status: "ok", Distinct: 41851278, Slow: true},
	},
	{
		ID: "bk-2612", Title: "A wiped bookie made a non-empty ledger look empty", Refs: "apache/bookkeeper#2612 (open), BP-46 (PR #2706, first numbered BP-44), PR #2936",
		Mechanism: "A bookie restarted with an empty disk under its old identity answers NoSuchEntry (NoSuchLedger) like one that never had the ledger. Such answers count as trustworthy: one is enough for the LAC read's coverage and, with Qw = Qa, for recovery to decide an entry does not exist, so recovery closes the ledger before entries the writer acknowledged.",
		Versions:  "all; the issue is open",
		Fix:       "No change to the coverage rule. The mitigation is BP-46's data-integrity check (PR #2936, 4.15.0, opt-in dataIntegrityChecking): a bookie that lost data fences the ledger and answers Unknown (limbo) for what it lacks. It runs on a re-formatted bookie only if the re-format kept the bookie's cookie and dataIntegrityStampMissingCookiesEnabled=true (DataIntegrityCookieValidation.checkCookies, which then waits for it); a re-format that deleted the cookie (bookieformat -deleteCookie, decommissionbookie) boots as a new environment and runs no check, which is the bug's configuration again. The fixed run below is the configuration where the check runs.",
		Bug:       check.ModelConfig{Params: p(now, func(x *spec.Params) { x.Reformat = 1 }), Invariants: []string{noDivergence}, Symmetry: both},
		Expect:    regress.Expect{Status: "violation", Invariant: noDivergence, Length: 15},
		Fixed: check.ModelConfig{Params: p(now, func(x *spec.Params) { x.Reformat, x.DataIntegrity, x.ReformatCookie = 1, true, spec.CookieKept }), Invariants: []string{noDivergence}, Symmetry: both,
			Settings: properties.Settings{Constraint: []string{reformatWhileOpen}}},
		FixedExpect: regress.Expect{Status: "unknown", Slow: true},
		FixedBound:  fixedBound,
		Finding:     "Where it runs, the data-integrity check stops this truncation (the fixed run asks about a re-format while the ledger is open, the truncation's order), but not the loss: let the re-format come after the close (--constraint 'ReformatAfterClose=faults_used.reformat == 0 || meta_status == \"STATUS_CLOSED\"') and bkcheck finds bk-544's split brain again, check or not: the check leaves closed ledgers alone, so the bookie comes back unfenced and the old writer's add reaches quorum on it and on a bookie recovery never fenced.",
	},
	{
		ID: "bk-2908", Title: "A corrupt entry log answered NoSuchEntry", Refs: "apache/bookkeeper#2908, PR #2909",
		Mechanism:   "When the entry log could not be read for an entry its index has, the bookie threw NoEntryException, which the client reads as an explicit negative. One such false negative is enough (Qw − Qa + 1 = 1 with Qw = Qa) for recovery to decide the entry does not exist and close the ledger before it, turning a recoverable read error into data loss.",
		Versions:    "before 4.14.6, 4.15.1 and 4.16.0",
		Fix:         "PR #2909: the read fails with an IOException (EIO), which recovery counts as neither positive nor negative; released in 4.14.6, 4.15.1, 4.16.0.",
		Variant:     spec.VariantCorruptReadNosuch,
		Bug:         check.ModelConfig{Params: p(r4150, func(x *spec.Params) { x.CorruptReads = 1 }), Symmetry: both},
		Expect:      regress.Expect{Status: "violation", Invariant: noDivergence, Length: 16},
		Still:       &Still{Config: check.ModelConfig{Params: p(r4151, func(x *spec.Params) { x.CorruptReads = 1 }), Symmetry: both}, Expect: regress.Expect{Status: "violation", Invariant: noDivergence, Length: 16}, By: "bk-4701"},
		Fixed:       check.ModelConfig{Params: p(r4151, func(x *spec.Params) { x.CorruptReads = 1 }), Symmetry: both, Settings: without4701},
		FixedExpect: regress.Expect{Status: "unknown", Slow: true},
		FixedBound:  fixedBound,
	},
	{
		ID: "bk-4651", Title: "An entry acknowledged on the ack of a bookie the ensemble change replaced", Refs: "apache/bookkeeper#3005, #4097, #4651; PR #3041 and #4194 (open)",
		Mechanism:   "An ensemble change starts the new fragment at LAC + 1 and ends, on the ledger's ordered thread, with unsetSuccessAndSendWriteRequest over the pending queue: op by op, each replaced position's ack is dropped and the entry re-sent. With striping (E > Qw) an op whose write set lacks the replaced position calls sendAddSuccessCallbacks from inside that loop, and the callbacks run on to later ops that the loop has not unset yet: an entry completed while the change ran, with an ack from the replaced bookie, is acknowledged although the metadata assigns it to the new bookie, which never got it (docs/findings.md#f-stale-acks tells the trace step by step).",
		Versions:    "4.9 onwards (immutable-metadata LedgerHandle) to master; open",
		Fix:         "None merged: PR #3041 (callbacks once after the whole loop) and PR #4194 are open, #4651 was closed without a fix. bkcheck checks PR #3041's change clean on 4.18.2 (below) with the window between an add's create and its queueing left out: that window is a bug of its own, which PR #3041 does not touch (docs/findings.md#f-create-window: with it the same question is violated in 18 states). PR #4194's diff was not available to model.",
		Bug:         onRelease(now, staleAcksConfig("")),
		Expect:      regress.Expect{Status: "violation", Invariant: "AckedEntriesHaveAckQuorumCopies", Length: 17},
		Fixed:       withoutCreateWindow(onRelease(now, staleAcksConfig(spec.VariantCallbacksAfterUnset))),
		FixedExpect: regress.Expect{Status: "ok", Distinct: 3571514},
		Finding:     "Without striping master does not show it: every op's write set holds the replaced position, no callback runs inside the loop, and a late ack from the replaced address is dropped by writeComplete (spec/testdata/scenarios/bug-4651-stale-acks.txt). An earlier version of this page used a variant that counted such late acks too, an over-approximation the Java client's add path (--add-path java) replaces.",
	},
	{
		ID: "bk-4701", Title: "A bookie checked the fence and stored an add in two steps", Refs: "apache/bookkeeper PR #4701",
		Mechanism:   "A bookie serialises 'check not fenced, then write' against 'fence, then read the LAC' with the ledger handle's lock, but an add and a fence on a ledger with no handle yet (right after a restart) could create two handles and lock different monitors. The fence then ran between the add's check and its write: recovery saw the LAC from before the entry and closed the ledger before it, while the bookie stored the entry and acknowledged it.",
		Versions:    "at least 4.5.0 up to 4.17.3",
		Fix:         "PR #4701: HandleFactoryImpl.getHandle returns the handle stored first (putIfAbsent), so both requests lock the same one; released in 4.17.4 and 4.18.0.",
		Variant:     spec.VariantSplitAddCheck,
		Bug:         check.ModelConfig{Params: p(r4173, nil), Symmetry: both},
		Expect:      regress.Expect{Status: "violation", Invariant: noDivergence, Length: 16},
		Fixed:       check.ModelConfig{Params: p(r4174, nil), Symmetry: both},
		FixedExpect: regress.Expect{Status: "ok", Slow: true},
	},
	{
		ID: "bk-4462", Title: "A fenced and deleted ledger accepted another client's add", Refs: "apache/bookkeeper PR #4462",
		Mechanism:   "A client recovers (fences) and closes a ledger and deletes it, as Pulsar does with a topic's last ledger after taking the topic over. Once a bookie garbage-collected the ledger its fence was gone with the handle, so the old writer's add created a fresh, unfenced handle, was stored and acknowledged: messages acknowledged into a deleted ledger.",
		Versions:    "before 4.16.7, 4.17.2 and 4.18.0",
		Fix:         "PR #4462: bookies remember fenced ledgers they deleted (recentlyFencedAndDeletedLedgers, for 7 days) and answer their adds EFENCED; released in 4.16.7, 4.17.2, 4.18.0.",
		Variant:     spec.VariantDeleteForgetsFence,
		Bug:         check.ModelConfig{Params: p(r4171, func(x *spec.Params) { x.DeleteLedger = true }), Symmetry: both, Settings: without4701},
		Expect:      regress.Expect{Status: "violation", Invariant: noDivergence, Length: 18},
		Fixed:       check.ModelConfig{Params: p(r4172, func(x *spec.Params) { x.DeleteLedger = true }), Symmetry: both, Settings: without4701},
		FixedExpect: regress.Expect{Status: "unknown", Slow: true},
		FixedBound:  fixedBound,
		Finding:     "The fix holds while bookies run, but the memory it adds is not persisted: with one crash (a bookie restarting after it garbage-collected the ledger) bkcheck finds the old writer's add accepted again, a 19-state trace (docs/findings.md#f-4462-restart).",
	},
	{
		ID: "bk-4812", Title: "Empty bookies at the same address let a stale writer reach quorum", Refs: "apache/bookkeeper#4812, apache/pulsar#26074 (both open)",
		Mechanism: "A bookie of an open ledger is decommissioned (decommissionbookie re-replicates its ledgers and deletes its cookie) and a fresh process with an empty disk starts at the same address: cookie validation finds a new environment, so no pre-boot check runs, whatever dataIntegrityChecking says. Recovery (auto-recovery, or a new owner of the topic) has fenced Qw − Qa + 1 = 2 of the 3 bookies and closed the ledger; the writer's cached ensemble still names the address, and its add is accepted by the fresh, unfenced bookie and by the one recovery never reached: Ack quorum beyond the closed end, silent loss.",
		Versions:  "reproduced on 4.16.x and 4.17.3; open",
		Fix:       "None merged. bkcheck checks a candidate: a bookie asked for a normal add to a ledger it holds nothing of (a ledger it has never seen) reads the ledger's metadata and rejects the add as fenced if it is CLOSED or IN_RECOVERY (variant add-checks-metadata). The data-integrity check fencing closed ledgers too (variant integrity-fences-closed, the BP-46 text's rule) is no fix here: with the cookie deleted the check does not run at all.",
		Bug: check.ModelConfig{Params: spec.Params{BookKeeper: now, Bookies: 3, Clients: 2, WriteQuorum: 3, AckQuorum: 2, Entries: 1, Inflight: 1, Reformat: 1, Exclude: splitBrain4812},
			Invariants: []string{noDivergence}, Symmetry: both, Settings: properties.Settings{Constraint: []string{reformatAfterClose}}},
		Expect: regress.Expect{Status: "violation", Invariant: noDivergence, Length: 20, Slow: true},
		Fixed: check.ModelConfig{Params: spec.Params{BookKeeper: now, Bookies: 3, Clients: 2, WriteQuorum: 3, AckQuorum: 2, Entries: 1, Inflight: 1, Reformat: 1, Exclude: splitBrain4812,
			Variant: spec.VariantAddChecksMetadata}, Invariants: []string{noDivergence}, Symmetry: both, Settings: properties.Settings{Constraint: []string{reformatAfterClose}}},
		FixedExpect: regress.Expect{Status: "unknown", Slow: true},
		FixedBound:  fixedBound,
		Finding:     "The candidate closes this split brain as far as the search reaches: BookKeeper's model of three bookies is beyond an exhaustive search here (the TLA+ spec's model, with the same candidate, is clean, exhaustive up to symmetry). It leaves #2612's truncation (a re-format while the ledger is open) as it is: that is the coverage rule's, not the add path's.",
	},
}

// Cases are the regression cases of the bugs: each found as expected
// under its configuration, and its fix's verdict.
func Cases() []regress.Case {
	var out []regress.Case
	for _, b := range All {
		bugCfg := check.Config{ModelConfig: b.Bug}
		out = append(out, regress.Case{File: "bugs", Name: b.ID, Config: bugCfg, Expect: b.Expect})
		if b.Still != nil {
			out = append(out, regress.Case{File: "bugs", Name: b.ID + "-still", Config: check.Config{ModelConfig: b.Still.Config}, Expect: b.Still.Expect})
		}
		fixCfg := check.Config{ModelConfig: b.Fixed}
		fixCfg.MaxStates = b.FixedBound
		out = append(out, regress.Case{File: "bugs", Name: b.ID + "-fixed", Config: fixCfg, Expect: b.FixedExpect})
	}
	return out
}

// compare is regress.Compare for a case of the suite.
func compare(c regress.Case, rep *check.Report) []string { return regress.Compare(c.Expect, rep) }
