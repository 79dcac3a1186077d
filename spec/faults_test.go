package spec

import "testing"

// kindsSeen explores up to limit states of p breadth-first and counts the
// transitions of each action kind.
func kindsSeen(t *testing.T, p Params, limit int) map[ActionKind]int {
	t.Helper()
	m, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[ActionKind]int{}
	init := m.Init()
	visited := map[string]bool{string(m.Encode(nil, &init)): true}
	queue := []State{init}
	var scratch State
	for i := 0; i < len(queue) && len(visited) < limit; i++ {
		cur := queue[i]
		m.Next(&cur, &scratch, func(a Action, s *State) {
			seen[a.Kind]++
			if k := string(m.Encode(nil, s)); !visited[k] {
				visited[k] = true
				var c State
				c.CopyFrom(s)
				queue = append(queue, c)
			}
		})
	}
	return seen
}

func TestFaultActionsOnlyWithBudgets(t *testing.T) {
	base := DefaultParams()
	// Without budgets no fault action occurs: the whole space of a small
	// reference set (6,123 states) shows it.
	small := Params{Bookies: 2, Clients: 2, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1}
	for k := range kindsSeen(t, small, 1<<30) {
		if k >= BookieCrashes {
			t.Errorf("%v occurs without fault budgets", k)
		}
	}
	cases := []struct {
		name  string
		edit  func(p *Params)
		kinds []ActionKind
	}{
		{"crash", func(p *Params) { p.Crashes = 1 }, []ActionKind{BookieCrashes, BookieRestarts, ClientFailsToCreateLedger}},
		{"re-format", func(p *Params) { p.Reformat = 1 }, []ActionKind{BookieRejoinsEmpty}},
		{"disk loss and re-format", func(p *Params) { p.DiskLoss = 1; p.Reformat = 1; p.Bookies = 3 }, []ActionKind{BookieLosesDisk, BookieRejoinsEmpty, ClientChangesEnsemble}},
		{"lossy journal", func(p *Params) { p.Crashes = 1; p.Journal = JournalNoSync }, []ActionKind{BookieCrashes, BookieSyncsJournal, BookieRestarts}},
		{"disk full", func(p *Params) { p.DiskFull = 1; p.Bookies = 3 }, []ActionKind{BookieFillsDisk, BookieSendsAddReadOnlyResponse, ClientReceivesAddErrorResponse}},
		{"read-only", func(p *Params) { p.ReadOnly = 1; p.Bookies = 3 },
			[]ActionKind{BookieBecomesReadOnly, BookieSendsAddReadOnlyResponse, ClientReceivesAddErrorResponse, ClientChangesEnsemble}},
	}
	for _, tc := range cases {
		p := base
		tc.edit(&p)
		seen := kindsSeen(t, p, 15000)
		for _, k := range tc.kinds {
			if seen[k] == 0 {
				t.Errorf("%s: %v never occurs", tc.name, k)
			}
		}
	}
}

// TestCrashLosesMessages: a crash turns the bookie's in-flight messages
// into timeouts, and while it is down every message sent to it is lost.
func TestCrashLosesMessages(t *testing.T) {
	p := DefaultParams()
	p.Crashes = 1
	m, _ := NewModel(p)
	s := m.Init()
	var scratch State
	step := func(want ActionKind, lost Bookies, bookie int8) {
		t.Helper()
		var next State
		found := false
		m.Next(&s, &scratch, func(a Action, n *State) {
			if !found && a.Kind == want && a.Lost == lost && (bookie < 0 || a.Bookie == bookie) {
				found = true
				next.CopyFrom(n)
			}
		})
		if !found {
			t.Fatalf("no %v successor (lost %v, bookie %d)", want, lost, bookie)
		}
		s = next
	}
	step(ClientCreatesLedger, 0, -1)
	step(ClientSendsAddEntryRequests, 0, -1)
	step(BookieCrashes, 0, 0)
	for _, msg := range s.Msgs {
		if msg.Key.Bookie() == 0 && msg.Count != -1 {
			t.Fatalf("message to crashed b1 has count %d", msg.Count)
		}
		if msg.Key.Bookie() == 1 && msg.Count != 1 {
			t.Fatalf("message to b2 has count %d", msg.Count)
		}
	}
	// The writer may not send to b1 while it is down: every send pattern loses it.
	m.Next(&s, &scratch, func(a Action, n *State) {
		if a.Kind == BookieSendsAddConfirmedResponse && a.Bookie == 0 {
			t.Fatal("a crashed bookie processed a request")
		}
	})
	step(BookieRestarts, 0, 0)
	if s.BDown != 0 || s.CrashesUsed != 1 {
		t.Fatalf("after restart: down %v, crashes used %d", s.BDown, s.CrashesUsed)
	}
}
