package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/traces"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the counterexample gallery under docs/traces")

// docTraces is the counterexample gallery (docs/traces). Each entry yields
// NAME.txt (the output of the command in its first line), NAME.itf.json (the
// trace) and NAME.md (the explanation with the Mermaid sequence diagram).
// TestDocTraces fails when any of them is stale.
var docTraces = []struct {
	name  string
	title string
	args  []string
	slow  bool // needs a search of many millions of states: long tier only
	about string
}{
	{"below-qw-ensemble-change", "An ensemble change leaves an acknowledged entry below Qw",
		[]string{"check", "--bookies", "3", "-w", "2", "-a", "1", "--invariants", "TailFragmentsReachWriteQuorum"}, false,
		"The writer sends entry 1 to b1 and b2; the request to b1 is lost. b2's ack alone reaches Qa = 1, so entry 1 is acknowledged. The lost request is a timeout: the writer replaces b1 by b3 in a new fragment that starts at LAC + 1 = 2. Entry 1 belongs to the old fragment and will never be written to b1 again: it stays at one copy of Qw = 2, which TailFragmentsReachWriteQuorum (from the Guaranteed Write Quorum spec) reports."},
	{"below-qw-close-racing-writes", "Closing the ledger races the outstanding writes",
		[]string{"check", "--bookies", "2", "-w", "2", "-a", "1", "--invariants", "EntriesReachWriteQuorum", "--exclude-actions", "ClientChangesEnsemble,RecoveryClientChangesEnsemble"}, false,
		"With ensemble changes excluded, the shortest way below Qw: entry 1 is acknowledged after b2's ack (Qa = 1) and the writer closes the ledger at LAC 1 at once. Its request to b1 was lost, and a closed ledger is never written again: the closed ledger's entry 1 has one copy for good."},
	{"below-qw-bookie-failure", "A bookie fails after Qa acks",
		[]string{"check", "--bookies", "2", "-w", "2", "-a", "1", "--invariants", "EntriesReachWriteQuorum", "--reliable-network", "--crashes", "1"}, false,
		"No message is ever lost on this network, yet an entry stays below Qw: b1 acknowledges entry 1 (Qa = 1), then b2 crashes before the write reaches it, which loses the request. The writer closes the ledger; b2 comes back without the entry."},
	{"no-recovery-fence-2614", "Recovery reads without fencing truncate the ledger (apache/bookkeeper#2614)",
		[]string{"check", "--bookies", "2", "-w", "2", "-a", "2", "--variant", "no-recovery-fence"}, false,
		"Release 4.13 behaviour. The writer's entry 1 is on b1; recovery fences b1 only (enough with Qw 2, Qa 2) and reads entry 1 without fencing. The read to b1 is lost; b2, not yet holding the entry, answers NoSuchEntry, one negative, enough with Qw - Qa + 1 = 1. Meanwhile b2, unfenced, stores entry 1 and the writer acknowledges it (LAC 1). Recovery then closes the ledger at entry 0: the acknowledged entry is cut off. Fencing recovery reads (PR #2616) makes b2 reject the write."},
	{"reformat-qa1", "With Qa = 1 one re-formatted bookie loses an acknowledged entry",
		[]string{"check", "--bookies", "2", "-w", "2", "-a", "1", "--reformat", "1"}, false,
		"Entry 1 is acknowledged by b1 alone (Qa = 1); an operator re-formats b1 (its cookie deleted) and it rejoins empty under the same address before the write to b2 lands: the acknowledged entry is on no bookie."},
	{"reformat-w3-a2-1", "Qw 3, Qa 2: one re-formatted bookie lets recovery truncate",
		[]string{"check", "--bookies", "3", "-w", "3", "-a", "2", "--reformat", "1", "--invariants", "AllAckedEntriesAreReadable,NoDivergenceBetweenClientAndMetaData",
			"--exclude-actions", "ClientReceivesAddFencedResponse,BookieSendsAddFencedResponse,ClientResendsPendingAddOp,ClientClosesLedgerSuccess,ClientClosesLedgerFail,ClientWritesBackEntry,RecoveryClientReceivesAddConfirmedResponse,RecoveryClientChangesEnsemble,RecoveryClientSendsPendingAddOp"}, true,
		"Entry 1 reaches b1 and b2 and is acknowledged (Qa = 2); the write to b3 is still in flight. b1 is re-formatted and rejoins empty under the same address (cookie validation bypassed by the operator). Recovery fences b1 and b2 and reads entry 1: b1 (empty) and b3 (never got it) answer NoSuchEntry, Qw - Qa + 1 = 2 negatives, while the read to b2 is lost. Recovery concludes entry 1 was never committed and closes the ledger at entry 0, though the writer acknowledged entry 1 (apache/bookkeeper#2612's mechanism). (Found on the model restricted to actions that can lose data; the unrestricted search finds the same 19-state trace after 265 million states.)"},
	{"reformat-w3-a2-data-integrity-2", "Qw 3, Qa 2, data-integrity check on: it takes two re-formats",
		[]string{"check", "--bookies", "3", "-w", "3", "-a", "2", "--reformat", "2", "--data-integrity", "--reformat-cookie", "kept", "--invariants", "AllAckedEntriesAreReadable,NoDivergenceBetweenClientAndMetaData"}, false,
		"With BookKeeper's data-integrity check (dataIntegrityChecking, BP-46), and the re-format keeping the bookie's cookie in the metadata store with dataIntegrityStampMissingCookiesEnabled=true (the only re-format after which the check runs: cookie validation runs it and waits), a re-formatted bookie of the open ledger's last ensemble comes back fenced and in limbo: it answers Unknown, not NoSuchEntry, so recovery cannot truncate after one loss. Only losing both copies of an acknowledged entry loses it: b1 and b2 acknowledge entry 1, then both are re-formatted."},
	{"reformat-w3-a2-2", "Qw 3, Qa 2, two re-formats without the data-integrity check",
		[]string{"check", "--bookies", "3", "-w", "3", "-a", "2", "--reformat", "2", "--invariants", "AllAckedEntriesAreReadable,NoDivergenceBetweenClientAndMetaData"}, false,
		"The shortest loss with two re-formats: both bookies that acknowledged entry 1 rejoin empty."},
}

// docOutput runs bkcheck and keeps what does not depend on the machine,
// and the trace it wrote.
func docOutput(t *testing.T, args []string) (string, *traces.Trace) {
	t.Helper()
	var out, errb bytes.Buffer
	tracePath := filepath.Join(t.TempDir(), "t.itf.json")
	code := run(context.Background(), append(args, "--workers", "2", "--trace-out", tracePath), &out, &errb)
	if code != exitViolation && code != exitTerminal {
		t.Fatalf("bkcheck %s: exit %d, want a violation\n%s", strings.Join(args, " "), code, errb.String())
	}
	var keep []string
	keep = append(keep, "$ bkcheck "+strings.Join(args, " "))
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "Finished in ") || strings.Contains(line, "; workers: ") || strings.HasPrefix(line, "Trace written to ") {
			continue
		}
		keep = append(keep, line)
	}
	tr, err := readTrace(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimRight(strings.Join(keep, "\n"), "\n") + "\n", tr
}

func TestDocTraces(t *testing.T) {
	var index []string
	for _, d := range docTraces {
		index = append(index, fmt.Sprintf("- [%s](%s.md)", d.title, d.name))
		if d.slow && !testtier.IsLong() {
			continue
		}
		t.Run(d.name, func(t *testing.T) {
			text, tr := docOutput(t, d.args)
			if err := check.Replay(tr); err != nil {
				t.Fatalf("replay does not confirm the trace bkcheck wrote: %v", err)
			}
			var itf, mermaid bytes.Buffer
			if err := traces.EncodeITF(&itf, tr); err != nil {
				t.Fatal(err)
			}
			if err := traces.RenderMermaid(&mermaid, tr); err != nil {
				t.Fatal(err)
			}
			if mermaid.Len() > 50000 {
				t.Errorf("Mermaid diagram of %d characters exceeds GitHub's 50,000", mermaid.Len())
			}
			page := fmt.Sprintf("# %s\n\n%s\n\nReproduce: `bkcheck %s` — the trace is [%s.itf.json](%s.itf.json) (check it with `bkcheck replay`), the full text [%s.txt](%s.txt).\n\n```mermaid\n%s```\n",
				d.title, d.about, strings.Join(d.args, " "), d.name, d.name, d.name, d.name, mermaid.String())
			files := map[string]string{d.name + ".txt": text, d.name + ".itf.json": itf.String(), d.name + ".md": page}
			for name, content := range files {
				checkDoc(t, name, content)
			}
		})
	}
	checkDoc(t, "README.md", "# Counterexample gallery\n\nEach page explains one counterexample bkcheck found, shows it as a sequence diagram, and links its ITF trace and full text. `go test ./cmd/bkcheck -run TestDocTraces -update-docs` regenerates them.\n\n"+strings.Join(index, "\n")+"\n")
}

func checkDoc(t *testing.T, name, content string) {
	t.Helper()
	path := filepath.Join("..", "..", "docs", "traces", name)
	if *updateDocs {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with: go test ./cmd/bkcheck -run TestDocTraces -update-docs)", err)
	}
	if string(want) != content {
		t.Errorf("%s is stale; regenerate with: go test ./cmd/bkcheck -run TestDocTraces -update-docs", path)
	}
}
