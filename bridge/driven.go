package bridge

import (
	"fmt"
	"strings"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/spec"
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
	variant, _ := params["variant"].(string)
	journal, _ := params["journal"].(string)
	ar, _ := params["autorecovery"].(bool)
	if why := refused(variant, journal, ar); why != "" {
		return 0, "the trace's settings: " + why
	}
	for i := 1; i < len(states); i++ {
		if a := states[i].action(); a == "BookieChecksAdd" {
			if k := checkInterleaved(states, i); k > 0 {
				return i, fmt.Sprintf("%s is %s; here state %d (%s) comes between the check and the store", a, undriven[a], k+1, states[k].action())
			}
		} else if !supported[a] {
			if why := undriven[a]; why != "" {
				return i, a + " is " + why
			}
			return i, "the harness has no mapping for " + a + " yet"
		}
	}
	return -1, ""
}

// refused names the model settings the harness cannot run, with why;
// empty if none.
func refused(variant, journal string, autorecovery bool) string {
	var why []string
	if variant != "" && !releaseVariant(variant) {
		why = append(why, "--variant "+variant+" (a protocol change no release of BookKeeper has; the harness runs releases)")
	}
	if journal != "" && journal != "synced" {
		why = append(why, "--journal "+journal+" (journalSyncData=false and journalWriteData=false lose data only on power loss, which kill -9 is not)")
	}
	if autorecovery {
		why = append(why, "--autorecovery (the harness runs no Auditor or ReplicationWorker yet)")
	}
	return strings.Join(why, "; ")
}

// RefusedSettings names the settings of model p that the harness cannot
// run (every trace of it would be NOT EXECUTABLE at its first state), with
// why; empty if none.
func RefusedSettings(p spec.Params) string {
	variant := p.Variant
	if variant == "reference" {
		variant = ""
	}
	return refused(variant, p.Journal, p.AutoRecovery)
}

// checkInterleaved says whether a bookie's fence check of an add
// (BookieChecksAdd, a release with split-add-check) is apart from its
// store in the trace: the index of the first state between them that is
// a step of the same bookie (a fence, a read, a crash: what could see or
// change the fence in between), 0 if none. Without one the check and the
// store are as one add on the bookie's request thread, which is how the
// harness delivers it (the check is then no step of its own); with one,
// the trace needs the race inside the bookie, which the harness does not
// control.
func checkInterleaved(states []itfState, i int) int {
	p := states[i].picks()
	bookie, client, entry := p["bookie"], p["client"], toInt(p["entry"])
	for k := i + 1; k < len(states); k++ {
		q := states[k].picks()
		if q["bookie"] != bookie {
			continue
		}
		switch states[k].action() {
		case "BookieSendsAddConfirmedResponse", "BookieSendsAddFencedResponse", "BookieSendsAddReadOnlyResponse":
			if q["client"] == client && toInt(q["entry"]) == entry {
				return 0
			}
		}
		return k
	}
	return 0
}
