package specprops

import (
	"strconv"
	"strings"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"

	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
)

// The maps of the view keyed by a client or a bookie id, from the view's
// own list of its maps (values.go): clients, then the per-bookie ones
// (confirmed is keyed by entry).
var byClient, byBookie = func() (map[string]bool, map[string]bool) {
	c, b := map[string]bool{}, map[string]bool{}
	for k, name := range mapVarNames {
		switch mapKind(k) {
		case mkClients:
			c[name] = true
		case mkConfirmed:
		default:
			b[name] = true
		}
	}
	return c, b
}()

// checkIDs reports, before any search, a property that looks up a client
// or a bookie the parameters do not have by a constant id
// (clients["c3"] with two clients, b_lac.b4 with three bookies): it
// could only fail to evaluate. Every such lookup of every property is
// one problem, under the property's setting.
func checkIDs(p spec.Params, props []*properties.Property) error {
	var probs schema.Problems
	for _, pr := range props {
		if !pr.User() {
			continue
		}
		ast.PreOrderVisit(pr.AST().NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
			m, key, ok := constantLookup(e)
			if !ok {
				return
			}
			prefix, n, what := "c", p.Clients, "clients"
			if byBookie[m] {
				prefix, n, what = "b", p.Bookies, "bookies"
			}
			if id, err := strconv.Atoi(strings.TrimPrefix(key, prefix)); !strings.HasPrefix(key, prefix) || err != nil || id < 1 || id > n {
				probs.Add(pr.Kind.String(), "%s: %s[%q]: the run has %s %s1..%s%d", pr.Name, m, key, what, prefix, prefix, n)
			}
		}))
	}
	return probs.Err()
}

// constantLookup recognises M["id"] and M.id for a map M of byClient or
// byBookie: the map's name and the id.
func constantLookup(e ast.Expr) (string, string, bool) {
	switch e.Kind() {
	case ast.CallKind:
		c := e.AsCall()
		if c.FunctionName() != operators.Index || len(c.Args()) != 2 {
			return "", "", false
		}
		m, k := c.Args()[0], c.Args()[1]
		if m.Kind() != ast.IdentKind || k.Kind() != ast.LiteralKind {
			return "", "", false
		}
		name := m.AsIdent()
		s, ok := k.AsLiteral().(types.String)
		if !ok || !byClient[name] && !byBookie[name] {
			return "", "", false
		}
		return name, string(s), true
	case ast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() || sel.Operand().Kind() != ast.IdentKind {
			return "", "", false
		}
		name := sel.Operand().AsIdent()
		if !byClient[name] && !byBookie[name] {
			return "", "", false
		}
		return name, sel.FieldName(), true
	}
	return "", "", false
}

// CheckSymmetric refuses, before the search, a property that names a
// bookie or a client that sym relabels: under symmetry one member of each
// orbit is checked, so a property true of "b1" and false of "b2" would be
// checked on whichever member the search met, and its verdict would
// depend on that. A name is a string literal ("b1", "c2") anywhere in the
// property or a field of a map keyed by ids (b_lac.b1). A property may
// still single out an id it computes (clients.exists(id, c, id < "c2"));
// that is its author's to avoid, as docs/properties.md says.
func CheckSymmetric(sym spec.Symmetry, props []*properties.Property) error {
	if !sym.Bookies && !sym.Clients {
		return nil
	}
	var probs schema.Problems
	for _, pr := range props {
		if !pr.User() {
			continue
		}
		named := map[string]bool{}
		var names []string
		note := func(id string) {
			if !named[id] {
				named[id] = true
				names = append(names, id)
			}
		}
		ast.PreOrderVisit(pr.AST().NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
			var id string
			switch {
			case e.Kind() == ast.LiteralKind:
				s, ok := e.AsLiteral().(types.String)
				if !ok {
					return
				}
				id = string(s)
			case e.Kind() == ast.SelectKind:
				if _, key, ok := constantLookup(e); ok {
					id = key
				}
			}
			if sym.Bookies && isID(id, "b") || sym.Clients && isID(id, "c") {
				note(id)
			}
		}))
		for _, id := range names {
			what := "bookies"
			if id[0] == 'c' {
				what = "clients"
			}
			probs.Add(pr.Kind.String(), "%s: names %q, which --symmetry %s relabels: one state of each orbit is checked, so the verdict would depend on which; drop --symmetry %s or state the property for every one of the %s",
				pr.Name, id, what, what, what)
		}
	}
	return probs.Err()
}

// isID reports whether s is an id with the given prefix: b1, c12.
func isID(s, prefix string) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(s, prefix))
	return strings.HasPrefix(s, prefix) && err == nil && n >= 1 && !strings.HasPrefix(s, prefix+"+") && !strings.HasPrefix(s, prefix+"-")
}
