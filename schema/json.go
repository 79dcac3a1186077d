package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Object is a target seen through its schema; it marshals to a JSON object
// whose keys are the setting names in declaration order, so it can be a
// field of any JSON document.
type Object struct {
	S      *Schema
	Target any // pointer to S's struct
}

// MarshalJSON implements json.Marshaler.
func (o Object) MarshalJSON() ([]byte, error) { return o.S.EncodeJSON(o.Target) }

// EncodeJSON encodes every setting of target (but those tagged omitzero
// at their zero value): numbers, booleans and
// strings as such, lists as arrays, durations and text types as strings.
func (s *Schema) EncodeJSON(target any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, f := range s.fields {
		v := s.value(target, f)
		if f.omitZero && v.IsZero() {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(f.Name)
		b.Write(k)
		b.WriteByte(':')
		var val any
		switch f.kind {
		case kindDuration, kindText:
			val = textOf(v, f.kind)
		case kindList:
			l := v.Interface().([]string)
			if l == nil {
				l = []string{}
			}
			val = l
		case kindRepeated:
			l := v.Interface().(Repeated)
			if l == nil {
				l = Repeated{}
			}
			val = l
		default:
			val = v.Interface()
		}
		enc, err := json.Marshal(val)
		if err != nil {
			return nil, fmt.Errorf("schema: %s: %w", f.Name, err)
		}
		b.Write(enc)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// DecodeJSON decodes an object written by EncodeJSON into target. It
// is strict: every key must be a setting (all unknown keys are listed);
// settings absent from the object keep their value in target.
func (s *Schema) DecodeJSON(data []byte, target any) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	var probs Problems
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f, ok := s.Lookup(k)
		if !ok || f.Name != k {
			probs.Add(k, "unknown key")
			continue
		}
		if err := decodeJSONValue(s.value(target, f), f.kind, raw[k]); err != nil {
			probs.Add(k, "%v", err)
		}
	}
	return probs.Err()
}

func decodeJSONValue(v reflect.Value, k valueKind, raw json.RawMessage) error {
	switch k {
	case kindDuration, kindText:
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return fmt.Errorf("want a string: %v", err)
		}
		return setText(v, k, text)
	case kindList:
		var l []string
		if err := json.Unmarshal(raw, &l); err != nil {
			return fmt.Errorf("want a list of strings: %v", err)
		}
		if len(l) == 0 {
			l = nil
		}
		v.Set(reflect.ValueOf(l))
		return nil
	case kindRepeated:
		l, err := parseRepeatedText(string(raw))
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(l))
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	p := reflect.New(v.Type())
	if err := dec.Decode(p.Interface()); err != nil {
		return fmt.Errorf("want a %s: %v", strings.TrimPrefix(v.Type().String(), "time."), err)
	}
	v.Set(p.Elem())
	return nil
}
