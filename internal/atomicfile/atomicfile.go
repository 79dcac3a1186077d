// Package atomicfile writes files all at once or not at all: data goes to a
// temporary file beside the target, which is synced and renamed over it.
// An interrupted or failed write never leaves half a file, and never
// touches the file it was to replace. Every file bkcheck writes for users
// (traces, pages, tables, run records) goes through it.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Perm is the mode of the files written: readable by all, as files a user
// shares (traces, pages) should be.
const Perm = 0o644

// File is a file being written; Commit makes it appear at its path, Abort
// (or a failed Commit) removes it. Abort after Commit does nothing, so
// `defer f.Abort()` is always safe.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts writing path. The directory must exist: a missing one is
// an error here, before any work is done, rather than after.
func Create(path string) (*File, error) {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("cannot write %s: %s is not a directory", path, dir)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := tmp.Chmod(Perm); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	return &File{File: tmp, path: path}, nil
}

// Commit syncs the data and renames the file into place.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: already committed or aborted")
	}
	f.done = true
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}

// Abort drops the file.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// Write writes path with what fill writes, atomically.
func Write(path string, fill func(io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := fill(f); err != nil {
		return err
	}
	return f.Commit()
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// CheckWritable reports, before any work, whether a file could be created
// at path: its directory exists and accepts a new file.
func CheckWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("cannot write %s: it is a directory", path)
	}
	f, err := Create(path)
	if err != nil {
		return err
	}
	f.Abort()
	return nil
}

// CheckDirWritable reports, before any work, whether files could be
// written in the directory dir, creating it (and its missing parents)
// first if need be: its nearest existing ancestor must be a directory that
// accepts a new file. Nothing is left behind.
func CheckDirWritable(dir string) error {
	at := filepath.Clean(dir)
	for {
		fi, err := os.Stat(at)
		if err == nil {
			if !fi.IsDir() {
				if at == filepath.Clean(dir) {
					return fmt.Errorf("cannot write in %s: it is not a directory", dir)
				}
				return fmt.Errorf("cannot create %s: %s is not a directory", dir, at)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("cannot create %s: %w", dir, err)
		}
		parent := filepath.Dir(at)
		if parent == at {
			return fmt.Errorf("cannot create %s: %w", dir, err)
		}
		at = parent
	}
	tmp, err := os.CreateTemp(at, ".bkcheck-write-test-*")
	if err != nil {
		if at == filepath.Clean(dir) {
			return fmt.Errorf("cannot write in %s: %w", dir, err)
		}
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	tmp.Close()
	os.Remove(tmp.Name())
	return nil
}
