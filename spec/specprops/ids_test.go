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
