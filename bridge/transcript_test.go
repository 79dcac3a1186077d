package bridge

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bkcheck/bkcheck/bridge/cluster"
	"github.com/bkcheck/bkcheck/bridge/wire"
)

var updateTranscripts = flag.Bool("update-transcripts", false, "rewrite bridge/testdata/transcripts from the page traces")

// TestTranscripts runs every trace of the pages through the harness's
// mapping against fakeJava, which stands in for BookKeeper and answers
// from the trace, and compares what the harness did (one line per call to
// the cluster, the proxy or the driver, under each step) with the
// transcript pinned under testdata/transcripts/. A change to the mapping
// changes a transcript: the test fails in the default tier, in seconds,
// and the new transcript is reviewed as text (regenerate with go test
// ./bridge -run TestTranscripts -update-transcripts). What BookKeeper does
// is the real tier's to say.
func TestTranscripts(t *testing.T) {
	// The fake cluster mounts nothing: a power loss runs on every machine.
	defer func(f func() error) { fuseAvailable = f }(fuseAvailable)
	fuseAvailable = func() error { return nil }
	traces, _ := filepath.Glob(filepath.Join("..", "docs", "traces", "*", "*.itf.json"))
	if len(traces) < 20 {
		t.Fatalf("found %d page traces", len(traces))
	}
	want := map[string]bool{}
	for _, path := range traces {
		name := filepath.Base(filepath.Dir(path)) + "/" + strings.TrimSuffix(filepath.Base(path), ".itf.json") + ".txt"
		want[name] = true
		t.Run(name, func(t *testing.T) {
			got := transcript(t, path)
			file := filepath.Join("testdata", "transcripts", name)
			if *updateTranscripts {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (regenerate with go test ./bridge -run TestTranscripts -update-transcripts)", err)
			}
			if string(b) != got {
				t.Errorf("the harness's transcript of %s changed (review, then regenerate with go test ./bridge -run TestTranscripts -update-transcripts):\n%s", path, lineDiff(string(b), got))
			}
		})
	}
	pinned, _ := filepath.Glob(filepath.Join("testdata", "transcripts", "*", "*.txt"))
	for _, f := range pinned {
		name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		if !want[name] && !*updateTranscripts {
			t.Errorf("testdata/transcripts/%s is of no page trace", name)
		}
	}
}

// transcript is what the harness does with the trace in path against
// fakeJava: each step as confirm reports it, each call it makes, and the
// verdict of the steps (the property is the real tier's: it asks a fresh
// reader of the closed ledger).
func transcript(t *testing.T, path string) string {
	states, meta, err := readITFStates(path)
	if err != nil {
		t.Fatal(err)
	}
	params, _ := meta["params"].(map[string]any)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: what the harness does with each step against a fake BookKeeper that answers from the trace\n", filepath.Base(path))
	if step, why := unsupported(params, states); step >= 0 {
		fmt.Fprintf(&b, "NOT EXECUTABLE at step %d: %s\n", step+1, why)
		return b.String()
	}
	r := newState(states, params, Options{StepTimeout: 50 * time.Millisecond})
	java := newFakeJava(r, toInt(params["bookies"]))
	r.cl, r.px, r.drv = java, java, java
	res := &Result{}
	done, err := r.takeSteps(context.Background(), res, func(format string, args ...any) {
		java.say(fmt.Sprintf(format, args...))
	})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b.WriteString(strings.Join(java.lines, "\n") + "\n")
	if done {
		fmt.Fprintf(&b, "%s at step %d: %s\n", res.Verdict, res.Step, res.Reason)
	} else {
		b.WriteString("every step agreed with the fake\n")
	}
	for _, s := range res.Skipped {
		b.WriteString("skipped " + s + "\n")
	}
	for _, n := range res.Notes {
		b.WriteString("note " + n + "\n")
	}
	return b.String()
}

// fakeJava stands in for the cluster, the proxy and the Java driver of a
// run (bookies, frames, javaClients), answering each from the trace: the
// frames the harness awaits are the messages of the step's states, with
// the return codes the model's answers carry; the callbacks it awaits are
// those the step's action implies; an observation is the step's state as
// BookKeeper would show it. It sends nothing of its own accord: a frame
// exists once the harness awaits it. It keeps TCP's promise as the proxy
// does, with the proxy's wire.Lane for each connection and direction: a
// frame behind an older held one, or behind a stalled one, is refused
// until a close (CloseLinks, a crash, a lost disk, a re-format) discards
// the connection's frames. It records every call.
type fakeJava struct {
	r       *run
	bookies []*cluster.Bookie
	lines   []string
	held    []*wire.Frame
	lanes   map[laneKey]*wire.Lane
	nextID  int
	takenAt map[string]int // the step at which a message's frame was delivered, stalled or discarded, by key
	// readFailed: the reads a close failed at the client, each a
	// read-failed callback until the harness awaits it.
	readFailed []Event
	served     map[string]bool // the callbacks given at the current step
	step       int             // the step served is for
	// unregistered: the stopped bookies whose registration the harness
	// ended, until they start again.
	unregistered map[string]bool
}

func newFakeJava(r *run, n int) *fakeJava {
	j := &fakeJava{r: r, lanes: map[laneKey]*wire.Lane{}, takenAt: map[string]int{}, served: map[string]bool{}}
	for i := 1; i <= n; i++ {
		j.bookies = append(j.bookies, &cluster.Bookie{Name: "b" + strconv.Itoa(i), Port: 3180 + i})
	}
	return j
}

func (j *fakeJava) say(s string) { j.lines = append(j.lines, s) }

func (j *fakeJava) record(format string, args ...any) {
	j.lines = append(j.lines, "  "+fmt.Sprintf(format, args...))
}

// names replaces bookie ids in s with bookie names.
func (j *fakeJava) names(s string) string {
	for _, b := range j.bookies {
		s = strings.ReplaceAll(s, b.ID(), b.Name)
	}
	return s
}

// The cluster.

func (j *fakeJava) Bookie(name string) *cluster.Bookie {
	for _, b := range j.bookies {
		if b.Name == name {
			return b
		}
	}
	return nil
}
func (j *fakeJava) Bookies() []*cluster.Bookie  { return j.bookies }
func (j *fakeJava) Alive(*cluster.Bookie) error { return nil }

// A crash, a lost disk and a re-format each kill the bookie's process,
// which closes its connections.
func (j *fakeJava) Crash(b *cluster.Bookie) error {
	j.record("kill -9 %s", b.Name)
	j.closeConnections("", b.Name)
	return nil
}
func (j *fakeJava) Restart(_ context.Context, b *cluster.Bookie) error {
	j.record("restart %s", b.Name)
	delete(j.unregistered, b.Name)
	return nil
}
func (j *fakeJava) Unregister(_ context.Context, b *cluster.Bookie) (bool, error) {
	j.record("end %s's registration", b.Name)
	was := !j.unregistered[b.Name]
	if j.unregistered == nil {
		j.unregistered = map[string]bool{}
	}
	j.unregistered[b.Name] = true
	return was, nil
}
func (j *fakeJava) LoseDisk(_ context.Context, b *cluster.Bookie) (string, error) {
	j.record("wipe %s's disk; its restart refused", b.Name)
	j.closeConnections("", b.Name)
	return "", nil
}
func (j *fakeJava) Reformat(_ context.Context, b *cluster.Bookie, deleteCookie bool) error {
	j.record("re-format %s (delete cookie: %v)", b.Name, deleteCookie)
	j.closeConnections("", b.Name)
	delete(j.unregistered, b.Name)
	return nil
}
func (j *fakeJava) CollectGarbage(_ context.Context, b *cluster.Bookie) error {
	j.record("garbage-collect %s", b.Name)
	return nil
}
func (j *fakeJava) ReadOnly(_ context.Context, b *cluster.Bookie, readOnly bool) error {
	j.record("%s %s", map[bool]string{true: "read-only", false: "writable"}[readOnly], b.Name)
	return nil
}
func (j *fakeJava) Checkpoint(_ context.Context, b *cluster.Bookie, flush bool) error {
	j.record("checkpoint %s (flush: %v)", b.Name, flush)
	return nil
}
func (j *fakeJava) ShortRead(_ context.Context, b *cluster.Bookie, ledger, entry int64) error {
	j.record("short read of %s: ledger %d entry %d", b.Name, ledger, entry)
	return nil
}
func (j *fakeJava) PreBootCheck(_ context.Context, b *cluster.Bookie) error {
	j.record("pre-boot check of %s", b.Name)
	return nil
}
func (j *fakeJava) Journal(_ context.Context, b *cluster.Bookie, hold bool) error {
	if hold {
		j.record("journal of %s held", b.Name)
	} else {
		j.record("journal of %s released", b.Name)
	}
	return nil
}
func (j *fakeJava) Race(_ context.Context, b *cluster.Bookie, cmd string) error {
	j.record("race in %s: %s", b.Name, cmd)
	return nil
}
func (j *fakeJava) PowerLoss(b *cluster.Bookie) (int, error) {
	j.record("power loss of %s", b.Name)
	return 1, nil
}
func (j *fakeJava) SyncDisks(b *cluster.Bookie, journalOnly bool) error {
	j.record("disks of %s synced (journal only: %v)", b.Name, journalOnly)
	return nil
}
func (j *fakeJava) Close() {}

// The proxy.

func (j *fakeJava) Held() []*wire.Frame { return j.held }

// Await returns the held frame that matches, or the frame of a message of
// the step's states that matches and was not taken since it was sent.
func (j *fakeJava) Await(_ context.Context, match func(*wire.Frame) bool) (*wire.Frame, error) {
	for _, f := range j.held {
		if match(f) {
			j.record("await %s (held)", frameText(f))
			return f, nil
		}
	}
	cur := j.r.cur
	for _, st := range []itfState{j.r.states[cur-1], j.r.states[cur]} {
		for _, m := range messages(st) {
			if m.Count == 0 || j.takenSince(m, cur) {
				continue
			}
			f := j.frame(m)
			if match(f) {
				j.held = append(j.held, f)
				j.lane(f).Add(f)
				j.record("await %s", frameText(f))
				return f, nil
			}
		}
	}
	return nil, fmt.Errorf("no such frame")
}

// takenSince says whether m's frame was taken at or after the last step,
// up to cur, that sent m.
func (j *fakeJava) takenSince(m message, cur int) bool {
	at, ok := j.takenAt[m.key()]
	if !ok {
		return false
	}
	for i := cur; i > at; i-- {
		for _, s := range sentAt(j.r.states[i-1], j.r.states[i]) {
			if s.key() == m.key() {
				return false
			}
		}
	}
	return true
}

// frame is message m as BookKeeper's wire carries it.
func (j *fakeJava) frame(m message) *wire.Frame {
	j.nextID++
	h := wire.Header{Dir: wire.Request, Op: wire.OpAdd, Ledger: j.r.ledger, Entry: javaEntry(m.Entry)}
	if !isRequest(m.Type) {
		h.Dir = wire.Response
	}
	switch m.Type {
	case "AddEntryRequestMessage":
		if rec, _ := m.Fields["recovery"].(bool); rec {
			h.Flags = wire.FlagRecoveryAdd
		}
	case "AddEntryResponseMessage":
		switch j.r.states[j.r.cur].action() {
		case "BookieSendsAddFencedResponse":
			h.RC = wire.EFenced
		case "BookieSendsAddReadOnlyResponse":
			h.RC = wire.EReadOnly
		}
	case "FenceRequestMessage", "FenceResponseMessage":
		h.Op, h.Entry = wire.OpRead, -1
		if h.Dir == wire.Request {
			h.Flags = wire.FlagDoFencing
		}
	case "ReadRequestMessage", "ReadResponseMessage":
		h.Op = wire.OpRead
		if code, _ := m.Fields["code"].(string); h.Dir == wire.Response && code != "OK" {
			h.RC = wire.ENoEntry
		}
	}
	return &wire.Frame{ID: j.nextID, Client: m.Client, Bookie: m.Bookie, Header: h}
}

// take ends f's wait: the harness delivered or stalled it, or its
// connection closed. Its message is not sent again by itself.
func (j *fakeJava) take(f *wire.Frame) {
	for i, g := range j.held {
		if g == f {
			j.held = append(j.held[:i], j.held[i+1:]...)
			break
		}
	}
	for _, st := range []itfState{j.r.states[j.r.cur-1], j.r.states[j.r.cur]} {
		for _, m := range messages(st) {
			if frameOf(m, f) {
				j.takenAt[m.key()] = j.r.cur
			}
		}
	}
}

// laneKey names a connection's direction: the fake has one connection per
// client and bookie at a time, as the harness's clients do.
type laneKey struct {
	client, bookie string
	dir            wire.Direction
}

func (j *fakeJava) lane(f *wire.Frame) *wire.Lane {
	k := laneKey{f.Client, f.Bookie, f.Dir}
	if j.lanes[k] == nil {
		j.lanes[k] = &wire.Lane{}
	}
	return j.lanes[k]
}

// closeConnections closes client's connection to bookie (every client's
// if client is ""), as the proxy's kill does: its frames are discarded,
// a stall ends, and the next request opens a new connection.
func (j *fakeJava) closeConnections(client, bookie string) {
	for _, f := range append([]*wire.Frame(nil), j.held...) {
		if f.Bookie == bookie && (client == "" || f.Client == client) {
			j.take(f)
			if f.Dir == wire.Request && f.Op == wire.OpRead {
				// channelInactive fails the read at the client.
				j.readFailed = append(j.readFailed, Event{Ev: "read-failed", Client: f.Client, Bookie: j.Bookie(f.Bookie).ID(), Entry: f.Entry, RC: -8})
			}
		}
	}
	for k := range j.lanes {
		if k.bookie == bookie && (client == "" || k.client == client) {
			delete(j.lanes, k)
		}
	}
}

func frameText(f *wire.Frame) string {
	s := f.String()
	return s[strings.Index(s, " ")+1:] // without the proxy's frame number
}

// Deliver delivers f if its lane lets it go, as the proxy does.
func (j *fakeJava) Deliver(f *wire.Frame) error {
	if err := j.lane(f).Take(f); err != nil {
		var st *wire.StalledError
		var oo *wire.OutOfOrderError
		switch {
		case errors.As(err, &st):
			j.record("deliver %s: refused, the connection stalled at %s", frameText(f), frameText(st.Stalled))
		case errors.As(err, &oo):
			j.record("deliver %s: refused, %s is ahead of it", frameText(f), frameText(oo.Older))
		default:
			j.record("deliver %s: %v", frameText(f), err)
		}
		return err
	}
	j.take(f)
	j.record("deliver %s", frameText(f))
	return nil
}

func (j *fakeJava) Stall(f *wire.Frame) {
	j.lane(f).Stall(f)
	j.take(f)
	j.record("stall %s", frameText(f))
}

func (j *fakeJava) CloseLinks(client, bookie string) int {
	j.record("close %s's connection to %s", client, bookie)
	j.closeConnections(client, bookie)
	return 1
}

// The driver.

func (j *fakeJava) call(_ context.Context, v any, verb string, args ...any) error {
	var parts []string
	for _, a := range args {
		parts = append(parts, j.names(fmt.Sprint(a)))
	}
	if verb != "observe" && verb != "probe" && verb != "writable" {
		j.record("driver %s %s", verb, strings.Join(parts, " "))
	}
	switch out := v.(type) {
	case *struct{ Released bool }:
		out.Released = true
	case *struct {
		Outcome string `json:"outcome"`
	}:
		out.Outcome = "timed-out"
	case *struct {
		TimedOut bool `json:"timedOut"`
	}:
		out.TimedOut = true
	case *struct {
		Sent bool `json:"sent"`
	}:
		out.Sent = true
	case *struct {
		RC      int  `json:"rc"`
		Serving bool `json:"serving"`
	}:
		out.Serving = true
	case *struct {
		Bookies []string `json:"bookies"`
	}:
		for _, b := range j.bookies {
			if !j.r.crashed[b.Name] {
				out.Bookies = append(out.Bookies, b.ID())
			}
		}
	case *map[string]watched:
		// Every client sees the bookies as the model's state has them.
		ro := set(j.r.states[j.r.cur]["b_read_only"])
		var view watched
		for _, b := range j.bookies {
			if j.unregistered[b.Name] {
				continue
			}
			if contains(ro, b.Name) {
				view.ReadOnly = append(view.ReadOnly, b.ID())
			} else {
				view.Writable = append(view.Writable, b.ID())
			}
			view.Resolvable = append(view.Resolvable, b.ID())
		}
		*out = map[string]watched{"observer": view}
	case *decommissioned:
		// The command returns where the model's does.
		out.Done, _ = j.r.states[j.r.cur]["decom_done"].(bool)
	case *observation:
		j.observe(out, j.r.states[j.r.cur])
		if len(args) == 3 {
			j.record("compare: every bookie's entries, the metadata, each writer's LAC")
		} else {
			j.record("observe the metadata")
		}
	case nil:
	default:
		return fmt.Errorf("the fake has no answer to %s into %T", verb, v)
	}
	return nil
}

// observe fills o with state s as BookKeeper shows it.
func (j *fakeJava) observe(o *observation, s itfState) {
	o.Bookies = map[string][]int{}
	entries := mapOf(s["b_entries"])
	for _, b := range j.bookies {
		var rcs []int
		for e := 1; e <= j.r.entries; e++ {
			rc := wire.ENoEntry
			if contains(set(entries[b.Name]), strconv.Itoa(e)) {
				rc = wire.EOK
			}
			rcs = append(rcs, rc)
		}
		o.Bookies[b.ID()] = rcs
	}
	o.Meta.State = map[string]string{"STATUS_OPEN": "OPEN", "STATUS_IN_RECOVERY": "IN_RECOVERY", "STATUS_CLOSED": "CLOSED"}[s.str("meta_status")]
	if deleted, _ := s["meta_deleted"].(bool); deleted {
		o.Meta.State = ""
	}
	o.Meta.LastEntry = int64(s.num("meta_last_entry")) - 1
	frags, _ := s["meta_fragments"].([]any)
	for _, f := range frags {
		fm, _ := f.(map[string]any)
		var ids []string
		for _, b := range javaLayout(fm) {
			ids = append(ids, j.Bookie(b).ID())
		}
		o.Meta.Ensembles = append(o.Meta.Ensembles, struct {
			First   int64    `json:"first"`
			Bookies []string `json:"bookies"`
		}{First: int64(toInt(fm["first_entry_id"])) - 1, Bookies: ids})
	}
	o.Clients = map[string]clientView{}
	for name, cv := range mapOf(s["clients"]) {
		c, _ := cv.(map[string]any)
		if c["status"] != "STATUS_OPEN" {
			continue
		}
		lac := int64(toInt(c["lac"])) - 1
		o.Clients[name] = clientView{LAC: &lac}
	}
}

// awaitEvent returns the first callback of the step's action that
// matches and was not given yet at this step.
func (j *fakeJava) awaitEvent(_ context.Context, match func(Event) bool) (Event, error) {
	if j.step != j.r.cur {
		j.step, j.served = j.r.cur, map[string]bool{}
	}
	next := j.r.states[j.r.cur]
	client, _ := next.picks()["client"].(string)
	op := "write"
	rc := 0
	switch next.action() {
	case "ClientCreatesLedger":
		op = "create"
	case "ClientDeletesLedger":
		op = "remove"
	case "ClientFailsToCreateLedger", "ClientClosesLedgerFail":
		rc = -1
	}
	events := []Event{{Ev: "meta-held", Client: client, Op: op}}
	for _, ev := range []string{"created", "recovered", "deleted", "closed"} {
		events = append(events, Event{Ev: ev, Client: client, RC: rc})
	}
	for _, m := range messages(j.r.states[j.r.cur-1]) {
		if m.Count == -1 && m.Client == client && isAdd(m) {
			events = append(events, Event{Ev: "write-failed", Client: client, Bookie: j.Bookie(m.Bookie).ID(), Entry: javaEntry(m.Entry), RC: -8})
		}
	}
	for i, e := range j.readFailed {
		if match(e) {
			j.readFailed = append(j.readFailed[:i], j.readFailed[i+1:]...)
			j.record("callback %s", j.names(fmt.Sprintf("%s (%s, entry %d)", e, e.Bookie, e.Entry)))
			return e, nil
		}
	}
	for _, e := range events {
		key := e.String() + e.Bookie
		if !j.served[key] && match(e) {
			j.served[key] = true
			what := e.String()
			if e.Ev == "write-failed" {
				what += fmt.Sprintf(" (%s, entry %d)", e.Bookie, e.Entry)
			}
			j.record("callback %s", j.names(what))
			return e, nil
		}
	}
	return Event{}, fmt.Errorf("no such callback")
}

func (j *fakeJava) pending() []Event { return nil }

// lineDiff shows the first lines where two transcripts differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  pinned: %s\n  now:    %s", i+1, a, b)
		}
	}
	return ""
}
