package specprops

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/properties"
)

// fastCorpus are expressions that exercise every node the fast path
// implements, errors included (a missing key, an index out of range,
// division by zero, overflow), and the CEL rules for them (an error on one
// side of && or || is absorbed by a decisive value on the other).
var fastCorpus = []string{
	`clients["c1"].lac >= 0 && clients["c2"].lap <= 8`,
	`clients.all(id, c, c.status != "STATUS_CLOSED" || c.lac == meta_last_entry)`,
	`clients.exists(id, clients[id].status == "STATUS_OPEN")`,
	`clients.exists_one(id, c, c.status == "STATUS_CLOSED")`,
	`size(clients.filter(id, clients[id].lac > 0)) < 2`,
	`clients.map(id, clients[id].lac).all(x, x >= 0)`,
	`meta_fragments.all(i, f, i >= 0 && size(f.ensemble) == params.ensemble)`,
	`b_entries.all(b, es, es.all(e, e.data == e.id) && size(es) <= params.entries)`,
	`b_lac.exists(b, l, l > 0) || b_fenced.all(b, f, !f)`,
	`messages.all(m, m.count in [-1, 0, 1] && (m.type != "ReadResponseMessage" || m.code in ["OK", "NoSuchEntry", "Unknown"]))`,
	`messages.exists(m, m.type == "FenceRequestMessage" && m.bookie == "b2" && m.count == 1)`,
	`messages.all(m, !has(m.entry) || m.entry.id >= 1)`,
	`clients.all(id, c, !has(c.curr_fragment) || c.curr_fragment == c.fragments[size(c.fragments) - 1])`,
	`clients.all(id, c, c.read_responses.all(r, r.bookie in [r.bookie + ""] && r.count == 0))`,
	`seq(1, 3).map(e, copies(e)).all(n, n <= 2) && seq(3, 1) == []`,
	`size(meta_fragments) == 0 || fragment_of(1).id == meta_fragments[0].id`,
	`clients.all(id, c, fragment_of(1, c.fragments).id <= 1 && write_set(1, fragment_of(1, c.fragments)) == fragment_of(1, c.fragments).ensemble)`,
	`holders(1).all(b, b in b_entries && b_entries[b].exists(e, e.id == 1))`,
	`meta_last_entry - 1 < meta_version * 2 && meta_version / 1 == meta_version && meta_version % 2 in [0, 1] && -meta_version <= 0`,
	`(meta_status == "STATUS_CLOSED" ? meta_last_entry : meta_version) >= 0`,
	`clients[params.variant].lac > 0 || true`,  // error absorbed by true
	`true && clients[params.variant].lac > 0`,  // error
	`false && clients[params.variant].lac > 0`, // false
	`meta_fragments[5].id > 0`, // index out of range (mostly)
	`meta_version / (meta_version - meta_version) > 0 || meta_status == "Nil"`, // division by zero, or true
	`9223372036854775807 + meta_version > 0`,                                   // overflow once the ledger exists
	`clients.all(id, c, c.confirmed.all(e, bs, size(bs) <= params.write_quorum && e in seq(1, params.entries)))`,
	`params.bookie_ids.all(b, b in b_lac) && size(params.client_ids) == params.clients && params.variant != ""`,
	`[meta_status, "x"][0] != "x" && ["a", meta_status].exists(s, s == meta_status)`,
	`clients.all(id, c, c.pending_add_ops.all(op, op.fragment_id >= 1 && op.entry.id <= c.lap && size(op.ensemble) >= 1))`,
	`b_down + b_read_only == b_down + b_read_only && size(b_limbo) == 0`,
	`meta_status.startsWith("STATUS") || meta_status == "Nil" // a string function: cel-go`,
	`clients.all(id, c, c.meta_version == Nil || c.meta_version <= meta_version)`,
	`clients.exists(id, c, c.lafr > 0) || b_lafr.all(b, l, l == 0)`,
	`faults_used.crashes <= params.crashes && faults_used.reformat <= params.reformat`,
}

// TestFastMatchesCEL: the fast path and cel-go's interpreter agree on
// every corpus expression, every built-in and on every sampled state:
// the same verdict, or both an error.
func TestFastMatchesCEL(t *testing.T) {
	var defs []properties.Def
	for i, x := range fastCorpus {
		defs = append(defs, properties.Def{Name: fmt.Sprintf("corpus%02d", i), Kind: properties.Invariant, Expr: x})
	}
	for _, b := range Builtins {
		defs = append(defs, b.Defs("")...)
	}
	for mi, p := range equivalenceModels() {
		p.EnsureDefaults()
		set, err := Compile(p, defs)
		if err != nil {
			t.Fatal(err)
		}
		for i, pr := range set.Props {
			if fast := !strings.Contains(pr.Expr, "cel-go"); set.Fast(i) != fast {
				t.Errorf("%s on the fast path: %v, want %v: %s", pr.Name, set.Fast(i), fast, pr.Expr)
			}
		}
		fast, _ := set.NewEvaluator()
		slow, _ := set.NewEvaluator()
		slow.noFast = true
		states, _ := sampleStates(t, p, 60)
		outcomes := map[string]map[string]bool{}
		for si := range states {
			fast.Load(&states[si])
			slow.Load(&states[si])
			for i, pr := range set.Props {
				fv, ferr := fast.Holds(i)
				sv, serr := slow.Holds(i)
				if fv != sv || (ferr == nil) != (serr == nil) {
					t.Fatalf("%s on %s state %d: fast %v %v, cel-go %v %v\n%s", pr.Name, p, si, fv, ferr, sv, serr, pr.Expr)
				}
				if outcomes[pr.Name] == nil {
					outcomes[pr.Name] = map[string]bool{}
				}
				switch {
				case ferr != nil:
					outcomes[pr.Name]["error"] = true
				default:
					outcomes[pr.Name][map[bool]string{true: "true", false: "false"}[fv]] = true
				}
			}
		}
		if mi == 0 {
			t.Logf("outcomes: %v", outcomes)
		}
	}
}
