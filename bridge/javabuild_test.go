package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bkcheck/bkcheck/internal/testtier"
)

// TestRealClasspathConcurrent builds the harness from an empty cache in
// four goroutines at once, as go test's parallel packages do on a fresh
// machine: each gets the same classpath, and its classes are complete.
func TestRealClasspathConcurrent(t *testing.T) {
	testtier.Real(t)
	t.Setenv("BKCHECK_BRIDGE_CACHE", t.TempDir())
	const n = 4
	cps := make(chan string, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			cp, err := Classpath(context.Background(), "4.18.2", nil)
			cps <- cp
			errs <- err
		}()
	}
	var first string
	for i := range n {
		cp, err := <-cps, <-errs
		if err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
		if first == "" {
			first = cp
		} else if cp != first {
			t.Errorf("build %d: classpath differs", i)
		}
	}
	classes := strings.Split(first, string(os.PathListSeparator))[0]
	found := 0
	filepath.WalkDir(classes, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".class") {
			found++
		}
		return nil
	})
	if found == 0 {
		t.Errorf("no classes under %s", classes)
	}
}

// fakeTools puts scripts named java and (if mvn is not empty) mvn, with
// the given bodies, on a PATH of their own, and the harness's cache in a
// temporary directory.
func fakeTools(t *testing.T, mvn string) string {
	t.Helper()
	bin := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("java", "exit 0")
	if mvn != "" {
		write("mvn", mvn)
	}
	t.Setenv("PATH", bin)
	t.Setenv("BKCHECK_BRIDGE_CACHE", t.TempDir())
	return bin
}

// TestClasspathBuiltNeedsNoMaven: a harness built for a release is used
// without Maven on PATH.
func TestClasspathBuiltNeedsNoMaven(t *testing.T) {
	fakeTools(t, "")
	dir, err := extract()
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "target", "4.18.2")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "classpath.txt"), []byte("/a.jar\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cp, err := Classpath(context.Background(), "4.18.2", nil)
	if err != nil || !strings.HasSuffix(cp, "/a.jar") {
		t.Errorf("classpath %q, %v", cp, err)
	}
	if _, err := Classpath(context.Background(), "4.18.1", nil); err != ErrNoMaven {
		t.Errorf("an unbuilt release without Maven: %v, want ErrNoMaven", err)
	}
}

// TestClasspathMissingRelease: a build says it starts, and a release Maven
// does not resolve is named with the line that says so, whole and without
// terminal colours.
func TestClasspathMissingRelease(t *testing.T) {
	fakeTools(t, `printf '\033[1;31m[ERROR]\033[m Failed to execute goal on project bkcheck-bridge: Could not resolve dependencies for project bkcheck:bkcheck-bridge:jar:1: Could not find artifact org.apache.bookkeeper:bookkeeper-server:jar:9.9.9 in central (https://repo.maven.apache.org/maven2) -> [Help 1]\n[ERROR]\n[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n'; exit 1`)
	var said []string
	_, err := Classpath(context.Background(), "9.9.9", func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) })
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "Could not find artifact org.apache.bookkeeper:bookkeeper-server:jar:9.9.9 in central (https://repo.maven.apache.org/maven2)") ||
		strings.Contains(err.Error(), "\x1b") || strings.Contains(err.Error(), "[Help") {
		t.Errorf("error: %v", err)
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "building the harness against BookKeeper 9.9.9") {
		t.Errorf("said %q", said)
	}
}

// TestClasspathBuildDiesWithCaller: a process killed (kill -9) while it
// builds the harness leaves no Maven behind. The build runs in a child
// process (this test binary again); the fake mvn reports its pid and
// sleeps.
func TestClasspathBuildDiesWithCaller(t *testing.T) {
	if os.Getenv("BKCHECK_TEST_BUILD_CHILD") == "1" {
		_, err := Classpath(context.Background(), "4.18.2", nil)
		t.Fatalf("the build returned: %v", err)
	}
	pidFile := filepath.Join(t.TempDir(), "mvn.pid")
	fakeTools(t, "echo $$ > "+pidFile+"; exec /bin/sleep 300")
	child := exec.Command(os.Args[0], "-test.run=^TestClasspathBuildDiesWithCaller$")
	child.Env = append(os.Environ(), "BKCHECK_TEST_BUILD_CHILD=1")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else if time.Now().After(deadline) {
			t.Fatal("the fake mvn never started")
		}
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("mvn outlived the process that started it")
		}
	}
}
