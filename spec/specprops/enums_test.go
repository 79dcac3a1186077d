package specprops

import (
	"strings"
	"testing"

	"cel.dev/cel-go/cel"

	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/spec"
)

// TestEnumLiterals (issue 38): a comparison of an enumerated field (a
// status, a message's type or code) with a string literal none of its
// values is refused before the search, the error listing the values
// (meta_status == "CLOSED" was a search that answered "not reachable");
// a literal spelt as traces print the value (CLOSED, AddEntryRequest)
// means the value, on the fast path and through cel-go alike.
func TestEnumLiterals(t *testing.T) {
	p := spec.DefaultParams()
	p.EnsureDefaults()
	for _, c := range []struct{ expr, want string }{
		{`meta_status == "CLOSED2"`, `"CLOSED2" is not a value of meta_status, which holds one of Nil, STATUS_OPEN, STATUS_IN_RECOVERY, STATUS_CLOSED (or, as traces print them, OPEN, IN_RECOVERY, CLOSED)`},
		{`"CLIENT_WITHDRAWN" != meta_status`, `"CLIENT_WITHDRAWN" is not a value of meta_status`},
		{`clients.exists(id, c, c.status in ["OPEN", "WITHDRAWN"])`, `"WITHDRAWN" is not a value of a Client's status, which holds one of Nil, STATUS_OPEN, STATUS_IN_RECOVERY, STATUS_CLOSED, CLIENT_WITHDRAWN, RECOVERY_ABORTED`},
		{`clients["c1"].status == "closed"`, `"closed" is not a value of a Client's status`},
		{`messages.exists(m, m.type == "AddEntry")`, `"AddEntry" is not a value of a Message's type, which holds one of AddEntryRequestMessage,`},
		{`messages.exists(m, m.code == "ok")`, `"ok" is not a value of a Message's code, which holds one of OK, NoSuchEntry, Unknown, ReadOnly`},
	} {
		_, err := Compile(p, []properties.Def{{Name: "P", Kind: properties.Probe, Expr: c.expr}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.expr, err, c.want)
		}
	}
	// Either spelling, the same answers; and some state where they hold.
	same := []struct{ short, long string }{
		{`meta_status == "CLOSED"`, `meta_status == "STATUS_CLOSED"`},
		{`"IN_RECOVERY" != meta_status`, `"STATUS_IN_RECOVERY" != meta_status`},
		{`clients.exists(id, c, c.status in ["OPEN", "STATUS_CLOSED"] && c.lac >= 1)`, `clients.exists(id, c, c.status in ["STATUS_OPEN", "STATUS_CLOSED"] && c.lac >= 1)`},
		{`messages.exists(m, m.type == "FenceRequest" && m.count == 0)`, `messages.exists(m, m.type == "FenceRequestMessage" && m.count == 0)`},
		{`clients.exists(id, c, c.status == "IN_RECOVERY" || c.status == "RECOVERY_ABORTED")`, `clients.exists(id, c, c.status == "STATUS_IN_RECOVERY" || c.status == "RECOVERY_ABORTED")`},
	}
	var defs []properties.Def
	for i, c := range same {
		defs = append(defs, properties.Def{Name: "S" + string(rune('a'+i)), Kind: properties.Invariant, Expr: c.short},
			properties.Def{Name: "L" + string(rune('a'+i)), Kind: properties.Invariant, Expr: c.long})
	}
	set, err := Compile(p, defs)
	if err != nil {
		t.Fatal(err)
	}
	// Explanations print (and evaluate) sub-expressions from the
	// expression and its macros' record: both read the value.
	for i, c := range same {
		short, err1 := cel.AstToString(set.Props[2*i].AST())
		long, err2 := cel.AstToString(set.Props[2*i+1].AST())
		if short != long || err1 != nil || err2 != nil {
			t.Errorf("%s prints as %s (%v), %s as %s (%v)", c.short, short, err1, c.long, long, err2)
		}
	}
	fast, _ := set.NewEvaluator()
	slow, _ := set.NewEvaluator()
	slow.noFast = true
	held := make([]bool, len(same))
	states, _ := sampleStates(t, p, 60)
	for si := range states {
		for _, ev := range []*Evaluator{fast, slow} {
			ev.Load(&states[si])
			for i, c := range same {
				s, serr := ev.Holds(2 * i)
				l, lerr := ev.Holds(2*i + 1)
				if s != l || serr != nil || lerr != nil {
					t.Fatalf("state %d: %s is %v (%v), %s is %v (%v)", si, c.short, s, serr, c.long, l, lerr)
				}
				held[i] = held[i] || l
			}
		}
	}
	for i, h := range held {
		if !h {
			t.Errorf("%s holds in no state sampled: the comparison shows nothing", same[i].long)
		}
	}
}
