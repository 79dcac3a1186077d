package wire

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
)

// Frame is one frame the proxy holds: which model client and bookie it is
// between, what it says, and the bytes to forward.
type Frame struct {
	ID     int
	Client string
	Bookie string
	Header
	raw  []byte
	link *link
	pass bool // not a frame the bridge reads: forwarded once it heads its lane
}

func (f *Frame) String() string {
	if f.Dir == Request {
		return fmt.Sprintf("#%d %s->%s %v", f.ID, f.Client, f.Bookie, f.Header)
	}
	return fmt.Sprintf("#%d %s->%s %v", f.ID, f.Bookie, f.Client, f.Header)
}

// Proxy holds every frame between the clients and the bookies. Each
// (client, bookie) pair has its own listening port, so that the frames of
// a connection are known to be that client's: the client's BookKeeper
// instance resolves the bookie to that port (SteeredBookKeeper).
//
// It keeps TCP's promise (Lane): the frames of a connection go in the
// order they were read, in each direction, and a frame the network loses
// (Stall) holds back every frame behind it until the connection closes.
// Delivering a frame against that is refused with an *OutOfOrderError or
// a *StalledError, so that the harness cannot make BookKeeper see what no
// network shows it.
type Proxy struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever held changes
	held    []*Frame      // awaiting a decision, oldest first: neither delivered nor stalled
	nextID  int
	lns     []net.Listener
	links   map[*link]bool
	closed  bool
	wg      sync.WaitGroup
}

// link is one accepted connection and its upstream connection to the
// bookie. lanes (under Proxy.mu) are its frames not yet forwarded, by
// Direction; wmu orders the writes to its two sides.
type link struct {
	client, bookie string
	down, up       net.Conn
	lanes          [2]Lane
	wmu            sync.Mutex
	dead           bool
}

// NewProxy returns a proxy with no ports.
func NewProxy() *Proxy {
	return &Proxy{changed: make(chan struct{}), links: map[*link]bool{}}
}

// Listen opens a port on loopback for client's connections to bookie,
// whose real address is upstream, and returns the port.
func (p *Proxy) Listen(client, bookie, upstream string) (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("proxy for %s->%s: %w", client, bookie, err)
	}
	p.mu.Lock()
	p.lns = append(p.lns, ln)
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.accept(client, bookie, upstream, c)
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return strconv.Atoi(port)
}

func (p *Proxy) accept(client, bookie, upstream string, down net.Conn) {
	up, err := net.Dial("tcp", upstream)
	if err != nil {
		down.Close() // the bookie is down: the client sees a refused connection
		return
	}
	l := &link{client: client, bookie: bookie, down: down, up: up}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		down.Close()
		up.Close()
		return
	}
	p.links[l] = true
	p.mu.Unlock()
	p.wg.Add(2)
	go p.pump(l, down, Request)
	go p.pump(l, up, Response)
}

// pump reads frames from one side of a link and holds them. When either
// side closes, the link closes whole, as a TCP connection through the
// network would: the client errors what it has outstanding on it.
func (p *Proxy) pump(l *link, from net.Conn, dir Direction) {
	defer p.wg.Done()
	for {
		raw, err := readFrame(from)
		if err != nil {
			p.kill(l)
			return
		}
		h, perr := Parse(raw, dir)
		f := &Frame{Client: l.client, Bookie: l.bookie, Header: h, raw: raw, link: l}
		lane := &l.lanes[dir]
		p.mu.Lock()
		if perr != nil {
			// Not ours to interpret: it goes on by itself, but behind the
			// frames read before it, as TCP would carry it.
			f.pass = true
			lane.Add(f)
			p.forward(l, lane.passing()) // unlocks p.mu
			continue
		}
		p.nextID++
		f.ID = p.nextID
		lane.Add(f)
		p.held = append(p.held, f)
		p.signal()
		p.mu.Unlock()
	}
}

// kill closes a link (either side closed, or the harness closes it) and
// discards every frame it held, a stalled one too: the client fails what
// it had outstanding on it, and its next request opens a new connection,
// with lanes of its own.
func (p *Proxy) kill(l *link) {
	// Its frames go before its sockets close: once the client sees the
	// close, none of them is held. The sockets close before the write
	// lock is taken, so that a write blocked on them returns.
	p.mu.Lock()
	delete(p.links, l)
	l.lanes = [2]Lane{}
	kept := p.held[:0]
	for _, f := range p.held {
		if f.link != l {
			kept = append(kept, f)
		}
	}
	p.held = kept
	p.signal()
	p.mu.Unlock()
	l.down.Close()
	l.up.Close()
	l.wmu.Lock()
	l.dead = true
	l.wmu.Unlock()
}

func (p *Proxy) signal() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Held returns the frames held now and awaiting a decision, oldest first:
// not a stalled frame, which awaits none (the frames behind it are among
// them, though Deliver refuses them).
func (p *Proxy) Held() []*Frame {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Frame(nil), p.held...)
}

// Changed returns a channel closed at the next change of the held frames
// or of the connections (a frame caught, taken, a connection closed).
func (p *Proxy) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// Live says whether the connection a frame travels on is still open.
func (p *Proxy) Live(f *Frame) bool {
	f.link.wmu.Lock()
	defer f.link.wmu.Unlock()
	return !f.link.dead
}

// Await waits until a held frame satisfies match, and returns the oldest
// that does. It waits for an event, not for a time: ctx bounds how long a
// missing frame may take before the caller calls it a divergence.
func (p *Proxy) Await(ctx context.Context, match func(*Frame) bool) (*Frame, error) {
	for {
		p.mu.Lock()
		for _, f := range p.held {
			if match(f) {
				p.mu.Unlock()
				return f, nil
			}
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Deliver forwards a held frame to its destination, and with it the
// frames the proxy passes on by themselves that waited behind it. It
// refuses a frame behind an older one of its connection and direction
// (*OutOfOrderError) or behind a stall (*StalledError), and fails when
// the frame's connection has closed since (a crashed bookie, CloseLinks).
func (p *Proxy) Deliver(f *Frame) error {
	l := f.link
	p.mu.Lock()
	if !p.links[l] {
		p.mu.Unlock()
		return fmt.Errorf("frame %v: its connection has closed", f)
	}
	lane := &l.lanes[f.Dir]
	if err := lane.Take(f); err != nil {
		p.mu.Unlock()
		return err
	}
	p.unhold(f)
	return p.forward(l, append([]*Frame{f}, lane.passing()...))
}

// forward writes frames of link l to their destinations, in order. Called
// with p.mu held, it takes the link's write lock before it releases p.mu,
// so that no frame taken from a lane after them overtakes them.
func (p *Proxy) forward(l *link, out []*Frame) error {
	l.wmu.Lock()
	p.mu.Unlock()
	defer l.wmu.Unlock()
	for _, f := range out {
		if l.dead {
			return fmt.Errorf("frame %v: its connection has closed", f)
		}
		to := l.up
		if f.Dir == Response {
			to = l.down
		}
		if _, err := to.Write(f.raw); err != nil {
			return fmt.Errorf("frame %v: %w", f, err)
		}
	}
	return nil
}

// Deliverable says whether Deliver would forward f now: it is the oldest
// frame held on its connection in its direction, not at or behind a
// stalled one, and its connection is open.
func (p *Proxy) Deliverable(f *Frame) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.links[f.link] {
		return false
	}
	l := &f.link.lanes[f.Dir]
	i := l.index(f)
	return i == 0 && (l.stalled == nil || l.index(l.stalled) > 0)
}

// Stall makes a held frame one the network loses without closing its
// connection: it stays held and is never delivered, and every frame read
// after it on its connection in the same direction is then refused
// (*StalledError), until the connection closes (a crash, CloseLinks) and
// the client fails what it had outstanding on it. A frame no longer held
// (its connection closed) is lost already.
func (p *Proxy) Stall(f *Frame) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.links[f.link] && f.link.lanes[f.Dir].Stall(f) {
		p.unhold(f)
	}
}

// unhold removes f from the frames awaiting a decision; p.mu is held.
func (p *Proxy) unhold(f *Frame) {
	for i, g := range p.held {
		if g == f {
			p.held = append(p.held[:i], p.held[i+1:]...)
			p.signal()
			return
		}
	}
}

// CloseLinks closes every connection between client and bookie, as a
// network that breaks them would, and discards the frames they held, a
// stall ending with them: the client errors what it had outstanding on
// them (PerChannelBookieClient.channelInactive), and its next request
// opens a new connection. It returns how many it closed.
func (p *Proxy) CloseLinks(client, bookie string) int {
	p.mu.Lock()
	var links []*link
	for l := range p.links {
		if l.client == client && l.bookie == bookie {
			links = append(links, l)
		}
	}
	p.mu.Unlock()
	for _, l := range links {
		p.kill(l)
	}
	return len(links)
}

// Close stops every listener and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	lns := p.lns
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	for _, l := range links {
		p.kill(l)
	}
	p.wg.Wait()
}
