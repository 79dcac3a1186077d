// Package regress is bkcheck's regression suite: parameter-set files whose
// runs carry expectations (verdict, violated property, trace length,
// counts), checked by running each through check.Run. A drift is any
// difference, reported field by field.
package regress

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/schema"
)

// Expect is what a run of the suite must produce. Zero fields are not
// checked.
type Expect struct {
	Status    string `name:"expect-status" unit:"S" help:"expected verdict: ok, violation, unknown or error"`
	Invariant string `name:"expect-invariant" unit:"NAME" help:"expected violated property"`
	Length    int    `name:"expect-length" unit:"N" help:"expected counterexample length (states)"`
	Distinct  int64  `name:"expect-distinct" unit:"N" help:"expected distinct states (orbits with symmetry)"`
	Generated int64  `name:"expect-generated" unit:"N" help:"expected states generated"`
	Depth     int    `name:"expect-depth" unit:"N" help:"expected depth"`
	Slow      bool   `name:"slow" help:"takes more than a few seconds: run only with --all (and in the long test tier)"`
}

// Statuses are the verdicts expect-status names (explorer.Status's
// names).
var Statuses = []string{"ok", "violation", "unknown", "error"}

// problems lists what is wrong with e, checked when its file is read: a
// verdict no run can have would otherwise be run and reported as a drift.
func (e Expect) problems() schema.Problems {
	var probs schema.Problems
	if e.Status != "" && !slices.Contains(Statuses, e.Status) {
		probs.Add("expect-status", "must be ok, violation, unknown or error (got %q)", e.Status)
	}
	return probs
}

// ExpectSchema is the schema of Expect: the keys a suite file adds to a
// parameter-set file.
var ExpectSchema = schema.MustOf(Expect{})

// Case is one run of the suite.
type Case struct {
	File   string // base name of the file
	Name   string // the run's name in it
	Config check.Config
	Expect Expect
}

// Label names the case in reports: file:run.
func (c Case) Label() string { return c.File + ":" + c.Name }

// LoadFile reads the cases of one suite file. Its keys are the settings of
// bkcheck check (those of other commands are allowed and ignored, so a
// suite file is also a parameter-set file) plus the expectations.
func LoadFile(path string, extra ...*schema.Schema) ([]Case, error) {
	f, err := schema.LoadFile(path, append([]*schema.Schema{check.ConfigSchema, check.SimSchema, ExpectSchema}, extra...)...)
	if err != nil {
		return nil, err
	}
	var cases []Case
	var probs schema.Problems
	for _, name := range f.RunNames() {
		st, _ := f.Resolve(name)
		c := Case{File: filepath.Base(path), Name: name, Config: check.DefaultConfig()}
		if err := schema.Apply(st, nil, schema.Target{S: check.ConfigSchema, V: &c.Config}, schema.Target{S: ExpectSchema, V: &c.Expect}); err != nil {
			probs.Add("", "%s: run %s: %v", path, name, err)
			continue
		}
		if bad := c.Expect.problems(); len(bad) > 0 {
			for _, p := range bad {
				probs.Add("", "%s: run %s: %s", path, name, p)
			}
			continue
		}
		cases = append(cases, c)
	}
	return cases, probs.Err()
}

// Load reads every *.toml file of dir, files and runs in name order; dir
// may also be one suite file (*.toml). A dir that does not exist or is
// another kind of file is an error that says so.
func Load(dir string) ([]Case, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such directory", dir)
	case err != nil:
		return nil, err
	case !fi.IsDir() && strings.HasSuffix(dir, ".toml"):
		return LoadFile(dir)
	case !fi.IsDir():
		return nil, fmt.Errorf("%s is not a directory (give a directory of *.toml suite files, or one .toml file)", dir)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.toml files in %s", dir)
	}
	sort.Strings(files)
	var all []Case
	var probs schema.Problems
	for _, file := range files {
		cases, err := LoadFile(file)
		probs.Merge(err)
		all = append(all, cases...)
	}
	return all, probs.Err()
}

// Outcome is the result of running one case.
type Outcome struct {
	Case    Case
	Report  *check.Report // nil when the run failed
	Err     error         // the run could not be done
	Drifts  []string      // differences from the expectation
	Elapsed time.Duration
}

// OK reports whether the case ran and matched its expectation.
func (o Outcome) OK() bool { return o.Err == nil && len(o.Drifts) == 0 }

// Run checks one case. workers 0 means all cores.
func Run(ctx context.Context, c Case) Outcome {
	start := time.Now()
	rep, err := check.Run(ctx, c.Config)
	out := Outcome{Case: c, Report: rep, Err: err, Elapsed: time.Since(start)}
	if err != nil {
		return out
	}
	out.Drifts = Compare(c.Expect, rep)
	return out
}

// Compare lists every way rep differs from e.
func Compare(e Expect, rep *check.Report) []string {
	var bad []string
	inv, length := "", 0
	if v := rep.Violation; v != nil {
		inv, length = v.Invariant, len(v.Trace)
	}
	if e.Status != "" && e.Status != rep.Status.String() {
		bad = append(bad, fmt.Sprintf("status %s, expected %s", rep.Status, e.Status))
	}
	if e.Invariant != "" && e.Invariant != inv {
		bad = append(bad, fmt.Sprintf("violated invariant %q, expected %q", inv, e.Invariant))
	}
	if e.Length != 0 && e.Length != length {
		bad = append(bad, fmt.Sprintf("trace length %d, expected %d", length, e.Length))
	}
	if e.Distinct != 0 && e.Distinct != rep.Distinct {
		bad = append(bad, fmt.Sprintf("distinct %d, expected %d", rep.Distinct, e.Distinct))
	}
	if e.Generated != 0 && e.Generated != rep.Generated {
		bad = append(bad, fmt.Sprintf("generated %d, expected %d", rep.Generated, e.Generated))
	}
	if e.Depth != 0 && e.Depth != rep.Depth {
		bad = append(bad, fmt.Sprintf("depth %d, expected %d", rep.Depth, e.Depth))
	}
	if len(rep.Uncovered) > 0 {
		bad = append(bad, fmt.Sprintf("never fired: %s (the variant or fault it adds was not exercised)", strings.Join(rep.Uncovered, ", ")))
	}
	return bad
}

// Summary is one line for a passing outcome.
func (o Outcome) Summary() string {
	r := o.Report
	s := fmt.Sprintf("%s, %d distinct, depth %d", r.Status, r.Distinct, r.Depth)
	if v := r.Violation; v != nil {
		s += fmt.Sprintf(", %s violated in %d states", v.Invariant, len(v.Trace))
	}
	return s + fmt.Sprintf(" (%.1fs)", o.Elapsed.Seconds())
}

// DriftText joins an outcome's drifts for a report line.
func (o Outcome) DriftText() string { return strings.Join(o.Drifts, "; ") }
