// Package guarantees answers, setting by setting, what E, Qw and Qa
// guarantee, by searching the model (and, where the search cannot finish,
// by random simulation), and writes the answers as docs/guarantees.md with
// each refutation's counterexample beside it.
package guarantees

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/specprops"
	"github.com/bkcheck/bkcheck/traces"
)

// Settings are the E/Qw/Qa the page answers for: as Pulsar guides
// recommend or warn about.
var Settings = [][3]int{{2, 2, 2}, {3, 3, 2}, {3, 3, 3}, {5, 3, 2}, {5, 5, 2}}

// LossIrrelevant are the actions of the BookKeeper model that cannot
// make an acknowledged entry disappear when the ensemble uses every
// bookie (no spare: an ensemble change replaces no bookie and re-sends
// nothing; a fenced answer only makes the writer withdraw, with a close
// at its LAC, which every entry it acknowledged is at or below; recovery
// write-backs only add copies). Data-loss questions search the model
// without them, which keeps them within reach;
// TestRestrictedDataLossAgrees checks the restricted and the full model
// give the same verdicts where both can be searched.
var LossIrrelevant = []string{"ClientReceivesAddFencedResponse", "BookieSendsAddFencedResponse",
	"ClientClosesLedgerSuccess", "ClientClosesLedgerFail", "ClientWritesBackEntry",
	"RecoveryClientReceivesAddConfirmedResponse", "RecoveryClientChangesEnsemble", "RecoveryClientSendsPendingAddOp"}

// AckIrrelevant are the actions that cannot help the writer get an entry
// acknowledged: crashed bookies stay down (no restart), and another
// client's recovery only fences bookies and closes the ledger. The
// availability questions search the model without them (and without
// ensemble changes where the question says so).
var AckIrrelevant = []string{"BookieRestarts", "ClientStartsRecovery", "ClientClosesLedgerSuccess", "ClientClosesLedgerFail"}

// noChangeJava excludes the ensemble changes of the Java client's add
// path, which start at a timeout: no add times out before the close (a
// timeout after it only reaches notifyWriteFailed), and no change.
var noChangeJava = []string{"ClientReceivesAddTimeout", "ClientUpdatesEnsembleMetadata", "RecoveryClientChangesEnsemble"}

// A loss mechanism: how a bookie loses what it stored, in BookKeeper's
// terms, and the model parameters that say so.
type lossMechanism struct {
	id    string    // part of the question id and trace name
	what  [2]string // for the question, after "1 bookie" and after "f bookies"
	lost  string    // for the answer, after "lost after f" (a noun that takes "s" or, ending in "sh"/"ch", "es")
	apply func(p *spec.Params, f int)
	only  func(qw, qa int) bool // settings the question is asked for; nil: all
}

var lossMechanisms = []lossMechanism{
	{"disk-loss", [2]string{"loses its disk, cookie validation on (a wiped bookie stays down), journal synced",
		"lose their disks, cookie validation on (a wiped bookie stays down), journal synced"}, "wiped disk",
		func(p *spec.Params, f int) { p.DiskLoss = f }, nil},
	{"crash-synced", [2]string{"crashes (a kill or a power loss) with the default journal (journalSyncData=true: every acknowledged entry is on disk; a fence answered without data may not be yet)",
		"crash at once with the default journal (journalSyncData=true: every acknowledged entry is on disk; a fence answered without data may not be yet)"}, "crash",
		func(p *spec.Params, f int) { p.Crashes = f }, smallSettings},
	{"reformat", [2]string{"is re-formatted by an operator with its cookie deleted (bookieformat -deleteCookie, decommissionbookie): it rejoins empty as a new environment and no data-integrity check runs, whatever dataIntegrityChecking says",
		"are re-formatted by an operator with their cookies deleted (bookieformat -deleteCookie, decommissionbookie): they rejoin empty as new environments and no data-integrity check runs, whatever dataIntegrityChecking says"}, "re-format",
		func(p *spec.Params, f int) { p.Reformat = f }, nil},
	{"reformat-integrity", [2]string{"is re-formatted with its cookie kept, dataIntegrityChecking=true, dataIntegrityStampMissingCookiesEnabled=true and DbLedgerStorage (cookie validation runs the pre-boot check and waits for it before the bookie serves)",
		"are re-formatted with their cookies kept, dataIntegrityChecking=true, dataIntegrityStampMissingCookiesEnabled=true and DbLedgerStorage (cookie validation runs the pre-boot check and waits for it before the bookie serves)"}, "re-format",
		func(p *spec.Params, f int) { p.Reformat, p.DataIntegrity, p.ReformatCookie = f, true, spec.CookieKept }, nil},
	{"crash-nosync", [2]string{"crashes with journalSyncData=false (a power loss: what was not flushed is lost, fences too)",
		"crash at once with journalSyncData=false (a power loss: what was not flushed is lost, fences too)"}, "crash",
		func(p *spec.Params, f int) { p.Crashes, p.Journal = f, spec.JournalNoSync }, smallSettings},
	{"crash-nojournal", [2]string{"crashes with journalWriteData=false (unflushed entries lost), no data-integrity check",
		"crash at once with journalWriteData=false (unflushed entries lost), no data-integrity check"}, "crash",
		func(p *spec.Params, f int) { p.Crashes, p.Journal = f, spec.JournalDisabled }, smallSettings},
	{"crash-nojournal-integrity", [2]string{"crashes with journalWriteData=false, dataIntegrityChecking=true and DbLedgerStorage (the pre-boot check starts at the restart and BookKeeper does not wait for it)",
		"crash at once with journalWriteData=false, dataIntegrityChecking=true and DbLedgerStorage (the pre-boot check starts at each restart and BookKeeper does not wait for it)"}, "crash",
		func(p *spec.Params, f int) { p.Crashes, p.Journal, p.DataIntegrity = f, spec.JournalDisabled, true }, smallSettings},
}

// bookKeeper makes a question one of BookKeeper as released
// (spec.DefaultRelease: the Java add path, sequence recovery reads, the
// writer's close, the create window, DbLedgerStorage's crash rule and the
// rest docs/model.md lists), not of the TLA+ spec: the page speaks for
// BookKeeper.
func bookKeeper(p spec.Params) spec.Params {
	p.BookKeeper = spec.DefaultRelease
	return p
}

// crashesFirst is the availability questions' constraint: every crash
// happens before the first ensemble change and the first acknowledgement,
// so that "f bookies of the write set crashed" means those of the ledger's
// first ensemble, down when the writer needed them (not a spare that
// joined and crashed later, nor a bookie that crashed after the ack).
const crashesFirst = "CrashesFirst=(meta_version <= 1 && clients.all(id, c, c.lac == 0)) || size(b_down) == params.crashes"

// smallSettings are the settings the crash questions are asked for:
// Qw <= 3 and Qa = 2, as operators most often run (2/2/2, 3/3/2, 5/3/2).
func smallSettings(qw, qa int) bool { return qw <= 3 && qa == 2 }

// An open question (the bounded search found nothing) gets a random
// simulation too: a fixed number of walks from a fixed seed, so that the
// page stays a pure function of the code. Walks pick steps as if each
// message were lost with probability WalkLossRate, which takes them about
// three times deeper than uniform walks; they find counterexamples beyond
// the search's depth, never proofs.
const (
	Walks        = 200_000
	WalkLen      = 60
	WalkLossRate = 0.05
	// DefaultMaxStates bounds each search (distinct states, or orbits
	// where the search is symmetric).
	DefaultMaxStates = 15_000_000
)

// The loss ladder: an open question where messages can be lost gets
// searches of the behaviours that lose at most k messages, k = 1, 2, ...,
// each a CEL constraint (lossConstraint). A constraint only stops the
// search from expanding states, so a counterexample one finds is a
// behaviour of the question's model, the shortest among those losing at
// most k messages; and where one ends exhaustive, the question is
// answered for every behaviour that loses at most k messages, and the
// next k is tried. Most counterexamples here need one lost message or
// none (the recovery reads of docs/model.md wait for every read in
// flight), and the bound removes the loss patterns that multiply every
// send. These searches are bounded by RestrictedFactor times the
// question's bound: their spaces are narrower, and deeper (the E = 5,
// Qw = 3, Qa = 2 crash with journalWriteData=false and the deferred
// check loses an entry with one lost message at depth 24, after 62
// million orbits).
const (
	RestrictedFactor = 5
	// MaxLosses caps the ladder: a proof for every behaviour that loses
	// at most this many messages ends it.
	MaxLosses = 8
)

// lossConstraint keeps the behaviours that lose at most k messages.
func lossConstraint(k int) string {
	return fmt.Sprintf("AtMost%dLost=size(messages.filter(m, m.count == -1)) <= %d", k, k)
}

// Options shape a regeneration.
type Options struct {
	MaxStates int64 // 0: DefaultMaxStates
	// Settings are the E/Qw/Qa to answer for (nil: all of Settings); a
	// subset gives the page's header and footer and those settings'
	// sections, each exactly as in the whole page.
	Settings [][3]int
	// AutoRecovery regenerates the AutoRecovery section with a subset of
	// Settings too (without Settings it always is); without it, a subset
	// keeps the page's AutoRecovery section (Splice), whose searches take
	// most of twenty minutes.
	AutoRecovery bool
	// Report, if set, is told each answer as it comes (the page takes
	// minutes).
	Report func(line string)
}

// Page is a generated page: its Markdown and the counterexamples it links,
// by path relative to the page's directory.
type Page struct {
	Markdown []byte
	Traces   map[string]*traces.Trace // e.g. "traces/guarantees/e2-w2-a2-create.itf.json"
	// Unused are trace paths of questions answered without one: a trace
	// left there by an earlier page is stale.
	Unused []string
}

// answer is the outcome of one query.
type answer struct {
	status      string // ok, violation, unknown
	distinct    int64
	depth       int
	length      int
	traceFile   string // relative to the page's directory
	symmetric   bool   // searched up to symmetry: distinct counts orbits
	bookiesOnly bool   // the symmetry was over bookies only
	simulated   bool   // the counterexample comes from random simulation
	// por: the answer is the reduced search's (--por), run after the
	// full search ended at its bound; porTried with porDistinct and
	// porDepth, how far it got when it did not end either.
	por, porTried bool
	porDistinct   int64
	porDepth      int
	walks         int64 // random walks tried after an inconclusive search
	// The loss ladder's searches (losses[k-1]: the behaviours that lose
	// at most k messages; after inconclusive walks) and the search of
	// those that lose none (a reliable network: after a first rung that
	// ended at its bound).
	losses []restrictedSearch
	noLoss restrictedSearch
}

// restrictedSearch is what a search of a subset of the behaviours found:
// its verdict ("" if it did not run), its size and depth, and whether the
// answer's counterexample is its.
type restrictedSearch struct {
	k        int // at most k lost messages (0: none, a reliable network)
	status   string
	distinct int64
	depth    int
	found    bool
}

type generator struct {
	ctx  context.Context
	opt  Options
	page *Page
}

// ask checks one question and keeps its trace under traces/guarantees/ID.
// With symmetric set, the search is reduced by symmetry over bookies and
// clients, which the caller asks for only where bkcheck accepts it as
// sound (no unavailable bookie, at most E+1 bookies): a proof then covers
// every state of every orbit, and the bound counts orbits, which takes the
// search several times further.
func (g *generator) ask(id string, mc check.ModelConfig, symmetric bool) (answer, error) {
	sym := spec.Symmetry{}
	if symmetric {
		sym = spec.Symmetry{Bookies: true, Clients: true}
	}
	return g.askWith(id, mc, sym)
}

// askWith is ask with the symmetry given.
func (g *generator) askWith(id string, mc check.ModelConfig, sym spec.Symmetry) (answer, error) {
	start := time.Now()
	cfg := check.Config{ModelConfig: mc}
	cfg.MaxStates = g.opt.MaxStates
	cfg.Symmetry = sym
	symmetric := sym != (spec.Symmetry{})
	run := func(cfg check.Config) (*check.Report, error) {
		rep, err := check.Run(g.ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		if rep.Status == explorer.Error {
			// The model failed (a panic, a property that cannot be
			// evaluated): no answer, and not an open question either.
			return nil, fmt.Errorf("%s: the model failed after %d states: %s", id, rep.Distinct, rep.Reason)
		}
		return rep, g.ctx.Err()
	}
	rep, err := run(cfg)
	if err != nil {
		return answer{}, err
	}
	a := answer{status: rep.Status.String(), distinct: rep.Distinct, depth: rep.Depth, symmetric: symmetric, bookiesOnly: symmetric && !sym.Clients}
	rep0 := rep.Distinct // the full search's, for the report
	tr := rep.Trace
	// The full search ended at its bound: the partial-order reduction,
	// where it covers the model, searches the same behaviours' verdict
	// within the same bound of fewer states.
	if pc := cfg; rep.Status == explorer.Unknown {
		pc.POR = true
		pc.EnsureDefaults()
		if pc.Validate() == nil {
			pr, err := run(pc)
			if err != nil {
				return answer{}, err
			}
			a.porTried, a.porDistinct, a.porDepth = true, pr.Distinct, pr.Depth
			if pr.Status != explorer.Unknown {
				a.status, a.distinct, a.depth, a.por, tr = pr.Status.String(), pr.Distinct, pr.Depth, true, pr.Trace
				rep = pr
			}
		}
	}
	if rep.Status == explorer.Unknown {
		sim := check.SimConfig{ModelConfig: mc, Seed: 1, Traces: Walks, Depth: WalkLen, LossRate: WalkLossRate}
		sr, err := check.Simulate(g.ctx, sim)
		if err != nil {
			return answer{}, fmt.Errorf("%s: %w", id, err)
		}
		if g.ctx.Err() != nil {
			return answer{}, g.ctx.Err()
		}
		a.walks = Walks
		if sr.Trace != nil {
			a.status, a.simulated, tr = sr.Status.String(), true, sr.Trace
		}
	}
	// restrict searches the behaviours rc keeps, within the restricted
	// bound, and takes its counterexample.
	restrict := func(k int, rc check.Config) (restrictedSearch, error) {
		rc.MaxStates = RestrictedFactor * g.opt.MaxStates
		r, err := run(rc)
		if err != nil {
			return restrictedSearch{}, err
		}
		rs := restrictedSearch{k: k, status: r.Status.String(), distinct: r.Distinct, depth: r.Depth}
		if r.Status == explorer.Violation {
			a.status, rs.found, tr = r.Status.String(), true, r.Trace
		}
		return rs, nil
	}
	if !mc.ReliableNetwork && a.status == explorer.Unknown.String() {
		for k := 1; k <= MaxLosses; k++ {
			lc := cfg
			lc.Constraint = append(append([]string{}, mc.Constraint...), lossConstraint(k))
			rs, err := restrict(k, lc)
			if err != nil {
				return answer{}, err
			}
			a.losses = append(a.losses, rs)
			if rs.status != explorer.OK.String() {
				break
			}
		}
		// The first rung ended at its bound: the behaviours that lose no
		// message (--reliable-network: only sends to a crashed bookie
		// are lost), a smaller space again.
		if a.losses[0].status == explorer.Unknown.String() {
			nc := cfg
			nc.ReliableNetwork = true
			if a.noLoss, err = restrict(0, nc); err != nil {
				return answer{}, err
			}
		}
	}
	path := "traces/guarantees/" + id + ".itf.json"
	if tr != nil {
		a.length, a.traceFile = len(tr.Steps), path
		g.page.Traces[path] = tr
	} else {
		g.page.Unused = append(g.page.Unused, path)
	}
	if g.opt.Report != nil {
		how := fmt.Sprintf("%s distinct", group(a.distinct))
		if a.porTried {
			how += fmt.Sprintf(" (with --por; %s without)", group(rep0))
			if !a.por {
				how = fmt.Sprintf("%s distinct, then %s with --por", group(rep0), group(a.porDistinct))
			}
		}
		if a.walks > 0 {
			how += fmt.Sprintf(", then %s random walks", group(a.walks))
		}
		for _, rs := range a.restricted() {
			if rs.status != "" {
				how += fmt.Sprintf(", then %s distinct losing at most %d (%s)", group(rs.distinct), rs.k, rs.status)
			}
		}
		g.opt.Report(fmt.Sprintf("%-26s %-9s %s, %.1f s", id, a.status, how, time.Since(start).Seconds()))
	}
	return a, nil
}

// traceNote describes a counterexample's length and origin.
func (a answer) traceNote() string {
	if a.por {
		return fmt.Sprintf("%d-state trace found with the partial-order reduction, not necessarily the shortest", a.length)
	}
	if a.simulated {
		return fmt.Sprintf("%d-state trace from random simulation, not necessarily the shortest", a.length)
	}
	for _, rs := range a.restricted() {
		if rs.found && rs.k == 0 {
			return fmt.Sprintf("%d-state trace, the shortest that loses no message", a.length)
		}
		if rs.found {
			return fmt.Sprintf("%d-state trace, the shortest that loses at most %s", a.length, lossWords(rs.k))
		}
	}
	return fmt.Sprintf("%d-state trace", a.length)
}

// restricted is the answer's restricted searches: the ladder's rungs,
// then the no-loss search.
func (a answer) restricted() []restrictedSearch {
	return append(slices.Clip(a.losses), a.noLoss)
}

// lossWords is "no message", "one message", "2 messages".
func lossWords(k int) string {
	switch k {
	case 0:
		return "no message"
	case 1:
		return "one message"
	}
	return fmt.Sprintf("%d messages", k)
}

func (a answer) link(text string) string {
	if a.traceFile == "" {
		return text
	}
	return fmt.Sprintf("[%s](%s)", text, a.traceFile)
}

func (a answer) scope() string {
	states := group(a.distinct) + " states"
	switch {
	case a.bookiesOnly:
		states = group(a.distinct) + " orbits (symmetry over bookies)"
	case a.symmetric:
		states = group(a.distinct) + " orbits (symmetry over bookies and clients)"
	}
	if a.status == "ok" && a.por {
		return "exhaustive with the partial-order reduction (--por), " + states
	}
	if a.status == "ok" {
		return "exhaustive, " + states
	}
	open := fmt.Sprintf("no counterexample within %s, the search reaching depth %d", states, a.depth)
	if a.porTried {
		unit := " states"
		if a.symmetric {
			unit = " orbits"
		}
		open += fmt.Sprintf(", nor with the partial-order reduction (--por) within %s%s (depth %d)", group(a.porDistinct), unit, a.porDepth)
	}
	if a.walks > 0 {
		open += fmt.Sprintf(", nor in %s random walks", group(a.walks))
	}
	return open + a.ladder()
}

// ladder is what the loss ladder and the no-loss search add to an open
// answer's scope: a proof for the behaviours that lose at most k messages
// (the largest k proved, with each rung's size), and how far the first
// unproved rung got.
func (a answer) ladder() string {
	unit := " states"
	if a.symmetric {
		unit = " orbits"
	}
	var b strings.Builder
	var proved []restrictedSearch
	for _, rs := range a.losses {
		if rs.status == explorer.OK.String() {
			proved = append(proved, rs)
		}
	}
	if n := len(proved); n > 0 {
		fmt.Fprintf(&b, "; **proved for every behaviour that loses at most %s** (exhaustive, ", lossWords(proved[n-1].k))
		if n == 1 {
			b.WriteString(group(proved[0].distinct) + unit + ")")
		} else {
			sizes, ks := make([]string, n), make([]string, n)
			for i, rs := range proved {
				sizes[i], ks[i] = group(rs.distinct), strconv.Itoa(rs.k)
			}
			fmt.Fprintf(&b, "%s%s losing at most %s messages)", list(sizes), unit, list(ks))
		}
	}
	for _, rs := range a.restricted() {
		if rs.status != explorer.Unknown.String() {
			continue
		}
		fmt.Fprintf(&b, ", nor within %s%s losing at most %s", group(rs.distinct), unit, lossWords(rs.k))
		if rs.k > 0 {
			fmt.Fprintf(&b, " (depth %d)", rs.depth)
		}
	}
	if rs := a.noLoss; rs.status == explorer.OK.String() {
		fmt.Fprintf(&b, "; **proved for every behaviour that loses no message** other than those sent to a crashed bookie (exhaustive, %s%s)", group(rs.distinct), unit)
	}
	return b.String()
}

// list joins items as "a, b and c".
func list(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// Generate runs every question and returns the page. Cancelling ctx stops
// it with ctx's error: a page is returned only when every question was
// answered.
func Generate(ctx context.Context, opt Options) (*Page, error) {
	if opt.MaxStates == 0 {
		opt.MaxStates = DefaultMaxStates
	}
	g := &generator{ctx: ctx, opt: opt, page: &Page{Traces: map[string]*traces.Trace{}}}
	var b strings.Builder
	fmt.Fprintf(&b, `# What E, Qw and Qa guarantee

Generated by bkcheck; regenerate with

    bkcheck guarantees --out docs/guarantees.md

Every answer below is the verdict of a search of the model in
[model.md](model.md) with two clients and one entry, bounded by %s
distinct states (or orbits, below) per question. **Refuted** answers link
to their counterexample (ITF; `+"`bkcheck trace render FILE --format html`"+`
draws it); **proved** ones come from an exhaustive search, of the model
the scope column names; **open** ones found no counterexample within the
bound, which proves nothing. Where the search ends at its bound and the
partial-order reduction covers the model (`+"`--por`"+`: BookKeeper's model,
with or without bookie faults), a reduced search with the same bound follows: it
gives the full search's verdict in fewer states, its counterexample is a
real behaviour but not necessarily the shortest, and the scope says so.
A question both leave open also gets
%s random walks of up to %d states (`+"`bkcheck simulate --seed 1 --loss-rate %s`"+`),
which reach deeper than the search; a counterexample found so is a real
execution (replayed) but not necessarily the shortest. Where messages can
be lost and the walks find nothing either, a ladder of searches, each
bounded by %s orbits (or states), keeps only the behaviours that lose at
most k messages, k = 1, 2, … (a CEL constraint, `+"`%s`"+` for k = 1): a
counterexample one finds is a behaviour of the question's model, the
shortest among those that lose at most k messages; where one is
exhaustive, the question is proved for every such behaviour, stays open
only for behaviours that lose more, and the next k is tried (up to %d).
If the first rung ends at its bound, a last search keeps the behaviours
that lose no message (`+"`--reliable-network`"+`: only what is sent to a crashed
bookie is lost), with the same two readings.

**The configuration each answer holds under** is named in its question:
the journal (`+"`journalSyncData`"+`, `+"`journalWriteData`"+`), the data-integrity
check (`+"`dataIntegrityChecking`"+`) and whether BookKeeper waits for it, what
a re-format did with the bookie's cookie, and the ledger storage. Beyond
that, every question is asked of BookKeeper as released
(`+"`--bookkeeper "+spec.DefaultRelease+"`"+`, docs/model.md, "BookKeeper as released"), not of the
TLA+ spec's defaults: the Java client's add path (an ensemble change
starts at a failed write and replaces what it can, in index order; an
op takes its ensemble before it joins the queue), recovery reads replica
by replica and counting from the fenced LAC, the writer's close as
`+"`LedgerHandle.doAsyncCloseInternal`"+`, and DbLedgerStorage's crash rule. Each
section names the model it was asked of; one that names the TLA+ spec's
model was answered before the page moved to BookKeeper as released, and
`+"`--settings`"+` answers it again. How a bookie loses data, as BookKeeper's
mechanisms decide it (docs/model.md, "Faults"):

- a *wiped disk* with cookie validation on (the default): the bookie
  refuses to start (InvalidCookieException) and stays down;
- an *operator re-format* that deleted the cookie (`+"`bookieformat -deleteCookie`"+`,
  `+"`decommissionbookie`"+`, the HTTP decommission with `+"`delete_cookie`"+`): it
  rejoins empty as a new environment, and no data-integrity check runs;
  one that kept the cookie, with `+"`dataIntegrityStampMissingCookiesEnabled=true`"+`,
  runs the check (fence and limbo for a ledger that is open and whose last
  ensemble holds the bookie) and waits for it before serving;
- a *crash*. With the default journal (`+"`journalSyncData=true`"+`) every
  acknowledged entry is on disk, but a fence survives only where the
  restarted bookie finds it: a fence a bookie answered without data
  (NoSuchEntry, an empty LAC read) may not be journalled yet
  (`+"`ReadEntryProcessor`"+` does not wait for the fence record then), and a
  journalled fence record is skipped at replay for a ledger the bookie
  holds no key of, or passed by a checkpoint (`+"`BookieImpl`"+`'s journal
  replay, `+"`SyncThread.checkpoint`"+`). With `+"`journalSyncData=false`"+` (a power loss)
  or `+"`journalWriteData=false`"+` a crash also loses what was acknowledged
  but not yet flushed; with `+"`journalWriteData=false`"+` and the
  data-integrity check, the restarted bookie runs the check in the
  background while it serves.

Data-loss questions search the model without the actions that cannot make
an acknowledged entry disappear when the ensemble holds every bookie (no
spare): fenced rejections, closes by the writer, recovery write-backs
and recovery ensemble changes only withdraw a writer or add copies.
That is an argument, so it is also a test: on every setting small
enough to search both ways, the restricted and the full model give the
same verdict (`+"`TestRestrictedDataLossAgrees`"+`). Availability questions
likewise leave out restarts, recovery and closing, which cannot help a
writer get an acknowledgement.

The data-loss, availability and below-Qw questions are searched up to
symmetry over bookies and clients (`+"`--symmetry bookies,clients`"+`, sound
there: no unavailable bookie and at most E+1 bookies, see docs/model.md):
the bound then counts orbits (an orbit with b bookies stands for up to
b!·2 states), and a proof covers every state of every orbit. The questions
still open are those whose space is beyond reach here (on BookKeeper's
model, from 3 bookies: its client, recovery and storage take many more
steps than the spec's);
they are not evidence of safety, and one proved only for behaviours that
lose at most k messages (or none) says nothing of those that lose more.

`, group(opt.MaxStates), group(Walks), WalkLen, strconv.FormatFloat(WalkLossRate, 'g', -1, 64), group(RestrictedFactor*opt.MaxStates), lossConstraint(1), MaxLosses)
	settings := opt.Settings
	if settings == nil {
		settings = Settings
	}
	for _, st := range settings {
		if err := g.setting(&b, st[0], st[1], st[2]); err != nil {
			return nil, err
		}
	}
	b.WriteString(footerHeading + `

- Availability is asked with the failures in place before the entry is
  sent; failures during a ledger's life in every interleaving would need a
  liveness question ("eventually acknowledged").
- More entries, more clients, faults combined with one another, and
  read-only or disk-full bookies are out of this page's scope (see
  ` + "`--crashes`" + `, ` + "`--read-only`" + `, ` + "`--disk-full`" + `).
- The crash questions are asked where Qw ≤ 3 and Qa = 2 only.
- AutoRecovery is asked in the next section, on E = Qw = 2 only: the
  answers above hold of the write and recovery protocol alone.
`)
	if opt.Settings == nil || opt.AutoRecovery {
		if err := g.autoRecovery(&b); err != nil {
			return nil, err
		}
	}
	g.page.Markdown = []byte(b.String())
	return g.page, nil
}

// autoRecovery writes the AutoRecovery section: each question asked
// without AutoRecovery and with it (docs/model.md, "AutoRecovery"), at
// E = Qw = 2 with a spare bookie, where the searches are exhaustive.
func (g *generator) autoRecovery(b *strings.Builder) error {
	b.WriteString("\n" + arHeading + `

The questions below are asked of BookKeeper as released (` + "`--bookkeeper " + spec.DefaultRelease + "`" + `:
the Java client's add path, recovery's sequence read, the writer's close,
DbLedgerStorage's checkpoints with crashes; docs/model.md, "BookKeeper as
released"), twice: without AutoRecovery and with it
(` + "`--autorecovery`" + `: one Auditor, one
ReplicationWorker, BookKeeper's defaults: the periodic check on and reading
each bookie's first and last entry of a fragment, the replicas check off;
docs/model.md, "AutoRecovery"). E = Qw = 2, three bookies (a spare for the
worker to copy to; the striped row E = 3, Qw = 2 of four), two clients (with AutoRecovery the second is the
worker's admin client, which recovers the ledger after the grace period;
without it, a client that may recover it at any time). "Eventually"
questions are decided by the fair-cycle search (docs/properties.md): with
AutoRecovery the behaviour graph has cycles (a worker that fails and
releases the ledger tries again). Searched with symmetry over bookies
(client symmetry is unsound with AutoRecovery).

| question | without AutoRecovery | with AutoRecovery |
|---|---|---|
`)
	model := func(qa int, ar bool) check.ModelConfig {
		return check.ModelConfig{Params: spec.Params{BookKeeper: spec.DefaultRelease, Bookies: 3, Clients: 2, Entries: 1, Inflight: 1, Ensemble: 2, WriteQuorum: 2, AckQuorum: qa, AutoRecovery: ar},
			Invariants: []string{"none"}}
	}
	eventually := properties.Settings{Eventually: []string{"ReachesQw=meta_status == \"STATUS_CLOSED\" ~> " + specprops.AllCopies}}
	var commands []string // each row's first search, for the list under the table
	for _, q := range []struct {
		id, question string
		mc           func(ar bool) check.ModelConfig
	}{
		{"below-qw", "Qa = 1: an entry acknowledged by one bookie while the other's copy was lost (no ensemble change), the ledger then closed: does it eventually get its Qw = 2 copies?",
			func(ar bool) check.ModelConfig {
				mc := model(1, ar)
				mc.Exclude, mc.Settings = noChangeJava, eventually
				return mc
			}},
		{"below-qw-inside", "Qa = 1, three entries in flight, at most one lost message, no ensemble change: once nothing more can happen, does every entry of the closed ledger have Qw = 2 copies?",
			func(ar bool) check.ModelConfig {
				mc := model(1, ar)
				mc.Entries, mc.Inflight, mc.Exclude = 3, 3, noChangeJava
				mc.Settings = properties.Settings{Constraint: []string{lossConstraint(1)}, Terminal: []string{"ReachesQw=meta_status != \"STATUS_CLOSED\" || " + specprops.AllCopies}}
				return mc
			}},
		{"disk-lost", "Qa = 2: one bookie loses its disk for good (cookie validation keeps it down), no message lost: does every entry of the closed ledger eventually have Qw = 2 copies?",
			func(ar bool) check.ModelConfig {
				mc := model(2, ar)
				mc.DiskLoss, mc.ReliableNetwork, mc.Settings = 1, true, eventually
				return mc
			}},
		{"safe", "Qa = 2: one bookie crashes and one loses its disk, no message lost: does every acknowledged entry keep a copy on a bookie its metadata names, and the closed ledger agree with the writer (replication racing the writer and recovery)?",
			func(ar bool) check.ModelConfig {
				mc := model(2, ar)
				mc.Crashes, mc.DiskLoss, mc.ReliableNetwork = 1, 1, true
				mc.Invariants = []string{"AllAckedEntriesAreReadable", "NoDivergenceBetweenClientAndMetaData"}
				return mc
			}},
		{"striped-disk-lost", "Striped, E = 3, Qw = 2, Qa = 2, four bookies: one bookie loses its disk for good, no message lost: does every entry of the closed ledger eventually have Qw = 2 copies? (The worker copies, to the bookie that takes the lost one's index, every entry from the first to the last that index stores.)",
			func(ar bool) check.ModelConfig {
				mc := model(2, ar)
				mc.Bookies, mc.Ensemble, mc.DiskLoss, mc.ReliableNetwork, mc.Settings = 4, 3, 1, true, eventually
				return mc
			}},
	} {
		cells := make([]string, 2)
		for i, ar := range []bool{false, true} {
			id := "ar-" + q.id + "-off"
			if ar {
				id = "ar-" + q.id + "-on"
			}
			a, err := g.askWith(id, q.mc(ar), spec.Symmetry{Bookies: true})
			if err != nil {
				return err
			}
			switch a.status {
			case "violation":
				cells[i] = a.link(fmt.Sprintf("**No** (%s)", a.traceNote()))
			case "ok":
				cells[i] = fmt.Sprintf("**Yes** (proved: %s)", a.scope())
			default:
				cells[i] = "open (" + a.scope() + ")"
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", q.question, cells[0], cells[1])
		commands = append(commands, fmt.Sprintf("%d. `bkcheck check %s --symmetry bookies --max-states %d`, and with `--autorecovery`", len(commands)+1, q.mc(false).Flags(), g.opt.MaxStates))
	}
	// #4872: with Qw = 1 and the replica lost for good, AutoRecovery never
	// lets the ledger go, under any weak fairness (a question of
	// AutoRecovery only).
	mc := check.ModelConfig{Params: spec.Params{BookKeeper: spec.DefaultRelease, Bookies: 2, Clients: 2, Entries: 1, Inflight: 1, Ensemble: 1, WriteQuorum: 1, AckQuorum: 1, DiskLoss: 1, AutoRecovery: true},
		Invariants: []string{"none"}, Settings: properties.Settings{Eventually: []string{"Repaired=" + specprops.Repaired}, Fair: []string{properties.FairAll}}}
	commands = append(commands, fmt.Sprintf("%d. `bkcheck check %s --max-states %d`", len(commands)+1, mc.Flags(), g.opt.MaxStates))
	a, err := g.askWith("ar-endless-qw1", mc, spec.Symmetry{})
	if err != nil {
		return err
	}
	q := "E = Qw = Qa = 1, two bookies: the bookie holding an acknowledged entry loses its disk for good. Does the ledger eventually leave the under-replicated list, every action weakly fair?"
	switch a.status {
	case "violation":
		fmt.Fprintf(b, "| %s | (nothing marks it) | %s |\n", q, a.link(fmt.Sprintf("**No**: the worker retries for ever (%s; docs/findings.md#f-4872)", a.traceNote())))
	case "ok":
		fmt.Fprintf(b, "| %s | (nothing marks it) | **Yes** (proved: %s) |\n", q, a.scope())
	default:
		fmt.Fprintf(b, "| %s | (nothing marks it) | open (%s) |\n", q, a.scope())
	}
	b.WriteString("\nThe first search of each row, in order (the column without AutoRecovery; the other adds `--autorecovery`):\n\n" + strings.Join(commands, "\n") + "\n")
	b.WriteString(`
How to read them. AutoRecovery repairs what its checks see: a bookie that
is lost (the Auditor's audit), and a bookie lacking the first or the last
entry it should store in a fragment (the periodic check, which reads only
those two; with one entry, the entry). An entry a bookie missed inside a
fragment is seen by neither (the replicas check, when on, only counts it
in a metric): the second row asks that case, and docs/findings.md#f-ar-below-qw
tells its trace. The worker copies only to a bookie outside the
fragment's ensemble, so the questions give it a spare.
`)
	return nil
}

func (g *generator) setting(b *strings.Builder, e, qw, qa int) error {
	id := fmt.Sprintf("e%d-w%d-a%d", e, qw, qa)
	model := func(bookies int, invariants ...string) check.ModelConfig {
		return check.ModelConfig{
			Params:     bookKeeper(spec.Params{Bookies: bookies, Clients: 2, Entries: 1, Inflight: 1, Ensemble: e, WriteQuorum: qw, AckQuorum: qa}),
			Invariants: invariants,
		}
	}
	fmt.Fprintf(b, "## E = %d, Qw = %d, Qa = %d\n\n%s\n\n| question | answer | scope |\n|---|---|---|\n", e, qw, qa, askedOf)
	row := func(q, ans, scope string) { fmt.Fprintf(b, "| %s | %s | %s |\n", q, ans, scope) }

	// Ledger creation needs E writable bookies.
	mc := model(e, "LedgerCreationSucceeds")
	mc.Unavailable = 1
	a, err := g.ask(id+"-create", mc, false)
	if err != nil {
		return err
	}
	if a.status == "violation" {
		row(fmt.Sprintf("Can a ledger be created with only %d of its %d bookies writable?", e-1, e), a.link("**No**: creation fails with NotEnoughBookies"), fmt.Sprintf("%d bookies, 1 unavailable", e))
	} else {
		row("Does creation need E writable bookies?", "open", a.scope())
	}
	// Writes continue with one bookie unavailable, given a spare.
	mc = model(e+1, "NoEntryAcknowledged")
	mc.Unavailable = 1
	if a, err = g.ask(id+"-spare", mc, false); err != nil {
		return err
	}
	q := fmt.Sprintf("With %d bookies and one unavailable, can entries be written?", e+1)
	if a.status == "violation" {
		row(q, a.link("**Yes**: an entry is acknowledged"), fmt.Sprintf("%d bookies, 1 unavailable", e+1))
	} else {
		row(q, "open", a.scope())
	}
	// Availability: f bookies of the write set crash before the entry
	// reaches them (and stay down). Qw - Qa of them leave Qa to ack; one
	// more stops the writer until an ensemble change replaces them.
	tolerable := qw - qa
	for _, c := range []struct {
		f        int
		bookies  int
		change   bool
		question string
	}{
		{tolerable, e, false, fmt.Sprintf("With f = Qw − Qa = %d bookie%s of the write set crashed and no ensemble change, can an entry be acknowledged?", tolerable, plural(tolerable, "", "s"))},
		{tolerable + 1, e, false, fmt.Sprintf("With f = Qw − Qa + 1 = %d bookie%s of the write set crashed and no ensemble change, can an entry be acknowledged?", tolerable+1, plural(tolerable+1, "", "s"))},
		{tolerable + 1, e + 1, true, fmt.Sprintf("With f = %d crashed and a spare bookie, does an ensemble change restore progress?", tolerable+1)},
	} {
		if c.f == 0 || c.f > qw {
			continue
		}
		mc = model(c.bookies, "NoAckWithWriteSetCrashed")
		mc.Crashes = c.f
		mc.Constraint = []string{crashesFirst}
		mc.Exclude = AckIrrelevant
		if !c.change {
			mc.Exclude = append(append([]string{}, AckIrrelevant...), noChangeJava...)
		}
		qid := fmt.Sprintf("%s-ack-crashed-%d", id, c.f)
		if c.change {
			qid += "-spare"
		}
		if a, err = g.ask(qid, mc, true); err != nil {
			return err
		}
		scope := fmt.Sprintf("%d bookies; the crashes before the first ensemble change and ack, and for good; without recovery or closing (they cannot help an ack)", c.bookies)
		if !c.change {
			scope = fmt.Sprintf("%d bookies; no ensemble change; the crashes before the ack, and for good; without recovery or closing", c.bookies)
		}
		switch a.status {
		case "violation":
			row(c.question, a.link(fmt.Sprintf("**Yes**: acknowledged (%s)", a.traceNote())), scope)
		case "ok":
			row(c.question, "**No** (proved)", a.scope()+"; "+scope)
		default:
			row(c.question, "open", a.scope()+"; "+scope)
		}
	}
	// Data loss: for each way a bookie loses data, the smallest number of
	// bookies losing it at which an acknowledged entry is lost.
	for _, lm := range lossMechanisms {
		if lm.only != nil && !lm.only(qw, qa) {
			continue
		}
		lost := false
		for f := 1; f <= qw && !lost; f++ {
			mc = model(e, "AllAckedEntriesAreReadable", "NoDivergenceBetweenClientAndMetaData")
			lm.apply(&mc.Params, f)
			mc.Exclude = LossIrrelevant
			if a, err = g.ask(fmt.Sprintf("%s-%s-%d", id, lm.id, f), mc, true); err != nil {
				return err
			}
			q := fmt.Sprintf("Does an acknowledged entry survive if %d bookie%s %s?", f, plural(f, "", "s"), lm.what[min(f, 2)-1])
			switch a.status {
			case "violation":
				lost = true
				row(q, a.link(fmt.Sprintf("**No**: lost after %d %s (%s)", f, nouns(f, lm.lost), a.traceNote())), fmt.Sprintf("%d bookies", e))
			case "ok":
				row(q, "**Yes** (proved)", a.scope()+restricted)
			default:
				row(q, "open", a.scope()+restricted)
				lost = true // a larger f would only be open too, and slower
			}
		}
	}
	// Entries below Qw.
	if a, err = g.ask(id+"-below-qw", model(e+1, "EntriesReachWriteQuorum"), true); err != nil {
		return err
	}
	q = "Does every entry of a closed ledger reach Qw copies?"
	switch a.status {
	case "violation":
		row(q, a.link(fmt.Sprintf("**No**: a closed ledger keeps an entry below Qw (%s)", a.traceNote()))+"; see [the three ways](traces/README.md), or the gwq variant", fmt.Sprintf("%d bookies, no faults", e+1))
	case "ok":
		row(q, "**Yes** (proved)", a.scope())
	default:
		row(q, "open", a.scope())
	}
	b.WriteString("\n")
	return nil
}

// askedOf opens each setting's section: the model its questions were
// asked of. The page's header says what a section answered before the
// page moved to BookKeeper as released names instead.
var askedOf = "Asked of BookKeeper " + spec.DefaultRelease + " (`--bookkeeper " + spec.DefaultRelease + "`)."

// restricted says, in a scope, what a data-loss search left out.
const restricted = "; model without the actions that cannot lose data (see above)"

// nouns is n's form of noun: "1 crash", "2 crashes", "2 re-formats".
func nouns(n int, noun string) string {
	if n == 1 {
		return noun
	}
	if strings.HasSuffix(noun, "sh") || strings.HasSuffix(noun, "ch") {
		return noun + "es"
	}
	return noun + "s"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// group writes n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
