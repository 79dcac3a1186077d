// Package testtier splits bkcheck's tests into two tiers. The default tier
// (go test ./...) finishes in about two minutes on two cores and covers
// every package; the long tier adds what takes minutes or gigabytes
// (regenerating docs/guarantees.md, searches of tens of millions of states,
// kill-and-resume runs of the binary). It is switched on with one
// environment variable:
//
//	BKCHECK_LONG=1 go test -timeout 60m ./...
package testtier

import (
	"os"
	"testing"
)

// Env is the variable that switches the long tier on.
const Env = "BKCHECK_LONG"

// IsLong reports whether the long tier runs.
func IsLong() bool { return os.Getenv(Env) != "" && os.Getenv(Env) != "0" }

// Long skips t unless the long tier runs; why says what makes it long.
func Long(t testing.TB, why string) {
	t.Helper()
	if !IsLong() {
		t.Skipf("long tier (%s): set %s=1 to run it", why, Env)
	}
}
