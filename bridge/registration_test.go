package bridge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bkcheck/bkcheck/bridge/cluster"
	"github.com/bkcheck/bkcheck/internal/testtier"
)

// TestRealRegistrationEndsAtTheStep: a killed bookie stays registered
// (no ZooKeeper session expires by a clock in the cluster) until
// Cluster.Unregister ends it, which deletes its registration once; a
// restart after it finds no old registration to wait for.
func TestRealRegistrationEndsAtTheStep(t *testing.T) {
	testtier.Real(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp, err := Classpath(ctx, DefaultVersion, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cl, err := cluster.Start(ctx, cluster.Options{Classpath: cp, Bookies: 2, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cl.Close()
		if left := cluster.Leftover(dir); len(left) > 0 {
			t.Errorf("processes left behind: %v", left)
		}
	}()
	cmd, in, out, err := cl.Spawn(ctx, "the client driver", filepath.Join(dir, "driver.log"),
		[]string{"-Xmx256m", "-XX:MaxDirectMemorySize=128m"}, "bkcheck.bridge.Driver", cl.MetadataURI(), "3")
	if err != nil {
		t.Fatal(err)
	}
	drv := newDriver(cmd, in, out)
	defer quit(drv)
	if err := drv.call(ctx, nil, "init"); err != nil {
		t.Fatal(err)
	}
	if err := cl.StartBookies(ctx); err != nil { // on the metadata init formatted
		t.Fatal(err)
	}
	writable := func() []string {
		var w struct {
			Bookies []string `json:"bookies"`
		}
		if err := drv.call(ctx, &w, "writable"); err != nil {
			t.Fatal(err)
		}
		return w.Bookies
	}
	b1 := cl.Bookie("b1")
	for deadline := time.Now().Add(time.Minute); !slices.Contains(writable(), b1.ID()); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("b1 never registered: %v", writable())
		}
	}
	// The session the bookie was granted is the hour it asked for.
	if log, err := os.ReadFile(b1.Log()); err != nil || !strings.Contains(string(log), fmt.Sprintf("negotiated timeout = %d", 3600000)) {
		t.Fatalf("b1's ZooKeeper session is not an hour's (%v); its log %s", err, b1.Log())
	}
	if err := cl.Crash(b1); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(writable(), b1.ID()) {
		t.Fatalf("the killed b1's registration ended by itself: writable %v", writable())
	}
	if was, err := cl.Unregister(ctx, b1); err != nil || !was {
		t.Fatalf("Unregister: %v, %v; want the registration ended", was, err)
	}
	for deadline := time.Now().Add(time.Minute); slices.Contains(writable(), b1.ID()); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("b1 still listed after Unregister: %v", writable())
		}
	}
	if was, err := cl.Unregister(ctx, b1); err != nil || was {
		t.Fatalf("a second Unregister: %v, %v; want nothing to end", was, err)
	}
	if err := cl.Restart(ctx, b1); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !slices.Contains(writable(), b1.ID()); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the restarted b1 never registered: %v", writable())
		}
	}
}
