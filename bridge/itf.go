package bridge

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// itfState is one state of an ITF trace as plain JSON values: the bridge
// reads the trace in its published form (docs/properties.md names its
// variables), not the model's Go types, so that it depends on the model only
// through check's door.
type itfState map[string]any

// readITFStates returns the states of an ITF file as JSON values.
func readITFStates(path string) ([]itfState, map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var doc struct {
		Meta   map[string]any `json:"#meta"`
		States []itfState     `json:"states"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, nil, err
	}
	return doc.States, doc.Meta, nil
}

func (s itfState) action() string { str, _ := s["mbt::actionTaken"].(string); return str }

func (s itfState) picks() map[string]any { m, _ := s["mbt::nondetPicks"].(map[string]any); return m }

func (s itfState) str(name string) string { v, _ := s[name].(string); return v }

func (s itfState) num(name string) int { return toInt(s[name]) }

// client is the named client's record in the state (nil if none).
func (s itfState) client(name string) map[string]any {
	c, _ := mapOf(s["clients"])[name].(map[string]any)
	return c
}

func toInt(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// set returns an ITF set of strings or numbers as sorted strings.
func set(v any) []string {
	m, _ := v.(map[string]any)
	xs, _ := m["#set"].([]any)
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if e, ok := x.(map[string]any); ok && e["id"] != nil { // an entry: {id, data}
			x = e["id"]
		}
		out = append(out, fmt.Sprint(x))
	}
	sort.Strings(out)
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// mapOf returns an ITF map keyed by strings.
func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	pairs, _ := m["#map"].([]any)
	out := map[string]any{}
	for _, p := range pairs {
		kv, _ := p.([]any)
		if len(kv) == 2 {
			out[fmt.Sprint(kv[0])] = kv[1]
		}
	}
	return out
}

// message is one entry of the messages variable: its fields and its
// count (1 in flight, 0 delivered, -1 lost).
type message struct {
	Type   string
	From   string // bookie for responses, client for requests
	Client string
	Bookie string
	Entry  int
	Fields map[string]any
	Count  int
}

func (m message) key() string {
	b, _ := json.Marshal(m.Fields)
	return string(b)
}

func (m message) String() string {
	var extra []string
	for _, k := range []string{"code", "entry_id", "fence", "recovery", "lac"} {
		if v, ok := m.Fields[k]; ok {
			extra = append(extra, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return fmt.Sprintf("%s %s/%s %s", m.Type, m.Client, m.Bookie, strings.Join(extra, " "))
}

func messages(s itfState) []message {
	m, _ := s["messages"].(map[string]any)
	pairs, _ := m["#map"].([]any)
	var out []message
	for _, p := range pairs {
		kv, _ := p.([]any)
		if len(kv) != 2 {
			continue
		}
		f, _ := kv[0].(map[string]any)
		msg := message{Fields: f, Count: toInt(kv[1])}
		msg.Type, _ = f["type"].(string)
		msg.Client, _ = f["cid"].(string)
		msg.Bookie, _ = f["bookie"].(string)
		msg.Entry = toInt(f["entry_id"])
		if e, ok := f["entry"].(map[string]any); ok {
			msg.Entry = toInt(e["id"])
		}
		out = append(out, msg)
	}
	return out
}

// sentAt returns the messages sent at the step from prev to next: new
// ones, in flight or lost, and ones whose count grew (sent again).
func sentAt(prev, next itfState) []message {
	before := map[string]int{}
	for _, m := range messages(prev) {
		before[m.key()] = m.Count
	}
	var out []message
	for _, m := range messages(next) {
		b, ok := before[m.key()]
		if (!ok && m.Count != 0) || (ok && m.Count > b && m.Count > 0) {
			out = append(out, m)
		}
	}
	return out
}
