package check

import (
	"context"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
)

// notLoss are actions that cannot make an acknowledged entry disappear with
// three bookies and Qw = 3 (no spare bookie, so no ensemble change or
// resend; fenced answers only make the writer withdraw; the writer closing
// at its LAC and recovery write-backs only add copies). Excluding them
// shrinks the state space about tenfold, which makes the budgets below
// decidable in a test.
var notLoss = []string{
	"ClientReceivesAddFencedResponse", "BookieSendsAddFencedResponse", "ClientResendsPendingAddOp",
	"ClientClosesLedgerSuccess", "ClientClosesLedgerFail", "ClientWritesBackEntry",
	"RecoveryClientReceivesAddConfirmedResponse", "RecoveryClientChangesEnsemble", "RecoveryClientSendsPendingAddOp",
}

// TestDataLossBudgets pins, for -w 3 -a 2, the smallest --data-loss budget
// at which an acknowledged entry is lost, in both data-loss modes:
//
//   - blank: 1. A bookie that held the entry comes back empty and answers
//     NoSuchEntry; with the third bookie (which never got the entry) that is
//     Qw - Qa + 1 = 2 negatives, so recovery seals the ledger before the
//     acknowledged entry: NoDivergenceBetweenClientAndMetaData, 19 states.
//   - limbo: 2. The empty bookie answers Unknown, which is not a negative,
//     so recovery cannot truncate; only losing both copies loses the entry
//     (AllAckedEntriesAreReadable, 9 states).
func TestDataLossBudgets(t *testing.T) {
	testtier.Long(t, "explores about 30 million states")
	invs := []string{"AllAckedEntriesAreReadable", "NoDivergenceBetweenClientAndMetaData"}
	run := func(budget int, mode string, exclude []string) *Report {
		t.Helper()
		p := spec.Params{Bookies: 3, Clients: 2, Ensemble: 3, WriteQuorum: 3, AckQuorum: 2, Entries: 1, Inflight: 1,
			Reformat: budget, DataIntegrity: mode == "limbo", Exclude: exclude}
		rep, err := Run(context.Background(), Config{ModelConfig: ModelConfig{Params: p, Invariants: invs}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v: %v, %d distinct, depth %d", p, rep.Status, rep.Distinct, rep.Depth)
		return rep
	}
	expectLoss := func(rep *Report, inv string, length int) {
		t.Helper()
		if rep.Status != explorer.Violation || rep.Trace.Invariant != inv || len(rep.Trace.Steps) != length {
			t.Fatalf("want %s violated in %d states, got %v %+v", inv, length, rep.Status, rep.Violation)
		}
	}
	expectSafe := func(rep *Report) {
		t.Helper()
		if rep.Status != explorer.OK {
			t.Fatalf("want no loss (exhaustive), got %v", rep.Status)
		}
	}
	expectSafe(run(0, "blank", notLoss))
	expectLoss(run(1, "blank", notLoss), "NoDivergenceBetweenClientAndMetaData", 19)
	expectSafe(run(1, "limbo", notLoss))
	expectLoss(run(2, "limbo", nil), "AllAckedEntriesAreReadable", 9)
	expectLoss(run(2, "blank", nil), "AllAckedEntriesAreReadable", 9)
}
