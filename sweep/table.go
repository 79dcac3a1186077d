package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/bkcheck/bkcheck/internal/atomicfile"
)

// Write writes the table as results.json, results.csv and results.md in
// dir, rows by point index, each file atomically.
func Write(dir string, res *Result) error {
	sort.Slice(res.Points, func(i, j int) bool { return res.Points[i].Index < res.Points[j].Index })
	jb, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "results.json"), append(jb, '\n')); err != nil {
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
	if err := atomicfile.WriteFile(filepath.Join(dir, "results.csv"), cb.Bytes()); err != nil {
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
	return atomicfile.WriteFile(filepath.Join(dir, "results.md"), []byte(mb.String()))
}

// Read reads the results.json of dir.
func Read(dir string) (*Result, error) {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "results.json"), err)
	}
	return &r, nil
}

// Merge joins slices of one sweep. It fails if a slice belongs to another
// sweep or two slices hold the same point; missing lists the points no
// slice holds (the merged table then lacks them).
func Merge(dirs []string) (merged *Result, missing []int, err error) {
	merged = &Result{Shard: "merged"}
	seen := map[int]bool{}
	for _, d := range dirs {
		r, err := Read(d)
		if err != nil {
			return nil, nil, err
		}
		if merged.Keys == nil {
			merged.Keys, merged.Total = r.Keys, r.Total
		} else if !reflect.DeepEqual(merged.Keys, r.Keys) || merged.Total != r.Total {
			return nil, nil, fmt.Errorf("%s is a slice of another sweep", d)
		}
		for _, p := range r.Points {
			if seen[p.Index] {
				return nil, nil, fmt.Errorf("point %d appears in two slices", p.Index)
			}
			seen[p.Index] = true
			merged.Points = append(merged.Points, p)
		}
	}
	for i := 0; i < merged.Total; i++ {
		if !seen[i] {
			missing = append(missing, i)
		}
	}
	return merged, missing, nil
}
