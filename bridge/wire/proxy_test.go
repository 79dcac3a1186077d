package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
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
// reports the entries it received, in order (a frame it cannot parse as
// -100, unanswered).
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
					h, err := Parse(raw, Request)
					if err != nil {
						ch <- -100
						continue
					}
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

// proxied is one client's connection through a proxy to a fake bookie.
type proxied struct {
	t          *testing.T
	p          *Proxy
	port       int
	client     net.Conn
	got        <-chan int64
	closeConns func()
	ctx        context.Context
}

func newProxied(t *testing.T) *proxied {
	addr, got, closeConns := fakeBookie(t)
	p := NewProxy()
	t.Cleanup(p.Close)
	port, err := p.Listen("c1", "b1", addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	x := &proxied{t: t, p: p, port: port, got: got, closeConns: closeConns, ctx: ctx}
	x.dial()
	return x
}

// dial opens a new connection of the client through the proxy.
func (x *proxied) dial() {
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", itoa(x.port)))
	if err != nil {
		x.t.Fatal(err)
	}
	x.t.Cleanup(func() { c.Close() })
	x.client = c
}

// await is the held frame of entry e in direction dir.
func (x *proxied) await(dir Direction, e int64) *Frame {
	x.t.Helper()
	f, err := x.p.Await(x.ctx, func(f *Frame) bool { return f.Dir == dir && f.Entry == e })
	if err != nil {
		x.t.Fatalf("%v of entry %d never held: %v", dir, e, err)
	}
	return f
}

// received is the next n entries the bookie received.
func (x *proxied) received(n int) []int64 {
	x.t.Helper()
	var out []int64
	for len(out) < n {
		select {
		case e := <-x.got:
			out = append(out, e)
		case <-x.ctx.Done():
			x.t.Fatalf("the bookie received %v, then nothing", out)
		}
	}
	return out
}

// eof waits until the client's connection reads EOF: the proxy closed it.
func (x *proxied) eof() {
	x.t.Helper()
	x.client.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, err := readFrame(x.client)
		if err == io.EOF {
			return
		}
		if err != nil {
			x.t.Fatalf("the client read %v, want EOF", err)
		}
	}
}

// refusal names what Deliver returned: "ok", "out of order behind E",
// "stalled at E" (E the entry of the frame the error names), or the error.
func refusal(err error) string {
	var oo *OutOfOrderError
	var st *StalledError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &oo):
		return fmt.Sprintf("out of order behind %d", oo.Older.Entry)
	case errors.As(err, &st):
		return fmt.Sprintf("stalled at %d", st.Stalled.Entry)
	}
	return err.Error()
}

// TestProxyKeepsTCPsPromise: per connection and direction, frames are
// delivered in the order they were read; one delivered ahead of an older
// held frame is refused naming both; a stalled frame holds back every
// frame behind it, refused naming the stall; closing the connection (the
// harness, or the bookie's side in a crash) discards its frames and ends
// the stall, and the client's new connection delivers.
func TestProxyKeepsTCPsPromise(t *testing.T) {
	// Each step: an action on a frame ("deliver", "stall" the request of
	// entry e, "respond": deliver the response of entry e), or on the
	// connection ("close": CloseLinks, "crash": the bookie's side closes,
	// "redial": a new connection sends entry e), and what Deliver says.
	type step struct {
		do   string
		e    int64
		want string
	}
	for _, tc := range []struct {
		name     string
		steps    []step
		got      []int64 // what the bookie received, in order
		answered []int64 // what the client received, in order
	}{
		{"in order", []step{{"deliver", 0, "ok"}, {"deliver", 1, "ok"}, {"deliver", 2, "ok"}}, []int64{0, 1, 2}, nil},
		{"out of order refused", []step{
			{"deliver", 1, "out of order behind 0"}, {"deliver", 0, "ok"},
			{"deliver", 2, "out of order behind 1"}, {"deliver", 1, "ok"}, {"deliver", 2, "ok"},
		}, []int64{0, 1, 2}, nil},
		{"responses in order", []step{
			{"deliver", 0, "ok"}, {"deliver", 1, "ok"},
			{"respond", 1, "out of order behind 0"}, {"respond", 0, "ok"}, {"respond", 1, "ok"},
		}, []int64{0, 1}, []int64{0, 1}},
		{"stall then a later frame refused", []step{
			{"stall", 1, ""}, {"deliver", 0, "ok"},
			{"deliver", 2, "stalled at 1"}, {"deliver", 1, "stalled at 1"},
		}, []int64{0}, nil},
		{"a stall moves to an older frame stalled after it", []step{
			{"stall", 2, ""}, {"stall", 0, ""}, {"deliver", 1, "stalled at 0"},
		}, nil, nil},
		{"close ends the stall, a new connection delivers", []step{
			{"stall", 0, ""}, {"deliver", 1, "stalled at 0"},
			{"close", 0, ""}, {"deliver", 1, "its connection has closed"},
			{"redial", 5, ""}, {"deliver", 5, "ok"}, {"respond", 5, "ok"},
		}, []int64{5}, []int64{5}},
		{"a crash ends the stall, a new connection delivers", []step{
			{"stall", 0, ""}, {"crash", 0, ""}, {"redial", 5, ""}, {"deliver", 5, "ok"},
		}, []int64{5}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newProxied(t)
			req := map[int64]*Frame{}
			for e := int64(0); e < 3; e++ {
				x.client.Write(frame(Request, OpAdd, 0, 0, 5, e))
				req[e] = x.await(Request, e)
			}
			for i, s := range tc.steps {
				var err error
				switch s.do {
				case "deliver":
					err = x.p.Deliver(req[s.e])
				case "respond":
					err = x.p.Deliver(x.await(Response, s.e))
				case "stall":
					x.p.Stall(req[s.e])
				case "close":
					if n := x.p.CloseLinks("c1", "b1"); n != 1 {
						t.Fatalf("step %d: closed %d links, want 1", i+1, n)
					}
					x.eof()
				case "crash":
					x.closeConns()
					x.eof()
				case "redial":
					x.dial()
					x.client.Write(frame(Request, OpAdd, 0, 0, 5, s.e))
					req[s.e] = x.await(Request, s.e)
				}
				if got := refusal(err); s.want != "" && !strings.Contains(got, s.want) {
					t.Errorf("step %d: %s of entry %d: %s, want %s", i+1, s.do, s.e, got, s.want)
				}
			}
			if got := x.received(len(tc.got)); fmt.Sprint(got) != fmt.Sprint(tc.got) {
				t.Errorf("the bookie received %v, want %v", got, tc.got)
			}
			for _, e := range tc.answered {
				raw, err := readFrame(x.client)
				if h, _ := Parse(raw, Response); err != nil || h.Entry != e {
					t.Errorf("the client received entry %d (%v), want %d", h.Entry, err, e)
				}
			}
			x.p.mu.Lock()
			for _, f := range x.p.held {
				if !x.p.links[f.link] {
					t.Errorf("frame %v of a closed connection still held", f)
				}
			}
			x.p.mu.Unlock()
		})
	}
}

// TestProxyErrorsNameBothFrames: the refusals say which frame was refused
// and which frame of the connection stands in its way.
func TestProxyErrorsNameBothFrames(t *testing.T) {
	x := newProxied(t)
	for e := int64(0); e < 2; e++ {
		x.client.Write(frame(Request, OpAdd, 0, 0, 5, e))
	}
	f0, f1 := x.await(Request, 0), x.await(Request, 1)
	err := x.p.Deliver(f1)
	var oo *OutOfOrderError
	if !errors.As(err, &oo) || oo.Frame != f1 || oo.Older != f0 {
		t.Fatalf("delivering entry 1 first: %v, want an OutOfOrderError naming entry 1 and entry 0", err)
	}
	if msg := err.Error(); !strings.Contains(msg, f1.String()) || !strings.Contains(msg, f0.String()) {
		t.Errorf("%q names not both frames", msg)
	}
	x.p.Stall(f0)
	err = x.p.Deliver(f1)
	var st *StalledError
	if !errors.As(err, &st) || st.Frame != f1 || st.Stalled != f0 {
		t.Fatalf("delivering entry 1 behind the stalled entry 0: %v, want a StalledError naming both", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "stalled at frame "+f0.String()) {
		t.Errorf("%q does not say where the connection stalled", msg)
	}
	if held := x.p.Held(); len(held) != 1 || held[0] != f1 {
		t.Errorf("held %v, want entry 1 only (a stalled frame awaits no decision)", held)
	}
}

// TestProxyPassesOthersInOrder: a frame the proxy does not read (here one
// of protocol v3) goes on by itself, but never ahead of a frame read
// before it on its connection.
func TestProxyPassesOthersInOrder(t *testing.T) {
	x := newProxied(t)
	v3 := frame(Request, OpAdd, 0, 0, 5, 9)
	v3[4] = 3
	x.client.Write(frame(Request, OpAdd, 0, 0, 5, 0))
	x.client.Write(v3)
	f0 := x.await(Request, 0)
	if err := x.p.Deliver(f0); err != nil {
		t.Fatal(err)
	}
	if got := x.received(2); fmt.Sprint(got) != "[0 -100]" {
		t.Errorf("the bookie received %v, want entry 0 then the v3 frame", got)
	}
	x.client.Write(v3)
	if got := x.received(1); got[0] != -100 {
		t.Errorf("the bookie received %v, want the v3 frame at once", got)
	}
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
