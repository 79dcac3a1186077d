package bridge

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/bkcheck/bkcheck/internal/atomicfile"
)

// javaSources is the harness's Maven module, carried in the binary so that
// bkcheck confirm works from any directory.
//
//go:embed java/pom.xml java/src
var javaSources embed.FS

// ErrNoMaven is returned when mvn is not on PATH.
var ErrNoMaven = errors.New("mvn not found on PATH: the bridge fetches BookKeeper's released artifacts with Maven (3.8 or later)")

// ErrVersion is returned for a release that is not one or that Maven
// does not resolve.
var ErrVersion = errors.New("BookKeeper release")

var versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// Classpath builds the harness against BookKeeper release version (once
// per release and harness source, cached under the user's cache
// directory) and returns the classpath its JVMs run with. say, if not nil,
// is told before a build starts (the first of a release takes a minute or
// more while Maven fetches its artifacts). A built harness needs no Maven.
func Classpath(ctx context.Context, version string, say func(format string, args ...any)) (string, error) {
	if !versionRE.MatchString(version) {
		return "", fmt.Errorf("%w %q: a release is three numbers, such as 4.18.2", ErrVersion, version)
	}
	if _, err := exec.LookPath("java"); err != nil {
		return "", errors.New("java not found on PATH: the bridge runs BookKeeper on a JDK (17 or later)")
	}
	dir, err := extract()
	if err != nil {
		return "", err
	}
	target := filepath.Join(dir, "target", version)
	cpFile := filepath.Join(target, "classpath.txt")
	if cp, ok := builtClasspath(target, cpFile); ok {
		return cp, nil
	}
	if _, err := exec.LookPath("mvn"); err != nil {
		return "", ErrNoMaven
	}
	// One build at a time per module: two processes (go test runs the
	// bridge's and the CLI's tests side by side) building into the same
	// target, or downloading into the same empty Maven repository, corrupt
	// each other's files. The lock is released when the file is closed,
	// and by the kernel if the process dies.
	lock, err := os.OpenFile(filepath.Join(dir, ".build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("locking the harness build: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("locking the harness build: %w", err)
	}
	if cp, ok := builtClasspath(target, cpFile); ok {
		return cp, nil // another process built it while this one waited
	}
	if say != nil {
		say("building the harness against BookKeeper %s (its first run: Maven fetches the release's artifacts, a minute or more)", version)
	}
	cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "-Dstyle.color=never", "-Dbookkeeper.version="+version,
		"compile", "dependency:build-classpath", "-Dmdep.outputFile="+cpFile+".tmp")
	cmd.Dir = dir
	// Maven's JVM dies with this process, however it ends (mvn execs
	// java, which keeps the death signal), and an interrupt stops its
	// whole group: no build goes on in the target behind a killed run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		text := ansi.ReplaceAllString(string(out), "")
		if line := missingArtifact(text); line != "" {
			return "", fmt.Errorf("%w %s: Maven does not resolve org.apache.bookkeeper:bookkeeper-server:%s with its dependencies: %s", ErrVersion, version, version, line)
		}
		return "", fmt.Errorf("building the harness against BookKeeper %s (mvn in %s): %v\n%s", version, dir, err, lastLines(text, 15))
	}
	if err := os.Rename(cpFile+".tmp", cpFile); err != nil {
		return "", err
	}
	cp, ok := builtClasspath(target, cpFile)
	if !ok {
		return "", fmt.Errorf("building the harness against BookKeeper %s: mvn succeeded but %s is unreadable", version, cpFile)
	}
	return cp, nil
}

// builtClasspath returns the classpath of a finished build: classpath.txt
// is renamed into place only after mvn succeeded.
func builtClasspath(target, cpFile string) (string, bool) {
	cp, err := os.ReadFile(cpFile)
	if err != nil {
		return "", false
	}
	return filepath.Join(target, "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(cp)), true
}

// extract writes the embedded module to a directory named by its hash.
func extract() (string, error) {
	h := sha256.New()
	var files []string
	err := fs.WalkDir(javaSources, "java", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := javaSources.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		files = append(files, p)
		return nil
	})
	if err != nil {
		return "", err
	}
	base := os.Getenv("BKCHECK_BRIDGE_CACHE")
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory for the harness (set BKCHECK_BRIDGE_CACHE): %w", err)
		}
		base = filepath.Join(c, "bkcheck", "bridge")
	}
	dir := filepath.Join(base, hex.EncodeToString(h.Sum(nil))[:16])
	for _, p := range files {
		dst := filepath.Join(dir, strings.TrimPrefix(p, "java/"))
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		b, _ := javaSources.ReadFile(p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if err := atomicfile.WriteFile(dst, b); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// ansi matches a terminal's colour codes, which some Maven versions print
// even in batch mode.
var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// missingArtifact is the line of Maven's output that says what it could
// not resolve, without Maven's prefix and help pointers; "" if none.
func missingArtifact(out string) string {
	for _, l := range strings.Split(out, "\n") {
		i := strings.Index(l, "Could not find artifact")
		if i < 0 {
			i = strings.Index(l, "Could not resolve dependencies")
		}
		if i >= 0 {
			l = l[i:]
			if j := strings.Index(l, " -> [Help"); j >= 0 {
				l = l[:j]
			}
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
