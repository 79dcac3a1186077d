package schema

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// flagValue makes one field of a target settable as a flag.
type flagValue struct {
	v reflect.Value
	f Field
}

func (fv flagValue) String() string {
	if !fv.v.IsValid() {
		return ""
	}
	return textOf(fv.v, fv.f.kind)
}

func (fv flagValue) Set(text string) error { return setText(fv.v, fv.f.kind, text) }

func (fv flagValue) IsBoolFlag() bool { return fv.f.kind == kindBool }

// Register defines a flag on fs for every setting of target (a pointer to
// s's struct), under its name and its short alias. Parsing fs then writes
// into target; fs.Visit tells which flags were given and under which name.
func (s *Schema) Register(fs *flag.FlagSet, target any) {
	for _, f := range s.fields {
		fv := flagValue{v: s.value(target, f), f: f}
		fs.Var(fv, f.Name, f.Help)
		if f.Short != "" {
			fs.Var(fv, f.Short, f.Help)
		}
	}
}

// PrintUsage writes one line per setting of target: its flag names, unit,
// help and, when not the zero value, its current value as the default.
func (s *Schema) PrintUsage(w io.Writer, target any) {
	for _, f := range s.fields {
		names := "--" + f.Name
		if f.Short != "" {
			names = "-" + f.Short + ", " + names
		}
		if f.Unit != "" && f.kind != kindBool {
			names += " " + f.Unit
		}
		help := f.Help
		if v := s.value(target, f); !v.IsZero() {
			help += fmt.Sprintf(" (default %s)", textOf(v, f.kind))
		}
		if len(names) <= 24 {
			fmt.Fprintf(w, "  %-24s %s\n", names, help)
		} else {
			fmt.Fprintf(w, "  %s\n  %-24s %s\n", names, "", help)
		}
	}
}

// Given lists the settings of s given on fs's command line: setting name ->
// the flag name used (the name or the short alias).
func (s *Schema) Given(fs *flag.FlagSet) map[string]string {
	used := map[string]string{}
	fs.Visit(func(fl *flag.Flag) {
		if f, ok := s.Lookup(fl.Name); ok {
			used[f.Name] = fl.Name
		}
	})
	return used
}

// Text returns every setting of target as name -> text.
func (s *Schema) Text(target any) map[string]string {
	out := make(map[string]string, len(s.fields))
	for _, f := range s.fields {
		out[f.Name] = textOf(s.value(target, f), f.kind)
	}
	return out
}

// Describe renders the settings of target that are not zero (and those
// listed in always) as "name=value ...", in declaration order.
func (s *Schema) Describe(target any, always ...string) string {
	var parts []string
	s.eachShown(target, always, func(f Field, v reflect.Value) {
		if f.kind == kindBool {
			parts = append(parts, f.Name)
			return
		}
		parts = append(parts, f.Name+"="+textOf(v, f.kind))
	})
	return strings.Join(parts, " ")
}

// eachShown calls fn for the settings of target that are not zero or are
// listed in always, in declaration order.
func (s *Schema) eachShown(target any, always []string, fn func(Field, reflect.Value)) {
	for _, f := range s.fields {
		v := s.value(target, f)
		if !v.IsZero() || slices.Contains(always, f.Name) {
			fn(f, v)
		}
	}
}

// Flags renders the settings of target that are not zero (and those in
// always) as command-line flags, in declaration order: a command that
// reproduces them.
func (s *Schema) Flags(target any, always ...string) string {
	var parts []string
	s.eachShown(target, always, func(f Field, v reflect.Value) {
		if f.kind == kindBool {
			if v.Bool() {
				parts = append(parts, "--"+f.Name)
			}
			return
		}
		if f.kind == kindRepeated {
			for _, x := range v.Interface().(Repeated) {
				parts = append(parts, "--"+f.Name+" "+ShellQuote(x))
			}
			return
		}
		text := textOf(v, f.kind)
		if text == "" || strings.ContainsAny(text, " \t\"'") {
			text = strconv.Quote(text)
		}
		parts = append(parts, "--"+f.Name+" "+text)
	})
	return strings.Join(parts, " ")
}
