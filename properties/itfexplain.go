package properties

import (
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"

	"github.com/bkcheck/bkcheck/traces"
)

// Explaining a verdict in the ITF view: the walk of Explain (explain.go)
// — a false && by its false operands, a false all() by the elements it
// fails for, ... — over an ITF state. The reads are the variables the
// deciding parts read (whole variables: the ITF view does not know the
// model's state table), with their values.

// itfMaxValue bounds a variable's value as an explanation shows it.
const itfMaxValue = 400

// Explain says why property i of set has its value on state (an ITF
// state, as Load takes): for an invariant or terminal property that
// fails, why it fails; for a probe that holds, why it holds; for the goal
// Q of an eventually property (P ~> Q: property i is Q, its trigger P),
// why Q is false. Evaluation runs under the limits of Explain.
func (set *ITFSet) Explain(i int, state map[string]any) (*traces.Explanation, error) {
	if i < 0 || i >= len(set.Props) {
		return nil, fmt.Errorf("properties: no property %d", i)
	}
	pr := set.Props[i]
	x := &itfExplainer{set: set, a: pr.ast.NativeRep(), act: &itfActivation{set: set}, seen: map[string]bool{}, cache: map[int64]evalResult{}}
	x.act.load(state)
	val := x.explain(x.a.Expr(), nil, 0)
	if _, ok := val.(types.Bool); !ok {
		return nil, fmt.Errorf("%s: %s", pr.Name, verdictText(val))
	}
	_, expr, _ := SplitLeadsTo(pr.Expr)
	if pr.Kind == trigger {
		expr = pr.Expr
	}
	out := &traces.Explanation{Expression: strings.TrimSpace(expr), Lines: x.lines}
	for _, r := range x.reads {
		out.Reads = append(out.Reads, traces.Var{Name: r, Value: x.value(r, itfMaxValue)})
	}
	return out, nil
}

type itfExplainer struct {
	set   *ITFSet
	a     *ast.AST
	act   *itfActivation
	lines []string
	reads []string
	seen  map[string]bool
	evals int
	cache map[int64]evalResult
}

// value is variable name's value as text, at most max characters.
func (x *itfExplainer) value(name string, max int) string {
	v, _ := x.act.ResolveName(name)
	rv, ok := v.(ref.Val)
	if !ok {
		return "?"
	}
	s := formatVal(rv)
	if len(s) > max {
		s = s[:max-3] + "..."
	}
	return s
}

func (x *itfExplainer) text(e ast.Expr) string {
	s, err := cel.ExprToString(e, x.a.SourceInfo())
	if err != nil {
		return "(?)"
	}
	return s
}

func (x *itfExplainer) eval(e ast.Expr, binds []binding) (ref.Val, []string) {
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

func (x *itfExplainer) evalOnce(e ast.Expr, binds []binding) (ref.Val, []string) {
	x.evals++
	if x.evals > explainMaxEvals {
		return types.NewErr("explanation too long"), nil
	}
	env := x.set.env
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
	prg, err := env.Program(checked, cel.CostLimit(explainCostLimit))
	if err != nil {
		return types.NewErr("%v", err), nil
	}
	act, err := interpreter.NewActivation(vals)
	if err != nil {
		return types.NewErr("%v", err), nil
	}
	rec := &recorder{}
	x.act.note = rec.note
	out, _, err := prg.Eval(interpreter.NewHierarchicalActivation(x.act, act))
	x.act.note = nil
	if err != nil && out == nil {
		out = types.NewErr("%v", err)
	}
	return out, rec.names
}

func (x *itfExplainer) note(reads []string) {
	for _, r := range reads {
		if !x.seen[r] {
			x.seen[r] = true
			x.reads = append(x.reads, r)
		}
	}
}

func (x *itfExplainer) line(depth int, format string, args ...any) {
	x.lines = append(x.lines, strings.Repeat("  ", depth)+fmt.Sprintf(format, args...))
}

func (x *itfExplainer) leaf(e ast.Expr, binds []binding, depth int) ref.Val {
	val, reads := x.eval(e, binds)
	x.note(reads)
	var shown []string
	for _, r := range reads {
		shown = append(shown, r+" = "+x.value(r, 80))
	}
	msg := fmt.Sprintf("%s is %s", short(x.text(e)), verdictText(val))
	if len(shown) > 0 {
		msg += ": " + strings.Join(shown, ", ")
	}
	x.line(depth, "%s", msg)
	return val
}

// explain is explainer.explain over the ITF view.
func (x *itfExplainer) explain(e ast.Expr, binds []binding, depth int) ref.Val {
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

func (x *itfExplainer) operands(e ast.Expr, op string) []ast.Expr {
	if e.Kind() == ast.CallKind && e.AsCall().FunctionName() == op && len(e.AsCall().Args()) == 2 {
		args := e.AsCall().Args()
		return append(x.operands(args[0], op), x.operands(args[1], op)...)
	}
	return []ast.Expr{e}
}

// quantified is explainer.quantified over the ITF view: the comprehension
// variables are dyn (an index of a list is an int).
func (x *itfExplainer) quantified(e ast.Expr, binds []binding, depth int) (ref.Val, bool) {
	comp := e.AsComprehension()
	pred, decisive, ok := quantifier(comp)
	if !ok {
		return nil, false
	}
	val, _ := x.eval(e, binds)
	if val != boolVal(decisive) {
		return nil, false
	}
	rng, rangeReads := x.eval(comp.IterRange(), binds)
	if isErr(rng) {
		return nil, false
	}
	t1, t2 := types.DynType, types.DynType
	if _, isList := rng.(traits.Lister); isList && comp.HasIterVar2() {
		t1 = types.IntType
	}
	rangeText := short(x.text(comp.IterRange()))
	var found [][]binding
	iterate(rng, comp.HasIterVar2(), func(k, v ref.Val) bool {
		bs := append(append([]binding(nil), binds...), binding{name: comp.IterVar(), t: t1, val: k, desc: comp.IterVar() + " = " + itfDescribe("", k, nil)})
		if comp.HasIterVar2() {
			bs = append(bs, binding{name: comp.IterVar2(), t: t2, val: v, desc: comp.IterVar2() + " = " + itfDescribe(rangeText, k, v)})
		}
		if pv, _ := x.eval(pred, bs); pv == boolVal(decisive) {
			found = append(found, bs)
		}
		return len(found) < explainMaxFailing && (!decisive || len(found) == 0)
	})
	if len(found) == 0 {
		return nil, false
	}
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

// itfDescribe renders a comprehension variable: an aggregate value of
// rangeText[key] as that, which reads better than the value itself;
// anything else (and the key) as its value, shortened.
func itfDescribe(rangeText string, k, v ref.Val) string {
	if v == nil {
		v = k
	} else {
		switch v.(type) {
		case traits.Mapper, traits.Lister:
			return rangeText + "[" + formatVal(k) + "]"
		}
	}
	return short(formatVal(v))
}
