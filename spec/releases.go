package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// This file is BookKeeper as released: the model a question about
// BookKeeper is asked of (--bookkeeper RELEASE). The TLA+ spec is the
// reference model, and every behaviour bkcheck adds beside it is an
// option; a release is the set of options that is what that release
// does, each one declared here once with the code it follows.

// MasterRelease names apache/bookkeeper's master branch as read for
// docs/model.md (commit 9590a97), which behaves as no release yet.
const MasterRelease = "master"

// DefaultRelease is the release the real-BookKeeper harness runs when
// told none, and the one the pages' BookKeeper questions are asked of.
const DefaultRelease = "4.18.2"

// HarnessReleases are the releases the real-BookKeeper harness runs the
// pages' traces on (its matrix), each served by Maven: the pages' run
// records name only these (bugs.Runs), the default release is one,
// docs/conformance.md lists them, and the harness's Maven module builds
// against the default unless told another (bridge/java/pom.xml; tests
// hold each to this list). A release the model knows and Maven serves
// runs too (bkcheck confirm --bookkeeper); this is what the pages rely on.
var HarnessReleases = []string{"4.13.0", "4.14.1", "4.15.1", "4.16.0", "4.17.1", "4.17.2", DefaultRelease}

// Oldest and newest release lines the model knows: behaviours older than
// 4.13 (the parallel recovery read before 4.10, for one) are not in it,
// and a line after 4.18 may have changed what the model says.
const (
	oldestMinor = 13
	newestMinor = 18
)

// A Release is one BookKeeper version: 4.MINOR.PATCH, or master.
type Release struct {
	Minor, Patch int
	Master       bool
}

// String is the release's name as --bookkeeper takes it.
func (r Release) String() string {
	if r.Master {
		return MasterRelease
	}
	return fmt.Sprintf("4.%d.%d", r.Minor, r.Patch)
}

// before reports whether r is older than 4.minor.patch.
func (r Release) before(minor, patch int) bool {
	return !r.Master && (r.Minor < minor || r.Minor == minor && r.Patch < patch)
}

// ParseRelease reads a --bookkeeper value.
func ParseRelease(s string) (Release, error) {
	if s == MasterRelease {
		return Release{Master: true}, nil
	}
	known := fmt.Sprintf("known: 4.%d.0 to 4.%d.x, or %s", oldestMinor, newestMinor, MasterRelease)
	parts := strings.Split(s, ".")
	if len(parts) != 3 || parts[0] != "4" {
		return Release{}, fmt.Errorf("%q is not a BookKeeper release (4.MINOR.PATCH or %s; %s)", s, MasterRelease, known)
	}
	minor, err1 := strconv.Atoi(parts[1])
	patch, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || minor < 0 || patch < 0 {
		return Release{}, fmt.Errorf("%q is not a BookKeeper release (4.MINOR.PATCH or %s; %s)", s, MasterRelease, known)
	}
	if minor < oldestMinor || minor > newestMinor {
		return Release{}, fmt.Errorf("the model does not know release %s (%s)", s, known)
	}
	return Release{Minor: minor, Patch: patch}, nil
}

// A releaseFix is a protocol bug some releases have: the variant that
// reproduces it, and the releases that fixed it, one per release line
// it reached (the last is the line it was first released on; later lines
// have it).
type releaseFix struct {
	variant string
	fixedIn []Release
	by      string // the change that fixed it
}

// has reports whether release r has the bug.
func (f releaseFix) has(r Release) bool {
	first := f.fixedIn[len(f.fixedIn)-1]
	if !r.before(first.Minor, first.Patch) {
		return false
	}
	for _, x := range f.fixedIn {
		if x.Minor == r.Minor && !r.before(x.Minor, x.Patch) {
			return false
		}
	}
	return true
}

// fixedList names the releases that fixed it.
func (f releaseFix) fixedList() string {
	names := make([]string, len(f.fixedIn))
	for i, r := range f.fixedIn {
		names[i] = r.String()
	}
	return strings.Join(names, ", ")
}

func rel(minor, patch int) Release { return Release{Minor: minor, Patch: patch} }

// releaseFixes are the protocol bugs of the release lines the model
// knows, each fixed where its variant's Source and Issue say.
var releaseFixes = []releaseFix{
	{VariantNoRecoveryFence, []Release{rel(14, 0)}, "PR #2616 (apache/bookkeeper#2614)"},
	{VariantNoLacFloor, []Release{rel(14, 0)}, "PR #2654 (apache/bookkeeper#2615)"},
	{VariantCorruptReadNosuch, []Release{rel(14, 6), rel(15, 1), rel(16, 0)}, "PR #2909 (apache/bookkeeper#2908)"},
	{VariantSplitAddCheck, []Release{rel(17, 4), rel(18, 0)}, "PR #4701"},
	{VariantDeleteForgetsFence, []Release{rel(16, 7), rel(17, 2), rel(18, 0)}, "PR #4462"},
}

// ReleaseBug says, for a variant that reproduces a bug some releases
// have, which releases fixed it; ok is false for any other variant.
func ReleaseBug(variant string) (fixedIn string, ok bool) {
	for _, f := range releaseFixes {
		if f.variant == variant {
			return f.fixedList() + ", by " + f.by, true
		}
	}
	return "", false
}

// ReleaseBugs are the variants of the protocol bugs release r (as
// --bookkeeper takes it) has, in releaseFixes' order: what the page of
// bugs checks a bug's and its fix's release against.
func ReleaseBugs(r string) ([]string, error) {
	rel, err := ParseRelease(r)
	if err != nil {
		return nil, err
	}
	return rel.bugVariants(), nil
}

// bugVariants are the variants of the bugs release r has.
func (r Release) bugVariants() []string {
	var out []string
	for _, f := range releaseFixes {
		if f.has(r) {
			out = append(out, f.variant)
		}
	}
	return out
}

// A ReleaseBehaviour is one thing every release the model knows does
// where the TLA+ spec does otherwise: the option that models it, and the
// code it follows (docs/model.md has each one's difference from Java).
type ReleaseBehaviour struct {
	Setting string // the option, as a flag
	Source  string
}

// ReleaseBehaviours are what --bookkeeper turns on, whatever the release.
var ReleaseBehaviours = []ReleaseBehaviour{
	{"--add-path java", "LedgerHandle.doAsyncAddEntry and PendingAddOp: an op per entry with its own ensemble and acks, ensemble changes through ensembleChangeLoop"},
	{"--recovery-read sequence", "LedgerRecoveryOp.RecoveryReadOp never calls parallelRead since 8e103282 (release 4.10.0): PendingReadOp.SequenceReadRequest"},
	{"--close-rereads", "LedgerHandle.doAsyncCloseInternal: a MetadataUpdateLoop that re-reads the metadata on a conflict"},
	{"--recovery-from-lac", "LedgerRecoveryOp: write-backs counted from the fenced LAC"},
	{"--create-window", "LedgerHandle.asyncAddEntry: PendingAddOp.create takes getCurrentEnsemble() before doAsyncAddEntry adds the op to pendingAddOps"},
	{"--partial-replacement", "EnsembleUtils.replaceBookiesInEnsemble: keeps the replacements it found"},
	{"--registration-expiry (with --crashes or --disk-loss)", "BookieWatcherImpl.processWritableBookiesChanged: a stopped bookie is writable to the clients until its ZooKeeper registration expires with its session"},
	{"--checkpoints (with --crashes and a synced journal)", "DbLedgerStorage (SingleDirectoryDbLedgerStorage.checkpoint, SyncThread.checkpoint, BookieImpl's journal replay): what a crash keeps"},
}

// applyRelease sets what release p.BookKeeper does, leaving an explicit
// choice it contradicts for Validate to name. It is idempotent, as
// EnsureDefaults must be.
func (p *Params) applyRelease() {
	r, err := ParseRelease(p.BookKeeper)
	if err != nil {
		return
	}
	if p.AddPath == AddPathSpec {
		p.AddPath = AddPathJava
	}
	if p.RecoveryRead == RecoveryReadParallel {
		p.RecoveryRead = RecoveryReadSequence
	}
	p.CloseRereads, p.RecoveryFromLAC, p.PartialReplacement, p.CreateWindow = true, true, true, true
	if p.Crashes > 0 || p.DiskLoss > 0 {
		p.RegistrationExpiry = true
	}
	if p.Crashes > 0 && (p.Journal == JournalSynced || p.Journal == "synced") {
		p.Checkpoints = true
	}
	names := r.bugVariants()
	if p.Variant != "" && p.Variant != VariantReference {
		names = append(names, p.Variant)
	}
	if len(names) > 0 {
		p.Variant = CanonicalVariant(strings.Join(append(names, VariantReference), VariantJoin))
	}
}

// validateRelease adds the problems of p's options against its release.
func (p Params) validateRelease(probs interface {
	Add(name, format string, args ...any)
}) {
	r, err := ParseRelease(p.BookKeeper)
	if err != nil {
		probs.Add("bookkeeper", "%v", err)
		return
	}
	if p.AddPath == "spec" {
		probs.Add("add-path", "spec is the TLA+ spec's writer, which no release has: BookKeeper %s's writer is the Java client's (LedgerHandle, PendingAddOp)", r)
	}
	if p.RecoveryRead == "parallel" {
		probs.Add("recovery-read", "parallel is the TLA+ spec's recovery read: BookKeeper %s reads replica by replica (LedgerRecoveryOp has not called parallelRead since 8e103282, release 4.10.0)", r)
	}
	for _, n := range strings.Split(p.Variant, VariantJoin) {
		v := lookupVariant(n)
		switch {
		case v == nil:
		case v.GuaranteedWriteQuorum:
			probs.Add("variant", "%s changes the TLA+ spec's writer, which BookKeeper %s does not have (its writer is the Java client's)", n, r)
		default:
			for _, f := range releaseFixes {
				if f.variant == n && !f.has(r) {
					probs.Add("variant", "%s is a bug BookKeeper %s does not have: it was fixed in %s, by %s (ask it of an earlier release with --bookkeeper)", n, r, f.fixedList(), f.by)
				}
			}
		}
	}
}
