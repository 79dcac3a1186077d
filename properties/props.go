// Package properties lets a user state properties of a model without
// writing Go: expressions in CEL (the Common Expression Language,
// cel.dev/cel-go) over a view of a protocol state whose names are those of
// the model's ITF trace (meta_status, clients, b_entries, ...), plus the
// parameters (params.write_quorum, ...) and helpers CEL lacks (seq, and in
// the current model's typed view fragment_of, write_set, holders, copies).
//
// A property has a name, a kind and an expression:
//
//   - invariant: the expression holds in every reachable state;
//   - terminal: it holds in every terminal state (one without successor);
//   - eventually: every behaviour passes through a state where it holds.
//     When the model's reachable graph has no cycle every behaviour ends
//     in a terminal state, and a counterexample is a path from the initial
//     state to a terminal state along which it never holds; when it may
//     have cycles (or --fair is given) a counterexample may also be a
//     lasso, a path into a cycle repeated forever that is fair to the
//     weak-fairness constraints (package liveness);
//   - probe: "can this happen?": found (with the shortest trace to a state
//     where it holds) or not reachable.
//
// This package is what does not depend on a model: definitions and their
// kinds, the compilation of a list of definitions (CompileDefs), the
// environment's extensions, the sets a run checks (PropertySet,
// StateEvaluator), the ITF view, which reads any model's states through
// its vocabulary (CompileModel), and the explanation of a verdict over
// any view. The current model's typed view, its hot path, is package
// spec/specprops: expressions are parsed and type-checked against it
// before any search starts, and each search goroutine evaluates them
// through its own evaluator, which reads the state in place.
//
// docs/properties.md is the user's reference: the view field by field, the
// helpers, worked examples and how a probe becomes a guarantee question.
package properties

import (
	"fmt"
	"strings"

	"github.com/bkcheck/bkcheck/schema"
)

// Kind is what a property claims.
type Kind uint8

// The kinds of property.
const (
	Invariant  Kind = iota + 1 // holds in every reachable state
	Terminal                   // holds in every terminal state
	Eventually                 // every behaviour reaches a state where it holds
	Probe                      // a state where it holds is reachable (a question, not a claim)
	Constraint                 // not a claim: the search does not go on from a state where it fails (TLC's CONSTRAINT)
)

var kindNames = [...]string{"", "invariant", "terminal", "eventually", "probe", "constraint"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// KindByName is the kind of a name as String gives it.
func KindByName(name string) (Kind, bool) {
	for k := Invariant; k <= Constraint; k++ {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}

// Def is one property as the user gave it.
type Def struct {
	Name string
	Kind Kind
	Expr string
	// Statement is the property in words: the expression's leading //
	// comment lines (joined), or empty.
	Statement string
}

// Settings are the property settings of a check: each NAME=EXPR,
// repeatable. In a parameter-set file they live in the [properties] table,
// as arrays (invariant = ["A=...", "B=..."]) or as tables of their own
// ([properties.invariant] with A = "..." lines).
type Settings struct {
	Invariant  schema.Repeated `name:"invariant" unit:"NAME=EXPR" group:"properties" help:"a CEL expression that must hold in every reachable state (repeatable; docs/properties.md)"`
	Terminal   schema.Repeated `name:"terminal" unit:"NAME=EXPR" group:"properties" help:"a CEL expression that must hold in every terminal state, one without successor (repeatable)"`
	Eventually schema.Repeated `name:"eventually" unit:"NAME=EXPR" group:"properties" help:"a CEL expression every behaviour must reach, or P ~> Q: whenever P holds, Q holds then or later; fails when a path to a terminal state never satisfies it (repeatable)"`
	Probe      schema.Repeated `name:"probe" unit:"NAME=EXPR" group:"properties" help:"a CEL question: is a state where it holds reachable? Answered found (with the shortest trace) or not reachable; never a failure (repeatable)"`
	// Fair are weak-fairness constraints for the eventually properties:
	// action names (the model's vocabulary) or FairAll. Not a property:
	// Empty and Defs leave it out.
	Fair       schema.Repeated `name:"fair" unit:"ACTION" group:"properties" help:"weak fairness of an action (bkcheck actions lists them), or all: one constraint per action; a behaviour that keeps it enabled forever takes it infinitely often. Only with --eventually: a cycle that never satisfies an eventually property is then a counterexample only if fair (repeatable; docs/properties.md)"`
	Constraint schema.Repeated `name:"constraint" unit:"NAME=EXPR" group:"properties" help:"a CEL state constraint, as TLC's CONSTRAINT: a state where it fails is checked but the search does not go on from it (nor counts it as terminal); results are then about the constrained model (repeatable)"`
}

// FairAll is the --fair value that makes every action weakly fair.
const FairAll = "all"

// Empty reports whether no property is given (--fair is not one).
func (s Settings) Empty() bool {
	return len(s.Invariant)+len(s.Terminal)+len(s.Eventually)+len(s.Probe)+len(s.Constraint) == 0
}

// Add appends the property NAME=EXPR to the setting of the kind named kind
// ("" adds nothing: a trace of a built-in property).
func (s *Settings) Add(kind, name, expr string) error {
	if kind == "" {
		return nil
	}
	k, ok := KindByName(kind)
	if !ok {
		return fmt.Errorf("unknown property kind %q", kind)
	}
	def := name + "=" + expr
	switch k {
	case Invariant:
		s.Invariant = append(s.Invariant, def)
	case Terminal:
		s.Terminal = append(s.Terminal, def)
	case Eventually:
		s.Eventually = append(s.Eventually, def)
	case Probe:
		s.Probe = append(s.Probe, def)
	case Constraint:
		s.Constraint = append(s.Constraint, def)
	}
	return nil
}

// settingOf is the setting that holds properties of kind k.
func settingOf(k Kind) string { return k.String() }

// Defs parses every NAME=EXPR of s, in the order invariant, terminal,
// eventually, probe, constraint (each in the order given). Every problem is reported,
// each under its setting, and the definitions without one are returned
// all the same (so that their expressions can be checked too). Names must
// be unique, also against reserved (the built-in invariants' names).
func (s Settings) Defs(reserved []string) ([]Def, error) {
	var probs schema.Problems
	var out []Def
	seen := map[string]bool{}
	for _, r := range reserved {
		seen[r] = true
	}
	for _, g := range []struct {
		kind Kind
		vals schema.Repeated
	}{{Invariant, s.Invariant}, {Terminal, s.Terminal}, {Eventually, s.Eventually}, {Probe, s.Probe}, {Constraint, s.Constraint}} {
		for _, text := range g.vals {
			d, err := Parse(g.kind, text)
			if err != nil {
				probs.Add(settingOf(g.kind), "%v", err)
				continue
			}
			if seen[d.Name] {
				probs.Add(settingOf(g.kind), "%s: the name is taken (by a built-in invariant or another property); property names must be unique", d.Name)
				continue
			}
			seen[d.Name] = true
			out = append(out, d)
		}
	}
	return out, probs.Err()
}

// Parse reads NAME=EXPR. A name starts with a letter and holds letters,
// digits, '_', '-' and '.'; the expression's leading // lines are its
// statement.
func Parse(kind Kind, text string) (Def, error) {
	name, expr, ok := strings.Cut(text, "=")
	name = strings.TrimSpace(name)
	if !ok || strings.HasPrefix(expr, "=") || strings.ContainsAny(name, " \t\n()[]{}!<>&|\"'+*/%") {
		// No "=", or the first one is part of "==" or "<=", or what comes
		// before it is an expression rather than a name: the name is missing.
		return Def{}, fmt.Errorf("%q: want NAME=EXPR (a name, then the expression)", abbreviate(text))
	}
	if err := CheckName(name); err != nil {
		return Def{}, err
	}
	if strings.TrimSpace(expr) == "" {
		return Def{}, fmt.Errorf("%s: the expression is empty", name)
	}
	d := Def{Name: name, Kind: kind, Expr: expr, Statement: statementOf(expr)}
	if trig, _, ok := SplitLeadsTo(expr); ok {
		if kind != Eventually {
			return Def{}, fmt.Errorf("%s: P ~> Q (leads to) is an eventually property; give it with --eventually", name)
		}
		if strings.TrimSpace(trig) == "" {
			return Def{}, fmt.Errorf("%s: P ~> Q needs an expression on both sides", name)
		}
	}
	return d, nil
}

// SplitLeadsTo splits an eventually property written P ~> Q ("P leads to
// Q": whenever P holds, Q holds then or later, TLA+'s ~>) at its
// top-level ~> (one outside string literals); ok is false when there is
// none: the property is plain "eventually Q".
func SplitLeadsTo(expr string) (p, q string, ok bool) {
	var quote byte
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == '/' && i+1 < len(expr) && expr[i+1] == '/':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '~' && i+1 < len(expr) && expr[i+1] == '>':
			return expr[:i], expr[i+2:], true
		}
	}
	return "", expr, false
}

// CheckName reports what is wrong with name as a property's name, if anything:
// a letter, then letters, digits, '_', '-' or '.', at most 100 characters.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("a property needs a name (NAME=EXPR)")
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'):
		default:
			return fmt.Errorf("%q is not a property name: a letter, then letters, digits, '_', '-' or '.'", abbreviate(name))
		}
	}
	if len(name) > 100 {
		return fmt.Errorf("%q...: a property name has at most 100 characters", name[:40])
	}
	return nil
}

// statementOf joins the leading // comment lines of expr.
func statementOf(expr string) string {
	var lines []string
	for _, l := range strings.Split(expr, "\n") {
		l = strings.TrimSpace(l)
		if l == "" && len(lines) == 0 {
			continue
		}
		c, ok := strings.CutPrefix(l, "//")
		if !ok {
			break
		}
		lines = append(lines, strings.TrimSpace(c))
	}
	return strings.TrimSpace(strings.Join(lines, " "))
}

func abbreviate(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
