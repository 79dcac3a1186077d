package vocab

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestDecoderFirstProblemWithPath: a decoder keeps the first problem,
// names where it was (the path of At calls), wraps ErrITF, and never
// panics on values of the wrong kind.
func TestDecoderFirstProblemWithPath(t *testing.T) {
	for _, c := range []struct {
		name string
		read func(d *Decoder)
		want string // "" for no problem
	}{
		{"int in range", func(d *Decoder) { d.Int(json.Number("3"), 0, 3) }, ""},
		{"bigint", func(d *Decoder) { d.Int(map[string]any{"#bigint": "2"}, 0, 3) }, ""},
		{"int out of range", func(d *Decoder) { d.Int(json.Number("4"), 0, 3) }, "x.y: want an integer in [0,3], got 4"},
		{"int of a string", func(d *Decoder) { d.Int("3", 0, 3) }, "want an integer in [0,3], got 3"},
		{"Nil", func(d *Decoder) {
			if d.NilInt("Nil", 5) != -1 {
				d.Fail("Nil is not -1")
			}
		}, ""},
		{"bool", func(d *Decoder) { d.Bool("true") }, "want a boolean"},
		{"missing field", func(d *Decoder) { d.Field(map[string]any{}, "lac") }, `missing field "lac"`},
		{"not an object", func(d *Decoder) { d.Obj([]any{}) }, "want an object, got []interface {}"},
		{"set", func(d *Decoder) { d.Tagged(map[string]any{"#map": []any{}}, "#set") }, `want {"#set": [...]}`},
		{"pair", func(d *Decoder) { d.Pairs(Map([2]any{"a", 1})) }, ""},
		{"not a pair", func(d *Decoder) { d.Pairs(map[string]any{"#map": []any{[]any{1}}}) }, "not a [key, value] pair"},
		{"every id once", func(d *Decoder) { d.PerID(Map([2]any{"b1", 0}, [2]any{"b1", 1}), "b", 2) }, "b1 appears twice"},
		{"an id missing", func(d *Decoder) { d.PerID(Map([2]any{"b1", 0}), "b", 2) }, "no b2, though #meta.params has 2"},
		{"id out of range", func(d *Decoder) { d.ID("c5", "c", 2) }, `want c1..c2, got "c5"`},
		{"first problem kept", func(d *Decoder) { d.Bool(1); d.Str(2) }, "want a boolean, got 1"},
		{"lookup", func(d *Decoder) { Lookup(d, map[int]string{1: "OPEN"}, "SHUT") }, `unknown value "SHUT"`},
	} {
		d := &Decoder{}
		d.At("x", func() { d.At("y", func() { c.read(d) }) })
		err := d.Err()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !errors.Is(err, ErrITF) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "x.y: ")):
			t.Errorf("%s: got %v, want ErrITF at x.y with %q", c.name, err, c.want)
		}
	}
}

// TestEncodings: the ADR-015 encodings the models write.
func TestEncodings(t *testing.T) {
	got, _ := json.Marshal([]any{Set(), Set("b1"), Map([2]any{1, true}), NilOr(-1), NilOr(2), ID("b", 0)})
	if want := `[{"#set":[]},{"#set":["b1"]},{"#map":[[1,true]]},"Nil",2,"b1"]`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if !SameJSON(Normalise(map[string]any{"n": json.Number("3")}), map[string]any{"n": 3}) {
		t.Error("Normalise does not turn json.Number into int")
	}
}
