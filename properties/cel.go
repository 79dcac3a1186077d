package properties

import (
	"errors"
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"

	"github.com/bkcheck/bkcheck/schema"
)

// What every view shares: compiled properties, the sets a run checks and
// their evaluators, the CEL environment's extensions, the checking of one
// expression and the helper seq. A view is the ITF view (itfview.go), for
// any model, or a model's typed view of its own state (the current
// model's: package spec/specprops).

// Property is a compiled property.
type Property struct {
	Def
	ast *cel.Ast
	// Trigger is, for an eventually P ~> Q, the index in the set of P's
	// property (this one evaluates Q); -1 otherwise.
	Trigger int
}

// User reports whether p is one of the user's properties (not the left
// side of a P ~> Q, which a set keeps after them).
func (p *Property) User() bool { return p.Kind != trigger }

// AST is the property's checked expression.
func (p *Property) AST() *cel.Ast { return p.ast }

// PropertySet is what a run needs of its compiled properties, whichever
// view compiled them: the current model's typed view (specprops.Set) or
// the ITF view (*ITFSet).
type PropertySet interface {
	// Properties are the compiled properties: the user's, then the left
	// sides of P ~> Q (a Property's Trigger indexes this list).
	Properties() []*Property
	// Names lists the user's properties' names in order.
	Names() []string
	// Index is the position of the property named name, or -1.
	Index(name string) int
	// NewStateEvaluator prepares an evaluator for one goroutine.
	NewStateEvaluator() (StateEvaluator, error)
}

// StateEvaluator evaluates a PropertySet on a model's states: a typed
// view's evaluator its model's (the current model's reads a *spec.State
// in place), an *ITFEvaluator of CompileModel its model's, as the model's
// vocab.Model takes them.
type StateEvaluator interface {
	// LoadState makes state the one Holds evaluates.
	LoadState(state any)
	// Holds evaluates property i on the loaded state. An evaluation
	// error is returned as such (a run counts it as not holding).
	Holds(i int) (bool, error)
}

// CompileDefs compiles every definition (a P ~> Q as its goal Q, and its
// trigger P after the user's properties, Trigger indexing it): compile
// parses and checks one expression of d. Every problem is reported at
// once, a schema.Problems naming each definition's setting.
func CompileDefs(defs []Def, compile func(d Def, expr string) (*cel.Ast, error)) ([]*Property, error) {
	var probs schema.Problems
	var props, triggers []*Property
	for _, d := range defs {
		trig, goal, leadsTo := SplitLeadsTo(d.Expr)
		a, err := compile(d, goal)
		if err != nil {
			probs.Add(settingOf(d.Kind), "%v", err)
			continue
		}
		pr := &Property{Def: d, ast: a, Trigger: -1}
		if leadsTo {
			td := Def{Name: d.Name, Kind: trigger, Expr: trig}
			ta, err := compile(td, trig)
			if err != nil {
				probs.Add(settingOf(d.Kind), "%v", err)
				continue
			}
			pr.Trigger = len(triggers) // made an index into props below
			triggers = append(triggers, &Property{Def: td, ast: ta, Trigger: -1})
		}
		props = append(props, pr)
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	for _, pr := range props {
		if pr.Trigger >= 0 {
			pr.Trigger += len(props)
		}
	}
	return append(props, triggers...), nil
}

// trigger is the kind of the left side of an eventually P ~> Q, kept
// after the user's properties in a set.
const trigger Kind = 100

// Names lists the names of the user's properties among props, in order.
func Names(props []*Property) []string {
	var out []string
	for _, p := range props {
		if p.User() {
			out = append(out, p.Name)
		}
	}
	return out
}

// Index is the position in props of the property named name, or -1.
func Index(props []*Property, name string) int {
	for i, p := range props {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// EnvOptions are the CEL extensions of every view, those a TLA+ user
// reaches for: two-variable comprehensions (clients.all(id, c, ...)),
// list and set functions (sets.contains, lists.range, ...), strings and
// cel.bind; with macro call tracking (explanations print sub-expressions
// back) and a bound on an expression's size.
func EnvOptions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.EnableMacroCallTracking(),
		ext.TwoVarComprehensions(), ext.Lists(ext.ListsMaxRangeSize(1 << 16)), ext.Sets(), ext.Strings(), ext.Bindings(),
		cel.ParserExpressionSizeLimit(16 << 10),
	}
}

// CheckExpr parses and checks one expression in e, named name in its
// errors: each of CEL's messages (position and what was expected) with
// hint's addition to it (what the view offers).
func CheckExpr(e *cel.Env, name, expr string, hint func(msg string) string) (*cel.Ast, common.Source, error) {
	src := common.NewStringSource(expr, name)
	checked, iss := e.CompileSource(src)
	if iss != nil && iss.Err() != nil {
		var msgs []string
		for _, er := range iss.Errors() {
			msgs = append(msgs, strings.TrimPrefix(er.ToDisplayString(src), "ERROR: ")+hint(er.Message))
		}
		return nil, src, errors.New(strings.Join(msgs, "\n"))
	}
	return checked, src, nil
}

// NotBool is the error of the expression name whose type t is not a
// property's.
func NotBool(name string, t *types.Type) error {
	tn := TypeName(t)
	article := "a"
	if strings.IndexByte("aeiou", tn[0]) >= 0 {
		article = "an"
	}
	return fmt.Errorf("%s:1:1: the expression is %s %s; a property is a bool (true where it holds)", name, article, tn)
}

// TypeName renders a CEL type as a user writes about it.
func TypeName(t *types.Type) string {
	return strings.ReplaceAll(t.String(), "bkcheck.", "")
}

// ParamName is a setting's name as a CEL field: write-quorum -> write_quorum.
func ParamName(setting string) string { return strings.ReplaceAll(setting, "-", "_") }

// EditDistance is the Levenshtein distance of a and b.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// SeqOverload is the overload id of seq(a, b), which every view has.
const SeqOverload = "seq_int_int"

// Seq is seq(a, b): the integers a..b in order (TLA+'s a..b; empty when
// b < a), a list that reads no state.
func Seq(a, b ref.Val) ref.Val {
	lo, ok1 := a.(types.Int)
	hi, ok2 := b.(types.Int)
	if !ok1 || !ok2 {
		return types.NewErr("seq wants two ints")
	}
	if hi-lo > 1<<16 {
		return types.NewErr("seq(%d, %d) is too long", lo, hi)
	}
	return seqList(int(lo), int(hi))
}

// Quantifier recognises the expansion of all (init true, step
// accu && P, result accu) and exists (init false, step accu || P): pred is
// P and decisive the value that ends the loop (false for all, true for
// exists).
func Quantifier(comp ast.ComprehensionExpr) (pred ast.Expr, decisive bool, ok bool) {
	init := comp.AccuInit()
	if init.Kind() != ast.LiteralKind {
		return nil, false, false
	}
	b, isBool := init.AsLiteral().(types.Bool)
	step, res := comp.LoopStep(), comp.Result()
	if !isBool || step.Kind() != ast.CallKind || res.Kind() != ast.IdentKind || res.AsIdent() != comp.AccuVar() {
		return nil, false, false
	}
	call := step.AsCall()
	op := "_&&_"
	if !b {
		op = "_||_"
	}
	args := call.Args()
	if call.FunctionName() != op || len(args) != 2 || args[0].Kind() != ast.IdentKind || args[0].AsIdent() != comp.AccuVar() {
		return nil, false, false
	}
	// The loop condition must be the macro's: @not_strictly_false(accu)
	// for all, @not_strictly_false(!accu) for exists.
	cond := comp.LoopCondition()
	if cond.Kind() != ast.CallKind || cond.AsCall().FunctionName() != "@not_strictly_false" || len(cond.AsCall().Args()) != 1 {
		return nil, false, false
	}
	arg := cond.AsCall().Args()[0]
	if b && !(arg.Kind() == ast.IdentKind && arg.AsIdent() == comp.AccuVar()) {
		return nil, false, false
	}
	if !b && !(arg.Kind() == ast.CallKind && arg.AsCall().FunctionName() == "!_" && len(arg.AsCall().Args()) == 1 &&
		arg.AsCall().Args()[0].Kind() == ast.IdentKind && arg.AsCall().Args()[0].AsIdent() == comp.AccuVar()) {
		return nil, false, false
	}
	return args[1], !bool(b), true
}
