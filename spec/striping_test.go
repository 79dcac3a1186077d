package spec

import "testing"

// TestWriteSetRoundRobin checks WriteSet against BookKeeper's round-robin
// distribution schedule: entry e goes to the Qw ensemble positions starting
// at e mod E, wrapping.
func TestWriteSetRoundRobin(t *testing.T) {
	p := Params{Bookies: 5, Clients: 2, Ensemble: 5, WriteQuorum: 3, AckQuorum: 2, Entries: 8, Inflight: 1}
	// Ensemble in position order b3, b1, b5, b2, b4.
	order := []int{2, 0, 4, 1, 3}
	var f Fragment
	for pos, b := range order {
		f.Layout = f.Layout.With(pos, b)
		f.Ensemble |= 1 << uint(b)
	}
	for e := int8(1); e <= 8; e++ {
		var want Bookies
		for i := 0; i < p.WriteQuorum; i++ {
			want |= 1 << uint(order[(int(e)%p.Ensemble+i)%p.Ensemble])
		}
		if got := p.WriteSet(e, f); got != want {
			t.Errorf("entry %d: write set %s, want %s", e, FormatBookies(got), FormatBookies(want))
		}
	}
	// Without striping the write set is the ensemble.
	q := Params{Bookies: 3, Clients: 2, Ensemble: 3, WriteQuorum: 3, AckQuorum: 2, Entries: 2, Inflight: 1}
	if got := q.WriteSet(1, Fragment{Ensemble: 0b111}); got != 0b111 {
		t.Errorf("unstriped write set %s", FormatBookies(got))
	}
}

// TestStripedAddsGoToWriteSets explores -e 3 -w 2 -a 2 with three entries
// and checks every add request the writer sends, when it is sent: its
// bookie is in the entry's write set in the writer's current fragment, and
// while the first fragment is current, the write sets are exactly the
// schedule's (entry 1: positions 1,2; entry 2: positions 2,0; entry 3: 0,1).
func TestStripedAddsGoToWriteSets(t *testing.T) {
	p := Params{Bookies: 4, Clients: 2, Ensemble: 3, WriteQuorum: 2, AckQuorum: 2, Entries: 3, Inflight: 3}
	m, err := NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	init := m.Init()
	seen := map[string]bool{string(m.Encode(nil, &init)): true}
	queue := []State{init}
	var scratch State
	checked, changed := 0, 0
	for i := 0; i < len(queue) && len(seen) < 200000; i++ {
		s := queue[i]
		cf, _ := s.Clients[0].CurrFragment()
		m.Next(&s, &scratch, func(a Action, n *State) {
			if a.Kind == ClientChangesEnsemble {
				changed++
			}
			for _, msg := range n.Msgs {
				f := msg.Key.Fields()
				if f.Type != AddEntryRequest || f.Cid != 0 || f.Recovery || s.Sent(msg.Key) {
					continue
				}
				if !p.WriteSet(f.Entry.ID, cf).Has(f.Bookie) {
					t.Fatalf("%v sent e%d to b%d, outside its write set %s", a, f.Entry.ID, f.Bookie+1, FormatBookies(p.WriteSet(f.Entry.ID, cf)))
				}
				if cf.ID == 1 && s.MetaVersion == 1 {
					pos := []int{-1, 1, 2, 0}[f.Entry.ID]
					want := Bookies(1<<uint(cf.Layout.At(pos)) | 1<<uint(cf.Layout.At((pos+1)%3)))
					if !want.Has(f.Bookie) {
						t.Fatalf("e%d went to b%d, the schedule says %s", f.Entry.ID, f.Bookie+1, FormatBookies(want))
					}
				}
				checked++
			}
			if k := string(m.Encode(nil, n)); !seen[k] {
				seen[k] = true
				var c State
				c.CopyFrom(n)
				queue = append(queue, c)
			}
		})
	}
	if checked == 0 || changed == 0 {
		t.Fatalf("checked %d sends, %d ensemble changes: the model did not exercise striping", checked, changed)
	}
}

// TestStripedEnsemblesRenderInOrder: with striping a fragment's ensemble
// is shown in position order, so a replacement shows where the new bookie
// went (b6 in b2's position); without striping it stays a set.
func TestStripedEnsemblesRenderInOrder(t *testing.T) {
	p := Params{Bookies: 6, Clients: 2, Ensemble: 5, WriteQuorum: 3, AckQuorum: 2, Entries: 1, Inflight: 1}
	var f Fragment
	for pos, b := range []int{0, 5, 2, 3, 4} {
		f.Layout = f.Layout.With(pos, b)
		f.Ensemble |= 1 << uint(b)
	}
	f.ID, f.First = 2, 1
	if got, want := p.FormatFragments([]Fragment{f}), "<<[2: <<b1,b6,b3,b4,b5>> from e1]>>"; got != want {
		t.Errorf("striped: %s, want %s", got, want)
	}
	if got := p.formatPending([]PendingAddOp{{Entry: Entry{1, 1}, FragmentID: 2, Ensemble: f.Ensemble, Layout: f.Layout}}); got != "{[e1, fragment 2, <<b1,b6,b3,b4,b5>>]}" {
		t.Errorf("striped pending op: %s", got)
	}
	if got := p.FormatEnsemble(0, 0); got != "{}" {
		t.Errorf("an ensemble not in use: %s", got)
	}
	q := Params{Bookies: 3, Clients: 2, Ensemble: 3, WriteQuorum: 3, AckQuorum: 2, Entries: 1, Inflight: 1}
	if got, want := q.FormatFragments([]Fragment{{ID: 1, Ensemble: 0b101, First: 1}}), "<<[1: {b1,b3} from e1]>>"; got != want {
		t.Errorf("unstriped: %s, want %s", got, want)
	}
}
