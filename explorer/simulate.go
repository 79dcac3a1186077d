package explorer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/bkcheck/bkcheck/state"
)

// SimOptions shape a random simulation.
type SimOptions struct {
	Seed     uint64        // walk i uses seed Seed+i, so any walk can be rerun alone
	Depth    int           // states per walk at most (initial state included); must be > 0
	Walks    int64         // stop after this many walks; 0 = until Duration
	Duration time.Duration // stop after this long; 0 = until Walks
	Workers  int           // <= 0: GOMAXPROCS
	// CheckDeadlock reports a walk that reaches a state without successor.
	CheckDeadlock bool
	// Weight, if set, biases each step: a successor is picked with
	// probability proportional to Weight of its action (positive and
	// finite). nil picks uniformly, as TLC's simulation does. Uniform walks
	// are dominated by whichever action has the most successors (a send to
	// k bookies has 2^k loss patterns), so they end early; a model can
	// weight such outcomes down to reach deeper states.
	Weight func(Action) float64
	// Goals is how many goals the model's expanders answer
	// (GoalExpander): each walk asks, on every state it visits, which
	// hold there, and the first walk to reach each one is its witness
	// (SimResult.Goals). 0: the model has none.
	Goals int
	// StopAtGoals ends the simulation after the batch of walks in which
	// the last goal was first reached (a run that asks only questions).
	StopAtGoals bool
}

// DefaultSimDepth is the walk length when SimOptions.Depth is 0.
const DefaultSimDepth = 100

// EnsureDefaults fills in what o leaves unsaid: one worker per core, walks
// of DefaultSimDepth states.
func (o *SimOptions) EnsureDefaults() {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Depth == 0 {
		o.Depth = DefaultSimDepth
	}
}

// Validate reports every invalid option at once.
func (o SimOptions) Validate() error {
	var problems []error
	if o.Depth < 0 {
		problems = append(problems, fmt.Errorf("Depth must be >= 0, got %d", o.Depth))
	}
	if o.Walks < 0 || o.Duration < 0 {
		problems = append(problems, errors.New("Walks and Duration must not be negative"))
	}
	if o.Walks == 0 && o.Duration == 0 {
		problems = append(problems, errors.New("give Walks or Duration (or both)"))
	}
	if o.Goals < 0 {
		problems = append(problems, fmt.Errorf("Goals must not be negative, got %d", o.Goals))
	}
	if len(problems) > 0 {
		return fmt.Errorf("explorer: invalid simulation options: %w", errors.Join(problems...))
	}
	return nil
}

// SimResult summarises a simulation. A violation is always a real
// execution of the model; its absence proves nothing (Status is then
// Unknown, never OK). A walk on which the model fails (it panics) ends
// the simulation with Status Error, Violation holding the walk up to the
// state it failed on and Violation.Error how (modelerror.go).
type SimResult struct {
	Status Status
	Walks  int64 // walks completed
	States int64 // states the completed walks visited, repeats included
	// Distinct is how many distinct states (fingerprints) the completed
	// walks visited: never more than States. Walks of the last batch
	// after the violating one, and those of an interrupted batch, are not
	// completed: they count in neither.
	Distinct   int64
	MeanLength float64 // mean states per walk
	Elapsed    time.Duration
	Violation  *ViolationInfo
	WalkSeed   uint64 // the seed of the violating (or failing) walk: rerun it with Seed=WalkSeed, Walks=1
	// Goals has, for each of SimOptions.Goals, the first completed walk
	// (in walk order, whatever the number of workers) that reached it, up
	// to the first state where it holds; nil for a goal no walk reached.
	Goals []*GoalWitness
}

// GoalWitness is a walk that reached a goal: its seed (rerun it alone
// with Seed=WalkSeed, Walks=1) and its steps up to the first state where
// the goal holds. It is a witness, not necessarily the shortest.
type GoalWitness struct {
	WalkSeed uint64
	Trace    []Step
}

// batchWalks is how many walks run between checks for a violation: walks
// are committed batch by batch, and the violation (or model failure) of
// the lowest-numbered walk in the first batch that has one is reported, so
// the result does not depend on the number of workers.
const batchWalks = 256

// Simulate runs random walks from the initial states. Each walk picks a
// random successor at each step (uniformly, or as opt.Weight says), checks
// the invariants on every state it visits, and stops at Depth states or at
// a state without successor (where terminal-state properties are checked).
func Simulate(ctx context.Context, m Model, opt SimOptions) (SimResult, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return SimResult{}, err
	}
	start := time.Now()
	var inits [][]byte
	merr := catch(CallInit, func() { m.Init(func(enc, _ []byte) { inits = append(inits, bytes.Clone(enc)) }) })
	exps := make([]Expander, opt.Workers)
	for i := range exps {
		if merr == nil {
			merr = catch(CallNewExpander, func() { exps[i] = m.NewExpander() })
		}
	}
	if merr != nil {
		return SimResult{Status: Error, Violation: &ViolationInfo{Error: merr}, Elapsed: time.Since(start)}, nil
	}
	if len(inits) == 0 {
		return SimResult{Status: Unknown, Elapsed: time.Since(start)}, nil // no walk can start
	}
	seen := newFPSet()
	res := SimResult{Goals: make([]*GoalWitness, opt.Goals)}
	reached := make([]bool, opt.Goals) // goals with a witness before the batch
	left := opt.Goals
	outs := make([]walkOut, batchWalks)
	for batch := int64(0); ; batch++ {
		if ctx.Err() != nil || (opt.Duration > 0 && time.Since(start) >= opt.Duration) || (opt.Walks > 0 && res.Walks >= opt.Walks) {
			break
		}
		n := int64(batchWalks)
		if opt.Walks > 0 {
			n = min(n, opt.Walks-res.Walks)
		}
		first := res.Walks
		var next atomic.Int64
		g, gctx := errgroup.WithContext(ctx)
		for w := 0; w < opt.Workers; w++ {
			exp := exps[w]
			g.Go(func() error {
				for {
					i := next.Add(1) - 1
					if i >= n || gctx.Err() != nil {
						return nil
					}
					if err := walk(exp, inits, opt, opt.Seed+uint64(first+i), reached, &outs[i]); err != nil {
						return err
					}
				}
			})
		}
		if err := g.Wait(); err != nil {
			return res, err
		}
		if ctx.Err() != nil {
			break // an interrupted batch is not counted
		}
		// The walks of the batch count in order up to the first violating
		// one; those after it ran but are not part of the result.
		done := n
		for i := int64(0); i < n; i++ {
			out := &outs[i]
			res.Walks++
			res.States += int64(len(out.path))
			for gi, at := range out.goalAt {
				if at >= 0 && res.Goals[gi] == nil {
					res.Goals[gi] = &GoalWitness{WalkSeed: opt.Seed + uint64(first+i), Trace: out.path[:at+1]}
					left--
				}
			}
			if v := out.violation; v != nil {
				res.Status, res.Violation, res.WalkSeed = Violation, v, opt.Seed+uint64(first+i)
				if v.Error != nil {
					res.Status = Error
				}
				done = i + 1
				break
			}
		}
		seen.addWalks(outs[:done], opt.Workers)
		for gi := range reached {
			reached[gi] = res.Goals[gi] != nil
		}
		if res.Violation != nil || (opt.StopAtGoals && opt.Goals > 0 && left == 0) {
			break
		}
	}
	if res.Violation == nil {
		res.Status = Unknown
	}
	res.Distinct = seen.len()
	if res.Walks > 0 {
		res.MeanLength = float64(res.States) / float64(res.Walks)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// walkOut is what one walk of a batch leaves for the batch to commit.
type walkOut struct {
	path      []Step
	violation *ViolationInfo
	fps       []uint64 // the fingerprints of the states it visited (its buffer is reused)
	// goalAt is, by goal, the index in path of the first state where it
	// holds, -1 if none; nil when the walk reached no goal that had no
	// witness before the batch.
	goalAt []int
}

// walk runs one random walk into out: its steps, any violation, or the
// model's failure (a panic, recovered: a ViolationInfo with Error, the
// walk up to the state it failed on), the fingerprints of its states and
// where it first reached each goal not reached before (reached).
func walk(exp Expander, inits [][]byte, opt SimOptions, seed uint64, reached []bool, out *walkOut) (err error) {
	rng := rand.New(rand.NewPCG(seed, 0x9E3779B97F4A7C15))
	type succ struct {
		a   Action
		enc []byte
	}
	*out = walkOut{fps: out.fps[:0]}
	var path []Step
	call := ""
	defer func() {
		out.path = path
		if r := recover(); r != nil {
			out.violation, err = &ViolationInfo{Trace: path, Error: modelError(call, r)}, nil
		}
	}()
	var held []bool
	goals, _ := exp.(GoalExpander)
	if opt.Goals > 0 {
		if goals == nil {
			return fmt.Errorf("explorer: the model's expander answers no goals (GoalExpander), and %d were asked", opt.Goals)
		}
		held = make([]bool, opt.Goals)
	}
	cur := inits[rng.IntN(len(inits))]
	path = append(path, Step{Initial: true, State: cur})
	var succs []succ
	var arena []byte
	var cum []float64 // cumulative weights, when opt.Weight is set
	for {
		call = CallLoad
		if err := exp.Load(cur); err != nil {
			return err
		}
		out.fps = append(out.fps, state.Fingerprint(cur))
		call = CallCheck
		if bad := exp.Check(); bad != "" {
			out.violation = &ViolationInfo{Invariant: bad, Trace: path}
			return nil
		}
		if goals != nil {
			clear(held)
			goals.Goals(held)
			for gi, h := range held {
				if !h || reached[gi] || (out.goalAt != nil && out.goalAt[gi] >= 0) {
					continue
				}
				if out.goalAt == nil {
					out.goalAt = make([]int, opt.Goals)
					for j := range out.goalAt {
						out.goalAt[j] = -1
					}
				}
				out.goalAt[gi] = len(path) - 1
			}
		}
		if c, ok := exp.(Constrainer); len(path) >= opt.Depth || ok && !c.InModel() {
			return nil
		}
		succs, arena = succs[:0], arena[:0]
		call = CallSuccessors
		exp.Successors(func(a Action, enc, _ []byte) {
			off := len(arena)
			arena = append(arena, enc...)
			succs = append(succs, succ{a, arena[off:len(arena):len(arena)]})
		})
		if len(succs) == 0 {
			call = CallCheckTerminal
			if bad := exp.CheckTerminal(); bad != "" {
				out.violation = &ViolationInfo{Invariant: bad, Terminal: true, Trace: path}
				return nil
			}
			if opt.CheckDeadlock {
				out.violation = &ViolationInfo{Invariant: "Deadlock", Deadlock: true, Trace: path}
			}
			return nil
		}
		var pick succ
		if opt.Weight == nil {
			pick = succs[rng.IntN(len(succs))]
		} else {
			call = CallWeight
			cum = cum[:0]
			total := 0.0
			for _, sc := range succs {
				total += opt.Weight(sc.a)
				cum = append(cum, total)
			}
			r := rng.Float64() * total
			i, _ := slices.BinarySearchFunc(cum, r, func(c, r float64) int {
				if c > r {
					return 1
				}
				return -1
			})
			pick = succs[min(i, len(succs)-1)]
		}
		cur = bytes.Clone(pick.enc)
		path = append(path, Step{Action: pick.a, State: cur})
	}
}

// fpSet is a concurrent set of fingerprints, sharded to keep lock
// contention low, for counting the distinct states simulations visit.
type fpSet struct {
	shards [64]struct {
		mu sync.Mutex
		m  map[uint64]struct{}
	}
}

func newFPSet() *fpSet {
	s := &fpSet{}
	for i := range s.shards {
		s.shards[i].m = map[uint64]struct{}{}
	}
	return s
}

func (s *fpSet) add(fp uint64) {
	sh := &s.shards[fp%64]
	sh.mu.Lock()
	sh.m[fp] = struct{}{}
	sh.mu.Unlock()
}

// addWalks adds the fingerprints of the walks outs, with workers
// goroutines.
func (s *fpSet) addWalks(outs []walkOut, workers int) {
	var wg sync.WaitGroup
	for w := range min(workers, len(outs)) {
		wg.Go(func() {
			for i := w; i < len(outs); i += workers {
				for _, fp := range outs[i].fps {
					s.add(fp)
				}
			}
		})
	}
	wg.Wait()
}

func (s *fpSet) len() int64 {
	var n int64
	for i := range s.shards {
		n += int64(len(s.shards[i].m))
	}
	return n
}
