package check_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/regress"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec/specprops"
)

// celSuffix names the CEL stand-in of a built-in (built-in names are
// reserved).
const celSuffix = "_cel"

// inCEL rewrites cfg's built-in properties as CEL properties: the CEL form
// of each (specprops.Builtins), in the same order, and no built-in.
func inCEL(t *testing.T, cfg check.Config) check.Config {
	t.Helper()
	cfg.EnsureDefaults()
	out := cfg
	out.Invariants = []string{"none"}
	out.Invariant, out.Terminal = nil, nil
	for _, name := range cfg.Invariants {
		b, ok := specprops.BuiltinByName(name)
		if !ok {
			t.Fatalf("built-in %s has no CEL form", name)
		}
		for _, d := range b.Defs(celSuffix) {
			text := d.Name + "=" + d.Expr
			switch d.Kind {
			case properties.Invariant:
				out.Invariant = append(out.Invariant, text)
			case properties.Terminal:
				out.Terminal = append(out.Terminal, text)
			}
		}
	}
	out.Invariant = append(out.Invariant, cfg.Invariant...)
	out.Terminal = append(out.Terminal, cfg.Terminal...)
	return out
}

// builtinName maps a CEL stand-in's name back to its built-in's.
func builtinName(name string) string {
	name = strings.TrimSuffix(name, ".terminal")
	return strings.TrimSuffix(name, celSuffix)
}

var quickCases = map[string]bool{
	"tlc-b1": true, "tlc-b1-symmetry": true, "tlc-b2-w1": true, "tlc-b2-w1-symmetry": true,
	"no-recovery-fence-2614": true, "reference-below-qw": true, "reformat-qa1": true,
}

// TestCELBuiltinsMatchRegress: with every built-in property replaced by
// its CEL form, each case of the regression suite gets the same verdict,
// the same figures, the same violated property and the same trace, state
// by state (an ok case whose figures the suite pins is compared with
// them, the compiled run being TestRegress's). The default tier runs the quick cases (the two TLC sets
// below 10,000 states with and without symmetry, the 2614 truncation, a
// below-Qw violation, a re-format loss: about 3 s); the long tier all.
func TestCELBuiltinsMatchRegress(t *testing.T) {
	cases, err := regress.Load("../testdata/regress")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Label(), func(t *testing.T) {
			if c.Config.Model == check.ModelV413 {
				t.Skip("the release-4.13 model has no CEL view")
			}
			if !quickCases[c.Name] {
				testtier.Long(t, "a regression case of many states, searched twice")
			}
			cfg := c.Config
			cfg.Workers = 2
			cel := inCEL(t, cfg)
			if e := c.Expect; e.Status == "ok" && e.Distinct > 0 && e.Generated > 0 && e.Depth > 0 {
				// The compiled run's figures are the case's own, which
				// the suite (TestRegress) holds it to: the CEL run is
				// compared with them, without a second search.
				got, err := check.Run(context.Background(), cel)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got.Status) != e.Status || got.Distinct != e.Distinct || got.Generated != e.Generated || got.Depth != e.Depth {
					t.Fatalf("CEL: %s %d distinct %d generated depth %d; the case expects %s %d %d %d",
						got.Status, got.Distinct, got.Generated, got.Depth, e.Status, e.Distinct, e.Generated, e.Depth)
				}
				return
			}
			want, err := check.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := check.Run(context.Background(), cel)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != want.Status || got.Distinct != want.Distinct || got.Generated != want.Generated || got.Depth != want.Depth {
				t.Fatalf("CEL: %s %d distinct %d generated depth %d; compiled: %s %d %d %d",
					got.Status, got.Distinct, got.Generated, got.Depth, want.Status, want.Distinct, want.Generated, want.Depth)
			}
			if (got.Trace == nil) != (want.Trace == nil) {
				t.Fatalf("CEL trace %v, compiled %v", got.Trace != nil, want.Trace != nil)
			}
			if want.Trace == nil {
				return
			}
			if builtinName(got.Trace.Invariant) != want.Trace.Invariant || got.Trace.Terminal != want.Trace.Terminal {
				t.Errorf("CEL violates %s (terminal %v), compiled %s (terminal %v)", got.Trace.Invariant, got.Trace.Terminal, want.Trace.Invariant, want.Trace.Terminal)
			}
			if diff := cmp.Diff(want.Trace.Steps, got.Trace.Steps); diff != "" {
				t.Errorf("traces differ (-compiled +CEL):\n%s", diff)
			}
			if err := check.Replay(got.Trace); err != nil {
				t.Errorf("the CEL trace does not replay: %v", err)
			}
		})
	}
}

// TestInvariantsNone: --invariants none checks the CEL properties alone,
// and cannot be combined with a built-in.
func TestInvariantsNone(t *testing.T) {
	cfg := check.DefaultConfig()
	cfg.Invariants = []string{"none", "TypeOK"}
	cfg.EnsureDefaults()
	err := cfg.Validate()
	if ps, ok := schema.AsProblems(err); !ok || len(ps) != 1 || ps[0].Field != "invariants" {
		t.Fatalf("got %v", err)
	}
}
