package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// runConfig is one run of a parameter-set file: every flag of bkcheck
// check, under its flag name. Pointers tell "not set" from zero values.
// Regression expectations (expect-*) are read by bkcheck regress.
type runConfig struct {
	Bookies         *int     `toml:"bookies"`
	Clients         *int     `toml:"clients"`
	Ensemble        *int     `toml:"ensemble"`
	WriteQuorum     *int     `toml:"write-quorum"`
	AckQuorum       *int     `toml:"ack-quorum"`
	Entries         *int     `toml:"entries"`
	Inflight        *int     `toml:"inflight"`
	Variant         *string  `toml:"variant"`
	Invariants      []string `toml:"invariants"`
	Symmetry        *string  `toml:"symmetry"`
	CheckDeadlock   *bool    `toml:"check-deadlock"`
	Crashes         *int     `toml:"crashes"`
	DataLoss        *int     `toml:"data-loss"`
	DataLossMode    *string  `toml:"data-loss-mode"`
	ReadOnly        *int     `toml:"read-only"`
	Unavailable     *int     `toml:"unavailable"`
	ReliableNetwork *bool    `toml:"reliable-network"`
	ExcludeActions  []string `toml:"exclude-actions"`
	MaxDepth        *int     `toml:"max-depth"`
	MaxStates       *int64   `toml:"max-states"`
	Workers         *int     `toml:"workers"`
	Store           *string  `toml:"store"`
	Dir             *string  `toml:"dir"`
	Memory          *string  `toml:"memory"`
	TraceOut        *string  `toml:"trace-out"`

	// Regression expectations (bkcheck regress).
	ExpectStatus    *string `toml:"expect-status"`
	ExpectInvariant *string `toml:"expect-invariant"`
	ExpectDistinct  *int64  `toml:"expect-distinct"`
	ExpectDepth     *int    `toml:"expect-depth"`
	ExpectLength    *int    `toml:"expect-length"`
	Slow            *bool   `toml:"slow"`
}

// configFile is a parameter-set file: top-level settings shared by every
// run, and optional named runs that add to or override them.
type configFile struct {
	runConfig
	Runs map[string]runConfig `toml:"runs"`
}

// loadConfig reads a parameter-set file strictly: an unknown or misspelt
// key is an error naming the key and its line.
func loadConfig(path string) (*configFile, error) {
	var cf configFile
	if err := decodeTOMLStrict(path, &cf); err != nil {
		return nil, err
	}
	return &cf, nil
}

// decodeTOMLStrict decodes a TOML file into v, rejecting unknown keys;
// errors name every unknown key with its line, or the position of a
// syntax or type error.
func decodeTOMLStrict(path string, v any) error {
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

// runNames lists a file's named runs in order.
func (cf *configFile) runNames() []string {
	names := make([]string, 0, len(cf.Runs))
	for n := range cf.Runs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// resolve merges the top-level settings with run name ("" for none).
func (cf *configFile) resolve(name string) (runConfig, error) {
	if name == "" {
		if len(cf.Runs) > 0 {
			return runConfig{}, fmt.Errorf("the file holds runs %s: choose one with --run", strings.Join(cf.runNames(), ", "))
		}
		return cf.runConfig, nil
	}
	r, ok := cf.Runs[name]
	if !ok {
		return runConfig{}, fmt.Errorf("no run %q in the file (it has: %s)", name, strings.Join(cf.runNames(), ", "))
	}
	return merge(cf.runConfig, r), nil
}

// merge returns base with every field set in over replacing it.
func merge(base, over runConfig) runConfig {
	out := base
	if over.Bookies != nil {
		out.Bookies = over.Bookies
	}
	if over.Clients != nil {
		out.Clients = over.Clients
	}
	if over.Ensemble != nil {
		out.Ensemble = over.Ensemble
	}
	if over.WriteQuorum != nil {
		out.WriteQuorum = over.WriteQuorum
	}
	if over.AckQuorum != nil {
		out.AckQuorum = over.AckQuorum
	}
	if over.Entries != nil {
		out.Entries = over.Entries
	}
	if over.Inflight != nil {
		out.Inflight = over.Inflight
	}
	if over.Variant != nil {
		out.Variant = over.Variant
	}
	if over.Invariants != nil {
		out.Invariants = over.Invariants
	}
	if over.Symmetry != nil {
		out.Symmetry = over.Symmetry
	}
	if over.CheckDeadlock != nil {
		out.CheckDeadlock = over.CheckDeadlock
	}
	if over.Crashes != nil {
		out.Crashes = over.Crashes
	}
	if over.DataLoss != nil {
		out.DataLoss = over.DataLoss
	}
	if over.DataLossMode != nil {
		out.DataLossMode = over.DataLossMode
	}
	if over.ReadOnly != nil {
		out.ReadOnly = over.ReadOnly
	}
	if over.Unavailable != nil {
		out.Unavailable = over.Unavailable
	}
	if over.ReliableNetwork != nil {
		out.ReliableNetwork = over.ReliableNetwork
	}
	if over.ExcludeActions != nil {
		out.ExcludeActions = over.ExcludeActions
	}
	if over.MaxDepth != nil {
		out.MaxDepth = over.MaxDepth
	}
	if over.MaxStates != nil {
		out.MaxStates = over.MaxStates
	}
	if over.Workers != nil {
		out.Workers = over.Workers
	}
	if over.Store != nil {
		out.Store = over.Store
	}
	if over.Dir != nil {
		out.Dir = over.Dir
	}
	if over.Memory != nil {
		out.Memory = over.Memory
	}
	if over.TraceOut != nil {
		out.TraceOut = over.TraceOut
	}
	if over.ExpectStatus != nil {
		out.ExpectStatus = over.ExpectStatus
	}
	if over.ExpectInvariant != nil {
		out.ExpectInvariant = over.ExpectInvariant
	}
	if over.ExpectDistinct != nil {
		out.ExpectDistinct = over.ExpectDistinct
	}
	if over.ExpectDepth != nil {
		out.ExpectDepth = over.ExpectDepth
	}
	if over.ExpectLength != nil {
		out.ExpectLength = over.ExpectLength
	}
	if over.Slow != nil {
		out.Slow = over.Slow
	}
	return out
}

// applyConfig sets every flag the configuration sets and the command line
// does not: flags override file values. It goes through the flag set, so
// file values are parsed and checked exactly like flags.
func applyConfig(fs *flag.FlagSet, rc runConfig, given map[string]bool) error {
	set := func(name, value string) error {
		if given[name] || fs.Lookup(name) == nil {
			return nil
		}
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("%s = %s: %v", name, value, err)
		}
		return nil
	}
	ints := map[string]*int{"bookies": rc.Bookies, "clients": rc.Clients, "ensemble": rc.Ensemble, "write-quorum": rc.WriteQuorum,
		"ack-quorum": rc.AckQuorum, "entries": rc.Entries, "inflight": rc.Inflight, "crashes": rc.Crashes, "data-loss": rc.DataLoss,
		"read-only": rc.ReadOnly, "unavailable": rc.Unavailable, "max-depth": rc.MaxDepth, "workers": rc.Workers}
	strs := map[string]*string{"variant": rc.Variant, "symmetry": rc.Symmetry, "data-loss-mode": rc.DataLossMode, "store": rc.Store,
		"dir": rc.Dir, "memory": rc.Memory, "trace-out": rc.TraceOut}
	var errs []string
	note := func(err error) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	// Short aliases given on the command line count as the long flag.
	alias := map[string]string{"ensemble": "e", "write-quorum": "w", "ack-quorum": "a"}
	for name, v := range ints {
		if v != nil && !given[alias[name]] {
			note(set(name, strconv.Itoa(*v)))
		}
	}
	for name, v := range strs {
		if v != nil {
			note(set(name, *v))
		}
	}
	if rc.MaxStates != nil {
		note(set("max-states", strconv.FormatInt(*rc.MaxStates, 10)))
	}
	if rc.CheckDeadlock != nil {
		note(set("check-deadlock", strconv.FormatBool(*rc.CheckDeadlock)))
	}
	if rc.ReliableNetwork != nil {
		note(set("reliable-network", strconv.FormatBool(*rc.ReliableNetwork)))
	}
	if rc.Invariants != nil {
		note(set("invariants", strings.Join(rc.Invariants, ",")))
	}
	if rc.ExcludeActions != nil {
		note(set("exclude-actions", strings.Join(rc.ExcludeActions, ",")))
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return errors.New(strings.Join(errs, "\n  - "))
	}
	return nil
}
