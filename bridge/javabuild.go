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
// directory) and returns the classpath its JVMs run with.
func Classpath(ctx context.Context, version string) (string, error) {
	if !versionRE.MatchString(version) {
		return "", fmt.Errorf("%w %q: a release is three numbers, such as 4.18.2", ErrVersion, version)
	}
	if _, err := exec.LookPath("java"); err != nil {
		return "", errors.New("java not found on PATH: the bridge runs BookKeeper on a JDK (17 or later)")
	}
	if _, err := exec.LookPath("mvn"); err != nil {
		return "", ErrNoMaven
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
	cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "-Dbookkeeper.version="+version,
		"compile", "dependency:build-classpath", "-Dmdep.outputFile="+cpFile+".tmp")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if strings.Contains(string(out), "Could not find artifact org.apache.bookkeeper") || strings.Contains(string(out), "Could not resolve dependencies") {
			return "", fmt.Errorf("%w %s: Maven does not resolve org.apache.bookkeeper:bookkeeper-server:%s with its dependencies:\n%s", ErrVersion, version, version, lastLines(string(out), 6))
		}
		return "", fmt.Errorf("building the harness against BookKeeper %s (mvn in %s): %v\n%s", version, dir, err, lastLines(string(out), 15))
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

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
