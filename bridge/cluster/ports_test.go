package cluster

import (
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestReservePorts: the ports are distinct, below the ephemeral range,
// free to bind on the wildcard address, and not handed out again while
// claimed; released, they may be.
func TestReservePorts(t *testing.T) {
	lo, hi, err := portRange()
	if err != nil {
		t.Skip(err)
	}
	a, err := reservePorts(7)
	if err != nil {
		t.Fatal(err)
	}
	defer a.release()
	seen := map[int]bool{}
	for _, p := range a.ports {
		if p < lo || p > hi {
			t.Errorf("port %d outside %d-%d", p, lo, hi)
		}
		if seen[p] {
			t.Errorf("port %d twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			t.Errorf("port %d not free: %v", p, err)
			continue
		}
		l.Close()
	}
	// Claimed ports are skipped by a second reservation, as by another
	// process: the flock is per open file, not per process.
	for i := 0; i < 20; i++ {
		b, err := reservePorts(7)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range b.ports {
			if seen[p] {
				t.Errorf("port %d reserved twice", p)
			}
		}
		b.release()
	}
	// Claimed or listened on, a port is skipped: from the first claimed
	// port on, a reservation takes none of a's.
	l, err := net.Listen("tcp", ":"+strconv.Itoa(a.ports[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a.release()
	c, err := reservePortsFrom(1, lo, hi, a.ports[0])
	if err != nil || c.ports[0] != a.ports[0] {
		t.Fatalf("released port %d not reserved again: %v %v", a.ports[0], c, err)
	}
	defer c.release()
	b, err := reservePortsFrom(1, lo, hi, a.ports[0])
	if err != nil {
		t.Fatal(err)
	}
	if b.ports[0] == a.ports[0] {
		t.Errorf("claimed port %d reserved again", b.ports[0])
	}
	b.release()
	b, err = reservePortsFrom(1, lo, hi, a.ports[1])
	if err != nil {
		t.Fatal(err)
	}
	if b.ports[0] == a.ports[1] {
		t.Errorf("port %d reserved while listened on", b.ports[0])
	}
	b.release()
}

// TestPortClaimsShared: the claims are one file, writable by every user
// whatever the umask (so a second user's runs can claim ports), and a
// claims file that cannot be opened is named in the error with what to
// do, not reported as ports not being free.
func TestPortClaimsShared(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	r, err := reservePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	r.release()
	fi, err := os.Stat(claimsFile())
	if err != nil || fi.Mode().Perm() != 0o666 {
		t.Errorf("claims file: %v, %v; want mode 0666", fi, err)
	}
	ents, _ := os.ReadDir(os.TempDir())
	if len(ents) != 1 {
		t.Errorf("%s holds %d entries after a reservation, want the claims file alone", os.TempDir(), len(ents))
	}
	t.Setenv("TMPDIR", t.TempDir())
	if err := os.Mkdir(claimsFile(), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := reservePorts(1); err == nil || !strings.Contains(err.Error(), "the claims file "+claimsFile()+" cannot be opened for writing") {
		t.Errorf("unopenable claims file: %v", err)
	}
}
