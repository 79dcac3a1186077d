// Package wire is the bridge's hand on the network: a proxy between each
// client and each bookie that holds every frame of BookKeeper's protocol
// until it is told to deliver it or to stall it. A trace of the model says
// which message is delivered when and which is lost; the proxy makes the
// real cluster take exactly those steps, whatever the timing of the
// processes, and only as TCP could (Lane): a connection's frames in
// order, a lost one holding back every later one until the connection
// closes.
//
// Frames are BookKeeper's pre-v3 (v2) wire protocol, the one Pulsar uses
// (bookkeeperUseV2WireProtocol=true): a 4-byte length, then a header int
// (version<<24 | opcode<<16 | flags), then fixed fields. The layout is
// BookieProtocol's and BookieProtoEncoding's (RequestEnDeCoderPreV3,
// ResponseEnDeCoderPreV3): an add request carries the 20-byte master key and
// then the entry, which starts with the ledger and entry ids; a read request
// the ledger and entry ids (then the master key when it fences); every
// response the return code and the ledger and entry ids.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Opcodes and flags of the v2 protocol (BookieProtocol).
const (
	OpAdd  = 1 // ADDENTRY
	OpRead = 2 // READENTRY

	FlagDoFencing   = 0x1 // FLAG_DO_FENCING: a fencing read
	FlagRecoveryAdd = 0x2 // FLAG_RECOVERY_ADD: an add that ignores the fence
)

// Return codes of the v2 protocol (BookieProtocol).
const (
	EOK       = 0
	ENoLedger = 1
	ENoEntry  = 2
	EIO       = 101
	EFenced   = 104
	EReadOnly = 105
)

// Direction says which way a frame travels.
type Direction int

const (
	Request  Direction = iota // client to bookie
	Response                  // bookie to client
)

func (d Direction) String() string {
	if d == Request {
		return "request"
	}
	return "response"
}

// Header is what the bridge reads of a frame.
type Header struct {
	Dir    Direction
	Op     int
	Flags  int
	RC     int // responses only
	Ledger int64
	Entry  int64 // -1 (LAST_ADD_CONFIRMED) for a fencing read of the LAC
	// LAC is the last add confirmed an add request carries (the entry's
	// third long, after its ledger and entry ids); 0 for other frames.
	LAC int64
}

func (h Header) String() string {
	kind := map[int]string{OpAdd: "add", OpRead: "read"}[h.Op]
	if kind == "" {
		kind = fmt.Sprintf("op%d", h.Op)
	}
	s := fmt.Sprintf("%s %s ledger %d entry %d", kind, h.Dir, h.Ledger, h.Entry)
	if h.Flags&FlagDoFencing != 0 && h.Op == OpRead {
		s += " fencing"
	}
	if h.Flags&FlagRecoveryAdd != 0 && h.Op == OpAdd {
		s += " recovery"
	}
	if h.Dir == Response {
		s += fmt.Sprintf(" rc %d", h.RC)
	}
	return s
}

// maxFrame bounds a frame's length: the bookie's default nettyMaxFrameSizeBytes.
const maxFrame = 5 << 20

const masterKeyLen = 20

// readFrame reads one length-prefixed frame, returning it whole (prefix
// included) so that it can be forwarded as it came.
func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes, more than %d", size, maxFrame)
	}
	buf := make([]byte, 4+size)
	copy(buf, n[:])
	if _, err := io.ReadFull(r, buf[4:]); err != nil {
		return nil, err
	}
	return buf, nil
}

var errShort = errors.New("frame too short")

// Parse reads the header of a whole frame (length prefix included).
func Parse(frame []byte, dir Direction) (Header, error) {
	b := frame[4:]
	if len(b) < 4 {
		return Header{}, errShort
	}
	word := binary.BigEndian.Uint32(b)
	h := Header{Dir: dir, Op: int(word >> 16 & 0xff), Flags: int(word & 0xffff)}
	if version := word >> 24; version != 2 && version != 0 {
		return h, fmt.Errorf("not a v2 frame (version byte %d): the bridge's clients speak v2", version)
	}
	b = b[4:]
	if dir == Response {
		if len(b) < 20 {
			return h, errShort
		}
		h.RC = int(int32(binary.BigEndian.Uint32(b)))
		b = b[4:]
	} else if h.Op == OpAdd {
		if len(b) < masterKeyLen {
			return h, errShort
		}
		b = b[masterKeyLen:]
	}
	if len(b) < 16 {
		return h, errShort
	}
	h.Ledger = int64(binary.BigEndian.Uint64(b))
	h.Entry = int64(binary.BigEndian.Uint64(b[8:]))
	if dir == Request && h.Op == OpAdd && len(b) >= 24 {
		h.LAC = int64(binary.BigEndian.Uint64(b[16:]))
	}
	return h, nil
}
