package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/traces"
)

// A command is one subcommand of bkcheck, declared once in the table
// commands: run dispatches on its name, and bkcheck help, the command's -h
// and the README's list of commands (TestReadmeCommands) derive from it.
type command struct {
	name     string // as typed after bkcheck: "check", "sweep merge"
	args     string // its positional arguments, for the usage line: "FILE.toml", "[DIR]"
	synopsis string // what it does, in one line
	// flags declares the command's switches: fresh settings holding their
	// defaults, one section of -h each, every one through package schema.
	// nil: the command has none.
	flags func() []section
	// run runs the command on its command line, parsed against flags.
	run func(ctx context.Context, inv *invocation) int
}

// A section is one settings struct of a command, under a title in -h.
type section struct {
	title string
	schema.Target
}

// An invocation is a command as run: its command line parsed against its
// flags (problems are left for the command to report with its own), and
// the arguments as given after the command's name.
type invocation struct {
	cmd            *command
	cl             *commandLine
	args           []string
	stdout, stderr io.Writer
}

// commands is the command table, in the order bkcheck help lists it. It
// is filled in by init because some commands (help) read it.
var commands []command

func init() {
	commands = []command{
		{name: "check", synopsis: "explore every reachable state of one parameter set", flags: checkFlags, run: runCheck},
		{name: "simulate", synopsis: "random walks: a fast bug hunt on models too large to exhaust", flags: simulateFlags, run: runSimulate},
		{name: "replay", args: "FILE", synopsis: "re-check a saved trace (.itf.json) against the model, step by step",
			run: func(_ context.Context, inv *invocation) int { return runReplay(inv.args, inv.stdout, inv.stderr) }},
		{name: "confirm", args: "FILE", synopsis: "execute a saved trace on a real BookKeeper cluster, step by step, and say whether BookKeeper does what the model did (docs/conformance.md)", flags: confirmFlags, run: runConfirm},
		{name: "conform", synopsis: "random walks of the model executed on a real BookKeeper cluster, each on a fresh one: how often BookKeeper does what the model does (docs/conformance.md)", flags: conformFlags, run: runConform},
		{name: "validate", args: "RECORD...", synopsis: "check records of real BookKeeper runs against the model: is each a behaviour of the model? (docs/conformance.md, \"Both directions\")", flags: validateFlags, run: runValidate},
		{name: "regress", args: "[DIR]", synopsis: "run the regression suite (DIR/*.toml, by default testdata/regress, or one suite file given instead of DIR; then docs/bugs.md's bugs and docs/findings.md's questions); report every drift", flags: regressFlags, run: runRegress},
		{name: "sweep", args: "FILE.toml", synopsis: "check a grid of parameter sets, or one slice of it (docs/sweeps.md)", flags: sweepFlags, run: runSweep},
		{name: "sweep merge", args: "DIR...", synopsis: "join the results of a sweep's slices into one table", flags: sweepMergeFlags, run: runSweepMerge},
		{name: "trace render", args: "FILE", synopsis: "draw a saved trace: text, a Mermaid or Graphviz diagram, or one HTML page", flags: renderFlags,
			run: func(_ context.Context, inv *invocation) int { return runTrace(inv) }},
		{name: "trace build", args: "STEPS", synopsis: "the trace of a story told step by step (one action label a line), checked by the model: a fair lasso of an --eventually property, a --terminal property's counterexample or a --probe's witness, that bkcheck confirm can run",
			flags: buildFlags, run: func(_ context.Context, inv *invocation) int { return runTraceBuild(inv) }},
		{name: "guarantees", synopsis: "regenerate docs/guarantees.md (what E, Qw and Qa guarantee)", flags: guaranteesFlags, run: runGuarantees},
		{name: "bugs", synopsis: "regenerate docs/bugs.md (BookKeeper's protocol bugs, found again)", flags: bugsFlags, run: runBugs},
		{name: "findings", synopsis: "regenerate docs/findings.md (open BookKeeper questions, settled on master and on each proposed fix)", flags: findingsFlags, run: runFindings},
		{name: "variants", synopsis: "list the protocol variants of a model (--variant)", flags: modelFlags, run: runVariants},
		{name: "invariants", synopsis: "list the properties of a model (--invariants)", flags: modelFlags, run: runInvariants},
		{name: "actions", synopsis: "list the action names of a model (--exclude-actions)", flags: modelFlags, run: runActions},
		{name: "version", synopsis: "print bkcheck's version (the one its trace files record as bkcheck-version) and the Go version it was built with", run: runVersion},
		{name: "help", args: "[COMMAND]", synopsis: "list the commands and the exit codes, or show a command's flags", run: runHelp},
	}
}

// lookupCommand finds a command by its name ("sweep merge").
func lookupCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// findCommand finds the command args start with (two words first: "sweep
// merge" before "sweep") and returns it with the arguments after its name.
func findCommand(args []string) (*command, []string) {
	if len(args) >= 2 {
		if c := lookupCommand(args[0] + " " + args[1]); c != nil {
			return c, args[2:]
		}
	}
	if len(args) >= 1 {
		if c := lookupCommand(args[0]); c != nil {
			return c, args[1:]
		}
	}
	return nil, nil
}

// isCommandGroup reports whether word starts commands of two words
// ("trace" of "trace render").
func isCommandGroup(word string) bool {
	for i := range commands {
		if strings.HasPrefix(commands[i].name, word+" ") {
			return true
		}
	}
	return false
}

// groupUsage is the usage of a word that starts commands of two words
// ("trace"): those commands, and where their flags are.
func groupUsage(word string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: bkcheck %s COMMAND\n\nCommands:\n", word)
	var first string
	for i := range commands {
		c := &commands[i]
		if strings.HasPrefix(c.name, word+" ") {
			fmt.Fprintf(&b, "  %s\n      %s\n", c.usageLine(), c.synopsis)
			if first == "" {
				first = c.name
			}
		}
	}
	fmt.Fprintf(&b, "\nRun 'bkcheck %s -h' (or 'bkcheck help %s') for a command's flags.\n", first, first)
	return b.String()
}

// sections returns the command's settings, fresh.
func (c *command) sections() []section {
	if c.flags == nil {
		return nil
	}
	return c.flags()
}

// parse reads args against the command's flags.
func (c *command) parse(args []string) *commandLine {
	var targets []schema.Target
	for _, s := range c.sections() {
		targets = append(targets, s.Target)
	}
	return newCommandLine("bkcheck "+c.name, targets...).parse(args)
}

// invoke runs the command: its -h is answered here, from the table.
func (c *command) invoke(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cl := c.parse(args)
	if cl.help {
		c.usage(stdout)
		return exitOK
	}
	return c.run(ctx, &invocation{cmd: c, cl: cl, args: args, stdout: stdout, stderr: stderr})
}

// usageLine is how the command is typed: "bkcheck sweep [flags] FILE.toml".
func (c *command) usageLine() string {
	s := "bkcheck " + c.name
	if c.flags != nil {
		s += " [flags]"
	}
	if c.args != "" {
		s += " " + c.args
	}
	return s
}

// usage is the command's -h: its usage line, synopsis and every flag,
// section by section in declaration order.
func (c *command) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n  %s\n", c.usageLine(), c.synopsis)
	for _, s := range c.sections() {
		fmt.Fprintf(w, "\n%s:\n", s.title)
		s.S.PrintUsage(w, s.V)
	}
}

const exitCodesText = `Exit codes:
  0    ok: every reachable state explored, every invariant holds
  1    error (I/O, internal; a regression drift; a sweep merge missing points)
  2    usage: bad flags or parameters (all problems are listed)
  3    unknown: --max-depth or --max-states stopped the search first;
       bkcheck sweep (and sweep merge): an incomplete sweep, some points unknown or failed
  4    a shard of a sharded search waited --shard-timeout at a level's barrier for
       shards that never came (named, with the level); nothing is lost: start every
       shard again with the same command (a scheduler should retry, not give up)
  11   deadlock: a state without successor (only with --check-deadlock)
  12   an invariant is violated; the shortest counterexample is printed
  13   a property of terminal states fails in a state without successor
  14   bkcheck confirm: BookKeeper diverged from the trace (12: it reproduced the
       violation, 3: a step cannot be driven, 0: it kept the property)
  75   error: the model failed (panicked) computing initial states or successors;
       the trace to the state is printed
  76   error: the model failed evaluating an invariant (77: a terminal-state property)
  130  interrupted (Ctrl-C / SIGTERM); partial statistics, verdict unknown
`

// usageText is bkcheck help: every command of the table, and the exit
// codes.
func usageText() string {
	var b strings.Builder
	b.WriteString("bkcheck model-checks the Apache BookKeeper replication protocol.\n\nUsage:\n")
	const col = 28
	for i := range commands {
		c := &commands[i]
		if line := c.usageLine(); len(line) < col {
			fmt.Fprintf(&b, "  %-*s %s\n", col, line, c.synopsis)
		} else {
			fmt.Fprintf(&b, "  %s\n  %-*s %s\n", line, col, "", c.synopsis)
		}
	}
	b.WriteString("\nRun 'bkcheck COMMAND -h' (or 'bkcheck help COMMAND') for a command's flags.\n\n")
	b.WriteString(exitCodesText)
	return b.String()
}

// commandsTable is the README's list of commands, as Markdown.
func commandsTable() string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	for i := range commands {
		c := &commands[i]
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.usageLine(), strings.ReplaceAll(c.synopsis, "|", "\\|"))
	}
	return b.String()
}

// runHelp is `bkcheck help [COMMAND]`.
func runHelp(_ context.Context, inv *invocation) int {
	if len(inv.cl.args) == 0 && len(inv.cl.probs) == 0 {
		fmt.Fprint(inv.stdout, usageText())
		return exitOK
	}
	if c, rest := findCommand(inv.cl.args); c != nil && len(rest) == 0 && len(inv.cl.probs) == 0 {
		c.usage(inv.stdout)
		return exitOK
	}
	if len(inv.cl.args) == 1 && len(inv.cl.probs) == 0 && isCommandGroup(inv.cl.args[0]) {
		fmt.Fprint(inv.stdout, groupUsage(inv.cl.args[0]))
		return exitOK
	}
	if len(inv.cl.probs) == 0 {
		inv.cl.probs.Add("", "no command %q (bkcheck help lists them)", strings.Join(inv.cl.args, " "))
	}
	return inv.cl.report(inv.stderr)
}

// runVersion is `bkcheck version` (and `bkcheck --version`): the version
// every trace file records (#meta.bkcheck-version, traces.Version) and the
// Go toolchain, platform and, when the build recorded it, the commit.
func runVersion(_ context.Context, inv *invocation) int {
	if len(inv.cl.args) > 0 {
		inv.cl.probs.Add("", "takes no arguments (got %v)", inv.cl.args)
	}
	if code := inv.cl.report(inv.stderr); code != exitOK {
		return code
	}
	fmt.Fprintln(inv.stdout, versionText())
	return exitOK
}

// versionText is the line bkcheck version prints: "bkcheck 0.2.0 (go1.26.8
// linux/amd64)", with the commit when the build recorded one.
func versionText() string {
	s := fmt.Sprintf("bkcheck %s (%s %s/%s", traces.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if info, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, kv := range info.Settings {
			switch kv.Key {
			case "vcs.revision":
				rev = kv.Value
			case "vcs.modified":
				if kv.Value == "true" {
					dirty = ", modified"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			s += ", commit " + rev + dirty
		}
	}
	return s + ")"
}

// settingsOf returns the settings of type T that cl was parsed into: one
// of the sections its command declares.
func settingsOf[T any](cl *commandLine) *T {
	for _, t := range cl.targets {
		if v, ok := t.V.(*T); ok {
			return v
		}
	}
	panic(fmt.Sprintf("%s declares no %T settings", cl.cmd, *new(T)))
}

// fileSection is --config and --run, for the commands that read
// parameter-set files.
func fileSection() section {
	return section{"Parameter-set files", schema.Target{S: fileSchema, V: &fileSettings{}}}
}

// renderSettings are the switches of bkcheck trace render.
type renderSettings struct {
	Format string `name:"format" unit:"F" help:"text, mermaid (a sequence diagram for GitHub), dot (Graphviz) or html (one self-contained page)"`
}

var renderSchema = schema.MustOf(renderSettings{})

func renderFlags() []section {
	return []section{{"Rendering", schema.Target{S: renderSchema, V: &renderSettings{Format: "text"}}}}
}
