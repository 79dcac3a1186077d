package specprops

import (
	"fmt"
	"math"
	"slices"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/spec"
)

// The fast path. cel-go's interpreter spends 50-100 ns on each node it
// evaluates (attribute resolution, activation chains, pooled folders),
// which makes a property such as TypeOK cost tens of microseconds a state,
// more than the whole search step. Compile therefore also translates each
// checked expression into a tree of Go closures over the same view values,
// when every node is one this file implements with CEL's semantics:
// literals, the view's names and comprehension variables, field selection
// and has(), indexing, the logical operators (commutative with respect to
// errors, as in CEL), ==, !=, ordering, int arithmetic (with CEL's
// overflow errors), in, size(), the view's helpers, list literals and
// comprehensions (every macro, one and two variables, whatever their
// expansion). Any other node (string and set functions, conversions, map
// literals, cel.bind, ...) leaves the whole property to cel-go. Both paths
// give the same result on every state (TestFastMatchesCEL); explanations
// always go through cel-go.

// frame is the state of one fast evaluation: the view and the
// comprehension variables.
type frame struct {
	v     *view
	slots []ref.Val
}

type fexpr func(f *frame) ref.Val

// fastCompiler translates a checked AST into closures.
type fastCompiler struct {
	a      *ast.AST
	params *view // for folding params.x into constants
	scope  []scoped
	nslots int
}

type scoped struct {
	name string
	slot int
}

type unsupported string

func (u unsupported) Error() string { return "not on the fast path: " + string(u) }

// compileFast returns the closure tree of a and the number of slots its
// comprehensions need, or an error when some node is not supported.
func compileFast(a *ast.AST, p spec.Params) (fexpr, int, error) {
	c := &fastCompiler{a: a, params: newView(p)}
	f, err := c.compile(a.Expr())
	return f, c.nslots, err
}

func (c *fastCompiler) lookup(name string) (int, bool) {
	for i := len(c.scope) - 1; i >= 0; i-- {
		if c.scope[i].name == name {
			return c.scope[i].slot, true
		}
	}
	return 0, false
}

func noOverload(v ref.Val) ref.Val {
	if properties.IsErr(v) {
		return v
	}
	return types.MaybeNoSuchOverloadErr(v)
}

func (c *fastCompiler) compile(e ast.Expr) (fexpr, error) {
	switch e.Kind() {
	case ast.LiteralKind:
		lit := e.AsLiteral()
		if i, ok := lit.(types.Int); ok {
			lit = intVal(int(i))
		}
		return func(*frame) ref.Val { return lit }, nil
	case ast.IdentKind:
		name := e.AsIdent()
		if slot, ok := c.lookup(name); ok {
			return func(f *frame) ref.Val { return f.slots[slot] }, nil
		}
		i, ok := variableIndex[name]
		if !ok {
			return nil, unsupported("name " + name)
		}
		vr := &variables[i]
		return func(f *frame) ref.Val {
			if f.v.rec != nil && vr.read != "" {
				f.v.rec.Note(vr.read)
			}
			return vr.get(f.v)
		}, nil
	case ast.SelectKind:
		return c.compileSelect(e)
	case ast.ListKind:
		return c.compileList(e)
	case ast.ComprehensionKind:
		return c.compileComprehension(e)
	case ast.CallKind:
		return c.compileCall(e)
	}
	return nil, unsupported(fmt.Sprintf("expression kind %v", e.Kind()))
}

func (c *fastCompiler) compileSelect(e ast.Expr) (fexpr, error) {
	sel := e.AsSelect()
	// The parameters are constants of the run.
	if op := sel.Operand(); op.Kind() == ast.IdentKind && op.AsIdent() == "params" && !sel.IsTestOnly() {
		if _, shadowed := c.lookup("params"); !shadowed {
			if f, ok := paramsType.byName[sel.FieldName()]; ok {
				val := f.get(&c.params.paramsRec)
				return func(*frame) ref.Val { return val }, nil
			}
		}
	}
	operand, err := c.compile(sel.Operand())
	if err != nil {
		return nil, err
	}
	name := sel.FieldName()
	key := types.String(name)
	if sel.IsTestOnly() {
		return func(f *frame) ref.Val {
			switch x := operand(f).(type) {
			case *rec:
				return x.IsSet(key)
			case traits.Mapper:
				return x.Contains(key)
			case traits.FieldTester:
				return x.IsSet(key)
			case ref.Val:
				return noOverload(x)
			}
			return types.NewErr("has() on a nil value")
		}, nil
	}
	var fld *field
	var rt *recordType
	if t := c.a.GetType(sel.Operand().ID()); t != nil {
		for _, r := range recordTypes {
			if r.t.TypeName() == t.TypeName() {
				rt, fld = r, r.byName[name]
			}
		}
	}
	return func(f *frame) ref.Val {
		x := operand(f)
		if r, ok := x.(*rec); ok {
			if r.rt == rt && fld != nil {
				return r.field(fld)
			}
			return r.Get(key)
		}
		return index(x, key)
	}, nil
}

// index is x[k] (and x.k on a map), as CEL's index_list / index_map.
func index(x, k ref.Val) ref.Val {
	switch m := x.(type) {
	case traits.Mapper:
		if properties.IsErr(k) {
			return k
		}
		v, found := m.Find(k)
		if !found {
			if v != nil && properties.IsErr(v) {
				return v
			}
			return types.NewErr("no such key: %v", k)
		}
		return v
	case traits.Lister:
		if properties.IsErr(k) {
			return k
		}
		return m.Get(k)
	case traits.Indexer:
		return m.Get(k)
	}
	return noOverload(x)
}

func (c *fastCompiler) compileList(e ast.Expr) (fexpr, error) {
	l := e.AsList()
	if len(l.OptionalIndices()) > 0 {
		return nil, unsupported("optional list elements")
	}
	elems := make([]fexpr, len(l.Elements()))
	constant := true
	for i, el := range l.Elements() {
		f, err := c.compile(el)
		if err != nil {
			return nil, err
		}
		elems[i] = f
		constant = constant && el.Kind() == ast.LiteralKind
	}
	build := func(f *frame) ref.Val {
		vals := make([]ref.Val, len(elems))
		for i, el := range elems {
			v := el(f)
			if properties.IsErr(v) {
				return v
			}
			vals[i] = v
		}
		return types.NewRefValList(types.DefaultTypeAdapter, vals)
	}
	if constant {
		val := build(nil)
		return func(*frame) ref.Val { return val }, nil
	}
	return build, nil
}

func (c *fastCompiler) compileComprehension(e ast.Expr) (fexpr, error) {
	comp := e.AsComprehension()
	rng, err := c.compile(comp.IterRange())
	if err != nil {
		return nil, err
	}
	accuInit, err := c.compile(comp.AccuInit())
	if err != nil {
		return nil, err
	}
	depth := len(c.scope)
	accu := c.newSlot(comp.AccuVar())
	it1 := c.newSlot(comp.IterVar())
	it2 := -1
	if comp.HasIterVar2() {
		it2 = c.newSlot(comp.IterVar2())
	}
	if pred, want, ok := properties.Quantifier(comp); ok {
		p, err := c.compile(pred)
		if err != nil {
			return nil, err
		}
		c.scope = c.scope[:depth]
		return c.quantify(rng, p, want, it1, it2), nil
	}
	cond, err := c.compile(comp.LoopCondition())
	if err != nil {
		return nil, err
	}
	step, err := c.compile(comp.LoopStep())
	if err != nil {
		return nil, err
	}
	// The result sees the accumulator, not the iteration variables.
	c.scope = c.scope[:depth]
	c.scope = append(c.scope, scoped{comp.AccuVar(), accu})
	result, err := c.compile(comp.Result())
	if err != nil {
		return nil, err
	}
	c.scope = c.scope[:depth]
	return func(f *frame) ref.Val {
		r := rng(f)
		if properties.IsErr(r) {
			return r
		}
		f.slots[accu] = accuInit(f)
		var loopErr ref.Val
		visit := func(k, v ref.Val) bool {
			f.slots[it1] = k
			if it2 >= 0 {
				f.slots[it2] = v
			}
			cv := cond(f)
			if b, ok := cv.(types.Bool); !ok || !bool(b) {
				if properties.IsErr(cv) {
					loopErr = cv
				}
				return false
			}
			f.slots[accu] = step(f)
			return true
		}
		if !iterate(r, it2 >= 0, visit) {
			return types.NewErr("a comprehension needs a list or a map, got %s", r.Type())
		}
		if loopErr != nil {
			return loopErr
		}
		return result(f)
	}, nil
}

// quantify is the loop of all (decisive false) or exists (decisive true),
// with CEL's fold semantics: the decisive value ends it; otherwise the
// first error met is the result, else the non-decisive value.
func (c *fastCompiler) quantify(rng, pred fexpr, decisive bool, it1, it2 int) fexpr {
	dec := boolVal(decisive)
	return func(f *frame) ref.Val {
		r := rng(f)
		if properties.IsErr(r) {
			return r
		}
		var acc ref.Val = boolVal(!decisive)
		done := false
		visit := func(k, v ref.Val) bool {
			f.slots[it1] = k
			if it2 >= 0 {
				f.slots[it2] = v
			}
			pv := pred(f)
			if b, ok := pv.(types.Bool); ok {
				if bool(b) == decisive {
					done = true
					return false
				}
				return true
			}
			if _, ok := acc.(types.Bool); ok {
				acc = noOverload(pv)
			}
			return true
		}
		if !iterate(r, it2 >= 0, visit) {
			return types.NewErr("a comprehension needs a list or a map, got %s", r.Type())
		}
		if done {
			return dec
		}
		return acc
	}
}

// iterate is properties.Iterate, reading the view's lists and maps
// without allocating.
func iterate(r ref.Val, two bool, visit func(k, v ref.Val) bool) bool {
	switch x := r.(type) {
	case *list:
		x.each(func(i int, v ref.Val) bool {
			if two {
				return visit(intVal(i), v)
			}
			return visit(v, nil)
		})
	case *mapv:
		for i := 0; i < x.size(); i++ {
			if !visit(x.key(i), x.val(i)) {
				break
			}
		}
	default:
		return properties.Iterate(r, two, visit)
	}
	return true
}

func (c *fastCompiler) newSlot(name string) int {
	s := c.nslots
	c.nslots++
	c.scope = append(c.scope, scoped{name, s})
	return s
}

func (c *fastCompiler) args(call ast.CallExpr) ([]fexpr, error) {
	var exprs []ast.Expr
	if call.IsMemberFunction() {
		exprs = append(exprs, call.Target())
	}
	exprs = append(exprs, call.Args()...)
	out := make([]fexpr, len(exprs))
	for i, a := range exprs {
		f, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

func (c *fastCompiler) compileCall(e ast.Expr) (fexpr, error) {
	call := e.AsCall()
	name := call.FunctionName()
	args, err := c.args(call)
	if err != nil {
		return nil, err
	}
	if n, ok := arities[name]; ok && len(args) != n {
		return nil, unsupported(fmt.Sprintf("%s with %d arguments", name, len(args)))
	}
	switch name {
	case "_&&_", "_||_":
		l, r := args[0], args[1]
		// CEL's logical operators are commutative with respect to errors:
		// a false (true for ||) on either side decides.
		short := types.False
		if name == "_||_" {
			short = types.True
		}
		other := types.True
		if name == "_||_" {
			other = types.False
		}
		shortB := short == types.True
		return func(f *frame) ref.Val {
			lv := l(f)
			lb, lok := lv.(types.Bool)
			if lok && bool(lb) == shortB {
				return short
			}
			rv := r(f)
			rb, rok := rv.(types.Bool)
			if rok && bool(rb) == shortB {
				return short
			}
			if lok && rok {
				return other
			}
			if !lok {
				return noOverload(lv)
			}
			return noOverload(rv)
		}, nil
	case "!_":
		a := args[0]
		return func(f *frame) ref.Val {
			v := a(f)
			if b, ok := v.(types.Bool); ok {
				return boolVal(!bool(b))
			}
			return noOverload(v)
		}, nil
	case "@not_strictly_false":
		a := args[0]
		return func(f *frame) ref.Val {
			if b, ok := a(f).(types.Bool); ok && !bool(b) {
				return types.False
			}
			return types.True
		}, nil
	case "_?_:_":
		cond, yes, no := args[0], args[1], args[2]
		return func(f *frame) ref.Val {
			v := cond(f)
			if b, ok := v.(types.Bool); ok {
				if b {
					return yes(f)
				}
				return no(f)
			}
			return noOverload(v)
		}, nil
	case "_==_", "_!=_":
		l, r := args[0], args[1]
		neg := name == "_!=_"
		return func(f *frame) ref.Val {
			lv, rv, bad := both(f, l, r)
			if bad != nil {
				return bad
			}
			var eq ref.Val
			if li, ok := lv.(types.Int); ok {
				ri, ok := rv.(types.Int)
				eq = boolVal(ok && li == ri)
				if !ok {
					eq = types.Equal(lv, rv)
				}
			} else if ls, ok := lv.(types.String); ok {
				rs, ok := rv.(types.String)
				eq = boolVal(ok && ls == rs)
				if !ok {
					eq = types.Equal(lv, rv)
				}
			} else {
				eq = types.Equal(lv, rv)
			}
			if neg && !properties.IsErr(eq) {
				return boolVal(eq != types.True)
			}
			return eq
		}, nil
	case "_<_", "_<=_", "_>_", "_>=_":
		l, r := args[0], args[1]
		test := map[string]func(int) bool{
			"_<_": func(c int) bool { return c < 0 }, "_<=_": func(c int) bool { return c <= 0 },
			"_>_": func(c int) bool { return c > 0 }, "_>=_": func(c int) bool { return c >= 0 },
		}[name]
		return func(f *frame) ref.Val {
			lv, rv, bad := both(f, l, r)
			if bad != nil {
				return bad
			}
			if li, ok := lv.(types.Int); ok {
				if ri, ok := rv.(types.Int); ok {
					switch {
					case li < ri:
						return boolVal(test(-1))
					case li > ri:
						return boolVal(test(1))
					}
					return boolVal(test(0))
				}
			}
			cmp, ok := lv.(traits.Comparer)
			if !ok {
				return noOverload(lv)
			}
			res := cmp.Compare(rv)
			ri, ok := res.(types.Int)
			if !ok {
				return res
			}
			return boolVal(test(int(ri)))
		}, nil
	case "_+_", "_-_", "_*_", "_/_", "_%_", "-_":
		// Int arithmetic, and + of lists and strings (filter and map
		// accumulate with it); anything else is cel-go's.
		for _, a := range append(call.Args(), call.Target()) {
			t := c.a.GetType(a.ID())
			concat := name == "_+_" && t != nil && (t.Kind() == types.ListKind || t.IsExactType(types.StringType))
			if a.ID() != 0 && !concat && (t == nil || !t.IsExactType(types.IntType)) {
				return nil, unsupported(name + " on " + fmt.Sprint(t))
			}
		}
		if name == "-_" {
			a := args[0]
			return func(f *frame) ref.Val {
				v := a(f)
				if i, ok := v.(types.Int); ok {
					return intArith("_-_", 0, int64(i))
				}
				return noOverload(v)
			}, nil
		}
		l, r := args[0], args[1]
		op := name
		return func(f *frame) ref.Val {
			lv, rv, bad := both(f, l, r)
			if bad != nil {
				return bad
			}
			li, ok1 := lv.(types.Int)
			ri, ok2 := rv.(types.Int)
			if ok1 && ok2 {
				return intArith(op, int64(li), int64(ri))
			}
			if a, ok := lv.(traits.Adder); ok && op == "_+_" {
				return a.Add(rv)
			}
			return noOverload(lv)
		}, nil
	case "@in":
		elem, coll := args[0], args[1]
		// A list of string literals is a set lookup.
		if lst := call.Args()[1]; lst.Kind() == ast.ListKind {
			set := map[types.String]bool{}
			all := true
			for _, el := range lst.AsList().Elements() {
				s, ok := el.AsLiteral().(types.String)
				if el.Kind() != ast.LiteralKind || !ok {
					all = false
					break
				}
				set[s] = true
			}
			if all {
				return func(f *frame) ref.Val {
					v := elem(f)
					if s, ok := v.(types.String); ok {
						return boolVal(set[s])
					}
					if properties.IsErr(v) {
						return v
					}
					return coll(f).(traits.Container).Contains(v)
				}, nil
			}
		}
		return func(f *frame) ref.Val {
			v := elem(f)
			if properties.IsErr(v) {
				return v
			}
			cv := coll(f)
			ct, ok := cv.(traits.Container)
			if !ok {
				return noOverload(cv)
			}
			return ct.Contains(v)
		}, nil
	case "_[_]":
		x, k := args[0], args[1]
		return func(f *frame) ref.Val {
			xv := x(f)
			if properties.IsErr(xv) {
				return xv
			}
			return index(xv, k(f))
		}, nil
	case "size":
		a := args[0]
		return func(f *frame) ref.Val {
			v := a(f)
			switch x := v.(type) {
			case *list:
				return intVal(x.size())
			case *mapv:
				return intVal(x.size())
			case traits.Sizer:
				return x.Size()
			}
			return noOverload(v)
		}, nil
	}
	for _, h := range helpers {
		if h.name != name || call.IsMemberFunction() {
			continue
		}
		for _, o := range h.overloads {
			if len(o.args) != len(args) || !c.matches(e, o) {
				continue
			}
			o := o
			if o.unary != nil {
				a := args[0]
				return func(f *frame) ref.Val {
					v := a(f)
					if properties.IsErr(v) {
						return v
					}
					return o.unary(f.v, v)
				}, nil
			}
			a, b := args[0], args[1]
			return func(f *frame) ref.Val {
				av, bv, bad := both(f, a, b)
				if bad != nil {
					return bad
				}
				return o.binary(f.v, av, bv)
			}, nil
		}
	}
	return nil, unsupported("function " + name)
}

// arities are the numbers of arguments of the operators the fast path
// implements.
var arities = map[string]int{
	"_&&_": 2, "_||_": 2, "!_": 1, "@not_strictly_false": 1, "_?_:_": 3, "_==_": 2, "_!=_": 2,
	"_<_": 2, "_<=_": 2, "_>_": 2, "_>=_": 2, "_+_": 2, "_-_": 2, "_*_": 2, "_/_": 2, "_%_": 2, "-_": 1,
	"@in": 2, "_[_]": 2, "size": 1,
}

// matches reports whether the checker chose overload o for the call e.
func (c *fastCompiler) matches(e ast.Expr, o helperOverload) bool {
	return slices.Contains(c.a.GetOverloadIDs(e.ID()), o.id)
}

// both evaluates l and r, as CEL's strict functions do: bad is the first
// error, if any, which is then the call's result.
func both(f *frame, l, r fexpr) (lv, rv, bad ref.Val) {
	if lv = l(f); properties.IsErr(lv) {
		return nil, nil, lv
	}
	if rv = r(f); properties.IsErr(rv) {
		return nil, nil, rv
	}
	return lv, rv, nil
}

// intArith is CEL's int64 arithmetic: overflow and division by zero are
// errors.
func intArith(op string, a, b int64) ref.Val {
	var r int64
	switch op {
	case "_+_":
		r = a + b
		if (r > a) != (b > 0) {
			return types.NewErr("integer overflow")
		}
	case "_-_":
		r = a - b
		if (r < a) != (b > 0) {
			return types.NewErr("integer overflow")
		}
	case "_*_":
		if a != 0 && b != 0 && (a*b/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64)) {
			return types.NewErr("integer overflow")
		}
		r = a * b
	case "_/_":
		if b == 0 {
			return types.NewErr("division by zero")
		}
		if a == math.MinInt64 && b == -1 {
			return types.NewErr("integer overflow")
		}
		r = a / b
	case "_%_":
		if b == 0 {
			return types.NewErr("modulus by zero")
		}
		if a == math.MinInt64 && b == -1 {
			return types.NewErr("integer overflow")
		}
		r = a % b
	}
	return intVal(int(r))
}
