package schema

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Settings are assignments of text values to setting names, as a file or
// a grid gives them: applied through Set, they are parsed and checked
// exactly like flags.
type Settings map[string]string

// Names returns the names set, sorted.
func (st Settings) Names() []string {
	out := make([]string, 0, len(st))
	for k := range st {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// With returns st with over's settings replacing or adding to its own.
func (st Settings) With(over Settings) Settings {
	out := Settings{}
	for k, v := range st {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// Target is a struct (by pointer) and its schema, for Apply.
type Target struct {
	S *Schema
	V any
}

// Apply sets every setting of st that belongs to one of the targets;
// settings of none of them are left alone (a file may hold settings of
// several commands). skip names settings not to apply (e.g. those the
// command line gives). Every problem is returned at once.
func Apply(st Settings, skip map[string]bool, targets ...Target) error {
	var probs Problems
	for _, name := range st.Names() {
		if skip[name] {
			continue
		}
		for _, t := range targets {
			if t.S.Has(name) {
				if err := t.S.setSetting(t.V, name, st[name]); err != nil {
					probs.Add(name, "%v", err)
				}
			}
		}
	}
	return probs.Err()
}

var anyType = reflect.TypeFor[any]()

// TableType is a struct type with one field per setting of the schemas,
// tagged with its TOML key and holding any TOML value. Decoding a table
// into it with DecodeTOMLStrict rejects unknown keys with their line.
func TableType(schemas ...*Schema) reflect.Type {
	return reflect.StructOf(tableFields(schemas))
}

func tableFields(schemas []*Schema) []reflect.StructField {
	var fields []reflect.StructField
	seen := map[string]bool{}
	groups := map[string]int{} // group name -> its index in fields
	var groupFields [][]reflect.StructField
	for _, s := range schemas {
		for _, f := range s.fields {
			if seen[f.Name] {
				continue
			}
			seen[f.Name] = true
			tag := fmt.Sprintf(`toml:%q`, f.Name)
			if f.kind == kindRepeated {
				tag += ` repeated:"true"`
			}
			sf := reflect.StructField{Type: anyType, Tag: reflect.StructTag(tag)}
			if f.group == "" {
				sf.Name = fmt.Sprintf("F%d", len(fields))
				fields = append(fields, sf)
				continue
			}
			g, ok := groups[f.group]
			if !ok {
				g = len(groupFields)
				groups[f.group] = g
				groupFields = append(groupFields, nil)
				fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", len(fields)), Tag: reflect.StructTag(fmt.Sprintf(`toml:%q group:"%d"`, f.group, g))})
			}
			sf.Name = fmt.Sprintf("F%d", len(groupFields[g]))
			groupFields[g] = append(groupFields[g], sf)
		}
	}
	// A group is a table of its own: [group] in a file, a pointer so that
	// an absent table is nil.
	for i := range fields {
		if gs, ok := fields[i].Tag.Lookup("group"); ok {
			var g int
			fmt.Sscan(gs, &g)
			fields[i].Type = reflect.PointerTo(reflect.StructOf(groupFields[g]))
		}
	}
	return fields
}

// TableSettings reads the settings present in a decoded value of a
// TableType (absent keys are nil and are left out).
func TableSettings(v reflect.Value) (Settings, error) {
	st := Settings{}
	var probs Problems
	t := v.Type()
	for i := range t.NumField() {
		fv := v.Field(i)
		if fv.IsNil() {
			continue
		}
		if _, group := t.Field(i).Tag.Lookup("group"); group {
			inner, err := TableSettings(fv.Elem())
			probs.Merge(err)
			for k, text := range inner {
				st[k] = text
			}
			continue
		}
		name := t.Field(i).Tag.Get("toml")
		valueText := ValueText
		if t.Field(i).Tag.Get("repeated") == "true" {
			valueText = repeatedValueText
		}
		text, err := valueText(fv.Interface())
		if err != nil {
			probs.Add(name, "%v", err)
			continue
		}
		st[name] = text
	}
	return st, probs.Err()
}

// ValueText renders a TOML value as the text a flag would take: lists
// comma-separated, numbers and booleans as written.
func ValueText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			t, err := ValueText(e)
			if err != nil || strings.Contains(t, ",") {
				return "", fmt.Errorf("a list holds plain values, got %v", e)
			}
			parts[i] = t
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("%v (%T) is not a value a setting takes", v, v)
}

// DecodeTOMLStrict decodes the TOML file at path into v, rejecting unknown
// keys: the error names every unknown key with its line, or the position
// of a syntax or type error.
func DecodeTOMLStrict(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	d := toml.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		var sme *toml.StrictMissingError
		if errors.As(err, &sme) {
			var probs []string
			for _, e := range sme.Errors {
				row, _ := e.Position()
				probs = append(probs, fmt.Sprintf("%s:%d: unknown key %q", path, row, strings.Join(e.Key(), ".")))
			}
			return errors.New(strings.Join(probs, "\n  - "))
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return fmt.Errorf("%s:%d:%d: %s", path, row, col, de.Error())
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// File is a parameter-set file: settings shared by every run at the top,
// and optional named runs ([runs.NAME]) that add to or override them.
type File struct {
	Path string
	Top  Settings
	Runs map[string]Settings
}

// LoadFile reads a parameter-set file whose keys must be settings of the
// schemas (strictly: unknown keys are errors naming key and line).
func LoadFile(path string, schemas ...*Schema) (*File, error) {
	fields := tableFields(schemas)
	table := reflect.StructOf(fields)
	// The document is the table's keys at the top plus [runs.NAME] tables.
	doc := reflect.StructOf(append(fields, reflect.StructField{
		Name: "Runs", Type: reflect.MapOf(reflect.TypeFor[string](), table), Tag: `toml:"runs"`}))
	v := reflect.New(doc)
	if err := DecodeTOMLStrict(path, v.Interface()); err != nil {
		return nil, err
	}
	f := &File{Path: path, Runs: map[string]Settings{}}
	var probs Problems
	topValue := reflect.New(table).Elem()
	for i := range fields {
		topValue.Field(i).Set(v.Elem().Field(i))
	}
	top, err := TableSettings(topValue)
	probs.Merge(err)
	f.Top = top
	iter := v.Elem().Field(len(fields)).MapRange()
	for iter.Next() {
		st, err := TableSettings(iter.Value())
		probs.Merge(err)
		f.Runs[iter.Key().String()] = st
	}
	if err := probs.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// RunNames lists the file's named runs in order.
func (f *File) RunNames() []string {
	names := make([]string, 0, len(f.Runs))
	for n := range f.Runs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Resolve returns the settings of run name: the top-level settings with
// the run's on top. "" is allowed only when the file has no named run.
func (f *File) Resolve(name string) (Settings, error) {
	if name == "" {
		if len(f.Runs) > 0 {
			return nil, fmt.Errorf("%s holds runs %s: choose one with --run", f.Path, strings.Join(f.RunNames(), ", "))
		}
		return f.Top, nil
	}
	r, ok := f.Runs[name]
	if !ok {
		return nil, fmt.Errorf("no run %q in %s (it has: %s)", name, f.Path, strings.Join(f.RunNames(), ", "))
	}
	return f.Top.With(r), nil
}
