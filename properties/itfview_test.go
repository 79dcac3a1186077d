package properties

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"cel.dev/cel-go/common/types"

	"github.com/bkcheck/bkcheck/spec413"
)

// The ITF view's tests that need no typed view; those that compare it
// with the current model's typed view are spec/specprops's
// (itfview_test.go there).

// TestITFValues: the conversion rule, value by value.
func TestITFValues(t *testing.T) {
	state := map[string]any{
		"s":     map[string]any{"#set": []any{"b2", "b1"}},
		"sq":    []any{json.Number("3"), 1.0, 2},
		"tup":   map[string]any{"#tup": []any{"a", true}},
		"rec":   map[string]any{"id": 1, "status": "Nil", "data": "Nil"},
		"fn":    map[string]any{"#map": []any{[]any{"c2", 7}, []any{"c1", 8}}},
		"ints":  map[string]any{"#map": []any{[]any{2, "x"}, []any{1, "y"}}},
		"bag":   map[string]any{"#map": []any{[]any{map[string]any{"type": "A", "n": 1}, 1}, []any{map[string]any{"type": "B"}, -1}}},
		"pairs": map[string]any{"#map": []any{[]any{map[string]any{"#set": []any{1}}, "one"}}},
		"kv":    map[string]any{"#map": []any{[]any{map[string]any{"count": 3}, 1}}},
		"empty": map[string]any{"#map": []any{}},
		"big":   map[string]any{"#bigint": "12345678901"},
		"n":     "Nil",
		"bad":   1.5,
		"dup":   map[string]any{"#map": []any{[]any{1, 1}, []any{1, 2}}},
	}
	var vars []string
	for k := range state {
		vars = append(vars, k)
	}
	vars = append(vars, "missing")
	for _, c := range []struct {
		expr string
		want any // bool, or a string the error contains
	}{
		{`s == ["b2", "b1"] && s[0] == "b2"`, true},
		{`sq == [3, 1, 2] && sq.all(x, type(x) == int)`, true},
		{`tup[1] && size(tup) == 2`, true},
		{`rec.id == 1 && rec.status == Nil && has(rec.data) && !has(rec.lac)`, true},
		{`rec.lac == 1`, "no such key: lac"},
		{`fn["c1"] == 8 && fn.c2 == 7 && fn.map(k, k) == ["c2", "c1"] && [fn.all(k, v, v > 6)].all(b, b)`, true},
		{`fn.exists(k, v, k == "c3")`, false},
		{`ints[1] == "y" && ints.map(k, k) == [2, 1] && 2 in ints`, true},
		{`bag == [{"count": 1, "n": 1, "type": "A"}, {"count": -1, "type": "B"}] && bag.exists(m, m.type == "B" && m.count == -1)`, true},
		{`pairs == [{"key": [1], "value": "one"}]`, true},
		{`kv == [{"key": {"count": 3}, "value": 1}]`, true},
		{`size(empty) == 0 && empty.all(k, false) && !empty.exists(k, v, true)`, true},
		{`big == 12345678901`, true},
		{`n == Nil && n == "Nil" && n != 0`, true},
		{`bad == 1`, "1.5 is not an integer"},
		{`size(dup) == 2`, "the key 1 is given twice"},
		{`missing == 1`, "the state has no variable missing"},
		{`sq`, "the expression gave [3, 1, 2], not a bool"},
		{`seq(1, 3) == sq || seq(2, 1) != [] || seq(1, sq[0]).size() != 3`, false},
		{`seq(1, 3) + [4] == [1, 2, 3, 4] && seq(1, 3).map(i, i * 2) == [2, 4, 6]`, true},
	} {
		set, err := CompileITF(vars, nil, []Def{{Name: "V", Kind: Invariant, Expr: c.expr}})
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		ev, err := set.NewEvaluator()
		if err != nil {
			t.Fatal(err)
		}
		ev.Load(state)
		got, err := ev.Holds(0)
		switch w := c.want.(type) {
		case bool:
			if err != nil || got != w {
				t.Errorf("%s: %t, %v; want %t", c.expr, got, err, w)
			}
		case string:
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %t, %v; want an error with %q", c.expr, got, err, w)
			}
		}
	}
	// Parameters: kebab-case names, Go values.
	set, err := CompileITF(nil, map[string]any{"write-quorum": 3, "recovery-reads-fence": true, "variant": "x", "ids": []string{"b1", "b2"}, "n8": int8(-2)},
		[]Def{{Name: "P", Kind: Invariant, Expr: `params.write_quorum == 3 && params.recovery_reads_fence && params.variant == "x" && params.ids == ["b1", "b2"] && params.n8 == -2`}})
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := set.NewEvaluator()
	ev.Load(nil)
	if ok, err := ev.Holds(0); !ok || err != nil {
		t.Errorf("params: %t, %v", ok, err)
	}
	// A model's variable named Nil is the model's.
	set, err = CompileITF([]string{"Nil"}, nil, []Def{{Name: "N", Kind: Invariant, Expr: `Nil == 3`}})
	if err != nil {
		t.Fatal(err)
	}
	ev, _ = set.NewEvaluator()
	ev.Load(map[string]any{"Nil": 3})
	if ok, err := ev.Holds(0); !ok || err != nil {
		t.Errorf("a variable Nil: %t, %v", ok, err)
	}
	if _, err := ITFValue(map[string]any{"#set": []any{nil}}); err == nil {
		t.Error("null accepted")
	}
	if v, err := ITFValue(map[string]any{"#set": []any{}}); err != nil || v.Equal(types.NewRefValList(types.DefaultTypeAdapter, nil)) != types.True {
		t.Errorf("empty set: %v, %v", v, err)
	}
}

// states413 are the first max states of a breadth-first search of the
// v4.13 model, and the states of uniform random walks.
func states413(t *testing.T, p spec413.Params, max, walks int) []spec413.State {
	t.Helper()
	m, err := spec413.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	queue := []spec413.State{m.Init()}
	seen[string(m.Encode(nil, &queue[0]))] = true
	var scratch spec413.State
	for i := 0; i < len(queue) && len(queue) < max; i++ {
		m.Next(&queue[i], &scratch, func(_ spec413.Action, next *spec413.State) {
			if k := string(m.Encode(nil, next)); len(queue) < max && !seen[k] {
				seen[k] = true
				var c spec413.State
				c.CopyFrom(next)
				queue = append(queue, c)
			}
		})
	}
	rng := rand.New(rand.NewPCG(3, uint64(walks)))
	var succ []spec413.State
	for w := 0; w < walks; w++ {
		s := m.Init()
		for step := 0; step < 60; step++ {
			queue = append(queue, s)
			succ = succ[:0]
			m.Next(&s, &scratch, func(_ spec413.Action, next *spec413.State) {
				var c spec413.State
				c.CopyFrom(next)
				succ = append(succ, c)
			})
			if len(succ) == 0 {
				break
			}
			s = succ[rng.IntN(len(succ))]
		}
	}
	return queue
}

// TestITFModel413: the use the ITF view is for, a model without a typed
// view. On states of the v4.13 model, the CEL forms of its invariants
// agree with its compiled ones (spec413.Invariants), and expressions over
// each of its variables with the Go reading of the state.
func TestITFModel413(t *testing.T) {
	p := spec413.Shipped()
	m := spec413.Vocabulary(p)
	closed := func(s *spec413.State) bool { return s.MetaStatus == spec413.StatusClosed }
	cases := []struct {
		def   Def
		holds func(s *spec413.State) bool
		each  bool // the sample decides it both ways
	}{
		{Def{Expr: `w1.status != "STATUS_INVALID" && w2.status != "STATUS_INVALID"`, Name: "OnlyValidFragments"}, nil, false},
		{Def{Expr: `b_entries.all(b, es, es.all(e, e.data == e.id))`, Name: "NoOutOfOrderEntries"}, nil, false},
		{Def{Expr: `meta_status != "STATUS_CLOSED" || w1.lac <= meta_last_entry`, Name: "NoDivergenceBetweenWriterAndMetaData"}, nil, false}, // #2614 is 20 steps deep
		{Def{Name: "AllCommittedEntriesReachAckQuorum", Expr: `meta_status != "STATUS_CLOSED" || seq(1, meta_last_entry).all(e, cel.bind(n, size(meta_fragments),
  cel.bind(fs, n == 1 || n > 1 && meta_fragments[n - 1].first_entry_id <= e ? [meta_fragments[n - 1]] :
    meta_fragments.filter(f, f.first_entry_id <= e && meta_fragments.exists(x, x.id == f.id + 1 && x.first_entry_id > e)),
  size(fs) > 0 && size(fs[0].ensemble.filter(b, b_entries[b].exists(x, x.id == e))) >= params.ack_quorum)))`}, nil, false},
		{Def{Name: "Closed", Expr: `meta_status == "STATUS_CLOSED"`}, closed, true},
		{Def{Name: "W1Acked", Expr: `w1.lac >= 1 && w1.status == "STATUS_OPEN"`}, func(s *spec413.State) bool {
			return s.W[spec413.W1].LAC >= 1 && s.W[spec413.W1].Status == spec413.StatusOpen
		}, true},
		{Def{Name: "W2Fencing", Expr: `w2.recovery_phase >= 1 && size(w2.fenced) < params.write_quorum`}, func(s *spec413.State) bool {
			return s.W[spec413.W2].RecoveryPhase >= 1 && s.W[spec413.W2].Fenced.Len() < p.WriteQuorum
		}, true},
		{Def{Name: "Lost", Expr: `messages.exists(m, m.count == -1 && m.bookie == "b2")`}, func(s *spec413.State) bool {
			for _, msg := range s.Msgs {
				if msg.Count == -1 && msg.Key.Bookie() == 1 {
					return true
				}
			}
			return false
		}, true},
		{Def{Name: "Fenced", Expr: `b_fenced.exists(b, f, f) && b_lac.all(b, lac, lac == 0)`}, func(s *spec413.State) bool {
			return s.BFenced != 0 && s.BLAC == [len(s.BLAC)]int8{}
		}, true},
		{Def{Name: "Confirmed", Expr: `size(w1.confirmed[1]) >= params.ack_quorum && w1.curr_fragment != Nil && w1.meta_version != Nil`}, func(s *spec413.State) bool {
			w := &s.W[spec413.W1]
			return w.Confirmed[0].Len() >= p.AckQuorum && w.CurrFragment.ID != 0 && w.MetaVersion != spec413.Nil
		}, true},
		{Def{Name: "Reads", Expr: `w2.curr_read_entry != Nil && w2.curr_read_entry.id == 1 && size(w2.has_entry) + size(w2.no_such_entry) >= 1`}, func(s *spec413.State) bool {
			w := &s.W[spec413.W2]
			return w.CurrReadEntry.ID == 1 && w.HasEntry.Len()+w.NoSuchEntry.Len() >= 1
		}, true},
	}
	var defs []Def
	for i := range cases {
		cases[i].def.Kind = Invariant
		if cases[i].holds == nil {
			inv, err := spec413.LookupInvariants([]string{cases[i].def.Name})
			if err != nil {
				t.Fatal(err)
			}
			cases[i].holds = func(s *spec413.State) bool { return inv[0].Holds(p, s) }
		}
		defs = append(defs, cases[i].def)
	}
	set, err := CompileModel(m, defs)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(set.Vars, " "); got != "messages meta_status meta_fragments meta_last_entry meta_version b_entries b_fenced b_lac w1 w2" {
		t.Errorf("variables %s", got)
	}
	ev, err := set.NewEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	states := states413(t, p, 2000, 200)
	seenTrue, seenFalse := make([]bool, len(cases)), make([]bool, len(cases))
	failures := 0
	for si := range states {
		ev.LoadState(states[si])
		for i, c := range cases {
			got, err := ev.Holds(i)
			if want := c.holds(&states[si]); got != want || err != nil {
				t.Errorf("state %d: %s is %t (%v) in the ITF view, %t by the model\n%v", si, c.def.Name, got, err, want, m.ITF(states[si]))
				if failures++; failures >= 10 {
					t.FailNow()
				}
			}
			if got {
				seenTrue[i] = true
			} else {
				seenFalse[i] = true
			}
		}
	}
	for i, c := range cases {
		if c.each && (!seenTrue[i] || !seenFalse[i]) {
			t.Errorf("%s: true in some state: %t, false in some: %t; the sample does not decide it both ways", c.def.Name, seenTrue[i], seenFalse[i])
		}
	}
	// A mistake names the model's variables.
	_, err = CompileModel(m, []Def{{Name: "Typo", Kind: Invariant, Expr: `w3.lac == 0`}})
	if err == nil || !strings.Contains(err.Error(), "undeclared reference to 'w3'") || !strings.Contains(err.Error(), "the model's variables: messages, meta_status, meta_fragments, meta_last_entry, meta_version, b_entries, b_fenced, b_lac, w1, w2;") {
		t.Errorf("%v", err)
	}
	t.Logf("%d states", len(states))
}
