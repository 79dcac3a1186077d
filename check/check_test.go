package check

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
)

type tlcRow struct {
	p                   spec.Params
	sym                 bool
	distinct, generated int64
	depth               int
	slow                bool
}

// readTLCCounts parses testdata/tlc-counts.txt; "-" marks a figure TLC's
// table does not give.
func readTLCCounts(t *testing.T) []tlcRow {
	t.Helper()
	f, err := os.Open("testdata/tlc-counts.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []tlcRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Fields(line)
		sym := fs[0] == "sym"
		if sym {
			fs = fs[1:]
		}
		if len(fs) != 10 {
			t.Fatalf("bad line %q", line)
		}
		n := func(i int) int64 {
			if fs[i] == "-" {
				return -1
			}
			v, err := strconv.ParseInt(fs[i], 10, 64)
			if err != nil {
				t.Fatalf("bad number in %q: %v", line, err)
			}
			return v
		}
		w := int(n(2))
		rows = append(rows, tlcRow{
			p:        spec.Params{Bookies: int(n(0)), Clients: int(n(1)), Ensemble: w, WriteQuorum: w, AckQuorum: int(n(3)), Entries: int(n(4)), Inflight: int(n(5))},
			distinct: n(6), generated: n(7), depth: int(n(8)), slow: fs[9] == "slow", sym: sym,
		})
	}
	return rows
}

// TestTLCCounts pins bkcheck's state space to TLC's on the reference spec.
func TestTLCCounts(t *testing.T) {
	for _, row := range readTLCCounts(t) {
		if row.slow && testing.Short() {
			continue
		}
		name := row.p.String()
		var sym spec.Symmetry
		if row.sym {
			sym = spec.Symmetry{Bookies: true, Clients: true}
			name += " symmetry"
		}
		t.Run(name, func(t *testing.T) {
			rep, err := Run(context.Background(), Config{Params: row.p, Symmetry: sym})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Status != explorer.OK {
				t.Fatalf("status %v (%s), want ok", rep.Status, rep.Reason)
			}
			if rep.Distinct != row.distinct {
				t.Errorf("distinct = %d, TLC %d", rep.Distinct, row.distinct)
			}
			if row.generated >= 0 && rep.Generated != row.generated {
				t.Errorf("generated = %d, TLC %d", rep.Generated, row.generated)
			}
			if row.depth >= 0 && rep.Depth != row.depth {
				t.Errorf("depth = %d, TLC %d", rep.Depth, row.depth)
			}
		})
	}
}

// TestViolationTraceReplays checks the #2614 counterexample of the
// no-recovery-fence variant: it starts in the initial state, every step is a
// transition of the model with the recorded action, only its last state
// violates the invariant, and no shorter trace exists (BFS depth).
func TestViolationTraceReplays(t *testing.T) {
	p := spec.Params{Bookies: 2, Clients: 2, Ensemble: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, Variant: "no-recovery-fence"}
	rep, err := Run(context.Background(), Config{Params: p})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != explorer.Violation || rep.Trace == nil {
		t.Fatalf("status %v, want a violation", rep.Status)
	}
	tr := rep.Trace
	if tr.Invariant != "NoDivergenceBetweenClientAndMetaData" || len(tr.Steps) != 14 || rep.Depth != 14 {
		t.Fatalf("got %s with %d steps at depth %d", tr.Invariant, len(tr.Steps), rep.Depth)
	}
	m, err := NewModel(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	sm := m.Spec()
	init := sm.Init()
	if sm.Encode(nil, &init) == nil || string(sm.Encode(nil, &init)) != string(sm.Encode(nil, &tr.Steps[0].State)) {
		t.Fatal("trace does not start in the initial state")
	}
	var scratch spec.State
	for i := 1; i < len(tr.Steps); i++ {
		want := string(sm.Encode(nil, &tr.Steps[i].State))
		found := false
		prev := tr.Steps[i-1].State
		sm.Next(&prev, &scratch, func(a spec.Action, s *spec.State) {
			if a == tr.Steps[i].Action && string(sm.Encode(nil, s)) == want {
				found = true
			}
		})
		if !found {
			t.Fatalf("step %d (%s) is not a transition of the model", i+1, tr.Steps[i].Action)
		}
	}
	for i, st := range tr.Steps {
		e := m.NewExpander()
		if err := e.Load(sm.Encode(nil, &st.State)); err != nil {
			t.Fatal(err)
		}
		bad := e.Check() != ""
		if bad != (i == len(tr.Steps)-1) {
			t.Fatalf("step %d: violation=%v", i+1, bad)
		}
	}
}
