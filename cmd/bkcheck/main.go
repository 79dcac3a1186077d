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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
