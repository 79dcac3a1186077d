package cluster

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

// The few ZooKeeper requests the cluster makes itself, in ZooKeeper's
// wire protocol (jute records, each frame prefixed by its length): a
// session, deletes, and the session's close. The registration of a
// stopped bookie is the harness's to end (Unregister), so no JVM is
// started for it.

// ZooKeeper's operation codes and error codes that the cluster uses
// (org.apache.zookeeper.ZooDefs.OpCode, KeeperException.Code).
const (
	zkOpDelete     = 2
	zkOpCloseSess  = -11
	zkErrOK        = 0
	zkErrNoNode    = -101
	zkSessionMsecs = 10000
)

// zkSession is one ZooKeeper session on one connection.
type zkSession struct {
	conn net.Conn
	r    *bufio.Reader
	xid  int32
}

// dialZK opens a session with the ZooKeeper server at addr.
func dialZK(ctx context.Context, addr string) (*zkSession, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("zookeeper %s: %w", addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	} else {
		_ = conn.SetDeadline(time.Now().Add(time.Minute))
	}
	z := &zkSession{conn: conn, r: bufio.NewReader(conn)}
	// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId,
	// passwd (16 zero bytes for a new session), readOnly.
	var req []byte
	req = binary.BigEndian.AppendUint32(req, 0)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = binary.BigEndian.AppendUint32(req, zkSessionMsecs)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = binary.BigEndian.AppendUint32(req, 16)
	req = append(req, make([]byte, 16)...)
	req = append(req, 0)
	if err := z.send(req); err != nil {
		conn.Close()
		return nil, err
	}
	resp, err := z.frame()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("zookeeper %s: no session: %w", addr, err)
	}
	if len(resp) < 16 || binary.BigEndian.Uint64(resp[8:16]) == 0 {
		conn.Close()
		return nil, fmt.Errorf("zookeeper %s refused a session", addr)
	}
	return z, nil
}

func (z *zkSession) send(body []byte) error {
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	_, err := z.conn.Write(append(frame, body...))
	return err
}

func (z *zkSession) frame() ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(z.r, n[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(n[:]))
	_, err := io.ReadFull(z.r, body)
	return body, err
}

// call sends a request (its header, then body) and returns the reply's
// error code.
func (z *zkSession) call(op int32, body []byte) (int32, error) {
	z.xid++
	req := binary.BigEndian.AppendUint32(nil, uint32(z.xid))
	req = binary.BigEndian.AppendUint32(req, uint32(op))
	if err := z.send(append(req, body...)); err != nil {
		return 0, err
	}
	for {
		resp, err := z.frame()
		if err != nil {
			return 0, err
		}
		if len(resp) < 16 {
			return 0, fmt.Errorf("zookeeper: a short reply (%d bytes)", len(resp))
		}
		// ReplyHeader: xid, zxid, err. Notifications (xid -1) and pings
		// (-2) are not this call's reply; this session sets no watch.
		if int32(binary.BigEndian.Uint32(resp[0:4])) == z.xid {
			return int32(binary.BigEndian.Uint32(resp[12:16])), nil
		}
	}
}

// delete removes the znode at path whatever its version; a znode that is
// not there is no error. It says whether one was deleted.
func (z *zkSession) delete(path string) (bool, error) {
	body := binary.BigEndian.AppendUint32(nil, uint32(len(path)))
	body = append(body, path...)
	body = binary.BigEndian.AppendUint32(body, 0xffffffff) // version -1: any
	code, err := z.call(zkOpDelete, body)
	switch {
	case err != nil:
		return false, fmt.Errorf("zookeeper: delete %s: %w", path, err)
	case code == zkErrNoNode:
		return false, nil
	case code != zkErrOK:
		return false, fmt.Errorf("zookeeper: delete %s: error code %d", path, code)
	}
	return true, nil
}

// close ends the session and its connection.
func (z *zkSession) close() {
	_, _ = z.call(zkOpCloseSess, nil)
	z.conn.Close()
}
