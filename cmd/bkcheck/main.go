// Command bkcheck model-checks the Apache BookKeeper replication protocol.
//
//	bkcheck check [flags]    explore every interleaving of a parameter set
//	bkcheck help             usage and exit codes
package main

import (
	"context"
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
