package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The settings docs/guarantees.md answers for: E/Qw/Qa as Pulsar guides
// recommend or warn about.
var guaranteeSettings = [][3]int{{2, 2, 2}, {3, 3, 2}, {3, 3, 3}, {5, 3, 2}, {5, 5, 2}}

// lossIrrelevant are actions that cannot make an acknowledged entry
// disappear when the ensemble uses every bookie (no spare: no ensemble
// change or resend; fenced answers only make the writer withdraw; the
// writer closing at its LAC and recovery write-backs only add copies).
// Excluding them keeps the data-loss questions within reach.
var lossIrrelevant = "ClientReceivesAddFencedResponse,BookieSendsAddFencedResponse,ClientResendsPendingAddOp," +
	"ClientClosesLedgerSuccess,ClientClosesLedgerFail,ClientWritesBackEntry," +
	"RecoveryClientReceivesAddConfirmedResponse,RecoveryClientChangesEnsemble,RecoveryClientSendsPendingAddOp"

// gAnswer is the outcome of one query.
type gAnswer struct {
	status    string // ok, violation, unknown
	distinct  int64
	depth     int
	length    int
	traceFile string // relative to docs/
	symmetric bool   // searched up to symmetry: distinct counts orbits
	simulated bool   // the counterexample comes from random simulation
	walks     int64  // random walks tried after an inconclusive search
}

// An open question (the bounded search found nothing) gets a random
// simulation too: a fixed number of walks from a fixed seed, so that the
// page stays a pure function of the code. Walks pick steps as if each
// message were lost with probability guaranteeLossRate, which takes them
// about three times deeper than uniform walks; they find counterexamples
// beyond the search's depth, never proofs.
const (
	guaranteeWalks    = 200_000
	guaranteeWalkLen  = 60
	guaranteeLossRate = "0.05"
)

// runGuaranteeQuery checks one question and keeps its trace under
// docs/traces/guarantees/ID.itf.json. With symmetric set, the search is
// reduced by symmetry over bookies and clients, which the caller asks for
// only where bkcheck accepts it as sound (no unavailable bookie, at most
// E+1 bookies): a proof then covers every state of every orbit, and the
// bound counts orbits, which takes the search several times further.
func runGuaranteeQuery(ctx context.Context, docsDir, id string, args []string, maxStates int64, symmetric bool) (gAnswer, error) {
	trace := filepath.Join(docsDir, "traces", "guarantees", id+".itf.json")
	all := append([]string{"--max-states", strconv.FormatInt(maxStates, 10), "--trace-out", trace}, args...)
	if symmetric {
		all = append(all, "--symmetry", "bookies,clients")
	}
	code, r, stderr, err := runCheckJSON(ctx, all)
	if err != nil {
		return gAnswer{}, err
	}
	if code == exitUsage || code == exitError {
		return gAnswer{}, fmt.Errorf("bkcheck check %s: %s", strings.Join(all, " "), stderr)
	}
	a := gAnswer{status: r.Status, distinct: r.Distinct, depth: r.Depth, symmetric: symmetric}
	if a.status == "unknown" {
		sim := append([]string{"--seed", "1", "--traces", strconv.Itoa(guaranteeWalks), "--depth", strconv.Itoa(guaranteeWalkLen),
			"--loss-rate", guaranteeLossRate, "--trace-out", trace}, args...)
		code, sr, stderr, err := runJSON(ctx, "simulate", sim)
		if err != nil {
			return gAnswer{}, err
		}
		if code == exitUsage || code == exitError {
			return gAnswer{}, fmt.Errorf("bkcheck simulate %s: %s", strings.Join(sim, " "), stderr)
		}
		a.walks = guaranteeWalks
		if sr.Violation != nil {
			a.status, a.simulated, r = sr.Status, true, sr
		}
	}
	if _, length := r.invariantAndLength(); r.Violation != nil {
		a.length = length
		a.traceFile = "traces/guarantees/" + id + ".itf.json"
	} else {
		os.Remove(trace)
	}
	return a, nil
}

// traceNote describes a counterexample's length and origin.
func (a gAnswer) traceNote() string {
	if a.simulated {
		return fmt.Sprintf("%d-state trace from random simulation, not necessarily the shortest", a.length)
	}
	return fmt.Sprintf("%d-state trace", a.length)
}

func (a gAnswer) link(text string) string {
	if a.traceFile == "" {
		return text
	}
	return fmt.Sprintf("[%s](%s)", text, a.traceFile)
}

func (a gAnswer) scope() string {
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

// runGuarantees is `bkcheck guarantees [--out FILE] [--max-states N]`:
// it runs the questions of docs/guarantees.md for every setting and
// writes the page, with each refutation's trace beside it.
func runGuarantees(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bkcheck guarantees", flag.ContinueOnError)
	fs.SetOutput(stderr)
	outPath := fs.String("out", "docs/guarantees.md", "the page to write; traces go to traces/guarantees/ beside it")
	maxStates := fs.Int64("max-states", 15_000_000, "bound of each search (distinct states, or orbits where the search is symmetric)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	docsDir := filepath.Dir(*outPath)
	if err := os.MkdirAll(filepath.Join(docsDir, "traces", "guarantees"), 0o755); err != nil {
		fmt.Fprintf(stderr, "bkcheck guarantees: %v\n", err)
		return exitError
	}
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

`, group(*maxStates), group(guaranteeWalks), guaranteeWalkLen, guaranteeLossRate)
	// ask runs one question and reports it on stderr: the whole page takes
	// minutes, so the user sees each answer as it comes.
	ask := func(id string, args []string, symmetric bool) (gAnswer, error) {
		start := time.Now()
		a, err := runGuaranteeQuery(ctx, docsDir, id, args, *maxStates, symmetric)
		if err == nil {
			how := fmt.Sprintf("%s distinct", group(a.distinct))
			if a.walks > 0 {
				how += fmt.Sprintf(", then %s random walks", group(a.walks))
			}
			fmt.Fprintf(stderr, "bkcheck guarantees: %-26s %-9s %s, %.1f s\n", id, a.status, how, time.Since(start).Seconds())
		}
		return a, err
	}
	for _, st := range guaranteeSettings {
		e, qw, qa := st[0], st[1], st[2]
		id := fmt.Sprintf("e%d-w%d-a%d", e, qw, qa)
		base := []string{"--clients", "2", "--entries", "1", "-e", strconv.Itoa(e), "-w", strconv.Itoa(qw), "-a", strconv.Itoa(qa)}
		with := func(bookies int, extra ...string) []string {
			return append(append(append([]string{}, base...), "--bookies", strconv.Itoa(bookies)), extra...)
		}
		fmt.Fprintf(&b, "## E = %d, Qw = %d, Qa = %d\n\n| question | answer | scope |\n|---|---|---|\n", e, qw, qa)
		row := func(q, ans, scope string) { fmt.Fprintf(&b, "| %s | %s | %s |\n", q, ans, scope) }
		fail := func(err error) int { fmt.Fprintf(stderr, "bkcheck guarantees: %v\n", err); return exitError }

		// Ledger creation needs E writable bookies.
		a, err := ask(id+"-create", with(e, "--unavailable", "1", "--invariants", "LedgerCreationSucceeds"), false)
		if err != nil {
			return fail(err)
		}
		if a.status == "violation" {
			row(fmt.Sprintf("Can a ledger be created with only %d of its %d bookies writable?", e-1, e), a.link("**No**: creation fails with NotEnoughBookies"), fmt.Sprintf("%d bookies, 1 unavailable", e))
		} else {
			row("Does creation need E writable bookies?", "open", a.scope())
		}
		// Writes continue with one bookie unavailable, given a spare.
		a, err = ask(id+"-spare", with(e+1, "--unavailable", "1", "--invariants", "NoEntryAcknowledged"), false)
		if err != nil {
			return fail(err)
		}
		if a.status == "violation" {
			row(fmt.Sprintf("With %d bookies and one unavailable, can entries be written?", e+1), a.link("**Yes**: an entry is acknowledged"), fmt.Sprintf("%d bookies, 1 unavailable", e+1))
		} else {
			row(fmt.Sprintf("With %d bookies and one unavailable, can entries be written?", e+1), "open", a.scope())
		}
		// Data loss: the smallest number of empty-disk restarts that loses
		// an acknowledged entry, per mode.
		for _, mode := range []string{"blank", "limbo"} {
			lost := 0
			for f := 1; f <= qa && lost == 0; f++ {
				a, err = ask(fmt.Sprintf("%s-dataloss-%s-%d", id, mode, f),
					with(e, "--data-loss", strconv.Itoa(f), "--data-loss-mode", mode, "--invariants", "AllAckedEntriesAreReadable,NoDivergenceBetweenClientAndMetaData", "--exclude-actions", lossIrrelevant), true)
				if err != nil {
					return fail(err)
				}
				q := fmt.Sprintf("Does an acknowledged entry survive %d bookie%s restarting with an empty disk (%s)?", f, map[bool]string{true: "", false: "s"}[f == 1], mode)
				switch a.status {
				case "violation":
					lost = f
					row(q, a.link(fmt.Sprintf("**No**: lost after %d disk loss%s (%s)", f, map[bool]string{true: "", false: "es"}[f == 1], a.traceNote())), fmt.Sprintf("%d bookies", e))
				case "ok":
					row(q, "**Yes** (proved)", a.scope())
				default:
					row(q, "open", a.scope())
				}
			}
		}
		// Entries below Qw.
		a, err = ask(id+"-below-qw", with(e+1, "--invariants", "EntriesReachWriteQuorum"), true)
		if err != nil {
			return fail(err)
		}
		switch a.status {
		case "violation":
			row("Does every entry of a closed ledger reach Qw copies?", a.link(fmt.Sprintf("**No**: a closed ledger keeps an entry below Qw (%s)", a.traceNote()))+"; see [the three ways](traces/README.md), or the gwq variant", fmt.Sprintf("%d bookies, no faults", e+1))
		case "ok":
			row("Does every entry of a closed ledger reach Qw copies?", "**Yes** (proved)", a.scope())
		default:
			row("Does every entry of a closed ledger reach Qw copies?", "open", a.scope())
		}
		b.WriteString("\n")
	}
	b.WriteString(`## Not covered

- Write availability under failures during a ledger's life, with and without
  ensemble changes, needs a liveness question ("eventually acknowledged"),
  which bkcheck does not check; the questions above only ask whether writes
  can succeed with a bookie missing from the start.
- More entries, more clients, crashes combined with data loss, and read-only
  bookies are out of this page's scope (see --crashes, --read-only).
`)
	if err := os.WriteFile(*outPath, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintf(stderr, "bkcheck guarantees: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "wrote %s\n", *outPath)
	return exitOK
}
