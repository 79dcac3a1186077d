package bridge

import (
	"encoding/json"
	"errors"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/internal/docblock"
	"github.com/bkcheck/bkcheck/spec"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/conformance.md's generated table")

// TestMappingClosed holds the mapping to the model's actions both ways:
// every action of the model has exactly one row, every row names an action
// of the model, and each row either drives its action, saying how, or
// says why not.
func TestMappingClosed(t *testing.T) {
	rows := map[string]int{}
	for _, m := range mappings {
		rows[m.action]++
		if _, ok := spec.ActionKindByName(m.action); !ok {
			t.Errorf("the mapping has a row for %s, which is no action of the model", m.action)
		}
		switch {
		case m.take != nil && (m.drive == "" || m.awaits == "" || m.code == ""):
			t.Errorf("%s is driven, but its row does not say how, what it awaits, or what BookKeeper code it exercises", m.action)
		case m.take != nil && m.notDriven != "":
			t.Errorf("%s is driven and says why it is not", m.action)
		case m.take == nil && m.notDriven == "":
			t.Errorf("%s is not driven and does not say why", m.action)
		}
	}
	for k := spec.ActionKind(1); k < spec.NumActionKinds; k++ {
		if n := rows[k.String()]; n != 1 {
			t.Errorf("the model's action %s has %d rows in the mapping, want 1 (mapped, or not driven with why)", k, n)
		}
	}
}

// TestConformanceTable keeps docs/conformance.md's table of what each
// model action is on the cluster equal to the mapping.
func TestConformanceTable(t *testing.T) {
	if err := docblock.Check(filepath.Join("..", "docs", "conformance.md"), "mapping", conformanceTable(), *updateDocs,
		"go test ./bridge -run TestConformanceTable -update-docs"); err != nil {
		t.Error(err)
	}
}

// TestSettingsClassified: every setting of the model is classified by
// what it is on real bookies, and the classification names no setting the
// model lacks.
func TestSettingsClassified(t *testing.T) {
	names := map[string]bool{}
	for _, f := range spec.ParamsSchema.Fields() {
		names[f.Name] = true
		u, ok := settingUses[f.Name]
		switch {
		case !ok:
			t.Errorf("the model's setting --%s is not classified in settingUses: say whether the harness drives it, bounds by it, compares it, takes it step by step, or refuses it", f.Name)
		case u.how == "":
			t.Errorf("--%s: its classification does not say how the harness honours it", f.Name)
		}
	}
	for name := range settingUses {
		if !names[name] {
			t.Errorf("settingUses classifies --%s, which is no setting of the model", name)
		}
	}
}

// TestRefusedParams: each value the harness cannot run is refused with
// its reason, every such setting of a trace in one message, and the
// values it runs are not.
func TestRefusedParams(t *testing.T) {
	defer func(f func() error) { fuseAvailable = f }(fuseAvailable)
	// Where FUSE mounts, a power loss runs.
	fuseAvailable = func() error { return nil }
	for _, j := range []string{"no-sync", "disabled"} {
		if got := refusedParams(map[string]any{"journal": j}); got != "" {
			t.Errorf("--journal %s with FUSE: refused (%s), want it run on disks that can lose power", j, got)
		}
	}
	for _, tc := range []struct {
		params map[string]any
		want   []string // substrings; none: not refused
	}{
		{map[string]any{"bookies": 3, "variant": "reference", "journal": "", "checkpoints": true, "recovery-read": "sequence"}, nil},
		{map[string]any{"variant": spec.VariantSplitAddCheck, "journal": "synced", "ledger-storage": "db"}, nil},
		{map[string]any{"variant": spec.VariantDurableFenceReply}, nil},
		{map[string]any{"variant": spec.VariantAwaitPreBootCheck, "data-integrity": true, "reformat-cookie": "kept"}, nil},
		{map[string]any{"variant": spec.VariantSkipChangeNoFailed}, nil},
		{map[string]any{"variant": spec.VariantSkipInconsistentRange, "autorecovery": true}, nil},
		{map[string]any{"variant": spec.VariantIntegrityFencesClosed}, []string{"--variant integrity-fences-closed (the agent weaves no advice for integrity-fences-closed (IntegrityFencesClosed)"}},
		{map[string]any{"journal": "no-sync", "ledger-storage": "interleaved"}, []string{"--journal no-sync (journalSyncData=false and journalWriteData=false lose data only on a power loss, which needs a FUSE file system here: no FUSE", "--ledger-storage interleaved ("}},
		{map[string]any{"autorecovery": true, "auditor-verification-percentage": 100.0}, nil},
		{map[string]any{"data-integrity": true, "ledger-storage": "interleaved", "unavailable": 1.0}, []string{"--ledger-storage interleaved (the harness's bookies run DbLedgerStorage)", "--unavailable 1 ("}},
		{map[string]any{"unavailable": 0.0, "data-integrity": false}, nil},
		{map[string]any{"no-such-setting": 1}, []string{"--no-such-setting (a setting this bkcheck's model does not have)"}},
	} {
		fuseAvailable = func() error { return errors.New("no FUSE") }
		got := refusedParams(tc.params)
		if len(tc.want) == 0 && got != "" {
			t.Errorf("%v: refused (%s), want it run", tc.params, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v: refused %q, want it to name %q", tc.params, got, w)
			}
		}
	}
	p := spec.DefaultParams()
	if why := RefusedSettings(p); why != "" {
		t.Errorf("the default model is refused: %s", why)
	}
	p.Unavailable = 1
	if why := RefusedSettings(p); !strings.Contains(why, "--unavailable") {
		t.Errorf("--unavailable: refused %q, want it named", why)
	}
}

// TestITFNames: every name the harness reads from a trace (a state
// variable, a record field, a message type, an action, a setting) is in
// the model's vocabulary, as the traces the pages publish spell it: a
// name the model renamed would otherwise read as absent on real bookies.
func TestITFNames(t *testing.T) {
	vocabulary := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				vocabulary[k] = true
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case string:
			vocabulary[v] = true
		}
	}
	traces, _ := filepath.Glob(filepath.Join("..", "docs", "traces", "*", "*.itf.json"))
	if len(traces) < 10 {
		t.Fatalf("found %d of the pages' traces", len(traces))
	}
	for _, path := range traces {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		walk(v)
	}
	for _, m := range mappings {
		if !vocabulary[m.action] && m.take != nil {
			t.Logf("%s: no page trace takes it", m.action)
		}
	}
	names, suffixes := harnessNames(t)
	for name, where := range names {
		if _, err := strconv.Atoi(name); err == nil || notTraceNames[name] != "" {
			continue
		}
		if spec.ParamsSchema.Has(name) {
			continue
		}
		if _, ok := spec.ActionKindByName(name); ok {
			continue
		}
		if !vocabulary[name] {
			t.Errorf("%s reads %q from a trace, which no trace of the pages has", where, name)
		}
	}
	for suffix, where := range suffixes {
		found := false
		for name := range vocabulary {
			found = found || strings.HasSuffix(name, suffix) && name != suffix
		}
		if !found {
			t.Errorf("%s looks for names ending in %q, and no trace of the pages has one", where, suffix)
		}
	}
}

// notTraceNames are the strings harnessNames finds that index no trace,
// with what they index.
var notTraceNames = map[string]string{
	"error": "conform's report: the walks that ended in an error (Report.Verdicts)",
}

// harnessNames is every string the harness's Go files use to read a
// trace: the key of an index expression, the argument of an itfState's
// num or str, and a literal compared with a message's Type (or ending in
// Message), with where each is first used; and apart, the suffixes it
// looks for with strings.HasSuffix.
func harnessNames(t *testing.T) (names, suffixes map[string]string) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	names, suffixes = map[string]string{}, map[string]string{}
	seen := map[*ast.BasicLit]bool{}
	addTo := func(to map[string]string, lit ast.Expr) {
		bl, ok := lit.(*ast.BasicLit)
		if !ok || bl.Kind != token.STRING || seen[bl] {
			return
		}
		seen[bl] = true
		s, _ := strconv.Unquote(bl.Value)
		if _, dup := to[s]; !dup {
			to[s] = fset.Position(bl.Pos()).String()
		}
	}
	add := func(lit ast.Expr) { addTo(names, lit) }
	readsITF := map[string]bool{"num": true, "str": true}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.IndexExpr:
				add(n.Index)
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && readsITF[sel.Sel.Name] && len(n.Args) == 1 {
					add(n.Args[0])
				} else if ok && sel.Sel.Name == "HasSuffix" && len(n.Args) == 2 {
					addTo(suffixes, n.Args[1])
				}
			case *ast.BasicLit:
				if s, _ := strconv.Unquote(n.Value); n.Kind == token.STRING && regexp.MustCompile(`^[A-Z][A-Za-z]*Message$`).MatchString(s) {
					add(n)
				}
			}
			return true
		})
	}
	if len(names) < 20 {
		keys := make([]string, 0, len(names))
		for k := range names {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Fatalf("found only %d names the harness reads (%v): the scan is broken", len(names), keys)
	}
	return names, suffixes
}

// TestReleasesDeclared: the harness's releases are declared once
// (spec.HarnessReleases): the default is one of them and each is a release
// the model knows, the Maven module's default is the default release, and
// docs/conformance.md lists them. (cmd/bkcheck's TestOnBookKeeperRecords
// holds the pages' run records to the list.)
func TestReleasesDeclared(t *testing.T) {
	if !slices.Contains(spec.HarnessReleases, spec.DefaultRelease) || DefaultVersion != spec.DefaultRelease {
		t.Errorf("the default release %s (the harness's: %s) is not among the harness's releases %v", spec.DefaultRelease, DefaultVersion, spec.HarnessReleases)
	}
	for _, r := range spec.HarnessReleases {
		if _, err := spec.ParseRelease(r); err != nil {
			t.Errorf("the harness's release %s: %v", r, err)
		}
	}
	pom, err := os.ReadFile(filepath.Join("java", "pom.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`<bookkeeper\.version>([^<]*)</bookkeeper\.version>`).FindSubmatch(pom); m == nil || string(m[1]) != spec.DefaultRelease {
		t.Errorf("bridge/java/pom.xml builds against %q by default, want the default release %s", m, spec.DefaultRelease)
	}
	if err := docblock.Check(filepath.Join("..", "docs", "conformance.md"), "releases", strings.Join(spec.HarnessReleases, ", ")+".\n", *updateDocs,
		"go test ./bridge -run TestReleasesDeclared -update-docs"); err != nil {
		t.Error(err)
	}
}

// TestRaceRefused: the harness runs an add's check apart from its store
// when what comes between at that bookie is one fencing request (bk-4701's
// trace: the recovery read at state 12), and refuses any other step there,
// naming it.
func TestRaceRefused(t *testing.T) {
	states, _, err := readITFStates(docTrace("bugs/bk-4701.itf.json"))
	if err != nil {
		t.Fatal(err)
	}
	check := -1
	for i := 1; i < len(states) && check < 0; i++ {
		if states[i].action() == "BookieChecksAdd" && checkInterleaved(states, i) > 0 {
			check = i
		}
	}
	if check < 0 {
		t.Fatal("bk-4701's trace has no check apart from its store")
	}
	if k := raceRefused(states, check); k != 0 {
		t.Errorf("bk-4701: refused at state %d (%s), want it run", k+1, states[k].action())
	}
	if !racesAdds(states) {
		t.Error("bk-4701: racesAdds false, want the agent able to race")
	}
	// Without the store (state 13) the next step of b2 after the fence is
	// not the checked add's: refused there.
	var cut []itfState
	for i, s := range states {
		if !(s.action() == "BookieSendsAddConfirmedResponse" && s.picks()["bookie"] == "b2" && i > check) {
			cut = append(cut, s)
		}
	}
	k := raceRefused(cut, check)
	if k == 0 || cut[k].picks()["bookie"] != "b2" || fencesAt(cut[k-1], cut[k]) {
		t.Errorf("without the store: refused at %d, want the first step of b2 after the fence", k)
	}
}
