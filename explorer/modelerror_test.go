package explorer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// panicModel is a funcModel whose expander panics in one call (Load,
// Check, Successors — after emitting one successor — or CheckTerminal) on
// the states at selects. With property set, Check panics with a
// *PropertyError naming it instead.
type panicModel struct {
	*funcModel
	call     string
	at       func(s []int64) bool
	property string
	initErr  bool // Init panics after emitting one state
	newErr   bool // NewExpander panics
}

func (m *panicModel) Init(emit func(enc, key []byte)) {
	if !m.initErr {
		m.funcModel.Init(emit)
		return
	}
	var buf []byte
	emit(encode(buf, m.init[0]), nil)
	panic("no more initial states")
}

func (m *panicModel) NewExpander() Expander {
	if m.newErr {
		panic("no expander")
	}
	return &panicExpander{funcExpander: m.funcModel.NewExpander().(*funcExpander), m: m}
}

type panicExpander struct {
	*funcExpander
	m *panicModel
}

func (e *panicExpander) boom(call string) {
	if e.m.call != call || !e.m.at(e.cur) {
		return
	}
	if e.m.property != "" {
		panic(&PropertyError{Property: e.m.property, Err: fmt.Errorf("no value at %v", e.cur)})
	}
	panic(fmt.Sprintf("boom at %v", e.cur))
}

func (e *panicExpander) Load(enc []byte) error {
	err := e.funcExpander.Load(enc)
	e.boom(CallLoad)
	return err
}

func (e *panicExpander) Check() string {
	e.boom(CallCheck)
	return e.funcExpander.Check()
}

func (e *panicExpander) CheckTerminal() string {
	e.boom(CallCheckTerminal)
	return e.funcExpander.CheckTerminal()
}

func (e *panicExpander) Successors(emit func(a Action, enc, key []byte)) {
	n := 0
	e.funcExpander.Successors(func(a Action, enc, key []byte) {
		if n == 1 {
			e.boom(CallSuccessors)
		}
		n++
		emit(a, enc, key)
	})
}

// ignoreErrorDetail compares an Error result with the violation its model
// gives when the failing states violate an invariant instead.
var ignoreErrorDetail = cmp.Options{ignoreStore,
	cmpopts.IgnoreFields(Result{}, "Status", "Reason"),
	cmpopts.IgnoreFields(ViolationInfo{}, "Invariant", "Terminal", "Error")}

// wantModelError checks that res is the Error verdict for a panic in call
// on the last state of its trace, and that it is the oracle's result (the
// same model with the failing states violating a property) in everything
// else: figures, and the trace to the first failing state in canonical
// order.
func wantModelError(t *testing.T, what string, m *panicModel, res, oracle Result) {
	t.Helper()
	if res.Status != Error || res.Violation == nil || res.Violation.Error == nil {
		t.Fatalf("%s: got %v %+v, want the error verdict", what, res.Status, res.Violation)
	}
	e := res.Violation.Error
	tr := res.Violation.Trace
	if len(tr) == 0 {
		t.Fatalf("%s: no trace", what)
	}
	last := decodeTrace(t, tr)[len(tr)-1]
	if e.Call != m.call || !e.Panic || e.Message != fmt.Sprintf("boom at %v", last) || !m.at(last) {
		t.Errorf("%s: error %+v on %v, want a panic in %s there", what, e, last, m.call)
	}
	if !strings.HasPrefix(e.Stack, "goroutine ") || !strings.Contains(e.Stack, "panicExpander).boom") || strings.Contains(e.Stack, "modelError") {
		t.Errorf("%s: the stack should start at the panicking call:\n%s", what, e.Stack)
	}
	if want := "the model panicked in " + m.call + ": boom at "; !strings.HasPrefix(e.Error(), want) {
		t.Errorf("%s: Error() = %q, want %q...", what, e.Error(), want)
	}
	if res.Status.String() != "error" || res.Reason != e.Error() {
		t.Errorf("status %q, reason %q", res.Status, res.Reason)
	}
	checkTrace(t, m, tr)
	if diff := cmp.Diff(oracle, res, ignoreErrorDetail); diff != "" {
		t.Errorf("%s: differs from the violation on the same states:\n%s", what, diff)
	}
}

// TestModelPanic: a model that panics while the search expands, checks or
// decodes a state ends the search with the Error verdict, naming the call
// and the panic, with the trace to the state, the first such state in
// canonical order: the same for any number of workers, in memory, on disk
// and sharded. Successors panic after emitting a successor, which must
// not be kept.
func TestModelPanic(t *testing.T) {
	// Many failing states, spread over chunks and batches of a level.
	walkAt := func(s []int64) bool { return s[0]%97 == 13 }
	gridAt := func(s []int64) bool { return s[0]+s[1] == 6 && s[1] >= 2 }
	leafAt := func(s []int64) bool { return s[0] >= 16 && s[0]%3 == 0 }
	cases := []struct {
		name string
		m    *panicModel
	}{
		{"walk/Successors", &panicModel{funcModel: hashWalkModel(20011, -1), call: CallSuccessors, at: walkAt}},
		{"walk/Check", &panicModel{funcModel: hashWalkModel(20011, -1), call: CallCheck, at: walkAt}},
		{"walk/Load", &panicModel{funcModel: hashWalkModel(20011, -1), call: CallLoad, at: walkAt}},
		{"grid/Successors", &panicModel{funcModel: gridModel(10, 10), call: CallSuccessors, at: gridAt}},
		{"tree/CheckTerminal", &panicModel{funcModel: treeModel(5), call: CallCheckTerminal, at: leafAt}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The oracle: the failing states violate a property instead.
			om := *c.m.funcModel
			if c.m.call == CallCheckTerminal {
				om.terminal = func(s []int64) string { return map[bool]string{true: "Bad"}[c.m.at(s)] }
			} else {
				om.check = func(s []int64) string { return map[bool]string{true: "Bad"}[c.m.at(s)] }
			}
			oracle := run(t, &om, Options{Workers: 1})
			if oracle.Status != Violation {
				t.Fatalf("oracle: %v", oracle.Status)
			}
			for _, workers := range []int{1, 4} {
				wantModelError(t, fmt.Sprintf("memory/workers=%d", workers), c.m, run(t, c.m, Options{Workers: workers}), oracle)
			}
			for _, v := range diskVariants {
				if v.shards > 2 && c.name != "walk/Successors" {
					continue
				}
				wantModelError(t, v.name, c.m, runDisk(t, c.m, Options{}, v), oracle)
			}
		})
	}
}

// TestModelPanicResume: the Error verdict of a search on disk is final:
// resuming reports it again, trace included; a fresh run in the
// directory is refused.
func TestModelPanicResume(t *testing.T) {
	m := &panicModel{funcModel: hashWalkModel(20011, -1), call: CallSuccessors, at: func(s []int64) bool { return s[0]%97 == 13 }}
	for _, v := range []diskVariant{diskVariants[0], diskVariants[4]} {
		dir := t.TempDir()
		var first Result
		if v.shards > 1 {
			first = runShardsIn(t, m, Options{}, v, dir, nil)[0]
		} else {
			first = run(t, m, v.options(Options{}, dir))
		}
		if first.Status != Error {
			t.Fatalf("%s: %v", v.name, first.Status)
		}
		var again Result
		if v.shards > 1 {
			again = runShardsIn(t, m, Options{}, v, dir, nil)[1]
		} else {
			again = run(t, m, v.options(Options{Resume: true}, dir))
		}
		if !again.AlreadyFinished {
			t.Errorf("%s: the ended run reported again is not marked AlreadyFinished", v.name)
		}
		again.AlreadyFinished = false
		if diff := cmp.Diff(first, again, ignoreStore); diff != "" {
			t.Errorf("%s: resumed error verdict differs:\n%s", v.name, diff)
		}
		if v.shards <= 1 {
			if _, err := Run(context.Background(), m, v.options(Options{}, dir)); !errors.Is(err, ErrRunExists) {
				t.Errorf("%s: a fresh run over an ended one: %v", v.name, err)
			}
		}
	}
}

// TestModelPanicInit: a panic computing the initial states is the Error
// verdict without a trace and with nothing explored; on disk it is
// recorded and reported again on resuming.
func TestModelPanicInit(t *testing.T) {
	m := &panicModel{funcModel: counterModel(5, 1, 2), initErr: true}
	check := func(what string, res Result) {
		t.Helper()
		e := res.Violation
		if res.Status != Error || e == nil || e.Error == nil || e.Error.Call != CallInit || e.Error.Message != "no more initial states" || len(e.Trace) != 0 {
			t.Fatalf("%s: got %v %+v", what, res.Status, e)
		}
		if res.Distinct != 0 || res.Generated != 0 || res.Depth != 0 {
			t.Errorf("%s: figures %+v, want none", what, res.Stats)
		}
	}
	check("memory", run(t, m, Options{}))
	dir := t.TempDir()
	check("disk", run(t, m, Options{Dir: dir}))
	check("disk resumed", run(t, m, Options{Dir: dir, Resume: true}))
	check("shards", runDisk(t, m, Options{}, diskVariants[4]))
	sim, err := Simulate(context.Background(), m, SimOptions{Walks: 10})
	if err != nil {
		t.Fatal(err)
	}
	check("simulate", Result{Status: sim.Status, Violation: sim.Violation})

	m = &panicModel{funcModel: counterModel(5, 1, 2), newErr: true}
	for what, opt := range map[string]Options{"memory": {}, "disk": {Dir: t.TempDir()}} {
		res := run(t, m, opt)
		if e := res.Violation; res.Status != Error || e == nil || e.Error == nil || e.Error.Call != CallNewExpander || len(e.Trace) != 0 {
			t.Errorf("NewExpander, %s: got %v %+v", what, res.Status, e)
		}
	}
	if sim, err := Simulate(context.Background(), m, SimOptions{Walks: 10}); err != nil || sim.Status != Error || sim.Violation.Error.Call != CallNewExpander {
		t.Errorf("NewExpander, simulate: %v %+v", err, sim)
	}
}

// TestPropertyError: a model that reports, by panicking with a
// *PropertyError, that a property cannot be evaluated gets the Error
// verdict naming the property, without a stack.
func TestPropertyError(t *testing.T) {
	m := &panicModel{funcModel: gridModel(6, 6), call: CallCheck, at: func(s []int64) bool { return s[0] == 3 && s[1] == 1 }, property: "Positive"}
	for _, workers := range []int{1, 3} {
		res := run(t, m, Options{Workers: workers})
		if res.Status != Error || res.Violation == nil || res.Violation.Error == nil {
			t.Fatalf("got %v %+v", res.Status, res.Violation)
		}
		e := res.Violation.Error
		want := &ModelError{Call: CallCheck, Property: "Positive", Message: "no value at [3 1]"}
		if diff := cmp.Diff(want, e); diff != "" {
			t.Errorf("error differs:\n%s", diff)
		}
		if got, want := e.Error(), "Positive cannot be evaluated (Check): no value at [3 1]"; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
		if tr := decodeTrace(t, res.Violation.Trace); len(tr) != 5 || fmt.Sprint(tr[4]) != "[3 1]" {
			t.Errorf("trace %v, want a shortest path to [3 1]", tr)
		}
	}
}

// TestSimulatePanic: a walk on which the model panics ends the simulation
// with the Error verdict, the walk up to the failing state and its seed;
// the same for any number of workers.
func TestSimulatePanic(t *testing.T) {
	at := func(s []int64) bool { return s[0] == 4 && s[1] == 3 }
	for _, call := range []string{CallSuccessors, CallCheck} {
		m := &panicModel{funcModel: gridModel(8, 8), call: call, at: at}
		var first SimResult
		for i, workers := range []int{1, 3} {
			res, err := Simulate(context.Background(), m, SimOptions{Seed: 3, Walks: 5000, Depth: 30, Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != Error || res.Violation == nil || res.Violation.Error == nil {
				t.Fatalf("%s: got %v %+v", call, res.Status, res.Violation)
			}
			e, tr := res.Violation.Error, res.Violation.Trace
			last := decodeTrace(t, tr)[len(tr)-1]
			if e.Call != call || !at(last) || e.Message != fmt.Sprintf("boom at %v", last) {
				t.Errorf("%s: error %+v on %v", call, e, last)
			}
			checkTrace(t, m, tr)
			// Rerunning the walk alone fails the same way.
			alone, err := Simulate(context.Background(), m, SimOptions{Seed: res.WalkSeed, Walks: 1, Depth: 30, Workers: 1})
			if err != nil || alone.Status != Error || len(alone.Violation.Trace) != len(tr) {
				t.Errorf("%s: walk %d alone: %v %v", call, res.WalkSeed, alone.Status, err)
			}
			if i == 0 {
				first = res
			} else if res.WalkSeed != first.WalkSeed || res.Walks != first.Walks || !cmp.Equal(tr, first.Violation.Trace) {
				t.Errorf("%s: %d workers: walk %d after %d walks, 1 worker: walk %d after %d", call, workers, res.WalkSeed, res.Walks, first.WalkSeed, first.Walks)
			}
		}
	}
}
