package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/schema"
)

// maxLocalShards bounds --local-shards: four processes per core, each with
// its own workers, is already more than a search gains from.
func maxLocalShards() int { return 4 * runtime.NumCPU() }

// checkLocalShards validates --local-shards against the other settings.
func (c *checkCommand) checkLocalShards() {
	n := c.only.LocalShards
	_, given := c.cl.given["local-shards"]
	switch {
	case n < 1 && given:
		c.cl.probs.Add("local-shards", "must be >= 1 (got %d)", n)
	case n <= 1:
	case n > maxLocalShards():
		c.cl.probs.Add("local-shards", "%d processes on %d cores would only thrash (at most %d here); to run more, start them by hand with --shard i/N (docs/distributed.md)", n, runtime.NumCPU(), maxLocalShards())
	case c.cfg.Dir == "":
		c.cl.probs.Add("local-shards", "needs --dir: the shards share a run directory")
	case c.cfg.Shard != "" || c.cfg.Shards != 0:
		c.cl.probs.Add("local-shards", "starts the shards itself; leave out --shard and --shards")
	case c.cfg.MaxStates > 0:
		c.cl.probs.Add("max-states", "is not supported by a sharded search")
	case c.cfg.Memory != 0 && c.cfg.Memory/schema.Size(n) < check.MinMemory:
		c.cl.probs.Add("memory", "%s shared by %d shards leaves each less than the %s minimum", c.cfg.Memory, n, check.MinMemory)
	}
}

// runLocalShards runs bkcheck check as N processes, shard i/N each, that
// share the run directory, and reports as shard 1 does: its output is
// this command's output (every shard reaches the same verdict, figures
// and counterexample), the others' standard error is passed on with a
// "shard i/N: " prefix. Ctrl-C stops them all, resumably: the same
// command continues the search. The memory budget and workers are divided
// among the shards.
func runLocalShards(ctx context.Context, c *checkCommand, args []string, stdout, stderr io.Writer) int {
	n := c.only.LocalShards
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "bkcheck check: %v\n", err)
		return exitError
	}
	if err := os.MkdirAll(c.cfg.Dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "bkcheck check: %v\n", err)
		return exitError
	}
	workers := max(1, c.cfg.Workers/n)
	cmds := make([]*exec.Cmd, n)
	var outWG sync.WaitGroup
	for i := range n {
		// Later flags override earlier ones: the user's flags come first.
		cargs := append([]string{"check"}, args...)
		cargs = append(cargs, "--local-shards=1", fmt.Sprintf("--shard=%d/%d", i+1, n), "--workers="+strconv.Itoa(workers))
		if c.cfg.Memory > 0 {
			cargs = append(cargs, "--memory="+strconv.FormatInt(int64(c.cfg.Memory)/int64(n), 10))
		}
		if i > 0 {
			cargs = append(cargs, "--trace-out=none")
		}
		if c.only.CPUProfile != "" {
			cargs = append(cargs, fmt.Sprintf("--cpuprofile=%s.%d", c.only.CPUProfile, i+1))
		}
		cmd := exec.Command(exe, cargs...)
		// The shards' interrupted reports name the command that continues
		// the run: this one, not theirs.
		cmd.Env = append(os.Environ(), continueEnv+"="+shellJoin(append([]string{"bkcheck", "check"}, args...)))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches them through us
		dieWithParent(cmd.SysProcAttr)                        // and a killed coordinator leaves none behind
		if i == 0 {
			cmd.Stdout = stdout
		}
		pipe, err := cmd.StderrPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			fmt.Fprintf(stderr, "bkcheck check: starting shard %d/%d: %v\n", i+1, n, err)
			stopAll(cmds)
			return exitError
		}
		cmds[i] = cmd
		outWG.Add(1)
		go func() {
			defer outWG.Done()
			prefix(stderr, pipe, fmt.Sprintf("shard %d/%d: ", i+1, n))
		}()
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			for _, cmd := range cmds {
				cmd.Process.Signal(os.Interrupt)
			}
		case <-done:
		}
	}()
	// Wait for every shard at once: a shard that dies (kill -9, an error,
	// a refused directory) leaves the others waiting for it at a level
	// barrier, so it is noticed as it happens, and the others are stopped,
	// resumably.
	type ended struct {
		i, code int
		how     string
	}
	exits := make(chan ended, n)
	for i, cmd := range cmds {
		go func() {
			err := cmd.Wait()
			e := ended{i: i, code: cmd.ProcessState.ExitCode(), how: cmd.ProcessState.String()}
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				e.code, e.how = exitError, err.Error()
			}
			exits <- e
		}()
	}
	codes := make([]int, n)
	died := false
	for range n {
		e := <-exits
		codes[e.i] = e.code
		if !died && ctx.Err() == nil && shardDied(e.code) {
			died = true
			fmt.Fprintf(stderr, "bkcheck check: shard %d/%d ended on its own (%s); stopping the other shards, which were waiting for it. The directory is resumable: continue with the same command.\n", e.i+1, n, e.how)
			stopAll(cmds)
		}
	}
	close(done)
	outWG.Wait()
	if died {
		return exitError
	}
	for i, code := range codes {
		if code != codes[0] {
			fmt.Fprintf(stderr, "bkcheck check: shard %d/%d ended with exit code %d, shard 1/%d with %d\n", i+1, n, code, n, codes[0])
			if codes[0] == exitOK || codes[0] == exitInterrupted {
				return code
			}
		}
	}
	return codes[0]
}

// shardDied reports whether a shard's exit code says it stopped on its
// own rather than with the search's verdict: killed by a signal (-1), an
// error, a usage error, or an interrupt nobody asked for.
func shardDied(code int) bool {
	return code < 0 || code == exitError || code == exitUsage || code == exitInterrupted || code == exitShardAbsent
}

// stopAll interrupts the shards that are running (os.Process.Signal
// does nothing to one already waited for).
func stopAll(cmds []*exec.Cmd) {
	for _, cmd := range cmds {
		if cmd != nil && cmd.Process != nil {
			cmd.Process.Signal(os.Interrupt)
		}
	}
}

// prefix copies r to w line by line, each line prefixed.
func prefix(w io.Writer, r io.Reader, p string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fmt.Fprintf(w, "%s%s\n", p, sc.Text())
	}
}

// continueEnv carries, to the processes of --local-shards, the command
// that continues their run.
const continueEnv = "BKCHECK_CONTINUE"

// continueCommand is the command that continues this sharded run: the
// coordinator's, for a shard of --local-shards, else this process's own.
func continueCommand() string {
	if c := os.Getenv(continueEnv); c != "" {
		return c
	}
	return shellJoin(append([]string{"bkcheck"}, os.Args[1:]...))
}

// shellJoin quotes args for a POSIX shell where they need it.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=./,:@%+", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
