package bridge

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bkcheck/bkcheck/bridge/powerloss"
	"github.com/bkcheck/bkcheck/spec"
)

// This file classifies every setting of the model (spec.Params) by what
// it means on real bookies, so that no model setting reaches a cluster
// unexamined: TestSettingsClassified fails on a setting added to the model
// and not here. A trace's settings are read from its #meta params, by
// name.

// A use is what one model setting is on the cluster.
type use struct {
	kind useKind
	// how says, for a driven, bound or compared setting, how the harness
	// honours it; for a step setting, which mapping decides.
	how string
	// refuse names, for a value the harness cannot run, why not (in words
	// that follow "--setting VALUE"); "" where the value runs. nil: every
	// value runs.
	refuse func(v any) string
}

type useKind uint8

const (
	// driven: the cluster is set up so, or the driver does it.
	driven useKind = iota
	// bound: it limits the model's search only; BookKeeper has no such
	// limit, and what runs is the trace's steps.
	bound
	// compared: a rule of BookKeeper's that the model has on or off; the
	// harness runs BookKeeper's, so a trace of the other rule is DIVERGED
	// where they differ (how the writer's close over IN_RECOVERY was
	// found).
	compared
	// steps: it only adds actions, each taken or refused by its mapping
	// (mapping.go) at its step.
	steps
)

// settingUses is the classification, by the setting's name.
var settingUses = map[string]use{
	"bookkeeper":   {kind: driven, how: "the release run when confirm is given none (master runs the default release)"},
	"bookies":      {kind: driven, how: "that many bookie processes"},
	"clients":      {kind: driven, how: "that many clients in the driver, each with its own proxy links"},
	"ensemble":     {kind: driven, how: "the ledger's E"},
	"write-quorum": {kind: driven, how: "the ledger's Qw"},
	"ack-quorum":   {kind: driven, how: "the ledger's Qa"},
	"entries":      {kind: bound, how: "the writer's adds are the trace's"},
	"inflight":     {kind: bound, how: "the writer adds when the trace does"},
	"variant": {kind: driven, how: "a release bug's variant runs on any release, and the verdict says which behaviour the release has; a candidate fix runs with its rules woven into the release's classes by the bookies' agent (weave.go)", refuse: func(v any) string {
		s, _ := v.(string)
		if _, err := fixesOf(s); err != nil {
			return err.Error()
		}
		return ""
	}},
	"crashes": {kind: steps, how: "BookieCrashes: kill -9"},
	"journal": {kind: driven, how: "journalSyncData=true, the bookies' default; no-sync: journalSyncData=false, disabled: journalWriteData=false, " +
		"each bookie's journal and ledger directories on a file system that can lose power (bridge/powerloss, FUSE): BookieCrashes is then a power loss, BookieSyncsJournal the operating system's write-back of the journal (no-sync) or a checkpoint (disabled)",
		refuse: func(v any) string {
			if v == spec.JournalSynced || v == "synced" {
				return ""
			}
			if err := fuseAvailable(); err != nil {
				return "journalSyncData=false and journalWriteData=false lose data only on a power loss, which needs a FUSE file system here: " + err.Error()
			}
			return ""
		}},
	"disk-loss":           {kind: steps, how: "BookieLosesDisk"},
	"reformat":            {kind: steps, how: "BookieRejoinsEmpty"},
	"data-integrity":      {kind: driven, how: "dataIntegrityChecking=true where the trace has it (false, the bookies' default, where not); the pre-boot check a restart starts is held by the bkcheck agent until BookieRunsPreBootCheck, the full check never runs"},
	"reformat-cookie":     {kind: driven, how: "bookieformat with -deleteCookie unless kept; kept with dataIntegrityStampMissingCookies=true"},
	"ledger-storage":      {kind: driven, how: "DbLedgerStorage", refuse: refuseBut("the harness's bookies run DbLedgerStorage", spec.LedgerStorageDB, "db")},
	"read-only":           {kind: steps, how: "BookieBecomesReadOnly"},
	"disk-full":           {kind: steps, how: "BookieFillsDisk"},
	"unavailable":         {kind: driven, how: "every bookie starts", refuse: refuseAbove(0, "the harness starts every bookie; it cannot keep some down for the whole run yet")},
	"corrupt-reads":       {kind: steps, how: "BookieFailsRead"},
	"delete-ledger":       {kind: steps, how: "ClientDeletesLedger, BookieCollectsLedger"},
	"reliable-network":    {kind: bound, how: "the proxy stalls only what the trace loses"},
	"exclude-actions":     {kind: bound, how: "the trace's steps are what runs"},
	"recovery-from-lac":   {kind: compared, how: "LedgerRecoveryOp counts write-backs from the fenced LAC"},
	"partial-replacement": {kind: compared, how: "EnsembleUtils.replaceBookiesInEnsemble keeps the replacements it found"},
	"close-rereads":       {kind: compared, how: "LedgerHandle's close is a MetadataUpdateLoop"},
	"add-path":            {kind: compared, how: "the Java client's add path; the spec's ensemble change is refused at its step"},
	"create-window":       {kind: steps, how: "ClientCreatesAddOp"},
	"registration-expiry": {kind: steps, how: "BookieRegistrationExpires: the registration ended at the step (no session expires by a clock); without it a stopped bookie's ends with its stop"},
	"checkpoints":         {kind: compared, how: "DbLedgerStorage's crash rule (a fence or a key survives only where the ledger index or a replayed journal record keeps it), the model's with --checkpoints; the bookies checkpoint only on demand (flushInterval a day), at BookieCheckpoints and BookieCheckpointsIdle, through the agent"},
	"recovery-read":       {kind: compared, how: "Java's sequence read; a trace of the parallel read is mapped onto it"},
	"autorecovery": {kind: driven, how: "a trace that takes AutoRecovery's steps runs the release's Auditor and ReplicationWorker in the client driver, each of their steps held at a gate of the bkcheck agent until the model's step (lostBookieRecoveryDelay, the failed ledger's backoff and the worker's loop backoff 0: their ends are steps; the Auditor's periodic checks off); " +
		"a trace that takes none runs without them, and where it ends in a terminal state the release's LedgerChecker, as the Auditor's periodic check runs it, is asked of the closed ledger: it must find no fragment to re-replicate"},
	"auditor-verification-percentage": {kind: driven, how: "the worker's auditorLedgerVerificationPercentage, and the LedgerChecker's at the trace's end (--autorecovery)"},
	"auditor-periodic-check":          {kind: driven, how: "off: no LedgerChecker at the trace's end (--autorecovery)"},
	"decommission":                    {kind: steps, how: "AdminDecommissionsBookie, AdminFinishesDecommission"},
	"max-ensemble-changes":            {kind: driven, how: "maxNumEnsembleChanges=N on the driver's clients (BookKeeper's default is unlimited): LedgerHandle.ensembleChangeLoop gives the ledger up beyond the model's bound, as the model does"},
}

// fuseAvailable says why the power-loss file system cannot mount here
// (powerloss.Available); the transcripts, whose cluster is a fake, take
// it as available on every machine.
var fuseAvailable = powerloss.Available

// refuseBut refuses every value but those given, saying why.
func refuseBut(why string, runs ...any) func(v any) string {
	return func(v any) string {
		for _, r := range runs {
			if v == r {
				return ""
			}
		}
		return why
	}
}

// refuseAbove refuses a number above max, saying why.
func refuseAbove(max int, why string) func(v any) string {
	return func(v any) string {
		if toInt(v) > max {
			return why
		}
		return ""
	}
}

// refusedParams names the settings of a trace's #meta params the harness
// cannot run, each with why, sorted by the settings' declaration order;
// empty if none. A setting the harness does not know is refused: it is a
// model of another bkcheck (named in sorted order, so the message does not
// depend on the map's).
func refusedParams(params map[string]any) string {
	var why []string
	for _, f := range spec.ParamsSchema.Fields() {
		v, ok := params[f.Name]
		if !ok {
			continue
		}
		if u := settingUses[f.Name]; u.refuse != nil {
			if r := u.refuse(v); r != "" {
				why = append(why, fmt.Sprintf("--%s %s (%s)", f.Name, valueText(v), r))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if !spec.ParamsSchema.Has(name) {
			why = append(why, "--"+name+" (a setting this bkcheck's model does not have)")
		}
	}
	return strings.Join(why, "; ")
}

func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// RefusedSettings names the settings of model p that the harness cannot
// run (every trace of it would be NOT EXECUTABLE at its first state), with
// why; empty if none.
func RefusedSettings(p spec.Params) string {
	raw, err := spec.ParamsSchema.EncodeJSON(&p)
	if err != nil {
		return err.Error()
	}
	var params map[string]any
	if err := json.Unmarshal(raw, &params); err != nil {
		return err.Error()
	}
	return refusedParams(params)
}
