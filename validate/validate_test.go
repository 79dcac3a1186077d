package validate

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/record"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
	"github.com/bkcheck/bkcheck/vocab"
)

func resolve(model string, params json.RawMessage) (vocab.Model, error) {
	if model != "" && model != "current" {
		return nil, fmt.Errorf("model %s", model)
	}
	return spec.VocabularyFromJSON(params)
}

// pageTraces are the traces of the current model on the pages.
func pageTraces(t *testing.T) map[string]*traces.Trace {
	var paths []string
	for _, pat := range []string{"../docs/traces/*.itf.json", "../docs/traces/*/*.itf.json"} {
		ps, _ := filepath.Glob(pat)
		paths = append(paths, ps...)
	}
	out := map[string]*traces.Trace{}
	for _, p := range paths {
		tr, err := traces.ReadITFFile(p, resolve)
		if err != nil {
			if strings.Contains(err.Error(), "model ") {
				continue
			}
			t.Fatalf("%s: %v", p, err)
		}
		out[strings.TrimPrefix(p, "../docs/traces/")] = tr
	}
	if len(out) < 50 {
		t.Fatalf("only %d page traces of the current model", len(out))
	}
	return out
}

// TestPageTracesValidate: every behaviour of the model, recorded as the
// harness would have seen it, is VALID.
func TestPageTracesValidate(t *testing.T) {
	for name, tr := range pageTraces(t) {
		r, err := FromTrace(tr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, err := Record(r, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Verdict != Valid {
			t.Errorf("%s: %s after %d of %d groups: %+v", name, res.Verdict, res.Matched, res.Groups, res.Stuck)
			continue
		}
		// The witness is a behaviour of the model, and shows the record.
		m, _ := Model(r.Header)
		wt := res.Trace(m)
		again, err := FromTrace(wt)
		if err != nil {
			t.Fatal(err)
		}
		if res2, err := Against(m, again, Options{}); err != nil || res2.Verdict != Valid || len(again.Groups) != len(r.Groups) {
			t.Errorf("%s: the witness's own record: %v %+v (%d groups, the record %d)", name, err, res2, len(again.Groups), len(r.Groups))
		}
		t.Logf("%s: %d groups, %d states", name, res.Groups, res.States)
	}
}

var _ = record.Format

// mutations change one recorded fact; each must make the record INVALID
// at the group it touched, not before and not later.
var mutations = []struct {
	name string
	// apply mutates r in place and returns the group (0-based) it
	// touched, or -1 when the record has nothing to mutate.
	apply func(r *record.Record) int
}{
	{"a response's return code", func(r *record.Record) int {
		for gi, g := range r.Groups {
			for i, e := range g.Events {
				if e.Kind == record.Send && (e.Msg.Type == "AddEntryResponse" || e.Msg.Type == "ReadResponse") {
					m := *e.Msg
					m.RC = map[bool]string{true: record.EReadOnly, false: record.EOK}[m.RC == record.EOK]
					if m.Type == "ReadResponse" {
						m.RC = map[bool]string{true: record.EFenced, false: record.EOK}[e.Msg.RC == record.EOK]
					}
					r.Groups[gi].Events[i].Msg = &m
					return gi
				}
			}
		}
		return -1
	}},
	{"an add request's entry", func(r *record.Record) int {
		for gi, g := range r.Groups {
			for i, e := range g.Events {
				if e.Kind == record.Send && e.Msg.Type == "AddEntryRequest" {
					m := *e.Msg
					m.Entry += 7
					r.Groups[gi].Events[i].Msg = &m
					return gi
				}
			}
		}
		return -1
	}},
	{"a metadata version", func(r *record.Record) int {
		for gi, g := range r.Groups {
			for i, e := range g.Events {
				if e.Kind == record.Meta {
					l := *e.Meta
					l.Version += 5
					r.Groups[gi].Events[i].Meta = &l
					return gi
				}
			}
		}
		return -1
	}},
	{"an acknowledgement the writer never had", func(r *record.Record) int {
		for gi, g := range r.Groups {
			for _, e := range g.Events {
				if e.Kind == record.Acked {
					r.Groups[gi].Events = append(r.Groups[gi].Events, record.Event{Kind: record.Acked, Client: e.Client, Entry: e.Entry + 5})
					return gi
				}
			}
		}
		return -1
	}},
	{"a frame delivered in the group that sent it", func(r *record.Record) int {
		for gi, g := range r.Groups {
			for _, e := range g.Events {
				if e.Kind == record.Deliver && gi > 0 {
					for gj := gi - 1; gj >= 0; gj-- {
						for _, s := range r.Groups[gj].Events {
							if s.Kind == record.Send && s.Msg.String() == e.Msg.String() {
								r.Groups[gj].Events = append(r.Groups[gj].Events, e)
								return gj
							}
						}
					}
				}
			}
		}
		return -1
	}},
	{"a crash of another bookie", func(r *record.Record) int {
		for gi, g := range r.Groups {
			for i, e := range g.Events {
				if e.Kind == record.Crash {
					r.Groups[gi].Events[i].Bookie = "b9"
					return gi
				}
			}
		}
		return -1
	}},
}

// TestMutatedTracesInvalid: each mutation of each page trace's record is
// INVALID exactly at the group it touched.
func TestMutatedTracesInvalid(t *testing.T) {
	fired := map[string]int{}
	for name, tr := range pageTraces(t) {
		for _, mu := range mutations {
			r, err := FromTrace(tr)
			if err != nil {
				t.Fatal(err)
			}
			at := mu.apply(r)
			if at < 0 {
				continue
			}
			fired[mu.name]++
			res, err := Record(r, Options{})
			if err != nil {
				t.Fatalf("%s, %s: %v", name, mu.name, err)
			}
			if res.Verdict != Invalid || res.Matched != at || res.Stuck.Group != at+1 {
				t.Errorf("%s, %s in group %d: %s after %d groups", name, mu.name, at+1, res.Verdict, res.Matched)
			}
		}
	}
	for _, mu := range mutations {
		if fired[mu.name] == 0 {
			t.Errorf("mutation %q touched no page trace", mu.name)
		}
	}
	t.Log(fired)
}

// TestModelPairs: the pairs of a small BookKeeper model include both
// answers of a bookie to an add, and a witness of the model's own
// behaviour takes only pairs among them.
func TestModelPairs(t *testing.T) {
	p := spec.DefaultParams()
	p.BookKeeper, p.Bookies, p.Ensemble, p.WriteQuorum, p.AckQuorum, p.Entries, p.Inflight, p.ReliableNetwork = "4.18.2", 2, 2, 2, 1, 1, 1, true
	m, err := spec.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	all, complete := ModelPairs(m, 100_000)
	if !complete {
		t.Fatal("the model has more than 100,000 states")
	}
	for _, want := range []Pair{{"BookieSendsAddConfirmedResponse", "AddEntryResponse EOK"}, {"ClientReceivesAddConfirmedResponse", "acked"}, {"ClientReceivesAddConfirmedResponse", "silent"}} {
		if !all[want] {
			t.Errorf("the model's pairs lack %s", want)
		}
	}
	// A walk of the model, recorded and validated: its witness's pairs.
	s := m.Init()
	var scratch spec.State
	steps := []traces.Step{{Initial: true, State: copyState(&s)}}
	for i := 0; i < 25; i++ {
		var next *spec.State
		var act spec.Action
		m.Next(&s, &scratch, func(a spec.Action, t *spec.State) {
			if next == nil || i%3 == 0 {
				c := copyState(t)
				next, act = &c, a
			}
		})
		if next == nil {
			break
		}
		s = *next
		steps = append(steps, traces.Step{Action: act, State: copyState(&s)})
	}
	r, err := FromTrace(&traces.Trace{Model: spec.Vocabulary(m.P), Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Against(m, r, Options{})
	if err != nil || res.Verdict != Valid {
		t.Fatal(err, res.Verdict)
	}
	for _, pr := range Pairs(res.Witness) {
		if !all[pr] {
			t.Errorf("witness pair %s not among the model's", pr)
		}
	}
	t.Logf("%d pairs; the walk took %d steps", len(all), len(steps)-1)
}
