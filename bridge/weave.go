package bridge

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/bkcheck/bkcheck/internal/atomicfile"
	"github.com/bkcheck/bkcheck/spec"
)

// This file is what the bookies' agent (java/.../bkcheck/agent) weaves
// into the release's classes: each rule of a variant of the model that
// is a change to BookKeeper's code, by the agent's name for its advice.
// A candidate fix runs on real bookies when every rule its variant
// changes is here.

// A weave is one rule of spec.Variant that the agent's advice makes the
// release's classes follow.
type weave struct {
	rule string // spec.Variant's field
	fix  string // the agent's name for it (Fixes.WEAVES)
	code string // what the advice changes, read at release-4.18.0
	// only, if not empty, names the variants whose code this is: two
	// upstream changes can be one rule of the model (PR #3041 and PR
	// #4194 on the ledger's ordered thread) and different code.
	only []string
}

// weaves is the agent's repertoire, one row per rule.
var weaves = []weave{
	{rule: "DurableFenceReply", fix: "durable-fence-reply",
		code: "`ReadEntryProcessor.processPacket`: a fencing read fences and waits for its fence record in the journal before it reads, so that a NoSuchEntry or NoSuchLedger answer waits too (`handleReadResultForFenceRead` waits only where data was read)"},
	{rule: "FenceJournalsKey", fix: "fence-journals-key",
		code: "`BookieImpl.fenceLedger`: the ledger's master key record journalled (as `addEntryInternal` journals it) before the fence record, so that replay finds the key for a ledger the index does not hold"},
	{rule: "AddChecksMetadata", fix: "add-checks-metadata",
		code: "`BookieImpl.addEntry`: a normal add to a ledger the bookie's storage does not know (`ledgerExists` false) reads the ledger's metadata (through the ledger manager the bookie's garbage collector holds) and throws `LedgerFencedException` (EFENCED) where it is CLOSED or IN_RECOVERY; `recoveryAddEntry` unchanged"},
	{rule: "CollectKeepsFence", fix: "collect-keeps-fence",
		code: "`SingleDirectoryDbLedgerStorage.deleteLedger`: a ledger the storage has fenced gets a tombstone, appended to a file in the ledger directory and forced to disk, before it is deleted; `HandleFactoryImpl.getHandle` (not at journal replay) refuses a tombstoned ledger with `LedgerFencedAndDeletedException` (EFENCED to an add), after a restart too"},
	{rule: "EnsembleAtQueue", fix: "ensemble-at-queue",
		code: "`PendingAddOp.setEntryId`, called inside `LedgerHandle.doAsyncAddEntry`'s `synchronized (this)` block just before `pendingAddOps.add`: the op's ensemble set to the handle's current one there (in `PendingAddOp.create` in the release); in the client driver's JVM"},
	{rule: "CallbacksAfterUnset", fix: "callbacks-after-unset", only: []string{spec.VariantCallbacksAfterUnset},
		code: "`PendingAddOp.unsetSuccessAndSendWriteRequest`: its call of `lh.sendAddSuccessCallbacks()` for an op whose write set lacks the index removed (a substitution of that call only); `LedgerHandle.unsetSuccessAndSendWriteRequest`: `sendAddSuccessCallbacks()` once after the loop (PR #3041's diff, refs/pull/3041/merge 333f9536); in the client driver's JVM"},
	{rule: "CallbacksAfterUnset", fix: "unset-while-changing", only: []string{spec.VariantUnsetWhileChanging},
		code: "callbacks-after-unset's two changes, and the lambda that completes `LedgerHandle.ensembleChangeLoop` run in PR #4194's order in place of the release's (its diff, refs/pull/4194/merge 2a77ca6f): the new ensemble's unset and re-send while `changingEnsemble` is still set, then under `metadataLock` the delayed failures handed to the next change (from the new ensemble) or `changingEnsemble` cleared, and one `sendAddSuccessCallbacks` after; the failure branches as the release has them; in the client driver's JVM"},
	{rule: "AwaitPreBootCheck", fix: "await-preboot-check",
		code: "`DataIntegrityCheckImpl.runPreBootCheck`: called with the reason `UNCLEAN_SHUTDOWN` (by `EmbeddedServer`, which drops the future in the release) it returns only once the check has run, so the bookie starts serving after it"},
	{rule: "SkipChangeWithoutFailed", fix: "skip-change-without-failed",
		code: "`LedgerHandle.handleBookieFailure`: with no ensemble change running, the delayed failures and these (`toReplace`) start one only if some names the bookie the current ensemble has at its index; otherwise the delayed failures are cleared and the method returns, the failures dropped (PR #4278's diff, refs/pull/4278/merge db8a3066); in the client driver's JVM"},
	{rule: "SkipInconsistentRange", fix: "skip-inconsistent-range",
		code: "`ReplicationWorker.tryReadingFaultyEntries`: where the worker has a set of unreadable entries for the ledger, a fragment whose first entry is past its last known one returns true before the set is asked for `subSet(first, true, last, true)` (PR #4551's diff, refs/pull/4551/head 9c1acb5a); in the client driver's JVM, where the harness runs the worker"},
	{rule: "CheckpointFlushesIndex", fix: "checkpoint-flushes-index",
		code: "`SingleDirectoryDbLedgerStorage.checkpoint`: with an empty write cache the ledger index is flushed and the checkpoint recorded before the method returns (PR #4843's diff, refs/pull/4843/merge 9b4f81f4)"},
}

// fixesOf returns the agent's fixes that make the bookies run the variant
// (a name or a composition; a release bug or the reference needs none),
// or why they cannot: the rules of it the agent does not weave.
func fixesOf(variant string) ([]string, error) {
	if variant == "" || releaseVariant(variant) {
		return nil, nil
	}
	if _, err := spec.VariantByName(variant); err != nil {
		return nil, err
	}
	var fixes, missing []string
	for _, part := range strings.Split(variant, spec.VariantJoin) {
		if releaseVariant(part) {
			continue
		}
		pv, _ := spec.VariantByName(part)
		for _, rule := range changedRules(pv) {
			i := slices.IndexFunc(weaves, func(w weave) bool {
				return w.rule == rule && (len(w.only) == 0 || slices.Contains(w.only, part))
			})
			if i < 0 {
				missing = append(missing, part+" ("+rule+")")
				continue
			}
			if !slices.Contains(fixes, weaves[i].fix) {
				fixes = append(fixes, weaves[i].fix)
			}
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the agent weaves no advice for %s: a change to BookKeeper's code the harness does not run yet", strings.Join(missing, ", "))
	}
	return fixes, nil
}

// CheckFix says why confirm cannot run a trace with the named variant as
// a fix (--fix), or nil if it can: the variant must be a change to
// BookKeeper's code that the agent weaves whole.
func CheckFix(variant string) error {
	fixes, err := fixesOf(variant)
	if err != nil {
		return err
	}
	if len(fixes) == 0 {
		return fmt.Errorf("%s is no change to BookKeeper's code (a release's behaviour, or the reference)", variant)
	}
	return nil
}

// needsAgent reports whether a run needs the bookies' agent: fixes to
// weave, the data-integrity check or the journal's records to hold, or a
// checkpoint or a corrupt read among the trace's steps.
func needsAgent(states []itfState, params map[string]any, opts Options) bool {
	if len(opts.fixes) > 0 || dataIntegrity(params) || holdsFenceRecords(states, params, opts) || racesAdds(states) || runsAutoRecovery(states) {
		return true
	}
	disabled := journalMode(params) == spec.JournalDisabled
	for _, s := range states {
		switch s.action() {
		case "BookieCheckpoints", "BookieCheckpointsIdle", "BookieFailsRead":
			return true
		case "BookieSyncsJournal":
			if disabled { // syncJournal: a checkpoint
				return true
			}
		}
	}
	return false
}

// agentNotes says, for each bookie, what the agent's advice changed in
// the run (the lines it logs when a fix or a checkpoint acts), so that a
// verdict with a fix shows the fix at work: one note per bookie and kind,
// with how many times and the first occasion.
func (r *run) agentNotes() []string {
	var notes []string
	logs := []struct{ name, path string }{{"the client driver", r.driverLog}}
	for _, b := range r.cl.Bookies() {
		logs = append(logs, struct{ name, path string }{b.Name, b.Log()})
	}
	for _, l := range logs {
		if l.path == "" {
			continue
		}
		data, err := os.ReadFile(l.path)
		if err != nil {
			continue
		}
		var kinds []string
		count, first := map[string]int{}, map[string]string{}
		for _, line := range strings.Split(string(data), "\n") {
			_, rest, ok := strings.Cut(line, "bkcheck agent: ")
			if !ok || strings.HasPrefix(rest, "woven ") {
				continue
			}
			kind, what, _ := strings.Cut(rest, ": ")
			if k, kept := strings.CutSuffix(kind, keptSuffix); kept {
				kind = k + " kept the release's course"
			} else {
				kind += " acted"
			}
			for _, b := range r.cl.Bookies() {
				what = strings.ReplaceAll(what, b.ID(), b.Name) // the model's names
			}
			if count[kind] == 0 {
				kinds = append(kinds, kind)
				first[kind] = what
			}
			count[kind]++
		}
		for _, k := range kinds {
			notes = append(notes, fmt.Sprintf("the agent in %s: %s %s (first: %s)", l.name, k, times(count[k]), first[k]))
		}
	}
	return notes
}

// keptSuffix marks an advice's log line where it was reached and left
// the release's course as it is ("FIX kept: WHAT"): a fix whose
// condition never holds in a run shows so, rather than nothing.
const keptSuffix = " kept"

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// changedRules names the rules (bool fields of spec.Variant) the variant
// sets otherwise than the reference does.
func changedRules(v spec.Variant) []string {
	ref := reflect.ValueOf(spec.Variants[0])
	rv := reflect.ValueOf(v)
	var out []string
	for i := 0; i < rv.NumField(); i++ {
		if f := rv.Field(i); f.Kind() == reflect.Bool && f.Bool() != ref.Field(i).Bool() {
			out = append(out, rv.Type().Field(i).Name)
		}
	}
	return out
}

// agentJar returns the agent's jar for a built harness (its classpath's
// first entry is the harness's classes), writing it beside them once: a
// manifest only, whose Premain-Class the JVM loads from the classpath.
func agentJar(cp string) (string, error) {
	classes, _, _ := strings.Cut(cp, string(os.PathListSeparator))
	path := filepath.Join(filepath.Dir(classes), "bkcheck-agent.jar")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	err := atomicfile.Write(path, func(w io.Writer) error {
		z := zip.NewWriter(w)
		m, err := z.Create("META-INF/MANIFEST.MF")
		if err != nil {
			return err
		}
		if _, err := io.WriteString(m, "Manifest-Version: 1.0\r\nPremain-Class: bkcheck.agent.BookieAgent\r\nCreated-By: bkcheck\r\n\r\n"); err != nil {
			return err
		}
		return z.Close()
	})
	if err != nil {
		return "", fmt.Errorf("writing the bookies' agent jar: %w", err)
	}
	return path, nil
}

// weavesTable is docs/conformance.md's table of what the agent weaves.
func weavesTable() string {
	var b strings.Builder
	b.WriteString("| rule of the model (spec.Variant) | the agent's fix | what the advice changes (release-4.18.0) |\n|---|---|---|\n")
	for _, w := range weaves {
		rule := w.rule
		if len(w.only) > 0 {
			rule += " (as " + strings.Join(w.only, ", ") + ")"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", rule, w.fix, strings.ReplaceAll(w.code, "|", `\|`))
	}
	return b.String()
}
