package spec_test

// Data-driven scenario tests in the style of etcd-io/raft's interaction
// tests: each file under testdata/scenarios is a short story told as a
// sequence of actions, with the model's answer (the variables each step
// changed, the enabled actions, the invariants' verdicts) written below
// each command. Regenerate the answers after a deliberate change with
//
//	go test ./spec -run TestScenarios -rewrite
//
// and read the diff: it is the change in behaviour.
//
// Commands:
//
//	params bookies=3 write-quorum=3 ack-quorum=2 crashes=1 journal=no-sync ...
//	    (all on one line; keys as the flags, any subset, the rest take
//	    spec.DefaultParams' values and defaults, E = Qw unless given)
//	    starts over from the initial state and prints the parameters.
//	apply
//	<one action label per line, exactly as spec.Action.String renders it>
//	    takes each action in turn and prints "> label" and the variables it
//	    changed. A label names an action with an empty loss set without any
//	    "lost:" suffix (ClientSendsAddEntryRequests(c1) e1). An action that is
//	    not enabled stops the block with an error listing the enabled ones.
//	successors
//	    lists the enabled actions in model order; identical consecutive
//	    labels (TLC's double emission) are shown once with a count (x2).
//	state
//	    prints every variable of the current state.
//	check [Name ...]
//	    prints each invariant's verdict on the current state (all of
//	    invariants.All, or the named ones).
//
// Lines starting with # are comments.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
	"github.com/bkcheck/bkcheck/traces"
)

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenario files under testdata/scenarios")
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			sc := &scenario{}
			if p, err := parseParams(nil); err == nil {
				_ = sc.reset(p) // until the file's first params command
			}
			datadriven.RunTest(t, path, sc.run)
		})
	}
}

// scenario is the current position of one scenario file: a model and the
// state reached so far.
type scenario struct {
	p       spec.Params
	m       *spec.Model
	s       spec.State
	scratch spec.State
}

func (sc *scenario) reset(p spec.Params) error {
	m, err := spec.NewModel(p)
	if err != nil {
		return err
	}
	sc.p, sc.m, sc.s = p, m, m.Init()
	return nil
}

func (sc *scenario) run(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "params" && sc.m == nil {
		t.Fatalf("%s: no valid params in effect", d.Pos)
	}
	switch d.Cmd {
	case "params":
		p, err := parseParams(d.CmdArgs)
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		if err := sc.reset(p); err != nil {
			sc.m = nil
			return "error: " + err.Error() + "\n"
		}
		return formatParams(p) + "\n"
	case "apply":
		return sc.apply(t, d)
	case "successors":
		return sc.successors()
	case "state":
		var b strings.Builder
		for _, v := range sc.p.Rows(&sc.s) {
			fmt.Fprintf(&b, "%s = %s\n", v.Name, v.Value)
		}
		return b.String()
	case "check":
		return sc.check(t, d)
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

// succ is one successor of the current state.
type succ struct {
	label string
	state spec.State
	enc   string
}

func (sc *scenario) next() []succ {
	var out []succ
	sc.m.Next(&sc.s, &sc.scratch, func(a spec.Action, n *spec.State) {
		var c spec.State
		c.CopyFrom(n)
		out = append(out, succ{label: a.String(), state: c, enc: string(sc.m.Encode(nil, n))})
	})
	return out
}

func (sc *scenario) apply(t *testing.T, d *datadriven.TestData) string {
	var b strings.Builder
	for _, line := range strings.Split(d.Input, "\n") {
		label := strings.TrimSpace(line)
		if label == "" || strings.HasPrefix(label, "#") {
			continue
		}
		var match []succ
		distinct := map[string]bool{}
		for _, s := range sc.next() {
			if s.label == label {
				match = append(match, s)
				distinct[s.enc] = true
			}
		}
		switch {
		case len(match) == 0:
			fmt.Fprintf(&b, "error: %s is not enabled\n", label)
			if strings.HasSuffix(label, " lost:{}") {
				fmt.Fprintf(&b, "(an empty loss set is not rendered: write %q)\n", strings.TrimSuffix(label, " lost:{}"))
			}
			b.WriteString("enabled:\n")
			b.WriteString(indent(sc.successors()))
			return b.String()
		case len(distinct) > 1:
			fmt.Fprintf(&b, "error: %s is ambiguous: %d successors with this label lead to %d different states\n", label, len(match), len(distinct))
			return b.String()
		}
		before := sc.p.Rows(&sc.s)
		sc.s.CopyFrom(&match[0].state)
		fmt.Fprintf(&b, "> %s\n", label)
		for _, v := range traces.Diff(before, sc.p.Rows(&sc.s)) {
			fmt.Fprintf(&b, "  %s = %s\n", v.Name, v.Value)
		}
	}
	return b.String()
}

func (sc *scenario) successors() string {
	all := sc.next()
	if len(all) == 0 {
		return "(no successors: terminal state)\n"
	}
	var b strings.Builder
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].label == all[i].label {
			j++
		}
		b.WriteString(all[i].label)
		if j-i > 1 {
			fmt.Fprintf(&b, " (x%d)", j-i)
		}
		b.WriteString("\n")
		i = j
	}
	return b.String()
}

func (sc *scenario) check(t *testing.T, d *datadriven.TestData) string {
	invs := invariants.All
	if len(d.CmdArgs) > 0 {
		names := make([]string, len(d.CmdArgs))
		for i, a := range d.CmdArgs {
			names[i] = a.Key
		}
		var err error
		if invs, err = invariants.Lookup(names); err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
	}
	terminal := len(sc.next()) == 0
	var b strings.Builder
	for _, inv := range invs {
		holds := true
		switch {
		case inv.Holds != nil:
			holds = inv.Holds(&sc.p, &sc.s)
		case inv.HoldsTerminal != nil && !terminal:
			fmt.Fprintf(&b, "%s: n/a (terminal-state property; the state has successors)\n", inv.Name)
			continue
		}
		if holds && terminal && inv.HoldsTerminal != nil {
			holds = inv.HoldsTerminal(&sc.p, &sc.s)
		}
		verdict := "holds"
		if !holds {
			verdict = "VIOLATED"
		}
		fmt.Fprintf(&b, "%s: %s\n", inv.Name, verdict)
	}
	return b.String()
}

func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	return b.String()
}

// parseParams builds a spec.Params from the params command's arguments
// (key=value, keys as the flags; a boolean key alone means true), starting
// from spec.DefaultParams, through the same schema the command line uses.
func parseParams(args []datadriven.CmdArg) (spec.Params, error) {
	p := spec.DefaultParams()
	for _, a := range args {
		f, ok := spec.ParamsSchema.Lookup(a.Key)
		if !ok {
			return p, fmt.Errorf("unknown parameter %q", a.Key)
		}
		val := strings.Join(a.Vals, ",")
		if len(a.Vals) == 0 && f.IsBool() {
			val = "true"
		}
		if err := spec.ParamsSchema.Set(&p, f.Name, val); err != nil {
			return p, fmt.Errorf("%s: %v", a.Key, err)
		}
	}
	p.EnsureDefaults()
	return p, nil
}

// formatParams renders the parameters in the params command's syntax (the
// core ones always, the extensions when on), so the line can be pasted
// back as a command.
func formatParams(p spec.Params) string { return p.String() }

// TestActionKindNames freezes the action names: they are the TLA+ action
// names, and scenario files, trace files and ITF traces spell them out.
func TestActionKindNames(t *testing.T) {
	want := []string{
		"BookieSendsAddConfirmedResponse", "BookieSendsAddFencedResponse", "BookieSendsFencingReadLacResponse",
		"BookieSendsReadResponse", "ClientCreatesLedger", "ClientSendsAddEntryRequests",
		"ClientReceivesAddConfirmedResponse", "ClientReceivesAddFencedResponse", "ClientChangesEnsemble",
		"ClientResendsPendingAddOp", "ClientClosesLedgerSuccess", "ClientClosesLedgerFail", "ClientStartsRecovery",
		"ClientReceivesFencingReadLacResponse", "ClientSendsRecoveryReadRequests", "ClientReceivesRecoveryReadResponse",
		"ClientWritesBackEntry", "RecoveryClientReceivesAddConfirmedResponse", "RecoveryClientChangesEnsemble",
		"RecoveryClientSendsPendingAddOp", "RecoveryClientClosesLedger",
		"BookieCrashes", "BookieRestarts", "BookieRejoinsEmpty", "BookieBecomesReadOnly",
		"ClientReceivesAddErrorResponse", "ClientFailsToCreateLedger", "BookieSendsAddReadOnlyResponse",
		"BookieLosesDisk", "BookieSyncsJournal", "BookieFillsDisk",
		"BookieChecksAdd", "BookieFailsRead", "ClientDeletesLedger", "BookieCollectsLedger",
		"BookieRunsPreBootCheck",
		"ClientReceivesAddTimeout", "ClientUpdatesEnsembleMetadata", "ClientCompletesEnsembleChange",
		"ClientSendsNextRecoveryRead", "BookieCheckpoints", "BookieCheckpointsIdle",
		"AuditorMarksLedgerUnderreplicated", "AuditorChecksLedger", "WorkerAcquiresLedger", "WorkerReplicatesFragment",
		"WorkerUpdatesEnsemble", "WorkerDefersLedger", "WorkerMarksLedgerReplicated", "WorkerReleasesLedger",
		"WorkerGraceExpires", "WorkerDiesOnInconsistentRange",
		"AdminDecommissionsBookie", "AdminFinishesDecommission",
		"ClientCreatesAddOp", "RecoveryClientReceivesAddTimeout", "RecoveryClientFencingFails",
		"RecoveryClientReadFails", "RecoveryClientReceivesAddFencedResponse", "BookieRegistrationExpires", "BookieBecomesWritable",
	}
	if got := int(spec.NumActionKinds) - 1; got != len(want) {
		t.Fatalf("%d action kinds, want %d", got, len(want))
	}
	for i, name := range want {
		k := spec.ActionKind(i + 1)
		if k.String() != name {
			t.Errorf("ActionKind(%d) = %q, want %q", i+1, k, name)
		}
		if got, ok := spec.ActionKindByName(name); !ok || got != k {
			t.Errorf("ActionKindByName(%q) = %v, %v; want %v", name, got, ok, k)
		}
	}
	for _, name := range []string{"numActionKinds", "NumActionKinds", spec.NumActionKinds.String(), spec.ActionKind(0).String(), ""} {
		if k, ok := spec.ActionKindByName(name); ok {
			t.Errorf("ActionKindByName(%q) = %v; the sentinel and invalid kinds must not be nameable", name, k)
		}
	}
	statuses := []string{"Nil", "OPEN", "IN_RECOVERY", "CLOSED", "CLIENT_WITHDRAWN", "RECOVERY_ABORTED"}
	for i, name := range statuses {
		if got := spec.Status(i).String(); got != name {
			t.Errorf("Status(%d) = %q, want %q", i, got, name)
		}
	}
}
