// Package record is the file format of a run of real BookKeeper as the
// harness observed it: what ran (the release, the model's settings that
// describe the cluster and the workload, the seed of the scheduler) and what
// was seen, in groups. A group is one decision of the environment (a frame
// delivered, a write timed out, a bookie killed, a metadata write let
// through, a call of the workload) with every observable event it caused:
// frames the proxy caught, callbacks, metadata written, faults.
//
// The names are the model's (clients c1.., bookies b1.., message types,
// entries counted from 1), the facts the wire's: a record says nothing a
// frame, a callback, ZooKeeper or the harness's own hand did not show.
// The harness writes records (package bridge); bkcheck validate reads them
// and asks whether the model has a behaviour that shows exactly that
// (package validate). This package is the door between the two, and
// imports neither.
//
// On disk a record is JSON lines: a header, one line per group, and an end
// line that counts the groups, so that a truncated file is told from a
// short run.
package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Format names this version of the format; a header names it.
const Format = "bkcheck-record/1"

// Header says what ran.
type Header struct {
	Format string `json:"format"`
	// Model is the checker's model the record is to be validated against
	// ("current"); Params its settings (the model's parameter schema, as a
	// trace records them): the cluster's size, the ledger's E, Qw and Qa,
	// the workload's bounds and the release (bookkeeper).
	Model  string          `json:"model"`
	Params json.RawMessage `json:"params"`
	// Source is what ran: Bookies (released bookies under the harness) or
	// ModelTrace (a behaviour of the model, projected: a record that must
	// validate by construction).
	Source string `json:"source"`
	// Release is the bookkeeper-server version that ran (Bookies only).
	Release string `json:"release,omitempty"`
	// Seed and Steering say how the scheduler chose (for a rerun).
	Seed     int64  `json:"seed"`
	Steering string `json:"steering,omitempty"`
	// Workload names what the clients were asked to do.
	Workload string `json:"workload,omitempty"`
}

// The sources of a record.
const (
	Bookies    = "bookies"
	ModelTrace = "model-trace"
)

// Group is one decision of the environment and what it caused.
type Group struct {
	// Cause is the decision, for people ("deliver c1->b2 add request e2",
	// "kill -9 b1", "c2 opens the ledger with recovery").
	Cause  string  `json:"cause"`
	Events []Event `json:"events"`
}

// The kinds of events.
const (
	// Send: the proxy caught a frame from a client or a bookie.
	Send = "send"
	// Deliver: the proxy forwarded a frame to its destination.
	Deliver = "deliver"
	// Timeout: a client's request (Msg) failed without an answer: its
	// timeout, or its connection closed or refused.
	Timeout = "timeout"
	// Meta: the ledger's metadata as written (a write ZooKeeper took).
	Meta = "meta"
	// Deleted: the ledger's metadata was deleted.
	Deleted = "deleted"
	// Acked: a writer's add callback with OK for Entry.
	Acked = "acked"
	// Status: a client's handle of the ledger changed state (created
	// OPEN, recovered or closed CLOSED, ...): Client, Status.
	Status = "status"
	// Crash, Restart, DiskLost, Rejoin, ReadOnly: what the harness did
	// to a bookie: kill -9, start again, wipe its disks, format and start
	// it empty, turn it read-only.
	Crash    = "crash"
	Restart  = "restart"
	DiskLost = "disk-lost"
	Rejoin   = "rejoin"
	ReadOnly = "read-only"
	DiskFull = "disk-full"
)

// kinds are the event kinds and what each requires.
var kinds = map[string]struct{ client, bookie, msg, meta, entry, status bool }{
	Send:     {msg: true},
	Deliver:  {msg: true},
	Timeout:  {msg: true},
	Meta:     {meta: true},
	Deleted:  {},
	Acked:    {client: true, entry: true},
	Status:   {client: true, status: true},
	Crash:    {bookie: true},
	Restart:  {bookie: true},
	DiskLost: {bookie: true},
	Rejoin:   {bookie: true},
	ReadOnly: {bookie: true},
	DiskFull: {bookie: true},
}

// Event is one observable event.
type Event struct {
	Kind   string   `json:"kind"`
	Client string   `json:"client,omitempty"`
	Bookie string   `json:"bookie,omitempty"`
	Msg    *Message `json:"msg,omitempty"`
	Meta   *Ledger  `json:"meta,omitempty"`
	Entry  int      `json:"entry,omitempty"`
	Status string   `json:"status,omitempty"`
}

// Message is a frame in the model's names. Fields the wire does not carry
// for the type are left out (a response has no recovery flag); optional
// ones the recorder did not read are nil and not compared.
type Message struct {
	Type     string `json:"type"` // AddEntryRequest, AddEntryResponse, FenceRequest, FenceResponse, ReadRequest, ReadResponse
	Client   string `json:"client"`
	Bookie   string `json:"bookie"`
	Entry    int    `json:"entry,omitempty"`    // from 1; 0 for a fencing read of the LAC and its answer
	Recovery bool   `json:"recovery,omitempty"` // an add request's FLAG_RECOVERY_ADD
	Fence    bool   `json:"fence,omitempty"`    // a read request's FLAG_DO_FENCING
	RC       string `json:"rc,omitempty"`       // a response's return code: EOK, ENoLedger, ENoEntry, EFenced, EReadOnly
	LAC      *int   `json:"lac,omitempty"`      // the LAC an add request or a read response carries, when read
}

// Ledger is the ledger's metadata as written.
type Ledger struct {
	Status    string     `json:"status"` // OPEN, IN_RECOVERY, CLOSED
	Version   int        `json:"version"`
	Ensembles []Ensemble `json:"ensembles"`
	LastEntry *int       `json:"last-entry,omitempty"` // CLOSED only; 0: empty
}

// Ensemble is one fragment of the metadata: its first entry and bookies in
// ensemble order.
type Ensemble struct {
	First   int      `json:"first"`
	Bookies []string `json:"bookies"`
}

// Return codes of BookKeeper's v2 protocol, by name.
const (
	EOK       = "EOK"
	ENoLedger = "ENoLedger"
	ENoEntry  = "ENoEntry"
	EFenced   = "EFenced"
	EReadOnly = "EReadOnly"
	EUnknown  = "EUnknown" // a bookie in limbo cannot say whether it had the entry
)

var rcs = map[string]bool{EOK: true, ENoLedger: true, ENoEntry: true, EFenced: true, EReadOnly: true, EUnknown: true}

var msgTypes = map[string]struct{ request, entry bool }{
	"AddEntryRequest":  {request: true, entry: true},
	"AddEntryResponse": {entry: true},
	"FenceRequest":     {request: true},
	"FenceResponse":    {},
	"ReadRequest":      {request: true, entry: true},
	"ReadResponse":     {entry: true},
}

// IsRequest says whether a message type travels from client to bookie.
func IsRequest(typ string) bool { return msgTypes[typ].request }

// statuses are the ledger's (metadata) statuses; clientStatuses a
// client's handle's, which adds how a recovery or a writer gave up.
var (
	statuses       = map[string]bool{"OPEN": true, "IN_RECOVERY": true, "CLOSED": true}
	clientStatuses = map[string]bool{"OPEN": true, "IN_RECOVERY": true, "CLOSED": true, "CLIENT_WITHDRAWN": true, "RECOVERY_ABORTED": true}
)

// Record is a whole record.
type Record struct {
	Header Header
	Groups []Group
}

// end is a record's last line.
type end struct {
	End struct {
		Groups int `json:"groups"`
	} `json:"end"`
}

// Write writes r as JSON lines.
func (r *Record) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	if err := enc.Encode(r.Header); err != nil {
		return err
	}
	for _, g := range r.Groups {
		if err := enc.Encode(g); err != nil {
			return err
		}
	}
	var e end
	e.End.Groups = len(r.Groups)
	return enc.Encode(e)
}

// WriteFile writes r to path whole or not at all (a temporary file renamed).
func (r *Record) WriteFile(path string) error {
	var b bytes.Buffer
	if err := r.Write(&b); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadFile reads and checks the record at path.
func ReadFile(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := Read(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Problems is every problem found in a record, one per line.
type Problems []string

func (ps Problems) Error() string {
	if len(ps) == 1 {
		return "not a valid record: " + ps[0]
	}
	return "not a valid record:\n  " + strings.Join(ps, "\n  ")
}

// Read parses and checks a record: its header, every group and event, and
// its end line. The error lists every problem found (Problems), or says
// the file is not a record at all.
func Read(b []byte) (*Record, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var ps Problems
	add := func(line int, format string, args ...any) {
		ps = append(ps, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
	}
	r := &Record{}
	line, ended := 0, false
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if ended {
			add(line, "text after the end line")
			break
		}
		if line == 1 {
			if err := strict(text, &r.Header); err != nil || r.Header.Format == "" {
				return nil, fmt.Errorf("not a record (its first line is not a %s header)", Format)
			}
			checkHeader(r.Header, func(f string, a ...any) { add(1, f, a...) })
			continue
		}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(text, &probe); err != nil {
			add(line, "not JSON: %v", err)
			continue
		}
		if _, ok := probe["end"]; ok {
			var e end
			if err := strict(text, &e); err != nil {
				add(line, "end line: %v", err)
			} else if e.End.Groups != len(r.Groups) {
				add(line, "the end line counts %d groups, the record has %d", e.End.Groups, len(r.Groups))
			}
			ended = true
			continue
		}
		var g Group
		if err := strict(text, &g); err != nil {
			add(line, "group: %v", err)
			continue
		}
		checkGroup(g, func(f string, a ...any) { add(line, f, a...) })
		r.Groups = append(r.Groups, g)
	}
	if err := sc.Err(); err != nil {
		ps = append(ps, err.Error())
	}
	if line == 0 {
		return nil, errors.New("not a record (empty)")
	}
	if !ended {
		ps = append(ps, fmt.Sprintf("truncated: no end line after %d groups", len(r.Groups)))
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return r, nil
}

func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func checkHeader(h Header, add func(string, ...any)) {
	if h.Format != Format {
		add("format %q, this bkcheck reads %q", h.Format, Format)
	}
	if h.Model == "" {
		add("no model")
	}
	if len(h.Params) == 0 {
		add("no params")
	}
	switch {
	case h.Source == Bookies && h.Release == "":
		add("a record of bookies names no release")
	case h.Source == ModelTrace && h.Release != "":
		add("a record of a model trace names a release (%s)", h.Release)
	case h.Source != Bookies && h.Source != ModelTrace:
		add("source %q (%s or %s)", h.Source, Bookies, ModelTrace)
	}
}

func checkGroup(g Group, add func(string, ...any)) {
	if g.Cause == "" {
		add("a group without a cause")
	}
	for i, e := range g.Events {
		where := fmt.Sprintf("event %d (%s): ", i+1, e.Kind)
		need, ok := kinds[e.Kind]
		if !ok {
			add("event %d: unknown kind %q (%s)", i+1, e.Kind, strings.Join(kindNames(), ", "))
			continue
		}
		if need.client && !isName(e.Client, 'c') {
			add(where+"client %q is not c1, c2, ...", e.Client)
		}
		if need.bookie && !isName(e.Bookie, 'b') {
			add(where+"bookie %q is not b1, b2, ...", e.Bookie)
		}
		if need.entry && e.Entry < 1 {
			add(where+"entry %d (entries count from 1)", e.Entry)
		}
		if need.status && !clientStatuses[e.Status] {
			add(where+"status %q", e.Status)
		}
		if need.msg {
			if e.Msg == nil {
				add(where + "no msg")
			} else {
				checkMessage(*e.Msg, e.Kind, func(f string, a ...any) { add(where+f, a...) })
			}
		}
		if need.meta {
			if e.Meta == nil {
				add(where + "no meta")
			} else {
				checkLedger(*e.Meta, func(f string, a ...any) { add(where+f, a...) })
			}
		}
	}
}

func checkMessage(m Message, kind string, add func(string, ...any)) {
	t, ok := msgTypes[m.Type]
	if !ok {
		add("message type %q", m.Type)
		return
	}
	if !isName(m.Client, 'c') || !isName(m.Bookie, 'b') {
		add("message between %q and %q (clients c1.., bookies b1..)", m.Client, m.Bookie)
	}
	if t.entry != (m.Entry >= 1) {
		add("%s with entry %d", m.Type, m.Entry)
	}
	if kind == Timeout && !t.request {
		add("a timeout names the request, not %s", m.Type)
	}
	if t.request != (m.RC == "") {
		add("%s with rc %q", m.Type, m.RC)
	}
	if m.RC != "" && !rcs[m.RC] {
		add("rc %q", m.RC)
	}
	if m.Recovery && m.Type != "AddEntryRequest" {
		add("recovery flag on %s", m.Type)
	}
	if m.Fence && m.Type != "ReadRequest" {
		add("fence flag on %s", m.Type)
	}
}

func checkLedger(l Ledger, add func(string, ...any)) {
	if !statuses[l.Status] {
		add("metadata status %q", l.Status)
	}
	if l.Version < 1 {
		add("metadata version %d", l.Version)
	}
	for _, e := range l.Ensembles {
		for _, b := range e.Bookies {
			if !isName(b, 'b') {
				add("ensemble bookie %q", b)
			}
		}
	}
	if (l.LastEntry != nil) != (l.Status == "CLOSED") {
		add("last-entry given with status %s", l.Status)
	}
}

func isName(s string, prefix byte) bool {
	if len(s) < 2 || s[0] != prefix {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s[1] != '0'
}

func kindNames() []string {
	var ns []string
	for k := range kinds {
		ns = append(ns, k)
	}
	sort.Strings(ns)
	return ns
}

// String renders a message for people: "c1->b2 AddEntryRequest e2 lac=1".
func (m Message) String() string {
	from, to := m.Client, m.Bookie
	if !IsRequest(m.Type) {
		from, to = to, from
	}
	s := fmt.Sprintf("%s->%s %s", from, to, m.Type)
	if m.Entry > 0 {
		s += fmt.Sprintf(" e%d", m.Entry)
	}
	if m.LAC != nil {
		s += fmt.Sprintf(" lac=%d", *m.LAC)
	}
	if m.Recovery {
		s += " recovery"
	}
	if m.Fence {
		s += " fence"
	}
	if m.RC != "" {
		s += " " + m.RC
	}
	return s
}

// String renders the ledger's metadata: "CLOSED v3 [e1: b1,b2] last entry 2".
func (l Ledger) String() string {
	s := fmt.Sprintf("%s v%d", l.Status, l.Version)
	for _, e := range l.Ensembles {
		s += fmt.Sprintf(" [e%d: %s]", e.First, strings.Join(e.Bookies, ","))
	}
	if l.LastEntry != nil {
		s += fmt.Sprintf(" last entry %d", *l.LastEntry)
	}
	return s
}

// String renders an event for people.
func (e Event) String() string {
	switch e.Kind {
	case Send:
		return "sent " + e.Msg.String()
	case Deliver:
		return "delivered " + e.Msg.String()
	case Timeout:
		return "failed unanswered: " + e.Msg.String()
	case Meta:
		return "metadata written: " + e.Meta.String()
	case Deleted:
		return "metadata deleted"
	case Acked:
		return fmt.Sprintf("%s's add of e%d completed OK", e.Client, e.Entry)
	case Status:
		return fmt.Sprintf("%s's handle %s", e.Client, e.Status)
	}
	return e.Kind + " " + e.Bookie
}
