package powerloss

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountTest mounts a file system over a fresh backing directory, or skips
// where FUSE cannot mount (the harness says NOT EXECUTABLE there).
func mountTest(t *testing.T) (*FS, string) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("FUSE not available: %v", err)
	}
	backing, mnt := t.TempDir(), t.TempDir()
	f, err := Mount(backing, mnt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
		if mounted(mnt) {
			t.Errorf("%s still mounted after Close", mnt)
		}
	})
	return f, backing
}

// mounted says whether dir is a mount point (in /proc/self/mounts).
func mounted(dir string) bool {
	b, _ := os.ReadFile("/proc/self/mounts")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == dir {
			return true
		}
	}
	return false
}

func write(t *testing.T, path string, data []byte, off int64, sync bool) {
	t.Helper()
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := file.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := file.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPowerLoss: what was synced survives a power loss, byte for byte;
// what was written after (an overwrite inside the file, an append, a new
// file, a truncation, a file opened with O_TRUNC) is undone; a Sync makes
// everything durable. The mount is gone after each, and a fresh mount
// reads what the backing directory holds.
func TestPowerLoss(t *testing.T) {
	f, backing := mountTest(t)
	mnt := f.Mountpoint()
	durable := bytes.Repeat([]byte("d"), 3*blockSize+100)
	write(t, filepath.Join(mnt, "journal"), durable, 0, true)
	write(t, filepath.Join(mnt, "journal"), []byte("LOST-OVERWRITE"), blockSize+7, false)
	write(t, filepath.Join(mnt, "journal"), []byte("LOST-APPEND"), int64(len(durable)), false)
	write(t, filepath.Join(mnt, "new"), []byte("never synced"), 0, false)
	write(t, filepath.Join(mnt, "cut"), durable, 0, true)
	if err := os.Truncate(filepath.Join(mnt, "cut"), 10); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mnt, "trunc"), durable, 0, true)
	if file, err := os.OpenFile(filepath.Join(mnt, "trunc"), os.O_WRONLY|os.O_TRUNC, 0); err != nil {
		t.Fatal(err)
	} else {
		file.Close()
	}
	write(t, filepath.Join(mnt, "kept"), []byte("synced"), 0, true)
	if got := f.Unsynced(); got != 4 {
		t.Errorf("Unsynced = %d, want 4 (journal, new, cut, trunc)", got)
	}

	n, err := f.PowerLoss()
	if err != nil || n != 4 {
		t.Fatalf("PowerLoss = %d, %v; want 4 files", n, err)
	}
	if mounted(mnt) {
		t.Fatalf("%s still mounted after PowerLoss", mnt)
	}
	for name, want := range map[string][]byte{"journal": durable, "new": {}, "cut": durable, "trunc": durable, "kept": []byte("synced")} {
		got, err := os.ReadFile(filepath.Join(backing, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s after the power loss: %d bytes (%q…), %v; want the %d bytes synced", name, len(got), head(got), err, len(want))
		}
	}

	// Mounted again, a sync keeps every write through the next power loss.
	g, err := Mount(backing, mnt)
	if err != nil {
		t.Fatal(err)
	}
	f.server = g.server // the test's cleanup unmounts the new mount
	write(t, filepath.Join(mnt, "journal"), []byte("SYNCED-BY-THE-OS"), 0, false)
	g.Sync()
	write(t, filepath.Join(mnt, "journal"), []byte("after"), 100, false)
	if _, err := g.PowerLoss(); err != nil {
		t.Fatal(err)
	}
	f.server = nil
	got, _ := os.ReadFile(filepath.Join(backing, "journal"))
	if !bytes.HasPrefix(got, []byte("SYNCED-BY-THE-OS")) || bytes.Contains(got, []byte("after")) {
		t.Errorf("journal after Sync, a write and a power loss: %q…; want the synced write kept and the later one gone", head(got))
	}
}

// TestMountFailsClearly: a mount point that does not exist is an error
// naming it, and nothing stays mounted.
func TestMountFailsClearly(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("FUSE not available: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	_, err := Mount(t.TempDir(), missing)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("Mount on a missing directory: %v; want an error naming it", err)
	}
	if mounted(missing) {
		t.Errorf("%s mounted after a failed Mount", missing)
	}
	var st syscall.Stat_t
	if syscall.Stat(missing, &st) == nil {
		t.Errorf("%s created by a failed Mount", missing)
	}
}

func head(b []byte) []byte { return b[:min(len(b), 24)] }

// TestDeletedFileForgotten: what was saved for a file that is deleted, or
// renamed over, is not put back over a later file that takes its inode
// number (as RocksDB's files come and go); the later file, synced, keeps
// its content through a power loss.
func TestDeletedFileForgotten(t *testing.T) {
	f, backing := mountTest(t)
	mnt := f.Mountpoint()
	for i := range 20 {
		old, tmp, cur := filepath.Join(mnt, "old"), filepath.Join(mnt, "tmp"), filepath.Join(mnt, "CURRENT")
		write(t, old, bytes.Repeat([]byte("o"), blockSize), 0, true)
		write(t, old, []byte("unsynced"), 0, false)
		if err := os.Remove(old); err != nil {
			t.Fatal(err)
		}
		write(t, cur, []byte("stale"), 0, false)
		write(t, tmp, []byte{byte('a' + i)}, 0, true)
		if err := os.Rename(tmp, cur); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.PowerLoss(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(backing, "CURRENT"))
	if err != nil || string(got) != string(rune('a'+19)) {
		t.Errorf("CURRENT after the power loss: %q, %v; want the last synced file renamed into place, %q", got, err, string(rune('a'+19)))
	}
}

// TestSweep: a process that mounted the file system and was killed with
// SIGKILL leaves its mount behind, disconnected; Sweep unmounts it, and
// leaves a mount whose process runs (this one's) alone.
func TestSweep(t *testing.T) {
	if dir := os.Getenv("BKCHECK_POWERLOSS_HOLD"); dir != "" {
		// The child: mount and wait to be killed.
		if _, err := Mount(filepath.Join(dir, "backing"), filepath.Join(dir, "mnt")); err != nil {
			t.Fatal(err)
		}
		select {}
	}
	live, _ := mountTest(t) // skips without FUSE; a mount of this process's
	dir := t.TempDir()
	for _, d := range []string{"backing", "mnt"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	child := exec.Command(os.Args[0], "-test.run=^TestSweep$")
	child.Env = append(os.Environ(), "BKCHECK_POWERLOSS_HOLD="+dir)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = child.Wait(); close(exited) }()
	t.Cleanup(func() { _ = child.Process.Kill(); <-exited; Sweep() })
	mnt := filepath.Join(dir, "mnt")
	for deadline := time.Now().Add(30 * time.Second); !mounted(mnt); {
		select {
		case <-exited:
			t.Fatal("the child exited before it mounted")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the child did not mount within 30 s")
		}
		time.Sleep(10 * time.Millisecond) // polling for the child's mount, not deciding
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	if !mounted(mnt) {
		t.Fatal("the killed child's mount went away by itself: nothing to sweep")
	}
	swept := Sweep()
	if mounted(mnt) || !slices.Contains(swept, mnt) {
		t.Errorf("Sweep() = %v: %s still mounted or not named", swept, mnt)
	}
	if !mounted(live.Mountpoint()) {
		t.Errorf("Sweep() unmounted %s, the mount of a process that runs", live.Mountpoint())
	}
}
