package explorer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrResumeMismatch: the run directory holds a run of another model (or
// of another fingerprint width, shard count or file format).
var ErrResumeMismatch = errors.New("cannot resume")

// ErrRunExists: a fresh run was asked for in a directory that holds one.
var ErrRunExists = errors.New("run directory in use")

// checkpoint is a run directory's (a shard's directory's) record of the
// last completed level: level file Depth (LevelLen states of this shard,
// LevelTotal in all) is the next to expand, the parent links of levels
// 1..Depth are written and the visited store holds the runs of levels
// 1..Depth. It is replaced atomically (write, fsync, rename) after all of
// these are durable, so whatever instant a process dies at, the directory
// holds a consistent checkpoint.
type checkpoint struct {
	Format      int     `json:"format"`
	ModelID     string  `json:"model_id"`
	Fingerprint int     `json:"fingerprint_bits"`
	Shards      int     `json:"shards"`
	Depth       int     `json:"depth"`
	LevelLen    int64   `json:"level_len"`
	LevelTotal  int64   `json:"level_total"`
	Distinct    int64   `json:"distinct"`
	Generated   int64   `json:"generated"`
	StatsDepth  int     `json:"stats_depth"`
	ElapsedS    float64 `json:"elapsed_s"`
	PeakDisk    int64   `json:"peak_disk_bytes,omitempty"`
	Frontier    int64   `json:"frontier_bytes,omitempty"`
	FrontierN   int64   `json:"frontier_states,omitempty"`

	// Set once the search has ended with a verdict.
	Done      bool   `json:"done,omitempty"`
	Status    string `json:"status,omitempty"`
	Invariant string `json:"invariant,omitempty"`
	Deadlock  bool   `json:"deadlock,omitempty"`
	Terminal  bool   `json:"terminal,omitempty"`
	BadDepth  int    `json:"bad_depth,omitempty"`
	BadRank   int64  `json:"bad_rank,omitempty"`
	// Error is how the model failed, for status "error"; BadDepth 0
	// then means it failed computing the initial states.
	Error *ModelError `json:"error,omitempty"`
}

// checkpointFormat 2: compressed record files, sorted runs, parent links
// by successor index. Format 1 (plain level files, a Badger store of
// (fingerprint, parent) blocks) is not readable any more.
const checkpointFormat = 2

func checkpointPath(dir string) string { return filepath.Join(dir, "checkpoint.json") }

// HasCheckpoint reports whether dir holds the checkpoint of a search of
// one process (a sharded search keeps one per shard, in ShardDir).
func HasCheckpoint(dir string) bool {
	_, err := os.Stat(checkpointPath(dir))
	return err == nil
}

func readCheckpoint(dir string) (*checkpoint, error) {
	b, err := os.ReadFile(checkpointPath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s holds no checkpoint (was the run started with a directory?)", ErrResumeMismatch, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("explorer: reading checkpoint: %w", err)
	}
	var cp checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("explorer: checkpoint %s is corrupt: %w", checkpointPath(dir), err)
	}
	if cp.Format != checkpointFormat {
		return nil, fmt.Errorf("%w: %s was written by another version of bkcheck (format %d; this one reads format %d); start a new run", ErrResumeMismatch, dir, cp.Format, checkpointFormat)
	}
	return &cp, nil
}

// writeJSONFile replaces path with v as JSON atomically and durably:
// write a temporary file, fsync, rename, fsync the directory.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("explorer: writing %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("explorer: writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("explorer: syncing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("explorer: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("explorer: replacing %s: %w", path, err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
