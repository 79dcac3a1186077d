package cluster

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A cluster's ports come from below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), never from it. A port the kernel hands
// out for "port 0" is free only until it is closed again: before the JVM
// binds it, any outgoing connection may get it as its local port, and the
// wait for the port to open is itself such a connection. A dial of
// 127.0.0.1:P that is given P as its own local port connects to itself
// (TCP simultaneous open), so the wait succeeds, the port is held, and the
// bookie's bind then fails with "Address already in use" (CI saw exactly
// this once). The kernel never picks a local port outside the ephemeral
// range, so neither can happen to these ports.
//
// Between bkcheck processes (go test runs packages in parallel), and
// between users of one machine, a port is claimed by a lock on the byte
// of that number in one file all of them share (claimsFile): an open file
// description lock (F_OFD_SETLK), held for the cluster's life, dropped by
// the kernel when the file is closed or the process dies, and exclusive
// between two reservations of one process too. One file, made writable by
// all, means nothing accumulates and no user's claims lock out another's.
// A port some other program listens on is skipped.

// claimsFile is the file whose bytes claim ports.
func claimsFile() string { return filepath.Join(os.TempDir(), "bkcheck-port-claims") }

// lowestPort is the lowest port considered: below it are well-known and
// registered services' ports.
const lowestPort = 10000

type reservation struct {
	ports  []int
	claims *os.File // its byte locks are the claims; closing drops them
}

// reservePorts claims n ports that nothing listens on, from a random place
// in the range below the ephemeral one.
func reservePorts(n int) (*reservation, error) {
	lo, hi, err := portRange()
	if err != nil {
		return nil, err
	}
	return reservePortsFrom(n, lo, hi, lo+rand.IntN(hi-lo+1))
}

// reservePortsFrom claims n ports of lo-hi, trying them in order from
// first and wrapping around.
func reservePortsFrom(n, lo, hi, first int) (*reservation, error) {
	f, err := os.OpenFile(claimsFile(), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("reserving ports: the claims file %s cannot be opened for writing (%w): make it writable by every user of bkcheck (chmod 666), or give this one its own TMPDIR", claimsFile(), err)
	}
	// Whoever creates it makes it writable by all, whatever the umask.
	_ = f.Chmod(0o666)
	r := &reservation{claims: f}
	size := hi - lo + 1
	for k := 0; k < size && len(r.ports) < n; k++ {
		port := lo + (first-lo+k)%size
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: int64(port), Len: 1}
		if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
			if err != unix.EAGAIN && err != unix.EACCES {
				r.release()
				return nil, fmt.Errorf("reserving ports: locking in %s: %w", claimsFile(), err)
			}
			continue // claimed by another reservation
		}
		// The wildcard address, as the bookie binds it: a listener on any
		// address of the port would refuse the bookie.
		l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			lk.Type = unix.F_UNLCK
			_ = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
			continue
		}
		l.Close()
		r.ports = append(r.ports, port)
	}
	if len(r.ports) < n {
		r.release()
		return nil, fmt.Errorf("reserving ports: only %d of %d free in %d-%d (below the ephemeral range): the others are claimed by running clusters or listened on", len(r.ports), n, lo, hi)
	}
	return r, nil
}

// release drops the claims. It is safe on nil and more than once.
func (r *reservation) release() {
	if r == nil || r.claims == nil {
		return
	}
	r.claims.Close()
	r.claims = nil
}

// portRange is the range the ports are drawn from: from lowestPort to just
// below the ephemeral range.
func portRange() (lo, hi int, err error) {
	eph := 32768 // Linux's default when the setting cannot be read
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				eph = v
			}
		}
	}
	if eph-1 < lowestPort+100 {
		return 0, 0, fmt.Errorf("reserving ports: the ephemeral range starts at %d, leaving no room from %d below it (net.ipv4.ip_local_port_range)", eph, lowestPort)
	}
	return lowestPort, eph - 1, nil
}
