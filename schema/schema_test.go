package schema

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type inner struct {
	Count int `name:"count" short:"c" unit:"N" help:"a count"`
}

type sample struct {
	inner
	Name    string        `name:"name" help:"a name"`
	On      bool          `name:"on" help:"a switch"`
	List    []string      `name:"list" help:"a list"`
	Wait    time.Duration `name:"wait" help:"a duration"`
	Rate    float64       `name:"rate" help:"a rate"`
	Big     uint64        `name:"big" help:"a big number"`
	Memory  Size          `name:"memory" help:"a size"`
	Ignored func()        `name:"-"`
	//lint:ignore U1000 the schema must skip unexported fields; this one is there to be skipped
	private int
}

var sampleSchema = MustOf(sample{})

func TestOfRejectsUndeclaredFields(t *testing.T) {
	type bad struct {
		Named   int `name:"named" help:"ok"`
		Unnamed int
		NoHelp  int                `name:"no-help"`
		Dup     int                `name:"named" help:"twice"`
		Weird   map[string]float64 `name:"weird" help:"not a setting type"`
	}
	_, err := Of(bad{})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"Unnamed has no name tag", "NoHelp (no-help) has no help tag", `name "named" is declared twice`, "cannot be a setting"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestFieldsFlattenEmbedded(t *testing.T) {
	var names []string
	for _, f := range sampleSchema.Fields() {
		names = append(names, f.Name)
	}
	want := []string{"count", "name", "on", "list", "wait", "rate", "big", "memory"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatal(diff)
	}
	if f, ok := sampleSchema.Lookup("c"); !ok || f.Name != "count" || f.GoName != "Count" {
		t.Fatalf("alias lookup: %+v %v", f, ok)
	}
}

var full = sample{inner: inner{Count: 3}, Name: "x y", On: true, List: []string{"a", "b"}, Wait: 1500 * time.Millisecond, Rate: 0.25, Big: 1 << 40, Memory: 3 << 20}

// TestRoundTrips: every setting survives flags, text, TOML and JSON.
func TestRoundTrips(t *testing.T) {
	cmpOpts := cmp.AllowUnexported(sample{})
	opts := []cmp.Option{cmpOpts, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Ignored" }, cmp.Ignore())}

	var viaFlags sample
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	sampleSchema.Register(fs, &viaFlags)
	if err := fs.Parse([]string{"-c", "3", "--name", "x y", "--on", "--list", "a,b", "--wait", "1.5s", "--rate", "0.25", "--big", "1099511627776", "--memory", "3MiB"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full, viaFlags, opts...); diff != "" {
		t.Errorf("flags: %s", diff)
	}

	var viaText sample
	src := full
	for name, text := range sampleSchema.Text(&src) {
		if err := sampleSchema.Set(&viaText, name, text); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(full, viaText, opts...); diff != "" {
		t.Errorf("text: %s", diff)
	}

	b, err := sampleSchema.EncodeJSON(&src)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"count":3,"name":"x y","on":true,"list":["a","b"],"wait":"1.5s"`) {
		t.Errorf("JSON keys not in declaration order: %s", b)
	}
	var viaJSON sample
	if err := sampleSchema.DecodeJSON(b, &viaJSON); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full, viaJSON, opts...); diff != "" {
		t.Errorf("JSON: %s", diff)
	}
	if err := sampleSchema.DecodeJSON([]byte(`{"count":1,"bogus":2,"Name":"x"}`), &viaJSON); err == nil ||
		!strings.Contains(err.Error(), "bogus: unknown key") || !strings.Contains(err.Error(), "Name: unknown key") {
		t.Errorf("strict JSON: %v", err)
	}

	path := filepath.Join(t.TempDir(), "f.toml")
	os.WriteFile(path, []byte("count = 1\nname = \"x y\"\non = true\nlist = [\"a\", \"b\"]\nwait = \"1.5s\"\nrate = 0.25\nbig = 1099511627776\nmemory = \"3MiB\"\n\n[runs.r]\ncount = 3\n"), 0o644)
	f, err := LoadFile(path, sampleSchema)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Resolve("r")
	if err != nil {
		t.Fatal(err)
	}
	var viaTOML sample
	if err := Apply(st, nil, Target{sampleSchema, &viaTOML}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full, viaTOML, opts...); diff != "" {
		t.Errorf("TOML: %s", diff)
	}
}

func TestLoadFileStrict(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(path, []byte("count = 2\nconut = 2\n\n[runs.x]\nnmae = \"a\"\n"), 0o644)
	_, err := LoadFile(path, sampleSchema)
	if err == nil || !strings.Contains(err.Error(), `bad.toml:2: unknown key "conut"`) || !strings.Contains(err.Error(), `bad.toml:5: unknown key "runs.x.nmae"`) {
		t.Fatalf("got %v", err)
	}
	os.WriteFile(path, []byte("count = \"many\"\nrate = [1, [2]]\n"), 0o644)
	f, err := LoadFile(path, sampleSchema)
	if err == nil {
		var s sample
		st, _ := f.Resolve("")
		err = Apply(st, nil, Target{sampleSchema, &s})
	}
	if err == nil || !strings.Contains(err.Error(), "rate") {
		t.Fatalf("got %v", err)
	}
}

func TestProblemsRender(t *testing.T) {
	var ps Problems
	ps.Add("write-quorum", "must be at least 1 (got %d)", 0)
	ps.Add("", "something else")
	got := ps.Render(func(f string) string { return "-w" })
	want := "invalid settings:\n  - -w: must be at least 1 (got 0)\n  - something else"
	if got != want {
		t.Fatalf("got %q", got)
	}
	var none Problems
	if none.Err() != nil {
		t.Fatal("empty problems are an error")
	}
	back, ok := AsProblems(ps.Err())
	if !ok || len(back) != 2 {
		t.Fatal("AsProblems")
	}
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]Size{"2GiB": 2 << 30, "512MiB": 512 << 20, "1.5G": 3 << 29, "100000000": 100000000, "0": 0} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1GiB", "1e30GiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
	for _, z := range []Size{2 << 30, 300 << 20, 5 << 10, 1000} {
		if back, err := ParseSize(z.String()); err != nil || back != z {
			t.Errorf("%d -> %q -> %d", z, z.String(), back)
		}
	}
}

func TestFlagsRender(t *testing.T) {
	s := sample{inner: inner{Count: 2}, Name: "a b", On: true}
	got := sampleSchema.Flags(&s, "rate")
	if got != `--count 2 --name "a b" --on --rate 0` {
		t.Fatalf("got %q", got)
	}
}

// TestOmitZeroJSON: a setting tagged omitzero is left out of EncodeJSON at
// its zero value and written otherwise; decoding either form gives the
// value back.
func TestOmitZeroJSON(t *testing.T) {
	type settings struct {
		A int    `name:"a" help:"always written"`
		B string `name:"b" omitzero:"true" help:"left out when empty"`
		C int    `name:"c" omitzero:"true" help:"left out when 0"`
	}
	s := MustOf(settings{})
	for _, tc := range []struct {
		in   settings
		want string
	}{
		{settings{}, `{"a":0}`},
		{settings{A: 1, C: 2}, `{"a":1,"c":2}`},
		{settings{B: "x"}, `{"a":0,"b":"x"}`},
	} {
		got, err := s.EncodeJSON(&tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("EncodeJSON(%+v) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
		var back settings
		if err := s.DecodeJSON(got, &back); err != nil || back != tc.in {
			t.Errorf("DecodeJSON(%s) = %+v, %v; want %+v", got, back, err, tc.in)
		}
	}
}
