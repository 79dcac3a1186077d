// Package sweep checks a grid of parameter sets: a TOML file with [fixed]
// settings for every point and a [grid] of values per setting, whose
// cartesian product is the set of points. A sweep can be cut into slices
// (shards) run on different machines and merged afterwards; the merged
// table equals the unsharded one.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/traces"
)

// File is a loaded sweep file.
type File struct {
	Path   string
	Fixed  schema.Settings
	Keys   []string   // grid keys, sorted
	Values [][]string // the values of each key, as setting text
}

// Load reads a sweep file strictly: [fixed] keys and [grid] keys must be
// settings of bkcheck check; every problem is reported at once, as
// schema.Problems each naming the file.
func Load(path string) (*File, error) {
	doc := reflect.StructOf([]reflect.StructField{
		{Name: "Fixed", Type: schema.TableType(check.ConfigSchema), Tag: `toml:"fixed"`},
		{Name: "Grid", Type: reflect.TypeFor[map[string]any](), Tag: `toml:"grid"`},
	})
	v := reflect.New(doc)
	if err := schema.DecodeTOMLStrict(path, v.Interface()); err != nil {
		return nil, err
	}
	f := &File{Path: path}
	var probs schema.Problems
	fixed, err := schema.TableSettings(v.Elem().Field(0))
	probs.Merge(err)
	f.Fixed = fixed
	grid := v.Elem().Field(1).Interface().(map[string]any)
	for k := range grid {
		f.Keys = append(f.Keys, k)
	}
	sort.Strings(f.Keys)
	for _, k := range f.Keys {
		if !check.ConfigSchema.Has(k) {
			probs.Add(k, "[grid] has no such setting")
			continue
		}
		vs, err := gridValues(grid[k])
		if err != nil {
			probs.Add(k, "[grid]: %v", err)
		}
		f.Values = append(f.Values, vs)
	}
	if len(f.Keys) == 0 {
		probs.Add("", "[grid] is empty")
	}
	if len(probs) > 0 {
		// Each problem names the file, the setting its key: the caller
		// lists them with its own (one "invalid settings", not two).
		named := make(schema.Problems, len(probs))
		for i, p := range probs {
			named[i] = schema.Problem{Msg: path + ": " + p.String()}
		}
		return nil, named
	}
	return f, nil
}

// gridValues turns a grid entry (a list of values, or {from = A, to = B})
// into setting texts.
func gridValues(v any) ([]string, error) {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			t, err := schema.ValueText(e)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		if len(out) == 0 {
			return nil, errors.New("empty list")
		}
		return out, nil
	case map[string]any:
		from, ok1 := x["from"].(int64)
		to, ok2 := x["to"].(int64)
		if !ok1 || !ok2 || len(x) != 2 || to < from || to-from > 1000 {
			return nil, errors.New("a range is {from = A, to = B} with integers A <= B")
		}
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, strconv.FormatInt(i, 10))
		}
		return out, nil
	}
	t, err := schema.ValueText(v)
	if err != nil {
		return nil, err
	}
	return []string{t}, nil
}

// Total is the number of points of the whole sweep.
func (f *File) Total() int {
	n := 1
	for _, vs := range f.Values {
		n *= len(vs)
	}
	return n
}

// Shard is slice I of N (1-based).
type Shard struct{ I, N int }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// ResolveShard is the slice given by --shard i/n, or by --shards n and a
// scheduler: a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, 0-based,
// with n the job's completions) or a Slurm job array (SLURM_ARRAY_TASK_ID
// relative to SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT tasks; no
// --shards needed). Neither: the whole sweep, 1/1. It is check's resolver
// of --shard and --shards, with a job array instead of a Slurm step.
func ResolveShard(shard string, shards int) (Shard, error) {
	i, n, err := check.Sharding{Shard: shard, Shards: shards}.ResolveFrom(check.IndexedJobShard, SlurmArrayShard)
	if err != nil {
		return Shard{}, err
	}
	return Shard{i + 1, n}, nil
}

// SlurmArrayShard is a task of a Slurm job array.
var SlurmArrayShard = check.ShardSource{Name: "SLURM_ARRAY_TASK_ID", Read: func(shards int) (int, int, bool, error) {
	v, set := os.LookupEnv("SLURM_ARRAY_TASK_ID")
	if !set {
		return 0, 0, false, nil
	}
	id, err := strconv.Atoi(v)
	if err != nil {
		return 0, 0, false, fmt.Errorf("SLURM_ARRAY_TASK_ID=%q is not a task number", v)
	}
	lo := 0
	if m, set := os.LookupEnv("SLURM_ARRAY_TASK_MIN"); set {
		if lo, err = strconv.Atoi(m); err != nil {
			return 0, 0, false, fmt.Errorf("SLURM_ARRAY_TASK_MIN=%q is not a task number", m)
		}
	}
	n := shards
	if c, set := os.LookupEnv("SLURM_ARRAY_TASK_COUNT"); set {
		if n, err = strconv.Atoi(c); err != nil || n < 1 {
			return 0, 0, false, fmt.Errorf("SLURM_ARRAY_TASK_COUNT=%q is not a task count", c)
		}
		if shards != 0 && shards != n {
			return 0, 0, false, fmt.Errorf("SLURM_ARRAY_TASK_COUNT=%d but --shards %d", n, shards)
		}
	}
	if n < 1 {
		return 0, 0, false, errors.New("SLURM_ARRAY_TASK_ID without SLURM_ARRAY_TASK_COUNT needs --shards")
	}
	if i := id - lo; i < 0 || i >= n {
		return 0, 0, false, fmt.Errorf("SLURM_ARRAY_TASK_ID=%d is not a slice of %d tasks from %d", id, n, lo)
	}
	return id - lo, n, true, nil
}}

// Point is one point of a sweep and its result: a row of the table.
type Point struct {
	Index     int               `json:"index"`
	Settings  map[string]string `json:"settings"`
	Status    string            `json:"status"` // ok, violation, unknown, skipped, error
	Reason    string            `json:"reason,omitempty"`
	Notes     []string          `json:"notes,omitempty"` // settings kept that change nothing here (check.GivenNote)
	Invariant string            `json:"invariant,omitempty"`
	Length    int               `json:"length,omitempty"`
	TraceFile string            `json:"trace-file,omitempty"`
	Distinct  int64             `json:"distinct"`
	Depth     int               `json:"depth"`
	ElapsedS  float64           `json:"elapsed-s"`
}

// Result is a table of points, of a slice or of the whole sweep.
type Result struct {
	Keys   []string `json:"keys"`
	Total  int      `json:"total"` // points in the whole sweep
	Shard  string   `json:"shard"`
	Points []Point  `json:"points"`
}

// Points lists the points of slice s, with their settings.
func (f *File) Points(s Shard) []Point {
	var points []Point
	for idx := 0; idx < f.Total(); idx++ {
		if idx%s.N != s.I-1 {
			continue
		}
		settings := map[string]string{}
		rem := idx
		for k := len(f.Keys) - 1; k >= 0; k-- {
			settings[f.Keys[k]] = f.Values[k][rem%len(f.Values[k])]
			rem /= len(f.Values[k])
		}
		points = append(points, Point{Index: idx, Settings: settings})
	}
	return points
}

// Options shape a sweep run.
type Options struct {
	Out   string // directory of the tables and the traces; must exist
	Shard Shard  // zero: the whole sweep
	Jobs  int    // points checked at once; 0: one per core
}

// Run checks the points of opt.Shard, opt.Jobs at a time, each with
// cores/jobs workers unless the file sets workers, and returns the table.
// Counterexamples are written to Out as point-NNNN.itf.json. Points not
// run because ctx was cancelled are reported unknown.
func Run(ctx context.Context, f *File, opt Options) *Result {
	if opt.Shard == (Shard{}) {
		opt.Shard = Shard{1, 1}
	}
	if opt.Jobs <= 0 {
		opt.Jobs = runtime.GOMAXPROCS(0)
	}
	workers := max(1, runtime.GOMAXPROCS(0)/opt.Jobs)
	points := f.Points(opt.Shard)
	var wg sync.WaitGroup
	sem := make(chan struct{}, opt.Jobs)
	for i := range points {
		wg.Add(1)
		sem <- struct{}{}
		go func(pt *Point) {
			defer wg.Done()
			defer func() { <-sem }()
			f.runPoint(ctx, pt, opt.Out, workers)
		}(&points[i])
	}
	wg.Wait()
	return &Result{Keys: f.Keys, Total: f.Total(), Shard: opt.Shard.String(), Points: points}
}

// pointConfig is the configuration of a point, by the rule bkcheck check
// applies to its flags and --config (check.ExplainDefaults): a setting
// that changes nothing is kept with a note ("journal = synced is the
// default"), a zero the defaults replace (ensemble = 0) is refused.
func (f *File) pointConfig(pt *Point, workers int) (check.Config, []string, error) {
	cfg := check.DefaultConfig()
	cfg.Workers = workers
	st := f.Fixed.With(pt.Settings)
	t := schema.Target{S: check.ConfigSchema, V: &cfg}
	if err := schema.Apply(st, nil, t); err != nil {
		return cfg, nil, err
	}
	given := map[string]string{}
	for _, name := range st.Names() {
		if check.ConfigSchema.Has(name) {
			given[name] = check.ConfigSchema.Get(&cfg, name)
		}
	}
	cfg.EnsureDefaults()
	notes, probs := check.ExplainDefaults(t, given)
	if len(probs) > 0 {
		probs.Merge(cfg.Validate()) // every problem of the point at once
		return cfg, nil, probs
	}
	return cfg, check.NoteLines(notes, func(field, value string) string { return field + " = " + value }), nil
}

// Interrupted is the reason of a point an interrupt stopped or never
// started.
const Interrupted = "interrupted"

// runPoint checks one point.
func (f *File) runPoint(ctx context.Context, pt *Point, outDir string, workers int) {
	if ctx.Err() != nil {
		pt.Status, pt.Reason = "unknown", Interrupted
		return
	}
	cfg, notes, err := f.pointConfig(pt, workers)
	pt.Notes = notes
	var rep *check.Report
	if err == nil {
		rep, err = check.Run(ctx, cfg)
	}
	if ps, ok := schema.AsProblems(err); ok {
		reasons := make([]string, len(ps))
		for i, p := range ps {
			reasons[i] = p.String()
		}
		pt.Status, pt.Reason = "skipped", strings.Join(reasons, "; ")
		return
	}
	if err != nil {
		pt.Status, pt.Reason = "error", err.Error()
		return
	}
	pt.Status, pt.Reason, pt.Distinct, pt.Depth, pt.ElapsedS = rep.Status.String(), rep.Reason, rep.Distinct, rep.Depth, rep.Elapsed.Seconds()
	if pt.Status == "unknown" && ctx.Err() != nil {
		pt.Reason = Interrupted // the search stopped at the interrupt, not at a bound
	}
	if v := rep.Violation; v != nil {
		pt.Invariant, pt.Length = v.Invariant, len(v.Trace)
	}
	if rep.Trace != nil {
		name := fmt.Sprintf("point-%04d.itf.json", pt.Index)
		if err := traces.WriteITFFile(filepath.Join(outDir, name), rep.Trace); err != nil {
			pt.Reason = "trace not written: " + err.Error()
		} else {
			pt.TraceFile = name
		}
	}
}
