package bridge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/bridge/cluster"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
)

func docTrace(name string) string { return filepath.Join("..", "docs", "traces", name) }

// TestRefusedBeforeAnyProcess: traces the bridge cannot or will not run
// are answered before a JVM starts (no Java needed).
func TestRefusedBeforeAnyProcess(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		trace, verdict, reason string
	}{
		{docTrace("below-qw-ensemble-change.itf.json"), NotExecutable, "ClientChangesEnsemble is the TLA+ spec's one-step ensemble change"},
		{docTrace("bugs/bk-2615.itf.json"), NotExecutable, "RecoveryClientChangesEnsemble is the TLA+ spec's one-step ensemble change"},
	} {
		res, err := Confirm(ctx, tc.trace, Options{Version: "0.0.0-not-a-release"})
		if err != nil {
			t.Errorf("%s: %v", tc.trace, err)
			continue
		}
		if res.Verdict != tc.verdict || !strings.Contains(res.Reason, tc.reason) {
			t.Errorf("%s: %s (%s), want %s naming %s", tc.trace, res.Verdict, res.Reason, tc.verdict, tc.reason)
		}
	}
}

// TestReleaseVariants: the variants of release bugs run as releases'
// behaviour, alone or together; a candidate fix does not.
func TestReleaseVariants(t *testing.T) {
	for v, want := range map[string]bool{
		spec.VariantSplitAddCheck: true, spec.VariantDeleteForgetsFence: true, spec.VariantNoRecoveryFence: true,
		spec.VariantSplitAddCheck + spec.VariantJoin + spec.VariantDeleteForgetsFence: true,
		spec.VariantDurableFenceReply: false, spec.VariantSplitAddCheck + spec.VariantJoin + spec.VariantCheckpointFlushes: false,
	} {
		if got := releaseVariant(v); got != want {
			t.Errorf("releaseVariant(%s) = %v, want %v", v, got, want)
		}
	}
}

func TestBadTraces(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(docTrace("findings/f-fence-lost.itf.json"))
	if err != nil {
		t.Fatal(err)
	}
	// One step's action renamed: the model does not confirm the trace.
	broken := strings.Replace(string(good), `"ClientCreatesLedger"`, `"ClientClosesLedgerSuccess"`, 1)
	unknownModel := strings.Replace(string(good), `"source": "bkcheck",`, `"source": "bkcheck", "model": "v9",`, 1)
	for name, body := range map[string]string{"broken": broken, "unknownmodel": unknownModel, "notjson": "{"} {
		p := filepath.Join(dir, name+".itf.json")
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := Confirm(context.Background(), p, Options{}); !errors.Is(err, ErrTrace) {
			t.Errorf("%s: err %v, want ErrTrace", name, err)
		}
	}
	if _, err := Confirm(context.Background(), filepath.Join(dir, "missing.itf.json"), Options{}); err == nil {
		t.Error("a missing file was accepted")
	}
}

// TestRealFenceLost executes f-fence-lost on real bookies: every step
// agrees with the model, BookKeeper loses the acknowledged entry, and no
// process is left behind.
func TestRealFenceLost(t *testing.T) {
	testtier.Real(t)
	dir := t.TempDir()
	res, err := Confirm(context.Background(), docTrace("findings/f-fence-lost.itf.json"), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Reproduced {
		t.Fatalf("%s", res.Text())
	}
	if !strings.Contains(res.Evidence, "beyond the closed ledger's last entry -1") {
		t.Errorf("evidence %q", res.Evidence)
	}
	if left := cluster.Leftover(dir); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// TestRealUnasked executes traces whose property is a probe on a
// client's status, each the shortest of its model: every step agrees,
// and the verdict says the property was not asked, not that BookKeeper
// keeps it.
//   - testdata/write-back-fails.itf.json: a recovery failed by its
//     write-back's timeout with no spare bookie (bkcheck check
//     --bookkeeper 4.18.2 --bookies 2 --ensemble 2 --write-quorum 2
//     --ack-quorum 1 --entries 1 --probe 'WriteBackFails=...');
//   - testdata/write-back-refused-after-collection.itf.json: a recovery
//     failed by a write-back that a bookie which collected the deleted
//     ledger refuses EFENCED (the same with --delete-ledger
//     --reliable-network --exclude-actions RecoveryClientClosesLedger
//     --probe 'Fenced=clients.exists(id, c, c.status == "RECOVERY_ABORTED")').
func TestRealUnasked(t *testing.T) {
	testtier.Real(t)
	for _, c := range []struct {
		trace, probe string
		steps        int
	}{
		{"write-back-fails.itf.json", "WriteBackFails", 14},
		{"write-back-refused-after-collection.itf.json", "Fenced", 18},
	} {
		res, err := Confirm(context.Background(), filepath.Join("testdata", c.trace), Options{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != Unasked || res.Steps != c.steps || !strings.Contains(res.Evidence, c.probe+" is not a property the harness asks") {
			t.Errorf("%s", res.Text())
		}
	}
}

// TestRealInterrupted cancels a confirmation while the cluster runs: the
// call returns the cancellation and every JVM it started is gone.
func TestRealInterrupted(t *testing.T) {
	testtier.Real(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	steps := 0
	_, err := Confirm(ctx, docTrace("findings/f-fence-lost.itf.json"), Options{Dir: dir, Progress: func(f string, _ ...any) {
		if strings.HasPrefix(f, "step") {
			if steps++; steps == 5 {
				if len(cluster.Leftover(dir)) < 4 {
					t.Errorf("at step 5, %d JVMs run, want ZooKeeper, 2 bookies and the driver", len(cluster.Leftover(dir)))
				}
				if libs, _ := filepath.Glob(filepath.Join(dir, "tmp", "librocksdbjni*")); len(libs) == 0 {
					t.Errorf("at step 5, no RocksDB library unpacked in the cluster's %s: the JVMs unpack theirs elsewhere", filepath.Join(dir, "tmp"))
				}
				cancel()
			}
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if left := cluster.Leftover(dir); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the JVMs' temporary directory is left behind (%v)", err)
	}
}

// TestBookKeeperModelTraces: a trace of the BookKeeper model (sequence
// recovery reads, checkpoints as steps) is driven, its sequence reads and
// checkpoints included (a checkpoint through the bookies' agent), and the
// agent is loaded exactly when a checkpoint or a fix needs it.
func TestBookKeeperModelTraces(t *testing.T) {
	release := map[string]any{"bookkeeper": "4.18.2", "recovery-read": "sequence", "checkpoints": true, "add-path": "java"}
	step := func(a string) itfState { return itfState{"mbt::actionTaken": a} }
	reads := []itfState{step("init"), step("ClientSendsRecoveryReadRequests"), step("ClientSendsNextRecoveryRead")}
	if i, why := unsupported(release, reads); i != -1 || why != "" {
		t.Errorf("sequence reads: unsupported = %d, %q; want -1, \"\"", i, why)
	}
	if needsAgent(reads, nil, Options{}) {
		t.Error("a trace without checkpoints or fixes loads the agent")
	}
	if !needsAgent(reads, nil, Options{fixes: []string{"durable-fence-reply"}}) {
		t.Error("a run with a fix does not load the agent")
	}
	for _, cp := range []string{"BookieCheckpoints", "BookieCheckpointsIdle"} {
		trace := append(append([]itfState(nil), reads...), step(cp))
		if i, why := unsupported(release, trace); i != -1 || why != "" {
			t.Errorf("%s: unsupported = %d, %q; want -1, \"\"", cp, i, why)
		}
		if !needsAgent(trace, nil, Options{}) {
			t.Errorf("%s: the agent is not loaded", cp)
		}
	}
	if i, why := unsupported(map[string]any{}, nil); i != -1 || why != "" {
		t.Errorf("no settings: unsupported = %d, %q; want -1, \"\"", i, why)
	}
}

// TestRealAuditorCheck: a trace with --autorecovery that takes no step of
// AutoRecovery and ends in a terminal state runs, and at its end the
// release's LedgerChecker, asked of the closed ledger as the Auditor's
// periodic check asks it, finds no fragment to re-replicate
// (testdata/auditor-finds-nothing.itf.json: bkcheck check --bookkeeper
// 4.18.2 --bookies 2 --write-quorum 2 --ack-quorum 2 --entries 1
// --autorecovery --reliable-network --invariants none --terminal
// 'ClosedWithEntry=!(meta_status == "STATUS_CLOSED" && meta_last_entry == 1)').
func TestRealAuditorCheck(t *testing.T) {
	testtier.Real(t)
	res, err := Confirm(context.Background(), filepath.Join("testdata", "auditor-finds-nothing.itf.json"), Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Unasked || !slices.ContainsFunc(res.Notes, func(n string) bool {
		return strings.Contains(n, "LedgerChecker, auditorLedgerVerificationPercentage=0) of the closed ledger finds no fragment to re-replicate")
	}) {
		t.Errorf("want every step agreed and the Auditor's check asked:\n%s", res.Text())
	}
}

// TestRunLasso: a lasso's cycle (the states after the 1-based loop state,
// which the last state equals) is run three times, and the note names the
// trace's steps and the run's.
func TestRunLasso(t *testing.T) {
	st := func(a string) itfState { return itfState{"mbt::actionTaken": a} }
	states := []itfState{st("init"), st("A"), st("B"), st("C"), st("D")}
	got, note := runLasso(states, 2)
	var acts []string
	for _, s := range got {
		acts = append(acts, s.action())
	}
	if want := "init A B C D B C D B C D"; strings.Join(acts, " ") != want {
		t.Errorf("states %s, want %s", strings.Join(acts, " "), want)
	}
	if want := "its cycle (steps 3-5 of the trace: B, C, D) run 3 times, steps 3-11 here"; !strings.Contains(note, want) {
		t.Errorf("note %q lacks %q", note, want)
	}
	if len(states) != 5 {
		t.Errorf("runLasso changed its argument: %d states", len(states))
	}
}
