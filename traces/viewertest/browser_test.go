// Package viewertest drives the HTML trace viewer in a real browser. It is
// a package of its own so that chromedp is not linked into the traces
// package's test binary (whose fuzz target it would slow to a crawl).
package viewertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// browser returns Debian's chromium, or skips (fails when
// BKCHECK_REQUIRE_BROWSER is set, as .ci/run does after installing it).
func browser(t *testing.T) string {
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("BKCHECK_REQUIRE_BROWSER") != "" {
			t.Fatal("chromium is not installed")
		}
		t.Skip("chromium is not installed (.ci/run installs it)")
	}
	return path
}

// TestHTMLViewerInBrowser loads a rendered trace in headless Chromium,
// steps through it with the keyboard and a click, and checks what the page
// shows: the step title, the highlighted changes and the verdict.
func TestHTMLViewerInBrowser(t *testing.T) {
	bin := browser(t)
	// A gallery trace: b1's write is lost, b2 acks, the writer changes
	// the ensemble; 6 states, TailFragmentsReachWriteQuorum violated.
	src, err := os.Open("../../docs/traces/below-qw-ensemble-change.itf.json")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	tr, err := traces.DecodeITF(src, spec.ResolveTrace)
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "trace.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := traces.RenderHTML(f, tr); err != nil {
		t.Fatal(err)
	}
	f.Close()
	html, _ := os.ReadFile(page)
	for _, bad := range []string{`src="http`, `href="http`, "url(http", "<script src", "<link", "@import", "cdn"} {
		if strings.Contains(string(html), bad) {
			t.Fatalf("the page is not self-contained: it contains %q", bad)
		}
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profileDir(t)))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	var opened, title, title4, titleEnd, titleClick, changedRow string
	var changed, arrows int
	err = chromedp.Run(ctx,
		chromedp.Navigate("file://"+page),
		chromedp.WaitVisible("#step-title", chromedp.ByQuery),
		chromedp.Text("#step-title", &opened, chromedp.ByQuery),
		chromedp.KeyEvent(kb.Home),
		chromedp.Text("#step-title", &title, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#svg line[marker-end]").length`, &arrows),
		chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent("j"),
		chromedp.Text("#step-title", &title4, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#vars tr.changed").length`, &changed),
		chromedp.Text("#vars tr.changed td", &changedRow, chromedp.ByQuery),
		chromedp.KeyEvent(kb.End),
		chromedp.Text("#step-title", &titleEnd, chromedp.ByQuery),
		chromedp.Click("#row-1 text", chromedp.ByQuery),
		chromedp.Text("#step-title", &titleClick, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(opened, "Step 6 of 6") || !strings.Contains(opened, "violates TailFragmentsReachWriteQuorum") {
		t.Errorf("the page opens at %q, not at the violating step", opened)
	}
	if title != "Step 1 of 6: Init" {
		t.Errorf("Home shows %q", title)
	}
	if !strings.HasPrefix(title4, "Step 4 of 6: BookieSendsAddConfirmedResponse(b2, c1)") {
		t.Errorf("after three key presses: %q", title4)
	}
	if changed == 0 || changedRow != "b_entries[b2]" {
		t.Errorf("step 4 highlights %d rows, first %q; want b_entries[b2] first", changed, changedRow)
	}
	if !strings.Contains(titleEnd, "Step 6 of 6") || !strings.Contains(titleEnd, "violates TailFragmentsReachWriteQuorum") {
		t.Errorf("End shows %q", titleEnd)
	}
	if !strings.HasPrefix(titleClick, "Step 2 of 6: ClientCreatesLedger") {
		t.Errorf("clicking row 2 shows %q", titleClick)
	}
	if arrows < 3 {
		t.Errorf("the diagram has %d delivered-message arrows", arrows)
	}
}

// profileDir is a Chromium profile directory for t. Chromium's helper
// processes may still write to it for a moment after the browser is
// cancelled, which makes t.TempDir's cleanup fail; this one retries the
// removal for up to five seconds and never fails the test.
func profileDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "bkcheck-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 50 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}
