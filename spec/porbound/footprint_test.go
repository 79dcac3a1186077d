package porbound

import (
	"fmt"
	"testing"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
	"github.com/bkcheck/bkcheck/spec/stubborn"
)

// fromFootprints is the relations spec's footprint declarations give:
// two transitions are dependent when their footprints conflict; u may
// enable t when u writes what t reads; t is visible when it writes one of
// vis's variables (nil: no visibility).
func fromFootprints(g *Graph, fps *spec.Footprints, vis spec.VarSet) *Relations {
	n := len(g.Groups)
	f := make([]spec.Footprint, n)
	for t := range n {
		f[t] = fps.Of(g.Groups[t])
	}
	r := &Relations{Dep: make([]bitset, n), Enabler: make([]bitset, n)}
	for t := range n {
		r.Dep[t], r.Enabler[t] = newBitset(n), newBitset(n)
		r.Dep[t].set(t)
		for u := range n {
			if f[t].Conflicts(f[u]) {
				r.Dep[t].set(u)
			}
			if f[u].MayEnable(f[t]) {
				r.Enabler[t].set(u)
			}
		}
	}
	if vis != nil {
		r.Visible = newBitset(n)
		for t := range n {
			if f[t].Writes.Meets(vis) {
				r.Visible.set(t)
			}
		}
	}
	return r
}

// invariantVars is what NoDivergenceBetweenClientAndMetaData and
// AllAckedEntriesAreReadable read, as footprint variables: the metadata,
// every bookie's store and every client.
func invariantVars(p spec.Params, fps *spec.Footprints) spec.VarSet {
	vs := fps.NewSet()
	set := func(v int) { vs[v/64] |= 1 << uint(v%64) }
	set(fps.Meta())
	set(fps.MetaFragments())
	set(fps.MetaEnd())
	for b := range p.Bookies {
		set(fps.Store(b))
	}
	for c := range p.Clients {
		set(fps.ClientClass(c))
		set(fps.ClientLAC(c))
	}
	if p.DeleteLedger {
		set(fps.Deleted()) // a deleted ledger's invariants hold vacuously
	}
	return vs
}

// readsDeclared is what NoDivergenceBetweenClientAndMetaData and
// AllAckedEntriesAreReadable read, as their declarations put it: of a
// client's status only its class (OPEN, CLOSED, CLIENT_WITHDRAWN or
// another), which a recovery that aborts leaves as it was.
func readsDeclared(p spec.Params) func(*spec.State) string {
	return func(s *spec.State) string {
		out := fmt.Sprint(s.MetaStatus, s.MetaLastEntry, s.MetaDeleted, s.MetaFragmentList(), s.BEntries[:p.Bookies])
		for i := range p.Clients {
			class := s.Clients[i].Status
			if class != spec.StatusOpen && class != spec.StatusClosed && class != spec.ClientWithdrawn {
				class = spec.StatusNil
			}
			out += fmt.Sprint(class, s.Clients[i].LAC)
		}
		return out
	}
}

// TestFootprintsContainMeasured: spec's declared footprints are
// conservative on every model small enough to measure (each measured
// dependence is between conflicting footprints, each measured enabling
// from a transition that writes what the enabled one reads, each
// transition measured visible declared visible), which a reduction built
// on them needs to be sound; and the measured relations' best case,
// against which TestDeadAndNecessary's figures for --por compare.
func TestFootprintsContainMeasured(t *testing.T) {
	t.Parallel() // the graphs are shared, explored once, read-only
	for _, p := range declaredModels() {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			footprintsContainMeasured(t, p)
		})
	}
}

func footprintsContainMeasured(t *testing.T, p spec.Params) {
	g, fps := exploreDeclared(t, p)
	name := p.String
	meas := measure(g)
	decl := fromFootprints(g, fps, nil)
	for x := range g.Groups {
		for y := range g.Groups {
			if meas.Dep[x].has(y) && !decl.Dep[x].has(y) {
				t.Errorf("%s: %v and %v are dependent, their footprints do not conflict", name(), g.Groups[x], g.Groups[y])
			}
			if meas.Enabler[x].has(y) && !decl.Enabler[x].has(y) {
				t.Errorf("%s: %v enables %v, and writes nothing it reads", name(), g.Groups[y], g.Groups[x])
			}
		}
	}
	vis := invariantVars(p, fps)
	decl = fromFootprints(g, fps, vis)
	meas.SetVisible(g, memoRead(g, readsDeclared(p)))
	for x := range g.Groups {
		if meas.Visible.has(x) && !decl.Visible.has(x) {
			t.Errorf("%s: %v changes what the invariants read, and is not declared visible", name(), g.Groups[x])
		}
	}
	measTerm := measure(g)
	t.Logf("%s: %d states; the measured relations' best case keeps %d (terminal only), %d (invariants)",
		name(), len(g.States), Reduce(g, measTerm).States, Reduce(g, meas).States)
}

// TestDeadAndNecessary checks the state-dependent declarations on whole
// graphs: a transition Dead in a state is enabled in no state reachable
// from it; and from a state where a live transition is disabled, no path
// that avoids every transition writing its Necessary variables reaches a
// state where it is enabled (checked from about 2,000 states of each
// model). Then the reduction --por runs keeps every terminal state, and
// what it keeps is logged (docs/reduction.md).
func TestDeadAndNecessary(t *testing.T) {
	t.Parallel() // the graphs are shared, explored once, read-only
	for _, p := range declaredModels() {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			deadAndNecessary(t, p)
		})
	}
}

func deadAndNecessary(t *testing.T, p spec.Params) {
	g, fps := exploreDeclared(t, p)
	every := max(1, len(g.States)/2000)
	fut := FutureEnabled(g)
	n := len(g.Groups)
	writes := make([]spec.VarSet, n)
	for u := range n {
		writes[u] = fps.Of(g.Groups[u]).Writes
	}
	var st spec.State
	dead, checked := 0, 0
	seen, search := make([]int32, len(g.States)), int32(0)
	var stack []int32
	for s := range g.States {
		if err := g.Model.Decode(g.States[s], &st); err != nil {
			t.Fatal(err)
		}
		en := g.enabled(int32(s))
		for a := range n {
			if en.has(a) {
				continue
			}
			if fps.Dead(&st, g.Groups[a]) {
				dead++
				if fut[s].has(a) {
					t.Errorf("%s: %v is dead in state %d, and fires later", p, g.Groups[a], s)
				}
				continue
			}
			if s%every != 0 || !fut[s].has(a) {
				continue
			}
			checked++
			nes := fps.Necessary(&st, g.Groups[a])
			// seen[x] == search: x was met in this search.
			search++
			seen[s] = search
			stack = append(stack[:0], int32(s))
			for len(stack) > 0 {
				x := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, e := range g.Succ[x] {
					if e.Group == int32(a) && x != int32(s) {
						t.Fatalf("%s: %v disabled in state %d, enabled in state %d by a path writing none of its necessary variables", p, g.Groups[a], s, x)
					}
					if writes[e.Group].Meets(nes) || seen[e.To] == search {
						continue
					}
					seen[e.To] = search
					stack = append(stack, e.To)
				}
			}
		}
	}
	if checked == 0 {
		t.Errorf("%+v: %d dead, %d necessary sets checked: the test checks nothing", p, dead, checked)
	}
	decl := reduceDeclared(t, g, nil)
	for s := range g.States {
		if g.Terminal(int32(s)) && !decl.Reached[s] {
			t.Errorf("%s: terminal state %d not reached by the declared reduction", p, s)
		}
	}
	vis := reduceDeclared(t, g, &spec.PropertyReads{MetaFragments: true, MetaEnd: true, Stores: true, ClientClass: true, ClientLAC: true})
	t.Logf("%s: %d states; %d dead pairs, %d necessary sets checked; declared keeps %d (terminal only), %d (invariants)",
		p, len(g.States), dead, checked, decl.States, vis.States)
}

// reduceDeclared searches g with the reduction --por runs, for
// properties reading reads (nil: terminal states only).
func reduceDeclared(t *testing.T, g *Graph, reads *spec.PropertyReads) *Reduced {
	t.Helper()
	r, err := stubborn.New(g.Model, reads)
	if err != nil {
		t.Fatal(err)
	}
	red, err := ReduceStubborn(g, r)
	if err != nil {
		t.Fatal(err)
	}
	return red
}

// exploreDeclared explores p's whole graph and returns its footprints.
func exploreDeclared(t *testing.T, p spec.Params) (*Graph, *spec.Footprints) {
	t.Helper()
	g := explore(t, p)
	fps, ok := g.Model.Footprints()
	if !ok {
		t.Fatalf("%s: no footprints", p)
	}
	return g, fps
}

// declaredModels are the models the declaration tests hold against whole
// graphs: lossy and reliable, the variants and options Footprints
// covers, striping, two entries.
func declaredModels() []spec.Params {
	with := func(p spec.Params, f func(*spec.Params)) spec.Params { f(&p); return p }
	ms := []spec.Params{
		params(1, 1, 1, false), params(2, 1, 1, false), params(3, 3, 2, true),
		with(params(2, 2, 1, true), func(p *spec.Params) { p.Variant = spec.VariantGWQ }),
		with(params(2, 1, 1, false), func(p *spec.Params) { p.Variant = spec.VariantNoLacFloor; p.Entries = 2 }),
		with(params(2, 1, 1, false), func(p *spec.Params) { p.PartialReplacement = true; p.RecoveryFromLAC = true }),
		with(params(3, 1, 1, true), func(p *spec.Params) { p.Ensemble = 2; p.Entries = 2 }),
		with(params(2, 2, 2, true), func(p *spec.Params) { p.Variant = spec.VariantNoRecoveryFence; p.Entries = 2 }),
		with(params(2, 1, 1, true), func(p *spec.Params) { p.Variant = spec.VariantAddChecksMetadata; p.Entries = 2 }),
	}
	// Crashes (the journal synced, no-sync and disabled; a reliable
	// network, whose only losses are a crashed bookie's), re-formats and
	// lost disks.
	crash := func(p spec.Params, journal string) spec.Params { p.Crashes, p.Journal = 1, journal; return p }
	ms = append(ms, crash(params(1, 1, 1, false), spec.JournalSynced), crash(params(2, 1, 1, true), spec.JournalSynced),
		with(params(2, 1, 1, true), func(p *spec.Params) { p.Reformat = 1 }),
		with(params(2, 1, 1, true), func(p *spec.Params) { p.DiskLoss = 1 }), with(params(2, 1, 1, false), func(p *spec.Params) { p.DiskLoss = 1 }),
		with(params(2, 1, 1, true), func(p *spec.Params) { p.DiskLoss, p.Reformat = 1, 1 }))
	// Read-only bookies and full disks (EREADONLY answers, failed writes,
	// ensemble changes among writable bookies).
	ms = append(ms, with(params(2, 1, 1, true), func(p *spec.Params) { p.ReadOnly = 1 }),
		with(params(2, 1, 1, false), func(p *spec.Params) { p.DiskFull = 1 }))
	// Corrupt reads (an error or, with the variant, NoSuchEntry, for an
	// entry the bookie has) and bookies down for the whole run.
	ms = append(ms, with(params(2, 2, 1, true), func(p *spec.Params) { p.CorruptReads = 1 }),
		with(params(2, 1, 1, false), func(p *spec.Params) { p.CorruptReads, p.Variant = 1, spec.VariantCorruptReadNosuch }),
		with(params(3, 2, 1, true), func(p *spec.Params) { p.Unavailable = 1 }))
	// Data integrity: the pre-boot check deferred (started at a restart,
	// run later) or awaited (the variant), and at a re-format with the
	// cookie kept (with the variant that fences a closed ledger too).
	integrity := func(p spec.Params) spec.Params { p.DataIntegrity = true; return p }
	ms = append(ms, integrity(crash(params(2, 1, 1, true), spec.JournalDisabled)),
		integrity(with(crash(params(2, 1, 1, true), spec.JournalDisabled), func(p *spec.Params) { p.Variant = spec.VariantAwaitPreBootCheck })),
		integrity(with(params(2, 1, 1, true), func(p *spec.Params) { p.Reformat, p.ReformatCookie = 1, spec.CookieKept })),
		integrity(with(params(2, 1, 1, true), func(p *spec.Params) {
			p.Reformat, p.ReformatCookie, p.Variant = 1, spec.CookieKept, spec.VariantIntegrityFencesClosed
		})))
	// DbLedgerStorage's checkpoints (and PR #4843's variant).
	ckpt := func(p spec.Params) spec.Params { p.Crashes, p.Checkpoints = 1, true; return p }
	ms = append(ms, ckpt(with(params(2, 1, 1, true), func(p *spec.Params) { p.Variant = spec.VariantCheckpointFlushes })))
	// The Java add path (ordered ensembles, failures by index, timeouts in
	// channel order, the two-step ensemble change and its re-sends).
	java := func(p spec.Params) spec.Params { p.AddPath = spec.AddPathJava; return p }
	ms = append(ms, java(params(2, 1, 1, false)),
		java(with(params(2, 1, 1, false), func(p *spec.Params) { p.Variant = spec.VariantCallbacksAfterUnset })),
		java(with(params(2, 1, 1, false), func(p *spec.Params) { p.Variant = spec.VariantSkipChangeNoFailed })),
		// The application's create (--create-window): two adds in flight,
		// a crash, one change (about 10,000 states).
		java(with(params(3, 2, 2, true), func(p *spec.Params) {
			p.Clients, p.Entries, p.Inflight, p.Crashes, p.CreateWindow, p.MaxEnsembleChanges = 1, 2, 2, 1, true, 1
		})),
		// LedgerHandle's close with the Java writer: a fenced add closes
		// the ledger (CLOSING, then the close), a close or a recovery's
		// close finding the ledger closed succeeds.
		java(with(params(2, 2, 1, true), func(p *spec.Params) { p.CloseRereads = true })),
		// No spare bookie and sequence reads: a write-back's timeout
		// fails the recovery (RecoveryClientReceivesAddTimeout), and so
		// does a fencing read without coverage (RecoveryClientFencingFails);
		// about 40,000 states.
		java(with(params(1, 1, 1, false), func(p *spec.Params) {
			p.Entries, p.Inflight, p.RecoveryRead = 2, 2, spec.RecoveryReadSequence
		})),
		// A stopped bookie still registered (--registration-expiry): a
		// creation or a change may choose it until its expiry; a spare.
		java(with(params(3, 1, 1, true), func(p *spec.Params) {
			p.Ensemble, p.Crashes, p.RegistrationExpiry, p.MaxEnsembleChanges = 2, 1, true, 1
		})))

	if testtier.IsLong() {
		ms = append(ms, java(with(params(2, 2, 2, true), func(p *spec.Params) { p.Crashes = 1 })),
			// A spare and Qw > Qa: a completed write-back's failure (to the
			// crashed bookie) waits for the next write-back's initiate
			// (writeBackAfterDelayedFailure); the writer's timeouts, closes
			// and the restart left out (about 500,000 states).
			java(with(params(3, 2, 1, true), func(p *spec.Params) {
				p.Ensemble, p.Entries, p.Crashes, p.MaxEnsembleChanges = 2, 2, 1, 1
				p.Exclude = []string{"ClientReceivesAddTimeout", "ClientClosesLedgerSuccess", "ClientClosesLedgerFail", "BookieRestarts", "BookieSyncsJournal"}
			})),
			// BookKeeper as released (the Java client, sequence reads,
			// the writer's close, the create window; about 40,000 states).
			with(params(2, 2, 1, true), func(p *spec.Params) { p.BookKeeper = spec.DefaultRelease }))
	}
	if testtier.IsLong() {
		// The largest graphs of the families above (20,000 to 60,000
		// states, seconds each in every test): a crash with striping and
		// two entries, a re-format on a lossy network, a lost disk with
		// Qw = 2, checkpoints without a variant, and ensemble changes
		// among the writable bookies of three, with the Java add path too.
		// The default tier has each family on smaller graphs (checkpoints:
		// with PR #4843's variant, and with AutoRecovery).
		ms = append(ms, crash(with(params(3, 1, 1, true), func(p *spec.Params) { p.Ensemble = 2; p.Entries = 2 }), spec.JournalSynced),
			with(params(2, 1, 1, false), func(p *spec.Params) { p.Reformat = 1 }),
			with(params(2, 2, 2, true), func(p *spec.Params) { p.DiskLoss = 1 }),
			ckpt(params(2, 1, 1, true)),
			with(params(3, 2, 1, true), func(p *spec.Params) { p.ReadOnly = 1 }),
			java(with(params(3, 2, 1, true), func(p *spec.Params) { p.ReadOnly = 1 })))
	}
	// Ledger deletion and garbage collection (the fence remembered in
	// memory, forgotten with the variant, kept durably with the other),
	// with a crash that forgets what is in memory; the split add check
	// (handles loaded by answers, adds checked before they are stored);
	// in the long tier with Qw = 2, and lossy with a crash.
	del := func(p spec.Params) spec.Params { p.DeleteLedger = true; return p }
	ms = append(ms, del(params(2, 1, 1, true)), del(with(params(2, 1, 1, false), func(p *spec.Params) { p.Variant = spec.VariantDeleteForgetsFence })),
		del(with(params(2, 1, 1, true), func(p *spec.Params) { p.Crashes = 1 })),
		del(with(params(2, 1, 1, true), func(p *spec.Params) { p.Crashes, p.Variant = 1, spec.VariantCollectKeepsFence })),
		with(params(2, 1, 1, true), func(p *spec.Params) { p.Variant = spec.VariantSplitAddCheck }),
		with(params(2, 1, 1, true), func(p *spec.Params) { p.Variant = spec.VariantSplitAddCheck; p.Crashes = 1 }))
	// Sequence recovery reads (the first member of the write set, then
	// the next) and the writer's re-reading close.
	seq := func(p spec.Params) spec.Params { p.RecoveryRead = spec.RecoveryReadSequence; return p }
	rereads := func(p spec.Params) spec.Params { p.CloseRereads = true; return p }
	ms = append(ms, seq(params(2, 2, 1, true)), rereads(params(2, 1, 1, false)), rereads(params(2, 2, 1, true)),
		rereads(del(params(2, 1, 1, true)))) // a recovery's close on a deleted ledger fails
	if testtier.IsLong() {
		ms = append(ms, seq(params(2, 2, 2, true)), rereads(with(params(2, 1, 1, true), func(p *spec.Params) { p.Crashes = 1 })))
	}
	// AutoRecovery (E = Qw unless said; the last client is the worker's
	// admin client): lost bookies by crashes and by lost disks, lossy and
	// reliable, with the periodic check off and verifying every entry,
	// PR #4551's variant, and decommission.
	ar := func(p spec.Params, f func(*spec.Params)) spec.Params {
		p.AutoRecovery, p.Ensemble, p.Crashes = true, p.WriteQuorum, 1
		f(&p)
		return p
	}
	ms = append(ms, ar(params(2, 1, 1, true), func(*spec.Params) {}), ar(params(2, 1, 1, false), func(*spec.Params) {}),
		ar(params(3, 1, 1, true), func(p *spec.Params) { p.Entries = 2 }),
		ar(params(3, 1, 1, true), func(p *spec.Params) { p.Entries, p.AuditorPeriodicCheck = 2, "off" }),
		ar(params(3, 1, 1, true), func(p *spec.Params) { p.Entries, p.AuditorVerification = 2, 100 }),
		ar(params(3, 1, 1, true), func(p *spec.Params) { p.Crashes, p.DiskLoss, p.Entries = 0, 2, 2 }),
		ar(params(3, 1, 1, true), func(p *spec.Params) {
			p.Crashes, p.DiskLoss, p.Entries, p.Variant = 0, 2, 2, spec.VariantSkipInconsistentRange
		}),
		ar(params(2, 1, 1, true), func(p *spec.Params) { p.Decommission = true }),
		ar(params(3, 1, 1, true), func(p *spec.Params) { p.Decommission, p.Crashes, p.DiskLoss = true, 0, 1 }),
		ar(params(3, 2, 2, true), func(p *spec.Params) { p.Crashes, p.DiskLoss, p.AuditorPeriodicCheck = 0, 1, "off" }),
		// Striped (E > Qw): a copy of the range the bad index stores, to
		// the new bookie at that index; and a decommission's check of
		// the segments whose index stores an entry.
		ar(params(3, 1, 1, true), func(p *spec.Params) { p.Ensemble, p.Entries = 2, 2 }),
		ar(params(3, 1, 1, true), func(p *spec.Params) { p.Ensemble, p.Entries, p.Crashes, p.DiskLoss, p.Decommission = 2, 2, 0, 1, true }),
		// With the other options a copy or a swap meets: the Java
		// writer (whose metadata writes keep the store's fragments), an
		// unsynced journal and checkpoints (a copy's records), deletion,
		// a read-only bookie (not a copy's target).
		ar(params(3, 1, 1, true), func(p *spec.Params) { p.Entries, p.AddPath = 2, spec.AddPathJava }),
		ar(params(3, 1, 1, true), func(p *spec.Params) { p.Entries, p.Journal = 2, spec.JournalNoSync }),
		ar(params(3, 1, 1, true), func(p *spec.Params) { p.Checkpoints = true }),
		ar(params(3, 1, 1, true), func(p *spec.Params) { p.DeleteLedger = true }),
		ar(params(3, 1, 1, true), func(p *spec.Params) { p.ReadOnly = 1 }))
	if testtier.IsLong() {
		// The periodic check with Qw = 2: a bookie lacking an entry its
		// write set's other bookie has.
		ms = append(ms, ar(params(3, 2, 2, true), func(p *spec.Params) { p.Crashes, p.DiskLoss = 0, 1 }))
	}
	if testtier.IsLong() {
		ms = append(ms, with(params(2, 2, 1, true), func(p *spec.Params) { p.Variant = spec.VariantSplitAddCheck; p.Crashes = 1 }),
			del(with(params(2, 2, 2, true), func(p *spec.Params) { p.Crashes = 1 })), del(with(params(2, 1, 1, false), func(p *spec.Params) { p.Crashes = 1 })))
	}
	if testtier.IsLong() {
		ms = append(ms, crash(params(2, 1, 1, false), spec.JournalNoSync), crash(params(2, 2, 2, true), spec.JournalSynced),
			crash(params(2, 2, 1, true), spec.JournalDisabled),
			with(params(3, 1, 1, true), func(p *spec.Params) { p.Ensemble, p.Entries, p.DiskLoss, p.Crashes = 2, 2, 1, 1 }),
			with(params(2, 2, 2, true), func(p *spec.Params) { p.ReadOnly, p.DiskFull = 1, 1 }),
			with(params(2, 1, 1, true), func(p *spec.Params) { p.ReadOnly, p.Crashes = 1, 1 }))
		ms = append(ms, params(2, 2, 1, false), params(3, 3, 3, true))
	}
	return ms
}

// TestUniverseHoldsEveryLabel: every transition of every graph is in the
// declared universe (a reduction would miss a dependent transition that
// is not).
func TestUniverseHoldsEveryLabel(t *testing.T) {
	for _, p := range declaredModels() {
		g, fps := exploreDeclared(t, p)
		u := map[spec.Action]bool{}
		for _, a := range fps.Universe() {
			u[a] = true
		}
		for _, a := range g.Groups {
			if !u[a] {
				t.Errorf("%s: %v is not in the universe", p, a)
			}
		}
	}
}

// TestProgressIncreases: every edge of every graph increases spec's
// Progress, the measure that makes the graphs acyclic (and that a run
// with --por checks on every edge it generates), but AutoRecovery's: its
// graphs have cycles, which only the edges of its steps that end a
// worker's run or clear a mark close (the cycle proviso keeps them out
// of reduced sets). Every other step increases Progress there too, and
// the AutoRecovery models do have cycles.
func TestProgressIncreases(t *testing.T) {
	t.Parallel() // the graphs are shared, explored once, read-only
	closes := map[spec.ActionKind]bool{spec.WorkerDefersLedger: true, spec.WorkerMarksLedgerReplicated: true,
		spec.WorkerReleasesLedger: true, spec.WorkerGraceExpires: true, spec.WorkerDiesOnInconsistentRange: true, spec.WorkerReplicatesFragment: true}
	cyclic := 0
	for _, p := range declaredModels() {
		g, _ := exploreDeclared(t, p)
		if p.AutoRecovery && !Acyclic(g) {
			cyclic++
		}
		progress := make([]spec.Progress, len(g.States))
		var a spec.State
		for s := range g.States {
			if err := g.Model.Decode(g.States[s], &a); err != nil {
				t.Fatal(err)
			}
			progress[s] = spec.ProgressOf(&a)
		}
		for s := range g.States {
			for _, e := range g.Succ[s] {
				if !progress[s].Less(progress[e.To]) && !closes[g.Groups[e.Group].Kind] {
					t.Fatalf("%s: %v from state %d does not increase Progress", p, g.Groups[e.Group], s)
				}
			}
		}
	}
	if cyclic == 0 {
		t.Errorf("no AutoRecovery model has a cycle: the proviso is not exercised")
	}
}

// TestInvariantReads: what each built-in invariant declares it reads
// covers what it reads, as far as whole graphs show: on every edge where
// an invariant's value changes, the transition writes one of the
// variables Visible names for its declared reads in the edge's source.
// (TypeOK, field-wise, declares nothing visible and is argued instead;
// invariants without declared reads make everything visible.)
func TestInvariantReads(t *testing.T) {
	t.Parallel() // the graphs are shared, explored once, read-only
	changed := map[string]int{}
	// Models where more invariants change value: no-recovery-fence
	// violates NoDivergenceBetweenClientAndMetaData (apache/bookkeeper#2614),
	// the TLC set EntriesReachWriteQuorum.
	fence := params(2, 2, 2, false)
	fence.Variant = spec.VariantNoRecoveryFence
	// The default tier reads the smallest declared models and one where
	// EntriesReachWriteQuorum changes, 2/2/1 on a reliable network with a
	// read-only bookie (20,881 states); the long tier every declared
	// model, the TLC set where it changes (285,773 states) and the fence
	// model (1,858,469 states).
	readOnly := params(2, 2, 1, true)
	readOnly.ReadOnly = 1
	models := append(declaredModels()[:3:3], readOnly)
	if testtier.IsLong() {
		models = append(declaredModels(), readOnly, fence, params(2, 2, 1, false))
	}
	for _, p := range models {
		g, fps := exploreDeclared(t, p)
		holds := make([][]bool, len(invariants.All))
		var st spec.State
		for i, inv := range invariants.All {
			if inv.Holds != nil && inv.Reads != nil && !inv.Reads.FieldWise {
				holds[i] = make([]bool, len(g.States))
			}
		}
		for s := range g.States {
			if err := g.Model.Decode(g.States[s], &st); err != nil {
				t.Fatal(err)
			}
			for i, inv := range invariants.All {
				if holds[i] != nil {
					holds[i][s] = inv.Holds(&p, &st)
				}
			}
		}
		writes := make([]spec.VarSet, len(g.Groups))
		for u, a := range g.Groups {
			writes[u] = fps.Of(a).Writes
		}
		for s := range g.States {
			decoded := false
			for i, inv := range invariants.All {
				if holds[i] == nil {
					continue
				}
				for _, e := range g.Succ[s] {
					if holds[i][s] == holds[i][e.To] {
						continue
					}
					if !decoded {
						if err := g.Model.Decode(g.States[s], &st); err != nil {
							t.Fatal(err)
						}
						decoded = true
					}
					changed[inv.Name]++
					if !writes[e.Group].Meets(fps.Visible(&st, *inv.Reads)) {
						t.Errorf("%s: %v changes %s from state %d, and is not visible to what it declares it reads", p, g.Groups[e.Group], inv.Name, s)
					}
				}
			}
		}
	}
	t.Logf("edges that change an invariant, by invariant: %v", changed)
	if len(changed) < 3 {
		t.Errorf("only %d invariants change value on some edge: the test checks too little", len(changed))
	}
}
