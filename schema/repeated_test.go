package schema

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type withRepeated struct {
	Count int      `name:"count" help:"a count"`
	Expr  Repeated `name:"expr" unit:"NAME=EXPR" group:"props" help:"an expression, repeatable"`
	Other Repeated `name:"other" group:"props" help:"another"`
}

var repeatedSchema = MustOf(withRepeated{})

// TestRepeatedFlags: each flag adds one whole value; commas stay inside it.
func TestRepeatedFlags(t *testing.T) {
	var got withRepeated
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	repeatedSchema.Register(fs, &got)
	if err := fs.Parse([]string{"--expr", "A=x in [1, 2]", "--expr=B=f(a, b)", "--count", "1"}); err != nil {
		t.Fatal(err)
	}
	want := Repeated{"A=x in [1, 2]", "B=f(a, b)"}
	if diff := cmp.Diff(want, got.Expr); diff != "" {
		t.Fatal(diff)
	}
	if err := repeatedSchema.Set(&got, "expr", "C=1,2"); err != nil || len(got.Expr) != 3 || got.Expr[2] != "C=1,2" {
		t.Fatalf("Set adds one value: %q %v", got.Expr, err)
	}
	if f, _ := repeatedSchema.Lookup("expr"); !f.IsRepeated() || f.IsList() || f.Group() != "props" {
		t.Fatalf("field %+v", f)
	}
}

// TestRepeatedTOML: a group is a table of its own; a Repeated setting is
// an array of strings or a table of KEY = "TEXT" strings, never split.
func TestRepeatedTOML(t *testing.T) {
	dir := t.TempDir()
	load := func(text string) (withRepeated, error) {
		path := filepath.Join(dir, "f.toml")
		os.WriteFile(path, []byte(text), 0o644)
		var out withRepeated
		f, err := LoadFile(path, repeatedSchema)
		if err != nil {
			return out, err
		}
		st, err := f.Resolve("")
		if err != nil {
			return out, err
		}
		return out, Apply(st, nil, Target{repeatedSchema, &out})
	}
	got, err := load("count = 2\n[props]\nexpr = [\"A=x in [1, 2]\", \"B=f(a, b)\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(withRepeated{Count: 2, Expr: Repeated{"A=x in [1, 2]", "B=f(a, b)"}}, got); diff != "" {
		t.Errorf("array: %s", diff)
	}
	got, err = load("[props.expr]\nZed = '''\n// multi\nline'''\nAlpha = \"a, b\"\n[props]\nother = \"just one\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(withRepeated{Expr: Repeated{"Alpha=a, b", "Zed=// multi\nline"}, Other: Repeated{"just one"}}, got); diff != "" {
		t.Errorf("table: %s", diff)
	}
	for text, want := range map[string]string{
		"expr = [\"A=1\"]\n":            `unknown key "expr"`, // only inside [props]
		"[props]\nexpr = [1, 2]\n":      "array of strings",
		"[props.expr]\nA = 3\n":         "table of strings",
		"[props]\nbogus = [\"x\"]\n":    `unknown key "props.bogus"`,
		"[runs.r.props]\nexpr = 1\n":    "not an array or a table",
		"[props]\nexpr = [\"x\", []]\n": "array of strings",
	} {
		if _, err := load(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", text, err, want)
		}
	}
	// Runs override the top level's list as a whole.
	path := filepath.Join(dir, "runs.toml")
	os.WriteFile(path, []byte("[props]\nexpr = [\"A=1\"]\n[runs.r.props]\nexpr = [\"B=2\", \"C=3\"]\n[runs.s]\ncount = 1\n"), 0o644)
	f, err := LoadFile(path, repeatedSchema)
	if err != nil {
		t.Fatal(err)
	}
	for run, want := range map[string]Repeated{"r": {"B=2", "C=3"}, "s": {"A=1"}} {
		st, _ := f.Resolve(run)
		var out withRepeated
		if err := Apply(st, nil, Target{repeatedSchema, &out}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, out.Expr); diff != "" {
			t.Errorf("run %s: %s", run, diff)
		}
	}
}

// TestRepeatedJSONAndText: JSON arrays and setting text round-trip; the
// rendered flags repeat the flag, quoted for a shell.
func TestRepeatedJSONAndText(t *testing.T) {
	src := withRepeated{Expr: Repeated{`A=m == "x, y"`, "B=it's"}}
	b, err := repeatedSchema.EncodeJSON(&src)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"count":0,"expr":["A=m == \"x, y\"","B=it's"],"other":[]}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var back withRepeated
	if err := repeatedSchema.DecodeJSON(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(src, back); diff != "" {
		t.Errorf("JSON: %s", diff)
	}
	var viaText withRepeated
	if err := Apply(Settings(repeatedSchema.Text(&src)), nil, Target{repeatedSchema, &viaText}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(src, viaText); diff != "" {
		t.Errorf("text: %s", diff)
	}
	if got, want := repeatedSchema.Flags(&src), `--expr 'A=m == "x, y"' --expr 'B=it'\''s'`; got != want {
		t.Errorf("flags %s, want %s", got, want)
	}
}
