package vocab

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The ITF encodings (Apalache ADR-015) a model's ITF values use: records
// as objects, sequences as arrays, sets as {"#set": [...]}, functions as
// {"#map": [[k, v], ...]}; model values (Nil, statuses, ids) as strings.

// ErrITF is wrapped by every error about malformed ITF input.
var ErrITF = errors.New("malformed ITF trace")

// Set is an ITF set of the given elements (never null).
func Set(xs ...any) map[string]any {
	if xs == nil {
		xs = []any{}
	}
	return map[string]any{"#set": xs}
}

// Map is an ITF function from the given [key, value] pairs.
func Map(pairs ...[2]any) map[string]any {
	out := make([]any, len(pairs))
	for i, p := range pairs {
		out[i] = []any{p[0], p[1]}
	}
	return map[string]any{"#map": out}
}

// NilOr is an integer that may be the model value Nil (-1).
func NilOr(v int8) any {
	if v == -1 {
		return "Nil"
	}
	return int(v)
}

// ID names the i-th (0-based) bookie ("b") or client ("c").
func ID(prefix string, i int) string { return prefix + strconv.Itoa(i+1) }

// Decoder reads ITF values, remembering the first problem with the path
// where it happened. It never panics on malformed input.
type Decoder struct {
	err  error
	path []string
}

// Err is the first problem found, wrapping ErrITF, or nil.
func (d *Decoder) Err() error { return d.err }

// Fail records a problem at the current path (only the first is kept).
func (d *Decoder) Fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s: %s", ErrITF, strings.Join(d.path, "."), fmt.Sprintf(format, args...))
	}
}

// At runs f with name appended to the path.
func (d *Decoder) At(name string, f func()) {
	d.path = append(d.path, name)
	f()
	d.path = d.path[:len(d.path)-1]
}

// Obj reads a record.
func (d *Decoder) Obj(v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		d.Fail("want an object, got %T", v)
		return map[string]any{}
	}
	return m
}

// Field reads a record's field, which must be there.
func (d *Decoder) Field(m map[string]any, name string) any {
	v, ok := m[name]
	if !ok {
		d.Fail("missing field %q", name)
	}
	return v
}

// Since reads a field that traces of older bkcheck versions lack: absent,
// it is def (the zero value such traces' models had).
func Since(m map[string]any, name string, def any) any {
	if v, ok := m[name]; ok {
		return v
	}
	return def
}

// Int reads an integer in [lo, hi] (a json.Number, or {"#bigint": "n"}).
func (d *Decoder) Int(v any, lo, hi int) int8 {
	n, ok := v.(json.Number)
	if !ok {
		if o, isObj := v.(map[string]any); isObj {
			if s, ok := o["#bigint"].(string); ok {
				n = json.Number(s)
			}
		}
	}
	i, err := strconv.Atoi(string(n))
	if err != nil || i < lo || i > hi {
		d.Fail("want an integer in [%d,%d], got %v", lo, hi, v)
		return 0
	}
	return int8(i)
}

// NilInt reads an integer in [0, hi] or the model value Nil (-1).
func (d *Decoder) NilInt(v any, hi int) int8 {
	if s, ok := v.(string); ok && s == "Nil" {
		return -1
	}
	return d.Int(v, 0, hi)
}

// Bool reads a boolean.
func (d *Decoder) Bool(v any) bool {
	b, ok := v.(bool)
	if !ok {
		d.Fail("want a boolean, got %v", v)
	}
	return b
}

// Str reads a string.
func (d *Decoder) Str(v any) string {
	s, ok := v.(string)
	if !ok {
		d.Fail("want a string, got %v", v)
	}
	return s
}

// List reads a sequence.
func (d *Decoder) List(v any) []any {
	l, ok := v.([]any)
	if !ok {
		d.Fail("want an array, got %T", v)
	}
	return l
}

// Tagged reads {tag: [...]} ("#set", "#map").
func (d *Decoder) Tagged(v any, tag string) []any {
	o, ok := v.(map[string]any)
	if !ok {
		d.Fail("want {%q: [...]}, got %T", tag, v)
		return nil
	}
	l, ok := o[tag].([]any)
	if !ok {
		d.Fail("want {%q: [...]}", tag)
	}
	return l
}

// Pairs reads a {"#map": [[k, v], ...]}.
func (d *Decoder) Pairs(v any) [][2]any {
	var out [][2]any
	for _, e := range d.Tagged(v, "#map") {
		kv, ok := e.([]any)
		if !ok || len(kv) != 2 {
			d.Fail("a #map entry is not a [key, value] pair")
			return nil
		}
		out = append(out, [2]any{kv[0], kv[1]})
	}
	return out
}

// PerID is Pairs for a function whose keys must be prefix1..prefixN, each
// exactly once, so that a trace whose #meta claims other parameters than
// its states show is rejected.
func (d *Decoder) PerID(v any, prefix string, n int) [][2]any {
	kvs := d.Pairs(v)
	seen := make([]bool, n+1)
	for _, kv := range kvs {
		if i := d.ID(kv[0], prefix, n); d.err == nil {
			if seen[i+1] {
				d.Fail("%s%d appears twice", prefix, i+1)
			}
			seen[i+1] = true
		}
	}
	for i := 1; i <= n && d.err == nil; i++ {
		if !seen[i] {
			d.Fail("no %s%d, though #meta.params has %d", prefix, i, n)
		}
	}
	return kvs
}

// ID reads an id prefix1..prefixN and returns its 0-based index.
func (d *Decoder) ID(v any, prefix string, n int) int {
	s := d.Str(v)
	i, err := strconv.Atoi(strings.TrimPrefix(s, prefix))
	if err != nil || !strings.HasPrefix(s, prefix) || i < 1 || i > n {
		d.Fail("want %s1..%s%d, got %q", prefix, prefix, n, s)
		return 0
	}
	return i - 1
}

// Lookup finds the key whose name in table is s.
func Lookup[K comparable](d *Decoder, table map[K]string, s string) K {
	for k, v := range table {
		if v == s {
			return k
		}
	}
	d.Fail("unknown value %q", s)
	var zero K
	return zero
}

// Normalise turns json.Number back into plain ints, so a value read from
// a file compares equal (as JSON) with one a model wrote.
func Normalise(v any) any {
	switch x := v.(type) {
	case json.Number:
		i, _ := x.Int64()
		return int(i)
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = Normalise(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalise(e)
		}
		return out
	}
	return v
}

// SameJSON reports whether two values marshal to the same JSON.
func SameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
