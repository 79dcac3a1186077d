package explorer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// A BFS level is written once (while the previous level is expanded) and
// then read once, in order. In memory that is an arena; in a run directory
// it is a file of records, so that a level larger than memory streams
// through a small buffer and a level survives a crash for resuming.

// levelWriter receives the states of the next level in canonical order.
type levelWriter interface {
	add(enc []byte, seq uint64) error
	len() int
	// finish makes the level durable (file) and returns a reader over it.
	finish() (levelReader, error)
	discard()
}

// levelReader hands out a level's states in order, a window at a time.
type levelReader interface {
	len() int
	// fill resets w and loads the next up to max states into it.
	fill(w *level, max int) (int, error)
	close(remove bool)
}

// memLevel keeps a whole level in memory; the window is a view of it.
// Closed levels go back to their pool so that the next level reuses the
// arena instead of growing a new one from nothing (which cost a gigabyte
// of allocation and copying per run on mid-sized models).
type memLevel struct {
	l    level
	read int
	pool *[]*memLevel
}

func newMemLevel(pool *[]*memLevel) *memLevel {
	if n := len(*pool); n > 0 {
		m := (*pool)[n-1]
		*pool = (*pool)[:n-1]
		return m
	}
	return &memLevel{pool: pool}
}

func (m *memLevel) release() {
	m.l.reset()
	m.read = 0
	*m.pool = append(*m.pool, m)
}

func (m *memLevel) add(enc []byte, seq uint64) error { m.l.add(enc, seq); return nil }
func (m *memLevel) len() int                         { return m.l.len() }
func (m *memLevel) finish() (levelReader, error)     { m.read = 0; return m, nil }
func (m *memLevel) discard()                         { m.release() }
func (m *memLevel) close(bool)                       { m.release() }

func (m *memLevel) fill(w *level, max int) (int, error) {
	n := min(max, m.l.len()-m.read)
	lo, hi := m.read, m.read+n
	w.reset()
	if n == 0 {
		return 0, nil
	}
	start := m.l.offs[lo]
	end := len(m.l.arena)
	if hi < m.l.len() {
		end = m.l.offs[hi]
	}
	// A view, not a copy: the window shares the level's arena.
	w.arena = m.l.arena[start:end:end]
	for i := lo; i < hi; i++ {
		w.offs = append(w.offs, m.l.offs[i]-start)
	}
	w.seqs = append(w.seqs, m.l.seqs[lo:hi]...)
	m.read = hi
	return n, nil
}

// fileLevel streams a level to and from a file of records
// (uvarint seq, uvarint length, bytes).
type fileLevel struct {
	path string
	f    *os.File
	bw   *bufio.Writer
	br   *bufio.Reader
	n    int
	read int
	tmp  [2 * binary.MaxVarintLen64]byte
}

func levelPath(dir string, depth int) string {
	return filepath.Join(dir, fmt.Sprintf("level-%06d.bin", depth))
}

func createFileLevel(path string) (*fileLevel, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("explorer: creating level file: %w", err)
	}
	return &fileLevel{path: path, f: f, bw: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (fl *fileLevel) add(enc []byte, seq uint64) error {
	b := binary.AppendUvarint(fl.tmp[:0], seq)
	b = binary.AppendUvarint(b, uint64(len(enc)))
	if _, err := fl.bw.Write(b); err != nil {
		return fmt.Errorf("explorer: writing level file: %w", err)
	}
	if _, err := fl.bw.Write(enc); err != nil {
		return fmt.Errorf("explorer: writing level file: %w", err)
	}
	fl.n++
	return nil
}

func (fl *fileLevel) len() int { return fl.n }

func (fl *fileLevel) finish() (levelReader, error) {
	if err := fl.bw.Flush(); err != nil {
		return nil, fmt.Errorf("explorer: writing level file: %w", err)
	}
	if err := fl.f.Sync(); err != nil {
		return nil, fmt.Errorf("explorer: syncing level file: %w", err)
	}
	if err := fl.f.Close(); err != nil {
		return nil, fmt.Errorf("explorer: closing level file: %w", err)
	}
	return openFileLevel(fl.path, fl.n)
}

func (fl *fileLevel) discard() {
	fl.f.Close()
	os.Remove(fl.path)
}

func openFileLevel(path string, n int) (*fileLevel, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("explorer: opening level file: %w", err)
	}
	return &fileLevel{path: path, f: f, br: bufio.NewReaderSize(f, 1<<20), n: n}, nil
}

func (fl *fileLevel) fill(w *level, max int) (int, error) {
	w.reset()
	k := 0
	for ; k < max && fl.read < fl.n; k++ {
		seq, err := binary.ReadUvarint(fl.br)
		if err != nil {
			return k, fl.corrupt(err)
		}
		size, err := binary.ReadUvarint(fl.br)
		if err != nil || size > 1<<20 {
			return k, fl.corrupt(err)
		}
		off := len(w.arena)
		w.arena = slices.Grow(w.arena, int(size))[:off+int(size)]
		if _, err := io.ReadFull(fl.br, w.arena[off:]); err != nil {
			return k, fl.corrupt(err)
		}
		w.offs = append(w.offs, off)
		w.seqs = append(w.seqs, seq)
		fl.read++
	}
	return k, nil
}

func (fl *fileLevel) corrupt(err error) error {
	if err == nil {
		err = errors.New("record too large")
	}
	return fmt.Errorf("explorer: level file %s is corrupt at state %d: %w", fl.path, fl.read, err)
}

func (fl *fileLevel) close(remove bool) {
	fl.f.Close()
	if remove {
		os.Remove(fl.path)
	}
}
