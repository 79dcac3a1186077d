// Package schema declares each setting of bkcheck once, as a tagged field of
// a Go struct, and derives everything else from that declaration: the
// command-line flags, the keys of TOML parameter-set files, the JSON objects
// bkcheck writes (run directories, --json, traces) and reads back, and the
// names validation errors use.
//
// A field is declared with struct tags:
//
//	Bookies int `name:"bookies" unit:"N" help:"bookies b1..bN"`
//	WriteQuorum int `name:"write-quorum" short:"w" unit:"Qw" help:"copies written per entry"`
//
// name is the one spelling used everywhere (flag --write-quorum, TOML key
// write-quorum, JSON key "write-quorum"); short is an optional one-letter
// flag alias; unit names the value in usage text; help says what it means;
// group, optional, names the TOML table that holds the setting in a file
// ([properties] for the CEL properties), which flags and JSON ignore. A
// setting of type Repeated is given once per value (repeated.go).
// Every exported field must have a name (or name:"-" to say it is not a
// setting); embedded structs without a name are inlined, so a
// configuration is assembled from the structs of the packages that own
// each part. Of reports any field that breaks these rules, which is how a
// test catches a parameter added without a name.
package schema

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Field is one declared setting.
type Field struct {
	Name   string // the one spelling: flag, TOML key, JSON key
	Short  string // one-letter flag alias, or ""
	Unit   string // the value's name in usage text (N, SIZE, ...)
	Help   string
	GoName string // the Go field name (for reading files written before the schema)

	index []int
	typ   reflect.Type
	kind  valueKind
	group string // TOML table holding the setting (tag group), "" for the top level
	// omitZero (tag omitzero:"true"): EncodeJSON leaves the setting out at
	// its zero value, so that documents written before it existed and
	// those written since without it are the same bytes.
	omitZero bool
}

type valueKind int

const (
	kindBool valueKind = iota + 1
	kindInt
	kindUint
	kindFloat
	kindString
	kindList // []string, written comma-separated
	kindDuration
	kindText     // encoding.TextMarshaler and TextUnmarshaler
	kindRepeated // Repeated: one whole value per flag, never comma-split
)

var (
	durationType        = reflect.TypeFor[time.Duration]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func kindOf(t reflect.Type) (valueKind, bool) {
	if t == repeatedType {
		return kindRepeated, true
	}
	if t == durationType {
		return kindDuration, true
	}
	if t.Implements(textMarshalerType) && reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return kindText, true
	}
	switch t.Kind() {
	case reflect.Bool:
		return kindBool, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return kindUint, true
	case reflect.Float32, reflect.Float64:
		return kindFloat, true
	case reflect.String:
		return kindString, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return kindList, true
		}
	}
	return 0, false
}

// IsBool reports whether the field is a boolean (a flag without a value).
func (f Field) IsBool() bool { return f.kind == kindBool }

// IsList reports whether the field holds a comma-separated list.
func (f Field) IsList() bool { return f.kind == kindList }

// IsRepeated reports whether the field is a Repeated setting.
func (f Field) IsRepeated() bool { return f.kind == kindRepeated }

// Group is the table a setting lives in within a TOML file ("" for the
// top level), from the field's group tag.
func (f Field) Group() string { return f.group }

// Schema is the list of settings of one struct type.
type Schema struct {
	typ    reflect.Type
	fields []Field
	byName map[string]int // names and short aliases
}

// Of returns the schema of the struct type of v (a struct or a pointer to
// one). Its error lists every field that has no name tag, a duplicate name
// or alias, or a type settings cannot have.
func Of(v any) (*Schema, error) {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("schema: %T is not a struct", v)
	}
	s := &Schema{typ: t, byName: map[string]int{}}
	var probs []string
	s.walk(t, nil, &probs)
	if len(probs) > 0 {
		return nil, fmt.Errorf("schema of %s:\n  - %s", t, strings.Join(probs, "\n  - "))
	}
	return s, nil
}

// MustOf is Of for package-level schemas, whose problems are programming
// errors caught by the package's tests.
func MustOf(v any) *Schema {
	s, err := Of(v)
	if err != nil {
		panic(err)
	}
	return s
}

func (s *Schema) walk(t reflect.Type, prefix []int, probs *[]string) {
	for i := range t.NumField() {
		sf := t.Field(i)
		index := append(slices.Clone(prefix), i)
		name, tagged := sf.Tag.Lookup("name")
		if name == "-" || (!sf.IsExported() && !sf.Anonymous) {
			continue
		}
		if sf.Anonymous && !tagged {
			ft := sf.Type
			if ft.Kind() == reflect.Struct {
				s.walk(ft, index, probs)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if !tagged || name == "" {
			*probs = append(*probs, fmt.Sprintf("field %s.%s has no name tag (give it name:\"kebab-case-name\", or name:\"-\" if it is not a setting)", t.Name(), sf.Name))
			continue
		}
		k, ok := kindOf(sf.Type)
		if !ok {
			*probs = append(*probs, fmt.Sprintf("field %s.%s (%s): type %s cannot be a setting", t.Name(), sf.Name, name, sf.Type))
			continue
		}
		f := Field{Name: name, Short: sf.Tag.Get("short"), Unit: sf.Tag.Get("unit"), Help: sf.Tag.Get("help"), GoName: sf.Name, index: index, typ: sf.Type, kind: k, group: sf.Tag.Get("group"), omitZero: sf.Tag.Get("omitzero") == "true"}
		if f.Help == "" {
			*probs = append(*probs, fmt.Sprintf("field %s.%s (%s) has no help tag", t.Name(), sf.Name, name))
		}
		for _, n := range []string{f.Name, f.Short} {
			if n == "" {
				continue
			}
			if _, dup := s.byName[n]; dup {
				*probs = append(*probs, fmt.Sprintf("name %q is declared twice", n))
				continue
			}
			s.byName[n] = len(s.fields)
		}
		s.fields = append(s.fields, f)
	}
}

// Fields lists the settings in declaration order.
func (s *Schema) Fields() []Field { return s.fields }

// Lookup finds a field by name or short alias.
func (s *Schema) Lookup(name string) (Field, bool) {
	i, ok := s.byName[name]
	if !ok {
		return Field{}, false
	}
	return s.fields[i], true
}

// Has reports whether name (or alias) is a setting of s.
func (s *Schema) Has(name string) bool {
	_, ok := s.byName[name]
	return ok
}

// value returns the field of target (a pointer to s's struct type).
func (s *Schema) value(target any, f Field) reflect.Value {
	v := reflect.ValueOf(target)
	if v.Kind() != reflect.Pointer || v.Elem().Type() != s.typ {
		panic(fmt.Sprintf("schema: target %T is not a *%s", target, s.typ))
	}
	return v.Elem().FieldByIndex(f.index)
}

// Get returns the text form of a setting of target, as a flag would take it.
func (s *Schema) Get(target any, name string) string {
	f, ok := s.Lookup(name)
	if !ok {
		panic("schema: no setting " + name)
	}
	return textOf(s.value(target, f), f.kind)
}

// Set parses text into a setting of target, as the flag would.
func (s *Schema) Set(target any, name, text string) error {
	f, ok := s.Lookup(name)
	if !ok {
		return fmt.Errorf("unknown setting %q", name)
	}
	return setText(s.value(target, f), f.kind, text)
}

// setSetting parses setting text (as Settings hold it) into a setting of
// target: as Set, except that a Repeated setting's text is the JSON array
// of all its values, which replaces the list.
func (s *Schema) setSetting(target any, name, text string) error {
	f, ok := s.Lookup(name)
	if !ok {
		return fmt.Errorf("unknown setting %q", name)
	}
	if f.kind == kindRepeated {
		vals, err := parseRepeatedText(text)
		if err != nil {
			return err
		}
		s.value(target, f).Set(reflect.ValueOf(vals))
		return nil
	}
	return setText(s.value(target, f), f.kind, text)
}

// IsZero reports whether a setting of target has its zero value (off).
func (s *Schema) IsZero(target any, name string) bool {
	f, ok := s.Lookup(name)
	if !ok {
		panic("schema: no setting " + name)
	}
	return s.value(target, f).IsZero()
}

func textOf(v reflect.Value, k valueKind) string {
	switch k {
	case kindBool:
		return strconv.FormatBool(v.Bool())
	case kindInt:
		return strconv.FormatInt(v.Int(), 10)
	case kindUint:
		return strconv.FormatUint(v.Uint(), 10)
	case kindFloat:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case kindString:
		return v.String()
	case kindList:
		return strings.Join(v.Interface().([]string), ",")
	case kindRepeated:
		return repeatedText(v.Interface().(Repeated))
	case kindDuration:
		return time.Duration(v.Int()).String()
	case kindText:
		b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return "?" + err.Error()
		}
		return string(b)
	}
	return ""
}

func setText(v reflect.Value, k valueKind, text string) error {
	switch k {
	case kindBool:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("%q is not true or false", text)
		}
		v.SetBool(b)
	case kindInt:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not an integer", text)
		}
		v.SetInt(n)
	case kindUint:
		n, err := strconv.ParseUint(strings.TrimSpace(text), 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a non-negative integer", text)
		}
		v.SetUint(n)
	case kindFloat:
		x, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", text)
		}
		v.SetFloat(x)
	case kindString:
		v.SetString(text)
	case kindList:
		var out []string
		for _, x := range strings.Split(text, ",") {
			if x = strings.TrimSpace(x); x != "" {
				out = append(out, x)
			}
		}
		v.Set(reflect.ValueOf(out))
	case kindRepeated:
		// One more value, whole: a repeated flag adds to the list.
		v.Set(reflect.ValueOf(append(v.Interface().(Repeated), text)))
	case kindDuration:
		d, err := time.ParseDuration(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 10s or 2m", text)
		}
		v.SetInt(int64(d))
	case kindText:
		return v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(text))
	default:
		return errors.New("unsupported setting type")
	}
	return nil
}
