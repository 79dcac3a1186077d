package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/internal/atomicfile"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
)

// A run directory (--store badger --dir DIR) holds, besides the explorer's
// levels and checkpoints and the visited store:
//
//	params.json  the ModelConfig, so that resuming needs no flags and
//	             refuses flags that would change the state space
//	memory.json  the memory budget, so that resuming keeps it
const (
	runParamsFile = "params.json"
	runMemoryFile = "memory.json"
)

// RunRecord is what a run directory says about its run.
type RunRecord struct {
	Model  ModelConfig
	Memory schema.Size // 0: the default budget
}

// memoryRecord is memory.json.
type memoryRecord struct {
	Memory schema.Size `name:"memory" help:"the run's memory budget"`
}

var memorySchema = schema.MustOf(memoryRecord{})

// ReadRunDir reads the record of the run in dir, including directories
// written by earlier versions of bkcheck (Go field names in params.json,
// memory_bytes in memory.json).
func ReadRunDir(dir string) (RunRecord, error) {
	var rec RunRecord
	b, err := os.ReadFile(filepath.Join(dir, runParamsFile))
	if errors.Is(err, os.ErrNotExist) {
		return rec, fmt.Errorf("%s holds no run (no %s)", dir, runParamsFile)
	}
	if err != nil {
		return rec, err
	}
	if rec.Model, err = DecodeModelID(b); err != nil {
		return rec, fmt.Errorf("%s is corrupt: %v", filepath.Join(dir, runParamsFile), err)
	}
	b, err = os.ReadFile(filepath.Join(dir, runMemoryFile))
	if errors.Is(err, os.ErrNotExist) {
		return rec, nil // written before budgets were recorded: the default
	}
	if err == nil {
		err = decodeMemory(b, &rec.Memory)
	}
	if err != nil {
		return rec, fmt.Errorf("%s is corrupt: %v", filepath.Join(dir, runMemoryFile), err)
	}
	return rec, nil
}

func decodeMemory(b []byte, m *schema.Size) error {
	var legacy struct {
		Bytes *int64 `json:"memory_bytes"`
	}
	if json.Unmarshal(b, &legacy) == nil && legacy.Bytes != nil {
		if *legacy.Bytes < 0 {
			return fmt.Errorf("negative budget %d", *legacy.Bytes)
		}
		*m = schema.Size(*legacy.Bytes)
		return nil
	}
	var rec memoryRecord
	if err := memorySchema.DecodeJSON(b, &rec); err != nil {
		return err
	}
	*m = rec.Memory
	return nil
}

// DecodeModelID reads a model identity (params.json, a checkpoint's model
// id): the schema's JSON, or the form bkcheck wrote before it, with Go
// field names under "params". Settings absent from it are off, so a run
// written before a setting existed still resumes; defaults are filled in.
func DecodeModelID(b []byte) (ModelConfig, error) {
	var mc ModelConfig
	var legacy struct {
		Params        json.RawMessage `json:"params"`
		Invariants    []string        `json:"invariants"`
		CheckDeadlock bool            `json:"check_deadlock"`
		Symmetry      string          `json:"symmetry"`
	}
	if err := json.Unmarshal(b, &legacy); err == nil && legacy.Params != nil {
		p, err := spec.DecodeLegacyParams(legacy.Params)
		if err != nil {
			return mc, err
		}
		mc.Params = p
		sym, err := spec.ParseSymmetry(legacy.Symmetry)
		if err != nil {
			return mc, err
		}
		mc.Invariants, mc.CheckDeadlock, mc.Symmetry = legacy.Invariants, legacy.CheckDeadlock, sym
	} else if err := ModelSchema.DecodeJSON(b, &mc); err != nil {
		return mc, err
	}
	mc.EnsureDefaults()
	return mc, nil
}

// SameModelID reports whether two model identities denote the same model.
func SameModelID(a, b string) bool {
	ma, errA := DecodeModelID([]byte(a))
	mb, errB := DecodeModelID([]byte(b))
	return errA == nil && errB == nil && ma.ID() == mb.ID()
}

// HoldsRun reports whether dir holds the record of a run (a fresh run
// there is refused; --resume continues it).
func HoldsRun(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, runParamsFile))
	return err == nil
}

// HoldsSingleRun reports whether dir holds the run of one process (no
// shard directories): a sharded search may not start on it, and would
// otherwise wait for shards that never share that run.
func HoldsSingleRun(dir string) bool {
	if !HoldsRun(dir) {
		return false
	}
	if _, err := os.Stat(explorer.ShardDir(dir, 0)); err == nil {
		return false
	}
	return explorer.HasCheckpoint(dir)
}

// openRunDir prepares cfg.Dir: a fresh run records its model and refuses a
// directory that holds a run (a resumed one has adopted the recorded
// model). Either way the budget is recorded.
func openRunDir(cfg Config) error {
	if !cfg.Resume {
		if HoldsRun(cfg.Dir) {
			return fmt.Errorf("%w: %s already holds a run; continue it with --resume %s or choose another --dir", explorer.ErrRunExists, cfg.Dir, cfg.Dir)
		}
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return fmt.Errorf("creating run directory: %w", err)
		}
		mc := cfg.ModelConfig
		b, err := ModelSchema.EncodeJSON(&mc)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(cfg.Dir, runParamsFile), indentJSON(b)); err != nil {
			return err
		}
	}
	b, err := memorySchema.EncodeJSON(&memoryRecord{Memory: cfg.Memory})
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(cfg.Dir, runMemoryFile), indentJSON(b))
}

// indentJSON lays out a one-line JSON object for people (a run record is
// read when a run is inspected by hand).
func indentJSON(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return b
	}
	out.WriteByte('\n')
	return out.Bytes()
}
