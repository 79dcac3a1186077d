package validate

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/record"
)

var update = flag.Bool("update", false, "rewrite testdata/records/*.want")

// TestRecords validates every committed record (testdata/records: records
// of real bookies, and of the model's traces, VALID and INVALID) without a
// cluster and compares the answer with its .want file.
func TestRecords(t *testing.T) {
	paths, _ := filepath.Glob("testdata/records/*.jsonl")
	if len(paths) < 4 {
		t.Fatalf("only %d committed records", len(paths))
	}
	verdicts := map[string]int{}
	for _, path := range paths {
		r, err := record.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Record(r, Options{})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		verdicts[res.Verdict]++
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s (%d groups, %d model states)\n", res.Verdict, res.Groups, res.States)
		res.WriteStuck(&b)
		want := strings.TrimSuffix(path, ".jsonl") + ".want"
		if *update {
			if err := os.WriteFile(want, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		w, err := os.ReadFile(want)
		if err != nil {
			t.Fatalf("%v (go test ./validate -run TestRecords -update)", err)
		}
		if string(w) != b.String() {
			t.Errorf("%s: got\n%s\nwant\n%s", path, b.String(), w)
		}
	}
	if verdicts[Valid] == 0 || verdicts[Invalid] == 0 {
		t.Errorf("the committed records must hold VALID and INVALID ones: %v", verdicts)
	}
}

// BenchmarkValidate validates the committed record of
// f-stale-acks-also1 (an ensemble change and a timeout: 15 groups).
func BenchmarkValidate(b *testing.B) {
	r, err := record.ReadFile("testdata/records/model-f-stale-acks-also1.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	m, err := Model(r.Header)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if res, err := Against(m, r, Options{}); err != nil || res.Verdict != Valid {
			b.Fatal(err, res.Verdict)
		}
	}
}
