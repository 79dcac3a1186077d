package bridge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/bridge/cluster"
	"github.com/bkcheck/bkcheck/bridge/wire"
	"github.com/bkcheck/bkcheck/spec"
)

// run is one cluster with its proxy and its Java driver.
type run struct {
	// states is the trace, cur the index of the step being taken (the Java
	// add path looks ahead for the replacements an ensemble change chose).
	states []itfState
	cur    int

	opts    Options
	cl      bookies
	px      frames
	drv     javaClients
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
	// queued: the trace's ensemble changes whose replacements the placement
	// policy has been given.
	queued map[int]bool
	// crashed: the bookies down after a crash.
	crashed map[string]bool
	// holdJournal: the bookies' journals follow the model's fence
	// durability (holdsFenceRecords); holding: the bookies whose agent
	// keeps their journal's records back now (journalHolds).
	holdJournal bool
	// autoRecovery: the driver runs the Auditor and the worker.
	autoRecovery bool
	// decommissioning is the bookie an operator's decommission command
	// (AdminDecommissionsBookie) waits for, until it returns; "" when none.
	decommissioning string
	// decommissionAsked: decommissionWaits has asked the command once.
	decommissionAsked bool
	// wiped: the bookies whose disks a BookieLosesDisk emptied, which
	// cookie validation keeps down: they serve nothing, for good.
	wiped   map[string]bool
	holding map[string]bool
	// raced: for each bookie, the key of the add its agent holds between
	// its fence check and its store (adds.go, raceAdd).
	raced map[string]string
	// linkClosed: the step at which the harness last closed a client's
	// connection to a bookie (by "client/bookie"), to fail a write as a
	// closed connection does (addTimeout).
	linkClosed map[string]int
	// sent is addSendSteps of the trace, computed at its first timeout.
	sent []map[string]int
	// lostAt: the step at which the harness stalled each frame of a lost
	// message (lose), by frame ID.
	lostAt map[int]int
	// completing: the clients whose ensemble change's metadata write
	// completed and whose completion the model has not taken yet.
	completing map[string]bool
	// notes are for the result: how the harness took a step where
	// BookKeeper has a choice (Result.Notes).
	notes []string
	// driverLog is the client driver's log (where the agent in its JVM
	// says what a client-side fix did).
	driverLog string
}

// The run's three parts, behind interfaces so that a fake can stand in
// for BookKeeper (transcript_test.go): the cluster's bookies
// (cluster.Cluster), the frames between clients and bookies (wire.Proxy),
// and the clients (the Java driver).
type bookies interface {
	Bookie(name string) *cluster.Bookie
	Bookies() []*cluster.Bookie
	Alive(b *cluster.Bookie) error
	Crash(b *cluster.Bookie) error
	Restart(ctx context.Context, b *cluster.Bookie) error
	Unregister(ctx context.Context, b *cluster.Bookie) (bool, error)
	LoseDisk(ctx context.Context, b *cluster.Bookie) (string, error)
	Reformat(ctx context.Context, b *cluster.Bookie, deleteCookie bool) error
	CollectGarbage(ctx context.Context, b *cluster.Bookie) error
	ReadOnly(ctx context.Context, b *cluster.Bookie, readOnly bool) error
	Checkpoint(ctx context.Context, b *cluster.Bookie, flush bool) error
	ShortRead(ctx context.Context, b *cluster.Bookie, ledger, entry int64) error
	PreBootCheck(ctx context.Context, b *cluster.Bookie) error
	Journal(ctx context.Context, b *cluster.Bookie, hold bool) error
	Race(ctx context.Context, b *cluster.Bookie, cmd string) error
	PowerLoss(b *cluster.Bookie) (int, error)
	SyncDisks(b *cluster.Bookie, journalOnly bool) error
	Close()
}

type frames interface {
	Held() []*wire.Frame
	Await(ctx context.Context, match func(*wire.Frame) bool) (*wire.Frame, error)
	Deliver(f *wire.Frame) error
	Stall(f *wire.Frame)
	CloseLinks(client, bookie string) int
	Close()
}

type javaClients interface {
	call(ctx context.Context, v any, verb string, args ...any) error
	awaitEvent(ctx context.Context, match func(Event) bool) (Event, error)
	pending() []Event
}

// maxEnsembleChanges is the driver's maxNumEnsembleChanges: the trace's
// bound on a writer's ensemble changes (--max-ensemble-changes, given by
// the model to every trace of the Java add path), unlimited as
// BookKeeper's default without one.
func maxEnsembleChanges(params map[string]any) string {
	if n := toInt(params["max-ensemble-changes"]); n > 0 {
		return strconv.Itoa(n)
	}
	return strconv.Itoa(math.MaxInt32)
}

// newState is a run with no parts yet.
func newState(states []itfState, params map[string]any, opts Options) *run {
	return &run{states: states, opts: opts, params: params, ledger: -1, holdJournal: holdsFenceRecords(states, params, opts), entries: toInt(params["entries"]),
		owed: map[string]bool{}, lostLater: map[string]message{}, decided: map[int]bool{}, misses: map[int]int{},
		answered: map[int]map[string]bool{}, owedAfter: map[string][]string{}, queued: map[int]bool{}, crashed: map[string]bool{}, wiped: map[string]bool{}, holding: map[string]bool{}, raced: map[string]string{}, linkClosed: map[string]int{}, lostAt: map[int]int{}, completing: map[string]bool{}}
}

func newRun(ctx context.Context, cp, dir string, states []itfState, params map[string]any, opts Options) (_ *run, err error) {
	r := newState(states, params, opts)
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	copts := cluster.Options{Classpath: cp, Bookies: toInt(params["bookies"]), Dir: dir,
		Settings: bookieSettings(params), PowerLoss: powerLossJournal(params)}
	if needsAgent(states, params, opts) {
		if copts.Agent, err = agentJar(cp); err != nil {
			return nil, err
		}
		copts.Fixes = opts.fixes
		copts.HoldPreBootCheck = holdsPreBootCheck(params, opts)
		copts.HoldJournal = r.holdJournal
		copts.RaceAdds = racesAdds(states)
		copts.HoldAutoRecovery = runsAutoRecovery(states)
	}
	cl, err := cluster.Start(ctx, copts)
	if err != nil {
		return nil, err
	}
	r.cl = cl
	r.driverLog = filepath.Join(dir, "driver.log")
	cmd, in, out, err := cl.Spawn(ctx, "the client driver", r.driverLog,
		append([]string{"-Xmx256m", "-XX:MaxDirectMemorySize=128m"}, cl.AgentFlags(0)...), "bkcheck.bridge.Driver", cl.MetadataURI(), maxEnsembleChanges(params))
	if err != nil {
		return nil, err
	}
	r.drv = newDriver(cmd, in, out)
	if err := r.drv.call(ctx, nil, "init"); err != nil {
		return nil, err
	}
	if err := cl.StartBookies(ctx); err != nil {
		return nil, err
	}
	for _, b := range r.cl.Bookies() {
		if err := r.serving(ctx, b); err != nil {
			return nil, err
		}
	}
	px := wire.NewProxy()
	r.px = px
	for c := 1; c <= toInt(params["clients"]); c++ {
		name := fmt.Sprintf("c%d", c)
		var ports []string
		for _, b := range r.cl.Bookies() {
			port, err := px.Listen(name, b.Name, b.ID())
			if err != nil {
				return nil, err
			}
			ports = append(ports, fmt.Sprintf("%s=%d", b.ID(), port))
		}
		if err := r.drv.call(ctx, nil, "client", name, strings.Join(ports, ",")); err != nil {
			return nil, err
		}
	}
	if runsAutoRecovery(states) {
		if err := r.startAutoRecovery(ctx); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// queueReplacements tells the placement policy the bookies the client's
// next ensemble change in the trace puts in, once per change.
func (r *run) queueReplacements(ctx context.Context, client string) {
	for j := r.cur + 1; j < len(r.states); j++ {
		st := r.states[j]
		if st.action() != "ClientUpdatesEnsembleMetadata" {
			continue
		}
		if c, _ := st.picks()["client"].(string); c != client {
			continue
		}
		if r.queued[j] {
			return
		}
		r.queued[j] = true
		for _, b := range newcomers(lastFragment(r.states[j-1]), lastFragment(st)) {
			_ = r.drv.call(ctx, nil, "replace", r.bookieID(b))
		}
		return
	}
}

// ensembles renders the model's fragments as the metadata has them.
func ensembles(s itfState) string {
	frags, _ := s["meta_fragments"].([]any)
	var out []string
	for _, f := range frags {
		fm, _ := f.(map[string]any)
		out = append(out, fmt.Sprintf("e%d:{%s}", toInt(fm["first_entry_id"]), strings.Join(set(fm["ensemble"]), ",")))
	}
	return strings.Join(out, " ")
}

// describe says what BookKeeper shows of the ledger and the client now,
// for a divergence.
func (r *run) describe(ctx context.Context, client string) string {
	var o observation
	if err := r.drv.call(ctx, &o, "observe", r.ledger, 0); err != nil {
		return "(nothing more: " + err.Error() + ")"
	}
	var ens []string
	for _, e := range o.Meta.Ensembles {
		var names []string
		for _, id := range e.Bookies {
			names = append(names, r.bookieName(id))
		}
		ens = append(ens, fmt.Sprintf("e%d:[%s]", e.First+1, strings.Join(names, ",")))
	}
	c := o.Clients[client]
	var acked []string
	for _, e := range c.Acked {
		acked = append(acked, fmt.Sprintf("e%d", e+1))
	}
	return fmt.Sprintf("the metadata is %s with ensembles %s; %s has had %d of its %d adds completed, acknowledged {%s}",
		o.Meta.State, strings.Join(ens, " "), client, c.Completed, c.Requested, strings.Join(acked, ","))
}

// javaLayout is the ensemble, in BookKeeper's order, of a model fragment:
// BookKeeper's index j holds the model's layout position
// spec.Params.IndexPosition(j) (entries are counted from 1 in the model,
// from 0 in BookKeeper). A fragment without a layout (E = Qw: every entry
// to every bookie) is in name order.
func javaLayout(f map[string]any) []string {
	lay, _ := f["layout"].([]any)
	if len(lay) == 0 {
		return set(f["ensemble"])
	}
	p := spec.Params{Ensemble: len(lay)}
	out := make([]string, len(lay))
	for j := range lay {
		out[j] = fmt.Sprint(lay[p.IndexPosition(j)])
	}
	return out
}

// lastFragment is the metadata's last fragment (nil if none).
func lastFragment(s itfState) map[string]any {
	frags, _ := s["meta_fragments"].([]any)
	if len(frags) == 0 {
		return nil
	}
	f, _ := frags[len(frags)-1].(map[string]any)
	return f
}

// newcomers are the bookies an ensemble change put in, in the order
// EnsembleUtils.replaceBookiesInEnsemble asks the placement policy for
// them: by failed index, BookKeeper's index order (javaLayout). An
// unordered fragment (the spec's E = Qw) has no index order; its
// newcomers come in name order.
func newcomers(before, after map[string]any) []string {
	var out []string
	if lay, _ := after["layout"].([]any); len(lay) > 0 {
		lb, la := javaLayout(before), javaLayout(after)
		for i, b := range la {
			if i >= len(lb) || lb[i] != b {
				out = append(out, b)
			}
		}
		return out
	}
	old := set(before["ensemble"])
	for _, b := range set(after["ensemble"]) {
		if !contains(old, b) {
			out = append(out, b)
		}
	}
	return out
}

// awaitWritable polls the bookies ZooKeeper has registered as writable
// until done holds of them or tctx ends (ctx's end is returned as its
// error); it gives the last list and whether done held.
func (r *run) awaitWritable(ctx, tctx context.Context, done func(ids []string) bool) ([]string, bool, error) {
	for {
		var w struct {
			Bookies []string `json:"bookies"`
		}
		if err := r.drv.call(tctx, &w, "writable"); err != nil {
			return nil, false, err
		}
		if done(w.Bookies) {
			return w.Bookies, true, nil
		}
		select {
		case <-tctx.Done():
			return w.Bookies, false, ctx.Err()
		case <-time.After(50 * time.Millisecond): // polling for the registrations, not deciding a step
		}
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

// outcome waits for the client's callback ev (created, recovered,
// deleted, closed) and returns it.
func (r *run) outcome(ctx context.Context, client, ev, what string) (Event, error) {
	return r.awaitEvent(ctx, what, func(e Event) bool { return e.Ev == ev && e.Client == client })
}

// succeeded waits for the client's callback ev and requires it to report
// success, as the model's step does.
func (r *run) succeeded(ctx context.Context, client, ev, what string) (Event, error) {
	e, err := r.outcome(ctx, client, ev, what)
	if err == nil && e.RC != 0 {
		err = diverged(fmt.Sprintf("%s could not %s", client, what), fmt.Sprintf("%s's %s succeeds", client, ev), fmt.Sprintf("rc %d", e.RC))
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
// stalled (lose) if BookKeeper sends it. A lost message BookKeeper does not send
// at all is allowed only where Java's client sends fewer messages than the
// model (sequenceRead); any other absence is a divergence.
func (r *run) expectSent(ctx context.Context, prev, next itfState) error {
	for _, m := range sentAt(prev, next) {
		m := m
		if m.Count < 0 {
			f := r.heldNow(func(f *wire.Frame) bool { return frameOf(m, f) })
			switch {
			case f != nil:
				r.lose(f)
			case isRequest(m.Type) && r.crashed[m.Bookie]:
				// To a bookie that is down the client's send fails at once
				// (its connection is refused): no frame to lose.
			default:
				f, err := r.awaitFrame(ctx, m.String(), func(f *wire.Frame) bool { return frameOf(m, f) })
				if err != nil {
					return err
				}
				r.lose(f)
			}
			continue
		}
		if _, err := r.awaitFrame(ctx, m.String(), func(f *wire.Frame) bool { return frameOf(m, f) }); err != nil {
			return err
		}
	}
	return nil
}

// lose makes the frame of a message the model loses a stalled one: TCP
// does not lose one frame of a connection and deliver the next, so the
// frame stays held, never delivered, and holds back every later frame of
// its connection in its direction until the connection closes (a crash,
// or the harness failing a write by a close, addTimeout). A trace that
// delivers such a later frame is not executable (deliver).
func (r *run) lose(f *wire.Frame) {
	r.px.Stall(f)
	r.lostAt[f.ID] = r.cur
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
	if r.raced[m.Bookie] == m.key() {
		// the add was delivered at its check and waits to store (raceAdd)
		delete(r.raced, m.Bookie)
		if err := r.cl.Race(ctx, r.cl.Bookie(m.Bookie), "store"); err != nil {
			return nil, diverged("the checked add could not store", m.String()+" stored", err.Error())
		}
		return m, nil
	}
	f, err := r.awaitFrame(ctx, m.String(), func(f *wire.Frame) bool { return frameOf(*m, f) })
	if err != nil {
		return nil, err
	}
	if err := r.px.Deliver(f); err != nil {
		if why := r.tcpRefusal(err); why != "" {
			return nil, notExecutable(why)
		}
		return nil, diverged("the frame could not be delivered", m.String()+" delivered", err.Error())
	}
	if err := r.raceFence(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}

// tcpRefusal says, for a committer, why the proxy refused a delivery no
// TCP connection makes ("" for another error): a frame behind the stall of
// a lost one, or ahead of an older frame of its connection.
func (r *run) tcpRefusal(err error) string {
	var st *wire.StalledError
	var oo *wire.OutOfOrderError
	switch {
	case errors.As(err, &st):
		at := ""
		if step, ok := r.lostAt[st.Stalled.ID]; ok {
			at = fmt.Sprintf(" (lost at step %d)", step+1)
		}
		return fmt.Sprintf("TCP cannot lose frame %v on connection %s→%s%s and then deliver frame %v behind it: "+
			"only the connection's close ends the loss (a crash of the bookie, or a write failed by a close), and none comes between them",
			st.Stalled.Header, st.Frame.Client, st.Frame.Bookie, at, st.Frame.Header)
	case errors.As(err, &oo):
		return fmt.Sprintf("TCP delivers the frames of connection %s→%s in order: it cannot deliver frame %v before frame %v, sent before it on that connection",
			oo.Frame.Client, oo.Frame.Bookie, oo.Frame.Header, oo.Older.Header)
	}
	return ""
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
		r.lose(f)
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
