package main

import (
	"strings"
	"testing"
)

// TestCoverageNamesWhatCanFire: coverage lists as never fired only the
// actions the settings can fire, and says of an action the settings add
// but the parameters leave no room for that it cannot fire (issue 38's
// Java add path with two bookies: no replacement for an ensemble change).
func TestCoverageNamesWhatCanFire(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		says, not []string
	}{
		{
			args: []string{"--add-path", "java", "--bookies", "2", "--clients", "1", "-w", "2", "-a", "2", "--entries", "1"},
			says: []string{"Warning: the settings add ClientCompletesEnsembleChange, which needs a bookie outside the ensemble"},
			// The spec writer's add path, and recovery with one client.
			not: []string{"ClientChangesEnsemble", "ClientResendsPendingAddOp", "ClientStartsRecovery", "never fired"},
		},
		{
			args: []string{"--bookies", "2", "--clients", "2", "-w", "2", "-a", "2", "--entries", "1", "--exclude-actions", "ClientClosesLedgerFail"},
			not:  []string{"ClientClosesLedgerFail", "ClientReceivesAddTimeout", "Warning"},
		},
	} {
		code, out, errs := runArgs(t, append([]string{"check", "--coverage", "--invariants", "none"}, tc.args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", tc.args, code, out, errs)
		}
		for _, s := range tc.says {
			if !strings.Contains(out, s) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, s, out)
			}
		}
		cov := out[strings.Index(out, "Coverage"):]
		for _, s := range tc.not {
			if strings.Contains(cov, s) {
				t.Errorf("%v: coverage names %q, which these settings cannot fire:\n%s", tc.args, s, cov)
			}
		}
	}
}
