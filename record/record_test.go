package record

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const header = `{"format":"bkcheck-record/1","model":"current","params":{"bookies":2},"source":"bookies","release":"4.18.2","seed":7}`

func TestRoundTrip(t *testing.T) {
	lac, last := 1, 2
	r := &Record{Header: Header{Format: Format, Model: "current", Params: []byte(`{"bookies":2}`), Source: Bookies, Release: "4.18.2", Seed: 7},
		Groups: []Group{
			{Cause: "c1 creates", Events: []Event{{Kind: Meta, Meta: &Ledger{Status: "OPEN", Version: 1, Ensembles: []Ensemble{{First: 1, Bookies: []string{"b1", "b2"}}}}}, {Kind: Status, Client: "c1", Status: "OPEN"}}},
			{Cause: "deliver", Events: []Event{{Kind: Deliver, Msg: &Message{Type: "AddEntryRequest", Client: "c1", Bookie: "b2", Entry: 1, LAC: &lac}}, {Kind: Send, Msg: &Message{Type: "AddEntryResponse", Client: "c1", Bookie: "b2", Entry: 1, RC: EOK}}}},
			{Cause: "close", Events: []Event{{Kind: Meta, Meta: &Ledger{Status: "CLOSED", Version: 2, Ensembles: []Ensemble{{First: 1, Bookies: []string{"b1", "b2"}}}, LastEntry: &last}}}},
		}}
	var b bytes.Buffer
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	got, err := Read(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(r, got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
}

// TestReadRefuses: each bad record is refused with every problem named.
func TestReadRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"empty", "", []string{"not a record (empty)"}},
		{"not JSON", "hello\n", []string{"not a record (its first line"}},
		{"a trace", `{"#meta": {"format": "ITF"}}` + "\n", []string{"not a record (its first line"}},
		{"truncated", header + "\n" + `{"cause":"x","events":[]}` + "\n", []string{"truncated: no end line after 1 groups"}},
		{"end miscounts", header + "\n" + `{"end":{"groups":3}}` + "\n", []string{"the end line counts 3 groups, the record has 0"}},
		{"other format", strings.Replace(header, "/1", "/9", 1) + "\n" + `{"end":{"groups":0}}`, []string{`format "bkcheck-record/9"`}},
		{"no release", strings.Replace(header, `"release":"4.18.2",`, "", 1) + "\n" + `{"end":{"groups":0}}`, []string{"a record of bookies names no release"}},
		{"every problem of a group", header + "\n" +
			`{"cause":"","events":[{"kind":"jump"},{"kind":"send","msg":{"type":"AddEntryRequest","client":"x1","bookie":"b1","entry":0,"rc":"EOK"}},{"kind":"acked","client":"c1"},{"kind":"meta","meta":{"status":"GONE","version":0,"ensembles":[]}}]}` + "\n" +
			`{"cause":"y","events":[],"extra":1}` + "\n" + `{"end":{"groups":1}}`,
			[]string{"line 2: a group without a cause", `unknown kind "jump"`, `message between "x1" and "b1"`, "AddEntryRequest with entry 0", `AddEntryRequest with rc "EOK"`,
				"event 3 (acked): entry 0", `metadata status "GONE"`, "metadata version 0", `line 3: group: json: unknown field "extra"`}},
		{"text after the end", header + "\n" + `{"end":{"groups":0}}` + "\n" + `{"cause":"late","events":[]}`, []string{"line 3: text after the end line"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read([]byte(tc.text))
			if err == nil {
				t.Fatal("read")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
