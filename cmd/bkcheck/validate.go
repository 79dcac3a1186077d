package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/bridge"
	"github.com/bkcheck/bkcheck/record"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
	"github.com/bkcheck/bkcheck/validate"
)

// validateSettings are the switches of bkcheck validate.
type validateSettings struct {
	Record    int    `name:"record" unit:"N" help:"first record N runs of released bookies (the cluster of bkcheck confirm; a seeded random environment, BookKeeper's code deciding the rest) into --out, then validate them"`
	Out       string `name:"out" unit:"DIR" help:"with --record: the directory the records are written to (record-SEED.jsonl)"`
	Seed      int64  `name:"seed" unit:"S" help:"with --record: the seed of the first run (run i has S+i)"`
	Release   string `name:"bookkeeper" unit:"RELEASE" help:"with --record: the bookkeeper-server release to run (not given: the default release)"`
	Bookies   int    `name:"bookies" unit:"N" help:"with --record: bookies in the cluster"`
	Ensemble  int    `name:"ensemble" unit:"E" help:"with --record: the ledger's ensemble size (not given: the write quorum)"`
	WQ        int    `name:"write-quorum" unit:"QW" help:"with --record: the ledger's write quorum"`
	AQ        int    `name:"ack-quorum" unit:"QA" help:"with --record: the ledger's ack quorum"`
	Entries   int    `name:"entries" unit:"N" help:"with --record: entries the writer adds"`
	Inflight  int    `name:"inflight" unit:"N" help:"with --record: adds the writer keeps unacknowledged at most"`
	Crashes   int    `name:"crashes" unit:"N" help:"with --record: kill -9 of a bookie per run, at most (each may restart)"`
	Timeouts  int    `name:"timeouts" unit:"N" help:"with --record: add timeouts by the clock per run, at most"`
	Delete    bool   `name:"delete-ledger" help:"with --record: a client that closed the ledger may delete it, and each bookie may then garbage-collect it (a forced collection)"`
	Steer     bool   `name:"steer" help:"with --record: validate each record as it is made and make the environment's decisions that can lead to model actions no valid record has taken yet likelier (coverage feedback)"`
	MaxStates int    `name:"max-states" unit:"N" help:"bound the model states the search may visit for one group of a record (a record that needs more is UNKNOWN, not INVALID)"`
	FromTrace string `name:"from-trace" unit:"FILE" help:"write the record an observer at the harness's place would have made of the model's trace FILE (.itf.json) to stdout, instead of validating: a record that validates by construction"`
	Witness   string `name:"witness" unit:"DIR" help:"write, for each VALID record, the behaviour of the model it is (its witness) to DIR/RECORD.itf.json, a trace like any other (bkcheck trace render draws it)"`
	JSON      bool   `name:"json" help:"write the results as one JSON object on stdout"`
}

var validateSchema = schema.MustOf(validateSettings{})

func validateFlags() []section {
	return []section{{"Validation", schema.Target{S: validateSchema, V: &validateSettings{MaxStates: 2_000_000, Seed: 1,
		Bookies: 2, WQ: 2, AQ: 1, Entries: 2, Inflight: 2, Timeouts: 1}}}}
}

// Exit codes of bkcheck validate, beside the common ones.
const (
	exitValidateValid   = exitOK        // every record is a behaviour of the model
	exitValidateInvalid = exitViolation // some record is not: the model lacks what BookKeeper did, or the recorder misread
	exitValidateUnknown = exitUnknown   // some record needed more states than --max-states
)

// validated is one record's answer, as --json writes it.
type validated struct {
	File    string           `json:"file"`
	Verdict string           `json:"verdict"`
	Groups  int              `json:"groups"`
	Matched int              `json:"matched"`
	States  int              `json:"states"`
	Seconds float64          `json:"seconds"`
	Stuck   *validate.Stuck  `json:"stuck,omitempty"`
	Actions map[string]int   `json:"actions,omitempty"`
	Pairs   map[string]int   `json:"pairs,omitempty"`
	model   *spec.Model      // for coverage
	res     *validate.Result // for the text
}

// runValidate is `bkcheck validate RECORD...`: each record of real
// BookKeeper checked against the model (package validate).
func runValidate(ctx context.Context, inv *invocation) int {
	cl := inv.cl
	s := settingsOf[validateSettings](cl)
	if s.MaxStates <= 0 {
		cl.probs.Add("max-states", "must be > 0 (got %d)", s.MaxStates)
	}
	if s.Record == 0 {
		for _, f := range []struct {
			name  string
			given bool
		}{{"out", s.Out != ""}, {"steer", s.Steer}, {"delete-ledger", s.Delete}} {
			if f.given {
				cl.probs.Add(f.name, "applies with --record only")
			}
		}
	}
	switch {
	case s.Record < 0:
		cl.probs.Add("record", "must be >= 1 (got %d)", s.Record)
	case s.Record > 0 && (s.FromTrace != "" || len(cl.args) > 0):
		cl.probs.Add("record", "records new runs: give no record files or --from-trace with it")
	case s.Record > 0 && s.Out == "":
		cl.probs.Add("out", "give the directory --record writes its records to")
	case s.Record > 0:
		for _, b := range []struct {
			name string
			v    int
		}{{"bookies", s.Bookies}, {"write-quorum", s.WQ}, {"ack-quorum", s.AQ}, {"entries", s.Entries}, {"inflight", s.Inflight}} {
			if b.v < 1 {
				cl.probs.Add(b.name, "must be >= 1 (got %d)", b.v)
			}
		}
		if s.AQ > s.WQ || s.WQ > max(s.Ensemble, s.WQ) || s.Ensemble > s.Bookies {
			cl.probs.Add("ack-quorum", "need bookies >= ensemble >= write quorum >= ack quorum (got %d, %d, %d, %d)", s.Bookies, s.Ensemble, s.WQ, s.AQ)
		}
	case s.FromTrace != "" && len(cl.args) > 0:
		cl.probs.Add("from-trace", "writes one trace's record: give no record files with it (got %d)", len(cl.args))
	case s.FromTrace == "" && len(cl.args) == 0 && s.Record == 0:
		cl.probs.Add("", "give one or more record files (or --from-trace TRACE)")
	}
	cl.notEmpty("witness", s.Witness == "", "give a directory, or leave it out")
	cl.directory("witness", s.Witness)
	if code := cl.report(inv.stderr); code != exitOK {
		return code
	}
	if s.FromTrace != "" {
		return projectTrace(s.FromTrace, inv.stdout, inv.stderr)
	}
	if s.Record > 0 {
		start := time.Now()
		opts := bridge.RecordOptions{Release: s.Release, Bookies: s.Bookies, Ensemble: s.Ensemble,
			WriteQuorum: s.WQ, AckQuorum: s.AQ, Entries: s.Entries, Inflight: s.Inflight, Crashes: s.Crashes, Timeouts: s.Timeouts, Delete: s.Delete,
			Seed: s.Seed, Runs: s.Record, Out: s.Out}
		var abandoned []string
		opts.Abandoned = func(seed int64, err error) {
			abandoned = append(abandoned, fmt.Sprintf("seed %d: %v", seed, err))
			fmt.Fprintf(inv.stderr, "bkcheck validate: run of seed %d abandoned (no record written): %v\n", seed, err)
		}
		if s.Steer {
			st := newSteering()
			opts.Recorded, opts.Steer = st.recorded, st.uncovered
		}
		paths, err := bridge.RecordRuns(ctx, opts)
		if ctx.Err() != nil {
			fmt.Fprintf(inv.stderr, "bkcheck validate: interrupted after %d records (in %s); every process of the cluster reaped\n", len(paths), s.Out)
			return exitInterrupted
		}
		if err != nil {
			fmt.Fprintf(inv.stderr, "bkcheck validate: recording: %v\n", err)
			return exitError
		}
		el := time.Since(start)
		out := inv.stdout
		if s.JSON {
			out = inv.stderr // stdout is the one JSON object
		}
		fmt.Fprintf(out, "recorded %d runs of bookkeeper-server in %s (%.1f records a minute; %d abandoned)\n", len(paths), el.Round(time.Second), float64(len(paths))/el.Minutes(), len(abandoned))
		cl.args = paths
	}
	// Every file is read and checked before any is validated: bad input
	// is one message listing every problem, and no half a run.
	recs := make([]*record.Record, len(cl.args))
	models := make([]*spec.Model, len(cl.args))
	var probs []string
	for i, path := range cl.args {
		r, err := record.ReadFile(path)
		if err == nil {
			models[i], err = validate.Model(r.Header)
			if err != nil {
				err = fmt.Errorf("%s: %w", path, err)
			}
		}
		if err != nil {
			probs = append(probs, err.Error())
			continue
		}
		recs[i] = r
	}
	if len(probs) > 0 {
		fmt.Fprintf(inv.stderr, "bkcheck validate: %d of %d records cannot be validated (none was):\n  %s\n", len(probs), len(cl.args), strings.Join(probs, "\n  "))
		return exitUsage
	}
	var out []validated
	code := exitValidateValid
	for i, r := range recs {
		if ctx.Err() != nil {
			fmt.Fprintln(inv.stderr, "bkcheck validate: interrupted")
			return exitInterrupted
		}
		start := time.Now()
		res, err := validate.Against(models[i], r, validate.Options{MaxStates: s.MaxStates})
		if err != nil {
			fmt.Fprintf(inv.stderr, "bkcheck validate: %s: %v\n", cl.args[i], err)
			return exitUsage
		}
		v := validated{File: cl.args[i], Verdict: res.Verdict, Groups: res.Groups, Matched: res.Matched, States: res.States,
			Seconds: time.Since(start).Seconds(), Stuck: res.Stuck, model: models[i], res: res}
		if res.Verdict == validate.Valid {
			v.Actions, v.Pairs = map[string]int{}, map[string]int{}
			for _, st := range res.Witness {
				v.Actions[st.Action.Kind.String()]++
			}
			for _, pr := range validate.Pairs(res.Witness) {
				v.Pairs[pr.String()]++
			}
		}
		if s.Witness != "" && res.Verdict == validate.Valid {
			if err := os.MkdirAll(s.Witness, 0o755); err != nil {
				fmt.Fprintf(inv.stderr, "bkcheck validate: %v\n", err)
				return exitError
			}
			path := filepath.Join(s.Witness, strings.TrimSuffix(filepath.Base(cl.args[i]), filepath.Ext(cl.args[i]))+".itf.json")
			if err := traces.WriteITFFile(path, res.Trace(models[i])); err != nil {
				fmt.Fprintf(inv.stderr, "bkcheck validate: %v\n", err)
				return exitError
			}
		}
		switch res.Verdict {
		case validate.Invalid:
			code = exitValidateInvalid
		case validate.Unknown:
			if code == exitValidateValid {
				code = exitValidateUnknown
			}
		}
		out = append(out, v)
		if !s.JSON {
			writeValidated(inv.stdout, v)
		}
	}
	cov := coverageOf(out)
	if s.JSON {
		enc := json.NewEncoder(inv.stdout)
		enc.SetIndent("", " ")
		if err := enc.Encode(map[string]any{"records": out, "coverage": cov}); err != nil {
			fmt.Fprintf(inv.stderr, "bkcheck validate: %v\n", err)
			return exitError
		}
		return code
	}
	writeCoverage(inv.stdout, cov)
	return code
}

// projectTrace writes the record of a model trace.
func projectTrace(path string, stdout, stderr io.Writer) int {
	tr, err := readTrace(path)
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck validate: %v\n", err)
		return exitUsage
	}
	r, err := validate.FromTrace(tr)
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck validate: %s: %v\n", path, err)
		return exitUsage
	}
	if err := r.Write(stdout); err != nil {
		fmt.Fprintf(stderr, "bkcheck validate: %v\n", err)
		return exitError
	}
	return exitOK
}

func writeValidated(w io.Writer, v validated) {
	fmt.Fprintf(w, "%s: %s (%d groups, %s model states, %.2f s)\n", v.File, v.Verdict, v.Groups, group(int64(v.States)), v.Seconds)
	v.res.WriteStuck(w)
}

// coverage is which of the models' actions the valid records took.
type coverage struct {
	Valid, Records int
	Taken          map[string]int `json:"taken"`
	Pairs          map[string]int `json:"pairs"`
	Never          []string       `json:"never"`
}

func coverageOf(vs []validated) coverage {
	c := coverage{Records: len(vs), Taken: map[string]int{}, Pairs: map[string]int{}}
	fireable := map[string]bool{}
	for _, v := range vs {
		for _, k := range v.model.Fireable() {
			fireable[k.String()] = true
		}
		if v.Verdict != validate.Valid {
			continue
		}
		c.Valid++
		for a, n := range v.Actions {
			c.Taken[a] += n
		}
		for pr, n := range v.Pairs {
			c.Pairs[pr] += n
		}
	}
	for a := range fireable {
		if c.Taken[a] == 0 {
			c.Never = append(c.Never, a)
		}
	}
	sort.Strings(c.Never)
	return c
}

func writeCoverage(w io.Writer, c coverage) {
	fmt.Fprintf(w, "%d of %d records VALID; the valid records took %d actions of the models' %d, in %d (action, outcome) pairs:\n", c.Valid, c.Records, len(c.Taken), len(c.Never)+len(c.Taken), len(c.Pairs))
	var pairs []string
	for pr := range c.Pairs {
		pairs = append(pairs, pr)
	}
	sort.Strings(pairs)
	for _, pr := range pairs {
		fmt.Fprintf(w, "  %6d  %s\n", c.Pairs[pr], pr)
	}
	if len(c.Never) > 0 {
		fmt.Fprintf(w, "never taken: %s\n", strings.Join(c.Never, ", "))
	}
}

// steering is --steer's coverage feedback: each record validated as it
// is made, and the model's actions no valid record has taken yet.
type steering struct {
	fireable map[string]bool
	taken    map[string]bool
}

func newSteering() *steering { return &steering{taken: map[string]bool{}} }

func (st *steering) recorded(path string) {
	r, err := record.ReadFile(path)
	if err != nil {
		return // validated again, and reported, after the runs
	}
	m, err := validate.Model(r.Header)
	if err != nil {
		return
	}
	if st.fireable == nil {
		st.fireable = map[string]bool{}
		for _, k := range m.Fireable() {
			st.fireable[k.String()] = true
		}
	}
	res, err := validate.Against(m, r, validate.Options{})
	if err != nil || res.Verdict != validate.Valid {
		return
	}
	for _, s := range res.Witness {
		st.taken[s.Action.Kind.String()] = true
	}
}

func (st *steering) uncovered() map[string]bool {
	u := map[string]bool{}
	for a := range st.fireable {
		if !st.taken[a] {
			u[a] = true
		}
	}
	return u
}
