package check

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
	"github.com/bkcheck/bkcheck/spec/specprops"
	"github.com/bkcheck/bkcheck/spec413"
	"github.com/bkcheck/bkcheck/traces"
	"github.com/bkcheck/bkcheck/vocab"
)

// Bound is a model bound to a configuration and its properties: what the
// explorer searches, and everything else bkcheck does with the model —
// counterexamples as traces, replay, simulation, coverage, CEL answers.
// Every model of the registry (Models) implements it fully; Run,
// Simulate and Replay know models only through it.
type Bound interface {
	explorer.Model

	// Vocabulary is the model's vocabulary with its parameters: how its
	// states and actions read (package vocab).
	Vocabulary() vocab.Model
	// EncodeState encodes a state of the model (a value of its State
	// type) as the explorer sees it; DecodeState is the reverse.
	EncodeState(state any) []byte
	DecodeState(enc []byte) (any, error)
	// Label packs an action of the model (its Action type) into the
	// explorer's label; ActionOf unpacks it.
	Label(action any) explorer.Action
	ActionOf(label explorer.Action) any

	// Trace decodes the explorer's counterexample.
	Trace(v *explorer.ViolationInfo) (*traces.Trace, error)
	// LossBias weights simulation steps as if each message were lost with
	// probability rate.
	LossBias(rate float64) func(explorer.Action) float64
	// SimModel is the model bkcheck simulate walks (the model itself, or
	// its product with the CEL properties' monitors) and how its
	// counterexamples decode.
	SimModel() (explorer.Model, func(*explorer.ViolationInfo) (*traces.Trace, error))
	// Coverage is how often each action of the model fired in the search
	// (after it ended), duplicates included, as TLC's -coverage counts;
	// Uncovered are the actions the configuration adds that never did;
	// Idle every action the configuration can fire that never did.
	Coverage() map[string]int64
	Uncovered(coverage map[string]int64) []string
	Idle(coverage map[string]int64) []string
	// Unable are the actions the configuration's options add that its
	// parameters leave no room for, each with what it needs.
	Unable() []string
	// AnswerCEL answers the run's CEL properties into rep (probes'
	// witnesses, eventually properties), after the main search.
	AnswerCEL(ctx context.Context, cfg Config, rep *Report) error
}

// The releases of BookKeeper as released (--bookkeeper): the default one,
// which the real-BookKeeper harness runs unless told, and master.
const (
	DefaultRelease = spec.DefaultRelease
	MasterRelease  = spec.MasterRelease
)

// ReleaseBug says which releases fixed the bug a variant reproduces; ok
// is false for a variant no release has (a candidate fix).
func ReleaseBug(variant string) (fixedIn string, ok bool) { return spec.ReleaseBug(variant) }

// ModelInfo is one model of the registry.
type ModelInfo struct {
	Name string // --model
	// Descriptor is the model's vocabulary: variables, actions,
	// invariants, variants.
	Descriptor *vocab.Descriptor
	// bind binds a valid configuration (defaults filled in).
	bind func(c ModelConfig) (Bound, error)
	// fromTrace reads the parameters a trace records.
	fromTrace func(params json.RawMessage) (vocab.Model, error)
	// config is the configuration that checks a trace's parameters.
	config func(v vocab.Model) ModelConfig
	// Options are the model's own settings (nil: none beyond the shared).
	Options *schema.Schema
}

// Models is the registry: every model bkcheck checks, the default first.
// (It is filled in by init: binding a model validates its configuration,
// which names the models.)
var Models []*ModelInfo

func init() { Models = registry() }

func registry() []*ModelInfo {
	return []*ModelInfo{
		{
			Name:       ModelCurrent,
			Descriptor: currentDescriptor(),
			bind:       func(c ModelConfig) (Bound, error) { return NewModel(c) },
			fromTrace:  spec.VocabularyFromJSON,
			config: func(v vocab.Model) ModelConfig {
				p, _ := spec.ParamsOf(v)
				return ModelConfig{Params: p}
			},
		},
		{
			Name:       ModelV413,
			Descriptor: spec413.Descriptor,
			bind:       func(c ModelConfig) (Bound, error) { return newModel413(c) },
			fromTrace:  spec413.VocabularyFromJSON,
			Options:    spec413.OptionsSchema,
			config: func(v vocab.Model) ModelConfig {
				p, _ := spec413.ParamsOf(v)
				return ModelConfig{Model: ModelV413, Params: spec.Params{Bookies: p.Bookies, WriteQuorum: p.WriteQuorum, AckQuorum: p.AckQuorum, Entries: p.SendLimit}, Options: p.Options}
			},
		},
	}
}

// currentDescriptor is spec's vocabulary with the invariants of package
// invariants (which spec cannot import).
func currentDescriptor() *vocab.Descriptor {
	d := *spec.Descriptor
	d.Invariants = nil
	def := map[string]bool{}
	for _, n := range invariants.Default {
		def[n] = true
	}
	for _, inv := range invariants.All {
		d.Invariants = append(d.Invariants, vocab.Invariant{Name: inv.Name, Statement: inv.Statement, Source: inv.Source,
			Default: def[inv.Name], Terminal: inv.HoldsTerminal != nil})
	}
	return &d
}

// LookupModel finds a model of the registry by name ("" is the default).
func LookupModel(name string) (*ModelInfo, error) {
	if name == "" {
		return Models[0], nil
	}
	for _, m := range Models {
		if m.Name == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("unknown model %q; known: %s", name, ModelNames())
}

// ModelNames lists the models --model accepts.
func ModelNames() string {
	names := make([]string, len(Models))
	for i, m := range Models {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// bind binds the model c names (c is valid, defaults filled in).
func bind(c ModelConfig) (Bound, error) {
	info, err := LookupModel(c.Model)
	if err != nil {
		return nil, err
	}
	return info.bind(c)
}

// ResolveTrace finds the model a trace names with the parameters it
// records: a traces.Resolver for every model of the registry.
func ResolveTrace(model string, params json.RawMessage) (vocab.Model, error) {
	info, err := LookupModel(model)
	if err != nil {
		return nil, err
	}
	return info.fromTrace(params)
}

// ReadTrace reads the ITF trace in the file at path, of any model.
func ReadTrace(path string) (*traces.Trace, error) { return traces.ReadITFFile(path, ResolveTrace) }

// buildTrace decodes the explorer's counterexample with b's encoding and
// labels, for any model.
// checked names the built-in invariants the run checked, which a trace
// of the error verdict records (replay checks them again).
func buildTrace(b Bound, v *explorer.ViolationInfo, statement func(name string) string, checked []string) (*traces.Trace, error) {
	tr := &traces.Trace{Model: b.Vocabulary(), Invariant: v.Invariant, Deadlock: v.Deadlock, Terminal: v.Terminal, Statement: statement(v.Invariant)}
	if v.Deadlock {
		tr.Statement = "a reachable state has no successor"
	}
	if v.Error != nil {
		tr.Error, tr.Checked = v.Error.Error(), checked
		// A property that cannot be evaluated is named, so that the
		// trace records its kind and expression and replay can evaluate
		// it again (describeCEL).
		tr.Invariant = v.Error.Property
	}
	for i, st := range v.Trace {
		s, err := b.DecodeState(st.State)
		if err != nil {
			return nil, fmt.Errorf("decoding trace step %d: %w", i+1, err)
		}
		step := traces.Step{Initial: st.Initial, State: s}
		if !st.Initial {
			step.Action = b.ActionOf(st.Action)
		}
		tr.Steps = append(tr.Steps, step)
	}
	return tr, nil
}

// Explain says why the last state of tr, a trace of any model, has its
// property's verdict (traces.Explanation), nil when there is nothing to
// explain: the current model's typed view explains its built-ins and
// CEL properties; another model's CEL properties are explained over its
// ITF values.
func Explain(tr *traces.Trace) (*traces.Explanation, error) {
	ex, err := explainLast(tr)
	if ex == nil || err != nil || tr.Error != "" {
		return ex, err
	}
	// A leads-to's counterexample also says where it began to owe.
	var compile func(properties.Def) (properties.TraceSet, error)
	if p, current := spec.ParamsOf(tr.Model); current {
		compile = func(d properties.Def) (properties.TraceSet, error) { return specprops.Compile(p, []properties.Def{d}) }
	}
	if ex.OwedFrom, err = properties.OwedFrom(tr, compile); err != nil {
		return nil, err
	}
	return ex, nil
}

// explainLast is Explain's explanation of the last state.
func explainLast(tr *traces.Trace) (*traces.Explanation, error) {
	if _, current := spec.ParamsOf(tr.Model); current {
		return specprops.Explain(tr)
	}
	kind, ok := properties.KindByName(tr.Kind)
	if !ok || tr.Error != "" || tr.Deadlock || len(tr.Steps) == 0 {
		return nil, nil
	}
	d, err := properties.Parse(kind, tr.Invariant+"="+tr.Expression)
	if err != nil {
		return nil, err
	}
	set, err := properties.CompileModel(tr.Model, []properties.Def{d})
	if err != nil {
		return nil, err
	}
	return set.Explain(0, tr.Model.ITF(tr.Steps[len(tr.Steps)-1].State))
}
