// Package powerloss is a file system that can lose power: a FUSE loopback
// mount over a backing directory that keeps apart what was written but
// not made durable (fsync, fdatasync) and drops it at a power loss, as
// LazyFS does for Jepsen. The harness mounts one under each bookie's
// journal and ledger directories, so that a trace in which a bookie's
// machine loses power (`--journal no-sync`, `--journal disabled`) runs
// on real bookies: kill -9 keeps the page cache, a power loss does not.
//
// Writes go through to the backing files at once (reads, sizes, mmap and
// every other call are the loopback's); before the first write since the
// last sync to a block a file held at that sync, the block's durable
// bytes are saved, with the file's durable size. A sync of the file
// forgets them (its content is durable); a power loss puts them back and
// cuts the file to its durable size. Directory operations (create,
// rename, unlink) are durable at once: a file created and never synced
// is empty after a power loss, not gone. That is kinder than a real
// disk, and it is what the model assumes (its journal loses entries, not
// files).
package powerloss

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// blockSize is the unit in which durable bytes are saved.
const blockSize = 4096

// Available says why this machine cannot mount the file system, or nil:
// FUSE needs /dev/fuse and, without fusermount, root to call mount(2),
// and a container may still refuse the mount; so the first call mounts
// and unmounts one in a scratch directory, and its answer stands for the
// process.
func Available() error {
	probe.Do(func() { probe.err = probeMount() })
	return probe.err
}

var probe struct {
	sync.Once
	err error
}

func probeMount() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("no /dev/fuse: %w", err)
	}
	if os.Geteuid() != 0 {
		return errors.New("not root: mount(2) of a FUSE file system needs root here")
	}
	dir, err := os.MkdirTemp("", "bkcheck-powerloss-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	backing, mnt := filepath.Join(dir, "backing"), filepath.Join(dir, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	f, err := mount(backing, mnt)
	if err != nil {
		return err
	}
	return f.Close()
}

// fsNamePrefix names the file system in the mount table, followed by the
// pid of the process serving it: a mount whose process is gone (a bkcheck
// killed with SIGKILL, which no exit path outlives) is found by it and
// swept (Sweep).
const fsNamePrefix = "bkcheck-powerloss:"

func fsName(pid int) string { return fmt.Sprintf("%s%d", fsNamePrefix, pid) }

// Sweep unmounts (lazily: MNT_DETACH) every mount of this file system
// whose serving process no longer runs, and returns their mount points: a
// disconnected FUSE mount answers nothing but ENOTCONN, and only a
// process killed without its exit paths leaves one. A mount whose
// process runs, or whose pid another process now holds, is left alone.
func Sweep() []string {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return nil
	}
	var swept []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], fsNamePrefix) {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimPrefix(f[0], fsNamePrefix))
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		mnt := unescapeMount(f[1])
		if syscall.Unmount(mnt, syscall.MNT_DETACH) == nil {
			swept = append(swept, mnt)
		}
	}
	return swept
}

// unescapeMount undoes /proc/mounts' octal escapes (a space is \040).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FS is one mounted file system.
type FS struct {
	backing, mountpoint string
	server              *fuse.Server

	mu sync.Mutex
	// files are the files written since their last sync, by the backing
	// file's inode number.
	files map[uint64]*undo
}

// undo is what brings one file back to its durable content.
type undo struct {
	size   int64            // the file's size at its last sync
	blocks map[int64][]byte // durable bytes of blocks written since, by block index
}

// Mount mounts a file system over backing at mountpoint (both must be
// directories). Close or PowerLoss unmounts it.
func Mount(backing, mountpoint string) (*FS, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	return mount(backing, mountpoint)
}

func mount(backing, mountpoint string) (*FS, error) {
	lb, err := gofs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, fmt.Errorf("powerloss: %s: %w", backing, err)
	}
	f := &FS{backing: backing, mountpoint: mountpoint, files: map[uint64]*undo{}}
	root := &node{LoopbackNode: lb.(*gofs.LoopbackNode), fsys: f}
	server, err := gofs.Mount(mountpoint, root, &gofs.Options{
		MountOptions: fuse.MountOptions{
			DirectMountStrict: true,
			FsName:            fsName(os.Getpid()),
			Name:              "powerloss",
			AllowOther:        true,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("powerloss: mount %s on %s: %w", backing, mountpoint, err)
	}
	f.server = server
	return f, nil
}

// Mountpoint is where the file system is mounted.
func (f *FS) Mountpoint() string { return f.mountpoint }

// Unsynced counts the files holding writes not yet durable.
func (f *FS) Unsynced() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.files)
}

// Sync makes every file's writes durable, as the operating system's
// write-back does in time (fsync of every file).
// The backing files hold the writes already; their own durability is the
// backing file system's, which nothing here loses.
func (f *FS) Sync() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.files)
}

// Close unmounts the file system, keeping every write (a clean shutdown
// after which nothing is lost).
func (f *FS) Close() error {
	f.mu.Lock()
	f.files = map[uint64]*undo{}
	f.mu.Unlock()
	return f.unmount()
}

// PowerLoss unmounts the file system and puts every file back to its
// durable content: what the processes using it wrote since their last
// sync is gone. The processes must be stopped first (a bookie killed).
// It reports how many files lost writes.
func (f *FS) PowerLoss() (int, error) {
	if err := f.unmount(); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	paths, err := f.pathsByInode()
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for ino, u := range f.files {
		p, ok := paths[ino]
		if !ok {
			continue // deleted since: a directory operation, durable
		}
		n++
		if err := u.restore(p); err != nil {
			errs = append(errs, err)
		}
	}
	f.files = map[uint64]*undo{}
	return n, errors.Join(errs...)
}

// unmount detaches the mount; a lazy detach if a process still holds it.
func (f *FS) unmount() error {
	if f.server == nil {
		return nil
	}
	err := f.server.Unmount()
	if err != nil {
		if err2 := syscall.Unmount(f.mountpoint, syscall.MNT_DETACH); err2 != nil {
			return fmt.Errorf("powerloss: unmount %s: %v (lazy: %v)", f.mountpoint, err, err2)
		}
	}
	f.server.Wait()
	f.server = nil
	return nil
}

// pathsByInode maps each regular file under the backing directory to its
// path, by inode number: a file renamed since its first write is found.
func (f *FS) pathsByInode() (map[uint64]string, error) {
	out := map[uint64]string{}
	err := filepath.WalkDir(f.backing, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			out[st.Ino] = p
		}
		return nil
	})
	return out, err
}

// restore puts the file at p back to what u saved.
func (u *undo) restore(p string) error {
	file, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("powerloss: restore %s: %w", p, err)
	}
	defer file.Close()
	if err := file.Truncate(u.size); err != nil {
		return fmt.Errorf("powerloss: restore %s: %w", p, err)
	}
	idx := make([]int64, 0, len(u.blocks))
	for b := range u.blocks {
		idx = append(idx, b)
	}
	sort.Slice(idx, func(i, j int) bool { return idx[i] < idx[j] })
	for _, b := range idx {
		if _, err := file.WriteAt(u.blocks[b], b*blockSize); err != nil {
			return fmt.Errorf("powerloss: restore %s: %w", p, err)
		}
	}
	return file.Sync()
}

// changing saves, before bytes [off, off+n) of the file open as fd change
// (a write, a truncation, an allocation), the durable bytes of every block
// of that range not saved since the file's last sync.
func (f *FS) changing(fd int, off, n int64) syscall.Errno {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return gofs.ToErrno(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.files[st.Ino]
	if u == nil {
		u = &undo{size: st.Size, blocks: map[int64][]byte{}}
		f.files[st.Ino] = u
	}
	end := min(off+n, u.size)
	for b := off / blockSize; b*blockSize < end; b++ {
		if _, ok := u.blocks[b]; ok {
			continue
		}
		buf := make([]byte, min(blockSize, u.size-b*blockSize))
		if _, err := syscall.Pread(fd, buf, b*blockSize); err != nil {
			return gofs.ToErrno(err)
		}
		u.blocks[b] = buf
	}
	return 0
}

// synced forgets what the file open as fd held at its last sync: it is
// durable now.
func (f *FS) synced(fd int) syscall.Errno {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return gofs.ToErrno(err)
	}
	f.mu.Lock()
	delete(f.files, st.Ino)
	f.mu.Unlock()
	return 0
}

// node is a loopback node whose files are handles of this file system.
type node struct {
	*gofs.LoopbackNode
	fsys *FS
}

var (
	_ gofs.NodeWrapChilder    = (*node)(nil)
	_ gofs.NodeOpener         = (*node)(nil)
	_ gofs.NodeCreater        = (*node)(nil)
	_ gofs.NodeSetattrer      = (*node)(nil)
	_ gofs.NodeCopyFileRanger = (*node)(nil)
	_ gofs.NodeUnlinker       = (*node)(nil)
	_ gofs.NodeRenamer        = (*node)(nil)
)

func (n *node) WrapChild(_ context.Context, ops gofs.InodeEmbedder) gofs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*gofs.LoopbackNode), fsys: n.fsys}
}

// Open with O_TRUNC saves what the truncation cuts off first.
func (n *node) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags&^syscall.O_TRUNC)
	if errno != 0 {
		return nil, 0, errno
	}
	h := &handle{LoopbackFile: fh.(*gofs.LoopbackFile), fsys: n.fsys}
	if flags&syscall.O_TRUNC != 0 {
		if errno := h.changing(0, 1<<62); errno != 0 {
			h.LoopbackFile.Release(ctx)
			return nil, 0, errno
		}
		if err := syscall.Ftruncate(h.fd(), 0); err != nil {
			h.LoopbackFile.Release(ctx)
			return nil, 0, gofs.ToErrno(err)
		}
	}
	return h, fl, 0
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	in, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	h := &handle{LoopbackFile: fh.(*gofs.LoopbackFile), fsys: n.fsys}
	// A new file's durable size is 0: a power loss leaves it empty. Its
	// inode number may be a deleted file's: what was saved for that one
	// is not this file's.
	var st syscall.Stat_t
	if err := syscall.Fstat(h.fd(), &st); err != nil {
		return nil, nil, 0, gofs.ToErrno(err)
	}
	n.fsys.mu.Lock()
	n.fsys.files[st.Ino] = &undo{size: 0, blocks: map[int64][]byte{}}
	n.fsys.mu.Unlock()
	return in, h, fl, 0
}

// Unlink forgets what was saved for a file whose last name goes: its
// inode number can be reused by the next file created.
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	n.fsys.forget(filepath.Join(n.backingPath(), name))
	return n.LoopbackNode.Unlink(ctx, name)
}

// Rename over an existing file forgets that file, as Unlink.
func (n *node) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if p, ok := newParent.(*node); ok {
		n.fsys.forget(filepath.Join(p.backingPath(), newName))
	}
	return n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
}

// backingPath is the node's path in the backing directory.
func (n *node) backingPath() string {
	return filepath.Join(n.RootData.Path, n.Path(n.Root()))
}

// forget drops what was saved for the file at backing path p, if its last
// name is going.
func (f *FS) forget(p string) {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil || st.Nlink > 1 {
		return
	}
	f.mu.Lock()
	delete(f.files, st.Ino)
	f.mu.Unlock()
}

// Setattr without an open file (truncate(2) of a path) saves what a
// shorter size cuts off, through a file opened for it.
func (n *node) Setattr(ctx context.Context, f gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if sz, ok := in.GetSize(); ok && f == nil {
		fh, _, errno := n.LoopbackNode.Open(ctx, syscall.O_RDONLY)
		if errno != 0 {
			return errno
		}
		h := &handle{LoopbackFile: fh.(*gofs.LoopbackFile), fsys: n.fsys}
		errno = h.changing(int64(sz), 1<<62)
		h.LoopbackFile.Release(ctx)
		if errno != 0 {
			return errno
		}
	}
	return n.LoopbackNode.Setattr(ctx, f, in, out)
}

// CopyFileRange is refused: the kernel then copies by read and write,
// which this file system sees.
func (n *node) CopyFileRange(context.Context, gofs.FileHandle, uint64, *gofs.Inode, gofs.FileHandle, uint64, uint64, uint64) (uint32, syscall.Errno) {
	return 0, syscall.EOPNOTSUPP
}

// handle is an open file whose changes are saved first.
type handle struct {
	*gofs.LoopbackFile
	fsys *FS
}

// PassthroughFd says no: a passthrough file would write to the backing
// file in the kernel, past this file system.
func (h *handle) PassthroughFd() (int, bool) { return 0, false }

func (h *handle) fd() int {
	fd, _ := h.LoopbackFile.PassthroughFd()
	return fd
}

func (h *handle) changing(off, n int64) syscall.Errno { return h.fsys.changing(h.fd(), off, n) }

func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if errno := h.changing(off, int64(len(data))); errno != 0 {
		return 0, errno
	}
	return h.LoopbackFile.Write(ctx, data, off)
}

func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if errno := h.LoopbackFile.Fsync(ctx, flags); errno != 0 {
		return errno
	}
	return h.fsys.synced(h.fd())
}

func (h *handle) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if sz, ok := in.GetSize(); ok {
		if errno := h.changing(int64(sz), 1<<62); errno != 0 {
			return errno
		}
	}
	return h.LoopbackFile.Setattr(ctx, in, out)
}

func (h *handle) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	if errno := h.changing(int64(off), int64(size)); errno != 0 {
		return errno
	}
	return h.LoopbackFile.Allocate(ctx, off, size, mode)
}
