package bridge

import (
	"strings"

	"github.com/bkcheck/bkcheck/check"
)

// releaseVariant says whether a trace's variant is the behaviour of
// BookKeeper releases rather than a proposed change (check.ReleaseBug
// declares which releases fixed each): a trace of one runs on any
// release, and says whether that release behaves as the variant
// (REPRODUCED) or as the fix (DIVERGED where the fix acts). A composition
// ("a+b", a release line with two such bugs) is one if each part is.
func releaseVariant(v string) bool {
	for _, part := range strings.Split(v, "+") {
		if _, ok := check.ReleaseBug(part); !ok && part != "reference" {
			return false
		}
	}
	return true
}

// undriven says why the harness does not drive an action of the model that
// it has no mapping for, where there is more to say than that.
var undriven = map[string]string{
	"BookieFailsRead":       "a read of a corrupt entry log: the harness does not corrupt a bookie's files",
	"BookieCheckpoints":     "a checkpoint of a bookie's ledger storage: the harness's bookies never checkpoint by the clock (flushInterval a day), and it has no checkpoint on demand yet",
	"BookieCheckpointsIdle": "an idle checkpoint (the journal mark moved with nothing to flush): the harness's bookies never checkpoint by the clock (flushInterval a day), and it has no checkpoint on demand yet",
	"ClientCreatesAddOp":    "the application's thread held between PendingAddOp.create and pendingAddOps.add: a window inside the client's process, which the harness does not control (it controls messages, crashes and flushes)",
	"BookieChecksAdd":       "the fence check and the store of one add on two of a bookie's threads: a race inside a bookie's process, which the harness does not control (it controls messages, crashes and flushes)",
}

// supported is the set of model actions the harness drives.
var supported = map[string]bool{
	"ClientCreatesLedger": true, "ClientFailsToCreateLedger": true, "ClientSendsAddEntryRequests": true,
	"BookieSendsAddConfirmedResponse": true, "BookieSendsAddFencedResponse": true,
	"ClientReceivesAddConfirmedResponse": true, "ClientReceivesAddFencedResponse": true,
	"ClientStartsRecovery": true, "BookieSendsFencingReadLacResponse": true,
	"ClientReceivesFencingReadLacResponse": true, "ClientSendsRecoveryReadRequests": true,
	"BookieSendsReadResponse": true, "ClientReceivesRecoveryReadResponse": true,
	"ClientWritesBackEntry": true, "RecoveryClientReceivesAddConfirmedResponse": true,
	"RecoveryClientClosesLedger": true, "ClientClosesLedgerSuccess": true, "ClientClosesLedgerFail": true,
	"ClientDeletesLedger": true, "BookieCollectsLedger": true,
	"BookieCrashes": true, "BookieRestarts": true, "BookieRejoinsEmpty": true, "BookieSyncsJournal": true,
	"ClientReceivesAddTimeout": true, "ClientUpdatesEnsembleMetadata": true, "ClientCompletesEnsembleChange": true,
	"ClientSendsNextRecoveryRead": true,
	"BookieLosesDisk":             true, "BookieBecomesReadOnly": true, "BookieSendsAddReadOnlyResponse": true, "ClientReceivesAddErrorResponse": true,
}

// unsupported returns the index of the first state the harness cannot
// drive and why (-1 when it can drive all): settings first (state 0), then
// actions.
func unsupported(params map[string]any, states []itfState) (int, string) {
	var why []string
	if v, _ := params["variant"].(string); v != "" && !releaseVariant(v) {
		why = append(why, "--variant "+v+" (a protocol change no release of BookKeeper has; the harness runs releases)")
	}
	if v, _ := params["journal"].(string); v != "" && v != "synced" {
		why = append(why, "--journal "+v+" (journalSyncData=false and journalWriteData=false lose data only on power loss, which kill -9 is not)")
	}
	if c, _ := params["autorecovery"].(bool); c {
		why = append(why, "--autorecovery (the harness runs no Auditor or ReplicationWorker yet)")
	}
	if len(why) > 0 {
		return 0, "the trace's settings: " + strings.Join(why, "; ")
	}
	for i := 1; i < len(states); i++ {
		if a := states[i].action(); !supported[a] {
			if why := undriven[a]; why != "" {
				return i, a + " is " + why
			}
			return i, "the harness has no mapping for " + a + " yet"
		}
	}
	return -1, ""
}
