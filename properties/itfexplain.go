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

// Explaining a verdict in the ITF view: the walk of ExplainExpr (explain.go)
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
// why Q is false. Evaluation runs under the limits of ExplainExpr.
func (set *ITFSet) Explain(i int, state map[string]any) (*traces.Explanation, error) {
	if i < 0 || i >= len(set.Props) {
		return nil, fmt.Errorf("properties: no property %d", i)
	}
	pr := set.Props[i]
	act := &itfActivation{set: set}
	act.load(state)
	val, out := ExplainExpr(set.env, pr.ast.NativeRep(), itfSource{act}, itfMaxValue)
	if _, ok := val.(types.Bool); !ok {
		return nil, fmt.Errorf("%s: %s", pr.Name, verdictText(val))
	}
	_, expr, _ := SplitLeadsTo(pr.Expr)
	if pr.Kind == trigger {
		expr = pr.Expr
	}
	out.Expression = strings.TrimSpace(expr)
	return out, nil
}

// itfSource is the ITF view: reads are whole variables, shown as values.
type itfSource struct{ act *itfActivation }

// ProgramOptions implements ExplainSource: the ITF view has no helper
// that reads the state.
func (s itfSource) ProgramOptions() []cel.ProgramOption { return nil }

// Activation implements ExplainSource.
func (s itfSource) Activation(rec *Recorder) (interpreter.Activation, func()) {
	s.act.note = rec.Note
	return s.act, func() { s.act.note = nil }
}

// Value is variable name's value as text, at most max characters.
func (s itfSource) Value(name string, max int) string {
	v, _ := s.act.ResolveName(name)
	rv, ok := v.(ref.Val)
	if !ok {
		return "?"
	}
	str := FormatVal(rv)
	if max > 0 && len(str) > max {
		str = str[:max-3] + "..."
	}
	return str
}

// BindingTypes implements ExplainSource: the variables are dyn (an index
// of a list is an int).
func (s itfSource) BindingTypes(_ *ast.AST, comp ast.ComprehensionExpr, rng ref.Val) (*types.Type, *types.Type, bool) {
	t1 := types.DynType
	if _, isList := rng.(traits.Lister); isList && comp.HasIterVar2() {
		t1 = types.IntType
	}
	return t1, types.DynType, true
}

// Describe implements ExplainSource.
func (s itfSource) Describe(rangeText string, k, v ref.Val) string {
	return itfDescribe(rangeText, k, v)
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
			return rangeText + "[" + FormatVal(k) + "]"
		}
	}
	return short(FormatVal(v))
}
