// Package liveness decides "eventually" properties on a reachable graph
// that may have cycles, under weak fairness, as TLC's liveness checking
// does for WF_vars constraints. It builds the whole reachable graph of an
// explorer.Model in memory, then looks for fair behaviours in which a
// property stays pending forever.
//
// # Semantics
//
// A behaviour is an infinite sequence of states starting in an initial
// state, each step a transition of the model or a stuttering step (the
// state unchanged). Properties are bits of a mask the caller computes on
// each loaded state (Options.Pending); property j is violated when some
// fair behaviour has bit j set from some point on forever. Typically the
// model is a product of the protocol with the properties' monitors, so
// that "pending" means "still owed on this path".
//
//   - Self-loop edges (a successor whose key is the state's own) are
//     stuttering steps and are ignored everywhere, as TLA+'s <<A>>_vars
//     ignores steps that change nothing.
//   - Weak fairness of the whole next-state relation is always assumed
//     (the system does not stop while some step is enabled): a behaviour
//     may stutter forever only in a state without a non-self successor.
//     Such a terminal state with bit j pending is a violation of j (its
//     counterexample is a finite path; the behaviour stutters there).
//   - Options.Fair adds weak-fairness constraints, each a set of action
//     kinds C: WF_vars of the disjunction of those actions over all their
//     parameters. C is enabled in a state when some non-self transition
//     of a kind in C leaves it. A behaviour is fair for C when it does
//     not keep C enabled forever without taking it infinitely often.
//   - A cycle violates j iff some strongly connected component of the
//     subgraph induced by the states with bit j pending has at least one
//     internal edge and is fair: for every constraint C, either some edge
//     inside the component has a kind in C, or some state of the component
//     has no non-self transition of a kind in C (C is disabled there).
//
// Checking maximal components only is exact for weak fairness. If a
// maximal component S passes, a path that goes round S through every one
// of its states and edges forever is fair: each C is taken infinitely
// often or disabled infinitely often. If S fails for some C, C is enabled
// in every state of S and no edge of S has a kind in C; any infinite path
// that stays in pending states eventually stays in one component, inside
// some maximal S, where C is always enabled and never taken: it is unfair.
// (Strong fairness would need the component to be split again and again,
// as in Emerson-Lei; weak fairness does not.)
//
// States outside the model's state constraints (explorer.Constrainer) are
// not expanded: they are not terminal and lie on no cycle, as in the
// explorer's constrained search.
//
// # Counterexamples
//
// A violation is reported as a lasso: the stem is a shortest path from an
// initial state to the state of the bad component with the least depth;
// the cycle goes from that state back to itself inside the component,
// taking, for each constraint, an edge of it or visiting a state where it
// is disabled. A terminal violation has no cycle. The path's states are
// the model's actual encodings, replayed from the initial state: under a
// symmetry reduction (keys that are canonical forms) the cycle is
// repeated until the actual state returns, not only its orbit.
//
// The search is single-threaded: breadth-first to build the graph, then
// an iterative Tarjan per property (no recursion: graphs of millions of
// states). Memory is about Stats.BytesPerState per state and
// Stats.BytesPerEdge per edge.
package liveness

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/state"
)

// Fairness is one weak-fairness constraint: WF_vars of the disjunction
// of the actions whose Kind is in Kinds, whatever their parameters.
type Fairness struct {
	Name  string // for people (an action's name, or a list of them)
	Kinds []uint8
}

// MaxFairness bounds the constraints of one check.
const MaxFairness = 256

// Options say what to check.
type Options struct {
	// Props is the number of properties: bits 0..Props-1 of Pending.
	Props int
	// Pending returns the properties pending in the state the expander
	// has loaded (called right after Load).
	Pending func(explorer.Expander) uint64
	// Fair are the weak-fairness constraints beyond that of the whole
	// next-state relation, which is always assumed.
	Fair []Fairness
	// MaxStates stops building the graph after this many distinct states
	// (0: no bound but the about 2^32 states the graph can hold). What was
	// expanded is still analysed: a violation found in it is real.
	MaxStates int64
}

// Witness says how a lasso's cycle satisfies one fairness constraint.
type Witness struct {
	// Step is an index into Lasso.Steps, within the cycle.
	Step int
	// Taken: Steps[Step] is reached by an action of the constraint.
	// Otherwise the constraint is disabled in Steps[Step]'s state.
	Taken bool
}

// Lasso is a counterexample: a path from an initial state and, for a
// cycle, the index of the state its last state returns to.
type Lasso struct {
	Property int             // the property's bit
	Steps    []explorer.Step // Steps[0] is initial; the model's actual encodings
	// Loop is the index into Steps of the state the last one equals (the
	// behaviour repeats Steps[Loop+1:] forever); -1 for a terminal
	// violation, where the behaviour stutters in the last state.
	Loop int
	// Fair says, constraint by constraint (as in Options.Fair), how the
	// cycle is fair; nil for a terminal violation.
	Fair []Witness
}

// Stats are the figures of one check.
type Stats struct {
	States    int64 // distinct states (graph nodes)
	Expanded  int64 // states expanded (all of them unless stopped early)
	Edges     int64 // non-self transitions kept (duplicates of an edge with different actions included)
	SelfLoops int64 // stuttering transitions dropped
	Generated int64 // successors computed, initial states included
	Depth     int   // BFS levels
	SCCs      int64 // components with an internal edge, over all properties' subgraphs
	Build     time.Duration
	Analysis  time.Duration
	Elapsed   time.Duration
	// PeakBytes estimates the memory of the graph and the analysis at
	// their largest; BytesPerState and BytesPerEdge split it (the state
	// part includes the fingerprint table, the encodings and the
	// analysis' arrays).
	PeakBytes     int64
	BytesPerState float64
	BytesPerEdge  float64
}

// Result is what a check ends with.
type Result struct {
	// Status: OK (every property holds on every fair behaviour),
	// Violation (some property has a counterexample), Unknown (the graph
	// was not built or analysed completely and no violation was found),
	// Error (the model failed: Failure).
	Status explorer.Status
	Reason string // for Unknown
	// Lassos holds, by property bit, its counterexample (nil: none found).
	Lassos []*Lasso
	// Failure is, for Error, how the model failed and the path to the
	// state it failed on.
	Failure *explorer.ViolationInfo
	Stats
}

// Check builds the reachable graph of m and decides every property.
func Check(ctx context.Context, m explorer.Model, opt Options) (*Result, error) {
	if opt.Props < 0 || opt.Props > 64 {
		return nil, fmt.Errorf("liveness: %d properties (at most 64)", opt.Props)
	}
	if len(opt.Fair) > MaxFairness {
		return nil, fmt.Errorf("liveness: %d fairness constraints (at most %d)", len(opt.Fair), MaxFairness)
	}
	if opt.Pending == nil {
		return nil, errors.New("liveness: no Pending function")
	}
	start := time.Now()
	g := newGraph(m, opt)
	res := &Result{}
	if err := g.build(ctx, res); err != nil {
		return nil, err
	}
	res.Build = time.Since(start)
	if res.Status == explorer.Error {
		res.Elapsed = time.Since(start)
		g.fillStats(res)
		return res, nil
	}
	a := time.Now()
	res.Lassos = make([]*Lasso, opt.Props)
	found := false
	for j := 0; j < opt.Props; j++ {
		if err := ctx.Err(); err != nil {
			res.Status, res.Reason = explorer.Unknown, "interrupted: "+err.Error()
			break
		}
		l, err := g.property(ctx, j, res)
		if err != nil {
			return nil, err
		}
		if l != nil {
			res.Lassos[j] = l
			found = true
		}
	}
	res.Analysis = time.Since(a)
	res.Elapsed = time.Since(start)
	g.fillStats(res)
	switch {
	case found:
		res.Status = explorer.Violation
	case res.Status == explorer.Unknown:
	default:
		res.Status = explorer.OK
	}
	return res, nil
}

const noNode = math.MaxUint32

// maxNodes leaves room above the node ids for bfs's stamps.
const maxNodes = noNode - 1<<20

// graph is the reachable graph. Node ids are assigned in breadth-first
// order of discovery, so a smaller id is never deeper, and nodes are
// expanded in id order: the out-edges of node v are
// to[edgeStart[v]:edgeStart[v+1]] (compressed sparse rows).
type graph struct {
	m   explorer.Model
	opt Options
	fp  table

	arena     [][]byte // encodings, each prefixed by its length as a uvarint, in chunks
	enc       []uint64 // node -> chunk<<32 | offset
	parent    []uint32 // BFS parent (noNode for an initial state)
	pending   []uint64
	outside   []uint64 // bit set: outside the state constraints
	edgeStart []uint64 // len expanded+1
	to        []uint32
	act       []explorer.Action
	fairMask  [256][4]uint64 // action kind -> constraints containing it
	allFair   [4]uint64

	expanded int // nodes expanded: 0..expanded-1

	// analysis scratch (reused across properties)
	index, low, comp []uint32
	stamp            uint32 // bfs's last stamp in index
	peak             int64
}

func newGraph(m explorer.Model, opt Options) *graph {
	g := &graph{m: m, opt: opt}
	for c, f := range opt.Fair {
		for _, k := range f.Kinds {
			g.fairMask[k][c/64] |= 1 << (c % 64)
		}
		g.allFair[c/64] |= 1 << (c % 64)
	}
	return g
}

const chunkSize = 1 << 22

func (g *graph) addEnc(enc []byte) uint64 {
	need := binary.MaxVarintLen64 + len(enc)
	if len(g.arena) == 0 || len(g.arena[len(g.arena)-1])+need > cap(g.arena[len(g.arena)-1]) {
		size := chunkSize
		if need > size {
			size = need
		}
		g.arena = append(g.arena, make([]byte, 0, size))
	}
	c := len(g.arena) - 1
	off := len(g.arena[c])
	b := binary.AppendUvarint(g.arena[c], uint64(len(enc)))
	g.arena[c] = append(b, enc...)
	return uint64(c)<<32 | uint64(off)
}

// encoding is node v's encoding (the first one found for its key).
func (g *graph) encoding(v uint32) []byte {
	ref := g.enc[v]
	b := g.arena[ref>>32][uint32(ref):]
	n, k := binary.Uvarint(b)
	return b[k : k+int(n)]
}

func keyFP(enc, key []byte) uint64 {
	if key == nil {
		key = enc
	}
	return state.Fingerprint(key)
}

// add returns the node of (enc, key), adding it with parent p if new.
func (g *graph) add(enc, key []byte, p uint32) (uint32, bool) {
	fp := keyFP(enc, key)
	if id, ok := g.fp.lookup(fp); ok {
		return id, false
	}
	id := uint32(len(g.enc))
	g.fp.insert(fp, id)
	g.enc = append(g.enc, g.addEnc(enc))
	g.parent = append(g.parent, p)
	g.pending = append(g.pending, 0)
	if int(id)/64 >= len(g.outside) {
		g.outside = append(g.outside, 0)
	}
	return id, true
}

func (g *graph) isOutside(v uint32) bool { return g.outside[v/64]&(1<<(v%64)) != 0 }

// call runs f, a call of the model, and returns how it failed if it
// panicked (as the explorer reports a model's failure).
func call(name string, f func()) (merr *explorer.ModelError) {
	defer func() {
		if r := recover(); r != nil {
			var pe *explorer.PropertyError
			if err, ok := r.(error); ok && errors.As(err, &pe) {
				msg := "<nil>"
				if pe.Err != nil {
					msg = pe.Err.Error()
				}
				merr = &explorer.ModelError{Call: name, Property: pe.Property, Message: msg}
				return
			}
			msg := fmt.Sprint(r)
			if err, ok := r.(error); ok {
				msg = err.Error()
			}
			merr = &explorer.ModelError{Call: name, Message: msg, Panic: true}
		}
	}()
	f()
	return nil
}

func (g *graph) build(ctx context.Context, res *Result) error {
	if merr := call(explorer.CallInit, func() {
		g.m.Init(func(enc, key []byte) {
			res.Generated++
			g.add(enc, key, noNode)
		})
	}); merr != nil {
		res.Status, res.Failure = explorer.Error, &explorer.ViolationInfo{Error: merr}
		return nil
	}
	limit := int64(maxNodes)
	if g.opt.MaxStates > 0 && g.opt.MaxStates < limit {
		limit = g.opt.MaxStates
	}
	exp := g.m.NewExpander()
	cons, _ := exp.(explorer.Constrainer)
	g.edgeStart = append(g.edgeStart, 0)
	levelEnd, depth := len(g.enc), 1
	var cur []byte
	for v := 0; v < len(g.enc); v++ {
		if v == levelEnd {
			depth++
			levelEnd = len(g.enc)
		}
		if v&1023 == 0 {
			if err := ctx.Err(); err != nil {
				res.Status, res.Reason = explorer.Unknown, "interrupted: "+err.Error()
				break
			}
		}
		if int64(len(g.enc)) > limit {
			res.Status, res.Reason = explorer.Unknown, fmt.Sprintf("the state bound (%d) was reached", limit)
			break
		}
		cur = append(cur[:0], g.encoding(uint32(v))...)
		var loadErr error
		in := true
		merr := call(explorer.CallLoad, func() {
			if loadErr = exp.Load(cur); loadErr == nil {
				g.pending[v] = g.opt.Pending(exp)
				if cons != nil {
					in = cons.InModel()
				}
			}
		})
		if loadErr != nil {
			return fmt.Errorf("liveness: loading state %d: %w", v, loadErr)
		}
		if merr == nil && in {
			self := uint32(v)
			merr = call(explorer.CallSuccessors, func() {
				exp.Successors(func(a explorer.Action, enc, key []byte) {
					res.Generated++
					w, _ := g.add(enc, key, uint32(v))
					if w == self {
						res.SelfLoops++
						return
					}
					g.to = append(g.to, w)
					g.act = append(g.act, a)
				})
			})
		}
		if merr != nil {
			res.Status = explorer.Error
			res.Failure = &explorer.ViolationInfo{Error: merr}
			steps, err := g.realize(g.stem(uint32(v)), nil)
			if err != nil {
				return err
			}
			res.Failure.Trace = steps
			break
		}
		if !in {
			g.outside[v/64] |= 1 << (v % 64)
		}
		g.edgeStart = append(g.edgeStart, uint64(len(g.to)))
		g.expanded = v + 1
	}
	res.Depth = depth
	if g.expanded == 0 {
		res.Depth = 0
	}
	g.account()
	return nil
}

// step is one move of a path: the node reached and the action taken
// (ignored for the first).
type step struct {
	node uint32
	act  explorer.Action
}

// stem is the BFS path from an initial state to v.
func (g *graph) stem(v uint32) []step {
	var path []step
	for u := v; u != noNode; u = g.parent[u] {
		path = append(path, step{node: u})
	}
	for i, k := 0, len(path)-1; i < k; i, k = i+1, k-1 {
		path[i], path[k] = path[k], path[i]
	}
	// The actions: the first edge of each parent to the next node.
	for i := 1; i < len(path); i++ {
		u, w := path[i-1].node, path[i].node
		for e := g.edgeStart[u]; e < g.edgeStart[u+1]; e++ {
			if g.to[e] == w {
				path[i].act = g.act[e]
				break
			}
		}
	}
	return path
}

// account records the memory in use, keeping the peak.
func (g *graph) account() {
	var b int64
	for _, c := range g.arena {
		b += int64(cap(c))
	}
	b += int64(cap(g.enc))*8 + int64(cap(g.parent))*4 + int64(cap(g.pending))*8 + int64(cap(g.outside))*8 + int64(cap(g.edgeStart))*8
	b += int64(cap(g.to))*4 + int64(cap(g.act))*5
	b += g.fp.bytes()
	b += int64(cap(g.index)+cap(g.low)+cap(g.comp)) * 4
	if b > g.peak {
		g.peak = b
	}
}

func (g *graph) fillStats(res *Result) {
	g.account()
	res.States = int64(len(g.enc))
	res.Expanded = int64(g.expanded)
	res.Edges = int64(len(g.to))
	res.PeakBytes = g.peak
	edgeBytes := int64(cap(g.to))*4 + int64(cap(g.act))*5
	if res.Edges > 0 {
		res.BytesPerEdge = float64(edgeBytes) / float64(res.Edges)
	}
	if res.States > 0 {
		res.BytesPerState = float64(g.peak-edgeBytes) / float64(res.States)
	}
}

// realize turns a path of nodes into the model's actual states, replayed
// from the initial state: at each step, the successor of the actual
// state whose key is the next node's, by the recorded action if one
// matches. Without symmetry these are the nodes' own encodings. loop, if
// not nil, is the index into path of the state the path's last node
// returns to: the cycle path[loop:] is then repeated until the actual
// state returns too (under symmetry the first round may end in another
// member of the orbit), and realize reports the index of the last round's
// start in the result.
func (g *graph) realize(path []step, loop *int) ([]explorer.Step, error) {
	if len(path) == 0 {
		return nil, nil
	}
	steps := []explorer.Step{{Initial: true, State: append([]byte(nil), g.encoding(path[0].node)...)}}
	exp := g.m.NewExpander()
	next := func(from []byte, s step) ([]byte, explorer.Action, error) {
		if err := exp.Load(from); err != nil {
			return nil, explorer.Action{}, err
		}
		var got []byte
		var act explorer.Action
		exact := false
		merr := call(explorer.CallSuccessors, func() {
			exp.Successors(func(a explorer.Action, enc, key []byte) {
				if exact {
					return
				}
				if id, ok := g.fp.lookup(keyFP(enc, key)); !ok || id != s.node {
					return
				}
				if got == nil || a == s.act {
					got, act, exact = append(got[:0], enc...), a, a == s.act
				}
			})
		})
		if merr != nil {
			return nil, act, merr
		}
		if got == nil {
			return nil, act, fmt.Errorf("liveness: no successor leads to state %d (model not deterministic?)", s.node)
		}
		return got, act, nil
	}
	for _, s := range path[1:] {
		enc, a, err := next(steps[len(steps)-1].State, s)
		if err != nil {
			return nil, err
		}
		steps = append(steps, explorer.Step{Action: a, State: enc})
	}
	if loop == nil {
		return steps, nil
	}
	cycle := path[*loop+1:]
	start := *loop
	const maxRounds = 100000
	for round := 0; string(steps[len(steps)-1].State) != string(steps[start].State); round++ {
		if round == maxRounds {
			return nil, fmt.Errorf("liveness: the cycle's actual state did not return after %d rounds", maxRounds)
		}
		for _, s := range cycle {
			enc, a, err := next(steps[len(steps)-1].State, s)
			if err != nil {
				return nil, err
			}
			steps = append(steps, explorer.Step{Action: a, State: enc})
		}
	}
	return steps, nil
}

// covers reports whether every bit of want is in got.
func covers(got, want [4]uint64) bool {
	for i := range got {
		if want[i]&^got[i] != 0 {
			return false
		}
	}
	return true
}
