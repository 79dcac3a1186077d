package properties

import (
	"errors"
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// Explaining a verdict. A property is a boolean formula; why it is false
// (or, for a probe, true) in a state is found by walking its checked AST
// from the top and evaluating sub-expressions on the state:
//
//   - a && b that is false is explained by its false operands, a || b
//     that is true by its true ones (and otherwise by both); !a by a;
//     a ? b : c by a and the branch taken;
//   - an all(...) that is false by the elements it fails for (at most
//     three), an exists(...) that is true by the first element it holds
//     for; the predicate is then explained with the element bound;
//   - anything else (a comparison, a call, an exists that finds nothing)
//     is a leaf: its value and the state-table rows it reads.
//
// Sub-expressions are printed back from the AST and evaluated by cel-go
// through a view that notes every row read. This runs once per trace,
// on its last state, with a cost limit: trace files come from anyone.

// Limits on the work one explanation does.
const (
	explainCostLimit  = 1_000_000 // CEL cost units per sub-evaluation (TypeOK costs about 300 on a state)
	explainMaxEvals   = 400       // sub-evaluations per explanation
	explainMaxFailing = 3         // elements shown for a failing all()
	explainMaxText    = 120       // characters of an expression shown on a line
)

// binding is a comprehension variable bound while explaining.
type binding struct {
	name string
	t    *types.Type
	val  ref.Val
	desc string // how it reads in a line: c = clients["c1"]
}

// explainer walks a property's checked AST over one state. What it
// evaluates against is its source: the typed view of the current model,
// or the ITF values of any model (itfexplain.go).
type explainer struct {
	env   *cel.Env
	a     *ast.AST
	src   explainSource
	lines []string
	reads []string
	seen  map[string]bool
	evals int
	cache map[int64]evalResult // values of expressions without bindings
}

// Explain says why the last state of tr fails its property (for a probe,
// why it holds): by the property's CEL expression, or for a built-in by
// its CEL form (Builtins). It returns nil for a deadlock or a property
// with no CEL form. The trace may come from a file: its expression is
// compiled and evaluated under limits.
func Explain(tr *traces.Trace) (*traces.Explanation, error) {
	if tr.Deadlock || len(tr.Steps) == 0 {
		return nil, nil
	}
	expr, equivalent := tr.Expression, false
	if tr.Kind == "" {
		b, ok := BuiltinByName(tr.Invariant)
		if !ok {
			return nil, nil
		}
		expr, equivalent = b.Invariant, true
		if tr.Terminal && b.Terminal != "" {
			expr = b.Terminal
		}
	}
	if tr.Kind == Eventually.String() {
		// P ~> Q: the last state is explained by Q, which it still owes.
		_, expr, _ = SplitLeadsTo(expr)
	}
	if strings.TrimSpace(expr) == "" {
		return nil, nil
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	name := tr.Invariant
	if checkName(name) != nil {
		name = "property"
	}
	checked, err := compileExpr(e, name, expr)
	if err != nil {
		return nil, err
	}
	p, ok := spec.ParamsOf(tr.Model)
	if !ok {
		return nil, nil // the state view is the current model's
	}
	last := tr.Steps[len(tr.Steps)-1].State.(spec.State)
	v := newView(p)
	v.load(&last)
	x := &explainer{env: e, a: checked.NativeRep(), src: viewSource{v: v, rows: p.Rows(&last)}, seen: map[string]bool{}, cache: map[int64]evalResult{}}
	val := x.explain(x.a.Expr(), nil, 0)
	if _, ok := val.(types.Bool); !ok {
		return nil, fmt.Errorf("%s: %v", tr.Invariant, val)
	}
	out := &traces.Explanation{Expression: expr, Equivalent: equivalent, Lines: x.lines}
	for _, r := range x.reads {
		out.Reads = append(out.Reads, traces.Var{Name: r, Value: x.src.value(r, 0)})
	}
	return out, nil
}

// explainSource is the state an explainer evaluates against.
type explainSource interface {
	// programOptions are the options of a program evaluated against it
	// (the helpers' implementations).
	programOptions() []cel.ProgramOption
	// activation is the state's names; while it is in use (until done
	// is called), every name read is noted in rec.
	activation(rec *recorder) (act interpreter.Activation, done func())
	// value is the value of what a read names, as text, shortened to
	// about max characters where the source has no row of its own.
	value(name string, max int) string
	// bindingTypes are the types of comprehension comp's variables
	// over its range rng; ok is false when they are not known.
	bindingTypes(x *explainer, comp ast.ComprehensionExpr, rng ref.Val) (t1, t2 *types.Type, ok bool)
	// describe renders a comprehension's value variable v at key k of
	// the range rangeText.
	describe(rangeText string, k, v ref.Val) string
}

// viewSource is the typed view of the current model: reads are its
// state-table rows (Rows), shown whole.
type viewSource struct {
	v    *view
	rows []traces.Var
}

func (s viewSource) programOptions() []cel.ProgramOption { return []cel.ProgramOption{s.v.bindings()} }

func (s viewSource) activation(rec *recorder) (interpreter.Activation, func()) {
	s.v.rec = rec
	return s.v, func() { s.v.rec = nil }
}

func (s viewSource) value(name string, _ int) string {
	for _, v := range s.rows {
		if v.Name == name {
			return v.Value
		}
	}
	return "?"
}

func (s viewSource) bindingTypes(x *explainer, comp ast.ComprehensionExpr, _ ref.Val) (*types.Type, *types.Type, bool) {
	rt := x.a.GetType(comp.IterRange().ID())
	if rt == nil {
		return nil, nil, false
	}
	t1, t2 := iterTypes(rt, comp.HasIterVar2())
	return t1, t2, t1 != nil
}

func (s viewSource) describe(rangeText string, k, v ref.Val) string {
	if v == nil {
		return formatVal(k)
	}
	return describe(rangeText, k, v)
}

// leafValueMax bounds a value a leaf line shows (sources without rows).
const leafValueMax = 80

// text prints e back as CEL.
func (x *explainer) text(e ast.Expr) string {
	s, err := cel.ExprToString(e, x.a.SourceInfo())
	if err != nil {
		return "(?)"
	}
	return s
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > explainMaxText {
		return s[:explainMaxText-3] + "..."
	}
	return s
}

// eval evaluates e with the bindings and returns its value and the rows
// it read.
func (x *explainer) eval(e ast.Expr, binds []binding) (ref.Val, []string) {
	if len(binds) == 0 {
		if r, ok := x.cache[e.ID()]; ok {
			return r.val, r.reads
		}
	}
	val, reads := x.evalOnce(e, binds)
	if len(binds) == 0 {
		x.cache[e.ID()] = evalResult{val, reads}
	}
	return val, reads
}

type evalResult struct {
	val   ref.Val
	reads []string
}

func (x *explainer) evalOnce(e ast.Expr, binds []binding) (ref.Val, []string) {
	x.evals++
	if x.evals > explainMaxEvals {
		return types.NewErr("explanation too long"), nil
	}
	env := x.env
	var opts []cel.EnvOption
	vals := map[string]any{}
	for _, b := range binds {
		opts = append(opts, cel.Variable(b.name, b.t))
		vals[b.name] = b.val
	}
	if len(opts) > 0 {
		var err error
		if env, err = env.Extend(opts...); err != nil {
			return types.NewErr("%v", err), nil
		}
	}
	checked, iss := env.Compile(x.text(e))
	if iss != nil && iss.Err() != nil {
		return types.NewErr("%v", iss.Err()), nil
	}
	prg, err := env.Program(checked, append(x.src.programOptions(), cel.CostLimit(explainCostLimit))...)
	if err != nil {
		return types.NewErr("%v", err), nil
	}
	act, err := interpreter.NewActivation(vals)
	if err != nil {
		return types.NewErr("%v", err), nil
	}
	rec := &recorder{}
	state, done := x.src.activation(rec)
	out, _, err := prg.Eval(interpreter.NewHierarchicalActivation(state, act))
	done()
	if err != nil && out == nil {
		out = types.NewErr("%v", err)
	}
	return out, rec.names
}

// note adds rows to the explanation's reads.
func (x *explainer) note(reads []string) {
	for _, r := range reads {
		if !x.seen[r] {
			x.seen[r] = true
			x.reads = append(x.reads, r)
		}
	}
}

func (x *explainer) line(depth int, format string, args ...any) {
	x.lines = append(x.lines, strings.Repeat("  ", depth)+fmt.Sprintf(format, args...))
}

// leaf records e's value and what it read.
func (x *explainer) leaf(e ast.Expr, binds []binding, depth int) ref.Val {
	val, reads := x.eval(e, binds)
	x.note(reads)
	var shown []string
	for _, r := range reads {
		shown = append(shown, r+" = "+x.src.value(r, leafValueMax))
	}
	msg := fmt.Sprintf("%s is %s", short(x.text(e)), verdictText(val))
	if len(shown) > 0 {
		msg += ": " + strings.Join(shown, ", ")
	}
	x.line(depth, "%s", msg)
	return val
}

func verdictText(v ref.Val) string {
	switch v {
	case types.True:
		return "true"
	case types.False:
		return "false"
	}
	if err, ok := v.(*types.Err); ok {
		return "an error (" + err.Error() + ")"
	}
	return formatVal(v)
}

// explain explains e's value (evaluated here) and returns it.
func (x *explainer) explain(e ast.Expr, binds []binding, depth int) ref.Val {
	if e.Kind() == ast.CallKind {
		call := e.AsCall()
		args := call.Args()
		switch call.FunctionName() {
		case "_&&_", "_||_":
			decisive := types.False
			if call.FunctionName() == "_||_" {
				decisive = types.True
			}
			val, _ := x.eval(e, binds)
			if _, ok := val.(types.Bool); !ok {
				return x.leaf(e, binds, depth)
			}
			// Flatten a chain of the same operator.
			ops := x.operands(e, call.FunctionName())
			var decide []ast.Expr
			if val == decisive {
				for _, op := range ops {
					if v, _ := x.eval(op, binds); v == decisive {
						decide = append(decide, op)
					}
				}
			} else {
				decide = ops
			}
			if len(ops) > 1 {
				x.line(depth, "%s is %s, since:", short(x.text(e)), verdictText(val))
				depth++
			}
			for _, op := range decide {
				x.explain(op, binds, depth)
			}
			return val
		case "!_":
			val, _ := x.eval(e, binds)
			if _, ok := val.(types.Bool); !ok || len(args) != 1 {
				return x.leaf(e, binds, depth)
			}
			x.line(depth, "%s is %s, since:", short(x.text(e)), verdictText(val))
			x.explain(args[0], binds, depth+1)
			return val
		case "_?_:_":
			cond, _ := x.eval(args[0], binds)
			if cond != types.True && cond != types.False {
				return x.leaf(e, binds, depth)
			}
			val, _ := x.eval(e, binds)
			x.line(depth, "%s is %s, since:", short(x.text(e)), verdictText(val))
			x.explain(args[0], binds, depth+1)
			if cond == types.True {
				return x.explain(args[1], binds, depth+1)
			}
			return x.explain(args[2], binds, depth+1)
		}
	}
	if e.Kind() == ast.ComprehensionKind {
		if val, ok := x.quantified(e, binds, depth); ok {
			return val
		}
	}
	return x.leaf(e, binds, depth)
}

func (x *explainer) operands(e ast.Expr, op string) []ast.Expr {
	if e.Kind() == ast.CallKind && e.AsCall().FunctionName() == op && len(e.AsCall().Args()) == 2 {
		args := e.AsCall().Args()
		return append(x.operands(args[0], op), x.operands(args[1], op)...)
	}
	return []ast.Expr{e}
}

// quantified explains an all() that is false or an exists() that is true
// by the elements that decide it.
func (x *explainer) quantified(e ast.Expr, binds []binding, depth int) (ref.Val, bool) {
	comp := e.AsComprehension()
	pred, decisive, ok := quantifier(comp)
	if !ok {
		return nil, false
	}
	val, _ := x.eval(e, binds)
	if val != boolVal(decisive) {
		return nil, false // every element agrees, or an error: a leaf
	}
	rng, rangeReads := x.eval(comp.IterRange(), binds)
	if isErr(rng) {
		return nil, false
	}
	t1, t2, ok := x.src.bindingTypes(x, comp, rng)
	if !ok {
		return nil, false
	}
	rangeText := short(x.text(comp.IterRange()))
	var found [][]binding
	iterate(rng, comp.HasIterVar2(), func(k, v ref.Val) bool {
		bs := append(append([]binding(nil), binds...), binding{name: comp.IterVar(), t: t1, val: k, desc: comp.IterVar() + " = " + x.src.describe("", k, nil)})
		if comp.HasIterVar2() {
			bs = append(bs, binding{name: comp.IterVar2(), t: t2, val: v, desc: comp.IterVar2() + " = " + x.src.describe(rangeText, k, v)})
		}
		if pv, _ := x.eval(pred, bs); pv == boolVal(decisive) {
			found = append(found, bs)
		}
		return len(found) < explainMaxFailing && (!decisive || len(found) == 0)
	})
	if len(found) == 0 {
		return nil, false
	}
	// What the range reads decides which elements there are.
	x.note(rangeReads)
	what := "fails for"
	if decisive {
		what = "holds for"
	}
	x.line(depth, "%s is %s: it %s", short(x.text(e)), verdictText(val), what)
	for _, bs := range found {
		var descs []string
		for _, b := range bs[len(binds):] {
			descs = append(descs, b.desc)
		}
		x.line(depth+1, "%s:", strings.Join(descs, ", "))
		x.explain(pred, bs, depth+2)
	}
	return val, true
}

// describe renders the value variable of a two-variable comprehension:
// rangeText[key], which reads better than the value itself.
func describe(rangeText string, k, v ref.Val) string {
	if _, ok := v.(*rec); ok {
		return rangeText + "[" + formatVal(k) + "]"
	}
	return formatVal(v)
}

// iterTypes are the types of a comprehension's variables over a range of
// type t.
func iterTypes(t *types.Type, two bool) (*types.Type, *types.Type) {
	params := t.Parameters()
	switch t.Kind() {
	case types.ListKind:
		if len(params) != 1 {
			return nil, nil
		}
		if two {
			return types.IntType, params[0]
		}
		return params[0], nil
	case types.MapKind:
		if len(params) != 2 {
			return nil, nil
		}
		return params[0], params[1]
	}
	return nil, nil
}

// CheckTrace confirms that the last state of tr has its property's verdict
// and that no earlier state already has it (for a CEL property: the trace
// records its kind and expression): an invariant is false at the end
// only, a terminal property false at the end; an eventually Q false in
// every state, a P ~> Q true on P in some state from which Q is false to
// the end; a probe true at the end only (a shortest witness). Replay calls
// it; the trace may come from a file, so evaluation runs under limits.
func CheckTrace(tr *traces.Trace) (step int, err error) {
	kind, ok := KindByName(tr.Kind)
	if !ok {
		return 0, fmt.Errorf("unknown property kind %q", tr.Kind)
	}
	name := tr.Invariant
	if err := checkName(name); err != nil {
		return 0, err
	}
	d, err := Parse(kind, name+"="+tr.Expression)
	if err != nil {
		return 0, err
	}
	// The current model's typed view, or any model's ITF values.
	var props []*Property
	var ev StateEvaluator
	if p, ok := spec.ParamsOf(tr.Model); ok {
		set, err := Compile(p, []Def{d})
		if err != nil {
			return 0, err
		}
		if ev, err = set.newEvaluator(explainCostLimit); err != nil {
			return 0, err
		}
		props = set.Props
	} else {
		set, err := CompileModel(tr.Model, []Def{d})
		if err != nil {
			return 0, err
		}
		if ev, err = set.newEvaluator(explainCostLimit); err != nil {
			return 0, err
		}
		props = set.Props
	}
	owed := props[0].Trigger < 0 // plain eventually: owed from the start
	for i := range tr.Steps {
		ev.LoadState(tr.Steps[i].State)
		holds, err := ev.Holds(0)
		if err != nil {
			return i + 1, err
		}
		last := i == len(tr.Steps)-1
		switch kind {
		case Eventually:
			if t := props[0].Trigger; t >= 0 && !holds {
				trig, err := ev.Holds(t)
				if err != nil {
					return i + 1, err
				}
				owed = owed || trig
			}
			if holds && owed {
				return i + 1, errors.New(name + " is satisfied here")
			}
			if holds {
				owed = false
			}
			if last && !owed {
				return i + 1, errors.New(name + " is owed nowhere on the trace")
			}
		case Probe:
			if holds && !last {
				return i + 1, errors.New(name + " already holds here, before the end of the trace")
			}
			if !holds && last {
				return i + 1, errors.New(name + " does not hold in the last state")
			}
		case Invariant, Terminal:
			if !holds && !last && kind == Invariant {
				return i + 1, errors.New(name + " already fails here, before the end of the trace")
			}
			if holds && last {
				return i + 1, errors.New(name + " holds in the last state")
			}
		}
	}
	return 0, nil
}
