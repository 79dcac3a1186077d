package cluster

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
// Between bkcheck processes (go test runs packages in parallel) a port is
// claimed by an flock on a file named after it, held for the cluster's
// life and dropped by the kernel if the process dies; a port some other
// program listens on is skipped.

// lowestPort is the lowest port considered: below it are well-known and
// registered services' ports.
const lowestPort = 10000

type reservation struct {
	ports []int
	locks []*os.File
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
	dir := filepath.Join(os.TempDir(), "bkcheck-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("reserving ports: %w", err)
	}
	r := &reservation{}
	size := hi - lo + 1
	for k := 0; k < size && len(r.ports) < n; k++ {
		port := lo + (first-lo+k)%size
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close()
			continue
		}
		// The wildcard address, as the bookie binds it: a listener on any
		// address of the port would refuse the bookie.
		l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			f.Close()
			continue
		}
		l.Close()
		r.ports = append(r.ports, port)
		r.locks = append(r.locks, f)
	}
	if len(r.ports) < n {
		r.release()
		return nil, fmt.Errorf("reserving ports: only %d of %d free in %d-%d (below the ephemeral range)", len(r.ports), n, lo, hi)
	}
	return r, nil
}

// release drops the claims. It is safe on nil and more than once.
func (r *reservation) release() {
	if r == nil {
		return
	}
	for _, f := range r.locks {
		f.Close()
	}
	r.locks = nil
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
