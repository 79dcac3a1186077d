package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/regress"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
)

// sampleText finds, for a setting, a value its type accepts that differs
// from the setting's value in target.
func sampleText(t *testing.T, s *schema.Schema, target any, f schema.Field) string {
	t.Helper()
	was := s.Get(target, f.Name)
	for _, c := range []string{"true", "3", "0.25", "3s", "bookies,clients", "3MiB", "TypeOK,AllAckedEntriesAreReadable", "text"} {
		probe := target
		if err := s.Set(probe, f.Name, c); err == nil && s.Get(probe, f.Name) != was {
			s.Set(probe, f.Name, was)
			return c
		}
		s.Set(probe, f.Name, was)
	}
	t.Fatalf("no sample value for %s", f.Name)
	return ""
}

func tomlLiteral(f schema.Field, text string) string {
	switch {
	case f.IsBool():
		return text
	case f.IsRepeated():
		return "[" + strconv.Quote(text) + "]"
	case f.IsList():
		parts := strings.Split(text, ",")
		for i, p := range parts {
			parts[i] = strconv.Quote(p)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	if _, err := strconv.ParseFloat(text, 64); err == nil {
		return text
	}
	return strconv.Quote(text)
}

// TestEverySettingRoundTrips walks every setting of every command schema:
// it must round-trip through the command line, a parameter-set file and
// JSON, and keep its name as the one spelling in all three. A setting
// added without a name fails schema.MustOf (at init) and this test.
func TestEverySettingRoundTrips(t *testing.T) {
	type cmdSchemas struct {
		name    string
		targets func() []schema.Target
	}
	for _, cs := range []cmdSchemas{
		{"check", func() []schema.Target {
			cfg, out, only := check.DefaultConfig(), defaultOutput(), checkOnly{}
			return []schema.Target{{S: check.ConfigSchema, V: &cfg}, {S: outputSchema, V: &out}, {S: checkOnlySchema, V: &only}}
		}},
		{"simulate", func() []schema.Target {
			cfg, out := check.DefaultSimConfig(), defaultOutput()
			return []schema.Target{{S: check.SimSchema, V: &cfg}, {S: outputSchema, V: &out}}
		}},
	} {
		for ti, target := range cs.targets() {
			for _, f := range target.S.Fields() {
				t.Run(cs.name+"/"+f.Name, func(t *testing.T) {
					text := sampleText(t, target.S, target.V, f)
					// Command line, under the name and under the alias.
					for _, flagName := range []string{"--" + f.Name, "-" + f.Short} {
						if flagName == "-" {
							continue
						}
						targets := cs.targets()
						args := []string{flagName, text}
						if f.IsBool() {
							args = []string{flagName + "=" + text}
						}
						cl := parseCommandLine("bkcheck "+cs.name, args, targets...)
						if len(cl.probs) > 0 {
							t.Fatalf("%v: %v", args, cl.probs)
						}
						want := targets[ti].S.Get(targets[ti].V, f.Name)
						if cl.given[f.Name] != flagName {
							t.Errorf("%v: given as %q", args, cl.given[f.Name])
						}
						// JSON, keyed by the same name.
						b, err := targets[ti].S.EncodeJSON(targets[ti].V)
						if err != nil || !strings.Contains(string(b), strconv.Quote(f.Name)+":") {
							t.Fatalf("JSON %s: %v", b, err)
						}
						back := cs.targets()
						if err := back[ti].S.DecodeJSON(b, back[ti].V); err != nil {
							t.Fatal(err)
						}
						if got := back[ti].S.Get(back[ti].V, f.Name); got != want {
							t.Errorf("JSON: %s = %q, want %q", f.Name, got, want)
						}
						// Parameter-set file (--resume and --cpuprofile are
						// the command line's alone).
						if !slices.Contains(fileKeys, targets[ti].S) {
							return
						}
						path := filepath.Join(t.TempDir(), "p.toml")
						table := ""
						if f.Group() != "" {
							table = "[" + f.Group() + "]\n"
						}
						os.WriteFile(path, []byte(fmt.Sprintf("%s%s = %s\n", table, f.Name, tomlLiteral(f, text))), 0o644)
						fromFile := cs.targets()
						cl = parseCommandLine("bkcheck "+cs.name, []string{"--config", path}, fromFile...)
						cl.applyFile()
						if len(cl.probs) > 0 {
							t.Fatalf("file %s = %s: %v", f.Name, text, cl.probs)
						}
						if got := fromFile[ti].S.Get(fromFile[ti].V, f.Name); got != want {
							t.Errorf("file: %s = %q, flag gave %q", f.Name, got, want)
						}
					}
				})
			}
		}
	}
	// The model's parameters are settings of both commands and of the run
	// directory's record.
	for _, f := range spec.ParamsSchema.Fields() {
		if !check.ConfigSchema.Has(f.Name) || !check.SimSchema.Has(f.Name) || !check.ModelSchema.Has(f.Name) {
			t.Errorf("parameter %s is missing from a command", f.Name)
		}
	}
	for _, f := range regress.ExpectSchema.Fields() {
		if check.ConfigSchema.Has(f.Name) {
			t.Errorf("expectation %s shadows a setting", f.Name)
		}
	}
}

// TestModelIDRoundTrips: a run directory's record reads back as the same
// model, and the form written before the schema (Go field names) is read
// too, settings absent from it being off.
func TestModelIDRoundTrips(t *testing.T) {
	mc := check.ModelConfig{Params: spec.Params{Bookies: 4, Clients: 2, WriteQuorum: 3, AckQuorum: 2, Entries: 1, Inflight: 1, Crashes: 1},
		Symmetry: spec.Symmetry{Bookies: true, Clients: true}, Invariants: []string{"TypeOK"}}
	mc.EnsureDefaults()
	back, err := check.DecodeModelID([]byte(mc.ID()))
	if err != nil || back.ID() != mc.ID() {
		t.Fatalf("%v: %s vs %s", err, back.ID(), mc.ID())
	}
	legacy := `{"params":{"Bookies":4,"Clients":2,"Ensemble":3,"WriteQuorum":3,"AckQuorum":2,"Entries":1,"Inflight":1,"Variant":"reference","Crashes":1,"DataLoss":0,"DataLossMode":"blank","ReadOnly":0,"ReliableNetwork":false,"Exclude":null},"invariants":["TypeOK"],"check_deadlock":false,"symmetry":"bookies,clients"}`
	if !check.SameModelID(legacy, mc.ID()) {
		t.Errorf("a run written by bkcheck 0.1.0 (before --unavailable) does not resume")
	}
	for _, c := range []struct{ from, to string }{
		{`"Bookies":4`, `"Bookies":3`},
		{`"ReadOnly":0`, `"ReadOnly":1`},
		{`["TypeOK"]`, `["TypeOK","AllAckedEntriesAreReadable"]`},
	} {
		if check.SameModelID(strings.Replace(legacy, c.from, c.to, 1), mc.ID()) {
			t.Errorf("%s -> %s still counts as the same model", c.from, c.to)
		}
	}
	if check.SameModelID("{", mc.ID()) {
		t.Error("garbage is the same model")
	}
}
