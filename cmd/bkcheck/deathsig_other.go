//go:build !linux

package main

import "syscall"

// dieWithParent: only Linux has a parent-death signal; elsewhere a shard
// of a killed coordinator runs to the end of its search.
func dieWithParent(*syscall.SysProcAttr) {}
