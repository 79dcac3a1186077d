package spec413_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/regress"
	. "github.com/bkcheck/bkcheck/spec413"
)

// exploration is what a naive breadth-first search of a model finds: the
// figures TLC prints, and TLC's -coverage figures per action (distinct
// states an action found first, successors it generated).
type exploration struct {
	distinct, generated, depth int
	found, gen                 [NumActionKinds]int
	violation                  string // first invariant violated (in Invariants order), "" if none
	violationDepth             int
}

// naiveBFS explores m with a Go map of encodings, level by level: slow but
// obviously correct, an oracle independent of the explorer package. It
// stops at the end of the level where an invariant first fails.
func naiveBFS(t testing.TB, m *Model, limit int) exploration {
	t.Helper()
	init := m.Init()
	enc0 := m.Encode(nil, &init)
	seen := map[string]bool{string(enc0): true}
	level := [][]byte{enc0}
	x := exploration{generated: 1}
	var cur, scratch State
	var buf []byte
	for len(level) > 0 && len(seen) < limit {
		x.depth++
		var next [][]byte
		for _, enc := range level {
			if err := m.Decode(enc, &cur); err != nil {
				t.Fatal(err)
			}
			if x.violation == "" {
				for _, inv := range Invariants {
					if !inv.Holds(m.P, &cur) {
						x.violation, x.violationDepth = inv.Name, x.depth
						break
					}
				}
			}
			m.Next(&cur, &scratch, func(a Action, s *State) {
				x.generated++
				x.gen[a.Kind]++
				buf = m.Encode(buf[:0], s)
				if !seen[string(buf)] {
					seen[string(buf)] = true
					x.found[a.Kind]++
					next = append(next, append([]byte(nil), buf...))
				}
			})
		}
		if x.violation != "" {
			break
		}
		level = next
	}
	x.distinct = len(seen)
	return x
}

// TestExploreEnv prints the figures of the parameter set in
// BKCHECK_V413 ("bookies,qw,qa,sendlimit,fence"): a debugging aid for
// comparing with TLC's -coverage output action by action.
func TestExploreEnv(t *testing.T) {
	env := os.Getenv("BKCHECK_V413")
	if env == "" {
		t.Skip("set BKCHECK_V413=bookies,qw,qa,sendlimit,fence")
	}
	var v [5]int
	for i, f := range strings.Split(env, ",") {
		v[i], _ = strconv.Atoi(f)
	}
	m, err := NewModel(Params{Bookies: v[0], WriteQuorum: v[1], AckQuorum: v[2], SendLimit: v[3], Options: Options{RecoveryReadsFence: v[4] == 1}})
	if err != nil {
		t.Fatal(err)
	}
	x := naiveBFS(t, m, 1<<30)
	fmt.Printf("%d distinct, %d generated, depth %d, violation %q at depth %d\n", x.distinct, x.generated, x.depth, x.violation, x.violationDepth)
	for k := ActionKind(1); k < NumActionKinds; k++ {
		fmt.Printf("  %-36s %d:%d\n", k, x.found[k], x.gen[k])
	}
}

// TestNaiveCounts explores TLC's sets (testdata/regress/tlc413.toml) with
// the naive oracle above, without the explorer: the model alone must give
// TLC's distinct, generated and depth figures, and its verdict with the
// length of TLC's shortest counterexample.
func TestNaiveCounts(t *testing.T) {
	cases, err := regress.LoadFile("../testdata/regress/tlc413.toml")
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, c := range cases {
		e := c.Expect
		if e.Slow && !testtier.IsLong() {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			ran++
			m, err := NewModel(c.Config.Params413())
			if err != nil {
				t.Fatal(err)
			}
			x := naiveBFS(t, m, 1<<30)
			switch e.Status {
			case "ok":
				if x.violation != "" || int64(x.distinct) != e.Distinct || int64(x.generated) != e.Generated || x.depth != e.Depth {
					t.Errorf("got %d/%d/%d (violation %q), TLC %d/%d/%d", x.distinct, x.generated, x.depth, x.violation, e.Distinct, e.Generated, e.Depth)
				}
			case "violation":
				if x.violation != e.Invariant || x.violationDepth != e.Length {
					t.Errorf("got %s at depth %d, TLC %s in %d states", x.violation, x.violationDepth, e.Invariant, e.Length)
				}
			}
		})
	}
	if ran < 5 {
		t.Fatalf("only %d sets compared", ran)
	}
}

// TestCoverageMatchesTLC compares the model action by action with TLC's
// -coverage figures (testdata/tlc-coverage.txt): for each action, the
// distinct states it found first in breadth-first order and the states it
// generated.
func TestCoverageMatchesTLC(t *testing.T) {
	b, err := os.ReadFile("testdata/tlc-coverage.txt")
	if err != nil {
		t.Fatal(err)
	}
	type set struct {
		head string
		want map[string]string
	}
	var sets []*set
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			sets = append(sets, &set{head: line, want: map[string]string{}})
		default:
			name, fig, _ := strings.Cut(line, " ")
			sets[len(sets)-1].want[name] = fig
		}
	}
	if len(sets) < 2 {
		t.Fatalf("%d sets", len(sets))
	}
	for _, st := range sets {
		t.Run(st.head, func(t *testing.T) {
			var v [4]int
			var fence, long string
			params, _, _ := strings.Cut(strings.TrimPrefix(st.head, "["), "]")
			fmt.Sscan(params, &v[0], &v[1], &v[2], &v[3], &fence)
			if _, long, _ = strings.Cut(st.head, "] "); long == "long" {
				testtier.Long(t, "explores millions of states")
			}
			m, err := NewModel(Params{Bookies: v[0], WriteQuorum: v[1], AckQuorum: v[2], SendLimit: v[3], Options: Options{RecoveryReadsFence: fence == "true"}})
			if err != nil {
				t.Fatal(err)
			}
			x := naiveBFS(t, m, 1<<30)
			if len(st.want) != int(NumActionKinds)-1 {
				t.Errorf("TLC lists %d actions, the model has %d", len(st.want), NumActionKinds-1)
			}
			for k := ActionKind(1); k < NumActionKinds; k++ {
				if got := fmt.Sprintf("%d:%d", x.found[k], x.gen[k]); got != st.want[k.String()] {
					t.Errorf("%s: %s, TLC %s", k, got, st.want[k.String()])
				}
			}
		})
	}
}
