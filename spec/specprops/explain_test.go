package specprops

import (
	"strings"
	"testing"
	"time"

	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

func readTrace(t *testing.T, path string) *traces.Trace {
	t.Helper()
	tr, err := traces.ReadITFFile(path, spec.ResolveTrace)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestExplain2614: the explanation of apache/bookkeeper#2614's truncation
// points at the writer's LAC 1 against the metadata's last entry 0.
func TestExplain2614(t *testing.T) {
	tr := readTrace(t, "../../docs/traces/no-recovery-fence-2614.itf.json")
	ex, err := Explain(tr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", strings.Join(ex.Lines, "\n"))
	var reads []string
	for _, r := range ex.Reads {
		reads = append(reads, r.Name+" = "+r.Value)
	}
	got := strings.Join(reads, "; ")
	for _, want := range []string{"meta_status = CLOSED", "clients[c1].lac = 1", "meta_last_entry = 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("reads %q lack %q", got, want)
		}
	}
	if !ex.Equivalent {
		t.Error("a built-in is explained by its CEL form")
	}
}

// TestUntrustedExpressionIsBounded: a trace file's expression is evaluated
// under a cost limit: one that would run for hours is stopped at once, by
// Replay's check and by the explanation.
func TestUntrustedExpressionIsBounded(t *testing.T) {
	tr := readTrace(t, "../../docs/traces/no-recovery-fence-2614.itf.json")
	tr.Kind, tr.Invariant = "invariant", "Slow"
	tr.Expression = `seq(0, 60000).all(i, seq(0, 60000).all(j, i + j >= 0)) && meta_status != "STATUS_CLOSED"`
	start := time.Now()
	p, _ := spec.ParamsOf(tr.Model)
	if _, err := CheckTrace(tr, p); err == nil || !strings.Contains(err.Error(), "cost") {
		t.Errorf("CheckTrace: %v", err)
	}
	if ex, _ := Explain(tr); ex != nil && !strings.Contains(strings.Join(ex.Lines, "\n"), "cost") {
		t.Errorf("the explanation does not say it was stopped:\n%s", strings.Join(ex.Lines, "\n"))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestExplainStripedEntry: with striping (E > Qw) an entry's write set is
// Qw of its fragment's E bookies, which no row of the state shows: the
// explanation of a failure about an entry's copies gives its write set
// and how many copies it has (issue 38, item 8). In f-stale-acks (E = 3,
// Qw = 2) entry 2 of the fragment <<b4,b2,b3>> is written to positions
// 2 and 0, {b3,b4}; b1 and b3 store it, so it has one copy, on b3. An
// unstriped trace's write set is its ensemble, shown already.
func TestExplainStripedEntry(t *testing.T) {
	for _, c := range []struct {
		path      string
		want, not []string
	}{
		{"../../docs/traces/findings/f-stale-acks.itf.json",
			[]string{"copies(e) >= params.ack_quorum is false: ", "write_set(2) = {b3,b4}", "copies(2) = 1 (b3)"}, nil},
		{"../../docs/traces/below-qw-ensemble-change.itf.json",
			[]string{"b in holders(e) is false: "}, []string{"write_set(1) =", "copies(1) ="}},
	} {
		ex, err := Explain(readTrace(t, c.path))
		if err != nil || ex == nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		text := strings.Join(ex.Lines, "\n")
		var reads []string
		for _, r := range ex.Reads {
			reads = append(reads, r.Name+" = "+r.Value)
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: the explanation lacks %q:\n%s", c.path, w, text)
			}
		}
		for _, w := range c.want[1:] {
			if !strings.Contains(strings.Join(reads, "; "), w) {
				t.Errorf("%s: the deciding values lack %q: %q", c.path, w, reads)
			}
		}
		for _, n := range c.not {
			if strings.Contains(text, n) {
				t.Errorf("%s: the explanation has %q:\n%s", c.path, n, text)
			}
		}
	}
}
