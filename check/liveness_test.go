package check

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// cyclicBound is a model that says its graph may have cycles: the
// eventually pass then takes the liveness path.
type cyclicBound struct{ *Model }

func (cyclicBound) Cyclic() bool { return true }

// runLiveness is the eventually pass of the liveness path alone, after
// (as if) a complete search without violation.
func runLiveness(t *testing.T, p spec.Params, evs, fair []string) (*Report, map[string]*PropertyResult) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Params = p
	cfg.Invariants = []string{"none"}
	cfg.Eventually, cfg.Fair = evs, fair
	cfg.Workers = 1
	cfg.EnsureDefaults()
	m, err := NewModel(cfg.ModelConfig)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Result: explorer.Result{Status: explorer.OK}, Config: cfg}
	results := map[string]*PropertyResult{}
	for _, i := range m.cel.eventually {
		name := m.cel.set.Properties()[i].Name
		results[name] = &PropertyResult{Name: name, Status: Unknown}
	}
	if err := eventuallyPass(context.Background(), cfg, rep, results, cyclicBound{m}, m.cel); err != nil {
		t.Fatal(err)
	}
	return rep, results
}

func traceLen(tr *traces.Trace) int {
	if tr == nil {
		return 0
	}
	return len(tr.Steps)
}

// TestLivenessAgrees (metamorphic): on acyclic models the liveness path
// (forced, with and without --fair all) and the product search agree on
// every eventually property's verdict and on the counterexample's length,
// property by property and all together; the liveness traces replay.
func TestLivenessAgrees(t *testing.T) {
	for _, p := range smallModels() {
		p.EnsureDefaults()
		var all []string
		verdicts := map[string]string{}
		for i, expr := range eventuallyCorpus {
			def := fmt.Sprintf("E%d=%s", i, expr)
			all = append(all, def)
			want := runEventually(t, p, []string{def}, 1)
			for _, fair := range [][]string{nil, {"all"}} {
				rep, results := runLiveness(t, p, []string{def}, fair)
				r := results[fmt.Sprintf("E%d", i)]
				if traceLen(rep.Trace) != traceLen(want.Trace) || (want.Trace == nil) != (r.Status == Holds) {
					t.Errorf("%s: %s, fair %v: liveness %s with %d states, product search %d states", p, expr, fair, r.Status, traceLen(rep.Trace), traceLen(want.Trace))
				}
				verdicts[fmt.Sprintf("E%d", i)] = r.Status
				if rep.Trace != nil {
					if rep.Trace.Loop != 0 || !rep.Trace.Terminal {
						t.Errorf("%s: %s: an acyclic model's counterexample is a lasso", p, expr)
					}
					if err := Replay(rep.Trace); err != nil {
						t.Errorf("%s: %s: replay: %v", p, expr, err)
					}
				}
				if r.Cycles == nil || r.Cycles.Edges == 0 || r.Cycles.BytesPerState <= 0 {
					t.Errorf("%s: %s: no liveness figures: %+v", p, expr, r.Cycles)
				}
			}
		}
		want := runEventually(t, p, all, 1)
		rep, results := runLiveness(t, p, all, nil)
		if traceLen(rep.Trace) != traceLen(want.Trace) {
			t.Errorf("%s, all together: liveness %d states, product search %d", p, traceLen(rep.Trace), traceLen(want.Trace))
		}
		// Every property is decided, each as on its own.
		for name, r := range results {
			if r.Status != verdicts[name] {
				t.Errorf("%s, all together: %s %s, alone %s", p, name, r.Status, verdicts[name])
			}
		}
	}
}

// TestFairSetting: --fair resolves action names (all: every action), and
// every problem is reported at once.
func TestFairSetting(t *testing.T) {
	c := ModelConfig{Params: spec.DefaultParams()}
	c.Eventually = []string{`Closed=meta_status == "STATUS_CLOSED"`}
	c.Fair = []string{"ClientSendsAddEntryRequests", "all", "ClientSendsAddEntryRequests"}
	c.EnsureDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	f, err := c.Fairness()
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != int(spec.NumActionKinds)-1 || f[0].Name != "ClientSendsAddEntryRequests" || f[0].Kinds[0] != uint8(spec.ClientSendsAddEntryRequests) {
		t.Errorf("%d constraints, first %+v; want one per action, ClientSendsAddEntryRequests first", len(f), f[0])
	}

	bad := c
	bad.Fair = []string{"NoSuchAction", "clientsendsaddentryrequests"}
	err = bad.Validate()
	var probs schema.Problems
	if !errors.As(err, &probs) || !strings.Contains(err.Error(), `"NoSuchAction"`) || !strings.Contains(err.Error(), `"clientsendsaddentryrequests"`) {
		t.Errorf("unknown actions: %v, want both named", err)
	}

	alone := c
	alone.Eventually = nil
	if err := alone.Validate(); err == nil || !strings.Contains(err.Error(), "--eventually") {
		t.Errorf("--fair without --eventually: %v", err)
	}

	por := c
	por.POR = true
	if err := por.Validate(); err == nil || !strings.Contains(err.Error(), "por") {
		t.Errorf("--fair with --por: %v", err)
	}

	v413 := ModelConfig{Model: ModelV413}
	v413.Eventually = c.Eventually
	v413.Fair = []string{"ClientSendsAddEntryRequests"}
	v413.EnsureDefaults()
	if err := v413.Validate(); err == nil || !strings.Contains(err.Error(), "bkcheck actions --model v4.13") {
		t.Errorf("--model v4.13 with the current model's action: %v", err)
	}
}

// TestFairRun: a run with --fair goes through the liveness pass end to
// end (Run), and its verdict is the product search's on this acyclic
// model.
func TestFairRun(t *testing.T) {
	p := smallModels()[0]
	cfg := DefaultConfig()
	cfg.Params = p
	cfg.Invariants = []string{"none"}
	cfg.Eventually = []string{`Closed=clients.exists(id, c, c.status == "STATUS_CLOSED")`}
	cfg.Fair = []string{"all"}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != explorer.Violation || rep.Trace == nil || len(rep.Properties) != 1 || rep.Properties[0].Cycles == nil {
		t.Fatalf("%v, %+v: want a violation from the liveness pass", rep.Status, rep.Properties)
	}
	want := runEventually(t, p, cfg.Eventually, 1)
	if len(rep.Trace.Steps) != traceLen(want.Trace) {
		t.Errorf("%d states, product search %d", len(rep.Trace.Steps), traceLen(want.Trace))
	}
	if err := Replay(rep.Trace); err != nil {
		t.Errorf("replay: %v", err)
	}
	// The same trace claimed as a lasso back to its first state: the last
	// state is not the first, so replay refuses it.
	lasso := *rep.Trace
	lasso.Terminal, lasso.Loop = false, 1
	var re *ReplayError
	if err := Replay(&lasso); !errors.As(err, &re) || !strings.Contains(err.Error(), "the last state is not state 1") {
		t.Errorf("replay of a false lasso: %v", err)
	}
}

// BenchmarkLivenessAutoRecovery is the liveness pass on a cyclic model:
// AutoRecovery with two clients (the worker's admin client) and message
// loss, the ledger eventually closed (docs/properties.md has the figures).
func BenchmarkLivenessAutoRecovery(b *testing.B) {
	p := spec.DefaultParams()
	p.AutoRecovery, p.Clients = true, 2
	cfg := DefaultConfig()
	cfg.Params = p
	cfg.Invariants = []string{"none"}
	cfg.Eventually = []string{`Closed=meta_status == "STATUS_CLOSED"`}
	cfg.Workers = 1
	cfg.EnsureDefaults()
	m, err := NewModel(cfg.ModelConfig)
	if err != nil {
		b.Fatal(err)
	}
	var r *PropertyResult
	for b.Loop() {
		rep := &Report{Result: explorer.Result{Status: explorer.OK}, Config: cfg}
		r = &PropertyResult{Name: "Closed"}
		if err := eventuallyPass(context.Background(), cfg, rep, map[string]*PropertyResult{"Closed": r}, m, m.cel); err != nil {
			b.Fatal(err)
		}
	}
	c := r.Cycles
	b.ReportMetric(float64(c.States), "states")
	b.ReportMetric(float64(c.Edges), "edges")
	b.ReportMetric(float64(c.States)/c.Build.Seconds(), "states/s")
	b.ReportMetric(c.BytesPerState, "B/state")
	b.ReportMetric(c.BytesPerEdge, "B/edge")
	b.ReportMetric(c.Analysis.Seconds(), "s-analysis")
}
