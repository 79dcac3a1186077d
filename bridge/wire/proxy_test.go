package wire

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// frame builds a v2 frame as BookKeeper's encoders lay it out.
func frame(dir Direction, op, flags, rc int, ledger, entry int64) []byte {
	var body []byte
	body = binary.BigEndian.AppendUint32(body, uint32(2<<24|op<<16|flags))
	if dir == Response {
		body = binary.BigEndian.AppendUint32(body, uint32(int32(rc)))
	} else if op == OpAdd {
		body = append(body, make([]byte, masterKeyLen)...)
	}
	body = binary.BigEndian.AppendUint64(body, uint64(ledger))
	body = binary.BigEndian.AppendUint64(body, uint64(entry))
	if dir == Request && op == OpAdd {
		body = append(body, "payload"...)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  []byte
		dir  Direction
		want Header
	}{
		{"add", frame(Request, OpAdd, 0, 0, 7, 3), Request, Header{Dir: Request, Op: OpAdd, Ledger: 7, Entry: 3}},
		{"recovery add", frame(Request, OpAdd, FlagRecoveryAdd, 0, 7, 3), Request, Header{Dir: Request, Op: OpAdd, Flags: FlagRecoveryAdd, Ledger: 7, Entry: 3}},
		{"fencing LAC read", frame(Request, OpRead, FlagDoFencing, 0, 9, -1), Request, Header{Dir: Request, Op: OpRead, Flags: FlagDoFencing, Ledger: 9, Entry: -1}},
		{"fenced add response", frame(Response, OpAdd, 0, EFenced, 7, 3), Response, Header{Dir: Response, Op: OpAdd, RC: EFenced, Ledger: 7, Entry: 3}},
	} {
		got, err := Parse(tc.raw, tc.dir)
		if err != nil || got != tc.want {
			t.Errorf("%s: Parse = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	if _, err := Parse(frame(Request, OpAdd, 0, 0, 1, 1)[:12], Request); err == nil {
		t.Error("a truncated frame parsed")
	}
	v3 := frame(Request, OpAdd, 0, 0, 1, 1)
	v3[4] = 3
	if _, err := Parse(v3, Request); err == nil {
		t.Error("a frame of protocol version 3 parsed as v2")
	}
}

// fakeBookie answers every request with an EOK response for its ids and
// reports the entries it received, in order.
func fakeBookie(t *testing.T) (addr string, got <-chan int64, closeConns func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan int64, 16)
	conns := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
			go func() {
				for {
					raw, err := readFrame(c)
					if err != nil {
						return
					}
					h, _ := Parse(raw, Request)
					ch <- h.Entry
					c.Write(frame(Response, h.Op, 0, EOK, h.Ledger, h.Entry))
				}
			}()
		}
	}()
	return ln.Addr().String(), ch, func() {
		for {
			select {
			case c := <-conns:
				c.Close()
			default:
				return
			}
		}
	}
}

func TestProxyHoldsDeliversAndDrops(t *testing.T) {
	addr, got, closeConns := fakeBookie(t)
	p := NewProxy()
	defer p.Close()
	port, err := p.Listen("c1", "b1", addr)
	if err != nil {
		t.Fatal(err)
	}
	client, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	entry := func(dir Direction, e int64) func(*Frame) bool {
		return func(f *Frame) bool { return f.Dir == dir && f.Entry == e && f.Client == "c1" && f.Bookie == "b1" }
	}
	for e := int64(0); e < 3; e++ {
		client.Write(frame(Request, OpAdd, 0, 0, 5, e))
	}
	var req [3]*Frame
	for e := range req {
		if req[e], err = p.Await(ctx, entry(Request, int64(e))); err != nil {
			t.Fatalf("request %d never held: %v", e, err)
		}
	}
	// Delivered out of order, one dropped: the bookie sees 2 then 1, never 0.
	p.Drop(req[0])
	if err := p.Deliver(req[2]); err != nil {
		t.Fatal(err)
	}
	if err := p.Deliver(req[1]); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int64{2, 1} {
		if e := <-got; e != want {
			t.Fatalf("the bookie received entry %d, want %d", e, want)
		}
	}
	if err := p.Deliver(req[0]); err == nil {
		t.Error("a dropped frame was delivered")
	}
	// Responses are held too, and reach the client only when delivered.
	resp, err := p.Await(ctx, entry(Response, 1))
	if err != nil {
		t.Fatal(err)
	}
	if resp.RC != EOK || resp.Op != OpAdd {
		t.Errorf("response %v", resp)
	}
	if err := p.Deliver(resp); err != nil {
		t.Fatal(err)
	}
	raw, err := readFrame(client)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := Parse(raw, Response); h.Entry != 1 {
		t.Errorf("the client received entry %d, want the delivered 1", h.Entry)
	}
	// The bookie's side closes (a crash): the client's connection closes too.
	closeConns()
	client.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := readFrame(client); err != io.EOF {
		t.Errorf("after the bookie closed, the client read %v, want EOF", err)
	}
	if err := p.Deliver(mustHeld(t, p, entry(Response, 2))); err == nil {
		t.Error("a frame of a closed connection was delivered")
	}
}

func mustHeld(t *testing.T, p *Proxy, match func(*Frame) bool) *Frame {
	t.Helper()
	for _, f := range p.Held() {
		if match(f) {
			return f
		}
	}
	t.Fatal("frame not held")
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestProxyClosesLinks: closing a client's links to a bookie closes that
// client's connection (it reads EOF), drops the frames they held, and
// leaves another client's link to the same bookie as it was.
func TestProxyClosesLinks(t *testing.T) {
	addr, _, _ := fakeBookie(t)
	p := NewProxy()
	defer p.Close()
	dial := func(client string) net.Conn {
		port, err := p.Listen(client, "b1", addr)
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", itoa(port)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	c1, c2 := dial("c1"), dial("c2")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c1.Write(frame(Request, OpAdd, 0, 0, 5, 0))
	c2.Write(frame(Request, OpAdd, 0, 0, 5, 0))
	for _, c := range []string{"c1", "c2"} {
		if _, err := p.Await(ctx, func(f *Frame) bool { return f.Client == c }); err != nil {
			t.Fatalf("%s's request never held: %v", c, err)
		}
	}
	if n := p.CloseLinks("c1", "b1"); n != 1 {
		t.Errorf("closed %d links, want 1", n)
	}
	c1.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := readFrame(c1); err != io.EOF {
		t.Errorf("after its link closed, c1 read %v, want EOF", err)
	}
	var clients []string
	for _, f := range p.Held() {
		clients = append(clients, f.Client)
	}
	if len(clients) != 1 || clients[0] != "c2" {
		t.Errorf("frames held after c1's link closed: %v, want c2's only", clients)
	}
	if err := p.Deliver(p.Held()[0]); err != nil {
		t.Errorf("c2's frame: %v", err)
	}
}
