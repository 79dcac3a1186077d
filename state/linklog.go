package state

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
)

// NoParent is the parent sequence number of an initial state.
const NoParent = ^uint64(0)

// LinkLog keeps, for every state of an in-memory search by sequence
// number, its parent link: the sequence number of the state it was first
// reached from (NoParent for an initial state) and the index of that
// successor among everything the parent emitted (for an initial state,
// its index among the initial states). Replaying these indices from an
// initial state rebuilds a counterexample exactly, without storing any
// fingerprint or state.
//
// In memory it costs 12 bytes per state; NewFileLinkLog keeps the links
// in an unlinked temporary file instead, as TLC keeps its trace file on
// disk: they are written once, sequentially, and read only to rebuild a
// counterexample. The file is removed from its directory as soon as it is
// opened, so no run — even one killed with SIGKILL — leaves it behind.
type LinkLog struct {
	parents []uint64
	idxs    []uint32

	f   *os.File
	w   *bufio.Writer
	n   uint64
	err error
	rec [linkRecLen]byte
}

const linkRecLen = 12

// NewLinkLog returns an empty in-memory log.
func NewLinkLog() *LinkLog { return &LinkLog{} }

// NewFileLinkLog returns an empty log in an unlinked file in dir
// (os.TempDir() if "").
func NewFileLinkLog(dir string) (*LinkLog, error) {
	f, err := os.CreateTemp(dir, "bkcheck-links-*")
	if err != nil {
		return nil, fmt.Errorf("state: creating the parent-link log: %w", err)
	}
	os.Remove(f.Name())
	return &LinkLog{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Append records the link of the next state.
func (l *LinkLog) Append(parent uint64, idx uint32) {
	l.n++
	if l.f == nil {
		l.parents = append(l.parents, parent)
		l.idxs = append(l.idxs, idx)
		return
	}
	binary.LittleEndian.PutUint64(l.rec[:8], parent)
	binary.LittleEndian.PutUint32(l.rec[8:], idx)
	if _, err := l.w.Write(l.rec[:]); err != nil && l.err == nil {
		l.err = fmt.Errorf("state: writing the parent-link log: %w", err)
	}
}

// Len is the number of links.
func (l *LinkLog) Len() uint64 { return l.n }

// Get returns the link of state seq.
func (l *LinkLog) Get(seq uint64) (parent uint64, idx uint32, err error) {
	if seq >= l.n {
		return 0, 0, fmt.Errorf("state: link %d of %d", seq, l.n)
	}
	if l.f == nil {
		return l.parents[seq], l.idxs[seq], nil
	}
	if l.err != nil {
		return 0, 0, l.err
	}
	if err := l.w.Flush(); err != nil {
		return 0, 0, err
	}
	var rec [linkRecLen]byte
	if _, err := l.f.ReadAt(rec[:], int64(seq)*linkRecLen); err != nil {
		return 0, 0, fmt.Errorf("state: reading the parent-link log: %w", err)
	}
	return binary.LittleEndian.Uint64(rec[:8]), binary.LittleEndian.Uint32(rec[8:]), nil
}

// Err is the first write error.
func (l *LinkLog) Err() error { return l.err }

// Close releases the log.
func (l *LinkLog) Close() error {
	var err error
	if l.f != nil {
		err = l.f.Close()
	}
	*l = LinkLog{}
	return err
}
