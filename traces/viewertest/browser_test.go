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

// walk builds a trace by following, from the initial state, the first
// successor with each given action kind and loss pattern.
func walk(t *testing.T, p spec.Params, kinds []spec.ActionKind, lost []spec.Bookies) *traces.Trace {
	t.Helper()
	m, err := spec.NewModel(p)
	if err != nil {
		t.Fatal(err)
	}
	tr := &traces.Trace{Params: p}
	cur := m.Init()
	tr.Steps = append(tr.Steps, traces.Step{Initial: true, State: cur})
	var scratch spec.State
	for i, k := range kinds {
		var next spec.State
		var act spec.Action
		found := false
		m.Next(&cur, &scratch, func(a spec.Action, s *spec.State) {
			if !found && a.Kind == k && a.Lost == lost[i] {
				found, act = true, a
				next.CopyFrom(s)
			}
		})
		if !found {
			t.Fatalf("step %d: no %v successor", i+1, k)
		}
		tr.Steps = append(tr.Steps, traces.Step{Action: act, State: next})
		cur = next
	}
	return tr
}

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
	tr := walk(t, spec.DefaultParams(),
		[]spec.ActionKind{spec.ClientCreatesLedger, spec.ClientSendsAddEntryRequests, spec.BookieSendsAddConfirmedResponse, spec.ClientReceivesAddConfirmedResponse},
		[]spec.Bookies{0, 0b10, 0, 0})
	tr.Invariant = "EntriesReachWriteQuorum"
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
		chromedp.UserDataDir(t.TempDir()))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	var title, title4, titleEnd, titleClick, changedRow string
	var changed, arrows int
	err = chromedp.Run(ctx,
		chromedp.Navigate("file://"+page),
		chromedp.WaitVisible("#step-title", chromedp.ByQuery),
		chromedp.Text("#step-title", &title, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#svg line[marker-end]").length`, &arrows),
		chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent("j"),
		chromedp.Text("#step-title", &title4, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#vars tr.changed").length`, &changed),
		chromedp.Text("#vars tr.changed td", &changedRow, chromedp.ByQuery),
		chromedp.KeyEvent(kb.End),
		chromedp.Text("#step-title", &titleEnd, chromedp.ByQuery),
		chromedp.Click("#row-1 rect", chromedp.ByQuery),
		chromedp.Text("#step-title", &titleClick, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatal(err)
	}
	if title != "Step 1 of 5: Init" {
		t.Errorf("initial title %q", title)
	}
	if !strings.HasPrefix(title4, "Step 4 of 5: BookieSendsAddConfirmedResponse(b1, c1)") {
		t.Errorf("after three key presses: %q", title4)
	}
	if changed == 0 || changedRow != "b_entries[b1]" {
		t.Errorf("step 4 highlights %d rows, first %q; want b_entries[b1] first", changed, changedRow)
	}
	if !strings.Contains(titleEnd, "Step 5 of 5") || !strings.Contains(titleEnd, "violates EntriesReachWriteQuorum") {
		t.Errorf("End shows %q", titleEnd)
	}
	if !strings.HasPrefix(titleClick, "Step 2 of 5: ClientCreatesLedger") {
		t.Errorf("clicking row 2 shows %q", titleClick)
	}
	if arrows < 3 {
		t.Errorf("the diagram has %d delivered-message arrows", arrows)
	}
}
