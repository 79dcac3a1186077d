// Package check binds the BookKeeper model (spec), its properties
// (invariants) and the generic search (explorer) into one run, and turns the
// explorer's byte-level counterexample back into a protocol trace. The
// command line is a thin shell around Run.
package check

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
	"github.com/bkcheck/bkcheck/spec/stubborn"
	"github.com/bkcheck/bkcheck/traces"
	"github.com/bkcheck/bkcheck/vocab"
)

// Report is the outcome of a run: the explorer's verdict and statistics
// and, on a violation, the decoded counterexample.
type Report struct {
	explorer.Result
	Trace *traces.Trace
	// Readable is the counterexample in readable form (Trace.Text).
	Readable *traces.Text
	// Config is the configuration the run used, defaults filled in (for a
	// resumed run, the model recorded in its directory and its budget).
	Config Config
	// StoreBytesPerState is the visited store's memory per state.
	StoreBytesPerState float64
	// Coverage is how often each action fired (Model.Coverage); for a
	// complete search it does not depend on the number of workers.
	Coverage map[string]int64
	// Uncovered are the actions the configuration's settings add that
	// never fired: the run exercised less than its options claim (nil
	// under a --constraint, which may remove them).
	Uncovered []string
	// Idle are all the actions the configuration can fire that never did
	// (Uncovered among them).
	Idle []string
	// Unable are the actions the configuration's options add that its
	// parameters leave no room for, each with what it needs.
	Unable []string
	// Properties are the answers for the CEL properties, in order.
	Properties []PropertyResult
	// Reduction is what --por did; nil without it.
	Reduction *Reduction
}

// Model adapts a spec.Model and a list of invariants to explorer.Model.
type Model struct {
	spec *spec.Model
	invs []invariants.Invariant
	sym  spec.Symmetry
	cel  *celProps         // CEL properties (properties.go); nil if none
	red  *stubborn.Reducer // --por (por.go); nil without it

	cov *coverageLog
}

// coverageLog keeps a search's expanders, whose counts make Coverage. A
// copy of a Model for an extra search (a probe's witness, the eventually
// pass) gets its own, so only the main search is counted.
type coverageLog struct {
	mu        sync.Mutex
	expanders []*expander
	scratches []*stubborn.Scratch // --por's, for Reduction
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
	invs, err := invariants.Lookup(c.builtinNames())
	if err != nil {
		return nil, err
	}
	set, err := c.CELProperties()
	if err != nil {
		return nil, err
	}
	m := &Model{spec: sm, invs: invs, sym: c.Symmetry, cel: newCELProps(set), cov: &coverageLog{}}
	if c.POR {
		if m.red, err = stubborn.New(sm, c.porReads(m)); err != nil {
			return nil, err
		}
	}
	return m, nil
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
	if m.canonicalStates() {
		emit(key, key)
		return
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
	e := &expander{m: m, buf: make([]byte, 0, 256), cel: m.cel.newChecker()}
	if m.sym != (spec.Symmetry{}) {
		e.canon = m.spec.NewCanonicalizer(m.sym)
	}
	m.cov.mu.Lock()
	defer m.cov.mu.Unlock()
	m.cov.expanders = append(m.cov.expanders, e)
	switch {
	case m.red != nil:
		pe := &porExpander{expander: e, sc: m.red.NewScratch()}
		m.cov.scratches = append(m.cov.scratches, pe.sc)
		if e.canon != nil {
			return &symPORExpander{porExpander: pe}
		}
		return pe
	case e.canon != nil:
		return symExpander{e}
	}
	return plainExpander{e}
}

// Uncovered lists the actions the model's options add (spec's
// RequiredActions) that never fired in coverage.
func (m *Model) Uncovered(coverage map[string]int64) []string {
	return neverFired(m.spec.RequiredActions(), coverage)
}

// Idle lists the actions the model's settings can fire (spec's
// Fireable) that never fired in coverage.
func (m *Model) Idle(coverage map[string]int64) []string {
	return neverFired(m.spec.Fireable(), coverage)
}

// Unable lists the actions the options add that the parameters leave no
// room for (spec's Unable).
func (m *Model) Unable() []string { return m.spec.Unable() }

func neverFired(ks []spec.ActionKind, coverage map[string]int64) []string {
	var out []string
	for _, k := range ks {
		if coverage[k.String()] == 0 {
			out = append(out, k.String())
		}
	}
	return out
}

// Coverage is how many transitions of each action the expanders generated
// (duplicates included, as TLC's -coverage counts), by action name; every
// action of the model appears, with 0 if it never fired.
func (m *Model) Coverage() map[string]int64 {
	m.cov.mu.Lock()
	defer m.cov.mu.Unlock()
	out := map[string]int64{}
	for k := spec.ActionKind(1); k < spec.NumActionKinds; k++ {
		out[k.String()] = 0
	}
	for _, e := range m.cov.expanders {
		for k, n := range e.fired {
			if n > 0 {
				out[spec.ActionKind(k).String()] += n
			}
		}
	}
	return out
}

type expander struct {
	m        *Model
	cur      spec.State
	scratch  spec.State
	buf      []byte
	canon    *spec.Canonicalizer // nil without symmetry
	cel      *celChecker         // nil without CEL properties
	emitNext func(explorer.Action, []byte, []byte)
	emitFn   func(spec.Action, *spec.State) // bound once, so Successors does not allocate a closure
	// SuccessorKeys' (symExpander), bound once likewise.
	emitKeyNext func(explorer.Action, []byte, func([]byte) []byte)
	emitKeyFn   func(spec.Action, *spec.State)
	encodeSucc  func([]byte) []byte
	// SuccessorsAppend's (plainExpander), bound once likewise.
	emitAtNext func(explorer.Action, int)
	emitAtFn   func(spec.Action, *spec.State)
	arena      *[]byte
	succ       *spec.State                // the successor being emitted
	fired      [spec.NumActionKinds]int64 // transitions generated, by action (coverage)
}

func (e *expander) Load(enc []byte) error { return e.m.spec.Decode(enc, &e.cur) }

func (e *expander) Check() string {
	p := &e.m.spec.P
	for _, inv := range e.m.invs {
		if inv.Holds != nil && !inv.Holds(p, &e.cur) {
			return inv.Name
		}
	}
	if e.cel != nil {
		return e.cel.check(&e.cur)
	}
	return ""
}

// InModel implements explorer.Constrainer: the CEL state constraints on
// the state Check loaded.
func (e *expander) InModel() bool { return e.cel == nil || e.cel.inModel() }

func (e *expander) CheckTerminal() string {
	p := &e.m.spec.P
	for _, inv := range e.m.invs {
		if inv.HoldsTerminal != nil && !inv.HoldsTerminal(p, &e.cur) {
			return inv.Name
		}
	}
	if e.cel != nil {
		return e.cel.checkTerminal(&e.cur)
	}
	return ""
}

func (e *expander) Successors(emit func(explorer.Action, []byte, []byte)) {
	if e.emitFn == nil {
		e.emitFn = func(a spec.Action, s *spec.State) {
			e.fired[a.Kind]++
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

// plainExpander is the expander of a search without symmetry or a
// reduction: it encodes each successor straight into the search's arena
// (explorer.AppendingExpander). It is a type of its own so that the
// expanders that embed *expander (the reduction's) do not inherit it.
type plainExpander struct{ *expander }

func (e plainExpander) SuccessorsAppend(buf *[]byte, emit func(explorer.Action, int)) {
	if e.emitAtFn == nil {
		e.emitAtFn = func(a spec.Action, s *spec.State) {
			e.fired[a.Kind]++
			off := len(*e.arena)
			*e.arena = e.m.spec.Encode(*e.arena, s)
			e.emitAtNext(ToLabel(a), off)
		}
	}
	e.arena, e.emitAtNext = buf, emit
	e.m.spec.Next(&e.cur, &e.scratch, e.emitAtFn)
	e.arena, e.emitAtNext = nil, nil
}

// symExpander is the expander of a search with symmetry: it emits each
// successor's canonical form and encodes the successor itself only when
// the search asks (explorer.KeyedExpander).
type symExpander struct{ *expander }

func (e symExpander) SuccessorKeys(emit func(explorer.Action, []byte, func([]byte) []byte)) {
	if e.emitKeyFn == nil {
		e.emitKeyFn = func(a spec.Action, s *spec.State) {
			e.fired[a.Kind]++
			e.succ = s
			e.emitKeyNext(ToLabel(a), e.canon.Canonical(s), e.encodeSucc)
		}
		e.encodeSucc = func(dst []byte) []byte { return e.m.spec.Encode(dst, e.succ) }
	}
	e.emitKeyNext = emit
	e.m.spec.Next(&e.cur, &e.scratch, e.emitKeyFn)
	e.emitKeyNext, e.succ = nil, nil
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
		Waiting:       cfg.Waiting,
		ProgressEvery: cfg.ProgressEvery,
	}
	switch cfg.Store {
	case StoreMem:
		// The fingerprint table stays in memory; the parent links go to an
		// unlinked temporary file, as TLC keeps its trace file on disk.
		opt.TempDir = os.TempDir()
		opt.Fingerprint = cfg.Fingerprint
	case StoreBadger:
		shard, shards, _ := cfg.Sharding.Resolve() // validated
		if shards > 1 {
			if err := openShardedRunDir(cfg); err != nil {
				return nil, err
			}
		} else if err := openRunDir(cfg); err != nil {
			return nil, err
		}
		id := cfg.ModelConfig.ID()
		opt.Dir, opt.Resume, opt.ModelID = cfg.Dir, cfg.Resume, id
		opt.SameModel = func(stored string) bool { return SameModelID(stored, id) }
		opt.Memory, opt.Fingerprint = storeBudget(cfg.Memory), cfg.Fingerprint
		opt.Shard, opt.Shards, opt.ShardTimeout = shard, shards, cfg.ShardTimeout
	}
	res, err := explorer.Run(ctx, m, opt)
	if err != nil {
		return nil, err
	}
	rep := &Report{Result: res, Config: cfg, StoreBytesPerState: res.Store.TableBytesPerState}
	rep.Coverage = m.Coverage()
	if cm, ok := m.(*Model); ok {
		rep.Reduction = cm.reduction()
	}
	rep.Idle, rep.Unable = m.Idle(rep.Coverage), m.Unable()
	if len(cfg.Constraint) == 0 {
		// A --constraint removes behaviours the settings have, and with
		// them actions they could fire: only an unconstrained run is
		// required to fire them.
		rep.Uncovered = m.Uncovered(rep.Coverage)
	}
	if res.Violation != nil {
		if rep.Trace, err = m.Trace(res.Violation); err != nil {
			return nil, err
		}
		rep.Readable = rep.Trace.Text()
	}
	if err := m.AnswerCEL(ctx, cfg, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// openShardedRunDir prepares the directory a sharded search shares: the
// first shard records the model (params.json), the others, and restarted
// shards, find it there and must agree.
func openShardedRunDir(cfg Config) error {
	if HoldsSingleRun(cfg.Dir) {
		return fmt.Errorf("%w: %s holds the run of one process, not a sharded search; continue it with --resume %s (without --shard), or choose another --dir", explorer.ErrRunExists, cfg.Dir, cfg.Dir)
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, runParamsFile)); err != nil {
		cfg.Resume = false
		if err := openRunDir(cfg); err == nil || errors.Is(err, explorer.ErrRunExists) {
			return nil // another shard may have come first
		} else {
			return err
		}
	}
	rec, err := ReadRunDir(cfg.Dir)
	if err != nil {
		return err
	}
	if want := cfg.ModelConfig.ID(); !SameModelID(rec.Model.ID(), want) {
		return fmt.Errorf("%w: the search in %s checks\n  %s\nbut this shard was asked for\n  %s", explorer.ErrResumeMismatch, cfg.Dir, rec.Model.ID(), want)
	}
	return nil
}

// Vocabulary implements Bound.
func (m *Model) Vocabulary() vocab.Model { return spec.Vocabulary(m.spec.P) }

// EncodeState implements Bound.
func (m *Model) EncodeState(state any) []byte {
	s := state.(spec.State)
	return m.spec.Encode(nil, &s)
}

// DecodeState implements Bound.
func (m *Model) DecodeState(enc []byte) (any, error) {
	var s spec.State
	err := m.spec.Decode(enc, &s)
	return s, err
}

// Label implements Bound.
func (m *Model) Label(action any) explorer.Action { return ToLabel(action.(spec.Action)) }

// ActionOf implements Bound.
func (m *Model) ActionOf(l explorer.Action) any { return FromLabel(l) }

// LossBias implements Bound (package LossBias).
func (m *Model) LossBias(rate float64) func(explorer.Action) float64 { return LossBias(rate) }

// statement is the one-line statement of the named invariant.
func (m *Model) statement(name string) string {
	for _, inv := range m.invs {
		if inv.Name == name {
			return inv.Statement
		}
	}
	return ""
}

// Trace implements Bound: the explorer's encoded counterexample as a
// protocol trace, with what a CEL property's trace says about it.
func (m *Model) Trace(v *explorer.ViolationInfo) (*traces.Trace, error) {
	var checked []string
	for _, inv := range m.invs {
		checked = append(checked, inv.Name)
	}
	if m.canonicalStates() {
		steps, err := m.behaviour(v.Trace)
		if err != nil {
			return nil, err
		}
		w := *v
		w.Trace, v = steps, &w
	}
	tr, err := buildTrace(m, v, m.statement, checked)
	if err != nil {
		return nil, err
	}
	m.describeCEL(tr)
	return tr, nil
}
