package bugs

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/regress"
	"github.com/bkcheck/bkcheck/spec"
)

// TestBugs runs the fast bugs and fixes against their expectations (the
// slow ones run in the docs tier's TestBugsPageCurrent, which regenerates
// docs/bugs.md and checks every expectation on the way; so do those of
// longBugs, here in the long tier too). The coverage check of
// regress.Compare also fails a bug whose variant or fault never fired.
func TestBugs(t *testing.T) {
	names := map[string]bool{}
	for _, c := range append(Cases(), FindingCases()...) {
		names[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			if c.Expect.Slow {
				t.Skip("slow: checked by cmd/bkcheck's page tests (TestBugsPageCurrent and TestFindingsPageCurrent, docs tier)")
			}
			if why, ok := longBugs[c.Name]; ok {
				testtier.Long(t, why)
			}
			if replayedBugs[c.Name] && !testtier.IsLong() {
				replayPageTrace(t, c)
				return
			}
			rep, err := check.Run(context.Background(), c.Config)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range compare(c, rep) {
				t.Error(d)
			}
		})
	}
	for name := range longBugs {
		if !names[name] {
			t.Errorf("longBugs names %s, which is no case", name)
		}
	}
	for name := range replayedBugs {
		if !names[name] {
			t.Errorf("replayedBugs names %s, which is no case", name)
		}
	}
}

// replayedBugs are bugs whose search takes seconds (5 to 11 each): the
// default tier replays the page's trace of each through the model
// instead, which holds the model to the bug's behaviour (every step, and
// the expected property violated in the expected number of states, under
// the case's own settings), and the long tier searches (the shortest
// trace, the counts).
var replayedBugs = map[string]bool{"bk-2612": true, "bk-4651": true, "bk-544": true, "bk-2908": true, "bk-2908-still": true}

// replayPageTrace checks that the page's trace of case c is a behaviour
// of c's model that violates c's expected property in c's expected number
// of states.
func replayPageTrace(t *testing.T, c regress.Case) {
	t.Helper()
	tr, err := check.ReadTrace(filepath.Join("..", "docs", "traces", c.File, c.Name+".itf.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.Config
	cfg.EnsureDefaults()
	if got, want := tr.Model.Params(), spec.Vocabulary(cfg.Params).Params(); got != want {
		t.Fatalf("the page's trace is of %s, the case of %s", got, want)
	}
	if c.Expect.Status != "violation" || tr.Invariant != c.Expect.Invariant || len(tr.Steps) != c.Expect.Length {
		t.Fatalf("the page's trace violates %s in %d states; the case expects %s of %s in %d", tr.Invariant, len(tr.Steps), c.Expect.Status, c.Expect.Invariant, c.Expect.Length)
	}
	if err := check.Replay(tr); err != nil {
		t.Fatalf("the model does not take the page's trace: %v", err)
	}
}

// longBugs are cases fast enough for the default tier that TestBugs
// leaves to the long tier all the same: fixes (exhaustive searches, a
// second or more each) whose bug or open question the default tier
// reproduces, with f-preboot-fix1 as its fix, and a bug whose search
// takes ten seconds.
var longBugs = map[string]string{
	"bk-4651-fixed":  "the fix of bk-4651 on 4.18.2, an exhaustive search of seconds",
	"bk-4462":        "1.5 million orbits on 4.17.1's model (the default tier has the story in spec/testdata/scenarios/bug-4462-delete.txt, the real tier its trace on 4.17.1 and 4.17.2)",
	"f-4551-fix1":    "a fix of f-4551, an exhaustive search",
	"f-4551-also1":   "f-4551 in another setting, an exhaustive search",
	"f-preboot-fix2": "a fix of f-preboot, an exhaustive search",
	"f-preboot-fix3": "a fix of f-preboot, an exhaustive search",
}

// TestBugsAreDistinct: every bug has an id, a story and a fix, and its
// configuration differs from its fix's (or the fix would prove nothing).
func TestBugsAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range All {
		if b.ID == "" || seen[b.ID] || b.Mechanism == "" || b.Fix == "" || b.Versions == "" || b.Refs == "" {
			t.Errorf("%q: incomplete or duplicate", b.ID)
		}
		seen[b.ID] = true
		bug, fix := b.Bug, b.Fixed
		bug.EnsureDefaults()
		fix.EnsureDefaults()
		if bug.ID() == fix.ID() {
			t.Errorf("%s: the fix is the bug's configuration", b.ID)
		}
		if v, err := spec.VariantByName(fix.Variant); err != nil || (v.Issue == "" && fix.Variant != "reference" && !strings.Contains(fix.Variant, "+")) {
			t.Errorf("%s: the fix's variant %q has no issue reference", b.ID, fix.Variant)
		}
	}
}

// TestBugsOnTheirReleases: each bug is asked of a release that has it
// and its fix of one that does not, as releaseFixes declares them; a
// Still names a bug that its release has and the Fixed release has not.
func TestBugsOnTheirReleases(t *testing.T) {
	has := func(release, variant string) bool {
		t.Helper()
		vs, err := spec.ReleaseBugs(release)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(vs, variant)
	}
	for _, b := range All {
		if b.Bug.BookKeeper == "" || b.Fixed.BookKeeper == "" {
			t.Errorf("%s: asked of the spec's model, not of a release", b.ID)
			continue
		}
		if b.Variant == "" {
			if b.Bug.BookKeeper != spec.DefaultRelease || b.Fixed.BookKeeper != spec.DefaultRelease {
				t.Errorf("%s: a bug no release fixed is asked of %s, not %s and %s", b.ID, spec.DefaultRelease, b.Bug.BookKeeper, b.Fixed.BookKeeper)
			}
			continue
		}
		if _, ok := spec.ReleaseBug(b.Variant); !ok {
			t.Errorf("%s: variant %s is no release's bug", b.ID, b.Variant)
		}
		if !has(b.Bug.BookKeeper, b.Variant) {
			t.Errorf("%s: %s does not have it", b.ID, b.Bug.BookKeeper)
		}
		if has(b.Fixed.BookKeeper, b.Variant) {
			t.Errorf("%s: its fix is asked of %s, which has the bug", b.ID, b.Fixed.BookKeeper)
		}
		if st := b.Still; st != nil {
			by := byID(st.By)
			if by.Variant == "" || has(st.Config.BookKeeper, b.Variant) || !has(st.Config.BookKeeper, by.Variant) {
				t.Errorf("%s: still on %s by %q: that release must have %q's bug and not this one", b.ID, st.Config.BookKeeper, st.By, st.By)
			}
		}
		// A fix asked of a release that still has bk-4701's race leaves
		// the race out: the question is this bug's.
		if f := b.Fixed; has(f.BookKeeper, spec.VariantSplitAddCheck) && !slices.Contains(f.Constraint, noCheckStoreRace) {
			t.Errorf("%s: its fix is asked of %s, which has bk-4701's race, without noCheckStoreRace", b.ID, f.BookKeeper)
		}
	}
	// No two bugs are shown by one execution: their configurations (as
	// normalised, so that an option without effect does not count) differ
	// from every other bug's and from every other bug's fix.
	owner := map[string]string{}
	for _, b := range All {
		bug := b.Bug
		bug.EnsureDefaults()
		if other, ok := owner[bug.ID()]; ok {
			t.Errorf("%s has the configuration of %s", b.ID, other)
		}
		owner[bug.ID()] = b.ID
	}
	for _, b := range All {
		fix := b.Fixed
		fix.EnsureDefaults()
		if other, ok := owner[fix.ID()]; ok && other != b.ID {
			t.Errorf("%s's fix is the configuration of bug %s", b.ID, other)
		}
	}
	if len(All) < 8 {
		t.Errorf("only %d bugs", len(All))
	}
}

// TestFindingsComplete: every finding asks its question of master with a
// configuration, tells its verdict and scope, and each fix differs from
// master's configuration.
func TestFindingsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Findings {
		if f.ID == "" || seen[f.ID] || f.Question == "" || f.Code == "" || f.Story == "" || f.Scope == "" || (f.Upstream == "" && !f.New) {
			t.Errorf("%q: incomplete or duplicate", f.ID)
		}
		seen[f.ID] = true
		m := f.Master
		m.EnsureDefaults()
		for _, x := range f.Fixes {
			c := x.Config
			c.EnsureDefaults()
			if c.ID() == m.ID() || x.Name == "" || x.Change == "" {
				t.Errorf("%s %s: incomplete, or the fix is master's configuration", f.ID, x.Name)
			}
		}
	}
}
