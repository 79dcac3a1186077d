package check

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
)

// TestReleaseSpelledOut: a release (--bookkeeper) and the same options
// spelled out are one model: the same verdict, every count, depth and the
// counterexample. A release line's bugs are spelled out as the variants
// joined with "+"; a candidate fix asked of a release joins them.
func TestReleaseSpelledOut(t *testing.T) {
	java := func(p spec.Params) spec.Params {
		p.AddPath, p.RecoveryRead = spec.AddPathJava, spec.RecoveryReadSequence
		p.CloseRereads, p.RecoveryFromLAC, p.PartialReplacement, p.CreateWindow = true, true, true, true
		return p
	}
	small := spec.Params{Bookies: 2, Clients: 2, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1}
	qw2 := spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, ReliableNetwork: true}
	with := func(p spec.Params, f func(*spec.Params)) spec.Params { f(&p); return p }
	for _, tc := range []struct {
		release, variant string
		base             spec.Params
		spelled          func(spec.Params) spec.Params
		invariants       []string
	}{
		// 4.18.2 with a crash: checkpoints and the registration's expiry too
		// (full space, no property).
		{"4.18.2", "", with(small, func(p *spec.Params) { p.Crashes, p.ReliableNetwork = 1, true }), func(p spec.Params) spec.Params {
			p = java(p)
			p.Checkpoints, p.RegistrationExpiry = true, true
			return p
		}, []string{"TypeOK"}},
		// The same with the data loss it allows: the counterexample.
		{"master", "", with(small, func(p *spec.Params) { p.Crashes = 1 }), func(p spec.Params) spec.Params {
			p = java(p)
			p.Checkpoints, p.RegistrationExpiry = true, true
			return p
		}, nil},
		// 4.16.3: split-add-check and delete-forgets-fence.
		{"4.16.3", "", with(small, func(p *spec.Params) { p.DeleteLedger = true }), func(p spec.Params) spec.Params {
			p = java(p)
			p.Variant = spec.VariantSplitAddCheck + spec.VariantJoin + spec.VariantDeleteForgetsFence
			return p
		}, []string{"TypeOK"}},
		// 4.13.0: every bug of the line, #2614's truncation found.
		{"4.13.0", "", qw2, func(p spec.Params) spec.Params {
			p = java(p)
			p.Variant = strings.Join([]string{spec.VariantNoRecoveryFence, spec.VariantNoLacFloor, spec.VariantCorruptReadNosuch, spec.VariantSplitAddCheck, spec.VariantDeleteForgetsFence}, spec.VariantJoin)
			return p
		}, nil},
		// A candidate fix asked of a release that has a bug besides.
		{"4.17.3", spec.VariantDurableFenceReply, with(small, func(p *spec.Params) { p.Crashes, p.ReliableNetwork = 1, true }), func(p spec.Params) spec.Params {
			p = java(p)
			p.Checkpoints, p.RegistrationExpiry = true, true
			p.Variant = spec.VariantSplitAddCheck + spec.VariantJoin + spec.VariantDurableFenceReply
			return p
		}, []string{"TypeOK"}},
	} {
		t.Run(tc.release, func(t *testing.T) {
			profile := tc.base
			profile.BookKeeper, profile.Variant = tc.release, tc.variant
			a, err := Run(context.Background(), Config{ModelConfig: ModelConfig{Params: profile, Invariants: tc.invariants}})
			if err != nil {
				t.Fatal(err)
			}
			b, err := Run(context.Background(), Config{ModelConfig: ModelConfig{Params: tc.spelled(tc.base), Invariants: tc.invariants}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(a.Result, b.Result, sameResult); diff != "" {
				t.Errorf("--bookkeeper %s and its options spelled out differ (-release +spelled out):\n%s", tc.release, diff)
			}
			if a.Stats.Distinct < 1000 {
				t.Errorf("--bookkeeper %s: only %d states: the case proves little", tc.release, a.Stats.Distinct)
			}
			if a.Config.BookKeeper != tc.release {
				t.Errorf("the run's model is %q, want BookKeeper %s", a.Config.BookKeeper, tc.release)
			}
		})
	}
}

// TestReleaseRefusals: a setting a release contradicts is refused,
// naming the release; so is a release the model does not know.
func TestReleaseRefusals(t *testing.T) {
	for _, tc := range []struct {
		p    spec.Params
		want []string
	}{
		{spec.Params{BookKeeper: "4.18.2", AddPath: "spec", RecoveryRead: "parallel"}, []string{"add-path: spec is the TLA+ spec's writer", "BookKeeper 4.18.2", "recovery-read: parallel", "8e103282"}},
		{spec.Params{BookKeeper: "4.18.0", Variant: spec.VariantSplitAddCheck}, []string{"split-add-check is a bug BookKeeper 4.18.0 does not have", "4.17.4, 4.18.0"}},
		{spec.Params{BookKeeper: "4.16.7", Variant: spec.VariantDeleteForgetsFence}, []string{"delete-forgets-fence is a bug BookKeeper 4.16.7 does not have"}},
		{spec.Params{BookKeeper: "master", Variant: spec.VariantGWQ}, []string{"gwq changes the TLA+ spec's writer"}},
		{spec.Params{BookKeeper: "4.12.0"}, []string{"does not know release 4.12.0"}},
		{spec.Params{BookKeeper: "4.18"}, []string{`"4.18" is not a BookKeeper release`}},
		{spec.Params{BookKeeper: "4.18.2", Crashes: 1, Journal: spec.JournalNoSync, Checkpoints: true}, []string{"checkpoints: needs --journal synced"}},
	} {
		p := tc.p
		p.Bookies, p.Clients, p.WriteQuorum, p.AckQuorum, p.Entries, p.Inflight = 2, 2, 2, 1, 1, 1
		cfg := Config{ModelConfig: ModelConfig{Params: p}}
		cfg.EnsureDefaults()
		err := cfg.Validate()
		if err == nil {
			t.Errorf("%+v: accepted", tc.p)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v\nwant it to say %q", tc.p, err, w)
			}
		}
	}
}

// TestReleaseBugs: each bug variant is on the releases before its fix on
// every line and off from the fix on; 4.18 and master have none.
func TestReleaseBugs(t *testing.T) {
	for release, want := range map[string]string{
		"4.13.5": "no-recovery-fence+no-lac-floor+corrupt-read-nosuch+split-add-check+delete-forgets-fence",
		"4.14.5": "corrupt-read-nosuch+split-add-check+delete-forgets-fence",
		"4.14.6": "split-add-check+delete-forgets-fence",
		"4.15.0": "corrupt-read-nosuch+split-add-check+delete-forgets-fence",
		"4.15.1": "split-add-check+delete-forgets-fence",
		"4.16.6": "split-add-check+delete-forgets-fence",
		"4.16.7": "split-add-check",
		"4.17.1": "split-add-check+delete-forgets-fence",
		"4.17.2": "split-add-check",
		"4.17.4": "reference",
		"4.18.0": "reference",
		"4.18.2": "reference",
		"master": "reference",
	} {
		p := spec.Params{BookKeeper: release, Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1}
		p.EnsureDefaults()
		if p.Variant != want {
			t.Errorf("--bookkeeper %s: variant %s, want %s", release, p.Variant, want)
		}
		again := p
		again.EnsureDefaults()
		if diff := cmp.Diff(p, again); diff != "" {
			t.Errorf("--bookkeeper %s: EnsureDefaults is not idempotent:\n%s", release, diff)
		}
	}
}

// TestPORSymmetryOrderedTrace: --por with --symmetry on ordered
// ensembles rebuilds its counterexample as a behaviour of the model.
// (A decided recovery's unused layout was relabelled into two canonical
// forms of one orbit, and the rebuild found no successor at step 7.)
func TestPORSymmetryOrderedTrace(t *testing.T) {
	p := spec.Params{Bookies: 3, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1,
		Crashes: 1, ReliableNetwork: true, RecoveryRead: spec.RecoveryReadSequence, RecoveryFromLAC: true}
	rep, err := Run(context.Background(), Config{ModelConfig: ModelConfig{Params: p, POR: true, Symmetry: spec.Symmetry{Bookies: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != explorer.Violation || rep.Trace == nil {
		t.Fatalf("status %s, want a violation with its trace", rep.Status)
	}
	if err := Replay(rep.Trace); err != nil {
		t.Errorf("the trace does not replay: %v", err)
	}
}
