// Command bkcheck model-checks the Apache BookKeeper replication protocol.
// It is a thin shell over package check: it turns flags and files into a
// check.Config, runs it, and turns the report into text, JSON, trace files
// and an exit code.
//
//	bkcheck check [flags]    explore every interleaving of a parameter set
//	bkcheck help             every command (the table in commands.go) and the exit codes
//	bkcheck version          the version trace files record, and the Go version
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(interruptible(), os.Args[1:], os.Stdout, os.Stderr))
}

// interruptible returns a context cancelled by the first SIGINT or SIGTERM,
// which makes the search stop cleanly (partial statistics, resumable). The
// signals then get their default action back, so a second Ctrl-C kills the
// process at once.
func interruptible() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		cancel()
	}()
	return ctx
}

// Exit codes. Where they overlap with TLC's they are TLC's.
const (
	exitOK          = 0
	exitError       = 1   // I/O or internal error
	exitUsage       = 2   // bad flags or parameters
	exitUnknown     = 3   // a bound stopped the search: neither proved nor refuted
	exitShardAbsent = 4   // a shard waited --shard-timeout for shards that never came; resumable, retry them all
	exitDeadlock    = 11  // TLC: deadlock reached
	exitViolation   = 12  // TLC: safety violation
	exitTerminal    = 13  // TLC: liveness violation; here a terminal-state property
	exitInterrupted = 130 // stopped by SIGINT/SIGTERM; the verdict is unknown

	// The error verdict: the model failed (panicked) on a state; TLC's
	// codes for an evaluation error (EC.ExitStatus), by what failed.
	exitModelFailed    = 75 // TLC FAILURE_SPEC_EVAL: the initial states, a successor, a state's decoding
	exitInvariantError = 76 // TLC FAILURE_SAFETY_EVAL: an invariant's evaluation
	exitTerminalError  = 77 // TLC FAILURE_LIVENESS_EVAL: here a terminal-state property's evaluation
)

// run is the whole program: main is run with the process's arguments,
// streams and signals; tests call it directly. It dispatches on the
// command table (commands.go).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText())
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		args = append([]string{"help"}, args[1:]...)
	case "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	c, rest := findCommand(args)
	if c == nil && isCommandGroup(args[0]) {
		// "trace" alone, or with a word that is none of its commands:
		// its commands, not every command.
		switch {
		case len(args) == 1:
			fmt.Fprintf(stderr, "bkcheck %s: give a command\n\n%s", args[0], groupUsage(args[0]))
		case len(args) == 2 && (args[1] == "-h" || args[1] == "-help" || args[1] == "--help"):
			fmt.Fprint(stdout, groupUsage(args[0]))
			return exitOK
		default:
			fmt.Fprintf(stderr, "bkcheck: unknown command %q\n\n%s", args[0]+" "+args[1], groupUsage(args[0]))
		}
		return exitUsage
	}
	if c == nil {
		fmt.Fprintf(stderr, "bkcheck: unknown command %q\n\n%s", args[0], usageText())
		return exitUsage
	}
	return c.invoke(ctx, rest, stdout, stderr)
}
