package bridge

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/bridge/cluster"
	"github.com/bkcheck/bkcheck/bridge/wire"
	"github.com/bkcheck/bkcheck/record"
	"github.com/bkcheck/bkcheck/spec"
)

// The recorder: unmodified BookKeeper under a seeded random environment,
// written down as a record (package record) for bkcheck validate.
//
// The environment is the only thing the recorder decides: which held frame
// goes next (the oldest of a connection and direction, as TCP delivers), a
// call of the workload, the release of a held metadata write, a timeout of
// a client's oldest outstanding write (the clock of BookieClientImpl's
// timeout monitor), kill -9 of a bookie and its restart. BookKeeper's
// client decides everything else: its placement, its retries, its
// ensemble changes, its recovery.
//
// Settling. Each group of a record is one decision and every observable
// event it caused, so after each decision the recorder waits until the
// system has nothing left to do on its own. It never sleeps for that: it
// awaits an account of the work, kept by both sides.
//
//   - Java reports every request a client hands its bookie client (event
//     req: op, bookie, ledger, entry) before the bookie client sends it,
//     and every request's completion (done, with rc) after its callback
//     returned (SteeredBookKeeper.onRequest, onDone). Every request ends
//     as a frame the proxy catches or as a completion (its connection
//     refused or closed), so the recorder awaits, for each request
//     reported, one of the two.
//   - A bookie answers every request it is delivered (a v2 add or read
//     always has a response), so after delivering a request the recorder
//     awaits its response frame, unless the bookie is down.
//   - After delivering a response, the recorder awaits the request's
//     completion (done): the callback ran on the client's ordered thread.
//   - The driver's settle drains every executor the client's work goes
//     through (a marker task on every thread of the ordered worker pool,
//     the scheduler, the high-priority executor, the netty event loops)
//     and waits for every metadata operation in flight (the
//     HeldLedgerManager counts reads, which pass through, and released
//     writes until their continuations ran), round after round until a
//     round saw no event and no metadata completion. A task chain that
//     hops between executors does so, in the client, at an observable
//     point (a request handed to netty is a req event, a response handed
//     to the worker pool a done event), which a round counts; within the
//     ordered pool a ledger's tasks are FIFO on one thread.
//
// The group is closed when a settle round was quiet and no account is
// open; what is left then waits for the environment. Timers of the client
// never decide anything: its add and read timeouts are an hour, its
// speculative reads armed and never fired (the recorder does not fire
// them). A wait is bounded (Wait, 20 s by default): a
// bound on failure, after which the record is abandoned, never written in
// part.
//
// What the settle does not account for: ZooKeeper's notifications to the
// clients' bookie watchers (which bookies are writable), which matter to a
// replacement when a bookie crashes with spares to choose from; the
// recorder does not await them.

// RecordOptions say what to record.
type RecordOptions struct {
	Release string // bookkeeper-server release (spec.DefaultRelease if empty)
	// The cluster and the ledger: bookies, E, Qw, Qa.
	Bookies, Ensemble, WriteQuorum, AckQuorum int
	// The workload: entries c1 adds, at most Inflight unacknowledged.
	Entries, Inflight int
	// Fault budgets of one record: kill -9 of a bookie (each may restart),
	// and add timeouts by the clock.
	Crashes, Timeouts int
	// Delete lets a client that closed the ledger delete it, and the
	// bookies garbage-collect it (a forced collection, as confirm's
	// BookieCollectsLedger).
	Delete bool
	// Seed of the first record; record i has Seed+i.
	Seed int64
	Runs int
	// Records, if not 0, ends the runs once that many records are
	// written: Runs is then the bound on runs, abandoned ones included.
	Records int
	// Out is the directory the records are written to.
	Out string
	// Dir keeps the cluster's data and logs (empty: a temporary directory,
	// removed afterwards).
	Dir string
	// Wait bounds every wait for BookKeeper (0: 20 s).
	Wait time.Duration
	// MaxSteps bounds the decisions of one record (0: 400).
	MaxSteps int
	// Steer, if not nil, is asked before each record for the model's
	// actions no valid record has taken yet: decisions that can lead to
	// them are made more likely (steers).
	Steer func() map[string]bool
	// Recorded, if not nil, is told of each record written (before the
	// next run: a caller that validates it can steer the next).
	Recorded func(path string)
	// Abandoned, if not nil, is told of a run that could not be recorded
	// whole, and the runs go on; nil: the first such run ends them all.
	Abandoned func(seed int64, err error)
	// Log, if not nil, is told about progress.
	Log func(format string, args ...any)
}

func (o *RecordOptions) defaults() {
	if o.Release == "" {
		o.Release = spec.DefaultRelease
	}
	if o.Ensemble == 0 {
		o.Ensemble = o.WriteQuorum
	}
	if o.Inflight == 0 {
		o.Inflight = 1
	}
	if o.Wait == 0 {
		o.Wait = 20 * time.Second
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = 400
	}
	if o.Runs == 0 {
		o.Runs = 1
	}
}

// Params are the model's settings of the records: the model of the
// release that ran, its cluster, ledger, workload and fault budgets.
func (o RecordOptions) Params() (spec.Params, []byte, error) {
	o.defaults()
	p := spec.Params{BookKeeper: o.Release, Bookies: o.Bookies, Clients: 2, Ensemble: o.Ensemble,
		WriteQuorum: o.WriteQuorum, AckQuorum: o.AckQuorum, Entries: o.Entries, Inflight: o.Inflight,
		Crashes: o.Crashes, DeleteLedger: o.Delete}
	p.EnsureDefaults()
	if err := p.Validate(); err != nil {
		return p, nil, err
	}
	b, err := spec.ParamsSchema.EncodeJSON(&p)
	return p, b, err
}

// RecordRuns records opts.Runs runs, with seeds Seed, Seed+1, ..., on one
// cluster, each into Out as record-SEED.jsonl, and returns their paths.
// Every process it starts is reaped on every exit path.
func RecordRuns(ctx context.Context, opts RecordOptions) ([]string, error) {
	opts.defaults()
	if _, _, err := opts.Params(); err != nil {
		return nil, fmt.Errorf("the model has no such settings: %w", err)
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, err
	}
	rec, err := StartRecorder(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	var paths []string
	for i := 0; i < opts.Runs && (opts.Records == 0 || len(paths) < opts.Records); i++ {
		seed := opts.Seed + int64(i)
		r, err := rec.Record(ctx, seed)
		if err != nil && ctx.Err() == nil && opts.Abandoned != nil {
			// The run could not be recorded whole (BookKeeper did not
			// settle in time, a process died): no file, and the next
			// seed runs on the same cluster.
			opts.Abandoned(seed, err)
			continue
		}
		if err != nil {
			return paths, fmt.Errorf("seed %d: %w", seed, err)
		}
		path := filepath.Join(opts.Out, fmt.Sprintf("record-%d.jsonl", seed))
		if err := r.WriteFile(path); err != nil {
			return paths, err
		}
		paths = append(paths, path)
		if opts.Recorded != nil {
			opts.Recorded(path)
		}
	}
	return paths, nil
}

// Recorder is a cluster that records runs, one after the other: each run
// has its own ledger, its own client driver (a fresh JVM, so no client
// state carries over) and its own proxy; the bookies stay, and a bookie
// the previous run left down is restarted before the next.
type Recorder struct {
	opts    RecordOptions
	cp, dir string
	tmp     bool
	cl      *cluster.Cluster
	// r holds the cluster for the helpers of run (serving, close).
	r *run
}

// StartRecorder builds the harness, starts ZooKeeper and the bookies.
func StartRecorder(ctx context.Context, opts RecordOptions) (_ *Recorder, err error) {
	opts.defaults()
	cp, err := Classpath(ctx, opts.Release, opts.Log)
	if err != nil {
		return nil, err
	}
	rec := &Recorder{opts: opts, cp: cp, dir: opts.Dir}
	if rec.dir == "" {
		if rec.dir, err = os.MkdirTemp("", "bkcheck-record-"); err != nil {
			return nil, err
		}
		rec.tmp = true
	}
	defer func() {
		if err != nil {
			rec.Close()
		}
	}()
	rec.cl, err = cluster.Start(ctx, cluster.Options{Classpath: cp, Bookies: opts.Bookies, Dir: rec.dir})
	if err != nil {
		return nil, err
	}
	rec.r = newState(nil, map[string]any{}, Options{StepTimeout: opts.Wait})
	rec.r.cl = rec.cl
	// The serving probe (run.serving) reads a ledger no run creates.
	// Ledger 0 is the first run's, which --delete-ledger deletes and
	// collects: a read of it then fails with an I/O error ("Missing
	// entryLog") until the bookie's next checkpoint applies the deletion
	// to its index, which these bookies do not take (flushInterval a
	// day), so a restarted bookie would never look serving.
	rec.r.ledger = probeLedger
	drv, err := rec.spawnDriver(ctx, "driver-init.log")
	if err != nil {
		return nil, err
	}
	rec.r.drv = drv
	if err := drv.call(ctx, nil, "init"); err != nil {
		return nil, err
	}
	if err := rec.cl.StartBookies(ctx); err != nil {
		return nil, err
	}
	for _, b := range rec.cl.Bookies() {
		if err := rec.r.serving(ctx, b); err != nil {
			return nil, err
		}
	}
	quit(drv)
	rec.r.drv = nil
	return rec, nil
}

func (rec *Recorder) spawnDriver(ctx context.Context, log string) (*driver, error) {
	cmd, in, out, err := rec.cl.Spawn(ctx, "the client driver", filepath.Join(rec.dir, log),
		[]string{"-Xmx256m", "-XX:MaxDirectMemorySize=128m"}, "bkcheck.bridge.Driver", rec.cl.MetadataURI(), rec.maxEnsembleChanges())
	if err != nil {
		return nil, err
	}
	return newDriver(cmd, in, out), nil
}

// maxEnsembleChanges is the driver's maxNumEnsembleChanges: the model's
// bound for the recorded settings.
func (rec *Recorder) maxEnsembleChanges() string {
	p, _, _ := rec.opts.Params()
	return strconv.Itoa(p.MaxEnsembleChanges)
}

func quit(d *driver) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = d.call(ctx, nil, "quit")
	_ = d.in.Close()
}

// Close stops every process and removes a temporary directory.
func (rec *Recorder) Close() {
	if rec.r != nil {
		rec.r.close()
	} else if rec.cl != nil {
		rec.cl.Close()
	}
	if rec.tmp {
		_ = os.RemoveAll(rec.dir)
	}
}

// awaitRegistered waits until every bookie is registered as writable
// (polling ZooKeeper's registrations, bounded by Wait).
func (rec *Recorder) awaitRegistered(ctx context.Context) error {
	tctx, cancel := context.WithTimeout(ctx, rec.opts.Wait)
	defer cancel()
	var missing []string
	_, ok, err := rec.r.awaitWritable(ctx, tctx, func(ids []string) bool {
		missing = missing[:0]
		for _, b := range rec.cl.Bookies() {
			if !slices.Contains(ids, b.ID()) {
				missing = append(missing, b.Name)
			}
		}
		return len(missing) == 0
	})
	if err != nil || ok {
		return err
	}
	return fmt.Errorf("bookies %v not registered as writable within %v", missing, rec.opts.Wait)
}

// Record records one run with the given seed.
func (rec *Recorder) Record(ctx context.Context, seed int64) (*record.Record, error) {
	_, params, err := rec.opts.Params()
	if err != nil {
		return nil, err
	}
	drv, err := rec.spawnDriver(ctx, fmt.Sprintf("driver-%d.log", seed))
	if err != nil {
		return nil, err
	}
	px := wire.NewProxy()
	rec.r.drv, rec.r.px = drv, px
	defer func() {
		quit(drv)
		px.Close()
		rec.r.drv, rec.r.px = nil, nil
	}()
	// Every bookie up, as the model starts (a bookie an abandoned run
	// left down is restarted; the new driver probes that it serves).
	for _, b := range rec.cl.Bookies() {
		if rec.cl.Alive(b) != nil {
			if err := rec.cl.Restart(ctx, b); err != nil {
				return nil, err
			}
			if err := rec.r.serving(ctx, b); err != nil {
				return nil, err
			}
		}
	}
	// And every bookie registered as writable, as the model's clients see
	// every bookie that is up: a bookie serves before its registration is
	// in ZooKeeper, and a creation that ran in between failed for want of
	// bookies (the record bookies-4.18.2-create-fails-seed2023).
	if err := rec.awaitRegistered(ctx); err != nil {
		return nil, err
	}
	s := &session{rec: rec, drv: drv, px: px, rng: rand.New(rand.NewSource(seed)), ledger: -1,
		names: map[string]string{}, ids: map[string]string{}, seen: map[int]bool{},
		held: map[string][]string{}, crashed: map[string]bool{}, registered: map[string]bool{}, clients: map[string]*clientState{},
		timeoutsLeft: rec.opts.Timeouts, crashesLeft: rec.opts.Crashes, collected: map[string]bool{}}
	for _, b := range rec.cl.Bookies() {
		s.ids[b.ID()] = b.Name
	}
	if err := drv.call(ctx, nil, "accounting"); err != nil {
		return nil, err
	}
	for _, c := range []string{"c1", "c2"} {
		var ports []string
		for _, b := range rec.cl.Bookies() {
			port, err := px.Listen(c, b.Name, b.ID())
			if err != nil {
				return nil, err
			}
			ports = append(ports, fmt.Sprintf("%s=%d", b.ID(), port))
		}
		if err := drv.call(ctx, nil, "client", c, strings.Join(ports, ",")); err != nil {
			return nil, err
		}
		s.clients[c] = &clientState{}
	}
	// What the workload will do, drawn first: whether c1 closes, whether
	// c2 recovers.
	s.willClose = s.rng.Intn(4) != 0
	s.willRecover = s.rng.Intn(3) != 0
	r := &record.Record{Header: record.Header{Format: record.Format, Model: "current", Params: params,
		Source: record.Bookies, Release: rec.opts.Release, Seed: seed, Steering: "random-environment/1",
		Workload: fmt.Sprintf("c1 creates, adds %d entries (at most %d in flight)%s; c2 %s",
			rec.opts.Entries, rec.opts.Inflight, map[bool]string{true: " and closes", false: ""}[s.willClose],
			map[bool]string{true: "opens the ledger with recovery at a random point", false: "does nothing"}[s.willRecover])}}
	for step := 0; ; step++ {
		if step > rec.opts.MaxSteps {
			return nil, fmt.Errorf("more than %d decisions", rec.opts.MaxSteps)
		}
		ds := s.decisions()
		if len(ds) == 0 {
			break
		}
		d := pick(s.rng, steer(ds, s.rec.opts.Steer))
		s.group = &record.Group{Cause: d.cause}
		if err := d.do(ctx); err != nil {
			return nil, fmt.Errorf("decision %d (%s): %w", step+1, d.cause, err)
		}
		if err := s.settle(ctx); err != nil {
			return nil, fmt.Errorf("decision %d (%s): %w", step+1, d.cause, err)
		}
		r.Groups = append(r.Groups, *s.group)
	}
	return r, nil
}

// clientState is what the recorder knows of a client's handle.
type clientState struct {
	status               string // the model's status of its handle ("" none yet)
	requested, completed int
	// windowed: an add's op is created (create-op) and not queued yet, the
	// application's thread between PendingAddOp.create and doAsyncAddEntry.
	windowed         bool
	failed           bool // an add completed with an error
	closing, started bool
	inRecovery       bool // it wrote IN_RECOVERY
}

// request is one request a client handed its bookie client.
type request struct {
	client, bookie string // bookie: the cluster's name
	op             string // add, read
	entry          int64
	frame, resp    *wire.Frame
	delivered      bool // the request frame
	respDelivered  bool
	done           bool
}

type session struct {
	rec     *Recorder
	drv     *driver
	px      *wire.Proxy
	rng     *rand.Rand
	ledger  int64
	names   map[string]string // cluster name -> model name
	ids     map[string]string // bookie id -> cluster name
	seen    map[int]bool      // frames recorded as sent
	reqs    []*request
	held    map[string][]string // client -> ops of its held metadata writes
	crashed map[string]bool     // cluster names
	// registered: the crashed bookies whose registration lasts (no
	// session expires by a clock: ending it is a decision, "expire").
	registered map[string]bool
	clients    map[string]*clientState
	group      *record.Group
	// unmatched is a frame caught whose request the driver has not
	// reported yet.
	unmatched *wire.Frame

	willClose, willRecover    bool
	timeoutsLeft, crashesLeft int
	// closed: the metadata says CLOSED; deleting: a delete was asked;
	// deleted: its removal was written; collected: the bookies (cluster
	// names) that garbage-collected the ledger since.
	closed, deleting, deleted bool
	collected                 map[string]bool
}

type decision struct {
	cause  string
	kind   string // its class, for steering (steers)
	weight int
	do     func(ctx context.Context) error
}

func pick(rng *rand.Rand, ds []decision) decision {
	total := 0
	for _, d := range ds {
		total += d.weight
	}
	n := rng.Intn(total)
	for _, d := range ds {
		if n < d.weight {
			return d
		}
		n -= d.weight
	}
	return ds[len(ds)-1]
}

func (s *session) emit(e record.Event) { s.group.Events = append(s.group.Events, e) }

// probeLedger is the ledger the recorder's serving probe reads: far
// above any ledger id the runs of one cluster are given.
const probeLedger = 1 << 40

// decisions are what the environment may do now, in a fixed order.
func (s *session) decisions() []decision {
	var ds []decision
	c1, c2 := s.clients["c1"], s.clients["c2"]
	if !c1.started {
		// The run begins with the creation.
		return []decision{{cause: "c1 creates the ledger", kind: "create", weight: 1, do: func(ctx context.Context) error {
			c1.started = true
			return s.drv.call(ctx, nil, "create", "c1", s.rec.opts.Ensemble, s.rec.opts.WriteQuorum, s.rec.opts.AckQuorum, "-")
		}}}
	}
	// Frames: the oldest held of each connection and direction.
	queues := map[string]*wire.Frame{}
	var keys []string
	for _, f := range s.px.Held() {
		if !s.px.Deliverable(f) {
			continue // behind an older frame, or a stall: TCP's order
		}
		k := fmt.Sprintf("%s/%s/%v", f.Client, f.Bookie, f.Dir)
		if _, ok := queues[k]; !ok {
			queues[k] = f
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := queues[k]
		if st := s.clients[f.Client].status; f.Dir == wire.Response && (st == "CLOSED" || st == "CLIENT_WITHDRAWN") {
			// A late answer to a handle that is done: BookKeeper ignores
			// it, and the model leaves it in flight for good (no step
			// consumes it), so the environment never delivers it; the
			// run may end with it held.
			continue
		}
		m := s.message(f)
		ds = append(ds, decision{cause: "deliver " + m.String(), kind: "deliver " + m.Type, weight: 4, do: func(ctx context.Context) error { return s.deliver(f) }})
	}
	for _, c := range []string{"c1", "c2"} {
		if len(s.held[c]) > 0 {
			c := c
			ds = append(ds, decision{cause: fmt.Sprintf("release %s's metadata write (%s)", c, s.held[c][0]), kind: "release", weight: 2,
				do: func(ctx context.Context) error { return s.release(ctx, c) }})
		}
	}
	if c1.windowed && c1.status == "OPEN" && !c1.closing && !c1.failed {
		// The op created before waits for the application's second half,
		// which queues it with the ensemble it took.
		ds = append(ds, decision{cause: fmt.Sprintf("c1 queues entry %d's add", c1.requested), kind: "queue", weight: 2, do: func(ctx context.Context) error {
			c1.windowed = false
			return s.drv.call(ctx, nil, "add", "c1")
		}})
	}
	if !c1.windowed && c1.status == "OPEN" && !c1.closing && !c1.failed && c1.requested < s.rec.opts.Entries && c1.requested-c1.completed < s.rec.opts.Inflight {
		ds = append(ds, decision{cause: fmt.Sprintf("c1 adds entry %d", c1.requested+1), kind: "add", weight: 2, do: func(ctx context.Context) error {
			c1.requested++
			return s.drv.call(ctx, nil, "add", "c1")
		}})
		// The same add in its two halves (the model's ClientCreatesAddOp,
		// then ClientSendsAddEntryRequests), other decisions between them.
		ds = append(ds, decision{cause: fmt.Sprintf("c1 creates entry %d's add op", c1.requested+1), kind: "create-op", weight: 1, do: func(ctx context.Context) error {
			c1.requested++
			c1.windowed = true
			return s.drv.call(ctx, nil, "create-op", "c1")
		}})
	}
	if s.willClose && c1.status == "OPEN" && !c1.closing && !c1.failed && !c1.windowed && c1.requested == s.rec.opts.Entries && c1.completed == c1.requested {
		ds = append(ds, decision{cause: "c1 closes the ledger", kind: "close", weight: 2, do: func(ctx context.Context) error {
			c1.closing = true
			return s.drv.call(ctx, nil, "close", "c1")
		}})
	}
	if s.willRecover && !c2.started && s.ledger >= 0 {
		ds = append(ds, decision{cause: "c2 opens the ledger with recovery", kind: "recover", weight: 1, do: func(ctx context.Context) error {
			c2.started = true
			return s.drv.call(ctx, nil, "recover", "c2", s.ledger)
		}})
	}
	if s.rec.opts.Delete && s.closed && !s.deleting {
		// ClientDeletesLedger: a client whose handle is closed.
		for _, c := range []string{"c1", "c2"} {
			if s.clients[c].status == "CLOSED" {
				c := c
				ds = append(ds, decision{cause: c + " deletes the ledger", kind: "delete", weight: 1, do: func(ctx context.Context) error {
					s.deleting = true
					return s.drv.call(ctx, nil, "delete", c, s.ledger)
				}})
				break
			}
		}
	}
	if s.deleted {
		for _, b := range s.rec.cl.Bookies() {
			b := b
			if name := s.names[b.Name]; name != "" && !s.crashed[b.Name] && !s.collected[b.Name] {
				ds = append(ds, decision{cause: name + " garbage-collects the ledger", kind: "collect", weight: 1, do: func(ctx context.Context) error {
					s.collected[b.Name] = true
					return s.rec.cl.CollectGarbage(ctx, b)
				}})
			}
		}
	}
	if s.timeoutsLeft > 0 {
		for _, c := range []string{"c1", "c2"} {
			if st := s.clients[c].status; st == "CLOSED" || st == "CLIENT_WITHDRAWN" {
				continue // a finished handle's writes: nothing waits for them (as late answers, above)
			}
			if q := s.oldestWrite(c); q != nil && (q.frame != nil || q.resp != nil) {
				ds = append(ds, decision{cause: fmt.Sprintf("%s's write of e%d to %s times out", c, q.entry+1, s.names[q.bookie]), kind: "timeout", weight: 1,
					do: func(ctx context.Context) error { return s.timeout(ctx, q) }})
			}
		}
	}
	for _, b := range s.rec.cl.Bookies() {
		b := b
		name := s.names[b.Name]
		if name == "" {
			continue
		}
		if s.crashed[b.Name] {
			ds = append(ds, decision{cause: "restart " + name, kind: "restart", weight: 1, do: func(ctx context.Context) error {
				if err := s.rec.cl.Restart(ctx, b); err != nil {
					return err
				}
				if err := s.rec.r.serving(ctx, b); err != nil {
					return err
				}
				delete(s.crashed, b.Name)
				delete(s.registered, b.Name)
				s.emit(record.Event{Kind: record.Restart, Bookie: name})
				return nil
			}})
			if s.registered[b.Name] {
				// Its ZooKeeper session's expiry, at a time the record
				// chooses (the model's BookieRegistrationExpires, silent
				// in the record: the clients' placement shows it).
				ds = append(ds, decision{cause: "end " + name + "'s registration", kind: "expire", weight: 1, do: func(ctx context.Context) error {
					if _, err := s.rec.cl.Unregister(ctx, b); err != nil {
						return err
					}
					delete(s.registered, b.Name)
					return nil
				}})
			}
		} else if s.crashesLeft > 0 {
			ds = append(ds, decision{cause: "kill -9 " + name, kind: "crash", weight: 1, do: func(ctx context.Context) error {
				s.crashesLeft--
				if err := s.rec.cl.Crash(b); err != nil {
					return err
				}
				s.crashed[b.Name] = true
				s.registered[b.Name] = true
				s.emit(record.Event{Kind: record.Crash, Bookie: name})
				// The kernel closes the bookie's sockets; closing the
				// proxy's links at once makes the frames they held lost
				// now rather than when the proxy notices.
				for _, c := range []string{"c1", "c2"} {
					s.px.CloseLinks(c, b.Name)
				}
				return nil
			}})
		}
	}
	return ds
}

// oldestWrite is the client's oldest outstanding add: the first the
// timeout monitor's one clock fails.
func (s *session) oldestWrite(client string) *request {
	for _, q := range s.reqs {
		if q.client == client && q.op == "add" && !q.done {
			return q
		}
	}
	return nil
}

func (s *session) deliver(f *wire.Frame) error {
	if err := s.px.Deliver(f); err != nil {
		return err
	}
	s.emit(record.Event{Kind: record.Deliver, Msg: s.message(f)})
	for _, q := range s.reqs {
		if f.Dir == wire.Request && q.frame == f {
			q.delivered = true
		}
		if f.Dir == wire.Response && q.resp == f {
			q.respDelivered = true
		}
	}
	return nil
}

func (s *session) release(ctx context.Context, client string) error {
	op := s.held[client][0]
	s.held[client] = s.held[client][1:]
	var out struct {
		Released bool `json:"released"`
		Outcome  struct {
			Op      string    `json:"op"`
			OK      bool      `json:"ok"`
			Pending bool      `json:"pending"`
			Error   string    `json:"error"`
			Version *int64    `json:"version"`
			Meta    *javaMeta `json:"meta"`
		} `json:"outcome"`
	}
	if err := s.drv.call(ctx, &out, "release", client); err != nil {
		return err
	}
	o := out.Outcome
	switch {
	case !out.Released:
		return fmt.Errorf("%s had no metadata write held", client)
	case o.Pending:
		return fmt.Errorf("%s's metadata write (%s) did not complete", client, op)
	case !o.OK:
		return nil // ZooKeeper refused it (a version conflict): nothing written
	case o.Op == "remove":
		s.deleted = true
		s.emit(record.Event{Kind: record.Deleted})
		return nil
	case o.Meta == nil || o.Version == nil:
		return fmt.Errorf("%s's metadata write (%s) answered no metadata", client, op)
	}
	if o.Op == "create" {
		s.nameBookies(o.Meta.Ensembles[0].Bookies)
	}
	l := &record.Ledger{Status: o.Meta.State, Version: int(*o.Version) + 1}
	for _, e := range o.Meta.Ensembles {
		var bs []string
		for _, id := range layoutOrder(e.Bookies) {
			bs = append(bs, s.names[s.ids[id]])
		}
		l.Ensembles = append(l.Ensembles, record.Ensemble{First: int(e.First) + 1, Bookies: bs})
	}
	if l.Status == "CLOSED" {
		s.closed = true
		last := int(o.Meta.LastEntry) + 1
		l.LastEntry = &last
	}
	s.emit(record.Event{Kind: record.Meta, Meta: l})
	if c := s.clients[client]; l.Status == "CLOSED" && (c.status == "OPEN" || c.status == "IN_RECOVERY") {
		// The handle that wrote CLOSED is closed (LedgerHandle's close
		// loop sets its metadata from the write's answer), whether an
		// application's close, a recovery's, or the writer's own close
		// after an error it cannot recover from (a failed ensemble change:
		// handleUnrecoverableErrorDuringAdd), which has no callback.
		c.status = "CLOSED"
		s.emit(record.Event{Kind: record.Status, Client: client, Status: c.status})
	}
	if l.Status == "IN_RECOVERY" && client != "c1" {
		c := s.clients[client]
		if !c.inRecovery {
			c.inRecovery = true
			c.status = "IN_RECOVERY"
			s.emit(record.Event{Kind: record.Status, Client: client, Status: "IN_RECOVERY"})
		}
	}
	return nil
}

// nameBookies names the bookies as the model's deterministic creation
// does: the created ensemble, in the model's layout order, is b1..bE; the
// others follow in the order of their ids. BookKeeper's index j holds the
// model's layout position spec.Params.IndexPosition(j) (entries count
// from 1 in the model, from 0 in BookKeeper; javaLayout): position p is
// BookKeeper's index (p-1) mod E.
func (s *session) nameBookies(ensemble []string) {
	for p, id := range layoutOrder(ensemble) {
		s.names[s.ids[id]] = fmt.Sprintf("b%d", p+1)
	}
	n := len(ensemble)
	var rest []*cluster.Bookie
	for _, b := range s.rec.cl.Bookies() {
		if s.names[b.Name] == "" {
			rest = append(rest, b)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].Port < rest[j].Port })
	for _, b := range rest {
		n++
		s.names[b.Name] = fmt.Sprintf("b%d", n)
	}
}

// layoutOrder is a BookKeeper ensemble in the model's layout order.
func layoutOrder(ensemble []string) []string {
	e := len(ensemble)
	out := make([]string, e)
	for p := range out {
		out[p] = ensemble[(p+e-1)%e]
	}
	return out
}

func (s *session) timeout(ctx context.Context, q *request) error {
	s.timeoutsLeft--
	// The clock fails a write whose frame the network lost: neither the
	// request nor its answer arrives later.
	for _, f := range []*wire.Frame{q.frame, q.resp} {
		if f != nil {
			s.px.Stall(f)
		}
	}
	var out struct {
		Outcome string `json:"outcome"`
	}
	if err := s.drv.call(ctx, &out, "timeout", q.client, s.rec.cl.Bookie(q.bookie).ID(), s.ledger, q.entry); err != nil {
		return err
	}
	if out.Outcome != "timed-out" {
		return fmt.Errorf("the write was not outstanding: %s", out.Outcome)
	}
	return nil
}

// message is a frame in the model's names.
func (s *session) message(f *wire.Frame) *record.Message {
	m := &record.Message{Client: f.Client, Bookie: s.names[f.Bookie]}
	req := f.Dir == wire.Request
	switch {
	case f.Op == wire.OpAdd:
		m.Type, m.Entry = "AddEntryResponse", int(f.Entry)+1
		if req {
			m.Type = "AddEntryRequest"
			m.Recovery = f.Flags&wire.FlagRecoveryAdd != 0
			lac := int(f.LAC) + 1
			m.LAC = &lac
		}
	case f.Op == wire.OpRead && f.Entry < 0:
		m.Type = "FenceResponse"
		if req {
			m.Type = "FenceRequest"
		}
	default:
		m.Type, m.Entry = "ReadResponse", int(f.Entry)+1
		if req {
			m.Type = "ReadRequest"
			m.Fence = f.Flags&wire.FlagDoFencing != 0
		}
	}
	if !req {
		m.RC = rcRecord(f.RC)
	}
	return m
}

func rcRecord(rc int) string {
	switch rc {
	case wire.EOK:
		return record.EOK
	case wire.ENoLedger:
		return record.ENoLedger
	case wire.ENoEntry:
		return record.ENoEntry
	case wire.EFenced:
		return record.EFenced
	case wire.EReadOnly:
		return record.EReadOnly
	}
	return fmt.Sprintf("rc%d", rc)
}

// errNotSettled says what the recorder still awaited.
var errNotSettled = errors.New("BookKeeper did not settle")

// settle waits until the decision's consequences are all in (the file's
// comment says why this is enough), recording each as it comes.
func (s *session) settle(ctx context.Context) error {
	tctx, cancel := context.WithTimeout(ctx, s.rec.opts.Wait)
	defer cancel()
	for {
		if err := s.absorb(); err != nil {
			return err
		}
		if open := s.open(); open != "" {
			select {
			case <-s.drv.changedCh():
			case <-s.px.Changed():
			case <-s.drv.dead:
				return errors.New("the Java driver exited")
			case <-tctx.Done():
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("%w within %v: awaiting %s", errNotSettled, s.rec.opts.Wait, open)
			}
			continue
		}
		var st struct {
			Rounds int `json:"rounds"`
		}
		if err := s.drv.call(tctx, &st, "settle"); err != nil {
			return err
		}
		if err := s.absorb(); err != nil {
			return err
		}
		if st.Rounds == 1 && s.open() == "" && len(s.drv.pending()) == 0 {
			return nil
		}
	}
}

// open says what the recorder is awaiting ("" nothing).
func (s *session) open() string {
	if c1 := s.clients["c1"]; c1.started && c1.status == "" && len(s.held["c1"]) == 0 {
		// LedgerCreateOp generates the ledger's id in ZooKeeper (not
		// through the ledger manager the driver counts) before it asks
		// for the metadata write.
		return "c1's creation (its metadata write, or its failure)"
	}
	if s.unmatched != nil {
		return fmt.Sprintf("the request event of frame %v", s.unmatched)
	}
	for _, q := range s.reqs {
		switch {
		case q.done:
		case q.frame == nil:
			return fmt.Sprintf("%s's %s request e%d to %s (its frame or its failure)", q.client, q.op, q.entry+1, q.bookie)
		case q.delivered && q.resp == nil && !s.crashed[q.bookie]:
			return fmt.Sprintf("%s's answer to %s's %s e%d", q.bookie, q.client, q.op, q.entry+1)
		case q.respDelivered:
			return fmt.Sprintf("%s's callback of its %s e%d to %s", q.client, q.op, q.entry+1, q.bookie)
		}
	}
	return ""
}

// absorb records every new frame and every event of the driver.
func (s *session) absorb() error {
	s.unmatched = nil
	for _, e := range s.drv.take() {
		if err := s.event(e); err != nil {
			return err
		}
	}
	for _, f := range s.px.Held() {
		if s.seen[f.ID] {
			continue
		}
		if !s.px.Live(f) {
			s.px.Stall(f) // its connection closed: lost
			continue
		}
		if f.Ledger != s.ledger {
			return fmt.Errorf("a frame of ledger %d, not the run's %d: %v", f.Ledger, s.ledger, f)
		}
		m := s.message(f)
		if strings.HasPrefix(m.RC, "rc") {
			return fmt.Errorf("a return code the model has no name for: %v", f)
		}
		op := map[int]string{wire.OpAdd: "add", wire.OpRead: "read"}[f.Op]
		var match *request
		for _, q := range s.reqs {
			if q.client != f.Client || q.bookie != f.Bookie || q.op != op || q.entry != f.Entry {
				continue
			}
			if f.Dir == wire.Request && q.frame == nil && !q.done {
				match = q
				break
			}
			if f.Dir == wire.Response && q.delivered && q.resp == nil && !q.done {
				match = q
				break
			}
		}
		if match == nil {
			// Its req event has not been read yet (the driver's stdout
			// and the proxy's socket race): the next absorb takes it.
			s.unmatched = f
			return nil
		}
		s.seen[f.ID] = true
		if f.Dir == wire.Request {
			match.frame = f
		} else {
			match.resp = f
		}
		s.emit(record.Event{Kind: record.Send, Msg: m})
	}
	return nil
}

// event records what one event of the driver shows.
func (s *session) event(e Event) error {
	c := s.clients[e.Client]
	switch e.Ev {
	case "req":
		s.reqs = append(s.reqs, &request{client: e.Client, bookie: s.ids[e.Bookie], op: e.Op, entry: e.Entry})
	case "done":
		var q *request
		for _, r := range s.reqs {
			if r.client == e.Client && r.bookie == s.ids[e.Bookie] && r.op == e.Op && r.entry == e.Entry && !r.done {
				q = r
				break
			}
		}
		if q == nil {
			return fmt.Errorf("a completion no request accounts for: %+v", e)
		}
		q.done = true
		if st := s.clients[q.client].status; !q.respDelivered && (st == "CLOSED" || st == "CLIENT_WITHDRAWN") {
			// A finished handle's request failing (its connection closed
			// by a crash): nothing of the client observes it, and the
			// model's finished client takes no timeout.
			for _, f := range []*wire.Frame{q.frame, q.resp} {
				if f != nil {
					s.px.Stall(f)
				}
			}
		} else if !q.respDelivered {
			// Failed without an answer: the clock, or its connection
			// closed or refused.
			for _, f := range []*wire.Frame{q.frame, q.resp} {
				if f != nil {
					s.px.Stall(f)
				}
			}
			m := &record.Message{Type: "AddEntryRequest", Client: q.client, Bookie: s.names[q.bookie], Entry: int(q.entry) + 1}
			if q.op == "read" {
				m.Type = "ReadRequest"
				if q.entry < 0 {
					m.Type, m.Entry = "FenceRequest", 0
				}
			}
			s.emit(record.Event{Kind: record.Timeout, Msg: m})
		}
	case "meta-held":
		s.held[e.Client] = append(s.held[e.Client], e.Op)
	case "created":
		if e.RC != 0 {
			c.status = "CLIENT_WITHDRAWN"
			s.emit(record.Event{Kind: record.Status, Client: e.Client, Status: c.status})
			return nil
		}
		s.ledger = e.Ledger
		c.status = "OPEN"
		s.emit(record.Event{Kind: record.Status, Client: e.Client, Status: "OPEN"})
	case "added":
		c.completed++
		if e.RC == 0 {
			s.emit(record.Event{Kind: record.Acked, Client: e.Client, Entry: int(e.Entry) + 1})
		} else {
			// The handle's state is what its metadata writes and its
			// close say, not a failed add: after an error it cannot
			// recover from, the writer closes the ledger itself
			// (handleUnrecoverableErrorDuringAdd), and its CLOSED write
			// says so.
			c.failed = true
		}
	case "closed":
		st := "CLOSED"
		if e.RC != 0 {
			st = "CLIENT_WITHDRAWN"
		}
		if c.status == "OPEN" {
			c.status = st
			s.emit(record.Event{Kind: record.Status, Client: e.Client, Status: st})
		}
	case "recovered":
		if !c.inRecovery {
			return nil // the ledger was closed: an open without recovery, nothing the model shows
		}
		st := "CLOSED"
		if e.RC != 0 {
			st = "RECOVERY_ABORTED"
		}
		if c.status == st {
			return nil // told when its CLOSED write succeeded
		}
		c.status = st
		s.emit(record.Event{Kind: record.Status, Client: e.Client, Status: st})
	case "deleted", "write-failed", "read-failed":
		// Failures the req/done account tells already (read-failed came
		// with the harness's close of a fencing read's connection).
	default:
		return fmt.Errorf("an event the recorder does not know: %+v", e)
	}
	return nil
}
