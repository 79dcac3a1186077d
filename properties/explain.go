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

// CostLimit bounds, in CEL cost units, one evaluation of an expression
// read from a file (a trace's): each of an explanation's
// sub-evaluations, and each evaluation of CheckTrace (TypeOK costs about
// 300 on a state). A view's evaluator for such expressions runs every
// evaluation through cel-go under it.
const CostLimit = 1_000_000

// Limits on the work one explanation does.
const (
	explainMaxEvals   = 400 // sub-evaluations per explanation
	explainMaxFailing = 3   // elements shown for a failing all()
	explainMaxText    = 120 // characters of an expression shown on a line
)

// binding is a comprehension variable bound while explaining.
type binding struct {
	name string
	t    *types.Type
	val  ref.Val
	desc string // how it reads in a line: c = clients["c1"]
}

// explainer walks a property's checked AST over one state. What it
// evaluates against is its source: a model's typed view (the current
// model's: specprops.Explain), or the ITF values of any model
// (itfexplain.go).
type explainer struct {
	env   *cel.Env
	a     *ast.AST
	src   ExplainSource
	lines []string
	reads []string
	seen  map[string]bool
	evals int
	cache map[int64]evalResult // values of expressions without bindings
}

// ExplainExpr explains the value of the checked expression a of env on
// the state of src: the lines of the explanation and what the deciding
// parts read, each with its value (src.Value, at most valueMax
// characters where it has no row of its own). val is the expression's
// value; the explanation is only meaningful when it is a bool.
func ExplainExpr(env *cel.Env, a *ast.AST, src ExplainSource, valueMax int) (val ref.Val, ex *traces.Explanation) {
	x := &explainer{env: env, a: a, src: src, seen: map[string]bool{}, cache: map[int64]evalResult{}}
	val = x.explain(x.a.Expr(), nil, 0)
	ex = &traces.Explanation{Lines: x.lines}
	for _, r := range x.reads {
		ex.Reads = append(ex.Reads, traces.Var{Name: r, Value: x.src.Value(r, valueMax)})
	}
	return val, ex
}

// ExplainSource is the state an explainer evaluates against: a view.
type ExplainSource interface {
	// ProgramOptions are the options of a program evaluated against it
	// (the helpers' implementations).
	ProgramOptions() []cel.ProgramOption
	// Activation is the state's names; while it is in use (until done
	// is called), every name read is noted in rec.
	Activation(rec *Recorder) (act interpreter.Activation, done func())
	// Value is the value of what a read names, as text, shortened to
	// about max characters where the source has no row of its own.
	Value(name string, max int) string
	// BindingTypes are the types of comprehension comp's variables (of
	// the checked expression a) over its range rng; ok is false when
	// they are not known.
	BindingTypes(a *ast.AST, comp ast.ComprehensionExpr, rng ref.Val) (t1, t2 *types.Type, ok bool)
	// Describe renders a comprehension's value variable v at key k of
	// the range rangeText (v nil: the key variable k).
	Describe(rangeText string, k, v ref.Val) string
}

// Recorder notes the names (state-table rows, variables) an evaluation
// reads, in order.
type Recorder struct {
	seen  map[string]bool
	names []string
}

// Note records that name is read.
func (r *Recorder) Note(name string) {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if !r.seen[name] {
		r.seen[name] = true
		r.names = append(r.names, name)
	}
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

// short is s on one line, shortened to what an explanation's line shows.
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
	prg, err := env.Program(checked, append(x.src.ProgramOptions(), cel.CostLimit(CostLimit))...)
	if err != nil {
		return types.NewErr("%v", err), nil
	}
	act, err := interpreter.NewActivation(vals)
	if err != nil {
		return types.NewErr("%v", err), nil
	}
	rec := &Recorder{}
	state, done := x.src.Activation(rec)
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
		shown = append(shown, r+" = "+x.src.Value(r, leafValueMax))
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
	return FormatVal(v)
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
	pred, decisive, ok := Quantifier(comp)
	if !ok {
		return nil, false
	}
	val, _ := x.eval(e, binds)
	if val != types.Bool(decisive) {
		return nil, false // every element agrees, or an error: a leaf
	}
	rng, rangeReads := x.eval(comp.IterRange(), binds)
	if IsErr(rng) {
		return nil, false
	}
	t1, t2, ok := x.src.BindingTypes(x.a, comp, rng)
	if !ok {
		return nil, false
	}
	rangeText := short(x.text(comp.IterRange()))
	var found [][]binding
	Iterate(rng, comp.HasIterVar2(), func(k, v ref.Val) bool {
		bs := append(append([]binding(nil), binds...), binding{name: comp.IterVar(), t: t1, val: k, desc: comp.IterVar() + " = " + x.src.Describe("", k, nil)})
		if comp.HasIterVar2() {
			bs = append(bs, binding{name: comp.IterVar2(), t: t2, val: v, desc: comp.IterVar2() + " = " + x.src.Describe(rangeText, k, v)})
		}
		if pv, _ := x.eval(pred, bs); pv == types.Bool(decisive) {
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

// TraceSet is a compiled set CheckTrace evaluates.
type TraceSet interface {
	// Properties are the compiled properties (PropertySet.Properties).
	Properties() []*Property
	// NewTraceEvaluator prepares an evaluator for expressions read from
	// files: every evaluation through cel-go, under CostLimit.
	NewTraceEvaluator() (StateEvaluator, error)
}

// CheckTrace confirms that the last state of tr has its property's verdict
// and that no earlier state already has it (for a CEL property: the trace
// records its kind and expression): an invariant is false at the end
// only, a terminal property false at the end; an eventually Q false in
// every state, a P ~> Q true on P in some state from which Q is false to
// the end; a probe true at the end only (a shortest witness). Replay calls
// it; the trace may come from a file, so evaluation runs under limits.
// compile compiles the property (its one definition) in the view of the
// trace's model: a typed view's (specprops.CheckTrace); nil compiles it
// in the ITF view of tr.Model (CompileModel).
func CheckTrace(tr *traces.Trace, compile func(d Def) (TraceSet, error)) (step int, err error) {
	kind, name, props, ev, err := traceProperty(tr, compile)
	if err != nil {
		return 0, err
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

// traceProperty compiles the property a trace records (CheckTrace).
func traceProperty(tr *traces.Trace, compile func(d Def) (TraceSet, error)) (Kind, string, []*Property, StateEvaluator, error) {
	kind, ok := KindByName(tr.Kind)
	if !ok {
		return 0, "", nil, nil, fmt.Errorf("unknown property kind %q", tr.Kind)
	}
	name := tr.Invariant
	if err := CheckName(name); err != nil {
		return 0, "", nil, nil, err
	}
	d, err := Parse(kind, name+"="+tr.Expression)
	if err != nil {
		return 0, "", nil, nil, err
	}
	if compile == nil {
		compile = func(d Def) (TraceSet, error) { return CompileModel(tr.Model, []Def{d}) }
	}
	set, err := compile(d)
	if err != nil {
		return 0, "", nil, nil, err
	}
	ev, err := set.NewTraceEvaluator()
	if err != nil {
		return 0, "", nil, nil, err
	}
	return kind, name, set.Properties(), ev, nil
}

// OwedFrom returns the step (1-based) of tr, the counterexample of a
// leads-to property P ~> Q, at which Q became owed for good: the step
// where P held and Q did not, after which Q holds at no step. 0 when tr
// is not the trace of a leads-to property or owes nothing. compile is as
// for CheckTrace.
func OwedFrom(tr *traces.Trace, compile func(d Def) (TraceSet, error)) (int, error) {
	if tr.Kind != Eventually.String() {
		return 0, nil
	}
	_, _, props, ev, err := traceProperty(tr, compile)
	if err != nil {
		return 0, err
	}
	trigger := props[0].Trigger
	if trigger < 0 {
		return 0, nil // a plain eventually Q is owed from the start
	}
	from := 0
	for i := range tr.Steps {
		ev.LoadState(tr.Steps[i].State)
		holds, err := ev.Holds(0)
		if err != nil {
			return 0, err
		}
		if holds {
			from = 0
			continue
		}
		if from == 0 {
			trig, err := ev.Holds(trigger)
			if err != nil {
				return 0, err
			}
			if trig {
				from = i + 1
			}
		}
	}
	return from, nil
}
