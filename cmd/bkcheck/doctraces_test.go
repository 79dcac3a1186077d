package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the counterexamples under docs/traces")

// docTraces are the counterexamples the documentation shows. Each file is
// exactly the output of the command in its first line, so readers can
// reproduce it; TestDocTraces fails when a file is stale.
var docTraces = []struct {
	file string
	args []string
	slow bool // needs a search of many millions of states: only with BKCHECK_SLOW=1
}{
	{"below-qw-ensemble-change.txt", []string{"check", "--bookies", "3", "-w", "2", "-a", "1", "--invariants", "TailFragmentsReachWriteQuorum"}, false},
	{"below-qw-close-racing-writes.txt", []string{"check", "--bookies", "2", "-w", "2", "-a", "1", "--invariants", "EntriesReachWriteQuorum", "--exclude-actions", "ClientChangesEnsemble,RecoveryClientChangesEnsemble"}, false},
	{"below-qw-bookie-failure.txt", []string{"check", "--bookies", "2", "-w", "2", "-a", "1", "--invariants", "EntriesReachWriteQuorum", "--reliable-network", "--crashes", "1"}, false},
	{"no-recovery-fence-2614.txt", []string{"check", "--bookies", "2", "-w", "2", "-a", "2", "--variant", "no-recovery-fence"}, false},
	{"data-loss-qa1.txt", []string{"check", "--bookies", "2", "-w", "2", "-a", "1", "--data-loss", "1"}, false},
	{"data-loss-w3-a2-limbo-2.txt", []string{"check", "--bookies", "3", "-w", "3", "-a", "2", "--data-loss", "2", "--data-loss-mode", "limbo", "--invariants", "AllAckedEntriesAreReadable,NoDivergenceBetweenClientAndMetaData"}, false},
	{"data-loss-w3-a2-blank-1.txt", []string{"check", "--bookies", "3", "-w", "3", "-a", "2", "--data-loss", "1", "--data-loss-mode", "blank", "--invariants", "AllAckedEntriesAreReadable,NoDivergenceBetweenClientAndMetaData",
		"--exclude-actions", "ClientReceivesAddFencedResponse,BookieSendsAddFencedResponse,ClientResendsPendingAddOp,ClientClosesLedgerSuccess,ClientClosesLedgerFail,ClientWritesBackEntry,RecoveryClientReceivesAddConfirmedResponse,RecoveryClientChangesEnsemble,RecoveryClientSendsPendingAddOp"}, true},
	{"data-loss-w3-a2-blank-2.txt", []string{"check", "--bookies", "3", "-w", "3", "-a", "2", "--data-loss", "2", "--data-loss-mode", "blank", "--invariants", "AllAckedEntriesAreReadable,NoDivergenceBetweenClientAndMetaData"}, false},
}

// docOutput runs bkcheck and keeps what does not depend on the machine.
func docOutput(t *testing.T, args []string) string {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append(args, "--workers", "2", "--trace-out", "none"), &out, &errb)
	if code != exitViolation && code != exitTerminal {
		t.Fatalf("bkcheck %s: exit %d, want a violation\n%s", strings.Join(args, " "), code, errb.String())
	}
	var keep []string
	keep = append(keep, "$ bkcheck "+strings.Join(args, " "))
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "Finished in ") || strings.Contains(line, "; workers: ") {
			continue
		}
		keep = append(keep, line)
	}
	return strings.TrimRight(strings.Join(keep, "\n"), "\n") + "\n"
}

func TestDocTraces(t *testing.T) {
	for _, d := range docTraces {
		if d.slow && os.Getenv("BKCHECK_SLOW") == "" {
			continue
		}
		t.Run(d.file, func(t *testing.T) {
			got := docOutput(t, d.args)
			path := filepath.Join("..", "..", "docs", "traces", d.file)
			if *updateDocs {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (regenerate with: go test ./cmd/bkcheck -run TestDocTraces -update-docs)", err)
			}
			if string(want) != got {
				t.Errorf("%s is stale; regenerate with: go test ./cmd/bkcheck -run TestDocTraces -update-docs", path)
			}
		})
	}
}
