package check

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/specprops"
	"github.com/bkcheck/bkcheck/traces"
)

// graph is a model's whole reachable graph, explicitly: the reference
// against which the eventually pass and probes are checked.
type graph struct {
	states []spec.State
	succ   [][]int
	dist   []int // from the initial state, in transitions
}

func explicitGraph(t *testing.T, p spec.Params) *graph {
	t.Helper()
	m, err := spec.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	g := &graph{}
	index := map[string]int{}
	add := func(s *spec.State, d int) int {
		k := string(m.Encode(nil, s))
		if i, ok := index[k]; ok {
			return i
		}
		var c spec.State
		c.CopyFrom(s)
		index[k] = len(g.states)
		g.states, g.succ, g.dist = append(g.states, c), append(g.succ, nil), append(g.dist, d)
		return len(g.states) - 1
	}
	init := m.Init()
	add(&init, 0)
	var scratch spec.State
	for i := 0; i < len(g.states); i++ {
		s := g.states[i]
		m.Next(&s, &scratch, func(_ spec.Action, next *spec.State) {
			g.succ[i] = append(g.succ[i], add(next, g.dist[i]+1))
		})
	}
	return g
}

// eval is the value of a CEL expression on every state.
func (g *graph) eval(t *testing.T, p spec.Params, expr string) []bool {
	t.Helper()
	set, err := specprops.Compile(p, []properties.Def{{Name: "x", Kind: properties.Invariant, Expr: expr}})
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := set.NewEvaluator()
	out := make([]bool, len(g.states))
	for i := range g.states {
		ev.Load(&g.states[i])
		out[i], _ = ev.Holds(0)
	}
	return out
}

// leadsTo decides P ~> Q on the explicit graph, independently of the
// product construction: it fails iff some reachable state s has P and
// not Q, and a path of not-Q states leads from s to a terminal state. The
// shortest counterexample has min over such s of dist(init, s) +
// dist_notQ(s, terminal) + 1 states. Plain "eventually Q" is P true at the
// initial state only. It returns 0 when the property holds.
func (g *graph) leadsTo(p, q []bool, plain bool) int {
	const inf = 1 << 30
	// toEnd[s]: transitions from s to a terminal state through not-Q
	// states (s included), by a backward fixpoint.
	toEnd := make([]int, len(g.states))
	for i := range toEnd {
		toEnd[i] = inf
		if !q[i] && len(g.succ[i]) == 0 {
			toEnd[i] = 0
		}
	}
	for changed := true; changed; {
		changed = false
		for i := range g.states {
			if q[i] {
				continue
			}
			for _, j := range g.succ[i] {
				if toEnd[j]+1 < toEnd[i] {
					toEnd[i], changed = toEnd[j]+1, true
				}
			}
		}
	}
	best := inf
	for i := range g.states {
		trig := i == 0
		if !plain {
			trig = p[i]
		}
		if trig && !q[i] && toEnd[i] < inf && g.dist[i]+toEnd[i] < best {
			best = g.dist[i] + toEnd[i]
		}
	}
	if best == inf {
		return 0
	}
	return best + 1
}

// probe is the length of the shortest witness of q, 0 if none.
func (g *graph) probe(q []bool) int {
	best := 0
	for i := range g.states {
		if q[i] && (best == 0 || g.dist[i]+1 < best) {
			best = g.dist[i] + 1
		}
	}
	return best
}

var eventuallyCorpus = []string{
	`meta_status == "STATUS_CLOSED"`,
	`meta_status != "Nil"`,
	`meta_version >= 2`,
	`clients.exists(id, c, c.recovery_phase > 0) ~> meta_status == "STATUS_CLOSED"`,
	`clients.exists(id, c, c.lac > 0) ~> clients.all(id, c, c.status != "STATUS_OPEN")`,
	`b_fenced.exists(b, f, f) ~> meta_status == "STATUS_CLOSED" || clients.exists(id, c, c.status == "RECOVERY_ABORTED")`,
	`meta_status == "STATUS_OPEN" ~> meta_status != "STATUS_OPEN"`,
	`true ~> meta_version > 0`,
}

var probeCorpus = []string{
	`meta_status == "STATUS_CLOSED" && meta_last_entry == 1`,
	`clients.exists(id, c, c.lac >= 1) && b_entries.all(b, es, size(es) == 0)`,
	`meta_version > 4`,
	`size(messages) > 0 && messages.all(m, m.count == -1)`,
}

func smallModels() []spec.Params {
	b1 := spec.DefaultParams()
	b1.Bookies, b1.WriteQuorum = 1, 1
	w1 := spec.DefaultParams()
	w1.WriteQuorum = 1
	return []spec.Params{b1, w1}
}

// TestEventuallyExact: the eventually pass agrees with an explicit
// computation on the whole graph, property by property (verdict and
// shortest counterexample) and all together (the shortest of all), for 1,
// 2 and 4 workers; its counterexamples replay.
func TestEventuallyExact(t *testing.T) {
	for _, p := range smallModels() {
		p.EnsureDefaults()
		g := explicitGraph(t, p)
		var all []string
		shortest := 0
		for i, expr := range eventuallyCorpus {
			name := fmt.Sprintf("E%d", i)
			all = append(all, name+"="+expr)
			trig, goal, leads := properties.SplitLeadsTo(expr)
			var pv []bool
			if leads {
				pv = g.eval(t, p, trig)
			}
			want := g.leadsTo(pv, g.eval(t, p, goal), !leads)
			if want > 0 && (shortest == 0 || want < shortest) {
				shortest = want
			}
			rep := runEventually(t, p, []string{name + "=" + expr}, 2)
			got := 0
			if rep.Trace != nil {
				got = len(rep.Trace.Steps)
			}
			if got != want {
				t.Errorf("%s: %s: pass gives %d (0: holds), explicit graph %d", p, expr, got, want)
			}
		}
		var first *Report
		for _, w := range []int{1, 2, 4} {
			rep := runEventually(t, p, all, w)
			if rep.Trace == nil || len(rep.Trace.Steps) != shortest {
				t.Fatalf("%s, all together, %d workers: %v, want a counterexample of %d states", p, w, rep.Status, shortest)
			}
			if err := Replay(rep.Trace); err != nil {
				t.Errorf("replay: %v", err)
			}
			if first == nil {
				first = rep
			} else if rep.Trace.Invariant != first.Trace.Invariant || !cmp.Equal(rep.Trace.Steps, first.Trace.Steps) {
				t.Errorf("%d workers: %s, 1 worker: %s (or the traces differ)", w, rep.Trace.Invariant, first.Trace.Invariant)
			}
		}
	}
}

func runEventually(t *testing.T, p spec.Params, evs []string, workers int) *Report {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Params = p
	cfg.Invariants = []string{"none"}
	cfg.Eventually = evs
	cfg.Workers = workers
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Trace == nil && rep.Status != explorer.OK {
		t.Fatalf("%v: %s %s", evs, rep.Status, rep.Reason)
	}
	return rep
}

// TestProbes: a probe is answered found, with the shortest witness the
// explicit graph has, or not reachable; the search is not stopped by it;
// the answers do not depend on the number of workers.
func TestProbes(t *testing.T) {
	for _, p := range smallModels() {
		p.EnsureDefaults()
		g := explicitGraph(t, p)
		cfg := DefaultConfig()
		cfg.Params = p
		for i, expr := range probeCorpus {
			cfg.Probe = append(cfg.Probe, fmt.Sprintf("P%d=%s", i, expr))
		}
		var first []PropertyResult
		for _, w := range []int{1, 2, 4} {
			cfg.Workers = w
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Status != explorer.OK || rep.Distinct != int64(len(g.states)) {
				t.Fatalf("%s: %s, %d states; want ok, %d", p, rep.Status, rep.Distinct, len(g.states))
			}
			for i, expr := range probeCorpus {
				want := g.probe(g.eval(t, p, expr))
				r := rep.Properties[i]
				switch {
				case want == 0 && r.Status != NotReachable:
					t.Errorf("%s: %s: %s, want not reachable", p, expr, r.Status)
				case want > 0 && (r.Status != Found || len(r.Trace.Steps) != want):
					t.Errorf("%s: %s: %s (%v), want found in %d states", p, expr, r.Status, r.Trace != nil, want)
				case want > 0:
					if err := Replay(r.Trace); err != nil {
						t.Errorf("%s: witness does not replay: %v", expr, err)
					}
				}
			}
			if first == nil {
				first = rep.Properties
			} else if !cmp.Equal(first, rep.Properties, cmp.Comparer(func(a, b *PropertyResult) bool { return true })) {
				for i := range first {
					if first[i].Status != rep.Properties[i].Status || (first[i].Trace != nil && !cmp.Equal(first[i].Trace.Steps, rep.Properties[i].Trace.Steps)) {
						t.Errorf("%d workers: %s %s, 1 worker %s", w, rep.Properties[i].Name, rep.Properties[i].Status, first[i].Status)
					}
				}
			}
		}
	}
}

// TestProbeAtViolationDepth: when the search stops at a violation, a probe
// is found only if its witness is shorter than the counterexample (those
// levels were checked whole, whatever the workers); one no shallower is
// unknown.
func TestProbeAtViolationDepth(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Reformat = 1 // AllAckedEntriesAreReadable fails in 6 states
	cfg.Probe = []string{`Early=meta_status == "STATUS_OPEN"`, `Late=clients.exists(id, c, c.lac >= 1) && b_entries.all(b, es, size(es) == 0)`}
	for _, w := range []int{1, 2, 4} {
		cfg.Workers = w
		rep, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Status != explorer.Violation || len(rep.Trace.Steps) != 6 {
			t.Fatalf("%s", rep.Status)
		}
		if r := rep.Properties[0]; r.Status != Found || len(r.Trace.Steps) != 2 {
			t.Errorf("Early: %s", r.Status)
		}
		if r := rep.Properties[1]; r.Status != Unknown {
			t.Errorf("Late (its witness is as long as the counterexample): %s, want unknown", r.Status)
		}
	}
}

// TestPropertyErrors: every bad property is reported before any search,
// naming the property and its setting, the position and what was
// expected.
func TestPropertyErrors(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Invariant = []string{`Typo=clients.all(id, c, c.lacc >= 0)`, `NotBool=meta_version + 1`, `noequals`, `TypeOK=true`}
	cfg.Probe = []string{`Undeclared=meta_stauts == "STATUS_OPEN"`, `Mixed=meta_version == "1"`}
	cfg.Eventually = []string{`Dup=true`, `Dup=true`}
	cfg.Terminal = []string{`Leads=true ~> true`}
	cfg.EnsureDefaults()
	err := cfg.Validate()
	ps, ok := schema.AsProblems(err)
	if !ok {
		t.Fatalf("got %v", err)
	}
	text := ps.Render(func(f string) string { return "--" + f })
	for _, want := range []string{
		"--invariant: Typo:1:21: undefined field 'lacc'", "did you mean 'lac'?", "a Client has: id, meta_version, status",
		"--invariant: NotBool:1:1: the expression is an int; a property is a bool",
		`--invariant: "noequals": want NAME=EXPR`,
		"--invariant: TypeOK: the name is taken",
		"--probe: Undeclared:1:1: undeclared reference to 'meta_stauts' (did you mean 'meta_status'?)", "the view has: messages, meta_status",
		"--probe: Mixed:1:14: found no matching overload for '_==_' applied to '(int, string)'",
		"--eventually: Dup: the name is taken",
		"--terminal: Leads: P ~> Q (leads to) is an eventually property",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the message lacks %q:\n%s", want, text)
		}
	}
}

// TestSimulateProbeAndEventually: random walks report an eventually
// counterexample, and answer every probe: found, with the walk that
// reached it as its witness (both replay), or unknown. A probe is not a
// violation: it ends neither a walk nor the simulation.
func TestSimulateProbeAndEventually(t *testing.T) {
	cfg := DefaultSimConfig()
	cfg.Traces, cfg.Workers = 2000, 2
	cfg.Eventually = []string{`Closed=meta_status == "STATUS_CLOSED"`}
	rep, err := Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Trace == nil || rep.Trace.Kind != "eventually" {
		t.Fatalf("eventually: %v", rep.Status)
	}
	if err := Replay(rep.Trace); err != nil {
		t.Errorf("eventually: %v", err)
	}
	if len(rep.Properties) != 1 || rep.Properties[0].Status != Violated {
		t.Errorf("eventually: %+v", rep.Properties)
	}

	cfg.Eventually = nil
	cfg.Probe = []string{`Closed=meta_status == "STATUS_CLOSED"`, `Never=meta_version > 100`}
	rep, err = Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != explorer.Unknown || rep.Trace != nil || rep.Walks != cfg.Traces {
		t.Fatalf("probes: %v after %d walks; a probe is no violation and ends nothing", rep.Status, rep.Walks)
	}
	if len(rep.Properties) != 2 {
		t.Fatalf("probes: %+v", rep.Properties)
	}
	found, never := rep.Properties[0], rep.Properties[1]
	if found.Status != Found || found.Trace == nil || found.Trace.Kind != "probe" || rep.WitnessSeeds["Closed"] == 0 {
		t.Fatalf("Closed: %+v", found)
	}
	if err := Replay(found.Trace); err != nil {
		t.Errorf("Closed's witness: %v", err)
	}
	if never.Status != Unknown || never.Reason != simNotReached {
		t.Errorf("Never: %+v", never)
	}
}

// TestConstraint: a CEL state constraint restricts the search, for the
// invariants, the probes' witnesses and every worker count alike. The
// question is the one docs/guarantees.md asks: with two bookies of Qw 3's
// write set crashed (before any ensemble change) and one spare, can an
// entry be acknowledged? Without the constraint a witness crashes the
// spare after it joins; with it the spec's all-or-nothing replacement
// cannot, and BookKeeper's partial replacement can.
func TestConstraint(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Bookies, cfg.WriteQuorum, cfg.AckQuorum, cfg.Crashes = 4, 3, 2, 2
	cfg.Exclude = []string{"BookieRestarts", "ClientStartsRecovery", "ClientClosesLedgerSuccess", "ClientClosesLedgerFail"}
	cfg.Invariants = []string{"NoAckWithWriteSetCrashed"}
	cfg.Symmetry = spec.Symmetry{Bookies: true, Clients: true}
	cfg.Probe = []string{"Acked=clients.exists(id, c, c.lac >= 1)"}
	run := func(workers int) *Report {
		t.Helper()
		cfg.Workers = workers
		rep, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := run(1); rep.Status != explorer.Violation || crashedAfterChange(rep.Trace) == 0 {
		t.Fatalf("unconstrained: %s; want a witness that crashes a bookie after the ensemble change", rep.Status)
	}
	cfg.Constraint = []string{"CrashesFirst=meta_version <= 1 || size(b_down) == params.crashes"}
	var want int64
	for _, w := range []int{1, 3} {
		rep := run(w)
		if rep.Status != explorer.OK {
			t.Fatalf("constrained, all-or-nothing replacement: %s, want ok", rep.Status)
		}
		if want == 0 {
			want = rep.Distinct
		} else if rep.Distinct != want {
			t.Errorf("%d workers: %d orbits, 1 worker %d", w, rep.Distinct, want)
		}
		if len(rep.Properties) != 1 || rep.Properties[0].Status != Found {
			t.Fatalf("the probe (constraints are no properties of the report): %+v", rep.Properties)
		}
	}
	cfg.PartialReplacement = true
	rep := run(2)
	if rep.Status != explorer.Violation || len(rep.Trace.Steps) != 11 || crashedAfterChange(rep.Trace) != 0 {
		t.Fatalf("constrained, partial replacement: %s; want the 11-state witness with both crashes first", rep.Status)
	}
	if err := Replay(rep.Trace); err != nil {
		t.Fatalf("the witness does not replay: %v", err)
	}
}

// crashedAfterChange counts the crashes of tr after its first ensemble change.
func crashedAfterChange(tr *traces.Trace) int {
	n, changed := 0, false
	for _, st := range tr.Steps[1:] {
		switch st.Action.(spec.Action).Kind {
		case spec.ClientChangesEnsemble:
			changed = true
		case spec.BookieCrashes:
			if changed {
				n++
			}
		}
	}
	return n
}
