package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bkcheck/bkcheck/spec"
)

// runParams is what a run directory records about the model it checks, so
// that --resume needs no flags and refuses flags that would change the
// state space.
type runParams struct {
	Params        spec.Params `json:"params"`
	Invariants    []string    `json:"invariants"`
	CheckDeadlock bool        `json:"check_deadlock"`
	Symmetry      string      `json:"symmetry"`
}

const runParamsFile = "params.json"

// modelID is the identity a checkpoint is tied to.
func (r runParams) modelID() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// sameModelID reports whether two model identities denote the same model.
// Settings that are off (zero, false, empty) are ignored on both sides: a
// parameter added to bkcheck later is off in every run written before it,
// and such a run must still resume. Any setting that is on must agree.
func sameModelID(a, b string) bool {
	na, errA := withoutZeroSettings(a)
	nb, errB := withoutZeroSettings(b)
	return errA == nil && errB == nil && na == nb
}

// withoutZeroSettings re-encodes a JSON model identity without its
// zero-valued settings (encoding/json sorts the keys it writes from maps).
func withoutZeroSettings(id string) (string, error) {
	var v any
	if err := json.Unmarshal([]byte(id), &v); err != nil {
		return "", err
	}
	b, err := json.Marshal(dropZero(v))
	return string(b), err
}

func dropZero(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e = dropZero(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		for i, e := range x {
			x[i] = dropZero(e)
		}
		return x
	case float64:
		if x == 0 {
			return nil
		}
	case bool:
		if !x {
			return nil
		}
	case string:
		if x == "" {
			return nil
		}
	}
	return v
}

func (f *checkFlags) runParams() runParams {
	return runParams{Params: f.params, Invariants: splitList(f.invariants), CheckDeadlock: f.checkDeadlock, Symmetry: f.sym.String()}
}

func loadRunParams(dir string) (runParams, error) {
	var r runParams
	b, err := os.ReadFile(filepath.Join(dir, runParamsFile))
	if errors.Is(err, os.ErrNotExist) {
		return r, fmt.Errorf("--resume %s: no run there (no %s)", dir, runParamsFile)
	}
	if err != nil {
		return r, fmt.Errorf("--resume: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("--resume: %s is corrupt: %v", filepath.Join(dir, runParamsFile), err)
	}
	return r, nil
}

// adoptStored takes the model of a run being resumed. Model flags given on
// the command line must agree with it; every disagreement is reported.
func (f *checkFlags) adoptStored(stored runParams) []string {
	given := f.runParams()
	if f.params.Ensemble == 0 {
		given.Params.Ensemble = given.Params.WriteQuorum
	}
	var probs []string
	differ := func(flagNames []string, got, want any) {
		for _, n := range flagNames {
			if f.setFlags[n] {
				probs = append(probs, fmt.Sprintf("cannot resume: --%s %v differs from the run's %v (resume takes the model from the run directory; omit the flag)", n, got, want))
				return
			}
		}
	}
	g, s := given.Params, stored.Params
	if g.Variant == "" {
		g.Variant = spec.Variants[0].Name
	}
	if s.Variant == "" {
		s.Variant = spec.Variants[0].Name
	}
	if g.Bookies != s.Bookies {
		differ([]string{"bookies"}, g.Bookies, s.Bookies)
	}
	if g.Clients != s.Clients {
		differ([]string{"clients"}, g.Clients, s.Clients)
	}
	if g.Ensemble != s.Ensemble {
		differ([]string{"ensemble", "e"}, g.Ensemble, s.Ensemble)
	}
	if g.WriteQuorum != s.WriteQuorum {
		differ([]string{"write-quorum", "w"}, g.WriteQuorum, s.WriteQuorum)
	}
	if g.AckQuorum != s.AckQuorum {
		differ([]string{"ack-quorum", "a"}, g.AckQuorum, s.AckQuorum)
	}
	if g.Entries != s.Entries {
		differ([]string{"entries"}, g.Entries, s.Entries)
	}
	if g.Inflight != s.Inflight {
		differ([]string{"inflight"}, g.Inflight, s.Inflight)
	}
	if g.Variant != s.Variant {
		differ([]string{"variant"}, g.Variant, s.Variant)
	}
	if g.Crashes != s.Crashes {
		differ([]string{"crashes"}, g.Crashes, s.Crashes)
	}
	if g.DataLoss != s.DataLoss {
		differ([]string{"data-loss"}, g.DataLoss, s.DataLoss)
	}
	if g.DataLossMode != s.DataLossMode {
		differ([]string{"data-loss-mode"}, g.DataLossMode, s.DataLossMode)
	}
	if strings.Join(g.Exclude, ",") != strings.Join(s.Exclude, ",") {
		differ([]string{"exclude-actions"}, strings.Join(g.Exclude, ","), strings.Join(s.Exclude, ","))
	}
	if g.ReliableNetwork != s.ReliableNetwork {
		differ([]string{"reliable-network"}, g.ReliableNetwork, s.ReliableNetwork)
	}
	if g.Unavailable != s.Unavailable {
		differ([]string{"unavailable"}, g.Unavailable, s.Unavailable)
	}
	if g.ReadOnly != s.ReadOnly {
		differ([]string{"read-only"}, g.ReadOnly, s.ReadOnly)
	}
	if strings.Join(given.Invariants, ",") != strings.Join(stored.Invariants, ",") {
		differ([]string{"invariants"}, strings.Join(given.Invariants, ","), strings.Join(stored.Invariants, ","))
	}
	if given.CheckDeadlock != stored.CheckDeadlock {
		differ([]string{"check-deadlock"}, given.CheckDeadlock, stored.CheckDeadlock)
	}
	if sym, _ := spec.ParseSymmetry(f.symmetry); f.setFlags["symmetry"] && sym.String() != stored.Symmetry {
		differ([]string{"symmetry"}, sym.String(), stored.Symmetry)
	}
	f.symmetry = stored.Symmetry
	f.params = stored.Params
	f.invariants = strings.Join(stored.Invariants, ",")
	f.checkDeadlock = stored.CheckDeadlock
	return probs
}

// prepareRunDir creates dir for a fresh run and records its model. It
// refuses a directory that already holds a run.
func prepareRunDir(dir string, r runParams) error {
	if _, err := os.Stat(filepath.Join(dir, runParamsFile)); err == nil {
		return fmt.Errorf("%s already holds a run; continue it with --resume %s or choose another --dir", dir, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating run directory: %w", err)
	}
	return writeRunFile(dir, runParamsFile, r)
}

// writeRunFile writes v as JSON to dir/name through a temporary file and a
// rename, so that an interrupted write never leaves half a file behind.
func writeRunFile(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

// runMemoryFile keeps the --memory budget of a run directory, so that
// --resume without --memory uses it. It is not part of the model: a run may
// be resumed with another budget (--memory), which then sticks.
const runMemoryFile = "memory.json"

type runMemory struct {
	Bytes int64 `json:"memory_bytes"` // 0: the default budget
}

func saveRunMemory(dir string, bytes int64) error {
	return writeRunFile(dir, runMemoryFile, runMemory{Bytes: bytes})
}

// loadRunMemory returns the budget recorded in dir; 0 (the default) for a
// run directory written before budgets were recorded.
func loadRunMemory(dir string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(dir, runMemoryFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	var m runMemory
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err == nil && m.Bytes < 0 {
		err = fmt.Errorf("negative budget %d", m.Bytes)
	}
	if err != nil {
		return 0, fmt.Errorf("--resume: %s is corrupt: %v", filepath.Join(dir, runMemoryFile), err)
	}
	return m.Bytes, nil
}

// parseSize reads sizes like 2GiB, 512MiB, 1.5G, 300M, 4096.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{
		{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
		{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3},
		{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1},
	}
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive size such as 2GiB or 512MiB", s)
	}
	if v*mult < 64<<20 {
		return 0, fmt.Errorf("%s is below the 64MiB minimum", s)
	}
	return int64(v * mult), nil
}
