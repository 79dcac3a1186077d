// Package check binds the BookKeeper model (spec), its properties
// (invariants) and the generic search (explorer) into one run, and turns the
// explorer's byte-level counterexample back into a protocol trace. The
// command line is a thin shell around Run.
package check

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/invariants"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/state"
	"github.com/bkcheck/bkcheck/traces"
)

// Report is the outcome of a run: the explorer's verdict and statistics
// and, on a violation, the decoded counterexample.
type Report struct {
	explorer.Result
	Trace *traces.Trace
	// Readable is the counterexample in readable form, whatever the model
	// (Trace, the current model's, is also written as ITF JSON).
	Readable *traces.Text
	// Config is the configuration the run used, defaults filled in (for a
	// resumed run, the model recorded in its directory and its budget).
	Config Config
	// StoreBytesPerState is the visited store's memory per state.
	StoreBytesPerState float64
}

// Model adapts a spec.Model and a list of invariants to explorer.Model.
type Model struct {
	spec *spec.Model
	invs []invariants.Invariant
	sym  spec.Symmetry
}

// NewModel fills in c's defaults, validates it (every problem at once)
// and binds the protocol model to its properties and symmetry.
func NewModel(c ModelConfig) (*Model, error) {
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Model != ModelCurrent {
		return nil, fmt.Errorf("check.NewModel binds the current model, not %q (Run and Simulate bind every model)", c.Model)
	}
	sm, err := spec.NewModel(c.Params)
	if err != nil {
		return nil, err
	}
	invs, err := invariants.Lookup(c.Invariants)
	if err != nil {
		return nil, err
	}
	return &Model{spec: sm, invs: invs, sym: c.Symmetry}, nil
}

// Spec returns the underlying protocol model.
func (m *Model) Spec() *spec.Model { return m.spec }

// Init implements explorer.Model.
func (m *Model) Init(emit func(enc, key []byte)) {
	s := m.spec.Init()
	var key []byte
	if m.sym != (spec.Symmetry{}) {
		key = m.spec.NewCanonicalizer(m.sym).Canonical(&s)
	}
	emit(m.spec.Encode(nil, &s), key)
}

// DescribeAction implements explorer.Model.
func (m *Model) DescribeAction(a explorer.Action) string { return FromLabel(a).String() }

// ToLabel packs a spec action into the explorer's compact label.
func ToLabel(a spec.Action) explorer.Action {
	return explorer.Action{Kind: uint8(a.Kind), Params: [4]int8{a.Client, a.Bookie, a.Entry, int8(a.Lost)}}
}

// FromLabel unpacks ToLabel.
func FromLabel(a explorer.Action) spec.Action {
	return spec.Action{Kind: spec.ActionKind(a.Kind), Client: a.Params[0], Bookie: a.Params[1], Entry: a.Params[2], Lost: spec.Bookies(uint8(a.Params[3]))}
}

// NewExpander implements explorer.Model.
func (m *Model) NewExpander() explorer.Expander {
	e := &expander{m: m, buf: make([]byte, 0, 256)}
	if m.sym != (spec.Symmetry{}) {
		e.canon = m.spec.NewCanonicalizer(m.sym)
	}
	return e
}

type expander struct {
	m        *Model
	cur      spec.State
	scratch  spec.State
	buf      []byte
	canon    *spec.Canonicalizer // nil without symmetry
	emitNext func(explorer.Action, []byte, []byte)
	emitFn   func(spec.Action, *spec.State) // bound once, so Successors does not allocate a closure
}

func (e *expander) Load(enc []byte) error { return e.m.spec.Decode(enc, &e.cur) }

func (e *expander) Check() string {
	p := e.m.spec.P
	for _, inv := range e.m.invs {
		if inv.Holds != nil && !inv.Holds(p, &e.cur) {
			return inv.Name
		}
	}
	return ""
}

func (e *expander) CheckTerminal() string {
	p := e.m.spec.P
	for _, inv := range e.m.invs {
		if inv.HoldsTerminal != nil && !inv.HoldsTerminal(p, &e.cur) {
			return inv.Name
		}
	}
	return ""
}

func (e *expander) Successors(emit func(explorer.Action, []byte, []byte)) {
	if e.emitFn == nil {
		e.emitFn = func(a spec.Action, s *spec.State) {
			e.buf = e.m.spec.Encode(e.buf[:0], s)
			var key []byte
			if e.canon != nil {
				key = e.canon.Canonical(s)
			}
			e.emitNext(ToLabel(a), e.buf, key)
		}
	}
	e.emitNext = emit
	e.m.spec.Next(&e.cur, &e.scratch, e.emitFn)
	e.emitNext = nil
}

// Run checks one configuration: it fills in defaults, validates (a
// schema.Problems error lists every problem), opens the visited store
// (and, for the Badger store, the run directory), searches, and decodes
// the counterexample. With Resume, the model and (unless cfg gives one)
// the memory budget are those recorded in Dir.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Resume && cfg.Dir != "" {
		rec, err := ReadRunDir(cfg.Dir)
		if err != nil {
			return nil, err
		}
		cfg.AdoptRun(cfg.Dir, rec)
	}
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := bind(cfg.ModelConfig)
	if err != nil {
		return nil, err
	}
	opt := explorer.Options{
		Workers:       cfg.Workers,
		MaxDepth:      cfg.MaxDepth,
		MaxStates:     cfg.MaxStates,
		CheckDeadlock: cfg.CheckDeadlock,
		Progress:      cfg.Progress,
		ProgressEvery: cfg.ProgressEvery,
	}
	var store state.Visited
	switch cfg.Store {
	case StoreMem:
		// The fingerprint table stays in memory; the parent links go to an
		// unlinked temporary file, as TLC keeps its trace file on disk.
		mv, err := state.NewMemVisitedLinksOnDisk(1<<16, "")
		if err != nil {
			return nil, err
		}
		store = mv
	case StoreBadger:
		if err := openRunDir(cfg); err != nil {
			return nil, err
		}
		bv, err := state.OpenBadgerVisited(state.BadgerOptions{Dir: filepath.Join(cfg.Dir, "visited"), MemoryBudget: storeBudget(cfg.Memory)})
		if err != nil {
			return nil, fmt.Errorf("opening the visited store: %w", err)
		}
		store = bv
		id := cfg.ModelConfig.ID()
		opt.Dir, opt.Resume, opt.ModelID = cfg.Dir, cfg.Resume, id
		opt.SameModel = func(stored string) bool { return SameModelID(stored, id) }
	}
	defer store.Close()
	opt.Visited = store
	res, err := explorer.Run(ctx, m, opt)
	if err != nil {
		return nil, err
	}
	rep := &Report{Result: res, Config: cfg, StoreBytesPerState: store.BytesPerState()}
	if res.Violation != nil {
		if rep.Trace, rep.Readable, err = m.counterexample(res.Violation); err != nil {
			return nil, err
		}
	}
	if err := store.Close(); err != nil {
		return rep, fmt.Errorf("closing the visited store: %w", err)
	}
	return rep, nil
}

// bound is a model bound to its properties: what the explorer searches,
// and how its counterexamples read.
type bound interface {
	explorer.Model
	// counterexample decodes v: readable, and as a Trace (ITF JSON, the
	// diagrams) when the model has that form.
	counterexample(v *explorer.ViolationInfo) (*traces.Trace, *traces.Text, error)
	// lossBias is LossBias for the model's labels.
	lossBias(rate float64) func(explorer.Action) float64
}

// bind binds the model c names (c is valid, defaults filled in).
func bind(c ModelConfig) (bound, error) {
	if c.Model == ModelV413 {
		return newModel413(c)
	}
	return NewModel(c)
}

func (m *Model) counterexample(v *explorer.ViolationInfo) (*traces.Trace, *traces.Text, error) {
	tr, err := m.DecodeTrace(v)
	if err != nil {
		return nil, nil, err
	}
	return tr, tr.Text(), nil
}

func (m *Model) lossBias(rate float64) func(explorer.Action) float64 { return LossBias(rate) }

// DecodeTrace turns the explorer's encoded counterexample into a protocol trace.
func (m *Model) DecodeTrace(v *explorer.ViolationInfo) (*traces.Trace, error) {
	tr := &traces.Trace{Params: m.spec.P, Invariant: v.Invariant, Deadlock: v.Deadlock, Terminal: v.Terminal}
	for _, inv := range m.invs {
		if inv.Name == v.Invariant {
			tr.Statement = inv.Statement
		}
	}
	if v.Deadlock {
		tr.Statement = "a reachable state has no successor"
	}
	for i, st := range v.Trace {
		var s spec.State
		if err := m.spec.Decode(st.State, &s); err != nil {
			return nil, fmt.Errorf("decoding trace step %d: %w", i+1, err)
		}
		tr.Steps = append(tr.Steps, traces.Step{Initial: st.Initial, Action: FromLabel(st.Action), State: s})
	}
	return tr, nil
}
