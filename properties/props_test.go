package properties

import (
	"strings"
	"testing"
)

// TestParse: NAME=EXPR, with the messages a user meets first: a missing
// name (an expression whose first "=" belongs to "==" or "<="), a bad
// name, an empty expression, a leads-to outside --eventually.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		kind       Kind
		text, want string // want "": parses
	}{
		{Invariant, `A=meta_status == "Nil"`, ""},
		{Invariant, `a.b-c_1=true`, ""},
		{Eventually, `L=meta_status == "STATUS_OPEN" ~> meta_status == "STATUS_CLOSED"`, ""},
		{Invariant, `meta_status == "Nil"`, "want NAME=EXPR"},
		{Invariant, `size(b_down) <= 1`, "want NAME=EXPR"},
		{Invariant, `no equals sign`, "want NAME=EXPR"},
		{Invariant, `1A=true`, "name"},
		{Invariant, `A=  `, "the expression is empty"},
		{Invariant, `L=true ~> true`, "give it with --eventually"},
	} {
		_, err := Parse(c.kind, c.text)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.text, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.text, err, c.want)
		}
	}
}
