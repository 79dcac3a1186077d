package bugs_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/bkcheck/bkcheck/bugs"
	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/regress"
	"github.com/bkcheck/bkcheck/spec"
)

// TestPORSameVerdict is --por's metamorphic proof: every case of the
// regression suite (testdata/regress) and every historical bug and its
// fix that the reduction covers gets the same verdict and the same
// violated property with --por (and without symmetry) as the case as
// given; a counterexample found with --por replays on the full model.
// Cases the reduction does not cover (release 4.13's model; liveness
// and constrained questions) must be refused, not run. The slow cases run in the long
// tier, and so do those of porLong.
func TestPORSameVerdict(t *testing.T) {
	cases, err := regress.Load("../testdata/regress")
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, bugs.Cases()...)
	cases = append(cases, bugs.FindingCases()...)
	cases = append(cases, porCases()...)
	labels := map[string]bool{}
	for _, c := range cases {
		labels[c.Label()] = true
	}
	for label := range porLong {
		if !labels[label] {
			t.Errorf("porLong names %s, which is no case", label)
		}
	}
	for label := range porDocs {
		if !labels[label] {
			t.Errorf("porDocs names %s, which is no case", label)
		}
	}
	compared, reduced, refused := 0, 0, 0
	// A case whose configuration another case already has (a bug's fix
	// that is the reference model, as the suite's own case of it) is
	// compared once.
	seen := map[string]string{}
	for _, c := range cases {
		if c.Expect.Slow && !testtier.IsLong() {
			continue
		}
		if _, ok := porLong[c.Label()]; ok && !testtier.IsLong() {
			continue
		}
		if _, ok := porDocs[c.Label()]; ok && !testtier.IsDocs() {
			continue
		}
		id := c.Config
		id.EnsureDefaults()
		key := fmt.Sprint(id.ID(), id.Bounds)
		if first, ok := seen[key]; ok {
			t.Logf("%s: the configuration of %s, compared there", c.Label(), first)
			continue
		}
		seen[key] = c.Label()
		// The suite's and the bugs' fault cases run to hundreds of
		// thousands of orbits, millions of states without their symmetry:
		// they are the long tier's, each with its own symmetry only, and
		// the slow ones are left out (this file's small fault cases stay
		// in the default tier, with and without symmetry).
		faultCase := c.File != "por" && c.Config.Params.Faulty()
		if faultCase && (!testtier.IsLong() || c.Expect.Slow) {
			continue
		}
		// The Java add path's slow cases (f-stuck-writer's millions of
		// states, which --por hardly reduces) are left out too; this
		// file's Java cases stay.
		javaCase := c.File != "por" && id.Params.JavaAddPath() // --bookkeeper's too
		if javaCase && c.Expect.Slow {
			continue
		}
		full := c.Config
		full.Dir, full.Store = "", check.StoreMem
		var want *check.Report
		syms := []spec.Symmetry{full.Symmetry}
		if full.Symmetry != (spec.Symmetry{}) && !faultCase && !javaCase && !(c.Expect.Slow && c.Config.Params.Faulty()) {
			syms = append(syms, spec.Symmetry{}) // (a slow fault case: millions of states without)
		}
		for _, sym := range syms {
			if want == nil {
				probe := full
				probe.POR = true
				probe.EnsureDefaults()
				if probe.Validate() != nil {
					break // refused or invalid: regress.POR tells which
				}
				if want, err = check.Run(context.Background(), full); err != nil {
					t.Fatalf("%s: %v", c.Label(), err)
				}
			}
			got, drifts, covered, err := regress.POR(context.Background(), c, want, sym)
			switch {
			case err != nil:
				t.Fatalf("%s --por: %v", c.Label(), err)
			case !covered:
				refused++
				continue
			}
			compared++
			if st := fmt.Sprint(got.Status); c.File == "por" && c.Expect.Status != "" && st != c.Expect.Status {
				t.Errorf("%s --por --symmetry %v: %s, want %s", c.Label(), sym, st, c.Expect.Status)
			}
			for _, d := range drifts {
				t.Errorf("%s --por --symmetry %v: %s", c.Label(), sym, d)
			}
			if sym == full.Symmetry && got.Distinct < want.Distinct {
				reduced++
			}
			if got.Trace != nil {
				t.Logf("%s --symmetry %v: counterexample of %d states with --por, %d without", c.Label(), sym, len(got.Violation.Trace), len(want.Violation.Trace))
			}
			t.Logf("%s --symmetry %v: %s; %d states with --por, %d without (symmetry %v)", c.Label(), sym, got.Status, got.Distinct, want.Distinct, full.Symmetry)
		}
		if want == nil {
			if _, _, covered, err := regress.POR(context.Background(), c, nil, full.Symmetry); err != nil || covered {
				t.Fatalf("%s: --por refused by validation but not by regress.POR (%v)", c.Label(), err)
			}
			refused++
		}
	}
	t.Logf("%d runs compared, %d of them reduced, %d cases refused", compared, reduced, refused)
	if compared < 10 || reduced < 5 || refused < 3 {
		t.Errorf("%d runs compared, %d reduced, %d refused: the test proves too little", compared, reduced, refused)
	}
}

// porLong are the cases TestPORSameVerdict compares in the long tier
// only: searches of hundreds of thousands of states, or repeats, whose
// features cases of the default tier cover (each says which).
var porLong = map[string]string{
	"tlc.toml:tlc-b2-w2-a1":                "285,773 states; the lossy network: tlc-b2-w1, por:b2-w2-a1-terminal",
	"tlc.toml:tlc-b2-w2-a1-symmetry":       "285,773 states without symmetry; symmetry: tlc-b2-w1-symmetry and the por cases",
	"variants.toml:gwq-reaches-qw":         "284,861 states; gwq: por:gwq-reliable-b3-w3-a2-terminal",
	"extensions.toml:striped-b3-e3-w2-a1":  "337,417 states; striping: por:striped-b3-e3-w2-a1-reliable",
	"variants.toml:no-recovery-fence-2614": "bugs:bk-2614's configuration",
	"bugs:bk-4462":                         "delete-forgets-fence's violation, seconds; deletion: por:delete-b2-w2-a2-reliable",
	"bugs:bk-4701":                         "split-add-check's violation, seconds: por:split-add-check-b2-w2-a1-reliable",
	"bugs:bk-2614":                         "about 160,000 orbits that --por hardly reduces, seconds: no-recovery-fence in por:no-recovery-fence-symmetry",
	"bugs:bk-2614-still":                   "262,436 orbits that --por hardly reduces (261,597), seconds: split-add-check in por:split-add-check-b2-w2-a1-reliable",
}

// porDocs are the cases TestPORSameVerdict compares in the docs tier only
// (BKCHECK_DOCS): bounded searches that stop at their bound with and
// without the reduction, which compare little for their cost.
var porDocs = map[string]string{
	"bugs:bk-2615-fixed": "stops at 2,000,000 states either way (status unknown), twice: 8 million states",
	"bugs:bk-4651-fixed": "2,092,739 orbits with --por, 2,373,821 without: 4.5 million states for a 12% reduction, the long tier's largest comparison (75 s of it)",
	// The long tier's largest comparisons, each of a feature smaller cases
	// compare there (about 100 s of CI's time on two cores).
	"extensions.toml:striped-b3-e3-w2-a2": "2,606,081 states, 17 s; striping: extensions.toml:striped-b3-e3-w2-a1 and por:striped-b3-e3-w2-a1-reliable",
	"tlc.toml:tlc-b2-w2-a2":               "1,795,149 states, 11 s; the lossy network: tlc.toml:tlc-b2-w2-a1 and por:b2-w2-a1-terminal",
	"bugs:bk-4651":                        "654,625 orbits that --por reduces by 7%, 18 s; the Java add path's ensemble change: por:java-b3-w2-a2-reliable-crash, findings:f-stuck-writer",
	"findings:f-stale-acks":               "bugs:bk-4651's configuration",
	// The crash and re-format models' whole spaces (terminal states only);
	// their violations (por:crash-b2-w2-a2-symmetry,
	// por:reformat-b2-w2-a2-symmetry) and the smaller fault cases stay.
	"por:crash-b2-w2-a2-terminal":    "1,985,642 orbits, 37 s",
	"por:reformat-b2-w2-a2-terminal": "1,696,452 orbits, 21 s",
}

// porCases are models where the reduction has something to do (a
// reliable network, terminal-state properties), added to the suite's.
func porCases() []regress.Case {
	p := func(b, w, a, entries int, reliable bool) spec.Params {
		q := spec.DefaultParams()
		q.Bookies, q.WriteQuorum, q.AckQuorum, q.Entries, q.ReliableNetwork = b, w, a, entries, reliable
		return q
	}
	cfg := func(mc check.ModelConfig) check.Config {
		c := check.DefaultConfig()
		c.ModelConfig = mc
		return c
	}
	both := spec.Symmetry{Bookies: true, Clients: true}
	return []regress.Case{
		{File: "por", Name: "reliable-b3-w3-a2", Config: cfg(check.ModelConfig{Params: p(3, 3, 2, 1, true)})},
		{File: "por", Name: "reliable-b3-w3-a2-e2-symmetry", Config: cfg(check.ModelConfig{Params: p(3, 3, 2, 2, true), Symmetry: both})},
		{File: "por", Name: "reliable-b3-w3-a2-below-qw", Config: cfg(check.ModelConfig{Params: p(3, 3, 2, 1, true), Invariants: []string{"EntriesReachWriteQuorum"}})},
		// Violations under symmetry: the search holds canonical forms,
		// and the trace must come out as a behaviour of the model.
		{File: "por", Name: "no-recovery-fence-symmetry", Config: cfg(check.ModelConfig{Params: func() spec.Params {
			q := p(2, 2, 2, 1, false)
			q.Variant = spec.VariantNoRecoveryFence
			return q
		}(), Symmetry: both}), Expect: regress.Expect{Status: "violation", Invariant: "NoDivergenceBetweenClientAndMetaData"}},
		{File: "por", Name: "below-qw-symmetry", Config: cfg(check.ModelConfig{Params: p(2, 2, 1, 1, false), Symmetry: both, Invariants: []string{"EntriesReachWriteQuorum"}}),
			Expect: regress.Expect{Status: "violation", Invariant: "EntriesReachWriteQuorum"}},
		// A terminal-state property: on the TLC set b2-w2-a1 (285,773
		// states) in the long tier, on b2-w1-a1 in the default tier.
		{File: "por", Name: "b2-w2-a1-terminal", Config: cfg(check.ModelConfig{Params: p(2, 2, 1, 1, false), Invariants: []string{"none"},
			Settings: properties.Settings{Terminal: []string{"any=true"}}}), Expect: regress.Expect{Slow: true}},
		{File: "por", Name: "b2-w1-a1-terminal", Config: cfg(check.ModelConfig{Params: p(2, 1, 1, 1, false), Invariants: []string{"none"},
			Settings: properties.Settings{Terminal: []string{"any=true"}}})},
		// Striping on a reliable network (the suite's striped set, 337,417
		// states, is the long tier's).
		{File: "por", Name: "striped-b3-e3-w2-a1-reliable", Config: cfg(check.ModelConfig{Params: striped(p(3, 2, 1, 1, true), 3)})},
		{File: "por", Name: "gwq-reliable-b3-w3-a2-terminal", Config: cfg(check.ModelConfig{Params: func() spec.Params {
			q := p(3, 3, 2, 1, true)
			q.Variant = spec.VariantGWQ
			return q
		}(), Invariants: []string{"EntriesReachWriteQuorum"}})},
		// Crashes and re-formats: the acceptance's models, their whole
		// spaces (terminal states only: the docs tier's, porDocs) and their
		// violations, each journal mode.
		{File: "por", Name: "crash-b2-w2-a2-symmetry", Config: cfg(check.ModelConfig{Params: fault(p(2, 2, 2, 1, false), 1, 0, spec.JournalSynced), Symmetry: both}),
			Expect: regress.Expect{Status: "violation", Invariant: "NoDivergenceBetweenClientAndMetaData", Slow: true}},
		{File: "por", Name: "crash-b2-w2-a2-terminal", Config: cfg(check.ModelConfig{Params: fault(p(2, 2, 2, 1, false), 1, 0, spec.JournalSynced), Symmetry: both, Invariants: []string{"none"}}),
			Expect: regress.Expect{Status: "ok", Slow: true}},
		{File: "por", Name: "crash-nosync-b2-w2-a1", Config: cfg(check.ModelConfig{Params: fault(p(2, 2, 1, 1, true), 1, 0, spec.JournalNoSync)})},
		{File: "por", Name: "crash-disabled-b3-w2-a2-reliable", Config: cfg(check.ModelConfig{Params: fault(p(3, 2, 2, 1, true), 1, 0, spec.JournalDisabled), Symmetry: both}),
			Expect: regress.Expect{Slow: true}},
		{File: "por", Name: "reformat-b2-w2-a2-symmetry", Config: cfg(check.ModelConfig{Params: fault(p(2, 2, 2, 1, false), 0, 1, spec.JournalSynced), Symmetry: both}),
			Expect: regress.Expect{Status: "violation", Invariant: "NoDivergenceBetweenClientAndMetaData", Slow: true}},
		{File: "por", Name: "reformat-b2-w2-a2-terminal", Config: cfg(check.ModelConfig{Params: fault(p(2, 2, 2, 1, false), 0, 1, spec.JournalSynced), Symmetry: both, Invariants: []string{"none"}}),
			Expect: regress.Expect{Status: "ok", Slow: true}},
		{File: "por", Name: "crash-reformat-b2-w1-a1", Config: cfg(check.ModelConfig{Params: fault(p(2, 1, 1, 1, false), 1, 1, spec.JournalSynced)})},
		{File: "por", Name: "disk-loss-b2-w2-a1", Config: cfg(check.ModelConfig{Params: diskLoss(p(2, 2, 1, 1, false)), Symmetry: both}),
			Expect: regress.Expect{Status: "violation", Invariant: "AllAckedEntriesAreReadable"}},
		{File: "por", Name: "disk-loss-b2-w2-a2-reliable", Config: cfg(check.ModelConfig{Params: diskLoss(p(2, 2, 2, 1, true))})},
		// Read-only bookies and full disks: EREADONLY answers, the failed
		// writes they make and the ensemble changes among writable bookies.
		{File: "por", Name: "read-only-b3-w2-a1-reliable", Config: cfg(check.ModelConfig{Params: readOnly(p(3, 2, 1, 1, true), 1, 0), Symmetry: both})},
		{File: "por", Name: "read-only-b3-w2-a1-reliable-below-qw", Config: cfg(check.ModelConfig{Params: readOnly(p(3, 2, 1, 1, true), 1, 0),
			Invariants: []string{"EntriesReachWriteQuorum", "AllAckedEntriesAreReadable"}}),
			Expect: regress.Expect{Status: "violation", Invariant: "EntriesReachWriteQuorum"}},
		{File: "por", Name: "disk-full-b2-w2-a1-symmetry", Config: cfg(check.ModelConfig{Params: readOnly(p(2, 2, 1, 1, false), 0, 1), Symmetry: both}),
			Expect: regress.Expect{Status: "ok", Slow: true}},
		{File: "por", Name: "read-only-disk-full-b3-w3-a2-reliable-terminal", Config: cfg(check.ModelConfig{Params: readOnly(p(3, 3, 2, 1, true), 1, 1), Symmetry: both, Invariants: []string{"none"}}),
			Expect: regress.Expect{Status: "ok", Slow: true}},
		// Corrupt reads (PR #2909's error, and the NoSuchEntry of the
		// bug before it) and a bookie down for the whole run.
		{File: "por", Name: "corrupt-reads-b2-w2-a1-reliable", Config: cfg(check.ModelConfig{Params: corrupt(p(2, 2, 1, 1, true), ""), Symmetry: both})},
		{File: "por", Name: "corrupt-read-nosuch-b2-w2-a1", Config: cfg(check.ModelConfig{Params: corrupt(p(2, 2, 1, 1, false), spec.VariantCorruptReadNosuch), Symmetry: both}),
			Expect: regress.Expect{Status: "violation", Invariant: "NoDivergenceBetweenClientAndMetaData"}},
		{File: "por", Name: "unavailable-b3-w2-a1", Config: cfg(check.ModelConfig{Params: unavailable(p(3, 2, 1, 1, false)), Symmetry: spec.Symmetry{Clients: true}}),
			Expect: regress.Expect{Status: "ok", Slow: true}},
		// Data integrity: the deferred pre-boot check (f-preboot's
		// violation) and the awaited one.
		{File: "por", Name: "integrity-deferred-b2-w2-a2-symmetry", Config: cfg(check.ModelConfig{Params: integrity(fault(p(2, 2, 2, 1, false), 1, 0, spec.JournalDisabled), ""), Symmetry: both}),
			Expect: regress.Expect{Status: "violation", Invariant: "NoDivergenceBetweenClientAndMetaData", Slow: true}},
		{File: "por", Name: "integrity-awaited-b2-w1-a1", Config: cfg(check.ModelConfig{Params: integrity(fault(p(2, 1, 1, 1, false), 1, 0, spec.JournalDisabled), spec.VariantAwaitPreBootCheck)}),
			Expect: regress.Expect{Status: "violation", Invariant: "AllAckedEntriesAreReadable"}},
		// DbLedgerStorage's checkpoints: the lost fence (14 states) with
		// PR #4843's variant.
		{File: "por", Name: "checkpoints-flushes-index-b2-w1-a1", Config: cfg(check.ModelConfig{Params: checkpoints(fault(p(2, 1, 1, 1, false), 1, 0, spec.JournalSynced), spec.VariantCheckpointFlushes)}),
			Expect: regress.Expect{Status: "violation", Invariant: "NoDivergenceBetweenClientAndMetaData"}},
		// The Java add path: ordered ensembles, failures by index, timeouts
		// in channel order, the two-step ensemble change and its re-sends.
		{File: "por", Name: "java-b2-w1-a1-symmetry", Config: cfg(check.ModelConfig{Params: java(p(2, 1, 1, 1, false)), Symmetry: both})},
		{File: "por", Name: "java-b2-w2-a1-below-qw", Config: cfg(check.ModelConfig{Params: java(p(2, 2, 1, 1, false)), Symmetry: both, Invariants: []string{"EntriesReachWriteQuorum"}}),
			Expect: regress.Expect{Status: "violation", Invariant: "EntriesReachWriteQuorum"}},
		{File: "por", Name: "java-b3-w2-a2-reliable-crash", Config: cfg(check.ModelConfig{Params: fault(java(p(3, 2, 2, 1, true)), 1, 0, spec.JournalSynced), Symmetry: both}),
			Expect: regress.Expect{Status: "ok", Slow: true}},
		{File: "por", Name: "disk-loss-b3-w3-a2-reliable-terminal", Config: cfg(check.ModelConfig{Params: diskLoss(p(3, 3, 2, 1, true)), Symmetry: both, Invariants: []string{"none"}}),
			Expect: regress.Expect{Status: "ok", Slow: true}},
		// Sequence recovery reads (BookKeeper's default) and the
		// re-reading close: the whole space, and a violation each.
		{File: "por", Name: "sequence-b2-w2-a1-reliable", Config: cfg(check.ModelConfig{Params: sequence(p(2, 2, 1, 1, true)), Symmetry: both})},
		{File: "por", Name: "sequence-b2-w2-a1-below-qw", Config: cfg(check.ModelConfig{Params: sequence(p(2, 2, 1, 1, false)), Symmetry: both, Invariants: []string{"EntriesReachWriteQuorum"}}),
			Expect: regress.Expect{Status: "violation", Invariant: "EntriesReachWriteQuorum"}},
		{File: "por", Name: "close-rereads-b2-w2-a1-reliable", Config: cfg(check.ModelConfig{Params: closeRereads(p(2, 2, 1, 1, true)), Symmetry: both})},
		{File: "por", Name: "close-rereads-b2-w2-a2-crash", Config: cfg(check.ModelConfig{Params: fault(closeRereads(p(2, 2, 2, 1, false)), 1, 0, spec.JournalSynced), Symmetry: both}),
			Expect: regress.Expect{Status: "violation", Invariant: "NoDivergenceBetweenClientAndMetaData", Slow: true}},
		// Ledger deletion and the split add check on a reliable network.
		{File: "por", Name: "delete-b2-w2-a2-reliable", Config: cfg(check.ModelConfig{Params: deletion(p(2, 2, 2, 1, true)), Symmetry: both})},
		{File: "por", Name: "split-add-check-b2-w2-a1-reliable", Config: cfg(check.ModelConfig{Params: variant(p(2, 2, 1, 1, true), spec.VariantSplitAddCheck), Symmetry: both})},
		// AutoRecovery and decommission: graphs with cycles, reduced
		// under the cycle proviso (bookie symmetry only: the last client
		// is the worker's).
		{File: "por", Name: "autorecovery-b3-w2-a2-disk-loss-reliable", Config: cfg(check.ModelConfig{Params: autoRecovery(diskLoss(p(3, 2, 2, 1, true)), "on", false),
			Symmetry: spec.Symmetry{Bookies: true}})},
		{File: "por", Name: "autorecovery-b2-w1-a1-crash", Config: cfg(check.ModelConfig{Params: autoRecovery(fault(p(2, 1, 1, 1, false), 1, 0, spec.JournalSynced), "on", false)})},
		{File: "por", Name: "autorecovery-b3-w2-a1-crash-below-qw", Config: cfg(check.ModelConfig{Params: autoRecovery(fault(p(3, 2, 1, 1, true), 1, 0, spec.JournalSynced), "off", false),
			Invariants: []string{"EntriesReachWriteQuorum"}}), Expect: regress.Expect{Status: "violation", Invariant: "EntriesReachWriteQuorum"}},
		{File: "por", Name: "decommission-b3-w2-a2-crash-reliable", Config: cfg(check.ModelConfig{Params: autoRecovery(fault(p(3, 2, 2, 1, true), 1, 0, spec.JournalSynced), "off", true),
			Symmetry: spec.Symmetry{Bookies: true}})},
	}
}

// autoRecovery gives q AutoRecovery (E = Qw), its periodic check on or
// off, and with decommission.
func autoRecovery(q spec.Params, periodic string, decommission bool) spec.Params {
	q.AutoRecovery, q.Ensemble, q.AuditorPeriodicCheck, q.Decommission = true, q.WriteQuorum, periodic, decommission
	return q
}

// striped gives q an ensemble of e bookies (e > Qw: striping).
func striped(q spec.Params, e int) spec.Params {
	q.Ensemble = e
	return q
}

// sequence gives q BookKeeper's sequence recovery reads.
func sequence(q spec.Params) spec.Params {
	q.RecoveryRead = spec.RecoveryReadSequence
	return q
}

// closeRereads gives q the writer's re-reading close.
func closeRereads(q spec.Params) spec.Params {
	q.CloseRereads = true
	return q
}

// deletion lets q's clients delete the ledger.
func deletion(q spec.Params) spec.Params {
	q.DeleteLedger = true
	return q
}

// variant gives q a variant.
func variant(q spec.Params, name string) spec.Params {
	q.Variant = name
	return q
}

// readOnly gives q read-only and full-disk budgets.
func readOnly(q spec.Params, readOnly, diskFull int) spec.Params {
	q.ReadOnly, q.DiskFull = readOnly, diskFull
	return q
}

// integrity gives q the data-integrity check and a variant.
func integrity(q spec.Params, variant string) spec.Params {
	q.DataIntegrity, q.Variant = true, variant
	return q
}

// checkpoints gives q DbLedgerStorage's checkpoints and a variant.
func checkpoints(q spec.Params, variant string) spec.Params {
	q.Checkpoints, q.Variant = true, variant
	return q
}

// java gives q the Java client's add path.
func java(q spec.Params) spec.Params {
	q.AddPath = spec.AddPathJava
	return q
}

// corrupt gives q one corrupt read and a variant.
func corrupt(q spec.Params, variant string) spec.Params {
	q.CorruptReads, q.Variant = 1, variant
	return q
}

// unavailable makes q's last bookie down for the whole run.
func unavailable(q spec.Params) spec.Params {
	q.Unavailable = 1
	return q
}

// diskLoss gives q one lost disk.
func diskLoss(q spec.Params) spec.Params {
	q.DiskLoss = 1
	return q
}

// fault gives q a crash and a re-format budget and a journal mode.
func fault(q spec.Params, crashes, reformats int, journal string) spec.Params {
	q.Crashes, q.Reformat, q.Journal = crashes, reformats, journal
	return q
}
