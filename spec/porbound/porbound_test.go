package porbound

import (
	"fmt"
	"sync"
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
)

// What the shipped invariants read (TypeOK, NoDivergenceBetweenClientAndMetaData,
// AllAckedEntriesAreReadable: invariants.Default), and what the last two
// alone read: a transition that changes none of it cannot change their
// truth.
func readsDefault(p spec.Params) func(*spec.State) string {
	return func(s *spec.State) string {
		out := fmt.Sprint(s.MetaStatus, s.MetaLastEntry, s.MetaVersion, s.MetaDeleted, s.MetaFragmentList(),
			s.BLAC[:p.Bookies], s.BEntries[:p.Bookies])
		for i := range p.Clients {
			c := &s.Clients[i]
			out += fmt.Sprint(c.Status, c.LAC, c.LAP, c.Fenced, c.RecoveryEns, c.RecoveryPhase, c.FragmentList())
		}
		return out
	}
}

func readsWithoutTypeOK(p spec.Params) func(*spec.State) string {
	return func(s *spec.State) string {
		out := fmt.Sprint(s.MetaStatus, s.MetaLastEntry, s.MetaDeleted, s.MetaFragmentList(), s.BEntries[:p.Bookies])
		for i := range p.Clients {
			out += fmt.Sprint(s.Clients[i].Status, s.Clients[i].LAC)
		}
		return out
	}
}

// readsEntriesReachWQ is what EntriesReachWriteQuorum reads.
func readsEntriesReachWQ(p spec.Params) func(*spec.State) string {
	return func(s *spec.State) string {
		out := fmt.Sprint(s.MetaStatus, s.MetaLastEntry, s.MetaDeleted, s.MetaFragmentList(), s.BEntries[:p.Bookies])
		for i := range p.Clients {
			out += fmt.Sprint(s.Clients[i].Status)
		}
		for _, m := range s.Msgs {
			if m.Count == 1 && m.Key.Type() == spec.AddEntryRequest {
				out += fmt.Sprint(m.Key)
			}
		}
		return out
	}
}

func params(bookies, w, a int, reliable bool) spec.Params {
	p := spec.DefaultParams()
	p.Bookies, p.WriteQuorum, p.AckQuorum, p.ReliableNetwork = bookies, w, a, reliable
	return p
}

// graphs caches the explored graphs: several tests walk the same models
// (read-only), the longest of them in parallel.
var graphs sync.Map // spec.Params.String() -> *explored

func explore(t *testing.T, p spec.Params) *Graph {
	t.Helper()
	e, _ := graphs.LoadOrStore(p.String(), &explored{})
	x := e.(*explored)
	x.once.Do(func() {
		if x.g, x.err = Explore(p, 5_000_000); x.err == nil && !p.AutoRecovery && !Acyclic(x.g) {
			x.err = fmt.Errorf("%+v: the graph has a cycle", p) // Progress says it cannot
		}
	})
	if x.err != nil {
		t.Fatal(x.err)
	}
	return x.g
}

// explored is a model's graph, explored once for every test that walks
// it, however many ask at once.
type explored struct {
	once sync.Once
	g    *Graph
	err  error
}

// memoRead is read, remembering its value for each state of g it meets
// (by the state's encoding, which determines the state): SetVisible
// reads a state once for itself and once for each edge into it.
func memoRead(g *Graph, read func(*spec.State) string) func(*spec.State) string {
	values := map[string]string{}
	var buf []byte
	return func(s *spec.State) string {
		buf = g.Model.Encode(buf[:0], s)
		if v, ok := values[string(buf)]; ok {
			return v
		}
		v := read(s)
		values[string(buf)] = v
		return v
	}
}

// measured caches Measure's relations by graph: several tests measure
// the same graphs.
var measured sync.Map // *Graph -> *Relations

// measure is Measure(g), computed once per graph. Each caller gets its
// own Relations without visibility (SetVisible replaces Visible), sharing
// Dep and Enabler, which nothing changes.
func measure(g *Graph) *Relations {
	r, ok := measured.Load(g)
	if !ok {
		r, _ = measured.LoadOrStore(g, Measure(g))
	}
	m := r.(*Relations)
	return &Relations{Dep: m.Dep, Enabler: m.Enabler}
}

// TestTerminalStatesKept: a reduced search keeps every terminal state of
// the full graph, with and without a visibility condition, and keeps
// fewer states than the full graph.
func TestTerminalStatesKept(t *testing.T) {
	for _, p := range []spec.Params{params(1, 1, 1, false), params(2, 1, 1, false), params(3, 3, 2, true)} {
		g := explore(t, p)
		r := measure(g)
		for _, vis := range []bool{false, true} {
			r.Visible = nil
			if vis {
				r.SetVisible(g, memoRead(g, readsDefault(p)))
			}
			red := Reduce(g, r)
			for s := range g.States {
				if g.Terminal(int32(s)) && !red.Reached[s] {
					t.Errorf("%d/%d/%d visibility %v: terminal state %d not reached", p.Bookies, p.WriteQuorum, p.AckQuorum, vis, s)
				}
			}
			if red.States >= len(g.States) {
				t.Errorf("%d/%d/%d visibility %v: nothing reduced (%d states)", p.Bookies, p.WriteQuorum, p.AckQuorum, vis, red.States)
			}
			t.Logf("%d/%d/%d reliable=%v visibility %v: %d of %d states", p.Bookies, p.WriteQuorum, p.AckQuorum, p.ReliableNetwork, vis, red.States, len(g.States))
		}
	}
}

// TestViolationKept: where the full graph violates an invariant, the
// search reduced with that invariant's visibility reaches a violating
// state too. 2/2/1 violates EntriesReachWriteQuorum (testdata/regress:
// reference-below-qw), on a reliable network with a read-only bookie
// too (20,881 states, the default tier's; the lossy network's 285,773
// are the long tier's).
func TestViolationKept(t *testing.T) {
	readOnly := params(2, 2, 1, true)
	readOnly.ReadOnly = 1
	models := []spec.Params{readOnly}
	if testtier.IsLong() {
		models = append(models, params(2, 2, 1, false))
	}
	for _, p := range models {
		violationKept(t, p)
	}
}

func violationKept(t *testing.T, p spec.Params) {
	inv, err := invariants.Lookup([]string{"EntriesReachWriteQuorum"})
	if err != nil {
		t.Fatal(err)
	}
	g := explore(t, p)
	bad := make([]bool, len(g.States))
	var s spec.State
	full := 0
	for i, enc := range g.States {
		if err := g.Model.Decode(enc, &s); err != nil {
			t.Fatal(err)
		}
		if !inv[0].Holds(&p, &s) {
			bad[i] = true
			full++
		}
	}
	if full == 0 {
		t.Fatalf("%s: the full graph has no violation: the test checks nothing", p)
	}
	r := measure(g)
	r.SetVisible(g, memoRead(g, readsEntriesReachWQ(p)))
	red := Reduce(g, r)
	kept := keptOf(red, bad)
	if kept == 0 {
		t.Errorf("%s: %d violating states in the full graph, none in the reduced one (%d states)", p, full, red.States)
	}
	t.Logf("%s: %d of %d states kept, %d of %d violating states", p, red.States, len(g.States), kept, full)

	// The declared reduction (--por), with what the invariant declares
	// it reads.
	dred := reduceDeclared(t, g, inv[0].Reads)
	kept = keptOf(dred, bad)
	if kept == 0 {
		t.Errorf("%s: declared reduction: %d violating states in the full graph, none in the reduced one (%d states)", p, full, dred.States)
	}
	t.Logf("%s: declared reduction: %d of %d states kept, %d of %d violating states", p, dred.States, len(g.States), kept, full)
}

// keptOf is how many of the states marked in bad the reduction reached.
func keptOf(red *Reduced, bad []bool) (n int) {
	for i, ok := range red.Reached {
		if ok && bad[i] {
			n++
		}
	}
	return n
}

// TestBounds prints the estimate for docs/reduction.md (long tier): the
// states a stubborn-set search with the measured relations keeps, for
// terminal-state properties (no visibility), for the shipped invariants
// without TypeOK, and for all three; then what --por keeps, for terminal
// states and for the shipped invariants.
func TestBounds(t *testing.T) {
	t.Parallel() // the graphs are shared, explored once, read-only
	if !testtier.IsLong() {
		t.Skip("long tier: " + testtier.Env + "=1")
	}
	for _, p := range []spec.Params{
		params(1, 1, 1, false), params(2, 1, 1, false), params(2, 2, 1, false), params(2, 2, 2, false),
		params(3, 3, 2, true), params(3, 3, 3, true),
	} {
		g := explore(t, p)
		r := measure(g)
		line := fmt.Sprintf("%d/%d/%d reliable=%v: %d states, %d transitions;", p.Bookies, p.WriteQuorum, p.AckQuorum, p.ReliableNetwork, len(g.States), len(g.Groups))
		for _, reads := range []func(spec.Params) func(*spec.State) string{nil, readsWithoutTypeOK, readsDefault} {
			r.Visible = nil
			if reads != nil {
				r.SetVisible(g, memoRead(g, reads(p)))
			}
			red := Reduce(g, r)
			line += fmt.Sprintf(" %d (%.2f×, %d fully expanded)", red.States, float64(len(g.States))/float64(red.States), red.FullyExpanded)
		}
		// The declared reduction (--por): terminal states only, then the
		// shipped invariants (TypeOK is field-wise: it adds nothing).
		line += "; --por:"
		inv, err := invariants.Lookup(invariants.Default)
		if err != nil {
			t.Fatal(err)
		}
		var reads spec.PropertyReads
		for _, i := range inv {
			reads = reads.Union(*i.Reads)
		}
		for _, rd := range []*spec.PropertyReads{nil, &reads} {
			red := reduceDeclared(t, g, rd)
			line += fmt.Sprintf(" %d (%.2f×)", red.States, float64(len(g.States))/float64(red.States))
		}
		t.Log(line)
	}
}
