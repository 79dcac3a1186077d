package specprops

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/properties"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// The ITF view (package properties) on the current model's states, with
// the typed view as the oracle.

// itfSample is a model's states as the ITF view sees them: the variables
// and parameters of the ITF document, and its states, decoded from JSON.
type itfSample struct {
	p      spec.Params
	vars   []string
	params map[string]any
	states []spec.State
	itf    []map[string]any
}

// bfsStates are the first max states of a breadth-first search of p.
func bfsStates(t testing.TB, p spec.Params, max int) []spec.State {
	t.Helper()
	m, err := spec.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	queue := []spec.State{m.Init()}
	seen[string(m.Encode(nil, &queue[0]))] = true
	var scratch spec.State
	for i := 0; i < len(queue) && len(queue) < max; i++ {
		m.Next(&queue[i], &scratch, func(_ spec.Action, next *spec.State) {
			if len(queue) >= max {
				return
			}
			if k := string(m.Encode(nil, next)); !seen[k] {
				seen[k] = true
				var c spec.State
				c.CopyFrom(next)
				queue = append(queue, c)
			}
		})
	}
	return queue
}

// uniformWalks are the states of n random walks of p that pick every
// successor with the same probability (as bkcheck simulate does by
// default): they lose most messages, and change ensembles.
func uniformWalks(t testing.TB, p spec.Params, n int) []spec.State {
	t.Helper()
	m, err := spec.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, uint64(n)))
	var out, succ []spec.State
	var scratch spec.State
	for w := 0; w < n; w++ {
		s := m.Init()
		for step := 0; step < 100; step++ {
			out = append(out, s)
			succ = succ[:0]
			m.Next(&s, &scratch, func(_ spec.Action, next *spec.State) {
				var c spec.State
				c.CopyFrom(next)
				succ = append(succ, c)
			})
			if len(succ) == 0 {
				break
			}
			s = succ[rng.IntN(len(succ))]
		}
	}
	return out
}

// newITFSample renders states of p as one ITF trace (traces.EncodeITF)
// and decodes it as a reader of the file would: with json.Number for
// numbers when useNumber, else float64.
func newITFSample(t testing.TB, p spec.Params, states []spec.State, useNumber bool) *itfSample {
	t.Helper()
	tr := &traces.Trace{Model: spec.Vocabulary(p), Invariant: "x", Steps: []traces.Step{{Initial: true, State: states[0]}}}
	for _, s := range states[1:] {
		tr.Steps = append(tr.Steps, traces.Step{State: s, Action: spec.Action{Kind: spec.ClientCreatesLedger, Client: 0, Bookie: -1}})
	}
	var b bytes.Buffer
	if err := traces.EncodeITF(&b, tr); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Meta struct {
			Params map[string]any `json:"params"`
		} `json:"#meta"`
		Vars   []string         `json:"vars"`
		States []map[string]any `json:"states"`
	}
	dec := json.NewDecoder(&b)
	if useNumber {
		dec.UseNumber()
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.States) != len(states) || len(doc.Meta.Params) == 0 {
		t.Fatalf("the ITF document has %d states (want %d) and %d parameters", len(doc.States), len(states), len(doc.Meta.Params))
	}
	return &itfSample{p: p, vars: doc.Vars, params: doc.Meta.Params, states: states, itf: doc.States}
}

func defaultSample(t testing.TB) *itfSample {
	p := spec.DefaultParams()
	p.EnsureDefaults()
	return newITFSample(t, p, bfsStates(t, p, 50), true)
}

// crossChecked are properties valid in both views, with the same meaning:
// the typed view's values of the state, and the ITF view's of its ITF
// rendering. each: the sample must make it true in some state and false
// in another (else the comparison shows little).
var crossChecked = []struct {
	expr string
	each bool
}{
	{`meta_status == "STATUS_CLOSED"`, true},
	{`meta_status in ["Nil", "STATUS_OPEN"]`, true},
	{`clients["c1"].lac >= 1`, true},
	{`clients["c2"].status == "STATUS_IN_RECOVERY"`, true},
	{`clients.exists(id, c, c.status == "STATUS_IN_RECOVERY")`, true},
	{`clients.all(id, c, c.status == "Nil")`, true},
	{`clients.exists(id, c, c.meta_version == Nil)`, true},
	{`clients.all(id, c, c.curr_read_entry == Nil || c.curr_read_entry >= 1)`, false},
	{`clients.exists(id, c, c.fenced.size() >= params.ack_quorum)`, true},
	{`clients.exists(id, c, "b1" in c.recovery_ensemble)`, true},
	{`clients.exists(id, c, c.pending_add_ops.exists(op, op.entry.id == 1 && size(op.ensemble) == params.write_quorum))`, true},
	{`clients.all(id, c, c.confirmed.all(e, bs, size(bs) <= params.write_quorum))`, false},
	{`clients.exists(id, c, size(c.confirmed[1]) >= params.ack_quorum)`, true},
	{`[clients["c1"].lap, clients["c2"].lap].exists(x, x > 0)`, true},
	{`b_entries.exists(b, es, es.exists(e, e.id == 1))`, true},
	{`size(b_entries["b1"]) > 0 && b_entries["b1"][0].data == b_entries["b1"][0].id`, true},
	{`b_entries.filter(b, b_entries[b].exists(e, e.id == 1)).size() >= params.write_quorum`, true},
	{`b_fenced.exists(b, f, f)`, true},
	{`b_fenced.all(b, f, !f || b_lac[b] >= 0)`, false},
	{`b_lac.exists(b, lac, lac > 0)`, true},
	{`messages.exists(m, m.count == 1 && m.type == "AddEntryRequestMessage")`, true},
	{`messages.filter(m, m.count == -1).size() >= 1`, true},
	{`messages.exists(m, m.type == "ReadResponseMessage" && m.code == "NoSuchEntry")`, true},
	{`messages.exists(m, has(m.lac) && m.lac == 0 && m.type == "FenceResponseMessage")`, true},
	{`messages.exists(m, m.type == "AddEntryResponseMessage" && m.success && m.count == 0)`, true},
	{`size(messages) > params.write_quorum + params.bookies`, true},
	{`messages.all(m, m.bookie in ["b1", "b2", "b3"] && m.cid in ["c1", "c2"])`, false},
	{`size(meta_fragments) > 1`, true},
	{`meta_fragments.all(f, size(f.ensemble) == params.ensemble)`, false},
	{`meta_status != "STATUS_CLOSED" || seq(1, meta_last_entry).all(e, b_entries.exists(b, es, es.exists(x, x.id == e)))`, false},
	{`meta_version >= 2 && meta_last_entry == 0`, true},
	{`cel.bind(n, params.entries, clients.exists(id, c, c.lac == n))`, true},
	{`params.write_quorum == 2 && !params.delete_ledger && params.variant in ["reference", "gwq", "no-recovery-fence"]`, false},
}

// crossModels are the parameter sets of the cross-check, with the
// states: the first states of a breadth-first search, and deep walks.
func crossModels() []spec.Params {
	d := spec.DefaultParams()
	qa2 := d
	qa2.AckQuorum, qa2.Variant = 2, "no-recovery-fence"
	gwq := d
	gwq.Variant, gwq.Entries = "gwq", 2
	b3 := d
	b3.Bookies, b3.WriteQuorum, b3.AckQuorum = 3, 2, 1
	return []spec.Params{d, qa2, gwq, b3}
}

// TestITFMatchesTypedView: on the ITF rendering of the current model's
// states (traces.EncodeITF, decoded as from a file), every property of a
// table, the CEL forms of built-ins that need no helper and a P ~> Q
// have the same truth value through properties.CompileITF as through Compile; and
// through properties.CompileModel on the model's own ITF values (no JSON). The
// typed view is the oracle.
func TestITFMatchesTypedView(t *testing.T) {
	var defs []properties.Def
	for i, c := range crossChecked {
		defs = append(defs, properties.Def{Name: "P" + string(rune('a'+i/26)) + string(rune('a'+i%26)), Kind: properties.Invariant, Expr: c.expr})
	}
	for _, name := range []string{"NoDivergenceBetweenClientAndMetaData", "NoOutOfOrderEntries", "FragmentsInOrder", "NoEntryAcknowledged", "LedgerCreationSucceeds"} {
		b, _ := BuiltinByName(name)
		defs = append(defs, b.Defs("")...)
	}
	defs = append(defs, properties.Def{Name: "RecoveryCloses", Kind: properties.Eventually, Expr: `clients.exists(id, c, c.recovery_phase > 0) ~> meta_status == "STATUS_CLOSED"`})
	seenTrue := make([]bool, len(defs)+1)
	seenFalse := make([]bool, len(defs)+1)
	compared, failures := 0, 0
	for mi, p := range crossModels() {
		p.EnsureDefaults()
		n := 400
		if p.Bookies > p.Ensemble {
			n = 2000 // deep enough for ensemble changes
		}
		states := bfsStates(t, p, n)
		walks, _ := sampleStates(t, p, 12)
		states = append(append(states, walks...), uniformWalks(t, p, 30)...)
		sample := newITFSample(t, p, states, mi%2 == 0)
		typed, err := Compile(p, defs)
		if err != nil {
			t.Fatal(err)
		}
		itf, err := properties.CompileITF(sample.vars, sample.params, defs)
		if err != nil {
			t.Fatal(err)
		}
		if len(typed.Props) != len(itf.Props) {
			t.Fatalf("%d properties typed, %d in the ITF view", len(typed.Props), len(itf.Props))
		}
		for i := range typed.Props {
			if typed.Props[i].Name != itf.Props[i].Name || typed.Props[i].Trigger != itf.Props[i].Trigger || typed.Props[i].Kind != itf.Props[i].Kind {
				t.Fatalf("property %d: %+v typed, %+v in the ITF view", i, typed.Props[i].Def, itf.Props[i].Def)
			}
		}
		// The model's own states through its vocabulary (Go values, not
		// JSON), and every set through the interfaces a run uses.
		viaModel, err := properties.CompileModel(spec.Vocabulary(p), defs)
		if err != nil {
			t.Fatal(err)
		}
		sets := []properties.PropertySet{typed, itf, viaModel}
		var evs []properties.StateEvaluator
		for _, set := range sets {
			ev, err := set.NewStateEvaluator()
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
		iev := evs[1].(*properties.ITFEvaluator)
		for si := range sample.states {
			evs[0].LoadState(&sample.states[si])
			iev.Load(sample.itf[si])
			evs[2].LoadState(sample.states[si])
			for i, pr := range typed.Props {
				want, werr := evs[0].Holds(i)
				want = want && werr == nil
				for j, ev := range evs[1:] {
					got, gerr := ev.Holds(i)
					got = got && gerr == nil
					compared++
					if want != got {
						t.Errorf("%s, state %d: %s is %t typed (%v), %t in the ITF view %d (%v)\nITF state: %v", p, si, pr.Expr, want, werr, got, j+1, gerr, sample.itf[si])
						if failures++; failures >= 10 {
							t.FailNow()
						}
					}
				}
				if want {
					seenTrue[i] = true
				} else {
					seenFalse[i] = true
				}
			}
		}
	}
	for i, c := range crossChecked {
		if c.each && (!seenTrue[i] || !seenFalse[i]) {
			t.Errorf("%s: true in some state: %t, false in some: %t; the sample does not decide it both ways", c.expr, seenTrue[i], seenFalse[i])
		}
	}
	t.Logf("%d evaluations compared", compared)
}

// problemsOf is properties.CompileITF's (or Compile's) error as its problems.
func problemsOf(t *testing.T, err error) schema.Problems {
	t.Helper()
	ps, ok := schema.AsProblems(err)
	if !ok {
		t.Fatalf("not a schema.Problems: %v", err)
	}
	return ps
}

// TestITFCompileErrors: the ITF view reports mistakes as Compile does: a
// problem under the property's setting naming the property, position and
// what was expected, every problem at once; syntax errors and non-bool
// results word for word as Compile; unknown names with the model's
// variables.
func TestITFCompileErrors(t *testing.T) {
	s := defaultSample(t)
	for _, c := range []struct {
		def  properties.Def
		same bool     // the message is Compile's, word for word
		want []string // else it contains these
	}{
		{def: properties.Def{Name: "Syntax", Kind: properties.Invariant, Expr: `clients.all(id, c, c.lac >=)`}, same: true},
		{def: properties.Def{Name: "NotBool", Kind: properties.Invariant, Expr: `size(b_lac) + 1`}, same: true},
		{def: properties.Def{Name: "NotBool2", Kind: properties.Probe, Expr: `"STATUS_" + "OPEN"`}, same: true},
		{def: properties.Def{Name: "Unbalanced", Kind: properties.Terminal, Expr: `(meta_status == "Nil"`}, same: true},
		{def: properties.Def{Name: "Undeclared", Kind: properties.Probe, Expr: `meta_stauts == "STATUS_CLOSED"`}, want: []string{
			"Undeclared:1:1: undeclared reference to 'meta_stauts'", "did you mean 'meta_status'?", "| meta_stauts", "| ^",
			"the model's variables: messages, meta_status, meta_fragments, meta_last_entry, meta_version, b_entries, b_fenced, b_lac, clients; and params, Nil, seq()"}},
		{def: properties.Def{Name: "Helper", Kind: properties.Invariant, Expr: `copies(1) >= 1`}, want: []string{"Helper:1:7: undeclared reference to 'copies'", "the model's variables: messages,"}},
		{def: properties.Def{Name: "Types", Kind: properties.Invariant, Expr: `seq(1, "x").size() > 0`}, want: []string{"Types:1:4: found no matching overload for 'seq' applied to '(int, string)'", " | ...^", "comparisons need equal types"}},
		{def: properties.Def{Name: "Types2", Kind: properties.Invariant, Expr: `meta_status == "STATUS_CLOSED" && 1 + "a" == 2`}, want: []string{"Types2:1:37: found no matching overload for '_+_' applied to '(int, string)'"}},
		{def: properties.Def{Name: "Param", Kind: properties.Invariant, Expr: `clients.all(id, c, c.lac <= params.write_qourum)`}, want: []string{
			"Param:1:35: undefined field 'write_qourum'", " | clients.all(id, c, c.lac <= params.write_qourum)", "^ did you mean 'write_quorum'?", "params has: ack_quorum, bookies,"}},
		{def: properties.Def{Name: "ParamIndex", Kind: properties.Invariant, Expr: `params["write_quorum"] == 2 && params["wq"] == 2`}, want: []string{"ParamIndex:1:39: undefined field 'wq'"}},
		{def: properties.Def{Name: "ParamHas", Kind: properties.Invariant, Expr: `has(params.gwq)`}, want: []string{"ParamHas:1:4: undefined field 'gwq'"}},
		{def: properties.Def{Name: "LeadsTo", Kind: properties.Eventually, Expr: `meta_stats == "Nil" ~> meta_status == "STATUS_CLOSED"`}, want: []string{"LeadsTo:1:1: undeclared reference to 'meta_stats'"}},
		{def: properties.Def{Name: "Bad name", Kind: properties.Invariant, Expr: `true`}, want: []string{`"Bad name" is not a property name`}},
	} {
		t.Run(c.def.Name, func(t *testing.T) {
			_, err := properties.CompileITF(s.vars, s.params, []properties.Def{c.def})
			if err == nil {
				t.Fatal("compiles")
			}
			ps := problemsOf(t, err)
			if len(ps) != 1 || ps[0].Field != c.def.Kind.String() {
				t.Fatalf("problems %q, want one of setting %s", ps, c.def.Kind)
			}
			t.Logf("%s", err)
			if c.same {
				_, terr := Compile(s.p, []properties.Def{c.def})
				if terr == nil || terr.Error() != err.Error() {
					t.Errorf("Compile says\n%v\nCompileITF says\n%v", terr, err)
				}
				return
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nlacks %q", err, w)
				}
			}
			// The position is Compile's (the typed view has the same names).
			if _, terr := Compile(s.p, []properties.Def{c.def}); terr != nil {
				first := func(e error) string { l, _, _ := strings.Cut(problemsOf(t, e)[0].Msg, "\n"); return l }
				if tl, il := first(terr), first(err); !strings.HasPrefix(il, strings.SplitN(tl, " ", 2)[0]) && c.def.Name != "Helper" && c.def.Name != "ParamIndex" {
					t.Errorf("Compile's first line %q, properties.CompileITF's %q: not the same position", tl, il)
				}
			}
		})
	}
	// Every problem at once, each under its setting.
	_, err := properties.CompileITF(s.vars, s.params, []properties.Def{
		{Name: "A", Kind: properties.Invariant, Expr: `nope`},
		{Name: "B", Kind: properties.Probe, Expr: `meta_status ==`},
		{Name: "C", Kind: properties.Terminal, Expr: `meta_status == "Nil"`},
		{Name: "D", Kind: properties.Eventually, Expr: `size(messages)`},
	})
	ps := problemsOf(t, err)
	var fields []string
	for _, p := range ps {
		fields = append(fields, p.Field)
	}
	if got := strings.Join(fields, " "); got != "invariant probe eventually" {
		t.Errorf("problems of settings %q, want invariant probe eventually:\n%v", got, err)
	}
	// The model's variables must be CEL names, once each.
	for _, vars := range [][]string{{"a", "a"}, {"a-b"}, {"params"}, {"seq"}, {"in"}} {
		if _, err := properties.CompileITF(vars, nil, nil); err == nil {
			t.Errorf("variables %q accepted", vars)
		}
	}
	if set, err := properties.CompileITF([]string{"x", "mbt::actionTaken"}, map[string]any{"write-quorum": 2}, nil); err != nil || len(set.Vars) != 1 || set.Params["write_quorum"] != 2 {
		t.Errorf("mbt:: variables are left out, parameters renamed: %+v, %v", set, err)
	}
}

// TestITFExplain: an explanation on an ITF state points at the deciding
// values: the client whose LAC breaks an all(), the variables read.
func TestITFExplain(t *testing.T) {
	p := spec.DefaultParams()
	p.EnsureDefaults()
	states := bfsStates(t, p, 400)
	s := newITFSample(t, p, states, true)
	set, err := properties.CompileITF(s.vars, s.params, []properties.Def{
		{Name: "NoAck", Kind: properties.Invariant, Expr: `meta_version >= 0 && clients.all(id, c, c.lac == 0 || c.status != "STATUS_OPEN")`},
		{Name: "Closes", Kind: properties.Eventually, Expr: `clients.exists(id, c, c.recovery_phase > 0) ~> meta_status == "STATUS_CLOSED"`},
	})
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := set.NewEvaluator()
	for i := range s.itf {
		ev.Load(s.itf[i])
		if ok, err := ev.Holds(0); ok || err != nil {
			continue
		}
		ex, err := set.Explain(0, s.itf[i])
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(ex.Lines, "\n")
		t.Logf("%s", text)
		for _, want := range []string{"clients.all(id, c, c.lac == 0 || c.status != \"STATUS_OPEN\") is false: it fails for", `id = "c1", c = clients["c1"]:`, "c.lac == 0 is false", `c.status != "STATUS_OPEN" is false`} {
			if !strings.Contains(text, want) {
				t.Errorf("the explanation lacks %q", want)
			}
		}
		if strings.Contains(text, "\n  meta_version") {
			t.Error("the explanation shows a conjunct that holds")
		}
		if len(ex.Reads) != 1 || ex.Reads[0].Name != "clients" || !strings.Contains(ex.Reads[0].Value, `"lac": 1`) {
			t.Errorf("reads %+v", ex.Reads)
		}
		// The goal of a P ~> Q is explained by Q.
		ex, err = set.Explain(1, s.itf[i])
		if err != nil || ex.Expression != `meta_status == "STATUS_CLOSED"` || len(ex.Lines) != 1 || !strings.HasPrefix(ex.Lines[0], `meta_status == "STATUS_CLOSED" is false: meta_status = "STATUS_OPEN"`) {
			t.Errorf("Q explained as %+v, %v", ex, err)
		}
		return
	}
	t.Fatal("no state acknowledges an entry")
}
