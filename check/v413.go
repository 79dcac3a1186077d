package check

import (
	"context"
	"fmt"
	"sync"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec413"
	"github.com/bkcheck/bkcheck/traces"
	"github.com/bkcheck/bkcheck/vocab"
)

// The models bkcheck checks (--model): the same explorer searches either.
const (
	// ModelCurrent is package spec: BookKeeperProtocol.tla with bkcheck's
	// extensions (faults, striping, variants).
	ModelCurrent = "current"
	// ModelV413 is package spec413: BookKeeperProtocol_v4_13.tla, the
	// protocol of release 4.13.
	ModelV413 = "v4.13"
)

// v413Settings are the settings of ModelConfig the v4.13 model takes; the
// others must keep their defaults. entries is the spec's SendLimit.
var v413Settings = map[string]bool{
	"model": true, "bookies": true, "write-quorum": true, "ack-quorum": true, "entries": true,
	"recovery-reads-fence": true, "invariants": true, "check-deadlock": true,
	// CEL properties of every kind, over the model's ITF values
	// (properties.CompileModel).
	"invariant": true, "terminal": true, "probe": true, "eventually": true,
	"fair": true, // weak fairness for the eventually properties (liveness.go)
}

// Params413 is the v4.13 model's parameter set: the settings both models
// share (bookies, -w, -a, entries as SendLimit) and its own options.
func (c ModelConfig) Params413() spec413.Params {
	return spec413.Params{Bookies: c.Bookies, WriteQuorum: c.WriteQuorum, AckQuorum: c.AckQuorum, SendLimit: c.Entries, Options: c.Options}
}

// validate413 reports the problems of a v4.13 configuration: its own
// parameters and invariants, and any setting the model does not take that
// is neither off nor at its default.
func (c ModelConfig) validate413() error {
	var probs schema.Problems
	ref := ModelConfig{Params: spec.DefaultParams()}
	for _, f := range ModelSchema.Fields() {
		if v413Settings[f.Name] {
			if err := ModelSchema.Set(&ref, f.Name, ModelSchema.Get(&c, f.Name)); err != nil {
				panic(err) // a setting's text form always parses
			}
		}
	}
	ref.EnsureDefaults()
	for _, f := range ModelSchema.Fields() {
		if !v413Settings[f.Name] && !ModelSchema.IsZero(&c, f.Name) && ModelSchema.Get(&c, f.Name) != ModelSchema.Get(&ref, f.Name) {
			probs.Add(f.Name, "does not apply to --model %s, which takes only --bookies, -w, -a, --entries, --recovery-reads-fence, --invariants, the CEL properties (--invariant, --terminal, --eventually, --probe) and --check-deadlock", ModelV413)
		}
	}
	probs.Merge(c.Params413().Validate())
	if probs.Err() == nil {
		if _, err := c.CELProperties(); err != nil {
			probs.Merge(err)
		}
	} else if !c.Settings.Empty() {
		// Compiled all the same, so that their problems come in the same
		// message (as the current model's: ModelConfig.Validate): against
		// the bookies given where valid, else the most a run can have.
		q := c
		q.WriteQuorum, q.AckQuorum, q.Entries = 1, 1, 1
		if c.Bookies < 1 || c.Bookies > spec413.MaxBookies {
			q.Bookies = spec413.MaxBookies
		}
		if _, err := q.CELProperties(); err != nil {
			probs.Merge(err)
		}
	}
	if _, err := spec413.LookupInvariants(c.Invariants); err != nil {
		probs.Add("invariants", "%v", err)
	}
	c.validateFair(&probs)
	return probs.Err()
}

// describe413 renders a v4.13 configuration for people.
func (c ModelConfig) describe413() string {
	return fmt.Sprintf("model=%s bookies=%d write-quorum=%d ack-quorum=%d entries=%d recovery-reads-fence=%t",
		ModelV413, c.Bookies, c.WriteQuorum, c.AckQuorum, c.Entries, c.RecoveryReadsFence)
}

// flags413 renders a v4.13 configuration as command-line flags: only the
// settings the model takes.
func (c ModelConfig) flags413() string {
	own := ModelConfig{Model: c.Model, Params: spec.Params{Bookies: c.Bookies, WriteQuorum: c.WriteQuorum, AckQuorum: c.AckQuorum, Entries: c.Entries},
		Options: c.Options, Invariants: c.Invariants, CheckDeadlock: c.CheckDeadlock}
	return ModelSchema.Flags(&own, "bookies", "write-quorum", "ack-quorum", "entries")
}

// model413 adapts the v4.13 model and its invariants to explorer.Model.
type model413 struct {
	m    *spec413.Model
	invs []spec413.Invariant
	desc string
	cel  *celProps // CEL invariants and terminal properties; nil if none

	mu        sync.Mutex
	expanders []*expander413 // for coverage
}

func newModel413(c ModelConfig) (*model413, error) {
	m, err := spec413.NewModel(c.Params413())
	if err != nil {
		return nil, err
	}
	invs, err := spec413.LookupInvariants(c.Invariants)
	if err != nil {
		return nil, err
	}
	set, err := c.CELProperties()
	if err != nil {
		return nil, err
	}
	return &model413{m: m, invs: invs, desc: c.describe413(), cel: newCELProps(set)}, nil
}

// Init implements explorer.Model.
func (m *model413) Init(emit func(enc, key []byte)) {
	s := m.m.Init()
	emit(m.m.Encode(nil, &s), nil)
}

// DescribeAction implements explorer.Model.
func (m *model413) DescribeAction(a explorer.Action) string { return fromLabel413(a).String() }

// toLabel413 packs an action as the current model's labels are packed
// (no client; bookie, entry, loss pattern).
func toLabel413(a spec413.Action) explorer.Action {
	return explorer.Action{Kind: uint8(a.Kind), Params: [4]int8{-1, a.Bookie, a.Entry, int8(a.Lost)}}
}

func fromLabel413(a explorer.Action) spec413.Action {
	return spec413.Action{Kind: spec413.ActionKind(a.Kind), Bookie: a.Params[1], Entry: a.Params[2], Lost: spec413.Bookies(uint8(a.Params[3]))}
}

// NewExpander implements explorer.Model.
func (m *model413) NewExpander() explorer.Expander {
	e := &expander413{m: m, buf: make([]byte, 0, 256), cel: m.cel.newChecker()}
	m.mu.Lock()
	m.expanders = append(m.expanders, e)
	m.mu.Unlock()
	e.emitFn = func(a spec413.Action, s *spec413.State) {
		e.fired[a.Kind]++
		e.buf = m.m.Encode(e.buf[:0], s)
		e.emitNext(toLabel413(a), e.buf, nil)
	}
	return e
}

type expander413 struct {
	m            *model413
	fired        [spec413.NumActionKinds]int64 // transitions generated, by action (coverage)
	cur, scratch spec413.State
	buf          []byte
	emitNext     func(explorer.Action, []byte, []byte)
	emitFn       func(spec413.Action, *spec413.State) // bound once: Successors does not allocate a closure
	cel          *celChecker                          // nil without CEL properties
}

func (e *expander413) Load(enc []byte) error { return e.m.m.Decode(enc, &e.cur) }

func (e *expander413) Check() string {
	for _, inv := range e.m.invs {
		if !inv.Holds(e.m.m.P, &e.cur) {
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
func (e *expander413) InModel() bool { return e.cel == nil || e.cel.inModel() }

// CheckTerminal implements explorer.Expander: the spec has no property
// of terminal states; CEL terminal properties are checked here.
func (e *expander413) CheckTerminal() string {
	if e.cel != nil {
		return e.cel.checkTerminal(&e.cur)
	}
	return ""
}

func (e *expander413) Successors(emit func(explorer.Action, []byte, []byte)) {
	e.emitNext = emit
	e.m.m.Next(&e.cur, &e.scratch, e.emitFn)
	e.emitNext = nil
}

// Vocabulary implements Bound.
func (m *model413) Vocabulary() vocab.Model { return spec413.Vocabulary(m.m.P) }

// EncodeState implements Bound.
func (m *model413) EncodeState(state any) []byte {
	s := state.(spec413.State)
	return m.m.Encode(nil, &s)
}

// DecodeState implements Bound.
func (m *model413) DecodeState(enc []byte) (any, error) {
	var s spec413.State
	err := m.m.Decode(enc, &s)
	return s, err
}

// Label implements Bound.
func (m *model413) Label(action any) explorer.Action { return toLabel413(action.(spec413.Action)) }

// ActionOf implements Bound.
func (m *model413) ActionOf(l explorer.Action) any { return fromLabel413(l) }

// Trace implements Bound: a CEL property's trace says which and why.
func (m *model413) Trace(v *explorer.ViolationInfo) (*traces.Trace, error) {
	var checked []string
	for _, inv := range m.invs {
		checked = append(checked, inv.Name)
	}
	tr, err := buildTrace(m, v, func(name string) string {
		for _, inv := range m.invs {
			if inv.Name == name {
				return inv.Statement
			}
		}
		return ""
	}, checked)
	if err != nil || m.cel == nil {
		return tr, err
	}
	if i := m.cel.set.Index(tr.Invariant); i >= 0 {
		p := m.cel.set.Properties()[i]
		tr.Kind, tr.Expression, tr.Statement = p.Kind.String(), p.Expr, p.Statement
		if ex, err := Explain(tr); err == nil {
			tr.Explanation = ex
		}
	}
	return tr, nil
}

// LossBias implements Bound: as LossBias; an ensemble change names the
// replaced bookie apart from the loss pattern, so it is never weighted.
func (m *model413) LossBias(rate float64) func(explorer.Action) float64 {
	pow := lossOdds(rate)
	return func(a explorer.Action) float64 { return pow[fromLabel413(a).Lost.Len()] }
}

// SimModel implements Bound: simulation walks the model itself, or its
// product with the eventually properties when the run has probes or
// eventually properties (the probes are the walks' goals).
func (m *model413) SimModel() (explorer.Model, func(*explorer.ViolationInfo) (*traces.Trace, error)) {
	if m.cel == nil || len(m.cel.probes)+len(m.cel.eventually) == 0 {
		return m, m.Trace
	}
	cp := newCELProps(m.cel.set)
	cp.walkProbes = true
	em := &eventuallyModel{base: &model413{m: m.m, invs: m.invs, desc: m.desc, cel: cp}, cel: cp, sim: true}
	return em, em.decodeTrace
}

// AnswerCEL implements Bound: the answers of the CEL properties, probes'
// witnesses and the eventually pass included, as for the current model.
func (m *model413) AnswerCEL(ctx context.Context, cfg Config, rep *Report) error {
	return answerCEL(ctx, cfg, rep, m.cel, func(i int) (*traces.Trace, error) {
		// The same breadth-first search, stopping where probe i holds.
		tm := &model413{m: m.m, desc: m.desc, cel: &celProps{set: m.cel.set, target: i}}
		res, err := explorer.Run(ctx, tm, searchOptions(cfg))
		if err != nil || res.Status != explorer.Violation {
			return nil, err
		}
		return tm.Trace(res.Violation)
	}, func(results map[string]*PropertyResult) error {
		return eventuallyPass(ctx, cfg, rep, results, m, m.cel)
	})
}

// Uncovered implements Bound: every action of the spec must fire (the
// model has no options that add actions), so none is required apart.
func (m *model413) Uncovered(map[string]int64) []string { return nil }

// Unable implements Bound: the model has no options that add actions.
func (m *model413) Unable() []string { return nil }

// Idle implements Bound: the spec's actions that never fired.
func (m *model413) Idle(coverage map[string]int64) []string {
	var out []string
	for _, a := range spec413.Descriptor.Actions {
		if coverage[a.Name] == 0 {
			out = append(out, a.Name)
		}
	}
	return out
}

// Coverage implements Bound, as TLC's -coverage counts: transitions
// generated per action, duplicates included.
func (m *model413) Coverage() map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int64{}
	for k := spec413.ActionKind(1); k < spec413.NumActionKinds; k++ {
		out[k.String()] = 0
	}
	for _, e := range m.expanders {
		for k, n := range e.fired {
			if n > 0 {
				out[spec413.ActionKind(k).String()] += n
			}
		}
	}
	return out
}
