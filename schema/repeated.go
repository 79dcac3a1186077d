package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Repeated is a setting that may be given several times, each value
// whole: a flag repeated on the command line (--x A --x B), an array of
// strings in a TOML file (x = ["A", "B"]) or a table of strings (each
// entry KEY = "TEXT" is the value "KEY=TEXT", in key order), an array in
// JSON. Its values are never split on commas, so a value may hold any
// text, such as an expression.
//
// As setting text (Settings, Get, Text) a Repeated is the JSON array of its
// values; Apply replaces the whole list with it, while Set, like a flag,
// adds one value.
type Repeated []string

var repeatedType = reflect.TypeFor[Repeated]()

func repeatedText(r Repeated) string {
	if r == nil {
		r = Repeated{}
	}
	b, _ := json.Marshal([]string(r))
	return string(b)
}

func parseRepeatedText(text string) (Repeated, error) {
	var out Repeated
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, fmt.Errorf("want a list of strings: %v", err)
	}
	if len(out) == 0 {
		out = nil
	}
	return out, nil
}

// repeatedValueText renders a TOML value of a Repeated setting as its
// setting text: an array of strings as given, a table of strings as
// KEY=TEXT values in key order.
func repeatedValueText(v any) (string, error) {
	var vals Repeated
	switch x := v.(type) {
	case string:
		vals = Repeated{x}
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return "", fmt.Errorf("an array of strings is wanted, got %v (%T)", e, e)
			}
			vals = append(vals, s)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s, ok := x[k].(string)
			if !ok {
				return "", fmt.Errorf("%s: a table of strings (KEY = \"TEXT\") is wanted, got %v (%T)", k, x[k], x[k])
			}
			vals = append(vals, k+"="+s)
		}
	default:
		return "", fmt.Errorf("%v (%T) is not an array or a table of strings", v, v)
	}
	return repeatedText(vals), nil
}

// ShellQuote quotes s for a POSIX shell, in single quotes unless it needs
// none.
func ShellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\$`!*?[]{}()<>|&;#~=") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
