package specprops

import (
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/spec"
)

// TestUnknownIDs: a constant lookup of a client or bookie the parameters
// do not have is refused before the search; ids the run has, and lookups
// by a computed key, are not.
func TestUnknownIDs(t *testing.T) {
	p := spec.DefaultParams() // 2 bookies, 2 clients
	p.EnsureDefaults()
	for _, c := range []struct {
		expr, want string // want "": compiles
	}{
		{`clients["c2"].lac >= 0`, ""},
		{`b_fenced.b2 || !b_fenced.b1`, ""},
		{`clients.all(id, c, clients[id].lac >= 0)`, ""},
		{`clients["c3"].lac >= 0`, `clients["c3"]: the run has clients c1..c2`},
		{`clients.c0.lac >= 0`, `clients["c0"]: the run has clients c1..c2`},
		{`size(b_entries["b3"]) == 0`, `b_entries["b3"]: the run has bookies b1..b2`},
		{`b_lac["c1"] == 0`, `b_lac["c1"]: the run has bookies b1..b2`},
	} {
		_, err := Compile(p, []properties.Def{{Name: "P", Kind: properties.Invariant, Expr: c.expr}})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.expr, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.expr, err, c.want)
		}
	}
}

// TestSymmetricNames: under symmetry a property that names a relabelled
// bookie or client is refused, each name once; names of what is not
// relabelled, and properties over every id, are not.
func TestSymmetricNames(t *testing.T) {
	p := spec.DefaultParams()
	p.EnsureDefaults()
	bookies, clients, both := spec.Symmetry{Bookies: true}, spec.Symmetry{Clients: true}, spec.Symmetry{Bookies: true, Clients: true}
	for _, c := range []struct {
		sym  spec.Symmetry
		expr string
		want []string // the names refused, in order
	}{
		{both, `clients.all(id, c, c.lac >= 0) && b_fenced.all(b, f, f || !f)`, nil},
		{spec.Symmetry{}, `b_lac["b1"] >= 0`, nil},
		{clients, `b_lac["b1"] >= 0 && b_fenced.b2`, nil},
		{bookies, `b_lac["b1"] >= 0 && b_fenced.b2 && b_lac["b1"] == 0`, []string{`"b1"`, `"b2"`}},
		{bookies, `messages.exists(m, m.bookie == "b2")`, []string{`"b2"`}},
		{both, `clients.c1.lac >= 0 || "c2" in clients`, []string{`"c1"`, `"c2"`}},
		{both, `meta_status == "STATUS_CLOSED" && "bx" != "b"`, nil},
	} {
		set, err := Compile(p, []properties.Def{{Name: "P", Kind: properties.Invariant, Expr: c.expr}})
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		err = CheckSymmetric(c.sym, set.Properties())
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", c.expr, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted under %+v", c.expr, c.sym)
			continue
		}
		if got := strings.Count(err.Error(), "names "); got != len(c.want) {
			t.Errorf("%s: %d names refused, want %d: %v", c.expr, got, len(c.want), err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), "names "+w) {
				t.Errorf("%s: %v, want it to name %s", c.expr, err, w)
			}
		}
	}
}
