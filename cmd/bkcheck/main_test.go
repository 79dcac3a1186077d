package main

import (
	"os"
	"testing"
)

// runAsBkcheck, set in the environment, makes the test binary behave as
// bkcheck itself: what --local-shards starts (os.Executable) when a test
// runs it in process.
const runAsBkcheck = "BKCHECK_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsBkcheck) == "1" {
		os.Exit(run(interruptible(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
