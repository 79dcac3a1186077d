package properties

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"

	"github.com/bkcheck/bkcheck/vocab"
)

// The ITF view: CEL properties over a state given as ITF values (Apalache
// ADR-015, the values of an .itf.json state before json.Marshal or after
// json.Unmarshal), for a model that has no typed view of its own (the
// current model's is package spec/specprops). The model names its
// variables and parameters; nothing else about it is known, so every
// variable is dynamically typed (CEL's dyn): a property is parsed and
// checked before the search (syntax, unknown names, unknown parameters,
// operators applied to literals of the wrong type, a result that cannot
// be a bool), and anything else a typed view
// rejects at compile time (a misspelt field, an int compared with a
// string) is an evaluation error, which counts as the property being
// false, as in the typed view.
//
// Values become CEL values by one rule, applied wherever they occur:
//
//   - integers (Go ints, integral float64s, json.Number, {"#bigint": "n"})
//     are ints; booleans bools; strings strings. Model values stay strings:
//     Nil is "Nil", and so is the constant Nil, so that x == Nil reads the
//     same as in the typed view (where Nil is -1); but an order on a Nil
//     (x > 0) is an evaluation error here, false there;
//   - sequences and tuples ({"#tup": [...]}) are lists; sets
//     ({"#set": [...]}) are lists in the order given;
//   - records (objects) are maps with string keys, in sorted order (r.f
//     reads a field, has(r.f) tells whether the record has it);
//   - functions ({"#map": [[k, v], ...]}) are, when every key is a string,
//     an int or a bool, maps in the order given (f[k], f.all(k, v, ...));
//     when every key is a record and every value an int (a bag, such as
//     the spec's messages: message -> delivery count) and no key record
//     has a field count, the list of the key records, each with a field
//     count (its last) holding its value (as the typed view shows
//     messages); and
//     otherwise the list of records {key: k, value: v}. The empty
//     function is the empty map.
//
// CompileModel takes the variables and parameters from a model's
// vocabulary (package vocab), and its evaluators its states (LoadState).
// Conversion allocates (each variable a property reads is converted once
// per state): this view is for small models; the typed view stays the
// hot path of the current model.

// ITFSet is the compiled properties of one run over ITF states.
type ITFSet struct {
	// Vars are the model's variables, in the order given.
	Vars []string
	// Params are the parameters as given, under the names the view gives
	// them (params.NAME: kebab-case names in snake_case).
	Params map[string]any
	// Props are the compiled properties: the user's in order, then the
	// left sides of P ~> Q properties (PropertySet.Properties).
	Props []*Property

	env     *cel.Env
	params  ref.Val
	isVar   map[string]bool
	withNil bool        // the constant Nil is declared (no variable has the name)
	model   vocab.Model // CompileModel's: how LoadState renders a state
}

var (
	_ PropertySet    = (*ITFSet)(nil)
	_ TraceSet       = (*ITFSet)(nil)
	_ StateEvaluator = (*ITFEvaluator)(nil)
)

// Properties implements PropertySet.
func (set *ITFSet) Properties() []*Property { return set.Props }

// NewStateEvaluator implements PropertySet.
func (set *ITFSet) NewStateEvaluator() (StateEvaluator, error) { return set.NewEvaluator() }

// Names lists the user's properties' names in order.
func (set *ITFSet) Names() []string { return Names(set.Props) }

// Index is the position of the property named name, or -1.
func (set *ITFSet) Index(name string) int { return Index(set.Props, name) }

// celReserved are CEL's reserved words, which cannot name a variable.
var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true, "continue": true,
	"else": true, "for": true, "function": true, "if": true, "import": true, "let": true, "loop": true, "package": true,
	"namespace": true, "return": true, "var": true, "void": true, "while": true,
}

func isCELIdent(name string) bool {
	if name == "" || celReserved[name] {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

// CompileITF parses and checks every property against the ITF view of a
// model with the variables vars (ITF's mbt:: variables, which record the
// action taken, are left out) and the parameters params (kebab-case names
// become snake_case: write-quorum is params.write_quorum). The view has
// the variables, params, the constant Nil ("Nil", unless a variable has
// that name) and seq(a, b). Definitions are taken as a typed view's
// compiler takes them (CompileDefs), and every problem is reported the
// same way: a schema.Problems naming the property's setting, the
// position and what was expected.
func CompileITF(vars []string, params map[string]any, defs []Def) (*ITFSet, error) {
	set := &ITFSet{Params: map[string]any{}, isVar: map[string]bool{}, withNil: true}
	for _, v := range vars {
		switch {
		case strings.HasPrefix(v, "mbt::"):
			continue
		case !isCELIdent(v):
			return nil, fmt.Errorf("properties: the model's variable %q is not a CEL name", v)
		case v == "params" || v == "seq":
			return nil, fmt.Errorf("properties: the model's variable %q has the name of one of the view's", v)
		case set.isVar[v]:
			return nil, fmt.Errorf("properties: the model's variable %q is given twice", v)
		case v == "Nil":
			set.withNil = false
		}
		set.isVar[v] = true
		set.Vars = append(set.Vars, v)
	}
	pvals := &itfMap{}
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		name := ParamName(k)
		if !isCELIdent(name) {
			return nil, fmt.Errorf("properties: the parameter %q is not a CEL name", k)
		}
		if _, dup := set.Params[name]; dup {
			return nil, fmt.Errorf("properties: the parameter %q is given twice", name)
		}
		v, err := itfVal(params[k])
		if err != nil {
			return nil, fmt.Errorf("properties: the parameter %s: %w", k, err)
		}
		set.Params[name] = params[k]
		pvals.add(types.String(name), v)
	}
	set.params = pvals

	e, err := set.newEnv()
	if err != nil {
		return nil, fmt.Errorf("properties: the CEL environment: %w", err)
	}
	set.env = e
	props, err := CompileDefs(defs, func(d Def, expr string) (*cel.Ast, error) {
		if d.Kind != trigger {
			if err := CheckName(d.Name); err != nil {
				return nil, err
			}
		}
		return set.compileExpr(d.Name, expr)
	})
	if err != nil {
		return nil, err
	}
	set.Props = props
	return set, nil
}

// CompileModel is CompileITF for a model's vocabulary: its variables
// (m.Vars()) and parameters (m.ParamsJSON()). The evaluators of the set
// take the model's states as they are (LoadState), rendered by m.ITF.
func CompileModel(m vocab.Model, defs []Def) (*ITFSet, error) {
	raw, err := m.ParamsJSON()
	if err != nil {
		return nil, fmt.Errorf("properties: the model's parameters: %w", err)
	}
	var params map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&params); err != nil {
		return nil, fmt.Errorf("properties: the model's parameters: %w", err)
	}
	var vars []string
	for _, v := range m.Vars() {
		vars = append(vars, v.Name)
	}
	set, err := CompileITF(vars, params, defs)
	if err != nil {
		return nil, err
	}
	set.model = m
	return set, nil
}

// newEnv is the ITF view's CEL environment: every view's extensions
// (EnvOptions), the model's variables as dyn, params, Nil and seq.
func (set *ITFSet) newEnv() (*cel.Env, error) {
	opts := append(EnvOptions(),
		cel.Variable("params", types.NewMapType(types.StringType, types.DynType)),
		cel.Function("seq", cel.Overload(SeqOverload, []*types.Type{types.IntType, types.IntType}, types.NewListType(types.IntType),
			cel.BinaryBinding(Seq))),
	)
	for _, v := range set.Vars {
		opts = append(opts, cel.Variable(v, types.DynType))
	}
	if set.withNil {
		opts = append(opts, cel.Variable("Nil", types.StringType))
	}
	return cel.NewEnv(opts...)
}

// compileExpr parses and checks one expression of the ITF view: its
// errors name the model's variables and parameters. An expression whose
// type is dyn is accepted (its value must be a bool when evaluated).
func (set *ITFSet) compileExpr(name, expr string) (*cel.Ast, error) {
	checked, src, err := CheckExpr(set.env, name, expr, set.hint)
	if err != nil {
		return nil, err
	}
	if msgs := set.checkParams(src, checked.NativeRep()); len(msgs) > 0 {
		return nil, errors.New(strings.Join(msgs, "\n"))
	}
	if t := checked.OutputType(); !t.IsExactType(types.BoolType) && !t.IsExactType(types.DynType) {
		return nil, NotBool(name, t)
	}
	return checked, nil
}

// checkParams reports params.NAME (and params["NAME"], has(params.NAME))
// for a NAME the run does not have: parameters are known before the
// search, so a misspelt one is a compile-time error, as in the typed view.
func (set *ITFSet) checkParams(src common.Source, a *ast.AST) []string {
	var msgs []string
	isParams := func(e ast.Expr) bool {
		if e.Kind() != ast.IdentKind || e.AsIdent() != "params" {
			return false
		}
		r, ok := a.ReferenceMap()[e.ID()]
		return ok && r.Name == "params" // the variable, not a comprehension's
	}
	report := func(id int64, key string) {
		if _, ok := set.Params[key]; ok {
			return
		}
		loc := a.SourceInfo().GetStartLocation(id)
		msg := fmt.Sprintf("undefined field '%s'", key)
		text := strings.TrimPrefix(common.NewError(id, msg, loc).ToDisplayString(src), "ERROR: ")
		msgs = append(msgs, text+set.paramHint(key))
	}
	ast.PreOrderVisit(a.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		switch e.Kind() {
		case ast.SelectKind:
			if sel := e.AsSelect(); isParams(sel.Operand()) {
				report(e.ID(), sel.FieldName())
			}
		case ast.CallKind:
			call := e.AsCall()
			if call.FunctionName() != "_[_]" || len(call.Args()) != 2 || !isParams(call.Args()[0]) || call.Args()[1].Kind() != ast.LiteralKind {
				return
			}
			if s, ok := call.Args()[1].AsLiteral().(types.String); ok {
				report(call.Args()[1].ID(), string(s))
			}
		}
	}))
	return msgs
}

func (set *ITFSet) paramNames() []string {
	var out []string
	for k := range set.Params {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (set *ITFSet) paramHint(key string) string {
	out, best := "", ""
	for _, k := range set.paramNames() {
		if d := EditDistance(key, k); d < 3 && (best == "" || d < EditDistance(key, best)) {
			best = k
		}
	}
	if best != "" {
		out = fmt.Sprintf(" did you mean '%s'?", best)
	}
	return out + "\n  params has: " + strings.Join(set.paramNames(), ", ")
}

// hint adds what the ITF view offers to CEL's message about a name it
// does not know.
func (set *ITFSet) hint(msg string) string {
	if _, rest, ok := strings.Cut(msg, "undeclared reference to '"); ok {
		name, _, _ := strings.Cut(rest, "'")
		out := ""
		if !strings.Contains(msg, "did you mean") {
			best := ""
			for _, v := range set.viewNames() {
				if d := EditDistance(name, v); d < 3 && (best == "" || d < EditDistance(name, best)) {
					best = v
				}
			}
			if best != "" {
				out = fmt.Sprintf(" (did you mean '%s'?)", best)
			}
		}
		return out + "\n  the model's variables: " + strings.Join(set.Vars, ", ") + "; and " + strings.Join(set.constNames(), ", ") + " (docs/properties.md)"
	}
	if strings.Contains(msg, "found no matching overload") {
		return "\n  (comparisons need equal types: model values such as statuses and Nil are strings)"
	}
	return ""
}

func (set *ITFSet) constNames() []string {
	out := []string{"params"}
	if set.withNil {
		out = append(out, "Nil")
	}
	return append(out, "seq()")
}

func (set *ITFSet) viewNames() []string {
	return append(append([]string(nil), set.Vars...), "params", "Nil", "seq")
}

// ITFEvaluator evaluates an ITFSet on ITF states. It is not safe for
// concurrent use: give each goroutine one.
type ITFEvaluator struct {
	set   *ITFSet
	act   *itfActivation
	progs []cel.Program
}

// NewEvaluator prepares the programs of set for one goroutine.
func (set *ITFSet) NewEvaluator() (*ITFEvaluator, error) { return set.newEvaluator(0) }

// NewTraceEvaluator implements TraceSet.
func (set *ITFSet) NewTraceEvaluator() (StateEvaluator, error) { return set.newEvaluator(CostLimit) }

func (set *ITFSet) newEvaluator(costLimit uint64) (*ITFEvaluator, error) {
	ev := &ITFEvaluator{set: set, act: &itfActivation{set: set}}
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	if costLimit > 0 {
		opts = append(opts, cel.CostLimit(costLimit))
	}
	for _, pr := range set.Props {
		prg, err := set.env.Program(pr.ast, opts...)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", pr.Name, err)
		}
		ev.progs = append(ev.progs, prg)
	}
	return ev, nil
}

// Load makes state (the ITF object of one state: variable -> value) the
// one later calls evaluate. A variable is converted when a property first
// reads it; one the state lacks, or whose value is not ITF, is an
// evaluation error of the properties that read it.
func (ev *ITFEvaluator) Load(state map[string]any) { ev.act.load(state) }

// LoadState is Load for a state of the model of CompileModel, as the
// model has it (its vocab.Model's ITF renders it).
func (ev *ITFEvaluator) LoadState(state any) {
	if ev.set.model == nil {
		panic("properties: LoadState needs a set of CompileModel")
	}
	ev.act.loadModel(ev.set.model, state)
}

// Holds evaluates property i on the loaded state. An evaluation error
// (a missing map key or field, an index out of range, a value that is not
// a bool) is returned as such.
func (ev *ITFEvaluator) Holds(i int) (bool, error) {
	out, _, err := ev.progs[i].Eval(ev.act)
	if err != nil {
		return false, fmt.Errorf("%s: %w", ev.set.Props[i].Name, err)
	}
	switch out {
	case types.True:
		return true, nil
	case types.False:
		return false, nil
	}
	if e, ok := out.(*types.Err); ok {
		return false, fmt.Errorf("%s: %w", ev.set.Props[i].Name, e)
	}
	return false, fmt.Errorf("%s: the expression gave %s, not a bool", ev.set.Props[i].Name, FormatVal(out))
}

// itfActivation resolves the view's names on one state, converting each
// variable once.
type itfActivation struct {
	set   *ITFSet
	state map[string]any
	// model and mstate: a state of the model, whose variables are
	// rendered as ITF values only when a property reads them (state is
	// then nil).
	model  vocab.Model
	mstate any
	vals   map[string]ref.Val
	note   func(name string) // non-nil while explaining: variables read
}

func (a *itfActivation) load(state map[string]any) {
	a.state, a.model, a.mstate = state, nil, nil
	clear(a.vals)
}

// loadModel loads a state of model m, rendered lazily.
func (a *itfActivation) loadModel(m vocab.Model, state any) {
	a.state, a.model, a.mstate = nil, m, state
	clear(a.vals)
}

// raw is variable name's ITF value.
func (a *itfActivation) raw(name string) (any, bool) {
	if a.model != nil {
		return a.model.VarITF(a.mstate, name)
	}
	v, ok := a.state[name]
	return v, ok
}

// ResolveName implements interpreter.Activation.
func (a *itfActivation) ResolveName(name string) (any, bool) {
	switch {
	case name == "params":
		return a.set.params, true
	case name == "Nil" && a.set.withNil:
		return types.String("Nil"), true
	case !a.set.isVar[name]:
		return nil, false
	}
	if a.note != nil {
		a.note(name)
	}
	if v, ok := a.vals[name]; ok {
		return v, true
	}
	var v ref.Val
	raw, ok := a.raw(name)
	if !ok {
		v = types.NewErr("the state has no variable %s", name)
	} else if cv, err := itfVal(raw); err != nil {
		v = types.NewErr("the variable %s: %v", name, err)
	} else {
		v = cv
	}
	if a.vals == nil {
		a.vals = map[string]ref.Val{}
	}
	a.vals[name] = v
	return v, true
}

// Parent implements interpreter.Activation.
func (a *itfActivation) Parent() interpreter.Activation { return nil }

// ITFValue is the CEL value of an ITF value, by the ITF view's rule
// (see CompileITF's file comment).
func ITFValue(x any) (ref.Val, error) { return itfVal(x) }

func itfVal(x any) (ref.Val, error) {
	switch v := x.(type) {
	case bool:
		return types.Bool(v), nil
	case string:
		return types.String(v), nil
	case int:
		return types.Int(v), nil
	case int8:
		return types.Int(v), nil
	case int16:
		return types.Int(v), nil
	case int32:
		return types.Int(v), nil
	case int64:
		return types.Int(v), nil
	case uint8:
		return types.Int(v), nil
	case uint16:
		return types.Int(v), nil
	case uint32:
		return types.Int(v), nil
	case uint:
		if uint64(v) > math.MaxInt64 {
			return nil, fmt.Errorf("the integer %d is too large", v)
		}
		return types.Int(v), nil
	case uint64:
		if v > math.MaxInt64 {
			return nil, fmt.Errorf("the integer %d is too large", v)
		}
		return types.Int(v), nil
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return nil, fmt.Errorf("%v is not an integer (ITF has no other numbers)", v)
		}
		return types.Int(int64(v)), nil
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			return nil, fmt.Errorf("%s is not an integer (ITF has no other numbers)", v)
		}
		return types.Int(n), nil
	case []any:
		return itfList(v)
	case []string:
		vals := make([]ref.Val, len(v))
		for i, s := range v {
			vals[i] = types.String(s)
		}
		return types.NewRefValList(types.DefaultTypeAdapter, vals), nil
	case map[string]any:
		return itfObject(v)
	case ref.Val:
		return v, nil
	case nil:
		return nil, fmt.Errorf("null is not an ITF value")
	}
	// Other Go slices and arrays (a model's parameters: []int, ...).
	if rv := reflect.ValueOf(x); rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		xs := make([]any, rv.Len())
		for i := range xs {
			xs[i] = rv.Index(i).Interface()
		}
		return itfList(xs)
	}
	return nil, fmt.Errorf("%T is not an ITF value", x)
}

func itfList(xs []any) (ref.Val, error) {
	vals := make([]ref.Val, len(xs))
	for i, x := range xs {
		v, err := itfVal(x)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		vals[i] = v
	}
	return types.NewRefValList(types.DefaultTypeAdapter, vals), nil
}

// special is the ITF encoding an object is, if it is one ("#set", ...).
func special(m map[string]any) (string, any, bool) {
	if len(m) != 1 {
		return "", nil, false
	}
	for k, v := range m {
		if strings.HasPrefix(k, "#") {
			return k, v, true
		}
	}
	return "", nil, false
}

func itfObject(m map[string]any) (ref.Val, error) {
	kind, body, ok := special(m)
	if !ok {
		return itfRecord(m)
	}
	switch kind {
	case "#set", "#tup":
		xs, ok := body.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: want an array, got %T", kind, body)
		}
		l, err := itfList(xs)
		if err != nil {
			return nil, fmt.Errorf("%s%w", kind, err)
		}
		return l, nil
	case "#map":
		xs, ok := body.([]any)
		if !ok {
			return nil, fmt.Errorf("#map: want an array of pairs, got %T", body)
		}
		return itfFunction(xs)
	case "#bigint":
		s, ok := body.(string)
		if !ok {
			return nil, fmt.Errorf("#bigint: want a string, got %T", body)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("#bigint %q: not a 64-bit integer", s)
		}
		return types.Int(n), nil
	case "#unserializable":
		return types.String(fmt.Sprint(body)), nil
	}
	return itfRecord(m)
}

// itfRecord is a record as a map with string keys, in the keys' order.
func itfRecord(m map[string]any) (*itfMap, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := &itfMap{record: true, keys: make([]ref.Val, 0, len(keys)), vals: make([]ref.Val, 0, len(keys))}
	for _, k := range keys {
		v, err := itfVal(m[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out.add(types.String(k), v)
	}
	return out, nil
}

// itfFunction is a #map by the view's rule: a map when the keys are
// scalars, else a bag (records counted) or a list of {key, value}.
func itfFunction(pairs []any) (ref.Val, error) {
	keys := make([]ref.Val, len(pairs))
	vals := make([]ref.Val, len(pairs))
	scalar, bag := true, true
	for i, p := range pairs {
		kv, ok := p.([]any)
		if !ok || len(kv) != 2 {
			return nil, fmt.Errorf("#map[%d]: want a [key, value] pair, got %v", i, p)
		}
		k, err := itfVal(kv[0])
		if err != nil {
			return nil, fmt.Errorf("#map[%d] key: %w", i, err)
		}
		v, err := itfVal(kv[1])
		if err != nil {
			return nil, fmt.Errorf("#map[%d] value: %w", i, err)
		}
		keys[i], vals[i] = k, v
		switch k.(type) {
		case types.String, types.Int, types.Bool:
		default:
			scalar = false
		}
		r, isRec := k.(*itfMap)
		if _, isInt := v.(types.Int); !isRec || !r.record || !isInt {
			bag = false
		} else if _, has := r.find(types.String("count")); has {
			bag = false
		}
	}
	switch {
	case scalar:
		out := &itfMap{keys: make([]ref.Val, 0, len(keys)), vals: make([]ref.Val, 0, len(keys))}
		for i := range keys {
			if _, dup := out.find(keys[i]); dup {
				return nil, fmt.Errorf("#map: the key %s is given twice", FormatVal(keys[i]))
			}
			out.add(keys[i], vals[i])
		}
		return out, nil
	case bag:
		elems := make([]ref.Val, len(keys))
		for i, k := range keys {
			// The key record with count: a copy (the record is not
			// shared, but a copy keeps each value of the view immutable).
			r := k.(*itfMap)
			c := &itfMap{record: true, keys: make([]ref.Val, 0, len(r.keys)+1), vals: make([]ref.Val, 0, len(r.keys)+1)}
			for j := range r.keys {
				c.add(r.keys[j], r.vals[j])
			}
			c.add(types.String("count"), vals[i])
			elems[i] = c
		}
		return types.NewRefValList(types.DefaultTypeAdapter, elems), nil
	}
	elems := make([]ref.Val, len(keys))
	for i := range keys {
		r := &itfMap{record: true}
		r.add(types.String("key"), keys[i])
		r.add(types.String("value"), vals[i])
		elems[i] = r
	}
	return types.NewRefValList(types.DefaultTypeAdapter, elems), nil
}

// itfMap is a CEL map that keeps its keys' order: an ITF record (string
// keys, sorted) or function (scalar keys, in the trace's order).
type itfMap struct {
	record bool
	keys   []ref.Val
	vals   []ref.Val
	index  map[any]int // by mapKey; built when the map grows past a few keys
}

// mapKey is k as a Go value two equal CEL keys share (CEL compares
// numeric keys by value: m[1u] and m[1.0] find key 1).
func mapKey(k ref.Val) (any, bool) {
	switch x := k.(type) {
	case types.String:
		return string(x), true
	case types.Bool:
		return bool(x), true
	case types.Int:
		return int64(x), true
	case types.Uint:
		if uint64(x) <= math.MaxInt64 {
			return int64(x), true
		}
	case types.Double:
		if float64(x) == math.Trunc(float64(x)) && math.Abs(float64(x)) < 1<<63 {
			return int64(x), true
		}
	}
	return nil, false
}

func (m *itfMap) add(k, v ref.Val) {
	m.keys = append(m.keys, k)
	m.vals = append(m.vals, v)
	if m.index != nil || len(m.keys) > 8 {
		if m.index == nil {
			m.index = map[any]int{}
			for i, k := range m.keys[:len(m.keys)-1] {
				mk, _ := mapKey(k)
				m.index[mk] = i
			}
		}
		mk, _ := mapKey(k)
		m.index[mk] = len(m.keys) - 1
	}
}

func (m *itfMap) find(k ref.Val) (int, bool) {
	mk, ok := mapKey(k)
	if !ok {
		return 0, false
	}
	if m.index != nil {
		i, ok := m.index[mk]
		return i, ok
	}
	for i, key := range m.keys {
		if kk, _ := mapKey(key); kk == mk {
			return i, true
		}
	}
	return 0, false
}

// ConvertToNative implements ref.Val.
func (m *itfMap) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("an ITF map cannot be converted to %v", t)
}

// ConvertToType implements ref.Val.
func (m *itfMap) ConvertToType(t ref.Type) ref.Val { return ConvertType(m, types.MapType, "map", t) }

// Equal implements ref.Val: maps with the same keys and equal values.
func (m *itfMap) Equal(other ref.Val) ref.Val {
	return MapEqual(len(m.keys), func(i int) ref.Val { return m.keys[i] }, func(i int) ref.Val { return m.vals[i] }, other)
}

// Type implements ref.Val.
func (m *itfMap) Type() ref.Type { return types.MapType }

// Value implements ref.Val.
func (m *itfMap) Value() any { return m }

// Contains implements traits.Container (key in map).
func (m *itfMap) Contains(key ref.Val) ref.Val {
	_, ok := m.find(key)
	return types.Bool(ok)
}

// Get implements traits.Indexer.
func (m *itfMap) Get(key ref.Val) ref.Val {
	v, found := m.Find(key)
	if !found {
		return types.NewErr("no such key: %v", FormatVal(key))
	}
	return v
}

// Find implements traits.Mapper.
func (m *itfMap) Find(key ref.Val) (ref.Val, bool) {
	if IsErr(key) {
		return key, false
	}
	i, ok := m.find(key)
	if !ok {
		return nil, false
	}
	return m.vals[i], true
}

// Size implements traits.Sizer.
func (m *itfMap) Size() ref.Val { return types.Int(len(m.keys)) }

// Iterator implements traits.Iterable: the keys, in order.
func (m *itfMap) Iterator() traits.Iterator { return NewIterator(m.keys) }

// Fold implements traits.Foldable.
func (m *itfMap) Fold(f traits.Folder) {
	for i, k := range m.keys {
		if !f.FoldEntry(k, m.vals[i]) {
			return
		}
	}
}
