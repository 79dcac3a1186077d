package main

import "syscall"

// dieWithParent makes a child process receive SIGTERM when this process
// dies, however it dies (kill -9 included): a shard of --local-shards
// then stops, resumably, instead of running on alone.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
