package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec/invariants"
	"github.com/bkcheck/bkcheck/spec/specprops"
	"github.com/bkcheck/bkcheck/traces"
)

// fromRepo is args with a --config path made relative to this package.
func fromRepo(args []string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		if i > 0 && out[i-1] == "--config" {
			out[i] = filepath.Join("..", "..", out[i])
		}
	}
	return out
}

// propertyExamples are docs/properties.md's worked examples. Each run's
// verdict in the page is computed by bkcheck (TestPropertiesDoc).
var propertyExamples = []struct {
	title string
	about string
	runs  [][]string // bkcheck check arguments
}{
	{"The shipped configuration's invariants in CEL",
		"docs/examples/properties.toml holds TypeOK, NoDivergenceBetweenClientAndMetaData and AllAckedEntriesAreReadable written in CEL (their forms in the table above) and `invariants = [\"none\"]`, so that only the CEL ones are checked. The counts are TLC's, as with the compiled invariants.",
		[][]string{{"--config", "docs/examples/properties.toml", "--run", "shipped"}}},
	{"apache/bookkeeper#2614 found by the CEL form, and explained",
		"The same file on release 4.13's protocol (recovery reads do not fence). The explanation walks the expression down to the writer's LAC 1 against the metadata's last entry 0: the acknowledged entry was cut off by recovery.",
		[][]string{{"--config", "docs/examples/properties.toml", "--run", "apache-bookkeeper-2614"}}},
	{"Acknowledged entries have at least Qa copies",
		"What users rely on: an acknowledged entry is on at least Qa bookies of its write set. It holds on the default model; one operator re-format (a bookie rejoining empty) breaks it with Qa = 1.",
		[][]string{
			{"--invariants", "none", "--invariant", `AckedHaveQa=clients.all(id, c, !(c.status in ["STATUS_OPEN", "STATUS_CLOSED"]) || seq(1, c.lac).all(e, copies(e) >= params.ack_quorum))`},
			{"--reformat", "1", "--invariants", "none", "--invariant", `AckedHaveQa=clients.all(id, c, !(c.status in ["STATUS_OPEN", "STATUS_CLOSED"]) || seq(1, c.lac).all(e, copies(e) >= params.ack_quorum))`},
		}},
	{"An entry stays below Qw in a closed ledger",
		"What users often assume: once the ledger is closed and nothing more can happen (a terminal state), every entry is on all Qw bookies of its write set. A terminal property: false for the reference protocol, true with Guaranteed Write Quorum.",
		[][]string{
			{"--invariants", "none", "--terminal", `ClosedAtQw=meta_status != "STATUS_CLOSED" || seq(1, meta_last_entry).all(e, copies(e) == size(write_set(e)))`},
			{"--variant", "gwq", "--invariants", "none", "--terminal", `ClosedAtQw=meta_status != "STATUS_CLOSED" || seq(1, meta_last_entry).all(e, copies(e) == size(write_set(e)))`},
		}},
	{"Is an entry ever acknowledged while fewer than Qw bookies hold it and the ledger is closed?",
		"The question as a probe: found, with the shortest witness, for the reference protocol; not reachable with gwq (checked over every reachable state).",
		[][]string{
			{"--invariants", "none", "--probe", `AckedBelowQwClosed=meta_status == "STATUS_CLOSED" && clients.exists(id, c, c.lac >= 1) && seq(1, meta_last_entry).exists(e, copies(e) < params.write_quorum)`},
			{"--variant", "gwq", "--invariants", "none", "--probe", `AckedBelowQwClosed=meta_status == "STATUS_CLOSED" && clients.exists(id, c, c.lac >= 1) && seq(1, meta_last_entry).exists(e, copies(e) < params.write_quorum)`},
		}},
	{"The TLA+ spec's Liveness: the ledger is eventually closed",
		"`Liveness == WF_vars(Next) /\\ []<>LedgerIsClosed`, defined in BookKeeperProtocol.tla and checked by no cfg. Every behaviour here ends in a terminal state, so it is \"eventually some client has closed the ledger\". It fails: message loss can leave a recovery with nothing to do. More telling, it fails without any message loss too (14 states): the recovery client has both read responses in flight, and the spec lets it decide on a read response only when no other read of its is in flight (the double assignment to `messages'` that docs/model.md describes), so neither can ever be received. A liveness check finds what no invariant can: a behaviour that stops.",
		[][]string{
			{"--invariants", "none", "--eventually", `LedgerIsClosed=clients.exists(id, c, c.status == "STATUS_CLOSED")`},
			{"--reliable-network", "--invariants", "none", "--eventually", `LedgerIsClosed=clients.exists(id, c, c.status == "STATUS_CLOSED")`},
		}},
	{"A started recovery eventually closes the ledger",
		"`P ~> Q` (TLA+'s leads-to): whenever a client has started recovering, the ledger is closed then or later. Same verdicts as the spec's Liveness, for the same reasons.",
		[][]string{
			{"--invariants", "none", "--eventually", `RecoveryCloses=clients.exists(id, c, c.recovery_phase > 0) ~> meta_status == "STATUS_CLOSED"`},
			{"--reliable-network", "--invariants", "none", "--eventually", `RecoveryCloses=clients.exists(id, c, c.recovery_phase > 0) ~> meta_status == "STATUS_CLOSED"`},
		}},
	{"Can a recovery abort?",
		"A probe for a rare outcome: a recovery client gives up (all its reads answered or timed out without an OK or enough NoSuchEntry). The witness is the shortest way there.",
		[][]string{{"--invariants", "none", "--probe", `RecoveryAborts=clients.exists(id, c, c.status == "RECOVERY_ABORTED")`}}},
	{"Can two clients both believe they closed the ledger?",
		"Not reachable: a guarantee for this model. Written as an invariant (its negation) it becomes a checked claim that regression runs can keep (see below).",
		[][]string{
			{"--invariants", "none", "--probe", `TwoClosers=size(clients.filter(id, clients[id].status == "STATUS_CLOSED")) > 1`},
			{"--invariants", "none", "--invariant", `OneCloser=size(clients.filter(id, clients[id].status == "STATUS_CLOSED")) <= 1`},
		}},
	{"Does every behaviour end with nothing in flight?",
		"A terminal property that fails: a terminal state can hold messages no one will ever process. Here the writer closes the ledger at LAC 0 while b2's acknowledgement of entry 1 is still on its way; a closed client reads nothing more. The viewer's diagram draws such a message as sent and never delivered.",
		[][]string{{"--invariants", "none", "--terminal", `NothingInFlight=!messages.exists(m, m.count == 1)`}}},
}

func exampleCommand(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = schema.ShellQuote(a)
	}
	return "bkcheck check " + strings.Join(q, " ")
}

// exampleVerdict runs one example and says what bkcheck answers.
func exampleVerdict(t *testing.T, args []string) (string, *traces.Trace) {
	t.Helper()
	c := parseCheck(append(fromRepo(args), "--workers", "2", "--trace-out", "none"))
	if len(c.cl.probs) > 0 {
		t.Fatalf("%s: %v", exampleCommand(args), c.cl.probs)
	}
	rep, err := check.Run(context.Background(), *c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	switch rep.Status {
	case explorer.OK:
		parts = append(parts, fmt.Sprintf("ok, %d states", rep.Distinct))
	case explorer.Violation:
		parts = append(parts, fmt.Sprintf("**%s %s** violated: counterexample of %d states", rep.Trace.Kind, rep.Trace.Invariant, len(rep.Trace.Steps)))
	default:
		parts = append(parts, fmt.Sprintf("%s (%s)", rep.Status, rep.Reason))
	}
	for _, p := range rep.Properties {
		switch p.Status {
		case check.Found:
			parts = append(parts, fmt.Sprintf("probe %s **found**: witness of %d states", p.Name, len(p.Trace.Steps)))
		case check.NotReachable:
			parts = append(parts, fmt.Sprintf("probe %s **not reachable**", p.Name))
		case check.Holds:
			parts = append(parts, fmt.Sprintf("%s %s holds", p.Kind, p.Name))
		}
	}
	tr := rep.Trace
	if tr == nil {
		for _, p := range rep.Properties {
			if p.Status == check.Found {
				tr = p.Trace
			}
		}
	}
	return strings.Join(parts, "; "), tr
}

// TestPropertiesDoc keeps docs/properties.md's generated sections equal to
// what they describe: the state view and its helpers (from package
// properties), the CEL forms of the built-ins, and the worked examples with
// bkcheck's verdicts. Running the examples takes a minute: the default
// tier checks the rest and that every example's command type-checks.
func TestPropertiesDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "properties.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	sections := map[string]string{"view": viewSection(), "helpers": helpersSection(), "builtins": builtinsSection()}
	if testtier.IsLong() {
		sections["examples"] = examplesSection(t)
	} else {
		for _, ex := range propertyExamples {
			for _, args := range ex.runs {
				c := parseCheck(append(fromRepo(args), "--trace-out", "none"))
				if len(c.cl.probs) > 0 {
					t.Errorf("%s: %v", exampleCommand(args), c.cl.probs)
				}
				if !strings.Contains(doc, "    $ "+exampleCommand(args)+"\n") {
					t.Errorf("docs/properties.md lacks the example %s", exampleCommand(args))
				}
			}
		}
	}
	stale := false
	for name, text := range sections {
		re := regexp.MustCompile(`(?s)(<!-- properties:` + name + ` -->\n)(.*?)(<!-- end -->)`)
		m := re.FindStringSubmatch(doc)
		if m == nil {
			t.Fatalf("docs/properties.md has no <!-- properties:%s --> ... <!-- end --> block", name)
		}
		if m[2] != text {
			stale = true
			doc = re.ReplaceAllLiteralString(doc, m[1]+text+m[3])
		}
	}
	if !stale {
		return
	}
	if *updateDocs {
		os.WriteFile(path, []byte(doc), 0o644)
		return
	}
	t.Errorf("docs/properties.md is stale; regenerate with: BKCHECK_LONG=1 go test ./cmd/bkcheck -run TestPropertiesDoc -update-docs")
}

func viewSection() string {
	vars, recs := specprops.View()
	var b strings.Builder
	b.WriteString("| name | type | meaning |\n|---|---|---|\n")
	for _, v := range vars {
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", v.Name, v.Type, mdCell(v.Doc))
	}
	for _, r := range recs {
		fmt.Fprintf(&b, "\n**%s** — %s\n\n| field | type | meaning |\n|---|---|---|\n", r.Name, mdCell(r.Doc))
		for _, f := range r.Fields {
			fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", f.Name, f.Type, mdCell(f.Doc))
		}
	}
	return b.String()
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func helpersSection() string {
	var b strings.Builder
	b.WriteString("| helper | meaning |\n|---|---|\n")
	for _, h := range specprops.Helpers() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", h.Signature, mdCell(h.Doc))
	}
	return b.String()
}

func builtinsSection() string {
	var b strings.Builder
	for _, inv := range invariants.All {
		bi, ok := specprops.BuiltinByName(inv.Name)
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "**%s** — %s\n\n```\n%s\n```\n\n", inv.Name, inv.Statement, bi.Invariant)
		if bi.Terminal != "" {
			fmt.Fprintf(&b, "and in terminal states (`--terminal`):\n\n```\n%s\n```\n\n", bi.Terminal)
		}
	}
	return b.String()
}

func examplesSection(t *testing.T) string {
	var b strings.Builder
	for i, ex := range propertyExamples {
		fmt.Fprintf(&b, "### %d. %s\n\n%s\n\n", i+1, ex.title, ex.about)
		var why string
		for _, args := range ex.runs {
			verdict, tr := exampleVerdict(t, args)
			fmt.Fprintf(&b, "    $ %s\n\n→ %s\n\n", exampleCommand(args), verdict)
			if why == "" && tr != nil && tr.Explanation != nil {
				why = traces.ExplanationText(tr)
			}
		}
		if why != "" {
			fmt.Fprintf(&b, "```\n%s```\n\n", why)
		}
	}
	return b.String()
}
