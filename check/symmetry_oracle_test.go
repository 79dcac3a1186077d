package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// An independent oracle for symmetry reduction. States are relabelled
// without spec's permute: through their ITF JSON form, by renaming the
// bookie ids b1..bN and client ids c1..cN wherever they occur as whole
// strings. Against that relabelling, for sampled reachable states s and
// seeded random relabellings pi under every fault and variant
// configuration whose symmetry check.ModelConfig accepts:
//
//	(a) Next commutes with relabelling: the successors of pi(s) are, as a
//	    multiset of (action, encoding), pi of the successors of s, labels
//	    relabelled too. Where the model picks bookies by index (an
//	    ensemble chosen among spare bookies, which CheckSymmetry allows
//	    while a choice stays within one orbit) the successors are compared
//	    up to their orbits instead, orbits computed by brute force over
//	    every relabelling, again through ITF.
//	(b) spec's Canonicalizer is invariant: Canonical(pi(s)) == Canonical(s).

// itfRelabel returns s with bookie b renamed bookiePerm[b] and client c
// renamed clientPerm[c] (0-based ids), computed on the ITF JSON form of s:
// the state is written as a one-state trace, every whole-string bookie or
// client id in its states (values and object keys) is renamed, and the
// document is read back. It is the only place this file touches the ITF
// code.
func itfRelabel(p spec.Params, s *spec.State, bookiePerm, clientPerm []int) (spec.State, error) {
	var buf bytes.Buffer
	if err := traces.EncodeITF(&buf, &traces.Trace{Model: spec.Vocabulary(p), Invariant: "Relabelled", Steps: []traces.Step{{Initial: true, State: *s}}}); err != nil {
		return spec.State{}, err
	}
	renamed, err := oracleRenameJSON(buf.Bytes(), "states", bookiePerm, clientPerm)
	if err != nil {
		return spec.State{}, err
	}
	tr, err := traces.DecodeITF(bytes.NewReader(renamed), spec.ResolveTrace)
	if err != nil {
		return spec.State{}, err
	}
	if len(tr.Steps) != 1 {
		return spec.State{}, fmt.Errorf("relabelled trace has %d states", len(tr.Steps))
	}
	return tr.Steps[0].State.(spec.State), nil
}

// oracleRenameJSON renames ids in the member key of the JSON object doc.
func oracleRenameJSON(doc []byte, key string, bp, cp []int) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(doc, &obj); err != nil {
		return nil, err
	}
	raw, ok := obj[key]
	if !ok {
		return nil, fmt.Errorf("no %q in the document", key)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	renamed, err := json.Marshal(oracleRename(v, bp, cp))
	if err != nil {
		return nil, err
	}
	obj[key] = renamed
	return json.Marshal(obj)
}

func oracleRename(v any, bp, cp []int) any {
	switch x := v.(type) {
	case string:
		return oracleRenameID(x, bp, cp)
	case []any:
		for i := range x {
			x[i] = oracleRename(x[i], bp, cp)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[oracleRenameID(k, bp, cp)] = oracleRename(e, bp, cp)
		}
		// A set of ids is written in id order (the reader compares
		// curr_fragment with Last(fragments) as written): keep it so.
		if set, ok := out["#set"].([]any); ok {
			slices.SortStableFunc(set, func(a, b any) int {
				sa, oka := a.(string)
				sb, okb := b.(string)
				if !oka || !okb {
					return 0
				}
				return strings.Compare(sa, sb)
			})
		}
		return out
	}
	return v
}

// oracleRenameID renames s if it is, as a whole, a bookie id b1..b8 or a
// client id c1..c4 (single digits: "b1" never matches inside "b10").
func oracleRenameID(s string, bp, cp []int) string {
	if len(s) != 2 || s[1] < '1' || s[1] > '9' {
		return s
	}
	i := int(s[1] - '1')
	switch {
	case s[0] == 'b' && i < len(bp):
		return "b" + strconv.Itoa(bp[i]+1)
	case s[0] == 'c' && i < len(cp):
		return "c" + strconv.Itoa(cp[i]+1)
	}
	return s
}

// oraclePerm is a relabelling: bookie b becomes b[b], client c becomes c[c].
type oraclePerm struct{ b, c []int }

func identityPerm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

func (pm oraclePerm) identity() bool {
	return slices.Equal(pm.b, identityPerm(len(pm.b))) && slices.Equal(pm.c, identityPerm(len(pm.c)))
}

func (pm oraclePerm) String() string { return fmt.Sprintf("bookies %v clients %v", pm.b, pm.c) }

// label relabels an action's parameters (natively: labels are not state).
func (pm oraclePerm) label(a spec.Action) spec.Action {
	if a.Client >= 0 {
		a.Client = int8(pm.c[a.Client])
	}
	if a.Bookie >= 0 {
		a.Bookie = int8(pm.b[a.Bookie])
	}
	var lost spec.Bookies
	for b := range pm.b {
		if a.Lost.Has(b) {
			lost |= 1 << uint(pm.b[b])
		}
	}
	a.Lost = lost
	return a
}

// permsOf lists every permutation of 0..n-1 (only the identity if !all).
func permsOf(n int, all bool) [][]int {
	if !all || n <= 1 {
		return [][]int{identityPerm(n)}
	}
	var out [][]int
	for _, rest := range permsOf(n-1, true) {
		for pos := 0; pos < n; pos++ {
			p := append(append(append([]int{}, rest[:pos]...), n-1), rest[pos:]...)
			out = append(out, p)
		}
	}
	return out
}

// group is every relabelling sym allows for p.
func group(p spec.Params, sym spec.Symmetry) []oraclePerm {
	var out []oraclePerm
	for _, b := range permsOf(p.Bookies, sym.Bookies) {
		for _, c := range permsOf(p.Clients, sym.Clients) {
			out = append(out, oraclePerm{b, c})
		}
	}
	return out
}

// randomPerm draws a relabelling sym allows, other than the identity when
// there is one.
func randomPerm(rng *rand.Rand, p spec.Params, sym spec.Symmetry) oraclePerm {
	for try := 0; ; try++ {
		pm := oraclePerm{identityPerm(p.Bookies), identityPerm(p.Clients)}
		if sym.Bookies {
			pm.b = rng.Perm(p.Bookies)
		}
		if sym.Clients {
			pm.c = rng.Perm(p.Clients)
		}
		if !pm.identity() || try == 20 {
			return pm
		}
	}
}

// oracleConfig is one configuration of the model.
type oracleConfig struct {
	name string
	p    spec.Params
}

// oracleConfigs is every fault and every variant, one at a time and
// together, on models small enough for bookie symmetry (bookies <= E+1),
// plus models whose bookie symmetry check.ModelConfig refuses.
func oracleConfigs() []oracleConfig {
	base := spec.Params{Bookies: 3, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 2, Inflight: 2}
	with := func(name string, f func(p *spec.Params)) oracleConfig {
		p := base
		f(&p)
		return oracleConfig{name, p}
	}
	cs := []oracleConfig{
		{"reference", base},
		with("no-spare-three-clients", func(p *spec.Params) { p.Bookies, p.Clients, p.AckQuorum, p.Entries = 2, 3, 2, 1 }),
		// Qw 3, Qa 1: a recovery holds up to two read responses (a negative
		// needs three). Without adds or loss it reaches them in a few steps.
		with("wide-quorum-recovery", func(p *spec.Params) {
			p.WriteQuorum, p.Entries, p.ReliableNetwork, p.Exclude = 3, 1, true, []string{"ClientSendsAddEntryRequests"}
		}),
		with("striped", func(p *spec.Params) { p.Ensemble = 3 }),
		with("striped-spare", func(p *spec.Params) { p.Bookies, p.Ensemble, p.Entries = 4, 3, 1 }),
		with("crashes", func(p *spec.Params) { p.Crashes = 1 }),
		with("crashes-no-sync", func(p *spec.Params) { p.Crashes, p.Journal = 1, spec.JournalNoSync }),
		with("crashes-journal-disabled-integrity", func(p *spec.Params) {
			p.Crashes, p.Journal, p.DataIntegrity = 1, spec.JournalDisabled, true
		}),
		with("disk-loss-reformat", func(p *spec.Params) { p.DiskLoss, p.Reformat = 1, 1 }),
		with("reformat-integrity", func(p *spec.Params) { p.Reformat, p.DataIntegrity = 1, true }),
		with("read-only", func(p *spec.Params) { p.ReadOnly = 1 }),
		with("disk-full", func(p *spec.Params) { p.DiskFull = 1 }),
		with("corrupt-reads", func(p *spec.Params) { p.CorruptReads = 1 }),
		with("delete-ledger", func(p *spec.Params) { p.DeleteLedger = true }),
		with("reliable-recovery-from-lac-exclude", func(p *spec.Params) {
			p.ReliableNetwork, p.RecoveryFromLAC, p.Exclude = true, true, []string{"ClientClosesLedgerFail"}
		}),
		with("java-add-path", func(p *spec.Params) { p.AddPath = spec.AddPathJava }),
		with("java-add-path-striped-crash", func(p *spec.Params) {
			p.AddPath, p.Bookies, p.Ensemble, p.Entries, p.Crashes = spec.AddPathJava, 4, 3, 3, 1
		}),
		with("java-add-path-create-window-striped", func(p *spec.Params) {
			p.AddPath, p.CreateWindow, p.Bookies, p.Ensemble, p.Entries, p.Inflight = spec.AddPathJava, true, 4, 3, 2, 2
		}),
		with("sequence-reads", func(p *spec.Params) { p.RecoveryRead = spec.RecoveryReadSequence }),
		with("checkpoints", func(p *spec.Params) { p.Crashes, p.Checkpoints = 1, true }),
		// BookKeeper as released: every option of a release at once, at
		// docs/guarantees.md's AutoRecovery setting (E = 2 of 3 bookies).
		with("bookkeeper-4.18.2-crash-disk-loss", func(p *spec.Params) {
			p.BookKeeper, p.Ensemble, p.WriteQuorum, p.AckQuorum, p.Entries, p.Inflight = spec.DefaultRelease, 2, 2, 2, 1, 1
			p.Crashes, p.DiskLoss, p.ReliableNetwork = 1, 1, true
		}),
		with("sequence-reads-striped-crash", func(p *spec.Params) {
			p.RecoveryRead, p.Bookies, p.Ensemble, p.Crashes = spec.RecoveryReadSequence, 3, 3, 1
		}),
		// Client symmetry refused (the last client is the worker's): bookies only.
		with("autorecovery", func(p *spec.Params) { p.Bookies, p.AckQuorum, p.Crashes, p.AutoRecovery = 3, 2, 1, true }),
		with("autorecovery-striped", func(p *spec.Params) {
			p.Bookies, p.Ensemble, p.WriteQuorum, p.AckQuorum, p.Entries, p.Crashes, p.AutoRecovery = 4, 3, 2, 2, 3, 1, true
		}),
		with("autorecovery-java-add-path", func(p *spec.Params) {
			p.Bookies, p.AckQuorum, p.Crashes, p.AutoRecovery, p.AddPath = 3, 2, 1, true, spec.AddPathJava
		}),
		with("autorecovery-disk-loss-reformat", func(p *spec.Params) {
			p.Bookies, p.AckQuorum, p.DiskLoss, p.Reformat, p.AutoRecovery = 3, 2, 1, 1, true
		}),
		with("decommission", func(p *spec.Params) {
			p.Bookies, p.AckQuorum, p.Crashes, p.AutoRecovery, p.Decommission = 3, 2, 1, true, true
		}),
		// Bookie symmetry refused: clients only.
		with("unavailable", func(p *spec.Params) { p.Unavailable = 1 }),
		with("two-spares", func(p *spec.Params) { p.Bookies = 4 }),
	}
	for _, v := range spec.Variants {
		cs = append(cs, with("variant-"+v.Name, func(p *spec.Params) {
			p.Variant = v.Name
			if v.CorruptReadAsNoSuchEntry {
				p.CorruptReads = 1
			}
			if v.DeleteForgetsFence {
				p.DeleteLedger = true
			}
			if v.IntegrityFencesClosed {
				p.Reformat, p.DataIntegrity = 1, true
			}
			if v.CollectKeepsFence {
				p.DeleteLedger, p.Crashes = true, 1
			}
			if v.AwaitPreBootCheck {
				p.Crashes, p.Journal, p.DataIntegrity = 1, spec.JournalDisabled, true
			}
			if v.CheckpointOnly() {
				p.Crashes, p.Checkpoints = 1, true
			}
			if v.AutoRecoveryOnly() {
				p.Bookies, p.WriteQuorum, p.AckQuorum, p.Entries, p.DiskLoss, p.Crashes, p.AutoRecovery = 2, 1, 1, 2, 1, 1, true
			}
			if v.JavaOnly() {
				p.AddPath, p.Bookies, p.Ensemble = spec.AddPathJava, 4, 3
			}
			if v.EnsembleAtQueue {
				p.CreateWindow = true
			}
		}))
	}
	everything := func(name, variant string) oracleConfig {
		return with(name, func(p *spec.Params) {
			p.Ensemble, p.Variant, p.Entries = 3, variant, 1
			p.Crashes, p.Journal, p.DiskLoss, p.Reformat, p.DataIntegrity = 1, spec.JournalNoSync, 1, 1, true
			p.ReadOnly, p.DiskFull, p.CorruptReads, p.DeleteLedger = 1, 1, 1, true
		})
	}
	return append(cs, everything("everything-gwq", "gwq"), everything("everything-split-add-check", "split-add-check"))
}

// allowedSymmetries are the symmetries check.ModelConfig accepts for p
// (what --symmetry accepts), in the order bookies, clients, both.
func allowedSymmetries(p spec.Params) []spec.Symmetry {
	var out []spec.Symmetry
	for _, sym := range []spec.Symmetry{{Bookies: true}, {Clients: true}, {Bookies: true, Clients: true}} {
		mc := ModelConfig{Params: p, Symmetry: sym}
		mc.EnsureDefaults()
		if mc.Validate() == nil {
			out = append(out, sym)
		}
	}
	return out
}

// oracleSample returns distinct reachable states of m: the first nBFS in
// breadth-first order, then up to nWalk more from seeded random walks that
// prefer a successor in which a field of the state or of a client is set
// for the first time, or a small integer (a count) takes a new value, so
// that rarely set fields are set in some sample.
func oracleSample(m *spec.Model, nBFS, nWalk int, seed uint64) []spec.State {
	init := m.Init()
	seen := map[string]bool{}
	var out []spec.State
	features := map[string]bool{}
	novel := func(s *spec.State, note bool) bool {
		n := false
		check := func(name string, v reflect.Value) {
			if v.Kind() == reflect.Int8 {
				name += "=" + strconv.Itoa(int(v.Int()))
			}
			if !v.IsZero() && !features[name] {
				n = true
				if note {
					features[name] = true
				}
			}
		}
		sv := reflect.ValueOf(s).Elem()
		for i := 0; i < sv.NumField(); i++ {
			if name := sv.Type().Field(i).Name; name != "Clients" {
				check(name, sv.Field(i))
			}
		}
		for c := 0; c < m.P.Clients; c++ {
			cv := sv.FieldByName("Clients").Index(c)
			for i := 0; i < cv.NumField(); i++ {
				check("Clients."+cv.Type().Field(i).Name, cv.Field(i))
			}
		}
		return n
	}
	keep := func(s *spec.State) {
		k := string(m.Encode(nil, s))
		if seen[k] {
			return
		}
		seen[k] = true
		var c spec.State
		c.CopyFrom(s)
		out = append(out, c)
		novel(&c, true)
	}
	keep(&init)
	var scratch spec.State
	for i := 0; i < len(out) && len(out) < nBFS; i++ {
		cur := out[i]
		m.Next(&cur, &scratch, func(_ spec.Action, s *spec.State) {
			if len(out) < nBFS {
				keep(s)
			}
		})
	}
	rng := rand.New(rand.NewPCG(seed, 23))
	limit := len(out) + nWalk
	for walk := 0; walk < 4*nWalk && len(out) < limit; walk++ {
		cur := m.Init()
		for depth := 0; depth < 60 && len(out) < limit; depth++ {
			var succ []spec.State
			m.Next(&cur, &scratch, func(_ spec.Action, s *spec.State) {
				var c spec.State
				c.CopyFrom(s)
				succ = append(succ, c)
			})
			if len(succ) == 0 {
				break
			}
			for i := range succ {
				if novel(&succ[i], false) {
					succ = succ[i : i+1]
					break
				}
			}
			cur = succ[rng.IntN(len(succ))]
			keep(&cur)
		}
	}
	return out
}

// indexChoice reports whether action kind k may choose bookies by index
// under p, so that Next commutes with relabelling bookies only up to
// orbits: an ensemble picked among spare bookies (SelectEnsemble's CHOOSE,
// the striped replacement), and with striping the order a new ledger's
// ensemble is laid out in (by bookie id). With neither, Next must commute
// exactly.
func indexChoice(p spec.Params, k spec.ActionKind) bool {
	switch k {
	case spec.ClientCreatesLedger:
		return p.Bookies > p.Ensemble || p.Striped()
	case spec.ClientChangesEnsemble, spec.RecoveryClientChangesEnsemble:
		return p.Bookies > p.Ensemble
	}
	return false
}

// codedFenceResponse reports whether s holds a fencing LAC response with a
// code (a limbo bookie's Unknown).
func codedFenceResponse(s *spec.State) bool {
	for _, m := range s.Msgs {
		if m.Key.Type() == spec.FenceResponse && m.Key.Fields().Code != spec.CodeOK {
			return true
		}
	}
	return false
}

// itfKeepsFenceCodes reports whether the ITF form keeps the code of a
// fencing LAC response (a limbo bookie answers Unknown): relabelling by
// the identity must give such a state back.
func itfKeepsFenceCodes(t *testing.T) bool {
	p := spec.Params{Bookies: 2, Clients: 1, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, Reformat: 1, DataIntegrity: true}
	p.EnsureDefaults()
	s := p.Init()
	s.Msgs = []spec.Msg{{Key: spec.MsgFields{Type: spec.FenceResponse, Code: spec.CodeUnknown}.Key(), Count: 1}}
	r, err := itfRelabel(p, &s, identityPerm(p.Bookies), identityPerm(p.Clients))
	if err != nil {
		t.Fatal(err)
	}
	return len(r.Msgs) == 1 && r.Msgs[0] == s.Msgs[0]
}

// oracle checks one configuration.
type oracle struct {
	t     *testing.T
	name  string
	m     *spec.Model
	p     spec.Params
	syms  []spec.Symmetry
	full  spec.Symmetry // the largest accepted symmetry
	orbit []oraclePerm  // its group, for orbit comparisons
	// counts
	states, successors, orbitCompared, canonical int
}

// relabel is pi(s) on the ITF form: every bookie and client id renamed,
// whatever it means. It is the relabelling spec's permute implements, for
// check (b).
func (o *oracle) relabel(s *spec.State, pm oraclePerm) spec.State {
	o.t.Helper()
	r, err := itfRelabel(o.p, s, pm.b, pm.c)
	if err != nil {
		o.t.Fatalf("%s: relabelling by %v: %v", o.name, pm, err)
	}
	return r
}

// relabelState is pi(s) as a protocol state, for check (a): relabel, but
// the layout of an empty recovery ensemble names no bookie and stays 0
// (emptyLayouts).
func (o *oracle) relabelState(s *spec.State, pm oraclePerm) spec.State {
	o.t.Helper()
	r := o.relabel(s, pm)
	emptyLayouts(o.p, &r)
	return r
}

// emptyLayouts clears the recovery layout of every client without a
// recovery ensemble. A layout of no ensemble names no bookie, and Next
// keeps it 0 (TestSymmetryOracle checks that of every sampled state); but
// Layout 0 reads as "b1 at every position", and the ITF form writes it so,
// so renaming ids there makes a layout Next never makes (spec's permute
// and the canonical encoding keep it 0, as check (b) needs: a junk layout
// once gave one orbit two canonical forms).
func emptyLayouts(p spec.Params, s *spec.State) {
	for c := 0; c < p.Clients; c++ {
		if s.Clients[c].RecoveryEns == 0 {
			s.Clients[c].RecoveryLay = 0
		}
	}
}

func (o *oracle) enc(s *spec.State) string { return string(o.m.Encode(nil, s)) }

// orbit is the set of encodings of every relabelling of s by the group.
func (o *oracle) orbitOf(s *spec.State) map[string]bool {
	out := map[string]bool{}
	for _, pm := range o.orbit {
		r := o.relabelState(s, pm)
		out[o.enc(&r)] = true
	}
	return out
}

// successorsCommute is check (a) for s, pm and ps = relabelState(s, pm);
// it returns a description of the differences, or "". Successors by an
// action that chooses bookies by index (indexChoice) are matched up to
// their orbits: each successor of pi(s) must be in the orbit of a
// distinct successor of s with the relabelled label.
func (o *oracle) successorsCommute(s *spec.State, pm oraclePerm, ps spec.State) string {
	want, got := map[string]int{}, map[string]int{}
	type loose struct {
		label string
		orbit map[string]bool // successors of s
		enc   string          // successors of pi(s)
	}
	var wantLoose, gotLoose []loose
	var scratch spec.State
	upToOrbit := func(a spec.Action) bool { return o.full.Bookies && indexChoice(o.p, a.Kind) }
	o.m.Next(s, &scratch, func(a spec.Action, t *spec.State) {
		o.successors++
		label := pm.label(a).String()
		if upToOrbit(a) {
			o.orbitCompared++
			wantLoose = append(wantLoose, loose{label: label, orbit: o.orbitOf(t)})
			return
		}
		r := o.relabelState(t, pm)
		want[label+"\x00"+o.enc(&r)]++
	})
	o.m.Next(&ps, &scratch, func(a spec.Action, t *spec.State) {
		if upToOrbit(a) {
			gotLoose = append(gotLoose, loose{label: a.String(), enc: o.enc(t)})
			return
		}
		got[a.String()+"\x00"+o.enc(t)]++
	})
	var diffs []string
	label := func(k string) string { return k[:strings.IndexByte(k, 0)] }
	for k, n := range want {
		if got[k] != n {
			diffs = append(diffs, fmt.Sprintf("pi of the successor of s by %s: x%d, as a successor of pi(s): x%d", label(k), n, got[k]))
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("the successor of pi(s) by %s (x%d) is pi of no successor of s", label(k), n))
		}
	}
	// Orbits are disjoint or equal, so matching greedily is exact.
	matched := make([]bool, len(wantLoose))
	for _, g := range gotLoose {
		found := false
		for i, w := range wantLoose {
			if !matched[i] && w.label == g.label && w.orbit[g.enc] {
				matched[i], found = true, true
				break
			}
		}
		if !found {
			diffs = append(diffs, fmt.Sprintf("the successor of pi(s) by %s is in the orbit of no successor of s by it", g.label))
		}
	}
	for i, w := range wantLoose {
		if !matched[i] {
			diffs = append(diffs, fmt.Sprintf("no successor of pi(s) by %s is in the orbit of the successor of s by it", w.label))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	sort.Strings(diffs)
	return fmt.Sprintf("%d successors of s, %d of pi(s): %s", len(want)+len(wantLoose), len(got)+len(gotLoose), strings.Join(diffs, "; "))
}

func newOracle(t *testing.T, c oracleConfig) *oracle {
	m, err := spec.NewModel(c.p)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	o := &oracle{t: t, name: c.name, m: m, p: m.P, syms: allowedSymmetries(m.P)}
	for _, sym := range o.syms {
		if sym.Bookies && sym.Clients || o.full == (spec.Symmetry{}) {
			o.full = sym
		}
	}
	o.orbit = group(o.p, o.full)
	return o
}

// TestSymmetryOracle: checks (a) and (b) above, and that relabelling by
// the identity through ITF gives the state back (the oracle sees every
// variable).
func TestSymmetryOracle(t *testing.T) {
	// The default tier samples 8 states of each configuration (about a
	// second of CPU per state over all of them), the long tier 80, the
	// docs tier 250.
	nBFS, nWalk, perms := 3, 5, 1
	switch {
	case testtier.IsDocs():
		nBFS, nWalk, perms = 50, 200, 1
	case testtier.IsLong():
		nBFS, nWalk, perms = 20, 60, 1 // 80 states a configuration
	}
	start := time.Now()
	// The ITF form of a limbo bookie's fencing response lost its code
	// (Unknown) when this test was written: the oracle cannot relabel
	// such states and skips them, as long as that lasts.
	keepsCodes := itfKeepsFenceCodes(t)
	if !keepsCodes {
		t.Logf("the ITF form drops the code of a fencing LAC response (a limbo bookie's Unknown): states holding or sending one are skipped")
	}
	configs, totalStates, totalSucc, totalSkipped := 0, 0, 0, 0
	for ci, c := range oracleConfigs() {
		o := newOracle(t, c)
		if len(o.syms) == 0 {
			t.Errorf("%s: no symmetry accepted", c.name)
			continue
		}
		configs++
		rng := rand.New(rand.NewPCG(uint64(ci), 5))
		canons := map[spec.Symmetry]*spec.Canonicalizer{}
		for _, sym := range o.syms {
			canons[sym] = o.m.NewCanonicalizer(sym)
		}
		states := oracleSample(o.m, nBFS, nWalk, uint64(ci))
		failures, skipped := 0, 0
		var scratch spec.State
		for i := range states {
			s := &states[i]
			if !keepsCodes {
				coded := codedFenceResponse(s)
				o.m.Next(s, &scratch, func(_ spec.Action, t *spec.State) { coded = coded || codedFenceResponse(t) })
				if coded {
					skipped++
					continue
				}
			}
			id := oraclePerm{identityPerm(o.p.Bookies), identityPerm(o.p.Clients)}
			if r := o.relabel(s, id); o.enc(&r) != o.enc(s) {
				t.Fatalf("%s: state %d: the ITF round trip changes the state: the oracle cannot see some variable", c.name, i)
			}
			r := *s
			if emptyLayouts(o.p, &r); o.enc(&r) != o.enc(s) {
				t.Fatalf("%s: state %d: a client without a recovery ensemble has a recovery layout", c.name, i)
			}
			for k := 0; k < perms && failures < 5; k++ {
				pm := randomPerm(rng, o.p, o.full)
				ps := o.relabel(s, pm)
				pss := ps
				emptyLayouts(o.p, &pss)
				if d := o.successorsCommute(s, pm, pss); d != "" {
					failures++
					t.Errorf("%s symmetry %v: state %d, relabelling %v: Next does not commute with it: %s", c.name, o.full, i, pm, d)
				}
				// (b) for the largest accepted symmetry and, in turn, one
				// of the others, with pm restricted to it.
				syms := []spec.Symmetry{o.full}
				if others := slices.DeleteFunc(slices.Clone(o.syms), func(x spec.Symmetry) bool { return x == o.full }); len(others) > 0 {
					syms = append(syms, others[(i+k)%len(others)])
				}
				for _, sym := range syms {
					sp, sps := pm, pss
					if sym != o.full {
						if !sym.Bookies {
							sp.b = identityPerm(o.p.Bookies)
						}
						if !sym.Clients {
							sp.c = identityPerm(o.p.Clients)
						}
						sps = o.relabelState(s, sp)
					}
					canon := canons[sym]
					want := string(canon.Canonical(s))
					o.canonical++
					if got := string(canon.Canonical(&sps)); got != want && failures < 5 {
						failures++
						t.Errorf("%s symmetry %v: state %d and its relabelling %v (through ITF) have different canonical forms", c.name, sym, i, sp)
					}
				}
			}
		}
		o.states = len(states) - skipped
		if o.states < len(states)/2 {
			t.Errorf("%s: %d of %d sampled states skipped", c.name, skipped, len(states))
		}
		totalStates += o.states
		totalSucc += o.successors
		totalSkipped += skipped
		t.Logf("%s: symmetries %v; %d states (%d skipped) x %d relabellings: %d successors compared (%d up to orbit), %d canonical forms", c.name, o.syms, o.states, skipped, perms, o.successors, o.orbitCompared, o.canonical)
	}
	t.Logf("%d configurations, %d states (%d skipped), %d successors in %v", configs, totalStates, totalSkipped, totalSucc, time.Since(start).Round(time.Millisecond))
}

// TestSymmetryOracleSeesRefusedSymmetry: the oracle has teeth. Where
// check.ModelConfig refuses bookie symmetry because the model treats
// unavailable bookies by index, relabelling bookies does not commute with
// Next, and the oracle says so.
func TestSymmetryOracleSeesRefusedSymmetry(t *testing.T) {
	c := oracleConfig{"unavailable", spec.Params{Bookies: 3, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, Unavailable: 1}}
	o := newOracle(t, c)
	bookies := spec.Symmetry{Bookies: true}
	if slices.Contains(o.syms, bookies) {
		t.Fatalf("%s: bookie symmetry accepted", c.name)
	}
	o.full, o.orbit = bookies, group(o.p, bookies)
	states := oracleSample(o.m, 50, 0, 1)
	found := ""
	for i := range states {
		for _, pm := range o.orbit {
			if d := o.successorsCommute(&states[i], pm, o.relabelState(&states[i], pm)); d != "" {
				found = fmt.Sprintf("state %d, %v: %s", i, pm, d)
				break
			}
		}
		if found != "" {
			break
		}
	}
	if found == "" {
		t.Fatalf("%s: relabelling bookies commutes with Next on every sampled state: the oracle cannot see why bookie symmetry is refused", c.name)
	}
	t.Logf("%s: bookie relabelling does not commute, as expected: %s", c.name, found)
}
