package spec

import (
	"fmt"
	"strings"

	"github.com/bkcheck/bkcheck/vocab"
)

// Writer paths: which writer emits an action.
type writerPath uint8

const (
	bothPaths writerPath = iota // not the writer's add path: either writer has it
	specPath                    // the spec writer's add path only (ClientSendsAddEntryRequests' ensemble change and resend)
	javaPath                    // --add-path java only
)

// actionDecl is everything declared about one action. The lists the rest
// of the house reads are derived from actionTable: the vocabulary's origin
// and setting (Descriptor), the actions a parameter set can fire and a
// search of it must see fire (Model.Fireable, RequiredActions: coverage
// and bkcheck regress), and the actions the partial-order reduction
// covers (Footprints). A kind missing from the table fails
// TestActionTable.
type actionDecl struct {
	kind ActionKind
	// enabledBy names, in words, the setting that adds the action; "" for
	// the TLA+ spec's own actions (origin FromSpec). A variant's own
	// actions are declared with the variant (Variant.Actions).
	enabledBy string
	writer    writerPath
	// on reports whether the option that adds the action is on; nil:
	// always (the spec's actions).
	on func(p Params) bool
	// room is what the parameters must leave for the action to fire at
	// all: a second client for a recovery, a spare bookie for an ensemble
	// change. An action whose option is on but whose room is not there is
	// reported as unable to fire (coverage), not required.
	//
	// The generator never emits an action whose option is off or whose
	// room is missing (TestActionTableCan holds the claim on a grid of
	// settings, and the converse: on those small models every action that
	// can fire does).
	room []need
	// footprint: the action's footprint is declared, so the partial-order
	// reduction can cover a model that fires it.
	footprint bool
	// The reduction's declarations, beside the actions of each family
	// (actions_footprint.go, faults_footprint.go, ...): fp adds the
	// action's own footprint to the rules of its category (Footprints.Of),
	// dead says when it can never fire again (Footprints.Dead), necessary
	// what must change to enable it (Footprints.NecessaryInto). nil: the
	// category's rules alone; never dead beyond them; its reads.
	fp        func(x fp, a Action)
	dead      func(d deadView, a Action) bool
	necessary func(n necView, a Action) (varList, bool)
}

// need is a condition on the parameters an action needs to fire.
type need struct {
	what string // in words, for coverage
	ok   func(p Params) bool
}

// What the parameters must leave room for, shared by several actions.
var (
	// With AutoRecovery the last client is the worker's admin client,
	// which recovers only when the worker holds the ledger (something
	// marked it) and its grace expires.
	needRecovery = need{"a recovery (a second client; with --autorecovery and two, a ledger the worker defers)", func(p Params) bool {
		return p.Clients > 1 && (!p.AutoRecovery || p.Clients > 2 || (lostBookie(p) || p.PeriodicCheck()) && needDeferrable.ok(p))
	}}
	// The admin client's recovery goes through WorkerGraceExpires.
	needOwnRecovery = need{"a client that recovers of its own accord (--clients 2; 3 with --autorecovery)", func(p Params) bool {
		if p.AutoRecovery {
			return p.Clients > 2
		}
		return p.Clients > 1
	}}
	needSpare = need{"a bookie outside the ensemble (--bookies above E plus --unavailable)", func(p Params) bool {
		return p.Bookies-p.Unavailable > p.Ensemble
	}}
	needLost = need{"a bookie that can be lost (--crashes or --disk-loss)", lostBookie}
	// The worker defers an open ledger only once it has read its LAC
	// from a bookie of the last ensemble while the ledger is marked: a
	// second bookie in the ensemble, or a crashed one that came back.
	needDeferrable = need{"an open ledger whose LAC the worker can read while it is marked (E above 1, or --crashes)", func(p Params) bool {
		return p.Ensemble > 1 || p.Crashes > 0
	}}
	// A disk is lost only from a bookie of an existing ledger, so only
	// crashes and read-only switches count before creation.
	needTooFew = need{"faults that can leave fewer than E writable bookies before the ledger exists", func(p Params) bool {
		return p.Bookies-p.Unavailable-(p.Crashes+p.ReadOnly+p.DiskFull) < p.Ensemble
	}}
)

func lostBookie(p Params) bool    { return p.Crashes > 0 || p.DiskLoss > 0 }
func rejectsWrites(p Params) bool { return p.ReadOnly > 0 || p.DiskFull > 0 }

// actionTable declares every action, in ActionKind order.
var actionTable = []actionDecl{
	// The TLA+ spec's actions (BookKeeperProtocol.tla's Next).
	{kind: BookieSendsAddConfirmedResponse, footprint: true, fp: fpBookieAnswersAdd, necessary: necBookieSendsAddConfirmedResponse},
	{kind: BookieSendsAddFencedResponse, room: []need{needRecovery}, footprint: true, fp: fpBookieAnswersAdd, necessary: necBookieSendsAddFencedResponse},
	{kind: BookieSendsFencingReadLacResponse, room: []need{needRecovery}, footprint: true, fp: fpBookieSendsFencingReadLacResponse, dead: deadBookieSendsFencingReadLacResponse, necessary: necBookieSendsFencingReadLacResponse},
	{kind: BookieSendsReadResponse, room: []need{needRecovery}, footprint: true, fp: fpBookieAnswersRead, dead: deadBookieSendsReadResponse, necessary: necBookieSendsReadResponse},
	{kind: ClientCreatesLedger, footprint: true, fp: fpMetadataWrite, dead: deadClientCreatesLedger},
	{kind: ClientSendsAddEntryRequests, footprint: true, fp: fpWriterSendsAdd, dead: deadClientSendsAddEntryRequests, necessary: necClientSendsAddEntryRequests},
	{kind: ClientReceivesAddConfirmedResponse, footprint: true, fp: fpWriterReceivesAddAnswer, dead: deadWriterGone, necessary: necClientReceivesAddConfirmedResponse},
	{kind: ClientReceivesAddFencedResponse, room: []need{needRecovery}, footprint: true, fp: fpWriterReceivesAddAnswer, dead: deadWriterGone, necessary: necClientReceivesAddFencedResponse},
	{kind: ClientChangesEnsemble, writer: specPath, room: []need{needSpare}, footprint: true, fp: fpSpecEnsembleChange, dead: deadNeedsOpenMetadata, necessary: necSpecEnsembleChange},
	{kind: ClientResendsPendingAddOp, writer: specPath, room: []need{needSpare}, footprint: true, fp: fpWriterSendsAdd, dead: deadWriterGone, necessary: necClientResendsPendingAddOp},
	{kind: ClientClosesLedgerSuccess, footprint: true, fp: fpMetadataWrite, dead: deadNeedsOpenMetadata, necessary: necClientClosesLedgerSuccess},
	{kind: ClientClosesLedgerFail, room: []need{needRecovery}, footprint: true, fp: fpClientClosesLedgerFail, dead: deadWriterGone, necessary: necClientClosesLedgerFail},
	{kind: ClientStartsRecovery, room: []need{needOwnRecovery}, footprint: true, fp: fpClientStartsRecovery, dead: deadClientStartsRecovery, necessary: necClientStartsRecovery},
	{kind: ClientReceivesFencingReadLacResponse, room: []need{needRecovery}, footprint: true, fp: fpClientReceivesFencingReadLacResponse, dead: deadClientReceivesFencingReadLacResponse, necessary: necClientReceivesFencingReadLacResponse},
	{kind: ClientSendsRecoveryReadRequests, room: []need{needRecovery}, footprint: true, fp: fpRecoveryRead, dead: deadRecoveryRead, necessary: necClientSendsRecoveryReadRequests},
	{kind: ClientReceivesRecoveryReadResponse, room: []need{needRecovery}, footprint: true, fp: fpClientReceivesRecoveryReadResponse, dead: deadClientReceivesRecoveryReadResponse, necessary: necClientReceivesRecoveryReadResponse},
	{kind: ClientWritesBackEntry, room: []need{needRecovery}, footprint: true, fp: fpClientWritesBackEntry, dead: deadClientWritesBackEntry, necessary: necClientWritesBackEntry},
	{kind: RecoveryClientReceivesAddConfirmedResponse, room: []need{needRecovery}, footprint: true, fp: fpRecoveryClientReceivesAddConfirmedResponse, dead: deadRecoveryGone, necessary: necRecoveryClientReceivesAddConfirmedResponse},
	{kind: RecoveryClientChangesEnsemble, room: []need{needRecovery, needSpare}, footprint: true, fp: fpSpecEnsembleChange, dead: deadRecoveryOrClosed, necessary: necSpecEnsembleChange},
	{kind: RecoveryClientSendsPendingAddOp, room: []need{needRecovery, needSpare}, footprint: true, fp: fpRecoveryClientSendsPendingAddOp, dead: deadRecoveryGone, necessary: necRecoveryClientSendsPendingAddOp},
	{kind: RecoveryClientClosesLedger, room: []need{needRecovery}, footprint: true, fp: fpMetadataWrite, dead: deadRecoveryOrClosed, necessary: necRecoveryClientClosesLedger},

	// Faults (faults.go).
	{kind: BookieCrashes, enabledBy: "--crashes", on: func(p Params) bool { return p.Crashes > 0 }, footprint: true, fp: fpBookieCrashes, dead: deadBookieCrashes},
	{kind: BookieRestarts, enabledBy: "--crashes", on: func(p Params) bool { return p.Crashes > 0 }, footprint: true, fp: fpBookieRestarts, dead: deadBookieRestarts},
	{kind: BookieRejoinsEmpty, enabledBy: "--reformat", on: func(p Params) bool { return p.Reformat > 0 }, footprint: true, fp: fpBookieRejoinsEmpty, dead: deadBookieRejoinsEmpty},
	{kind: BookieBecomesReadOnly, enabledBy: "--read-only", on: func(p Params) bool { return p.ReadOnly > 0 }, footprint: true, fp: fpBookieBecomesReadOnly, dead: deadBookieBecomesReadOnly},
	{kind: ClientReceivesAddErrorResponse, enabledBy: "--read-only or --disk-full", on: rejectsWrites, footprint: true, fp: fpWriterReceivesAddAnswer},
	{kind: ClientFailsToCreateLedger, enabledBy: "bookie faults", on: Params.Faulty, room: []need{needTooFew}, footprint: true, fp: fpClientFailsToCreateLedger, dead: deadClientFailsToCreateLedger},
	{kind: BookieSendsAddReadOnlyResponse, enabledBy: "--read-only or --disk-full", on: rejectsWrites, footprint: true, fp: fpBookieAnswersAdd},
	{kind: BookieLosesDisk, enabledBy: "--disk-loss", on: func(p Params) bool { return p.DiskLoss > 0 }, footprint: true, fp: fpBookieLosesDisk, dead: deadBookieLosesDisk},
	// A fence needs a second client (a recovery): with one, only a lossy
	// journal gives the sync something to flush.
	{kind: BookieSyncsJournal, enabledBy: "--crashes", on: func(p Params) bool { return p.Crashes > 0 }, room: []need{{
		"a record a crash can lose (a lossy --journal, or a fence with a recovery)",
		func(p Params) bool { return p.LossyJournal() || p.FencesCanBeLost() && p.Clients > 1 },
	}}, footprint: true, fp: fpBookieSyncsJournal},
	{kind: BookieFillsDisk, enabledBy: "--disk-full", on: func(p Params) bool { return p.DiskFull > 0 }, footprint: true, fp: fpBookieFillsDisk, dead: deadBookieFillsDisk},

	// Protocol bugs BookKeeper had (bugs.go).
	{kind: BookieChecksAdd, enabledBy: "a variant", footprint: true, fp: fpBookieChecksAdd}, // the split add check's (Variant.Actions)
	{kind: BookieFailsRead, enabledBy: "--corrupt-reads", on: func(p Params) bool { return p.CorruptReads > 0 }, room: []need{needRecovery}, footprint: true, fp: fpBookieAnswersRead, dead: deadBookieFailsRead},
	{kind: ClientDeletesLedger, enabledBy: "--delete-ledger", on: func(p Params) bool { return p.DeleteLedger }, footprint: true, fp: fpClientDeletesLedger, dead: deadClientDeletesLedger, necessary: necClientDeletesLedger},
	{kind: BookieCollectsLedger, enabledBy: "--delete-ledger", on: func(p Params) bool { return p.DeleteLedger }, footprint: true, fp: fpBookieCollectsLedger, dead: deadBookieCollectsLedger, necessary: necBookieCollectsLedger},
	{kind: BookieRunsPreBootCheck, enabledBy: "--data-integrity with --crashes and --journal disabled", on: Params.DeferredCheck, footprint: true, fp: fpBookieRunsPreBootCheck},

	// The Java client's add path (javaclient.go).
	{kind: ClientReceivesAddTimeout, enabledBy: "--add-path java", writer: javaPath, footprint: true, fp: fpClientReceivesAddTimeout, necessary: necClientReceivesAddTimeout},
	{kind: ClientUpdatesEnsembleMetadata, enabledBy: "--add-path java", writer: javaPath, footprint: true, fp: fpClientUpdatesEnsembleMetadata, necessary: necWriterChangeStep},
	{kind: ClientCompletesEnsembleChange, enabledBy: "--add-path java", writer: javaPath, room: []need{needSpare}, footprint: true, fp: fpClientCompletesEnsembleChange, necessary: necWriterChangeStep},

	// Sequence recovery reads: a second replica is asked only with Qw > 1
	// and a recovery.
	{kind: ClientSendsNextRecoveryRead, enabledBy: "--recovery-read sequence", on: Params.SequenceReads, room: []need{
		{"a second replica (Qw above 1)", func(p Params) bool { return p.WriteQuorum > 1 }}, needRecovery}, footprint: true,
		fp: fpRecoveryRead, dead: deadRecoveryRead, necessary: necClientSendsNextRecoveryRead},

	// DbLedgerStorage checkpoints. An idle checkpoint moves the mark past
	// a record the busy one has not already: a fence record, which needs
	// a recovery.
	{kind: BookieCheckpoints, enabledBy: "--checkpoints", on: func(p Params) bool { return p.Checkpoints }, footprint: true, fp: fpBookieCheckpoints},
	{kind: BookieCheckpointsIdle, enabledBy: "--checkpoints", on: func(p Params) bool { return p.Checkpoints }, room: []need{needRecovery}, footprint: true, fp: fpBookieCheckpoints},

	// AutoRecovery (autorecovery.go): a lost bookie is what the Auditor
	// audits and the worker repairs.
	{kind: AuditorMarksLedgerUnderreplicated, enabledBy: "--autorecovery", on: Params.autoRecovers, room: []need{needLost}, footprint: true, fp: fpAuditor},
	{kind: AuditorChecksLedger, enabledBy: "--autorecovery (with --auditor-periodic-check on)", on: Params.PeriodicCheck, footprint: true, fp: fpAuditor},
	{kind: WorkerAcquiresLedger, enabledBy: "--autorecovery", on: Params.autoRecovers, room: []need{needLost}, footprint: true, fp: fpWorkerAcquiresLedger, necessary: necWorkerAcquiresLedger},
	{kind: WorkerReplicatesFragment, enabledBy: "--autorecovery", on: Params.autoRecovers, room: []need{needLost}, footprint: true, fp: fpWorkerCopies, necessary: necWorkerLocked},
	{kind: WorkerUpdatesEnsemble, enabledBy: "--autorecovery", on: Params.autoRecovers, room: []need{needLost}, footprint: true, fp: fpWorkerUpdatesEnsemble, necessary: necWorkerUpdatesEnsemble},
	{kind: WorkerDefersLedger, enabledBy: "--autorecovery", on: Params.autoRecovers, room: []need{needLost, needDeferrable}, footprint: true, fp: fpWorkerEndsRereplicate, necessary: necWorkerLocked},
	{kind: WorkerMarksLedgerReplicated, enabledBy: "--autorecovery", on: Params.autoRecovers, room: []need{needLost}, footprint: true, fp: fpWorkerEndsRereplicate, necessary: necWorkerLocked},
	{kind: WorkerReleasesLedger, enabledBy: "--autorecovery", on: Params.autoRecovers, room: []need{needLost}, footprint: true, fp: fpWorkerEndsRereplicate, necessary: necWorkerReleasesLedger},
	{kind: WorkerGraceExpires, enabledBy: "--autorecovery", on: Params.autoRecovers, room: []need{needLost, needDeferrable}, footprint: true, fp: fpWorkerGraceExpires, necessary: necWorkerGraceExpires},
	// An empty last fragment (a change at a pending entry, then a close
	// at the earlier LAC) with a bookie of it lost, and an entry no copy
	// of which the worker could read: more lost bookies than Qw.
	{kind: WorkerDiesOnInconsistentRange, enabledBy: "--autorecovery (master; not with --variant skip-inconsistent-range)", on: func(p Params) bool {
		return p.AutoRecovery && !p.variant().SkipInconsistentRange
	}, room: []need{needSpare, {"more lost bookies than Qw and two entries", func(p Params) bool {
		return p.Crashes+p.DiskLoss > p.WriteQuorum && p.Entries > 1
	}}}, footprint: true, fp: fpWorkerCopies, necessary: necWorkerLocked},

	// Decommission (decommission.go): of a bookie that is down.
	{kind: AdminDecommissionsBookie, enabledBy: "--decommission", on: Params.decommissions, room: []need{needLost}, footprint: true, fp: fpAdminDecommissionsBookie, dead: deadAdminDecommissionsBookie, necessary: necAdminDecommissionsBookie},
	{kind: AdminFinishesDecommission, enabledBy: "--decommission", on: Params.decommissions, room: []need{needLost}, footprint: true, fp: fpAdminFinishesDecommission, dead: deadAdminFinishesDecommission, necessary: necAdminFinishesDecommission},

	// The application thread's create (--create-window): an op created
	// while an ensemble change's update is pending, so a second add while
	// the first is unanswered.
	{kind: ClientCreatesAddOp, enabledBy: "--create-window", writer: javaPath, on: Params.CreatesAddOps, room: []need{
		{"a second add while the first is pending (--entries 2 --inflight 2)", func(p Params) bool { return p.Entries > 1 && p.Inflight > 1 }}}, footprint: true,
		fp: fpClientCreatesAddOp, dead: deadClientCreatesAddOp},

	// A write-back's timeout (javaclient.go): with a spare only a
	// completed op's (notifyWriteFailed), RecoveryClientChangesEnsemble
	// taking the others.
	{kind: RecoveryClientReceivesAddTimeout, enabledBy: "--add-path java", writer: javaPath,
		room: []need{needRecovery, {"a lost message (no --reliable-network, or --crashes or --disk-loss)", func(p Params) bool {
			return !p.ReliableNetwork || lostBookie(p)
		}}, {"with a spare, an op completed before all its writes answer (--write-quorum above --ack-quorum)", func(p Params) bool {
			return !needSpare.ok(p) || p.WriteQuorum > p.AckQuorum
		}}}, footprint: true, fp: fpRecoveryClientReceivesAddTimeout, dead: deadRecoveryGone, necessary: necRecoveryClientReceivesAddTimeout},

	// A recovery's fencing that ends without coverage (actions.go).
	{kind: RecoveryClientFencingFails, enabledBy: "--recovery-read sequence", on: Params.SequenceReads, room: []need{needRecovery,
		{"a fencing read that can fail (a lost message, a bookie down or in limbo)", func(p Params) bool {
			return !p.ReliableNetwork || lostBookie(p) || p.Unavailable > 0 || p.DataIntegrity
		}}}, footprint: true, fp: fpRecoveryClientFencingFails, dead: deadRecoveryClientFencingFails, necessary: necRecoveryClientFencingFails},

	// A recovery's sequence read failed at its last replica (actions.go).
	{kind: RecoveryClientReadFails, enabledBy: "--recovery-read sequence", on: Params.SequenceReads, room: []need{needRecovery,
		{"a recovery read that can fail (a lost message, a bookie down)", func(p Params) bool {
			return !p.ReliableNetwork || lostBookie(p)
		}}}, footprint: true, fp: fpRecoveryClientReadFails, dead: deadRecoveryClientReadFails, necessary: necRecoveryClientReadFails},

	// A write-back refused by a bookie that collected the fenced ledger
	// (actions.go).
	{kind: RecoveryClientReceivesAddFencedResponse, enabledBy: "--delete-ledger", on: Params.HasDeletion, room: []need{needRecovery,
		{"the writer's close over a recovery, so that it deletes the ledger while the recovery writes back (--close-rereads)", func(p Params) bool { return p.CloseRereads }}}, footprint: true,
		fp: fpRecoveryClientReceivesAddFencedResponse, dead: deadRecoveryGone, necessary: necRecoveryClientReceivesAddFencedResponse},

	// A stopped bookie's registration expires (faults.go).
	{kind: BookieRegistrationExpires, enabledBy: "--registration-expiry", on: func(p Params) bool { return p.RegistrationExpiry }, footprint: true,
		fp: fpBookieRegistrationExpires, dead: deadBookieRegistrationExpires},
	{kind: BookieBecomesWritable, enabledBy: "--read-only", on: func(p Params) bool { return p.ReadOnly > 0 }, footprint: true, fp: fpBookieBecomesWritable, dead: deadBookieBecomesWritable},
}

func (p Params) decommissions() bool { return p.Decommission }

func (p Params) autoRecovers() bool { return p.AutoRecovery }

// writerHas reports whether k can fire with p's writer: an action of the
// spec writer's add path only never fires with --add-path java, and the
// Java path's never without.
func (p Params) writerHas(k ActionKind) bool {
	switch decl(k).writer {
	case specPath:
		return !p.JavaAddPath()
	case javaPath:
		return p.JavaAddPath()
	}
	return true
}

// decl returns k's declaration.
func decl(k ActionKind) *actionDecl { return &actionTable[k-1] }

// variantOf returns the variant that declares k as its own, or nil.
func variantOf(k ActionKind) *Variant {
	for i := range Variants {
		for _, vk := range Variants[i].Actions {
			if vk == k {
				return &Variants[i]
			}
		}
	}
	return nil
}

// actionInfo says where an action comes from and what adds it.
func actionInfo(k ActionKind) vocab.Action {
	d := decl(k)
	a := vocab.Action{Name: k.String(), Origin: vocab.FromExtension, EnabledBy: d.enabledBy}
	switch {
	case variantOf(k) != nil:
		a.Origin, a.EnabledBy = vocab.FromVariant, "--variant "+variantOf(k).Name
	case d.enabledBy == "":
		a.Origin = vocab.FromSpec
	}
	switch d.writer {
	case specPath:
		a.EnabledBy = "the spec writer's add path (not --add-path java)"
	case javaPath:
		a.EnabledBy = "--add-path java"
	}
	return a
}

// fireable reports whether the model can fire k: its variant or option
// is on, its writer path is the chosen one, the parameters leave room for
// it, and --exclude does not remove it.
func (m *Model) fireable(k ActionKind) bool { return m.added(k) && m.missing(k) == nil }

// added reports whether the model's settings add k: its variant or option
// is on, its writer path is the chosen one, and --exclude does not remove
// it.
func (m *Model) added(k ActionKind) bool {
	d := decl(k)
	p := m.P
	switch {
	case m.excluded&(1<<uint(k)) != 0:
		return false
	case variantOf(k) != nil && !m.ownAction(k):
		return false
	case !p.writerHas(k):
		return false
	}
	return d.on == nil || d.on(p)
}

// missing lists what the parameters do not leave k room for.
func (m *Model) missing(k ActionKind) []string {
	var out []string
	for _, n := range decl(k).room {
		if !n.ok(m.P) {
			out = append(out, n.what)
		}
	}
	return out
}

// Unable lists the actions the model's options add beyond the TLA+
// spec's that its parameters leave no room for, each with what it needs:
// coverage says so rather than requiring them.
func (m *Model) Unable() []string {
	var out []string
	for k := ActionKind(1); k < numActionKinds; k++ {
		if m.added(k) && !m.specAction(k) {
			if miss := m.missing(k); miss != nil {
				out = append(out, fmt.Sprintf("%s, which needs %s", k, strings.Join(miss, " and ")))
			}
		}
	}
	return out
}

// specAction reports whether k is one of the TLA+ spec's own actions that
// either writer has.
func (m *Model) specAction(k ActionKind) bool {
	d := decl(k)
	return d.enabledBy == "" && variantOf(k) == nil && d.writer != javaPath
}

// ownAction reports whether k is one of the model's variant's actions.
func (m *Model) ownAction(k ActionKind) bool {
	for _, vk := range m.V.Actions {
		if vk == k {
			return true
		}
	}
	return false
}

// Fireable lists, in ActionKind order, the actions the model's settings
// can fire: coverage lists those that never did.
func (m *Model) Fireable() []ActionKind {
	var out []ActionKind
	for k := ActionKind(1); k < numActionKinds; k++ {
		if m.fireable(k) {
			out = append(out, k)
		}
	}
	return out
}

// RequiredActions are the actions a search of the model should see fire:
// those its settings can fire (Fireable) beyond the TLA+ spec's own. A
// run in which one never fires exercised less than its options claim
// (coverage warns; bkcheck regress fails such a case). The spec's actions
// are listed when they never fire but not required: a small parameter
// set (one entry, a reliable network) legitimately leaves some idle.
func (m *Model) RequiredActions() []ActionKind {
	var out []ActionKind
	for _, k := range m.Fireable() {
		if !m.specAction(k) {
			out = append(out, k)
		}
	}
	return out
}

// footprintGaps lists the actions the model can fire whose footprint is
// not declared, with the setting that adds each: the partial-order
// reduction cannot cover the model while one is left.
func (m *Model) footprintGaps() []string {
	var out []string
	for _, k := range m.Fireable() {
		if !decl(k).footprint {
			out = append(out, fmt.Sprintf("%s (%s)", k, actionInfo(k).EnabledBy))
		}
	}
	return out
}

// NotCovered says why the partial-order reduction does not cover the
// model ("" when it does): the options that change the spec's actions
// beyond what their footprints declare, and the actions it can fire
// without a declared footprint (the option that adds an action also
// changes the spec's, so each such action's option is named first).
func (m *Model) NotCovered() string {
	var why []string
	if gaps := m.footprintGaps(); len(gaps) > 0 {
		why = append(why, "actions without a footprint: "+strings.Join(gaps, ", "))
	}
	return strings.Join(why, "; ")
}

// CheckActionTable reports a kind the table misses or declares out of
// order.
func CheckActionTable() error {
	if len(actionTable) != int(numActionKinds)-1 {
		return fmt.Errorf("actionTable declares %d actions, there are %d kinds", len(actionTable), numActionKinds-1)
	}
	for i, d := range actionTable {
		if d.kind != ActionKind(i+1) {
			return fmt.Errorf("actionTable[%d] is %s, want %s: declare every kind, in ActionKind order", i, d.kind, ActionKind(i+1))
		}
	}
	return nil
}
