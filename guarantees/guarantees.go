// Package guarantees answers, setting by setting, what E, Qw and Qa
// guarantee, by searching the model (and, where the search cannot finish,
// by random simulation), and writes the answers as docs/guarantees.md with
// each refutation's counterexample beside it.
package guarantees

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// Settings are the E/Qw/Qa the page answers for: as Pulsar guides
// recommend or warn about.
var Settings = [][3]int{{2, 2, 2}, {3, 3, 2}, {3, 3, 3}, {5, 3, 2}, {5, 5, 2}}

// lossIrrelevant are actions that cannot make an acknowledged entry
// disappear when the ensemble uses every bookie (no spare: no ensemble
// change or resend; fenced answers only make the writer withdraw; the
// writer closing at its LAC and recovery write-backs only add copies).
// Excluding them keeps the data-loss questions within reach.
var lossIrrelevant = []string{"ClientReceivesAddFencedResponse", "BookieSendsAddFencedResponse", "ClientResendsPendingAddOp",
	"ClientClosesLedgerSuccess", "ClientClosesLedgerFail", "ClientWritesBackEntry",
	"RecoveryClientReceivesAddConfirmedResponse", "RecoveryClientChangesEnsemble", "RecoveryClientSendsPendingAddOp"}

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

// Options shape a regeneration.
type Options struct {
	MaxStates int64 // 0: DefaultMaxStates
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
	status    string // ok, violation, unknown
	distinct  int64
	depth     int
	length    int
	traceFile string // relative to the page's directory
	symmetric bool   // searched up to symmetry: distinct counts orbits
	simulated bool   // the counterexample comes from random simulation
	walks     int64  // random walks tried after an inconclusive search
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
	start := time.Now()
	cfg := check.Config{ModelConfig: mc}
	cfg.MaxStates = g.opt.MaxStates
	if symmetric {
		cfg.Symmetry = spec.Symmetry{Bookies: true, Clients: true}
	}
	rep, err := check.Run(g.ctx, cfg)
	if err != nil {
		return answer{}, fmt.Errorf("%s: %w", id, err)
	}
	if g.ctx.Err() != nil {
		return answer{}, g.ctx.Err()
	}
	a := answer{status: rep.Status.String(), distinct: rep.Distinct, depth: rep.Depth, symmetric: symmetric}
	tr := rep.Trace
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
	path := "traces/guarantees/" + id + ".itf.json"
	if tr != nil {
		a.length, a.traceFile = len(tr.Steps), path
		g.page.Traces[path] = tr
	} else {
		g.page.Unused = append(g.page.Unused, path)
	}
	if g.opt.Report != nil {
		how := fmt.Sprintf("%s distinct", group(a.distinct))
		if a.walks > 0 {
			how += fmt.Sprintf(", then %s random walks", group(a.walks))
		}
		g.opt.Report(fmt.Sprintf("%-26s %-9s %s, %.1f s", id, a.status, how, time.Since(start).Seconds()))
	}
	return a, nil
}

// traceNote describes a counterexample's length and origin.
func (a answer) traceNote() string {
	if a.simulated {
		return fmt.Sprintf("%d-state trace from random simulation, not necessarily the shortest", a.length)
	}
	return fmt.Sprintf("%d-state trace", a.length)
}

func (a answer) link(text string) string {
	if a.traceFile == "" {
		return text
	}
	return fmt.Sprintf("[%s](%s)", text, a.traceFile)
}

func (a answer) scope() string {
	states := group(a.distinct) + " states"
	if a.symmetric {
		states = group(a.distinct) + " orbits (symmetry over bookies and clients)"
	}
	if a.status == "ok" {
		return "exhaustive, " + states
	}
	open := fmt.Sprintf("no counterexample within %s, the search reaching depth %d", states, a.depth)
	if a.walks > 0 {
		open += fmt.Sprintf(", nor in %s random walks", group(a.walks))
	}
	return open
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

    go run ./cmd/bkcheck guarantees --out docs/guarantees.md

Every answer below is the verdict of a search of the model in
[model.md](model.md) with two clients and one entry, bounded by %s
distinct states (or orbits, below) per question. **Refuted** answers link to their
counterexample (ITF; `+"`bkcheck trace render FILE --format html`"+` draws it);
**proved** ones come from an exhaustive search; **open** ones found no
counterexample within the bound, which proves nothing. A question the
search leaves open also gets %s random walks of up to %d states
(`+"`bkcheck simulate --seed 1 --loss-rate %s`"+`), which reach deeper than
the search; a counterexample found so is a real execution (replayed) but
not necessarily the shortest. Data-loss questions
use the model restricted to the actions that can lose data (docs/model.md,
"How much data loss").

The data-loss and below-Qw questions are searched up to symmetry over
bookies and clients (`+"`--symmetry bookies,clients`"+`, sound there: no unavailable
bookie and at most E+1 bookies, see docs/model.md): the bound then counts
orbits (an orbit with b bookies stands for up to b!·2 states), and a proof
covers every state of every orbit. The questions still open are those whose
space is beyond reach here (4 bookies or more); they are not evidence of
safety.

`, group(opt.MaxStates), group(Walks), WalkLen, strconv.FormatFloat(WalkLossRate, 'g', -1, 64))
	for _, st := range Settings {
		if err := g.setting(&b, st[0], st[1], st[2]); err != nil {
			return nil, err
		}
	}
	b.WriteString(`## Not covered

- Write availability under failures during a ledger's life, with and without
  ensemble changes, needs a liveness question ("eventually acknowledged"),
  which bkcheck does not check; the questions above only ask whether writes
  can succeed with a bookie missing from the start.
- More entries, more clients, crashes combined with data loss, and read-only
  bookies are out of this page's scope (see --crashes, --read-only).
`)
	g.page.Markdown = []byte(b.String())
	return g.page, nil
}

func (g *generator) setting(b *strings.Builder, e, qw, qa int) error {
	id := fmt.Sprintf("e%d-w%d-a%d", e, qw, qa)
	model := func(bookies int, invariants ...string) check.ModelConfig {
		return check.ModelConfig{
			Params:     spec.Params{Bookies: bookies, Clients: 2, Entries: 1, Inflight: 1, Ensemble: e, WriteQuorum: qw, AckQuorum: qa},
			Invariants: invariants,
		}
	}
	fmt.Fprintf(b, "## E = %d, Qw = %d, Qa = %d\n\n| question | answer | scope |\n|---|---|---|\n", e, qw, qa)
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
	// Data loss: the smallest number of empty-disk restarts that loses an
	// acknowledged entry, per mode.
	for _, mode := range []string{"blank", "limbo"} {
		lost := 0
		for f := 1; f <= qa && lost == 0; f++ {
			mc = model(e, "AllAckedEntriesAreReadable", "NoDivergenceBetweenClientAndMetaData")
			mc.Reformat, mc.DataIntegrity, mc.Exclude = f, mode == "limbo", lossIrrelevant
			if a, err = g.ask(fmt.Sprintf("%s-dataloss-%s-%d", id, mode, f), mc, true); err != nil {
				return err
			}
			q := fmt.Sprintf("Does an acknowledged entry survive %d bookie%s restarting with an empty disk (%s)?", f, plural(f, "", "s"), mode)
			switch a.status {
			case "violation":
				lost = f
				row(q, a.link(fmt.Sprintf("**No**: lost after %d disk loss%s (%s)", f, plural(f, "", "es"), a.traceNote())), fmt.Sprintf("%d bookies", e))
			case "ok":
				row(q, "**Yes** (proved)", a.scope())
			default:
				row(q, "open", a.scope())
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
