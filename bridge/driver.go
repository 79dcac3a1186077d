package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
)

// driver talks to the Java driver process (bkcheck.bridge.Driver): one
// request at a time, answers matched by id, events queued as they come.
type driver struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	mu   sync.Mutex
	next int

	emu     sync.Mutex
	events  []Event
	changed chan struct{}
	replies chan reply
	dead    chan struct{}
}

// Event is something a client did on its own: a metadata write held, an
// add completed, a recovery open completed, a ledger created or closed.
type Event struct {
	Ev     string `json:"ev"`
	Client string `json:"client"`
	Bookie string `json:"bookie,omitempty"` // a failed write's or read's (write-failed, read-failed)
	Op     string `json:"op,omitempty"`
	RC     int    `json:"rc"`
	Ledger int64  `json:"ledger"`
	Entry  int64  `json:"entry"`
	Last   *int64 `json:"lastEntry,omitempty"`
}

func (e Event) String() string {
	s := e.Client + " " + e.Ev
	if e.Op != "" {
		s += " " + e.Op
	}
	if e.Ev == "added" {
		s += fmt.Sprintf(" entry %d", e.Entry)
	}
	if e.Ev != "meta-held" {
		s += fmt.Sprintf(" rc %d", e.RC)
	}
	return s
}

type reply struct {
	id   string
	ok   bool
	body string
}

func newDriver(cmd *exec.Cmd, in io.WriteCloser, out io.ReadCloser) *driver {
	d := &driver{cmd: cmd, in: in, changed: make(chan struct{}), replies: make(chan reply, 1), dead: make(chan struct{})}
	go func() {
		defer close(d.dead)
		s := bufio.NewScanner(out)
		s.Buffer(make([]byte, 1<<20), 16<<20)
		for s.Scan() {
			line := s.Text()
			if rest, ok := strings.CutPrefix(line, "ev "); ok {
				var e Event
				if json.Unmarshal([]byte(rest), &e) == nil {
					d.emu.Lock()
					d.events = append(d.events, e)
					close(d.changed)
					d.changed = make(chan struct{})
					d.emu.Unlock()
				}
				continue
			}
			parts := strings.SplitN(line, " ", 3)
			if len(parts) == 3 {
				d.replies <- reply{id: parts[0], ok: parts[1] == "ok", body: parts[2]}
			}
		}
	}()
	return d
}

// call sends one request and waits for its answer, decoded into v.
func (d *driver) call(ctx context.Context, v any, verb string, args ...any) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next++
	id := fmt.Sprint(d.next)
	parts := []string{id, verb}
	for _, a := range args {
		parts = append(parts, fmt.Sprint(a))
	}
	if _, err := io.WriteString(d.in, strings.Join(parts, " ")+"\n"); err != nil {
		return fmt.Errorf("the Java driver: %w", err)
	}
	select {
	case r := <-d.replies:
		if r.id != id {
			return fmt.Errorf("the Java driver answered %s to request %s", r.id, id)
		}
		if !r.ok {
			return fmt.Errorf("the Java driver: %s %s: %s", verb, fmt.Sprint(args...), r.body)
		}
		if v != nil {
			return json.Unmarshal([]byte(r.body), v)
		}
		return nil
	case <-d.dead:
		return fmt.Errorf("the Java driver exited during %s", verb)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// awaitEvent waits for the first unconsumed event that satisfies match,
// consumes it and returns it.
func (d *driver) awaitEvent(ctx context.Context, match func(Event) bool) (Event, error) {
	for {
		d.emu.Lock()
		for i, e := range d.events {
			if match(e) {
				d.events = append(d.events[:i], d.events[i+1:]...)
				d.emu.Unlock()
				return e, nil
			}
		}
		ch := d.changed
		d.emu.Unlock()
		select {
		case <-ch:
		case <-d.dead:
			return Event{}, fmt.Errorf("the Java driver exited")
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// pending returns the events not consumed yet.
func (d *driver) pending() []Event {
	d.emu.Lock()
	defer d.emu.Unlock()
	return append([]Event(nil), d.events...)
}

// take consumes and returns every event not consumed yet, oldest first.
func (d *driver) take() []Event {
	d.emu.Lock()
	defer d.emu.Unlock()
	out := d.events
	d.events = nil
	return out
}

// changedCh returns a channel closed when the next event arrives.
func (d *driver) changedCh() <-chan struct{} {
	d.emu.Lock()
	defer d.emu.Unlock()
	return d.changed
}
