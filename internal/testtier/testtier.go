// Package testtier splits bkcheck's tests into tiers. The default tier
// (go test ./...) finishes in about two minutes on two cores and covers
// every package; the long tier adds what takes minutes or gigabytes
// (searches of tens of millions of states, kill-and-resume runs of the
// binary, docs/bugs.md regenerated, one setting of docs/guarantees.md
// re-answered within a smaller bound); CI runs both. The docs tier
// regenerates all of docs/guarantees.md and docs/findings.md, which takes
// hours on two cores (the guarantees' sections on BookKeeper's model, the
// findings' slowest questions minutes each); run it after a change to the
// model or to the pages' questions. Each is
// switched on with one environment variable:
//
//	BKCHECK_LONG=1 go test -timeout 60m ./...
//	BKCHECK_DOCS=1 go test -timeout 600m ./cmd/bkcheck -run 'TestGuaranteesCurrent|TestFindingsPageCurrent|TestBugsPageCurrent'
//
// The real-BookKeeper tier runs traces on real bookies (package bridge):
// it needs a JDK and Maven, and the released artifacts Maven fetches.
//
//	BKCHECK_REAL=1 go test ./bridge/...
//
// The Slurm tier runs sharded searches as the tasks of real Slurm jobs on
// a one-host cluster the test starts itself (scripts/slurm-local.sh: it
// installs slurm-wlm and munge with apt-get when they are missing, so it
// needs root and Debian's packages):
//
//	BKCHECK_SLURM=1 go test ./cmd/bkcheck -run Slurm
package testtier

import (
	"os"
	"testing"
)

// Env is the variable that switches the long tier on; DocsEnv the docs
// tier.
const (
	Env     = "BKCHECK_LONG"
	DocsEnv = "BKCHECK_DOCS"
	RealEnv = "BKCHECK_REAL"
	// SlurmEnv switches on the Slurm tier.
	SlurmEnv = "BKCHECK_SLURM"
)

// Slurm skips t unless the Slurm tier runs.
func Slurm(t testing.TB) {
	t.Helper()
	if !on(SlurmEnv) {
		t.Skipf("Slurm tier (starts a one-host Slurm cluster, installing it as root if missing): set %s=1 to run it", SlurmEnv)
	}
}

// Real skips t unless the real-BookKeeper tier runs.
func Real(t testing.TB) {
	t.Helper()
	if !on(RealEnv) {
		t.Skipf("real-BookKeeper tier (a JDK, Maven and BookKeeper's artifacts): set %s=1 to run it", RealEnv)
	}
}

// IsLong reports whether the long tier runs.
func IsLong() bool { return on(Env) || IsDocs() }

// IsDocs reports whether the docs tier runs (it includes the long tier).
func IsDocs() bool { return on(DocsEnv) }

func on(env string) bool { return os.Getenv(env) != "" && os.Getenv(env) != "0" }

// Docs skips t unless the docs tier runs; why says what makes it long.
func Docs(t testing.TB, why string) {
	t.Helper()
	if !IsDocs() {
		t.Skipf("docs tier (%s): set %s=1 to run it", why, DocsEnv)
	}
}

// Long skips t unless the long tier runs; why says what makes it long.
func Long(t testing.TB, why string) {
	t.Helper()
	if !IsLong() {
		t.Skipf("long tier (%s): set %s=1 to run it", why, Env)
	}
}
