package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// A sweep file has a [fixed] table (settings for every point, keys as in a
// parameter-set file) and a [grid] table whose keys take a list of values,
// or {from = A, to = B} for an integer range. Points are the cartesian
// product, in key order.
type sweepFile struct {
	Fixed runConfig      `toml:"fixed"`
	Grid  map[string]any `toml:"grid"`
}

// sweepPoint is one point of a sweep and its result: a row of the table.
type sweepPoint struct {
	Index     int               `json:"index"`
	Settings  map[string]string `json:"settings"`
	Status    string            `json:"status"` // ok, violation, unknown, skipped, error
	Reason    string            `json:"reason,omitempty"`
	Invariant string            `json:"invariant,omitempty"`
	Length    int               `json:"length,omitempty"`
	TraceFile string            `json:"trace_file,omitempty"`
	Distinct  int64             `json:"distinct"`
	Depth     int               `json:"depth"`
	ElapsedS  float64           `json:"elapsed_s"`
}

type sweepResult struct {
	Keys   []string     `json:"keys"`
	Total  int          `json:"total"` // points in the whole sweep
	Shard  string       `json:"shard"`
	Points []sweepPoint `json:"points"`
}

// gridKeys are the keys a grid may vary: the flags of a parameter-set file.
func gridKeys() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeOf(runConfig{})
	for i := 0; i < t.NumField(); i++ {
		if tag := t.Field(i).Tag.Get("toml"); tag != "" && !strings.HasPrefix(tag, "expect-") && tag != "slow" {
			keys[tag] = true
		}
	}
	return keys
}

func loadSweep(path string) (*sweepFile, []string, [][]string, error) {
	var sf sweepFile
	if err := decodeTOMLStrict(path, &sf); err != nil {
		return nil, nil, nil, err
	}
	allowed := gridKeys()
	var keys []string
	for k := range sf.Grid {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var values [][]string
	var probs []string
	for _, k := range keys {
		if !allowed[k] {
			probs = append(probs, fmt.Sprintf("%s: [grid] has unknown key %q", path, k))
			continue
		}
		vs, err := gridValues(sf.Grid[k])
		if err != nil {
			probs = append(probs, fmt.Sprintf("%s: [grid] %s: %v", path, k, err))
		}
		values = append(values, vs)
	}
	if len(keys) == 0 {
		probs = append(probs, path+": [grid] is empty")
	}
	if len(probs) > 0 {
		return nil, nil, nil, errors.New(strings.Join(probs, "; "))
	}
	return &sf, keys, values, nil
}

// gridValues turns a grid entry into flag values.
func gridValues(v any) ([]string, error) {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			switch ev := e.(type) {
			case []any: // a list value, e.g. invariants = [["A", "B"], ["C"]]
				parts := make([]string, len(ev))
				for i, p := range ev {
					parts[i] = fmt.Sprint(p)
				}
				out = append(out, strings.Join(parts, ","))
			default:
				out = append(out, fmt.Sprint(ev))
			}
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
	return []string{fmt.Sprint(v)}, nil
}

// shardFromEnv reads the shard from a scheduler: a Kubernetes Indexed Job
// (JOB_COMPLETION_INDEX, 0-based, with --shards N) or a Slurm job array
// (SLURM_ARRAY_TASK_ID relative to SLURM_ARRAY_TASK_MIN, and
// SLURM_ARRAY_TASK_COUNT).
func shardFromEnv(shards int) (i, n int, ok bool) {
	if idx, err := strconv.Atoi(os.Getenv("JOB_COMPLETION_INDEX")); err == nil && shards > 0 {
		return idx + 1, shards, true
	}
	if id, err := strconv.Atoi(os.Getenv("SLURM_ARRAY_TASK_ID")); err == nil {
		lo, _ := strconv.Atoi(os.Getenv("SLURM_ARRAY_TASK_MIN"))
		cnt, err := strconv.Atoi(os.Getenv("SLURM_ARRAY_TASK_COUNT"))
		if err != nil {
			cnt = shards
		}
		if cnt > 0 {
			return id - lo + 1, cnt, true
		}
	}
	return 0, 0, false
}

// runSweep is `bkcheck sweep FILE.toml` and `bkcheck sweep merge DIR...`.
func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "merge" {
		return runSweepMerge(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("bkcheck sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "sweep-results", "directory for results.md, results.csv, results.json and the traces")
	shard := fs.String("shard", "", "run only slice i of n (i/n, 1-based); default from JOB_COMPLETION_INDEX with --shards, or SLURM_ARRAY_TASK_ID")
	shards := fs.Int("shards", 0, "number of slices, for JOB_COMPLETION_INDEX")
	jobs := fs.Int("jobs", runtime.GOMAXPROCS(0), "points checked at once (each with cores/jobs workers)")
	file, err := parseWithFile(fs, args)
	if err != nil {
		return exitUsage
	}
	if file == "" {
		fmt.Fprintln(stderr, "usage: bkcheck sweep FILE.toml [--out DIR] [--shard i/n] [--jobs J]  |  bkcheck sweep merge DIR...")
		return exitUsage
	}
	sf, keys, values, err := loadSweep(file)
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck sweep: %v\n", err)
		return exitUsage
	}
	si, sn := 1, 1
	if *shard != "" {
		if _, err := fmt.Sscanf(*shard, "%d/%d", &si, &sn); err != nil || si < 1 || si > sn {
			fmt.Fprintf(stderr, "bkcheck sweep: --shard must be i/n with 1 <= i <= n (got %q)\n", *shard)
			return exitUsage
		}
	} else if i, n, ok := shardFromEnv(*shards); ok {
		si, sn = i, n
	}
	if si < 1 || si > sn || *jobs < 1 {
		fmt.Fprintf(stderr, "bkcheck sweep: bad shard %d/%d or --jobs %d\n", si, sn, *jobs)
		return exitUsage
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "bkcheck sweep: %v\n", err)
		return exitError
	}
	// Enumerate the cartesian product; keep this shard's points.
	total := 1
	for _, vs := range values {
		total *= len(vs)
	}
	var points []sweepPoint
	for idx := 0; idx < total; idx++ {
		if idx%sn != si-1 {
			continue
		}
		settings := map[string]string{}
		rem := idx
		for k := len(keys) - 1; k >= 0; k-- {
			settings[keys[k]] = values[k][rem%len(values[k])]
			rem /= len(values[k])
		}
		points = append(points, sweepPoint{Index: idx, Settings: settings})
	}
	fixed, err := os.CreateTemp(*out, ".fixed-*.toml")
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck sweep: %v\n", err)
		return exitError
	}
	enc := toml.NewEncoder(fixed)
	enc.Encode(sf.Fixed)
	fixed.Close()
	defer os.Remove(fixed.Name())
	workers := max(1, runtime.GOMAXPROCS(0) / *jobs)
	var wg sync.WaitGroup
	sem := make(chan struct{}, *jobs)
	for i := range points {
		wg.Add(1)
		sem <- struct{}{}
		go func(pt *sweepPoint) {
			defer wg.Done()
			defer func() { <-sem }()
			runPoint(ctx, pt, fixed.Name(), *out, workers)
		}(&points[i])
	}
	wg.Wait()
	res := sweepResult{Keys: keys, Total: total, Shard: fmt.Sprintf("%d/%d", si, sn), Points: points}
	if err := writeSweep(*out, res); err != nil {
		fmt.Fprintf(stderr, "bkcheck sweep: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "%d of %d points (shard %d/%d): results in %s/results.{md,csv,json}\n", len(points), total, si, sn, *out)
	if ctx.Err() != nil {
		return exitInterrupted
	}
	return exitOK
}

// runPoint checks one point in-process, like bkcheck check --json.
func runPoint(ctx context.Context, pt *sweepPoint, fixedFile, outDir string, workers int) {
	args := []string{"--config", fixedFile, "--workers", strconv.Itoa(workers),
		"--trace-out", filepath.Join(outDir, fmt.Sprintf("point-%04d.itf.json", pt.Index))}
	keys := make([]string, 0, len(pt.Settings))
	for k := range pt.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--"+k+"="+pt.Settings[k])
	}
	code, r, stderr, err := runCheckJSON(ctx, args)
	if code == exitUsage {
		reason := strings.TrimPrefix(stderr, "bkcheck check: invalid parameters:")
		pt.Status, pt.Reason = "skipped", strings.Join(strings.Fields(strings.ReplaceAll(reason, "\n  - ", "; ")), " ")
		pt.Reason = strings.TrimPrefix(pt.Reason, "- ")
		return
	}
	if code == exitError || err != nil {
		pt.Status, pt.Reason = "error", stderr
		return
	}
	pt.Status, pt.Reason, pt.Distinct, pt.Depth, pt.ElapsedS = r.Status, r.Reason, r.Distinct, r.Depth, r.ElapsedS
	if r.Violation != nil {
		pt.Invariant, pt.Length = r.invariantAndLength()
		pt.TraceFile = filepath.Base(r.TraceFile)
	}
}

// writeSweep writes the table as Markdown, CSV and JSON, rows by point index.
func writeSweep(dir string, res sweepResult) error {
	sort.Slice(res.Points, func(i, j int) bool { return res.Points[i].Index < res.Points[j].Index })
	jb, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(jb, '\n'), 0o644); err != nil {
		return err
	}
	header := append(append([]string{"point"}, res.Keys...), "verdict", "violated invariant", "trace length", "trace file", "distinct", "depth", "time (s)")
	var rows [][]string
	for _, p := range res.Points {
		row := []string{strconv.Itoa(p.Index)}
		for _, k := range res.Keys {
			row = append(row, p.Settings[k])
		}
		verdict := p.Status
		if p.Reason != "" {
			verdict += ": " + p.Reason
		}
		length, distinct, depth := "", "", ""
		if p.Length > 0 {
			length = strconv.Itoa(p.Length)
		}
		if p.Status != "skipped" && p.Status != "error" {
			distinct, depth = strconv.FormatInt(p.Distinct, 10), strconv.Itoa(p.Depth)
		}
		row = append(row, verdict, p.Invariant, length, p.TraceFile, distinct, depth, strconv.FormatFloat(p.ElapsedS, 'f', 2, 64))
		rows = append(rows, row)
	}
	var cb bytes.Buffer
	cw := csv.NewWriter(&cb)
	cw.Write(header)
	cw.WriteAll(rows)
	if err := os.WriteFile(filepath.Join(dir, "results.csv"), cb.Bytes(), 0o644); err != nil {
		return err
	}
	var mb strings.Builder
	fmt.Fprintf(&mb, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
	for _, r := range rows {
		for i := range r {
			r[i] = strings.ReplaceAll(r[i], "|", "\\|")
		}
		fmt.Fprintf(&mb, "| %s |\n", strings.Join(r, " | "))
	}
	return os.WriteFile(filepath.Join(dir, "results.md"), []byte(mb.String()), 0o644)
}

// runSweepMerge joins the results.json of several shards into one table.
func runSweepMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bkcheck sweep merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "sweep-results", "directory for the merged results")
	var dirs []string
	for len(args) > 0 {
		if strings.HasPrefix(args[0], "-") {
			if err := fs.Parse(args); err != nil {
				return exitUsage
			}
			args = fs.Args()
			continue
		}
		dirs, args = append(dirs, args[0]), args[1:]
	}
	if len(dirs) == 0 {
		fmt.Fprintln(stderr, "usage: bkcheck sweep merge SHARD_DIR... [--out DIR]")
		return exitUsage
	}
	var merged sweepResult
	seen := map[int]bool{}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "results.json"))
		if err != nil {
			fmt.Fprintf(stderr, "bkcheck sweep merge: %v\n", err)
			return exitUsage
		}
		var r sweepResult
		if err := json.Unmarshal(b, &r); err != nil {
			fmt.Fprintf(stderr, "bkcheck sweep merge: %s: %v\n", d, err)
			return exitUsage
		}
		if merged.Keys == nil {
			merged.Keys, merged.Total = r.Keys, r.Total
		} else if !reflect.DeepEqual(merged.Keys, r.Keys) || merged.Total != r.Total {
			fmt.Fprintf(stderr, "bkcheck sweep merge: %s is a slice of another sweep\n", d)
			return exitUsage
		}
		for _, p := range r.Points {
			if seen[p.Index] {
				fmt.Fprintf(stderr, "bkcheck sweep merge: point %d appears in two slices\n", p.Index)
				return exitUsage
			}
			seen[p.Index] = true
			merged.Points = append(merged.Points, p)
		}
	}
	merged.Shard = "merged"
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "bkcheck sweep merge: %v\n", err)
		return exitError
	}
	if err := writeSweep(*out, merged); err != nil {
		fmt.Fprintf(stderr, "bkcheck sweep merge: %v\n", err)
		return exitError
	}
	missing := merged.Total - len(merged.Points)
	fmt.Fprintf(stdout, "%d of %d points merged into %s", len(merged.Points), merged.Total, *out)
	if missing > 0 {
		fmt.Fprintf(stdout, " (%d missing: a slice has not run)", missing)
	}
	fmt.Fprintln(stdout)
	return exitOK
}
