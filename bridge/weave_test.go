package bridge

import (
	"archive/zip"
	"context"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/bridge/cluster"
	"github.com/bkcheck/bkcheck/internal/docblock"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
)

// TestFixesOf: a candidate fix runs when the agent weaves every rule its
// variant changes, with those rules' advice; a release's bug and the
// reference need none; a fix with a rule the agent lacks is refused,
// naming the rule.
func TestFixesOf(t *testing.T) {
	join := func(vs ...string) string { return strings.Join(vs, spec.VariantJoin) }
	for _, tc := range []struct {
		variant string
		want    []string
		err     string
	}{
		{variant: ""},
		{variant: spec.VariantReference},
		{variant: spec.VariantSplitAddCheck},
		{variant: spec.VariantDurableFenceReply, want: []string{"durable-fence-reply"}},
		{variant: spec.VariantDurableReplayable, want: []string{"durable-fence-reply", "fence-journals-key"}},
		{variant: spec.VariantCheckpointFlushes, want: []string{"checkpoint-flushes-index"}},
		{variant: spec.VariantDurableReplayFlushed, want: []string{"durable-fence-reply", "checkpoint-flushes-index", "fence-journals-key"}},
		{variant: join(spec.VariantSplitAddCheck, spec.VariantDurableFenceReply), want: []string{"durable-fence-reply"}},
		{variant: join(spec.VariantDurableFenceReply, spec.VariantCheckpointFlushes), want: []string{"durable-fence-reply", "checkpoint-flushes-index"}},
		{variant: spec.VariantCallbacksAfterUnset, want: []string{"callbacks-after-unset"}},
		{variant: spec.VariantAddChecksMetadata, want: []string{"add-checks-metadata"}},
		{variant: spec.VariantCollectKeepsFence, want: []string{"collect-keeps-fence"}},
		{variant: spec.VariantEnsembleAtQueue, want: []string{"ensemble-at-queue"}},
		{variant: spec.VariantUnsetWhileChanging, want: []string{"unset-while-changing"}},
		{variant: spec.VariantAwaitPreBootCheck, want: []string{"await-preboot-check"}},
		{variant: spec.VariantBothFenceFixes, want: []string{"durable-fence-reply", "await-preboot-check"}},
		{variant: spec.VariantSkipChangeNoFailed, want: []string{"skip-change-without-failed"}},
		{variant: spec.VariantSkipInconsistentRange, want: []string{"skip-inconsistent-range"}},
		{variant: spec.VariantIntegrityFencesClosed, err: "integrity-fences-closed (IntegrityFencesClosed)"},
		{variant: "no-such-variant", err: "unknown variant"},
	} {
		got, err := fixesOf(tc.variant)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("fixesOf(%q) = %v, %v; want an error naming %q", tc.variant, got, err, tc.err)
			}
		case err != nil || !slices.Equal(got, tc.want):
			t.Errorf("fixesOf(%q) = %v, %v; want %v", tc.variant, got, err, tc.want)
		}
	}
	if err := CheckFix(spec.VariantSplitAddCheck); err == nil {
		t.Error("CheckFix takes a release's bug as a fix")
	}
}

// TestWeavesNameRules: every rule the agent weaves is a rule of the
// model's variants, and a variant that sets it exists (a renamed field, or
// a weave no variant asks for, fails here rather than on a cluster).
func TestWeavesNameRules(t *testing.T) {
	vt := reflect.TypeOf(spec.Variant{})
	for _, w := range weaves {
		f, ok := vt.FieldByName(w.rule)
		if !ok || f.Type.Kind() != reflect.Bool {
			t.Errorf("weave %s: spec.Variant has no rule %s", w.fix, w.rule)
			continue
		}
		if !slices.ContainsFunc(spec.Variants, func(v spec.Variant) bool { return slices.Contains(changedRules(v), w.rule) }) {
			t.Errorf("weave %s: no variant changes %s", w.fix, w.rule)
		}
	}
}

// TestWeavesTable keeps docs/conformance.md's table of the agent's weaves
// equal to weaves.
func TestWeavesTable(t *testing.T) {
	if err := docblock.Check(filepath.Join("..", "docs", "conformance.md"), "weaves", weavesTable(), *updateDocs,
		"go test ./bridge -run TestWeavesTable -update-docs"); err != nil {
		t.Error(err)
	}
}

// TestAgentJar: the agent's jar is a manifest naming the agent's class,
// written once beside the harness's classes.
func TestAgentJar(t *testing.T) {
	dir := t.TempDir()
	cp := dir + "/classes:/elsewhere/bookkeeper-server.jar"
	path, err := agentJar(cp)
	if err != nil {
		t.Fatal(err)
	}
	if path != dir+"/bkcheck-agent.jar" {
		t.Errorf("the jar is %s, want it beside the classes", path)
	}
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	if len(z.File) != 1 || z.File[0].Name != "META-INF/MANIFEST.MF" {
		t.Fatalf("the jar holds %v, want only its manifest", z.File)
	}
	rc, _ := z.File[0].Open()
	m, _ := io.ReadAll(rc)
	rc.Close()
	if !strings.Contains(string(m), "Premain-Class: bkcheck.agent.BookieAgent\r\n") {
		t.Errorf("the manifest does not name the agent:\n%s", m)
	}
	if again, err := agentJar(cp); err != nil || again != path {
		t.Errorf("a second call: %s, %v", again, err)
	}
}

// TestRealFixActs runs f-4843's trace with the three fence fixes woven
// into 4.18.2's classes: the restarted bookie answers the old writer's
// add EFENCED where the model's unfixed bookie stored it, each fix's
// advice and the on-demand checkpoint acted (the agent's log), and no
// process is left behind.
func TestRealFixActs(t *testing.T) {
	testtier.Real(t)
	dir := t.TempDir()
	res, err := Confirm(context.Background(), docTrace("findings/f-4843.itf.json"), Options{Dir: dir, Fix: spec.VariantDurableReplayFlushed})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Diverged || res.Step != 13 || !strings.Contains(res.BookKeeper, "rc 104") {
		t.Fatalf("want DIVERGED at step 13 with EFENCED:\n%s", res.Text())
	}
	notes := strings.Join(res.Notes, "\n")
	for _, acted := range []string{"durable-fence-reply acted", "fence-journals-key acted", "checkpoint-flushes-index acted", "checkpoint acted"} {
		if !strings.Contains(notes, acted) {
			t.Errorf("no note that %q:\n%s", acted, res.Text())
		}
	}
	if left := cluster.Leftover(dir); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// TestRealWeaveFails: a bookie whose agent is asked for a fix it does not
// have exits at its start with the agent's reason, and the cluster leaves
// no process behind.
func TestRealWeaveFails(t *testing.T) {
	testtier.Real(t)
	ctx := context.Background()
	cp, err := Classpath(ctx, DefaultVersion, nil)
	if err != nil {
		t.Fatal(err)
	}
	jar, err := agentJar(cp)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cl, err := cluster.Start(ctx, cluster.Options{Classpath: cp, Bookies: 1, Dir: dir, Agent: jar, Fixes: []string{"no-such-fix"}})
	if err != nil {
		t.Fatal(err)
	}
	err = cl.StartBookies(ctx)
	cl.Close()
	if err == nil || !strings.Contains(err.Error(), "bkcheck agent: unknown fix no-such-fix") {
		t.Errorf("err %v, want the agent's refusal from the bookie's log", err)
	}
	if left := cluster.Leftover(dir); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// TestRealPreBootCheck runs the data-integrity check on real bookies at
// the model's step, on disks that can lose power
// (testdata/preboot-check-at-its-step.itf.json): b1 loses power before
// the ledger exists, restarts with the check pending (held by the
// agent), the check runs at BookieRunsPreBootCheck and puts the open
// ledger in limbo, and b2 alone acknowledges the writer's add (bkcheck
// check --bookkeeper 4.18.2 --bookies 2 --write-quorum 2 --ack-quorum 1
// --entries 1 --crashes 1 --journal disabled --data-integrity
// --invariants NoEntryAcknowledged --constraint
// 'StoreAfterLimbo=size(b_limbo) > 0 || (size(b_entries["b1"]) == 0 &&
// size(b_entries["b2"]) == 0)'). Every step agrees, the agent held the
// check and then ran it, and nothing is left behind. (f-preboot's runs,
// with and without the fix that awaits the check, are bugs.Runs'.)
func TestRealPreBootCheck(t *testing.T) {
	testtier.Real(t)
	if err := fuseAvailable(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	res, err := Confirm(context.Background(), filepath.Join("testdata", "preboot-check-at-its-step.itf.json"), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(res.Notes, "\n")
	if res.Verdict != Unasked || res.Steps != 8 || !strings.Contains(notes, "preboot-held acted once") || !strings.Contains(notes, "preboot-check acted once") {
		t.Errorf("want every step agreed, the check held and run:\n%s", res.Text())
	}
	if left := cluster.Leftover(dir); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
	if left := cluster.LeftoverMounts(dir); len(left) > 0 {
		t.Errorf("mounts left behind: %v", left)
	}
}
