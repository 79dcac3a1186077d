// Package validate asks whether a record of real BookKeeper (package
// record) is a behaviour of the model: a search of the model constrained
// by the record, as TLA+'s trace validation does, not a replay. The record
// resolves the model's choices where it shows them (which frame, which
// return code, which metadata); the model's unobservable steps (a journal
// sync, a client's internal step, a message the model loses at send time
// and the record shows only later as a timeout) are searched between the
// recorded events.
//
// A record is a sequence of groups, each one decision of the environment
// and every event it caused, in any order within the group. A behaviour
// of the model matches the record when its steps, in order, show the
// groups in order: each step that shows something shows events of the
// current group not yet matched, and a group is done when all of its
// events are matched and every frame it delivered is one the model has
// processed (or dropped unread, as a client ignores a late answer).
package validate

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"strings"

	"github.com/bkcheck/bkcheck/record"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// Verdicts.
const (
	Valid   = "VALID"
	Invalid = "INVALID"
	Unknown = "UNKNOWN" // the search's bound was reached first
)

// maxGroupEvents bounds a group's events (a step's mask is a uint64).
const maxGroupEvents = 64

// Options bound the search.
type Options struct {
	// MaxStates bounds the model states visited for one group (0: 2,000,000).
	MaxStates int
}

// Result is the answer for one record.
type Result struct {
	Verdict string
	Groups  int // the record's groups
	Matched int // the groups the model matched, in order: the longest prefix
	States  int // model states the search visited
	// Stuck says where the model could not follow (INVALID, UNKNOWN).
	Stuck *Stuck
	// Witness is one behaviour of the model the record is (VALID): its
	// steps, each with what it showed.
	Witness []Step
}

// Step is one step of a witness.
type Step struct {
	Action spec.Action
	State  spec.State // the state it leads to
	Group  int        // 1-based; the group whose events it showed (or, silent, the one it ran in)
	Shows  []record.Event
}

// Stuck is where the model could not follow the record.
type Stuck struct {
	Group int // 1-based
	Cause string
	// Taken are the group's events the model matched at best; Left those
	// it could not after them (deliveries included, when the model could
	// not process the frame).
	Taken, Left []record.Event
	// Options are what the model could do there instead: an action and
	// what it would show.
	Options []Option
}

// Option is one step the model could take where it was stuck.
type Option struct {
	Action string
	Shows  []record.Event
}

// node is one model state reached with some of the current group's
// events matched.
type node struct {
	enc    []byte // the state, encoded (a decoded state is twenty times larger)
	mask   uint64
	parent *node
	act    spec.Action
	shows  []record.Event
	group  int
	start  []byte // the state the node's group began in, encoded
}

// Record validates r against the model its header names.
func Record(r *record.Record, opts Options) (*Result, error) {
	m, err := Model(r.Header)
	if err != nil {
		return nil, err
	}
	return Against(m, r, opts)
}

// Against validates r against m.
func Against(m *spec.Model, r *record.Record, opts Options) (*Result, error) {
	if opts.MaxStates == 0 {
		opts.MaxStates = 2_000_000
	}
	for i, g := range r.Groups {
		if n := len(g.Events); n > maxGroupEvents {
			return nil, fmt.Errorf("group %d has %d events; a group can hold at most %d", i+1, n, maxGroupEvents)
		}
	}
	res := &Result{Groups: len(r.Groups)}
	init := m.Init()
	frontier := []*node{{enc: m.Encode(nil, &init)}}
	for gi, g := range r.Groups {
		next, stuck, states := group(m, gi+1, g, frontier, opts.MaxStates)
		res.States += states
		if len(next) == 0 {
			res.Verdict, res.Stuck = Invalid, stuck
			if states >= opts.MaxStates {
				res.Verdict = Unknown
			}
			return res, nil
		}
		res.Matched = gi + 1
		frontier = next
	}
	res.Verdict = Valid
	res.Witness = witness(m, frontier[0])
	return res, nil
}

// group searches from the frontier for the states in which every event
// of g is matched.
func group(m *spec.Model, gi int, g record.Group, frontier []*node, limit int) (next []*node, stuck *Stuck, states int) {
	p := m.P
	var shownIdx, delivered []int
	for i, e := range g.Events {
		if e.Kind == record.Deliver {
			delivered = append(delivered, i)
		} else {
			shownIdx = append(shownIdx, i)
		}
	}
	full := uint64(1)<<uint(len(shownIdx)) - 1
	seen := map[string]bool{}
	done := map[string]bool{}
	key := func(enc []byte, mask uint64) string {
		b := append([]byte(nil), enc...)
		for i := 0; i < 8; i++ {
			b = append(b, byte(mask>>(8*i)))
		}
		return string(b)
	}
	var queue []*node
	for _, n := range frontier {
		c := &node{enc: n.enc, parent: n.parent, act: n.act, shows: n.shows, group: n.group, start: n.enc}
		if k := key(c.enc, 0); !seen[k] {
			seen[k] = true
			queue = append(queue, c)
		}
	}
	best := []*node{queue[0]}
	var s, scratch, start spec.State
	for len(queue) > 0 && len(seen) < limit {
		n := queue[0]
		queue = queue[1:]
		switch b, bb := bits.OnesCount64(n.mask), bits.OnesCount64(best[0].mask); {
		case b > bb:
			best = []*node{n}
		case b == bb && len(best) < 64:
			best = append(best, n)
		}
		decode(m, n.enc, &s)
		if doneWith(&s, g, shownIdx, full&^n.mask) && processed(m, n.start, &start, &s, g, delivered) {
			if k := string(n.enc); !done[k] {
				done[k] = true
				next = append(next, n)
			}
			continue
		}
		m.Next(&s, &scratch, func(a spec.Action, t *spec.State) {
			v := project(p, a, &s, t)
			mask := n.mask
			if len(v.shown) > 0 {
				var ok bool
				if mask, ok = assign(p, g, shownIdx, v.shown, 0, n.mask); !ok {
					return
				}
			}
			enc := m.Encode(nil, t)
			k := key(enc, mask)
			if seen[k] {
				return
			}
			seen[k] = true
			var evs []record.Event
			for _, s := range v.shown {
				evs = append(evs, s.ev)
			}
			queue = append(queue, &node{enc: enc, mask: mask, parent: n, act: a, shows: evs, group: gi, start: n.start})
		})
	}
	if len(next) > 0 {
		return next, nil, len(seen)
	}
	return nil, stuckAt(m, gi, g, shownIdx, delivered, best), len(seen)
}

// doneWith says whether the group's events left unmatched (missing) may
// stay so in s: only a request's failure the model has no step for. A
// write of a writer whose handle closed itself or was given up: Java fails
// it into an op already failed, and nothing shows; the model's gone
// client takes no timeout. A fencing read the model lost, or whose
// answer comes too late (fenceUnanswered).
func doneWith(s *spec.State, g record.Group, idx []int, missing uint64) bool {
	for j, i := range idx {
		if missing&(1<<uint(j)) == 0 {
			continue
		}
		e := g.Events[i]
		switch {
		case e.Kind != record.Timeout:
			return false
		case e.Msg.Type == "AddEntryRequest" && !e.Msg.Recovery && writerGone(s, e.Msg.Client):
		case e.Msg.Type == "AddEntryRequest" && recoveryFailed(s, e.Msg.Client):
		case e.Msg.Type == "ReadRequest" && readLost(s, e.Msg):
		case e.Msg.Type == "FenceRequest" && fenceUnanswered(s, e.Msg):
		default:
			return false
		}
	}
	return true
}

// fenceUnanswered: the model lost the fencing read (or its answer), or
// its recovery's fencing phase is over. The model takes no step for a
// fencing read that fails; Java counts its failure as an answer
// (ReadLastConfirmedOp), which shows only in what the recovery does next.
func fenceUnanswered(s *spec.State, r *record.Message) bool {
	for _, m := range s.Msgs {
		k := m.Key
		if (k.Type() == spec.FenceRequest || k.Type() == spec.FenceResponse) && clientName(k.Cid()) == r.Client && bookieName(k.Bookie()) == r.Bookie {
			if m.Count == -1 || k.Type() == spec.FenceResponse && gone(s, k) {
				return true
			}
		}
	}
	return false
}

// readLost: the model lost the recovery read (or its answer). The model
// takes no step for a read that fails: a sequence read asks the next
// replica at any time (ClientSendsNextRecoveryRead), and a read's lost
// messages count as failed answers (readUnknown); Java's failure (a
// refused connection to a bookie that is down, or the clock) shows only
// in what the recovery does next.
func readLost(s *spec.State, r *record.Message) bool {
	for _, m := range s.Msgs {
		k := m.Key
		if (k.Type() == spec.ReadRequest || k.Type() == spec.ReadResponse) && m.Count == -1 &&
			clientName(k.Cid()) == r.Client && bookieName(k.Bookie()) == r.Bookie && int(k.Entry().ID) == r.Entry {
			return true
		}
	}
	return false
}

// recoveryFailed: the client named c is a recovery that failed
// (RECOVERY_ABORTED): errorOutPendingAdds failed its write-backs, and a
// later timeout of one fails an op already failed.
func recoveryFailed(s *spec.State, c string) bool {
	cl := clientNamed(s, c)
	return cl != nil && cl.Status == spec.RecoveryAborted
}

// writerGone: the client named c is not an open writer any more, and was
// one (a writer that closed itself or gave the ledger up).
func writerGone(s *spec.State, c string) bool {
	cl := clientNamed(s, c)
	if cl == nil {
		return false
	}
	st := cl.Status
	return st == spec.StatusClosing || st == spec.ClientWithdrawn || st == spec.StatusClosed && cl.LAP > 0
}

// clientNamed is the client the record names c (nil if none).
func clientNamed(s *spec.State, c string) *spec.Client {
	for i := range s.Clients {
		if clientName(i) == c {
			return &s.Clients[i]
		}
	}
	return nil
}

// assign matches a step's shown events to distinct unmatched events of the
// group, trying every assignment (a recorded event may leave a field out).
func assign(p spec.Params, g record.Group, idx []int, shown []shown, i int, mask uint64) (uint64, bool) {
	if i == len(shown) {
		return mask, true
	}
	for j, gi := range idx {
		bit := uint64(1) << uint(j)
		if mask&bit != 0 || !matchEvent(p, g.Events[gi], shown[i].ev, shown[i].key) {
			continue
		}
		if m, ok := assign(p, g, idx, shown, i+1, mask|bit); ok {
			return m, true
		}
	}
	return 0, false
}

// processed says whether every frame the group delivered is a message the
// model has processed or dropped unread in s, the group having begun in
// the state encoded as startEnc (decoded into start only when a frame
// was delivered).
func processed(m *spec.Model, startEnc []byte, start, s *spec.State, g record.Group, delivered []int) bool {
	if len(delivered) > 0 {
		decode(m, startEnc, start)
	}
	for _, i := range delivered {
		if !processedMsg(start, s, g.Events[i].Msg) {
			return false
		}
	}
	return true
}

// processedMsg: the model holds r processed (count 0), in flight to a
// client that drops it unread (gone), or one copy of two taken during the
// group (a count lower than at its start: the BookKeeper model's copies).
func processedMsg(start, s *spec.State, r *record.Message) bool {
	for _, m := range s.Msgs {
		if !matchMessage(r, m.Key) {
			continue
		}
		if m.Count == 0 || m.Count >= 1 && gone(s, m.Key) || m.Count >= 1 && countOf(start, m.Key) > m.Count {
			return true
		}
	}
	return false
}

// countOf is k's delivery count in s (0 for a record never sent).
func countOf(s *spec.State, k spec.MsgKey) int8 {
	for _, m := range s.Msgs {
		if m.Key == k {
			return m.Count
		}
	}
	return 0
}

// gone says whether a response's client can no longer take it: the
// writer's handle closed or given up (an add's answer), a recovery over
// (a recovery's answers). Java reads such an answer and drops it (its op
// is complete); the model leaves it in flight for ever.
func gone(s *spec.State, k spec.MsgKey) bool {
	st := s.Clients[k.Cid()].Status
	switch k.Type() {
	case spec.AddEntryResponse:
		if k.Recovery() {
			return st != spec.StatusInRecovery
		}
		return st != spec.StatusOpen
	case spec.FenceResponse:
		// Only the fencing phase takes an answer to a fencing read
		// (ReadLastConfirmedOp completes once it has enough): a late one
		// is read and dropped.
		c := &s.Clients[k.Cid()]
		return c.RecoveryPhase != spec.FencingPhase || st != spec.StatusInRecovery && st != spec.RecoveryAborted
	case spec.ReadResponse:
		return st != spec.StatusInRecovery
	}
	return false
}

// decode decodes a state the search encoded; a failure is the model's
// own encoding failing, a bug of bkcheck.
func decode(m *spec.Model, enc []byte, s *spec.State) {
	if err := m.Decode(enc, s); err != nil {
		panic(fmt.Sprintf("validate: a state the model encoded does not decode: %v", err))
	}
}

func copyState(t *spec.State) spec.State {
	var s spec.State
	s.CopyFrom(t)
	return s
}

// stuckAt says where the model stopped: the events the best nodes matched,
// the rest, and what the model could do from there.
func stuckAt(m *spec.Model, gi int, g record.Group, shownIdx, delivered []int, best []*node) *Stuck {
	st := &Stuck{Group: gi, Cause: g.Cause}
	n := best[0]
	var s spec.State
	decode(m, n.enc, &s)
	for j, i := range shownIdx {
		if n.mask&(1<<uint(j)) != 0 {
			st.Taken = append(st.Taken, g.Events[i])
		} else {
			st.Left = append(st.Left, g.Events[i])
		}
	}
	var start spec.State
	decode(m, n.start, &start)
	for _, i := range delivered {
		if processedMsg(&start, &s, g.Events[i].Msg) {
			st.Taken = append(st.Taken, g.Events[i])
		} else {
			st.Left = append(st.Left, g.Events[i])
		}
	}
	seen := map[string]bool{}
	var bs, scratch spec.State
	for _, b := range best {
		if b.mask != n.mask {
			continue
		}
		decode(m, b.enc, &bs)
		m.Next(&bs, &scratch, func(a spec.Action, t *spec.State) {
			v := project(m.P, a, &bs, t)
			if len(v.shown) == 0 {
				return
			}
			o := Option{Action: a.String()}
			for _, s := range v.shown {
				o.Shows = append(o.Shows, s.ev)
			}
			k := o.String()
			if !seen[k] && len(st.Options) < 24 {
				seen[k] = true
				st.Options = append(st.Options, o)
			}
		})
	}
	sort.Slice(st.Options, func(i, j int) bool { return st.Options[i].String() < st.Options[j].String() })
	return st
}

// WriteStuck writes, for people, where the model could not follow the
// record (nothing for a VALID record).
func (r *Result) WriteStuck(w io.Writer) {
	st := r.Stuck
	if st == nil {
		return
	}
	fmt.Fprintf(w, "  the model follows the first %d of %d groups; group %d (%s):\n", r.Matched, r.Groups, st.Group, st.Cause)
	for _, e := range st.Taken {
		fmt.Fprintf(w, "    matched:     %s\n", e)
	}
	for _, e := range st.Left {
		fmt.Fprintf(w, "    not matched: %s\n", e)
	}
	if len(st.Options) == 0 {
		fmt.Fprintln(w, "  the model can show nothing more there")
		return
	}
	fmt.Fprintln(w, "  what the model could do there instead:")
	for _, o := range st.Options {
		fmt.Fprintf(w, "    %s\n", o)
	}
}

func (o Option) String() string {
	var parts []string
	for _, e := range o.Shows {
		parts = append(parts, e.String())
	}
	return o.Action + ": " + strings.Join(parts, "; ")
}

// witness is the behaviour that ends at n, oldest step first.
func witness(m *spec.Model, n *node) []Step {
	var steps []Step
	for ; n.parent != nil; n = n.parent {
		st := Step{Action: n.act, Group: n.group, Shows: n.shows}
		decode(m, n.enc, &st.State)
		steps = append(steps, st)
	}
	for i, j := 0, len(steps)-1; i < j; i, j = i+1, j-1 {
		steps[i], steps[j] = steps[j], steps[i]
	}
	return steps
}

// Trace is the witness of a VALID record as a trace of the model m (the
// model it was validated against): a behaviour of the model that shows
// exactly the record, to render or replay like any trace.
func (r *Result) Trace(m *spec.Model) *traces.Trace {
	// A witness, as a CEL probe's is: the property (true) holds in its
	// last state; the trace's point is the path.
	tr := &traces.Trace{Model: spec.Vocabulary(m.P), Kind: "probe", Invariant: "ValidatedRecord", Expression: "true",
		Statement: "a behaviour of the model that shows exactly the record", Steps: []traces.Step{{Initial: true, State: m.Init()}}}
	for _, st := range r.Witness {
		tr.Steps = append(tr.Steps, traces.Step{Action: st.Action, State: st.State})
	}
	return tr
}

// Model is the model a record's header names, with its settings.
func Model(h record.Header) (*spec.Model, error) {
	var probs []string
	if h.Model != "current" {
		probs = append(probs, fmt.Sprintf("the record is of model %q; bkcheck validate checks records against the current model", h.Model))
	}
	var p spec.Params
	if err := spec.ParamsSchema.DecodeJSON(h.Params, &p); err != nil {
		probs = append(probs, "its params: "+err.Error())
	}
	if h.Source == record.Bookies {
		if p.BookKeeper != h.Release {
			probs = append(probs, fmt.Sprintf("release %s ran, but its params are of the model of %q: a record is validated against the BookKeeper model of the release that ran", h.Release, p.BookKeeper))
		}
		if !contains(spec.HarnessReleases, h.Release) {
			probs = append(probs, fmt.Sprintf("release %s is not one the harness runs (%s)", h.Release, strings.Join(spec.HarnessReleases, ", ")))
		}
	}
	if len(probs) > 0 {
		return nil, errors.New(strings.Join(probs, "; "))
	}
	return spec.NewModel(p)
}
