package specprops

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"

	"github.com/bkcheck/bkcheck/spec"
)

// Enumerated fields: strings that hold one of a few values (a status, a
// message's type). A comparison of one with a string literal outside its
// values could never hold (meta_status == "CLOSED" was answered "not
// reachable" after a whole search): it is refused before the search, the
// error listing the values. The readable traces and the explanations
// print some values shorter than the view holds them (CLOSED for
// STATUS_CLOSED, AddEntryRequest for AddEntryRequestMessage); a literal
// in that spelling means the value, and is read as it.

// enum is an enumerated field's values.
type enum struct {
	name   string   // how an error names the field
	values []string // as the view holds them
	// short is the spelling traces print, for the values that have
	// another, by value.
	short map[string]string
}

// The enumerated fields, from the view's names (values.go) and, for the
// short spellings, the names traces print (Status and MsgType's String).
var (
	metaStatusEnum   = enumOfNames("meta_status", statusNames, spec.Status.String, spec.StatusClosed)
	clientStatusEnum = enumOfNames("a Client's status", statusNames, spec.Status.String, spec.RecoveryAborted)
	msgTypeEnum      = enumOfNames("a Message's type", msgTypeNames, spec.MsgType.String, spec.ReadResponse)
	msgCodeEnum      = enumOfNames("a Message's code", codeNames, nil, spec.CodeReadOnly)
)

// enumOfNames is the enum of the values of names up to last, in order,
// with short(v) as another spelling where it differs.
func enumOfNames[K ~uint8](field string, names map[K]string, short func(K) string, last K) *enum {
	en := &enum{name: field, short: map[string]string{}}
	for k := K(0); k <= last; k++ {
		v, ok := names[k]
		if !ok {
			continue
		}
		en.values = append(en.values, v)
		if short != nil && short(k) != v {
			en.short[v] = short(k)
		}
	}
	return en
}

// value is the value literal s means, if any.
func (en *enum) value(s string) (string, bool) {
	if slices.Contains(en.values, s) {
		return s, true
	}
	for v, short := range en.short {
		if short == s {
			return v, true
		}
	}
	return "", false
}

// describe lists the values, and the other spellings.
func (en *enum) describe() string {
	out := strings.Join(en.values, ", ")
	var shorts []string
	for _, v := range en.values {
		if s, ok := en.short[v]; ok {
			shorts = append(shorts, s)
		}
	}
	if len(shorts) > 0 {
		out += " (or, as traces print them, " + strings.Join(shorts, ", ") + ")"
	}
	return out
}

// enumOf is the enumerated field e reads, nil if none.
func enumOf(a *ast.AST, e ast.Expr) *enum {
	switch e.Kind() {
	case ast.IdentKind:
		if r, ok := a.ReferenceMap()[e.ID()]; ok && r.Name == "meta_status" && e.AsIdent() == "meta_status" {
			return metaStatusEnum // the variable, not a comprehension's
		}
	case ast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			return nil
		}
		switch t := a.GetType(sel.Operand().ID()); {
		case t.IsExactType(clientType.t) && sel.FieldName() == "status":
			return clientStatusEnum
		case t.IsExactType(messageType.t) && sel.FieldName() == "type":
			return msgTypeEnum
		case t.IsExactType(messageType.t) && sel.FieldName() == "code":
			return msgCodeEnum
		}
	}
	return nil
}

// checkEnums refuses, in the checked expression a (of source src), the
// comparisons of an enumerated field with a string literal none of its
// values (==, != and in a list literal), every one at once; and makes a
// literal in a trace's spelling the value it means.
func checkEnums(a *ast.AST, src common.Source) error {
	var msgs []string
	means := map[int64]string{} // literal -> the value it means, when spelt otherwise
	literal := func(en *enum, lit ast.Expr) {
		if lit.Kind() != ast.LiteralKind {
			return
		}
		s, ok := lit.AsLiteral().(types.String)
		if !ok {
			return
		}
		v, ok := en.value(string(s))
		switch {
		case !ok:
			msg := fmt.Sprintf("%q is not a value of %s, which holds one of %s", string(s), en.name, en.describe())
			loc := a.SourceInfo().GetStartLocation(lit.ID())
			msgs = append(msgs, strings.TrimPrefix(common.NewError(lit.ID(), msg, loc).ToDisplayString(src), "ERROR: "))
		case v != string(s):
			means[lit.ID()] = v
		}
	}
	ast.PreOrderVisit(a.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() != ast.CallKind {
			return
		}
		call := e.AsCall()
		args := call.Args()
		if len(args) != 2 {
			return
		}
		switch call.FunctionName() {
		case operators.Equals, operators.NotEquals:
			if en := enumOf(a, args[0]); en != nil {
				literal(en, args[1])
			} else if en := enumOf(a, args[1]); en != nil {
				literal(en, args[0])
			}
		case operators.In:
			if en := enumOf(a, args[0]); en != nil && args[1].Kind() == ast.ListKind {
				for _, el := range args[1].AsList().Elements() {
					literal(en, el)
				}
			}
		}
	}))
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "\n"))
	}
	if len(means) == 0 {
		return nil
	}
	// The expression, and the macros' record of it (from which
	// explanations print it), read the value.
	fac := ast.NewExprFactory()
	rewrite := ast.NewExprVisitor(func(e ast.Expr) {
		if v, ok := means[e.ID()]; ok && e.Kind() == ast.LiteralKind {
			e.SetKindCase(fac.NewLiteral(e.ID(), types.String(v)))
		}
	})
	ast.PreOrderVisit(a.Expr(), rewrite)
	for _, m := range a.SourceInfo().MacroCalls() {
		ast.PreOrderVisit(m, rewrite)
	}
	return nil
}
