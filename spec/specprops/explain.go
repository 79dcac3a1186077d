package specprops

import (
	"fmt"
	"strconv"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// Explaining a verdict (properties.ExplainExpr) through the typed view:
// the reads are the rows of the model's state table (spec.Params.Rows)
// that the deciding parts read, shown whole.

// Explain says why the last state of tr fails its property (for a probe,
// why it holds): by the property's CEL expression, or for a built-in by
// its CEL form (Builtins). It returns nil for a deadlock, a property
// with no CEL form or a trace of another model. The trace may come from
// a file: its expression is compiled and evaluated under limits.
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
	if tr.Kind == properties.Eventually.String() {
		// P ~> Q: the last state is explained by Q, which it still owes.
		_, expr, _ = properties.SplitLeadsTo(expr)
	}
	if strings.TrimSpace(expr) == "" {
		return nil, nil
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	name := tr.Invariant
	if properties.CheckName(name) != nil {
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
	val, out := properties.ExplainExpr(e, checked.NativeRep(), viewSource{v: v, rows: p.Rows(&last)}, 0)
	if _, ok := val.(types.Bool); !ok {
		return nil, fmt.Errorf("%s: %v", tr.Invariant, val)
	}
	out.Expression, out.Equivalent = expr, equivalent
	return out, nil
}

// viewSource is the typed view of the current model: reads are its
// state-table rows (Rows), shown whole.
type viewSource struct {
	v    *view
	rows []traces.Var
}

// ProgramOptions implements properties.ExplainSource: the helpers.
func (s viewSource) ProgramOptions() []cel.ProgramOption { return []cel.ProgramOption{s.v.bindings()} }

// Activation implements properties.ExplainSource.
func (s viewSource) Activation(rec *properties.Recorder) (interpreter.Activation, func()) {
	s.v.rec = rec
	return s.v, func() { s.v.rec = nil }
}

// Value implements properties.ExplainSource: the row's value, or an
// entry's write set or copies (entryReads).
func (s viewSource) Value(name string, _ int) string {
	if val, ok := entryValue(s.v.p, s.v.s, name); ok {
		return val
	}
	for _, v := range s.rows {
		if v.Name == name {
			return v.Value
		}
	}
	return "?"
}

// BindingTypes implements properties.ExplainSource: the types the
// checker gave the range.
func (s viewSource) BindingTypes(a *ast.AST, comp ast.ComprehensionExpr, _ ref.Val) (*types.Type, *types.Type, bool) {
	rt := a.GetType(comp.IterRange().ID())
	if rt == nil {
		return nil, nil, false
	}
	t1, t2 := iterTypes(rt, comp.HasIterVar2())
	return t1, t2, t1 != nil
}

// Describe implements properties.ExplainSource: a record as
// rangeText[key], which reads better than the record itself.
func (s viewSource) Describe(rangeText string, k, v ref.Val) string {
	if v == nil {
		return properties.FormatVal(k)
	}
	if _, ok := v.(*rec); ok {
		return rangeText + "[" + properties.FormatVal(k) + "]"
	}
	return properties.FormatVal(v)
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

// CheckTrace is properties.CheckTrace for a trace of the current model
// (of parameters p): its property is compiled in the typed view.
func CheckTrace(tr *traces.Trace, p spec.Params) (step int, err error) {
	return properties.CheckTrace(tr, func(d properties.Def) (properties.TraceSet, error) { return Compile(p, []properties.Def{d}) })
}

// With striping (E > Qw) an entry is written to Qw of its fragment's E
// bookies, which no row of the state shows: an explanation that reads
// which bookies hold an entry (holders, and copies through it) also reads
// the entry's write set and its copies, as write_set(N) and copies(N),
// which Value gives. Without striping the write set is the fragment's
// ensemble, shown in meta_fragments already.
func entryReads(p spec.Params, s *spec.State, id int8) []string {
	if !p.Striped() {
		return nil
	}
	if _, ok := spec.FragmentOfEntryId(id, s.MetaFragmentList()); !ok {
		return nil
	}
	n := strconv.Itoa(int(id))
	return []string{"write_set(" + n + ")", "copies(" + n + ")"}
}

// entryValue is the value of a read entryReads names: write_set(N) as
// the bookies and which positions of which fragment's ensemble they are,
// copies(N) as how many of them store entry N, and which.
func entryValue(p spec.Params, s *spec.State, name string) (string, bool) {
	what, arg, ok := strings.Cut(strings.TrimSuffix(name, ")"), "(")
	if !ok || !strings.HasSuffix(name, ")") || (what != "write_set" && what != "copies") {
		return "", false
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 || n > spec.MaxEntries || !p.Striped() {
		return "", false
	}
	id := int8(n)
	f, ok := spec.FragmentOfEntryId(id, s.MetaFragmentList())
	if !ok {
		return "", false
	}
	ws := p.WriteSet(id, f)
	if what == "write_set" {
		var pos []string
		for i := 0; i < p.WriteQuorum; i++ {
			pos = append(pos, strconv.Itoa((n+i)%p.Ensemble))
		}
		return fmt.Sprintf("%s (Qw = %d of fragment %d's E = %d bookies: positions %s)", spec.FormatBookies(ws), p.WriteQuorum, f.ID, p.Ensemble, strings.Join(pos, ",")), true
	}
	var held spec.Bookies
	for b := 0; b < p.Bookies; b++ {
		if ws.Has(b) && s.BEntries[b].HasID(id) {
			held |= 1 << uint(b)
		}
	}
	if held == 0 {
		return "0", true
	}
	return fmt.Sprintf("%d (%s)", held.Len(), strings.Trim(spec.FormatBookies(held), "{}")), true
}
