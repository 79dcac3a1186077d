package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/bkcheck/bkcheck/spec"
)

// lasso is a walk marked as an eventually property's lasso (the format
// does not check that the states repeat; replay does).
func lasso(t *testing.T) *Trace {
	tr := itfTraces(t)[0]
	tr.Kind, tr.Invariant, tr.Expression = "eventually", "Closed", `meta_status == "STATUS_CLOSED"`
	tr.Loop = 3
	tr.Fairness = []FairStep{{Constraint: "ClientSendsAddEntryRequests", Step: 4, Taken: true}, {Constraint: "ClientStartsRecovery", Step: 3}}
	return tr
}

// TestLassoRendering: the loop and the fairness witnesses in text,
// Mermaid and HTML, and through ITF's "loop" and back.
func TestLassoRendering(t *testing.T) {
	tr := lasso(t)
	var b bytes.Buffer
	if err := RenderText(&b, tr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"the last returns to state 3: the behaviour repeats the cycle forever and never satisfies Closed",
		"-- the behaviour returns to state 3 and repeats forever --",
		"WF(ClientSendsAddEntryRequests): taken at step 4",
		"WF(ClientStartsRecovery): disabled in state 3",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := RenderMermaid(&b, tr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "back to state 3, the cycle repeats forever") {
		t.Errorf("Mermaid lacks the loop:\n%s", b.String())
	}
	b.Reset()
	if err := RenderHTML(&b, tr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "the cycle is fair: WF(ClientSendsAddEntryRequests): taken at step 4") {
		t.Errorf("HTML lacks the fairness witness")
	}

	b.Reset()
	if err := EncodeITF(&b, tr); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if string(doc["loop"]) != "2" {
		t.Errorf("ITF loop = %s, want 2 (0-based)", doc["loop"])
	}
	got, err := DecodeITF(bytes.NewReader(b.Bytes()), spec.ResolveTrace)
	if err != nil {
		t.Fatal(err)
	}
	want, back := *tr, *got
	want.Model, back.Model = nil, nil
	if diff := cmp.Diff(&want, &back, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("round trip differs (-want +got):\n%s", diff)
	}

	// A finite trace has no loop.
	b.Reset()
	plain := itfTraces(t)[0]
	if err := EncodeITF(&b, plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `"loop"`) {
		t.Errorf("a finite trace has a loop field")
	}
}

// TestLassoITFErrors: a loop that is not a state before the last, on a
// trace that is not an eventually property's, or a fairness witness
// outside the cycle, is refused.
func TestLassoITFErrors(t *testing.T) {
	var b bytes.Buffer
	if err := EncodeITF(&b, lasso(t)); err != nil {
		t.Fatal(err)
	}
	good := b.String()
	n := len(lasso(t).Steps)
	for name, edit := range map[string]func(map[string]any){
		"negative":       func(d map[string]any) { d["loop"] = -1 },
		"the last state": func(d map[string]any) { d["loop"] = n - 1 },
		"not a number":   func(d map[string]any) { d["loop"] = "2" },
		"not eventually": func(d map[string]any) { d["#meta"].(map[string]any)["kind"] = "invariant" },
		"witness before the cycle": func(d map[string]any) {
			d["#meta"].(map[string]any)["fairness"] = []any{map[string]any{"constraint": "X", "step": 1, "taken": true}}
		},
	} {
		var d map[string]any
		if err := json.Unmarshal([]byte(good), &d); err != nil {
			t.Fatal(err)
		}
		edit(d)
		bad, _ := json.Marshal(d)
		if _, err := DecodeITF(bytes.NewReader(bad), spec.ResolveTrace); !errors.Is(err, ErrITF) {
			t.Errorf("%s: %v, want an ITF error", name, err)
		}
	}
}
