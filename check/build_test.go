package check

import (
	"errors"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
)

// decommissionStory is f-3887's question on the spec's model
// (spec/testdata/scenarios/decommission.txt, story 2), and storySteps its
// story: the write of e1 to b2 lost, b1 stopped and decommissioned, and
// the worker's cycle, for ever, from state 13.
func decommissionStory() ModelConfig {
	return ModelConfig{Params: spec.Params{Bookies: 3, Clients: 2, WriteQuorum: 2, AckQuorum: 1,
		Entries: 1, Inflight: 1, Crashes: 1, AutoRecovery: true, Decommission: true},
		Invariants: []string{"none"},
		Settings: properties.Settings{Eventually: []string{`Decommissions=size(decom_bookie) > 0 && meta_status == "STATUS_CLOSED" ~> decom_done`},
			Fair: []string{properties.FairAll}}}
}

var storySteps = []string{
	"ClientCreatesLedger(c1)", "ClientSendsAddEntryRequests(c1) e1 lost:{b2}", "BookieSendsAddConfirmedResponse(b1, c1) e1",
	"ClientReceivesAddConfirmedResponse(b1, c1) e1", "ClientClosesLedgerSuccess(c1)", "BookieCrashes(b1)", "AdminDecommissionsBookie(b1)",
	"AuditorMarksLedgerUnderreplicated missing:{b1}", "AuditorChecksLedger missing:{b2}",
	"WorkerAcquiresLedger", "WorkerReplicatesFragment fragment@e1", "WorkerReleasesLedger",
	"WorkerAcquiresLedger", "WorkerReplicatesFragment fragment@e1", "WorkerReleasesLedger",
}

// TestBuildLasso: the story builds a fair lasso that Replay confirms,
// with a witness for every action of --fair all.
func TestBuildLasso(t *testing.T) {
	tr, err := Build(decommissionStory(), storySteps, 13)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Loop != 13 || len(tr.Steps) != 16 || tr.Kind != "eventually" || tr.Invariant != "Decommissions" {
		t.Fatalf("built loop %d, %d states, %s %s; want a lasso to state 13 of 16 states violating Decommissions", tr.Loop, len(tr.Steps), tr.Kind, tr.Invariant)
	}
	names, _, _ := actionKinds(ModelCurrent)
	if len(tr.Fairness) != len(names) {
		t.Errorf("%d fairness witnesses, want one per action (%d)", len(tr.Fairness), len(names))
	}
	if err := Replay(tr); err != nil {
		t.Error(err)
	}
}

// TestBuildRefuses: each way a story can fail to be a counterexample, and
// bad settings, with the step and the reason.
func TestBuildRefuses(t *testing.T) {
	story := storySteps
	without := func(label string) []string {
		var out []string
		for _, s := range story {
			if s != label {
				out = append(out, s)
			}
		}
		return out
	}
	symmetric := decommissionStory()
	symmetric.Symmetry = spec.Symmetry{Bookies: true}
	terminalLoop := decommissionStory()
	terminalLoop.Eventually, terminalLoop.Fair = nil, nil
	terminalLoop.Terminal = []string{"Done=decom_done"}
	probeLoop := decommissionStory()
	probeLoop.Eventually, probeLoop.Fair = nil, nil
	probeLoop.Probe = []string{"Done=decom_done"}
	for _, tc := range []struct {
		name  string
		mc    ModelConfig
		steps []string
		loop  int
		step  int      // the ReplayError's step; 0: settings problems
		want  []string // in the message
	}{
		{"not enabled", decommissionStory(), append(story[:5:5], "AdminDecommissionsBookie(b1)"), 5, 7,
			[]string{"AdminDecommissionsBookie(b1) is not enabled in state 6", "BookieCrashes(b1)"}},
		{"unfair cycle", decommissionStory(), without("AuditorChecksLedger missing:{b2}"), 12, 12,
			[]string{"not fair to AuditorChecksLedger"}},
		{"no return", decommissionStory(), story, 12, 16, []string{"the last state is not state 12"}},
		{"loop out of range", decommissionStory(), story, 40, 0, []string{"loop: must name a state before the last"}},
		{"symmetry", symmetric, story, 13, 0, []string{"symmetry: a trace is built of concrete states"}},
		{"probe with a loop", probeLoop, story, 13, 0, []string{"loop: a probe's witness ends where the probe holds"}},
		{"terminal with a loop", terminalLoop, story, 13, 0, []string{"loop: a terminal-state property's counterexample ends in a state without successor"}},
		{"terminal, the last state has successors", terminalLoop, story, 0, 16, []string{"successor"}},
		{"no steps", decommissionStory(), nil, 0, 0, []string{"the story has no step", "loop: an eventually property's counterexample here is a lasso"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tc.mc, tc.steps, tc.loop)
			if err == nil {
				t.Fatal("built; want an error")
			}
			var re *ReplayError
			switch {
			case tc.step > 0 && (!errors.As(err, &re) || re.Step != tc.step):
				t.Errorf("error %v; want one at step %d", err, tc.step)
			case tc.step == 0:
				if _, ok := schema.AsProblems(err); !ok {
					t.Errorf("error %v; want settings problems", err)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestBuildProbe: a probe's witness ends where the probe holds; a story
// that ends elsewhere is refused by Replay.
func TestBuildProbe(t *testing.T) {
	mc := ModelConfig{Params: spec.Params{Bookies: 2, Clients: 1, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1},
		Settings: properties.Settings{Probe: []string{`Acked=clients["c1"].lac == 1`}}}
	steps := []string{"ClientCreatesLedger(c1)", "ClientSendsAddEntryRequests(c1) e1",
		"BookieSendsAddConfirmedResponse(b1, c1) e1", "BookieSendsAddConfirmedResponse(b2, c1) e1",
		"ClientReceivesAddConfirmedResponse(b1, c1) e1", "ClientReceivesAddConfirmedResponse(b2, c1) e1"}
	tr, err := Build(mc, steps, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Kind != "probe" || len(tr.Steps) != 7 {
		t.Errorf("a %s trace of %d states; want a probe's witness of 7", tr.Kind, len(tr.Steps))
	}
	if _, err := Build(mc, steps[:5], 0); err == nil {
		t.Error("a story that stops before the probe holds was built")
	}
}
