package state

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
)

// linkLog keeps the parent links (fingerprint and parent sequence number of
// every state, by sequence number) in an unlinked temporary file, as TLC
// keeps its trace file on disk: the links are written once, sequentially,
// and read only to rebuild a counterexample, so they need not cost memory.
// The file is removed from its directory as soon as it is opened, so no
// run — even one killed with SIGKILL — leaves it behind.
type linkLog struct {
	f   *os.File
	w   *bufio.Writer
	n   uint64
	rec [16]byte
}

func newLinkLog(dir string) (*linkLog, error) {
	f, err := os.CreateTemp(dir, "bkcheck-links-*")
	if err != nil {
		return nil, fmt.Errorf("state: creating the parent-link log: %w", err)
	}
	os.Remove(f.Name())
	return &linkLog{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (l *linkLog) append(fp, parent uint64) (uint64, error) {
	binary.LittleEndian.PutUint64(l.rec[:8], fp)
	binary.LittleEndian.PutUint64(l.rec[8:], parent)
	if _, err := l.w.Write(l.rec[:]); err != nil {
		return 0, fmt.Errorf("state: writing the parent-link log: %w", err)
	}
	l.n++
	return l.n - 1, nil
}

func (l *linkLog) get(seq uint64) (fp, parent uint64, err error) {
	if err := l.w.Flush(); err != nil {
		return 0, 0, err
	}
	var rec [16]byte
	if _, err := l.f.ReadAt(rec[:], int64(seq)*16); err != nil {
		return 0, 0, fmt.Errorf("state: reading the parent-link log: %w", err)
	}
	return binary.LittleEndian.Uint64(rec[:8]), binary.LittleEndian.Uint64(rec[8:]), nil
}

func (l *linkLog) close() error { return l.f.Close() }
