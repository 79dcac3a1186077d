package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/regress"
	"github.com/bkcheck/bkcheck/schema"
)

// outputSettings are the command line's own settings of check and
// simulate: where results go.
type outputSettings struct {
	TraceOut string        `name:"trace-out" unit:"FILE" help:"where to write a counterexample as ITF JSON (default: bkcheck-trace.itf.json in the run directory, else a new bkcheck-trace[-N].itf.json in the current directory); none: do not write"`
	JSON     bool          `name:"json" help:"write newline-delimited JSON to stdout; the last line is the result"`
	Progress time.Duration `name:"progress" unit:"D" help:"interval between progress reports when stderr is not a terminal (and for --json)"`
	Coverage bool          `name:"coverage" help:"report how often each action fired and which never did (TLC's -coverage)"`
}

var outputSchema = schema.MustOf(outputSettings{})

func defaultOutput() outputSettings { return outputSettings{Progress: 10 * time.Second} }

// fileSettings select a parameter-set file and one of its runs.
type fileSettings struct {
	Config string `name:"config" unit:"FILE" help:"read settings from a parameter-set file (TOML, keys named as the flags); flags override it"`
	Run    string `name:"run" unit:"NAME" help:"the named run of --config to use, when the file holds several"`
}

var fileSchema = schema.MustOf(fileSettings{})

// fileKeys are the schemas whose settings a parameter-set file may hold:
// those of check and simulate, their output, and regression expectations
// (a suite file is a parameter-set file too). A command ignores the keys
// that are not its own.
var fileKeys = []*schema.Schema{check.ConfigSchema, check.SimSchema, outputSchema, regress.ExpectSchema}

// commandLine is one subcommand's arguments resolved against the schemas
// of its settings.
type commandLine struct {
	cmd     string            // e.g. "bkcheck check"
	targets []schema.Target   // where settings go
	given   map[string]string // setting -> how it was given: "-w", "--bookies", "bookies in runs.toml"
	before  map[string]string // setting -> the text it was given as
	args    []string          // positional arguments
	help    bool              // -h or --help
	probs   schema.Problems   // everything wrong so far
	notes   []string          // settings accepted though they change nothing (noDefaultsOverride)
	file    *fileSettings     // --config, --run: the target of fileSchema, nil if the command has none
	jsonOut io.Writer         // where --json writes a usage error's line; nil without --json
}

// parseCommandLine reads args: --name value, --name=value, -x value for
// short aliases, boolean flags without a value, positional arguments, and
// -- to end flags. Unlike package flag it does not stop at the first
// problem: every unknown flag and bad value is collected.
// Its settings may also come from a parameter-set file (--config, --run).
func parseCommandLine(cmd string, args []string, targets ...schema.Target) *commandLine {
	return newCommandLine(cmd, append(slices.Clip(targets), schema.Target{S: fileSchema, V: &fileSettings{}})...).parse(args)
}

// newCommandLine prepares a command line to parse. A target of fileSchema
// makes it take --config and --run (applyFile).
func newCommandLine(cmd string, targets ...schema.Target) *commandLine {
	cl := &commandLine{cmd: cmd, targets: targets, given: map[string]string{}, before: map[string]string{}}
	for _, t := range targets {
		if f, ok := t.V.(*fileSettings); ok {
			cl.file = f
		}
	}
	return cl
}

func (cl *commandLine) parse(args []string) *commandLine {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			cl.args = append(cl.args, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			cl.args = append(cl.args, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "h" || name == "help" {
			cl.help = true
			continue
		}
		t, f, ok := cl.lookup(name)
		if !ok {
			if why, retired := retiredFlags[name]; retired {
				cl.probs.Add("", "%s is gone: %s", flagName(name), why)
			} else {
				cl.probs.Add("", "unknown flag %s (bkcheck %s -h lists the flags)", a, strings.TrimPrefix(cl.cmd, "bkcheck "))
			}
			if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++ // skip its value, which is not an argument
			}
			continue
		}
		if !hasValue {
			if f.IsBool() {
				value = "true"
			} else if i+1 >= len(args) {
				cl.probs.Add("", "%s needs a value (%s)", a, f.Unit)
				continue
			} else {
				i++
				value = args[i]
			}
		}
		if err := t.S.Set(t.V, f.Name, value); err != nil {
			cl.probs.Add("", "%s %s: %v", flagName(name), value, err)
			continue
		}
		cl.given[f.Name], cl.before[f.Name] = flagName(name), t.S.Get(t.V, f.Name)
	}
	return cl
}

// flagName renders a flag as typed: -w for a short alias, --name else.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// retiredFlags are flags bkcheck had and no longer has, with what replaced
// them.
var retiredFlags = map[string]string{
	"data-loss":      "a bookie's data is lost in the ways BookKeeper loses it: --reformat N (an operator re-formats it and it rejoins empty under the same address: what --data-loss did), --disk-loss N (a wiped disk; cookie validation keeps the bookie down), or --crashes N with --journal no-sync|disabled (a crash loses what was not flushed)",
	"data-loss-mode": "limbo is now --data-integrity (BookKeeper's DataIntegrityCheckImpl: fence and limbo only for an open ledger whose last ensemble holds the bookie); blank is the default",
}

func (cl *commandLine) lookup(name string) (schema.Target, schema.Field, bool) {
	for _, t := range cl.targets {
		if f, ok := t.S.Lookup(name); ok {
			return t, f, true
		}
	}
	return schema.Target{}, schema.Field{}, false
}

// applyFile applies --config FILE (and --run NAME): the file's settings
// that belong to this command, except those the command line gives.
func (cl *commandLine) applyFile() {
	if cl.file == nil {
		return
	}
	if cl.file.Config == "" {
		if cl.file.Run != "" {
			cl.probs.Add("run", "needs --config")
		}
		return
	}
	f, err := schema.LoadFile(cl.file.Config, fileKeys...)
	if err != nil {
		cl.probs.Add("config", "%v", err)
		return
	}
	st, err := f.Resolve(cl.file.Run)
	if err != nil {
		cl.probs.Add("config", "%v", err)
		return
	}
	skip := map[string]bool{}
	for name := range cl.given {
		skip[name] = true
	}
	for _, t := range cl.targets {
		if err := schema.Apply(st, skip, t); err != nil {
			ps, _ := schema.AsProblems(err)
			for _, p := range ps {
				cl.probs.Add("", "%s in %s: %s", p.Field, cl.file.Config, p.Msg)
			}
		}
		for _, name := range st.Names() {
			if t.S.Has(name) && !skip[name] {
				cl.given[name] = name + " in " + cl.file.Config
				cl.before[name] = t.S.Get(t.V, name)
			}
		}
	}
}

// noDefaultsOverride applies check.ExplainDefaults, the one rule of
// bkcheck check, simulate, sweep and --config for what defaults do to a
// setting given explicitly: a value EnsureDefaults clears (the default's
// name, or a value with no effect with the other settings) is accepted
// with a note, which report prints; a zero or empty value the defaults
// replace (e.g. -e 0, which would silently mean "E = Qw") is refused. It
// must run right after EnsureDefaults of t.
func (cl *commandLine) noDefaultsOverride(t schema.Target) {
	notes, probs := check.ExplainDefaults(t, cl.before)
	cl.probs = append(cl.probs, probs...)
	cl.notes = append(cl.notes, check.NoteLines(notes, cl.givenAs)...)
}

// givenAs renders a setting with the value it was given, as the user gave
// it: "--journal synced", "--data-integrity", "journal = synced in
// runs.toml".
func (cl *commandLine) givenAs(field, value string) string {
	g := cl.setting(field)
	if !strings.HasPrefix(g, "-") {
		return field + " = " + value + strings.TrimPrefix(g, field)
	}
	if _, f, ok := cl.lookup(field); ok && f.IsBool() && value == "true" {
		return g
	}
	return g + " " + value
}

// positive reports a count given explicitly (on the command line or in a
// file) that is not at least 1, where not giving it means a default.
func (cl *commandLine) positive(name string, n int) {
	if _, given := cl.given[name]; given && n < 1 {
		cl.probs.Add(name, "must be >= 1 (got %d)", n)
	}
}

// notEmpty reports a setting given explicitly with an empty value, where
// leaving it out means its default: an empty value is never silently
// read as "not given".
func (cl *commandLine) notEmpty(name string, empty bool, hint string) {
	if _, given := cl.given[name]; given && empty {
		cl.probs.Add(name, "is empty: %s", hint)
	}
}

// explicitZeros reports the settings of check given as empty values. A
// bound given as 0 is taken as meant: 0 is no bound, the default, as
// --help says (check.Config.Validate refuses a negative one).
func (cl *commandLine) explicitZeros(cfg *check.Config, traceOut string) {
	cl.emptyValues(len(cfg.Exclude) == 0, traceOut)
}

// emptyValues reports --exclude-actions and --trace-out given empty (the
// list and the path check and simulate both take).
// A --trace-out that names an existing file is refused, as a --dir that
// holds a run is: bkcheck never overwrites a trace (the default name
// picks a new one).
func (cl *commandLine) emptyValues(noExclude bool, traceOut string) {
	cl.notEmpty("exclude-actions", noExclude, "name the actions to leave out (bkcheck actions lists them), or leave the setting out")
	cl.notEmpty("trace-out", traceOut == "", "give a file, or none to write no trace")
	if traceOut != "" && traceOut != "none" {
		if fi, err := os.Lstat(traceOut); err == nil && !fi.IsDir() {
			cl.probs.Add("trace-out", "%s already exists; remove it or give another file (bkcheck never overwrites a trace)", traceOut)
		}
	}
}

// validate adds the problems of err (a schema.Problems from Validate).
func (cl *commandLine) validate(err error) { cl.probs.Merge(err) }

// report writes every problem in one message naming settings as the user
// gave them, and returns the exit code (0 when there is no problem). With
// no problem it writes the notes instead, one line each, before anything
// runs.
func (cl *commandLine) report(stderr io.Writer) int {
	if len(cl.probs) == 0 {
		for _, n := range cl.notes {
			fmt.Fprintf(stderr, "%s: note: %s\n", cl.cmd, n)
		}
		return exitOK
	}
	msg := cl.probs.Render(cl.setting)
	fmt.Fprintf(stderr, "%s: %s\n", cl.cmd, msg)
	if cl.jsonOut != nil {
		writeUsageJSON(cl.jsonOut, msg, cl.probs, cl.setting)
	}
	return exitUsage
}

// setting names a setting as the user gave it ("-w", "bookies in
// runs.toml"), or as its flag if it was not given.
func (cl *commandLine) setting(field string) string {
	if g, ok := cl.given[field]; ok {
		return g
	}
	return "--" + field
}

// jsonUsage is the line --json writes to stdout for a usage error (exit
// 2), so that a program reading only stdout learns why nothing ran: the
// message stderr gets, and each problem with the setting as it was given.
type jsonUsage struct {
	Type     string        `json:"type"` // "usage-error"
	ExitCode int           `json:"exit-code"`
	Message  string        `json:"message"`
	Problems []jsonProblem `json:"problems"`
}

type jsonProblem struct {
	Setting string `json:"setting,omitempty"`
	Problem string `json:"problem"`
}

// writeUsageJSON writes the usage-error line for probs.
func writeUsageJSON(w io.Writer, msg string, probs schema.Problems, name func(field string) string) {
	u := jsonUsage{Type: "usage-error", ExitCode: exitUsage, Message: msg, Problems: []jsonProblem{}}
	for _, p := range probs {
		jp := jsonProblem{Problem: p.Msg}
		if p.Field != "" {
			jp.Setting = name(p.Field)
		}
		u.Problems = append(u.Problems, jp)
	}
	json.NewEncoder(w).Encode(u)
}
