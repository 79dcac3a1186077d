// Package specprops is the current model's typed view for CEL properties
// (package properties): the names of its ITF trace over a spec.State read
// in place, the helpers that read its fragments and bookies (fragment_of,
// write_set, holders, copies), the fast path that evaluates most
// properties without cel-go's interpreter, the CEL forms of the built-in
// invariants (Builtins) and the explanation of a verdict on the model's
// state table.
//
// It is the current model's hand-written hot path, as spec's Encode and
// permute are: it knows spec.State field by field, so it lives under the
// model and is pinned by tests against the model's ITF form
// (TestViewMatchesITF, TestITFMatchesTypedView); what does not depend on
// a model (definitions, kinds, the ITF view any model has, the generic
// explainer) stays in package properties. Package check wires it in.
//
// Expressions are parsed and type-checked against the view before any
// search starts (Compile); an error names the property, the position and
// what was expected. Each search goroutine evaluates them through its own
// Evaluator, which reads the state in place: evaluating the CEL forms of
// the built-in invariants allocates nothing.
package specprops

import (
	"fmt"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/functions"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/spec"
)

// provider answers the type checker's and the planner's questions about
// the view's record types and delegates everything else to CEL's registry.
type provider struct {
	*types.Registry
	byName map[string]*recordType
}

func (p *provider) FindStructType(name string) (*types.Type, bool) {
	if rt, ok := p.byName[name]; ok {
		return types.NewTypeTypeWithParam(rt.t), true
	}
	return p.Registry.FindStructType(name)
}

func (p *provider) FindStructFieldNames(name string) ([]string, bool) {
	if rt, ok := p.byName[name]; ok {
		return rt.fieldNames(), true
	}
	return p.Registry.FindStructFieldNames(name)
}

func (p *provider) FindStructFieldType(name, fieldName string) (*types.FieldType, bool) {
	if rt, ok := p.byName[name]; ok {
		f, ok := rt.byName[fieldName]
		if !ok {
			return nil, false
		}
		return f.ft, true
	}
	return p.Registry.FindStructFieldType(name, fieldName)
}

func (p *provider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if _, ok := p.byName[name]; ok {
		return types.NewErr("a %s cannot be constructed in an expression; it is read from the state", name)
	}
	return p.Registry.NewValue(name, fields)
}

// helper is a function the view adds to CEL. Its implementation reads the
// state through the view of the program calling it.
type helper struct {
	name, signature, doc string
	overloads            []helperOverload
}

type helperOverload struct {
	id     string
	args   []*types.Type
	result *types.Type
	unary  func(v *view, a ref.Val) ref.Val
	binary func(v *view, a, b ref.Val) ref.Val
}

var (
	fragList = types.NewListType(fragmentType.t)
	intList  = types.NewListType(types.IntType)
	helpers  []helper
	envOnce  sync.Once
	baseEnv  *cel.Env
	errEnv   error
)

func init() {
	helpers = []helper{
		{"fragment_of", "fragment_of(e) / fragment_of(e, fragments)",
			"the fragment holding entry e: of meta_fragments, or of the list given (e.g. a client's fragments); a fragment with id 0 and no bookies when none does (the spec's FragmentOfEntryId)",
			[]helperOverload{
				{id: "fragment_of_int", args: []*types.Type{types.IntType}, result: fragmentType.t, unary: func(v *view, e ref.Val) ref.Val {
					return v.fragmentOf(e, &v.metaFragList)
				}},
				{id: "fragment_of_int_list", args: []*types.Type{types.IntType, fragList}, result: fragmentType.t, binary: func(v *view, e, l ref.Val) ref.Val {
					return v.fragmentOf(e, l)
				}},
			}},
		{"write_set", "write_set(e) / write_set(e, fragment)",
			"the bookies entry e is written to: its write set in fragment_of(e) (or in the fragment given); the fragment's ensemble unless striping (E > Qw) makes it Qw of its E bookies",
			[]helperOverload{
				{id: "write_set_int", args: []*types.Type{types.IntType}, result: bookieList, unary: func(v *view, e ref.Val) ref.Val {
					return v.writeSet(e, v.fragmentOf(e, &v.metaFragList))
				}},
				{id: "write_set_int_fragment", args: []*types.Type{types.IntType, fragmentType.t}, result: bookieList, binary: func(v *view, e, f ref.Val) ref.Val {
					return v.writeSet(e, f)
				}},
			}},
		{"holders", "holders(e)", "the bookies that store entry e (with any data), from b_entries", []helperOverload{
			{id: "holders_int", args: []*types.Type{types.IntType}, result: bookieList, unary: func(v *view, e ref.Val) ref.Val {
				return v.holders(e)
			}},
		}},
		{"copies", "copies(e)", "how many bookies of write_set(e) store entry e: size(holders(e).filter(b, b in write_set(e)))", []helperOverload{
			{id: "copies_int", args: []*types.Type{types.IntType}, result: types.IntType, unary: func(v *view, e ref.Val) ref.Val {
				ws, ok := v.writeSet(e, v.fragmentOf(e, &v.metaFragList)).(*list)
				h, ok2 := v.holders(e).(*list)
				if !ok || !ok2 {
					return types.NewErr("copies: no such entry %v", e)
				}
				return intVal(spec.Bookies(ws.bits & h.bits).Len())
			}},
		}},
		{"seq", "seq(a, b)", "the integers a..b in order (TLA+'s a..b; empty when b < a), e.g. seq(1, c.lac) for the entries a client acknowledged", []helperOverload{
			{id: properties.SeqOverload, args: []*types.Type{types.IntType, types.IntType}, result: intList, binary: func(_ *view, a, b ref.Val) ref.Val {
				return properties.Seq(a, b)
			}},
		}},
	}
}

// fragmentOf is the spec's FragmentOfEntryId over a list of fragments.
func (v *view) fragmentOf(e ref.Val, frags ref.Val) ref.Val {
	id, ok := e.(types.Int)
	l, ok2 := frags.(*list)
	if !ok || !ok2 || l.kind != lkFragments {
		return types.NewErr("fragment_of wants an entry id and a list of fragments of the state")
	}
	if v.rec != nil {
		v.rec.Note(fragmentRead(&rec{c: l.c}))
	}
	var fs []spec.Fragment
	if l.c == ownerMeta {
		fs = v.s.MetaFragmentList()
	} else {
		fs = v.s.Clients[l.c].FragmentList()
	}
	if id < -128 || id > 127 {
		return zeroFragment
	}
	f, found := spec.FragmentOfEntryId(int8(id), fs)
	if !found {
		return zeroFragment
	}
	for i := range fs {
		if fs[i] == f {
			return l.at(i)
		}
	}
	return zeroFragment
}

func (v *view) writeSet(e ref.Val, frag ref.Val) ref.Val {
	id, ok := e.(types.Int)
	r, ok2 := frag.(*rec)
	if !ok || !ok2 || r.rt != fragmentType {
		return types.NewErr("write_set wants an entry id and a fragment")
	}
	if v.rec != nil {
		if name := fragmentRead(r); name != "" {
			v.rec.Note(name)
		}
	}
	if id < -128 || id > 127 {
		return emptyList
	}
	return bookieSet(v.p.WriteSet(int8(id), r.fragment()))
}

func (v *view) holders(e ref.Val) ref.Val {
	id, ok := e.(types.Int)
	if !ok {
		return types.NewErr("holders wants an entry id")
	}
	if id < 1 || id > spec.MaxEntries {
		return emptyList
	}
	var out spec.Bookies
	for b := 0; b < v.p.Bookies; b++ {
		if v.rec != nil {
			v.rec.Note("b_entries[" + bookieName(b) + "]")
		}
		if v.s.BEntries[b].HasID(int8(id)) {
			out |= 1 << uint(b)
		}
	}
	if v.rec != nil {
		for _, r := range entryReads(v.p, v.s, int8(id)) {
			v.rec.Note(r)
		}
	}
	return bookieSet(out)
}

// env is the CEL environment of the view: its variables, record types and
// helpers, with every view's extensions (properties.EnvOptions).
func env() (*cel.Env, error) {
	envOnce.Do(func() {
		reg, err := types.NewRegistry()
		if err != nil {
			errEnv = err
			return
		}
		prov := &provider{Registry: reg, byName: map[string]*recordType{}}
		for _, rt := range recordTypes {
			prov.byName[rt.t.TypeName()] = rt
		}
		opts := append([]cel.EnvOption{cel.CustomTypeProvider(prov), cel.CustomTypeAdapter(reg)}, properties.EnvOptions()...)
		for _, vr := range variables {
			opts = append(opts, cel.Variable(vr.name, vr.t))
		}
		for _, h := range helpers {
			var fo []cel.FunctionOpt
			for _, o := range h.overloads {
				fo = append(fo, cel.Overload(o.id, o.args, o.result))
			}
			opts = append(opts, cel.Function(h.name, fo...))
		}
		baseEnv, errEnv = cel.NewEnv(opts...)
	})
	return baseEnv, errEnv
}

// bindings are the helpers' implementations for programs evaluated
// through v.
func (v *view) bindings() cel.ProgramOption {
	var ovs []*functions.Overload
	for _, h := range helpers {
		for _, o := range h.overloads {
			o := o
			ov := &functions.Overload{Operator: o.id}
			if o.unary != nil {
				ov.Unary = func(a ref.Val) ref.Val { return o.unary(v, a) }
			} else {
				ov.Binary = func(a, b ref.Val) ref.Val { return o.binary(v, a, b) }
			}
			ovs = append(ovs, ov)
		}
	}
	//lint:ignore SA1019 the overloads are built at run time from the helper table; cel.Function wants them by name at compile time
	return cel.Functions(ovs...)
}

// Helper describes a helper function, for documentation.
type Helper struct{ Name, Signature, Doc string }

// Helpers lists the helper functions the view adds to CEL.
func Helpers() []Helper {
	var out []Helper
	for _, h := range helpers {
		out = append(out, Helper{h.name, h.signature, h.doc})
	}
	return out
}

// Set is the compiled properties of one run.
type Set struct {
	Params spec.Params
	Props  []*properties.Property
	// fast and slots are, by property, its fast-path closures (nil: the
	// expression is evaluated by cel-go) and the comprehension slots
	// they need.
	fast  []fexpr
	slots []int
}

var (
	_ properties.PropertySet    = (*Set)(nil)
	_ properties.TraceSet       = (*Set)(nil)
	_ properties.StateEvaluator = (*Evaluator)(nil)
)

// Compile parses and type-checks every property against the view
// (properties.CompileDefs). Every problem is reported (a schema.Problems
// naming the property's setting): the property, the position and what
// was expected.
func Compile(p spec.Params, defs []properties.Def) (*Set, error) {
	e, err := env()
	if err != nil {
		return nil, fmt.Errorf("properties: the CEL environment: %w", err)
	}
	props, err := properties.CompileDefs(defs, func(d properties.Def, expr string) (*cel.Ast, error) { return compileExpr(e, d.Name, expr) })
	if err != nil {
		return nil, err
	}
	if err := checkIDs(p, props); err != nil {
		return nil, err
	}
	set := &Set{Params: p, Props: props, fast: make([]fexpr, len(props)), slots: make([]int, len(props))}
	for i, pr := range props {
		if f, n, err := compileFast(pr.AST().NativeRep(), p); err == nil {
			set.fast[i], set.slots[i] = f, n
		}
	}
	return set, nil
}

// Fast reports whether property i is evaluated on the fast path (see
// fast.go) rather than by cel-go's interpreter.
func (set *Set) Fast(i int) bool { return set.fast[i] != nil }

// compileExpr parses and checks one expression; its error says where and
// what was expected, in terms of the view.
func compileExpr(e *cel.Env, name, expr string) (*cel.Ast, error) {
	ast, src, err := properties.CheckExpr(e, name, expr, hint)
	if err != nil {
		return nil, err
	}
	if err := checkEnums(ast.NativeRep(), src); err != nil {
		return nil, err
	}
	if !ast.OutputType().IsExactType(types.BoolType) {
		return nil, properties.NotBool(name, ast.OutputType())
	}
	return ast, nil
}

// hint adds what the view offers to CEL's message about a name or field it
// does not know.
func hint(msg string) string {
	if strings.Contains(msg, "undeclared reference to '") {
		var names []string
		for _, vr := range variables {
			names = append(names, vr.name)
		}
		for _, h := range helpers {
			names = append(names, h.name+"()")
		}
		return "\n  the view has: " + strings.Join(names, ", ") + " (docs/properties.md)"
	}
	if _, rest, ok := strings.Cut(msg, "undefined field '"); ok {
		field, _, _ := strings.Cut(rest, "'")
		// The record types with the closest field name.
		best, bestD := []*recordType(nil), 3
		guesses := map[string]bool{}
		for _, rt := range recordTypes {
			for _, f := range rt.fields {
				switch d := properties.EditDistance(field, f.name); {
				case d < bestD:
					best, bestD, guesses = []*recordType{rt}, d, map[string]bool{f.name: true}
				case d == bestD && (len(best) == 0 || best[len(best)-1] != rt):
					best = append(best, rt)
					guesses[f.name] = true
				}
			}
		}
		out := ""
		if len(best) == 0 {
			best = recordTypes
		} else if len(guesses) == 1 {
			for g := range guesses {
				out = fmt.Sprintf(" did you mean '%s'?", g)
			}
		}
		for _, rt := range best {
			out += "\n  a " + rt.name + " has: " + strings.Join(rt.fieldNames(), ", ")
		}
		return out
	}
	if strings.Contains(msg, "found no matching overload") {
		return "\n  (comparisons need equal types: statuses are strings such as \"STATUS_CLOSED\", bookies \"b1\", clients \"c1\"; Nil integers are -1)"
	}
	return ""
}

// Evaluator evaluates a Set on states, through its own view. It is not
// safe for concurrent use: give each goroutine one.
type Evaluator struct {
	set    *Set
	v      *view
	progs  []cel.Program
	frames []frame // fast-path frames, by property
	noFast bool    // evaluate everything with cel-go (tests)
}

// NewEvaluator prepares the programs of set for one goroutine.
func (set *Set) NewEvaluator() (*Evaluator, error) { return set.newEvaluator(0) }

// NewTraceEvaluator implements properties.TraceSet.
func (set *Set) NewTraceEvaluator() (properties.StateEvaluator, error) {
	return set.newEvaluator(properties.CostLimit)
}

// newEvaluator is NewEvaluator; with a cost limit (for expressions read
// from files: a trace's), every evaluation goes through cel-go, which
// stops one that exceeds it.
func (set *Set) newEvaluator(costLimit uint64) (*Evaluator, error) {
	e, err := env()
	if err != nil {
		return nil, err
	}
	ev := &Evaluator{set: set, v: newView(set.Params), noFast: costLimit > 0}
	opts := []cel.ProgramOption{ev.v.bindings(), cel.EvalOptions(cel.OptOptimize)}
	if costLimit > 0 {
		opts = append(opts, cel.CostLimit(costLimit))
	}
	for i, pr := range set.Props {
		prg, err := e.Program(pr.AST(), opts...)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", pr.Name, err)
		}
		ev.progs = append(ev.progs, prg)
		ev.frames = append(ev.frames, frame{v: ev.v, slots: make([]ref.Val, set.slots[i])})
	}
	return ev, nil
}

// Load makes s the state later calls evaluate (read in place: it must not
// change meanwhile).
func (ev *Evaluator) Load(s *spec.State) { ev.v.load(s) }

// Holds evaluates property i on the loaded state. An evaluation error
// (a missing map key, an index out of range) is returned as such.
func (ev *Evaluator) Holds(i int) (bool, error) {
	if f := ev.set.fast[i]; f != nil && !ev.noFast {
		switch out := f(&ev.frames[i]); out {
		case types.True:
			return true, nil
		case types.False:
			return false, nil
		default:
			if err, ok := out.(*types.Err); ok {
				return false, fmt.Errorf("%s: %w", ev.set.Props[i].Name, err)
			}
			return false, fmt.Errorf("%s: the expression gave %v, not a bool", ev.set.Props[i].Name, out)
		}
	}
	out, _, err := ev.progs[i].Eval(ev.v)
	if err != nil {
		return false, fmt.Errorf("%s: %w", ev.set.Props[i].Name, err)
	}
	return out == types.True, nil
}

// LoadState implements properties.StateEvaluator: Load of a *spec.State
// (or a copy of a spec.State).
func (ev *Evaluator) LoadState(state any) {
	switch s := state.(type) {
	case *spec.State:
		ev.Load(s)
	case spec.State:
		ev.Load(&s)
	default:
		panic(fmt.Sprintf("properties: the typed view evaluates states of the current model, not %T", state))
	}
}

// Properties implements properties.PropertySet.
func (set *Set) Properties() []*properties.Property { return set.Props }

// NewStateEvaluator implements properties.PropertySet.
func (set *Set) NewStateEvaluator() (properties.StateEvaluator, error) { return set.NewEvaluator() }

// Names lists the user's properties' names in order.
func (set *Set) Names() []string { return properties.Names(set.Props) }

// Index is the position of the property named name, or -1.
func (set *Set) Index(name string) int { return properties.Index(set.Props, name) }
