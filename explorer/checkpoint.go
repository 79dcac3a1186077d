package explorer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bkcheck/bkcheck/state"
)

// Durable is a visited store that lives in the run directory.
type Durable interface {
	state.Visited
	// Flush makes every Insert so far durable.
	Flush() error
	// Truncate forgets every state with sequence number >= n: what a
	// crashed session inserted after its last checkpoint.
	Truncate(n uint64) error
}

// ErrResumeMismatch: the run directory holds a run of another model.
var ErrResumeMismatch = errors.New("cannot resume")

// ErrRunExists: a fresh run was asked for in a directory that holds one.
var ErrRunExists = errors.New("run directory in use")

// checkpoint is the run directory's record of the last completed level:
// the level file Depth (LevelLen states) is the next to expand, and the
// visited store holds exactly Distinct states. It is replaced atomically
// (write, fsync, rename) after the level file and the store are durable, so
// whatever instant a process dies at, the directory holds a consistent
// checkpoint.
type checkpoint struct {
	Format     int     `json:"format"`
	ModelID    string  `json:"model_id"`
	Depth      int     `json:"depth"`
	LevelLen   int     `json:"level_len"`
	Distinct   int64   `json:"distinct"`
	Generated  int64   `json:"generated"`
	StatsDepth int     `json:"stats_depth"`
	ElapsedS   float64 `json:"elapsed_s"`

	// Set once the search has ended with a verdict.
	Done      bool   `json:"done,omitempty"`
	Status    string `json:"status,omitempty"`
	Invariant string `json:"invariant,omitempty"`
	Deadlock  bool   `json:"deadlock,omitempty"`
	Terminal  bool   `json:"terminal,omitempty"`
	BadSeq    uint64 `json:"bad_seq,omitempty"`
}

const checkpointFormat = 1

func checkpointPath(dir string) string { return filepath.Join(dir, "checkpoint.json") }

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
		return nil, fmt.Errorf("%w: checkpoint format %d, this bkcheck writes %d", ErrResumeMismatch, cp.Format, checkpointFormat)
	}
	return &cp, nil
}

// checkpoint records cp (completed with the current statistics) in the run
// directory, after making the visited store durable. No-op without Dir.
func (s *search) checkpoint(cp *checkpoint) error {
	if s.opt.Dir == "" {
		return nil
	}
	if err := s.durable.Flush(); err != nil {
		return fmt.Errorf("explorer: flushing the visited store: %w", err)
	}
	cp.Format, cp.ModelID = checkpointFormat, s.opt.ModelID
	cp.Distinct, cp.Generated, cp.StatsDepth = s.stats.Distinct, s.stats.Generated, s.stats.Depth
	cp.ElapsedS = s.elapsed().Seconds()
	b, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return err
	}
	path := checkpointPath(s.opt.Dir)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("explorer: writing checkpoint: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("explorer: writing checkpoint: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("explorer: syncing checkpoint: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("explorer: writing checkpoint: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("explorer: replacing checkpoint: %w", err)
	}
	if d, err := os.Open(s.opt.Dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// finished rebuilds the result of a run that had already ended.
func (s *search) finished(cp *checkpoint) (Result, error) {
	s.stats.Queue = 0
	switch cp.Status {
	case OK.String():
		return s.result(OK, "")
	case Violation.String():
		trace, err := s.trace(cp.BadSeq)
		if err != nil {
			return Result{}, err
		}
		s.stats.Elapsed = s.elapsed()
		return Result{Status: Violation, Stats: s.stats,
			Violation: &ViolationInfo{Invariant: cp.Invariant, Deadlock: cp.Deadlock, Terminal: cp.Terminal, Trace: trace}}, nil
	}
	return Result{}, fmt.Errorf("explorer: checkpoint has unknown status %q", cp.Status)
}
