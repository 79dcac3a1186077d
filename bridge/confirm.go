// Package bridge executes a trace of bkcheck's model on a real BookKeeper
// cluster and says whether BookKeeper does what the model did: each step of
// the trace becomes an action on the cluster (a client call, a frame
// delivered or dropped by the proxy, a metadata write released, a bookie
// killed or restarted), and after each step what BookKeeper shows (the
// entries each bookie serves, the ledger's metadata, each writer's LAC) is
// compared with the model's state. It ends with one verdict.
//
// The bridge sits above check and reads a trace only through it
// (check.ReadTrace, check.Replay); nothing below imports it.
package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/bridge/cluster"
	"github.com/bkcheck/bkcheck/bridge/wire"
	"github.com/bkcheck/bkcheck/check"
)

// DefaultVersion is the BookKeeper release a trace runs on unless told.
const DefaultVersion = "4.18.2"

// Verdicts.
const (
	Reproduced    = "REPRODUCED"     // every step agreed and BookKeeper violates the property too
	Agreed        = "NOT REPRODUCED" // every step agreed, but BookKeeper does not violate the property
	Diverged      = "DIVERGED"       // at Step, BookKeeper did not do what the model did
	NotExecutable = "NOT EXECUTABLE" // the harness cannot drive Step
)

// Options say how to run a confirmation.
type Options struct {
	Version string // BookKeeper release (DefaultVersion if empty)
	// Dir keeps the cluster's data and logs; empty: a temporary directory,
	// removed afterwards unless the verdict is DIVERGED.
	Dir string
	// StepTimeout bounds how long an expected event (a frame, a callback,
	// a state) may take before the step is called diverged. It is never a
	// pause: a step that agrees ends as soon as BookKeeper shows it.
	StepTimeout time.Duration
	Progress    func(format string, args ...any)
}

// Result is a confirmation's outcome.
type Result struct {
	Trace      string `json:"trace"`
	Version    string `json:"bookkeeper"`
	Verdict    string `json:"verdict"`
	Step       int    `json:"step,omitempty"` // 1-based state index of the step that diverged or cannot be driven
	Action     string `json:"action,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Model      string `json:"model,omitempty"`           // the model's side, at a divergence
	BookKeeper string `json:"bookkeeper_side,omitempty"` // BookKeeper's side, at a divergence
	Property   string `json:"property,omitempty"`
	Evidence   string `json:"evidence,omitempty"` // what BookKeeper showed of the property
	Steps      int    `json:"steps"`
	Dir        string `json:"dir,omitempty"`
	// Skipped are the model's steps BookKeeper does not take at all (a
	// replica Java's sequence read never asks), with why.
	Skipped []string `json:"skipped,omitempty"`
	StartMS int64    `json:"cluster_start_ms"`
	RunMS   int64    `json:"steps_ms"`
}

// Text is the result for people: the verdict, the step and both sides.
func (r *Result) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on BookKeeper %s: %s\n", r.Verdict, r.Version, r.Trace)
	switch r.Verdict {
	case Reproduced, Agreed:
		taken := ""
		if len(r.Skipped) > 0 {
			taken = fmt.Sprintf(" (%d of them not taken in BookKeeper, below)", len(r.Skipped))
		}
		fmt.Fprintf(&b, "  every step of %d agreed with the model%s; %s: %s\n", r.Steps, taken, r.Property, r.Evidence)
		for _, s := range r.Skipped {
			fmt.Fprintf(&b, "  %s\n", s)
		}
	case Diverged:
		fmt.Fprintf(&b, "  at step %d (%s): %s\n    model:      %s\n    BookKeeper: %s\n", r.Step, r.Action, r.Reason, r.Model, r.BookKeeper)
	case NotExecutable:
		if r.Action != "" {
			fmt.Fprintf(&b, "  at step %d (%s): ", r.Step, r.Action)
		} else {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%s\n", r.Reason)
	}
	if r.Verdict != NotExecutable {
		fmt.Fprintf(&b, "  cluster start %.1f s, steps %.1f s", float64(r.StartMS)/1000, float64(r.RunMS)/1000)
		if r.Dir != "" {
			fmt.Fprintf(&b, "; data and logs in %s", r.Dir)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ErrTrace wraps a trace the bridge refuses before starting anything: not a
// trace of the current model, or not confirmed by the model.
var ErrTrace = errors.New("trace")

// Confirm executes the trace in path on a real cluster.
func Confirm(ctx context.Context, path string, opts Options) (res *Result, err error) {
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	if opts.StepTimeout == 0 {
		opts.StepTimeout = 20 * time.Second
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	tr, err := check.ReadTrace(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrTrace, path, err)
	}
	if name := tr.Model.Descriptor().Name; name != "current" {
		return nil, fmt.Errorf("%w: %s is a trace of the %s model; the bridge drives traces of the current model (its clients are BookKeeper's client of today)", ErrTrace, path, name)
	}
	if err := check.Replay(tr); err != nil {
		return nil, fmt.Errorf("%w: %s: the model does not confirm it: %v", ErrTrace, path, err)
	}
	states, meta, err := readITFStates(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrTrace, path, err)
	}
	params, _ := meta["params"].(map[string]any)
	res = &Result{Trace: path, Version: opts.Version, Steps: len(states), Property: tr.Invariant}
	if step, why := unsupported(params, states); step >= 0 {
		res.Verdict, res.Step, res.Reason = NotExecutable, step+1, why
		if step > 0 {
			res.Action = states[step].action()
		}
		return res, nil
	}

	cp, err := Classpath(ctx, opts.Version)
	if err != nil {
		return nil, err
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "bkcheck-confirm-"); err != nil {
			return nil, err
		}
		defer func() {
			if res == nil || res.Verdict != Diverged {
				os.RemoveAll(dir)
			} else {
				res.Dir = dir
			}
		}()
	} else {
		if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
			return nil, fmt.Errorf("%w: --dir %s is not empty: a cluster starts from empty directories", ErrTrace, dir)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		res.Dir = dir
	}
	start := time.Now()
	progress("starting ZooKeeper and %d bookies of BookKeeper %s", toInt(params["bookies"]), opts.Version)
	r, err := newRun(ctx, cp, dir, params, opts)
	if err != nil {
		return nil, err
	}
	defer r.close()
	res.StartMS = time.Since(start).Milliseconds()
	start = time.Now()
	stop := func(i int, err error) (*Result, error) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var d *divergence
		if errors.As(err, &d) {
			res.Verdict, res.Step, res.Action = d.verdict, i+1, states[i].action()
			res.Reason, res.Model, res.BookKeeper = d.reason, d.model, d.bk
			res.RunMS = time.Since(start).Milliseconds()
			return res, nil
		}
		return nil, fmt.Errorf("step %d (%s): %w", i+1, states[i].action(), err)
	}
	// Java's sequence read sends a later replica's read only when the
	// earlier ones missed, and not at all once the entry is decided. A step
	// on such a read waits (with the steps that consume what it sends) and
	// the steps after it that do not depend on it go first: the same
	// behaviour up to the order of independent steps. A waiting step whose
	// read Java will never send is not taken in BookKeeper (Result.Skipped).
	// States are compared whenever no step waits.
	var deferred []int
	phantom := map[string]bool{} // messages of steps not taken in BookKeeper
	dependsOnDeferred := func(i int, before []int) bool {
		for _, d := range before {
			if d < i && feeds(states[d-1], states[d], states[i-1], states[i]) {
				return true
			}
		}
		return false
	}
	// settle takes every waiting step that can be taken now (all of them,
	// waiting for their frames, when final), and skips those BookKeeper
	// never takes.
	settle := func(final bool) (int, error) {
		for progressed := true; progressed; {
			progressed = false
			for j, d := range deferred {
				if dependsOnDeferred(d, deferred[:j]) {
					continue
				}
				prev, next := states[d-1], states[d]
				if consumesAny(prev, next, phantom) || r.neverSent(prev, next) {
					for _, m := range sentAt(prev, next) {
						phantom[m.key()] = true
					}
					res.Skipped = append(res.Skipped, fmt.Sprintf("step %d (%s): not taken in BookKeeper: its sequence read had decided the entry without this replica", d+1, next.action()))
					progress("step %d/%d: %s: not taken in BookKeeper (its sequence read decided without this replica)", d+1, len(states), next.action())
				} else {
					if !final && r.waits(prev, next) {
						continue
					}
					progress("step %d/%d: %s (taken after the steps that did not depend on it)", d+1, len(states), next.action())
					if err := r.step(ctx, prev, next); err != nil {
						return d, err
					}
				}
				deferred = append(deferred[:j], deferred[j+1:]...)
				progressed = true
				break
			}
		}
		return 0, nil
	}
	for i := 1; i < len(states); i++ {
		prev, next := states[i-1], states[i]
		r.loseLater()
		if r.waits(prev, next) || dependsOnDeferred(i, deferred) {
			deferred = append(deferred, i)
			continue
		}
		progress("step %d/%d: %s", i+1, len(states), next.action())
		if err := r.step(ctx, prev, next); err != nil {
			return stop(i, err)
		}
		if d, err := settle(false); err != nil {
			return stop(d, err)
		}
		if len(deferred) == 0 {
			if err := r.compare(ctx, next); err != nil {
				return stop(i, err)
			}
		}
	}
	if len(deferred) > 0 {
		if d, err := settle(true); err != nil {
			return stop(d, err)
		}
		if err := r.compare(ctx, states[len(states)-1]); err != nil {
			return stop(len(states)-1, err)
		}
	}
	res.RunMS = time.Since(start).Milliseconds()
	violated, evidence, err := r.property(ctx, tr.Invariant, states[len(states)-1])
	if err != nil {
		return nil, err
	}
	res.Evidence = evidence
	if violated {
		res.Verdict = Reproduced
	} else {
		res.Verdict = Agreed
	}
	return res, nil
}

// divergence ends a confirmation at a step.
type divergence struct {
	verdict, reason, model, bk string
}

func (d *divergence) Error() string { return d.reason }

func diverged(reason, model, bk string) error {
	return &divergence{verdict: Diverged, reason: reason, model: model, bk: bk}
}

func notExecutable(reason string) error { return &divergence{verdict: NotExecutable, reason: reason} }

// run is one cluster with its proxy and its Java driver.
type run struct {
	opts    Options
	cl      *cluster.Cluster
	px      *wire.Proxy
	drv     *driver
	params  map[string]any
	ledger  int64
	entries int
	// Requests the model sent that Java sends later (owed), and lost ones
	// Java may send later (lostLater), by message key.
	owed      map[string]bool
	lostLater map[string]message
	// decided: the model's entries whose recovery read Java has decided;
	// misses: the NoSuchEntry answers it has had for each.
	decided map[int]bool
	misses  map[int]int
	// answered: for each entry, the replicas whose recovery read Java has
	// had an answer (or a failure) from; owedAfter: for an owed read, the
	// replicas Java asks before it.
	answered  map[int]map[string]bool
	owedAfter map[string][]string
	// closedLast is the last entry of the ledger as BookKeeper closed it,
	// once an observation saw it closed (the metadata may be deleted later).
	closedLast *int64
}

func newRun(ctx context.Context, cp, dir string, params map[string]any, opts Options) (_ *run, err error) {
	r := &run{opts: opts, params: params, ledger: -1, entries: toInt(params["entries"]),
		owed: map[string]bool{}, lostLater: map[string]message{}, decided: map[int]bool{}, misses: map[int]int{},
		answered: map[int]map[string]bool{}, owedAfter: map[string][]string{}}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	r.cl, err = cluster.Start(ctx, cluster.Options{Classpath: cp, Bookies: toInt(params["bookies"]), Dir: dir})
	if err != nil {
		return nil, err
	}
	cmd, in, out, err := r.cl.Spawn(ctx, "the client driver", filepath.Join(dir, "driver.log"),
		[]string{"-Xmx256m", "-XX:MaxDirectMemorySize=128m"}, "bkcheck.bridge.Driver", r.cl.MetadataURI())
	if err != nil {
		return nil, err
	}
	r.drv = newDriver(cmd, in, out)
	if err := r.drv.call(ctx, nil, "init"); err != nil {
		return nil, err
	}
	if err := r.cl.StartBookies(ctx); err != nil {
		return nil, err
	}
	for _, b := range r.cl.Bookies() {
		if err := r.serving(ctx, b); err != nil {
			return nil, err
		}
	}
	r.px = wire.NewProxy()
	for c := 1; c <= toInt(params["clients"]); c++ {
		name := fmt.Sprintf("c%d", c)
		var ports []string
		for _, b := range r.cl.Bookies() {
			port, err := r.px.Listen(name, b.Name, b.ID())
			if err != nil {
				return nil, err
			}
			ports = append(ports, fmt.Sprintf("%s=%d", b.ID(), port))
		}
		if err := r.drv.call(ctx, nil, "client", name, strings.Join(ports, ",")); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// closeLedger has the writer close the ledger and lets each metadata write
// of the close through until the close completes: LedgerHandle's close is
// a MetadataUpdateLoop, which on a version conflict reads the metadata
// again and writes again unless the ledger is already closed. The model's
// close succeeds or fails in one step; ok says which.
func (r *run) closeLedger(ctx context.Context, client string, ok bool) error {
	if err := r.drv.call(ctx, nil, "close", client); err != nil {
		return err
	}
	writes := 0
	for {
		ev, err := r.awaitEvent(ctx, "close the ledger", func(e Event) bool {
			return e.Client == client && (e.Ev == "closed" || e.Ev == "meta-held")
		})
		if err != nil {
			return err
		}
		if ev.Ev == "meta-held" {
			writes++
			var out struct{ Released bool }
			if err := r.drv.call(ctx, &out, "release", client); err != nil {
				return err
			}
			continue
		}
		switch {
		case ok && ev.RC != 0:
			return diverged("the writer's close failed", "the writer closes the ledger", fmt.Sprintf("the close failed with rc %d after %d metadata writes", ev.RC, writes))
		case !ok && ev.RC == 0:
			return diverged("the writer's close succeeded", "the writer's close fails (the metadata changed since the writer read it)",
				fmt.Sprintf("the close succeeded after %d metadata writes: LedgerHandle's close (a MetadataUpdateLoop) read the metadata again on the version conflict and, the ledger not being closed, wrote it CLOSED over it", writes))
		}
		return nil
	}
}

// serving waits until the bookie answers requests, or fails with its log
// if its process exits first.
func (r *run) serving(ctx context.Context, b *cluster.Bookie) error {
	tctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for {
		var p struct {
			RC      int  `json:"rc"`
			Serving bool `json:"serving"`
		}
		if err := r.drv.call(tctx, &p, "probe", b.ID(), r.ledger); err != nil {
			return err
		}
		if p.Serving {
			return nil
		}
		if err := r.cl.Alive(b); err != nil {
			return err
		}
		select {
		case <-tctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("bookie %s did not serve within 90 s (last rc %d); its log is %s", b.Name, p.RC, b.Log())
		case <-time.After(25 * time.Millisecond): // polling for the bookie to serve, not deciding a step
		}
	}
}

func (r *run) close() {
	if r.drv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = r.drv.call(ctx, nil, "quit")
		cancel()
	}
	if r.px != nil {
		r.px.Close()
	}
	if r.cl != nil {
		r.cl.Close()
	}
}

func (r *run) bookieID(name string) string {
	if b := r.cl.Bookie(name); b != nil {
		return b.ID()
	}
	return name
}

func (r *run) bookieName(id string) string {
	for _, b := range r.cl.Bookies() {
		if b.ID() == id {
			return b.Name
		}
	}
	return id
}

func (r *run) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.opts.StepTimeout)
}

// awaitFrame waits for the held frame of a model message.
func (r *run) awaitFrame(ctx context.Context, what string, match func(*wire.Frame) bool) (*wire.Frame, error) {
	tctx, cancel := r.timeout(ctx)
	defer cancel()
	f, err := r.px.Await(tctx, match)
	if err != nil && ctx.Err() == nil {
		return nil, diverged("BookKeeper did not send "+what, what+" is sent", "no such frame within "+r.opts.StepTimeout.String()+"; frames held: "+r.heldList())
	}
	return f, err
}

func (r *run) heldList() string {
	var xs []string
	for _, f := range r.px.Held() {
		xs = append(xs, f.String())
	}
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, "; ")
}

func (r *run) awaitEvent(ctx context.Context, what string, match func(Event) bool) (Event, error) {
	tctx, cancel := r.timeout(ctx)
	defer cancel()
	e, err := r.drv.awaitEvent(tctx, match)
	if err != nil && ctx.Err() == nil {
		var got []string
		for _, p := range r.drv.pending() {
			got = append(got, p.String())
		}
		return e, diverged("the client did not "+what, what, fmt.Sprintf("nothing within %v; events unconsumed: %v", r.opts.StepTimeout, got))
	}
	return e, err
}

// releaseMeta lets the client's held metadata write of kind op proceed.
func (r *run) releaseMeta(ctx context.Context, client, op string) error {
	if _, err := r.awaitEvent(ctx, "write the ledger's metadata ("+op+")", func(e Event) bool {
		return e.Ev == "meta-held" && e.Client == client && e.Op == op
	}); err != nil {
		return err
	}
	var out struct{ Released bool }
	if err := r.drv.call(ctx, &out, "release", client); err != nil {
		return err
	}
	if !out.Released {
		return fmt.Errorf("%s had no metadata write held", client)
	}
	return nil
}

// javaEntry is the Java entry id of the model's entry e (the model counts
// from 1, BookKeeper from 0).
func javaEntry(e int) int64 { return int64(e - 1) }

func isRequest(t string) bool { return strings.HasSuffix(t, "RequestMessage") }

// frameOf says whether frame f carries the model's message m.
func frameOf(m message, f *wire.Frame) bool {
	if f.Client != m.Client || f.Bookie != m.Bookie {
		return false
	}
	if isRequest(m.Type) != (f.Dir == wire.Request) {
		return false
	}
	switch m.Type {
	case "AddEntryRequestMessage", "AddEntryResponseMessage":
		// A response's header carries no flags (ResponseEnDeCoderPreV3):
		// the client matches it by ledger, entry and opcode on its channel.
		recovery, _ := m.Fields["recovery"].(bool)
		return f.Op == wire.OpAdd && f.Entry == javaEntry(m.Entry) && (f.Dir == wire.Response || (f.Flags&wire.FlagRecoveryAdd != 0) == recovery)
	case "FenceRequestMessage", "FenceResponseMessage":
		return f.Op == wire.OpRead && f.Entry == -1
	case "ReadRequestMessage", "ReadResponseMessage":
		return f.Op == wire.OpRead && f.Entry == javaEntry(m.Entry)
	}
	return false
}

// steps answers whether a step's messages were sent: each new message in
// flight must appear as a frame (held for a later step); each lost one is
// dropped if BookKeeper sends it. A lost message BookKeeper does not send
// at all is allowed only where Java's client sends fewer messages than the
// model (sequenceRead); any other absence is a divergence.
func (r *run) expectSent(ctx context.Context, prev, next itfState) error {
	for _, m := range sentAt(prev, next) {
		m := m
		if m.Count < 0 {
			f := r.heldNow(func(f *wire.Frame) bool { return frameOf(m, f) })
			if f != nil {
				r.px.Drop(f)
			} else {
				f, err := r.awaitFrame(ctx, m.String(), func(f *wire.Frame) bool { return frameOf(m, f) })
				if err != nil {
					return err
				}
				r.px.Drop(f)
			}
			continue
		}
		if _, err := r.awaitFrame(ctx, m.String(), func(f *wire.Frame) bool { return frameOf(m, f) }); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) heldNow(match func(*wire.Frame) bool) *wire.Frame {
	for _, f := range r.px.Held() {
		if match(f) {
			return f
		}
	}
	return nil
}

// deliver delivers the held frame of the message of the given type between
// client and bookie that the step consumed (its count fell).
func (r *run) deliver(ctx context.Context, prev, next itfState, typ string) (*message, error) {
	m := consumed(prev, next, typ)
	if m == nil {
		return nil, fmt.Errorf("the trace's step consumes no %s", typ)
	}
	f, err := r.awaitFrame(ctx, m.String(), func(f *wire.Frame) bool { return frameOf(*m, f) })
	if err != nil {
		return nil, err
	}
	if err := r.px.Deliver(f); err != nil {
		return nil, diverged("the frame could not be delivered", m.String()+" delivered", err.Error())
	}
	return m, nil
}

// consumed returns the message of type typ whose count fell at this step.
func consumed(prev, next itfState, typ string) *message {
	after := map[string]int{}
	for _, m := range messages(next) {
		after[m.key()] = m.Count
	}
	for _, m := range messages(prev) {
		if m.Type == typ && m.Count > 0 && after[m.key()] < m.Count {
			m := m
			return &m
		}
	}
	return nil
}

// respond delivers the request the bookie handles at this step and checks
// the response BookKeeper's bookie sends against the model's.
func (r *run) respond(ctx context.Context, prev, next itfState, reqType, respType string, wantRC func(rc int, resp message) bool) error {
	req, err := r.deliver(ctx, prev, next, reqType)
	if err != nil {
		return err
	}
	var resp *message
	for _, m := range sentAt(prev, next) {
		if m.Type == respType && m.Client == req.Client && m.Bookie == req.Bookie {
			m := m
			resp = &m
		}
	}
	if resp == nil {
		return fmt.Errorf("the trace's step sends no %s", respType)
	}
	f, err := r.awaitFrame(ctx, resp.String(), func(f *wire.Frame) bool { return frameOf(*resp, f) })
	if err != nil {
		return err
	}
	if !wantRC(f.RC, *resp) {
		return diverged(fmt.Sprintf("bookie %s answered rc %d (%s)", req.Bookie, f.RC, rcName(f.RC)), resp.String(), f.String())
	}
	if resp.Count < 0 {
		r.px.Drop(f)
	}
	return nil
}

func rcName(rc int) string {
	switch rc {
	case wire.EOK:
		return "EOK"
	case wire.ENoLedger:
		return "ENOLEDGER"
	case wire.ENoEntry:
		return "ENOENTRY"
	case wire.EFenced:
		return "EFENCED"
	case wire.EReadOnly:
		return "EREADONLY"
	}
	return "rc " + strconv.Itoa(rc)
}

// step drives one step of the trace.
func (r *run) step(ctx context.Context, prev, next itfState) error {
	p := next.picks()
	client, _ := p["client"].(string)
	bookie, _ := p["bookie"].(string)
	switch a := next.action(); a {
	case "ClientCreatesLedger":
		frags, _ := next["meta_fragments"].([]any)
		if len(frags) != 1 {
			return fmt.Errorf("the created ledger has %d fragments", len(frags))
		}
		f, _ := frags[0].(map[string]any)
		var ids []string
		for _, b := range set(f["ensemble"]) {
			ids = append(ids, r.bookieID(b))
		}
		qw, qa := toInt(r.params["write-quorum"]), toInt(r.params["ack-quorum"])
		e := toInt(r.params["ensemble"])
		if err := r.drv.call(ctx, nil, "create", client, e, qw, qa, strings.Join(ids, ",")); err != nil {
			return err
		}
		if err := r.releaseMeta(ctx, client, "create"); err != nil {
			return err
		}
		ev, err := r.awaitEvent(ctx, "create the ledger", func(e Event) bool { return e.Ev == "created" && e.Client == client })
		if err != nil {
			return err
		}
		if ev.RC != 0 {
			return diverged("the ledger's creation failed", "the ledger is created", fmt.Sprintf("rc %d", ev.RC))
		}
		r.ledger = ev.Ledger
	case "ClientSendsAddEntryRequests":
		if err := r.drv.call(ctx, nil, "add", client); err != nil {
			return err
		}
		if err := r.expectSent(ctx, prev, next); err != nil {
			return err
		}
	case "BookieSendsAddConfirmedResponse":
		if err := r.respond(ctx, prev, next, "AddEntryRequestMessage", "AddEntryResponseMessage", func(rc int, _ message) bool { return rc == wire.EOK }); err != nil {
			return err
		}
	case "BookieSendsAddFencedResponse":
		if err := r.respond(ctx, prev, next, "AddEntryRequestMessage", "AddEntryResponseMessage", func(rc int, _ message) bool { return rc == wire.EFenced }); err != nil {
			return err
		}
	case "ClientReceivesAddConfirmedResponse", "ClientReceivesAddFencedResponse", "RecoveryClientReceivesAddConfirmedResponse":
		if _, err := r.deliver(ctx, prev, next, "AddEntryResponseMessage"); err != nil {
			return err
		}
	case "ClientStartsRecovery":
		if r.ledger < 0 {
			return notExecutable("recovery of a ledger BookKeeper has not created")
		}
		if err := r.drv.call(ctx, nil, "recover", client, r.ledger); err != nil {
			return err
		}
		if err := r.releaseMeta(ctx, client, "write"); err != nil {
			return err
		}
		if err := r.expectSent(ctx, prev, next); err != nil {
			return err
		}
	case "BookieSendsFencingReadLacResponse":
		// A fencing LAC read of a ledger the bookie has no entry of is
		// answered NoSuchEntry or NoSuchLedger; ReadLastConfirmedOp takes
		// both as "nothing written here".
		if err := r.respond(ctx, prev, next, "FenceRequestMessage", "FenceResponseMessage", func(rc int, _ message) bool {
			return rc == wire.EOK || rc == wire.ENoEntry || rc == wire.ENoLedger
		}); err != nil {
			return err
		}
	case "ClientReceivesFencingReadLacResponse":
		if _, err := r.deliver(ctx, prev, next, "FenceResponseMessage"); err != nil {
			return err
		}
	case "ClientSendsRecoveryReadRequests":
		if err := r.recoveryReads(ctx, prev, next, client); err != nil {
			return err
		}
	case "BookieSendsReadResponse":
		if err := r.respond(ctx, prev, next, "ReadRequestMessage", "ReadResponseMessage", func(rc int, m message) bool {
			code, _ := m.Fields["code"].(string)
			if code == "OK" {
				return rc == wire.EOK
			}
			return rc == wire.ENoEntry || rc == wire.ENoLedger
		}); err != nil {
			return err
		}
	case "ClientReceivesRecoveryReadResponse":
		m, err := r.deliver(ctx, prev, next, "ReadResponseMessage")
		if err != nil {
			return err
		}
		r.readAnswered(m)
	case "RecoveryClientClosesLedger":
		if err := r.releaseMeta(ctx, client, "write"); err != nil {
			return err
		}
		ev, err := r.awaitEvent(ctx, "complete its recovery", func(e Event) bool { return e.Ev == "recovered" && e.Client == client })
		if err != nil {
			return err
		}
		if ev.RC != 0 {
			return diverged("the recovery failed", "the recovery client closes the ledger", fmt.Sprintf("rc %d", ev.RC))
		}
	case "ClientClosesLedgerSuccess", "ClientClosesLedgerFail":
		if err := r.closeLedger(ctx, client, a == "ClientClosesLedgerSuccess"); err != nil {
			return err
		}
	case "BookieCrashes":
		if err := r.cl.Crash(r.cl.Bookie(bookie)); err != nil {
			return err
		}
	case "BookieRestarts":
		b := r.cl.Bookie(bookie)
		if err := r.cl.Restart(ctx, b); err != nil {
			return err
		}
		if err := r.serving(ctx, b); err != nil {
			return err
		}
	case "ClientWritesBackEntry":
		// LedgerRecoveryOp writes an entry it read back at once
		// (asyncRecoveryAddEntry: adds with FLAG_RECOVERY_ADD to the entry's
		// write set); the frames wait at the proxy for this step.
		if err := r.expectSent(ctx, prev, next); err != nil {
			return err
		}
	case "ClientDeletesLedger":
		if err := r.drv.call(ctx, nil, "delete", client, r.ledger); err != nil {
			return err
		}
		if err := r.releaseMeta(ctx, client, "remove"); err != nil {
			return err
		}
		if _, err := r.awaitEvent(ctx, "delete the ledger", func(e Event) bool { return e.Ev == "deleted" && e.Client == client && e.RC == 0 }); err != nil {
			return err
		}
	case "BookieCollectsLedger":
		if err := r.cl.CollectGarbage(ctx, r.cl.Bookie(bookie)); err != nil {
			return err
		}
	case "BookieRejoinsEmpty":
		b := r.cl.Bookie(bookie)
		keep, _ := r.params["reformat-cookie"].(string)
		if err := r.cl.Reformat(ctx, b, keep != "kept"); err != nil {
			return err
		}
		if err := r.serving(ctx, b); err != nil {
			return err
		}
	default:
		return notExecutable("the harness has no mapping for " + a)
	}
	return nil
}

// feeds says whether step a (from aPrev to aNext) sends a message that step
// b consumes.
func feeds(aPrev, aNext, bPrev, bNext itfState) bool {
	used := map[string]bool{}
	after := map[string]int{}
	for _, m := range messages(bNext) {
		after[m.key()] = m.Count
	}
	for _, m := range messages(bPrev) {
		if m.Count > 0 && after[m.key()] < m.Count {
			used[m.key()] = true
		}
	}
	for _, m := range sentAt(aPrev, aNext) {
		if used[m.key()] {
			return true
		}
	}
	return false
}

// waits says whether a step must wait for a read Java has not sent yet:
// a later replica's read (owed), which Java sends only once every replica
// before it in the write set has answered without deciding the entry.
func (r *run) waits(prev, next itfState) bool {
	if next.action() != "BookieSendsReadResponse" {
		return false
	}
	m := consumed(prev, next, "ReadRequestMessage")
	if m == nil || !r.owed[m.key()] || r.heldNow(func(f *wire.Frame) bool { return frameOf(*m, f) }) != nil {
		return false
	}
	if r.decided[m.Entry] {
		return true // never sent: settle skips the step
	}
	for _, b := range r.owedAfter[m.key()] {
		if !r.answered[m.Entry][b] {
			return true
		}
	}
	return false // Java sends it now: the step awaits its frame
}

// neverSent says whether the step handles a read Java's sequence read
// will not send: a later replica's read of an entry Java has decided
// (PendingReadOp: the entry read, or NoSuchEntry from Qw − Qa + 1
// replicas).
func (r *run) neverSent(prev, next itfState) bool {
	if next.action() != "BookieSendsReadResponse" {
		return false
	}
	m := consumed(prev, next, "ReadRequestMessage")
	return m != nil && r.owed[m.key()] && r.decided[m.Entry] && r.heldNow(func(f *wire.Frame) bool { return frameOf(*m, f) }) == nil
}

// consumesAny says whether the step consumes one of the messages keyed.
func consumesAny(prev, next itfState, keys map[string]bool) bool {
	after := map[string]int{}
	for _, m := range messages(next) {
		after[m.key()] = m.Count
	}
	for _, m := range messages(prev) {
		if m.Count > 0 && after[m.key()] < m.Count && keys[m.key()] {
			return true
		}
	}
	return false
}

// readAnswered counts a recovery read response delivered to Java's client
// toward its decision on the entry.
func (r *run) readAnswered(m *message) {
	r.answer(m.Entry, m.Bookie)
	if code, _ := m.Fields["code"].(string); code == "OK" {
		r.decided[m.Entry] = true
		return
	}
	r.misses[m.Entry]++
	if r.misses[m.Entry] >= toInt(r.params["write-quorum"])-toInt(r.params["ack-quorum"])+1 {
		r.decided[m.Entry] = true
	}
}

func (r *run) answer(entry int, bookie string) {
	if r.answered[entry] == nil {
		r.answered[entry] = map[string]bool{}
	}
	r.answered[entry][bookie] = true
}

// loseLater loses a request the model lost but Java sends only later (a
// later replica of a sequence read), once Java has sent it.
func (r *run) loseLater() {
	for k, m := range r.lostLater {
		m := m
		if f := r.heldNow(func(f *wire.Frame) bool { return frameOf(m, f) }); f != nil {
			r.px.Drop(f)
			r.px.CloseLink(m.Client, m.Bookie)
			r.answer(m.Entry, m.Bookie)
			delete(r.lostLater, k)
		}
	}
}

// recoveryReads maps the model's recovery reads of one entry, sent to
// every replica at once, onto Java's sequence read
// (enableParallelRecoveryRead=false: PendingReadOp's SequenceReadRequest),
// which asks the replicas one at a time in write-set order and the next
// only when the previous one failed or missed. The first replica the model
// does not lose is read now; later ones are owed (their steps wait until
// Java sends them). A lost read that Java sends now is dropped and its
// connection closed, so that the client fails it at once and moves on, as
// a timeout would make it later; a lost read Java would send later is lost
// when it does.
func (r *run) recoveryReads(ctx context.Context, prev, next itfState, client string) error {
	byBookie := map[string]message{}
	entry := 0
	for _, m := range sentAt(prev, next) {
		if m.Type == "ReadRequestMessage" && m.Client == client {
			byBookie[m.Bookie] = m
			entry = m.Entry
		}
	}
	order, err := r.writeSet(ctx, entry)
	if err != nil {
		return err
	}
	first := true
	var before []string
	for _, b := range order {
		m, ok := byBookie[b]
		if !ok {
			continue
		}
		switch {
		case m.Count < 0 && first:
			f, err := r.awaitFrame(ctx, m.String(), func(f *wire.Frame) bool { return frameOf(m, f) })
			if err != nil {
				return err
			}
			r.px.Drop(f)
			r.px.CloseLink(m.Client, m.Bookie)
			r.answer(m.Entry, m.Bookie)
		case m.Count < 0:
			r.lostLater[m.key()] = m
		case first:
			if _, err := r.awaitFrame(ctx, m.String(), func(f *wire.Frame) bool { return frameOf(m, f) }); err != nil {
				return err
			}
			first = false
		default:
			r.owed[m.key()] = true
			r.owedAfter[m.key()] = append([]string(nil), before...)
		}
		before = append(before, b)
	}
	return nil
}

// writeSet is the bookies of the model's entry e in Java's order: the
// positions of the ensemble that holds it, starting at e mod E
// (RoundRobinDistributionSchedule), with the ensemble as the metadata
// lists it.
func (r *run) writeSet(ctx context.Context, e int) ([]string, error) {
	var o observation
	if err := r.drv.call(ctx, &o, "observe", r.ledger, 0); err != nil {
		return nil, err
	}
	var ens []string
	for _, f := range o.Meta.Ensembles {
		if f.First <= javaEntry(e) {
			ens = f.Bookies
		}
	}
	qw := toInt(r.params["write-quorum"])
	var out []string
	for i := 0; i < qw && len(ens) > 0; i++ {
		out = append(out, r.bookieName(ens[(int(javaEntry(e))+i)%len(ens)]))
	}
	return out, nil
}

// observation is what BookKeeper shows (the driver's observe).
type observation struct {
	Bookies map[string][]int `json:"bookies"`
	Meta    struct {
		State     string `json:"state"`
		LastEntry int64  `json:"lastEntry"`
		Ensembles []struct {
			First   int64    `json:"first"`
			Bookies []string `json:"bookies"`
		} `json:"ensembles"`
	} `json:"meta"`
	Clients map[string]struct {
		Phase string  `json:"phase"`
		LAC   *int64  `json:"lac"`
		Acked []int64 `json:"acked"`
	} `json:"clients"`
}

// compare polls what BookKeeper shows until it matches the model's state
// or the step's time runs out. Polling waits for an event (a callback
// processed on the client's threads); it decides nothing by the clock.
func (r *run) compare(ctx context.Context, want itfState) error {
	tctx, cancel := r.timeout(ctx)
	defer cancel()
	var last []string
	for {
		got, err := r.observe(tctx, want)
		if err == nil {
			last = r.differences(want, got)
			if len(last) == 0 {
				return nil
			}
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case <-tctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				return err
			}
			var m, b []string
			for _, d := range last {
				parts := strings.SplitN(d, "\x00", 3)
				m = append(m, parts[0]+": "+parts[1])
				b = append(b, parts[0]+": "+parts[2])
			}
			return diverged("BookKeeper's state differs from the model's: "+strings.Join(m, "; "), strings.Join(m, "; "), strings.Join(b, "; "))
		case <-time.After(25 * time.Millisecond):
		}
	}
}

func (r *run) observe(ctx context.Context, want itfState) (*observation, error) {
	var ids []string
	down := set(want["b_down"])
	for _, b := range r.cl.Bookies() {
		if !contains(down, b.Name) {
			ids = append(ids, b.ID())
		}
	}
	var o observation
	if r.ledger < 0 {
		return &o, nil
	}
	args := []any{r.ledger, r.entries}
	if len(ids) > 0 {
		args = append(args, strings.Join(ids, ","))
	}
	if err := r.drv.call(ctx, &o, "observe", args...); err != nil {
		return nil, err
	}
	if o.Meta.State == "CLOSED" {
		last := o.Meta.LastEntry
		r.closedLast = &last
	}
	return &o, nil
}

// differences lists, as "what\x00model\x00bookkeeper", where BookKeeper's
// observation differs from the model's state.
func (r *run) differences(want itfState, got *observation) []string {
	var out []string
	add := func(what, m, b string) {
		if m != b {
			out = append(out, what+"\x00"+m+"\x00"+b)
		}
	}
	if r.ledger < 0 {
		return nil
	}
	// Bookies: which entries each running bookie serves.
	entries := mapOf(want["b_entries"])
	for _, b := range r.cl.Bookies() {
		rcs, ok := got.Bookies[b.ID()]
		if !ok {
			continue
		}
		var m, k []string
		has := set(entries[b.Name])
		for e := 1; e <= r.entries; e++ {
			if contains(has, strconv.Itoa(e)) {
				m = append(m, "e"+strconv.Itoa(e))
			}
			if e-1 < len(rcs) && rcs[e-1] == 0 {
				k = append(k, "e"+strconv.Itoa(e))
			}
		}
		add("entries served by "+b.Name, "{"+strings.Join(m, ",")+"}", "{"+strings.Join(k, ",")+"}")
	}
	// Metadata.
	status := map[string]string{"Nil": "", "STATUS_OPEN": "OPEN", "STATUS_IN_RECOVERY": "IN_RECOVERY", "STATUS_CLOSED": "CLOSED"}[want.str("meta_status")]
	if deleted, _ := want["meta_deleted"].(bool); deleted {
		status = "" // the metadata is gone
	}
	add("ledger state", orNone(status), orNone(got.Meta.State))
	if status == "CLOSED" && got.Meta.State == "CLOSED" {
		last := func(n int64) string { return fmt.Sprintf("%d (Java entry id %d)", n, n-1) }
		add("ledger's last entry", last(int64(want.num("meta_last_entry"))), last(got.Meta.LastEntry+1))
	}
	if status != "" {
		frags, _ := want["meta_fragments"].([]any)
		var m, k []string
		for _, f := range frags {
			fm, _ := f.(map[string]any)
			m = append(m, fmt.Sprintf("e%d:{%s}", toInt(fm["first_entry_id"]), strings.Join(set(fm["ensemble"]), ",")))
		}
		for _, e := range got.Meta.Ensembles {
			var names []string
			for _, id := range e.Bookies {
				names = append(names, r.bookieName(id))
			}
			sort.Strings(names)
			k = append(k, fmt.Sprintf("e%d:{%s}", e.First+1, strings.Join(names, ",")))
		}
		add("ensembles", strings.Join(m, " "), strings.Join(k, " "))
	}
	// Writers: the LAC of each open writer.
	clients := mapOf(want["clients"])
	for name, cv := range clients {
		c, _ := cv.(map[string]any)
		jc, ok := got.Clients[name]
		if !ok || c["status"] != "STATUS_OPEN" || jc.LAC == nil {
			continue
		}
		add(name+"'s LAC", strconv.Itoa(toInt(c["lac"])), strconv.FormatInt(*jc.LAC+1, 10))
	}
	sort.Strings(out)
	return out
}

func orNone(s string) string {
	if s == "" {
		return "no ledger"
	}
	return s
}

// property answers whether BookKeeper itself violates the trace's
// property in the end. For the properties about acknowledged entries, the
// evidence is what a reader that arrives afterwards sees: the closed
// ledger's last entry and a read of each entry, against what each writer
// was told was acknowledged.
func (r *run) property(ctx context.Context, invariant string, last itfState) (bool, string, error) {
	o, err := r.observe(ctx, last)
	if err != nil {
		return false, "", err
	}
	var acked []int64
	var who []string
	for name, c := range o.Clients {
		for _, e := range c.Acked {
			acked = append(acked, e)
			who = append(who, fmt.Sprintf("%s: entry %d acknowledged", name, e))
		}
	}
	sort.Strings(who)
	if o.Meta.State == "" && r.closedLast != nil {
		var lost []string
		for _, e := range acked {
			if e > *r.closedLast {
				lost = append(lost, fmt.Sprintf("entry %d is beyond the last entry %d the ledger was closed at", e, *r.closedLast))
			}
		}
		evidence := fmt.Sprintf("%s; the ledger was closed at last entry %d and its metadata deleted", strings.Join(who, ", "), *r.closedLast)
		if len(lost) > 0 {
			return true, evidence + ": " + strings.Join(lost, "; "), nil
		}
		return false, evidence, nil
	}
	if o.Meta.State != "CLOSED" {
		return false, fmt.Sprintf("the ledger is %s; %s", orNone(o.Meta.State), strings.Join(who, ", ")), nil
	}
	var rd struct {
		LastEntry int64 `json:"lastEntry"`
		Reads     []int `json:"reads"`
	}
	if err := r.drv.call(ctx, &rd, "read-closed", r.ledger); err != nil {
		return false, "", err
	}
	var lost []string
	for _, e := range acked {
		switch {
		case e > rd.LastEntry:
			lost = append(lost, fmt.Sprintf("entry %d is beyond the closed ledger's last entry %d", e, rd.LastEntry))
		case rd.Reads[e] != 0:
			lost = append(lost, fmt.Sprintf("entry %d cannot be read (rc %d)", e, rd.Reads[e]))
		}
	}
	evidence := fmt.Sprintf("%s; a fresh reader opens the closed ledger (last entry %d)", strings.Join(who, ", "), rd.LastEntry)
	if len(lost) > 0 {
		return true, evidence + ": " + strings.Join(lost, "; "), nil
	}
	return false, evidence + ": every acknowledged entry is there", nil
}

// releaseVariants are the model's variants that are the behaviour of
// BookKeeper releases rather than proposed changes: a trace of one runs on
// any release, and says whether that release behaves as the variant
// (REPRODUCED) or as the fix (DIVERGED where the fix acts).
var releaseVariants = map[string]string{
	"no-recovery-fence":    "releases up to 4.13.x: recovery reads do not fence (apache/bookkeeper#2614, fixed by PR #2616 in 4.14.0)",
	"no-lac-floor":         "releases up to 4.13.x: recovery starts from the fenced LAC even below the last fragment (apache/bookkeeper#2615, fixed by PR #2654 in 4.14.0)",
	"delete-forgets-fence": "releases before 4.16.7, 4.17.2 and 4.18.0: a bookie that deleted a fenced ledger forgets the fence (apache/bookkeeper PR #4462)",
	"corrupt-read-nosuch":  "releases before 4.14.6, 4.15.1 and 4.16.0: a corrupt entry read answers NoSuchEntry (apache/bookkeeper#2908, fixed by PR #2909)",
	"split-add-check":      "releases up to 4.17.3: a bookie checks the fence and stores an add under two handles (apache/bookkeeper PR #4701, in 4.17.4 and 4.18.0)",
}

// undriven says why the harness does not drive an action of the model that
// it has no mapping for, where there is more to say than that.
var undriven = map[string]string{
	"BookieFailsRead":    "a read of a corrupt entry log: the harness does not corrupt a bookie's files",
	"BookieChecksAdd":    "the fence check and the store of one add on two of a bookie's threads: a race inside a bookie's process, which the harness does not control (it controls messages, crashes and flushes)",
	"BookieSyncsJournal": "a journal flush as its own step: with journalSyncData=true (the harness's setting) the bookie acknowledges after fsync, so there is no such step",
}

// supported is the set of model actions the harness drives.
var supported = map[string]bool{
	"ClientCreatesLedger": true, "ClientSendsAddEntryRequests": true,
	"BookieSendsAddConfirmedResponse": true, "BookieSendsAddFencedResponse": true,
	"ClientReceivesAddConfirmedResponse": true, "ClientReceivesAddFencedResponse": true,
	"ClientStartsRecovery": true, "BookieSendsFencingReadLacResponse": true,
	"ClientReceivesFencingReadLacResponse": true, "ClientSendsRecoveryReadRequests": true,
	"BookieSendsReadResponse": true, "ClientReceivesRecoveryReadResponse": true,
	"RecoveryClientClosesLedger": true, "ClientClosesLedgerSuccess": true,
	"BookieCrashes": true, "BookieRestarts": true, "BookieRejoinsEmpty": true,
	"ClientDeletesLedger": true, "BookieCollectsLedger": true, "ClientClosesLedgerFail": true, "ClientWritesBackEntry": true,
	"RecoveryClientReceivesAddConfirmedResponse": true,
}

// unsupported returns the index of the first state the harness cannot
// drive and why (-1 when it can drive all): settings first (state 0), then
// actions.
func unsupported(params map[string]any, states []itfState) (int, string) {
	var why []string
	if v, _ := params["variant"].(string); v != "" && v != "reference" && releaseVariants[v] == "" {
		why = append(why, "--variant "+v+" (a protocol change no release of BookKeeper has; the harness runs releases)")
	}
	if v, _ := params["add-path"].(string); v == "java" {
		why = append(why, "--add-path java (not mapped yet: its steps are the Java client's own per-op steps)")
	}
	if v, _ := params["journal"].(string); v != "" && v != "synced" {
		why = append(why, "--journal "+v+" (journalSyncData=false and journalWriteData=false lose data only on power loss, which kill -9 is not)")
	}
	if toInt(params["ensemble"]) != toInt(params["write-quorum"]) {
		why = append(why, "-e > -w (striping is not mapped yet)")
	}
	if len(why) > 0 {
		return 0, "the trace's settings: " + strings.Join(why, "; ")
	}
	for i := 1; i < len(states); i++ {
		if a := states[i].action(); !supported[a] {
			if why := undriven[a]; why != "" {
				return i, a + " is " + why
			}
			return i, "the harness has no mapping for " + a + " yet"
		}
	}
	return -1, ""
}
