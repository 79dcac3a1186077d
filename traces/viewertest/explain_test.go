package viewertest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/traces"
)

// page renders tr (explained, as bkcheck trace render does) into a file.
func page(t *testing.T, tr *traces.Trace) string {
	t.Helper()
	if ex, err := check.Explain(tr); err == nil {
		tr.Explanation = ex
	}
	path := filepath.Join(t.TempDir(), "trace.html")
	var b bytes.Buffer
	if err := traces.RenderHTML(&b, tr); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readITF(t *testing.T, path string) *traces.Trace {
	t.Helper()
	tr, err := traces.ReadITFFile(path, spec.ResolveTrace)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestHTMLViewerExplained loads pages in one headless Chromium whose
// window is 1400 by 900 pixels, one tab per check.
func TestHTMLViewerExplained(t *testing.T) {
	bin := browser(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1400, 900), chromedp.UserDataDir(profileDir(t)))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Run(bctx); err != nil { // start the browser
		t.Fatal(err)
	}
	tab := func(t *testing.T) (context.Context, func()) {
		ctx, cancel1 := chromedp.NewContext(bctx)
		ctx, cancel2 := context.WithTimeout(ctx, 60*time.Second)
		return ctx, func() { cancel2(); cancel1() }
	}
	t.Run("explains", func(t *testing.T) { testExplains(t, tab) })
	t.Run("fits-1400", func(t *testing.T) { testFits1400(t, tab) })
	t.Run("fits-900", func(t *testing.T) { testFits900(t, tab) })
	t.Run("why-collapsed", func(t *testing.T) { testWhyCollapsed(t, tab) })
	t.Run("inert", func(t *testing.T) { testInert(t, tab) })
	t.Run("leads-to", func(t *testing.T) { testLeadsTo(t, tab) })
	t.Run("opens-at-top", func(t *testing.T) { testOpensAtTop(t, tab) })
}

type tabFunc func(t *testing.T) (context.Context, func())

// testExplains: for apache/bookkeeper#2614 the page states the
// property (name, statement, its CEL form), explains the last state and,
// at the last step, highlights exactly the values that decide it: the
// writer's LAC 1 against the metadata's last entry 0. The fence request
// that never reached b2 is drawn as sent and never delivered.
func testExplains(t *testing.T, tab tabFunc) {
	path := page(t, readITF(t, "../../docs/traces/no-recovery-fence-2614.itf.json"))
	ctx, cancel := tab(t)
	defer cancel()
	var name, statement, expr, why, reads, title string
	var culprits, pending []string
	var culpritsEarly int
	err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible("#step-title", chromedp.ByQuery),
		chromedp.Text("#prop-name", &name, chromedp.ByQuery),
		chromedp.Text("#prop-statement", &statement, chromedp.ByQuery),
		chromedp.Text("#prop-expr", &expr, chromedp.ByQuery),
		chromedp.Text("#why-lines", &why, chromedp.ByQuery),
		chromedp.Text("#why-reads", &reads, chromedp.ByQuery),
		chromedp.KeyEvent(kb.Home),
		chromedp.Evaluate(`document.querySelectorAll("#vars tr.culprit").length`, &culpritsEarly),
		chromedp.Evaluate(`[...document.querySelectorAll("#svg text")].filter(t => t.previousSibling && t.previousSibling.classList && t.previousSibling.classList.contains("pending")).map(t => t.textContent)`, &pending),
		chromedp.KeyEvent(kb.End),
		chromedp.Text("#step-title", &title, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll("#vars tr.culprit td:first-child")].map(td => td.textContent)`, &culprits),
	)
	if err != nil {
		t.Fatal(err)
	}
	if name != "NoDivergenceBetweenClientAndMetaData" || !strings.Contains(statement, "exactly one client closed it") {
		t.Errorf("property shown as %q: %q", name, statement)
	}
	if !strings.Contains(expr, "in CEL") || !strings.Contains(expr, `c.lac <= meta_last_entry`) {
		t.Errorf("expression shown: %q", expr)
	}
	if !strings.Contains(why, "c.lac <= meta_last_entry is false: clients[c1].lac = 1, meta_last_entry = 0") {
		t.Errorf("explanation: %q", why)
	}
	if !strings.Contains(reads, "clients[c1].lac = 1") {
		t.Errorf("deciding values: %q", reads)
	}
	if culpritsEarly != 0 {
		t.Errorf("%d rows highlighted at the first step; only the last step shows them", culpritsEarly)
	}
	slices.Sort(culprits)
	if want := []string{"clients[c1].lac", "clients[c1].status", "meta_last_entry", "meta_status"}; !slices.Equal(culprits, want) {
		t.Errorf("last step highlights %q, want %q", culprits, want)
	}
	if !strings.HasPrefix(title, "Step 14 of 14") || !strings.Contains(title, "violates NoDivergenceBetweenClientAndMetaData") {
		t.Errorf("last step title %q", title)
	}
	if len(pending) != 1 || !strings.HasPrefix(pending[0], "FenceRequest c2->b2") {
		t.Errorf("messages drawn as never delivered: %q", pending)
	}
}

// testFits1400: with six participants the diagram fits a window
// 1400 pixels wide: no horizontal scrolling, every label inside the
// diagram.
func testFits1400(t *testing.T, tab tabFunc) {
	tr := readITF(t, "../../docs/traces/below-qw-ensemble-change.itf.json")
	if n := len(tr.Model.Participants(tr.Steps[len(tr.Steps)-1].State)); n != 6 {
		t.Fatalf("the trace has %d participants, want 6", n)
	}
	path := page(t, tr)
	ctx, cancel := tab(t)
	defer cancel()
	var pageOverflow, diagramOverflow bool
	var outside []string
	var inner int
	err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible("#svg", chromedp.ByQuery),
		chromedp.Evaluate(`window.innerWidth`, &inner),
		chromedp.Evaluate(`document.documentElement.scrollWidth > document.documentElement.clientWidth`, &pageOverflow),
		chromedp.Evaluate(`(() => { const d = document.getElementById("diagram"); return d.scrollWidth > d.clientWidth || document.getElementById("svg").getBoundingClientRect().right > d.getBoundingClientRect().right + 0.5; })()`, &diagramOverflow),
		chromedp.Evaluate(`(() => { const s = document.getElementById("svg").getBoundingClientRect();
			return [...document.querySelectorAll("#svg text")].filter(t => { const r = t.getBoundingClientRect(); return r.left < s.left - 0.5 || r.right > s.right + 0.5; }).map(t => t.textContent); })()`, &outside),
	)
	if err != nil {
		t.Fatal(err)
	}
	if inner != 1400 {
		t.Fatalf("window is %d pixels wide", inner)
	}
	if pageOverflow || diagramOverflow {
		t.Errorf("at 1400 pixels the page scrolls sideways (%v) or the diagram overflows (%v)", pageOverflow, diagramOverflow)
	}
	if len(outside) > 0 {
		t.Errorf("labels outside the diagram: %q", outside)
	}
}

// testInert: a trace file is data from anyone. One whose
// property name, statement and expression carry markup and script renders
// them as text: nothing runs, no element is injected, and the strings
// appear literally.
func testInert(t *testing.T, tab tabFunc) {
	tr := readITF(t, "../../docs/traces/no-recovery-fence-2614.itf.json")
	tr.Invariant = `<img src=x onerror="window.pwned='name'">`
	tr.Statement = `</script><script>window.pwned='statement'</script><b onmouseover="window.pwned='b'">bold</b>`
	tr.Kind = "invariant"
	// The markup is in a string literal that is not compared with a
	// status (a status compared with a literal none of its values is
	// refused before anything is explained).
	tr.Expression = `size("</script><svg onload=window.pwned='expr'>") > 0 && meta_status != "STATUS_CLOSED"`
	// Through a file, as a shared trace arrives.
	var itf bytes.Buffer
	if err := traces.EncodeITF(&itf, tr); err != nil {
		t.Fatal(err)
	}
	back, err := traces.DecodeITF(&itf, spec.ResolveTrace)
	if err != nil {
		t.Fatal(err)
	}
	path := page(t, back)
	html, _ := os.ReadFile(path)
	for _, bad := range []string{"<img src=x", "<script>window.pwned", "<svg onload", "<b onmouseover"} {
		if bytes.Contains(html, []byte(bad)) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
	ctx, cancel := tab(t)
	defer cancel()
	var pwned, name, statement, expr, why, titleText string
	var injected int
	err = chromedp.Run(ctx,
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible("#step-title", chromedp.ByQuery),
		chromedp.KeyEvent(kb.End),
		chromedp.Evaluate(`String(window.pwned)`, &pwned),
		chromedp.Evaluate(`document.querySelectorAll("img, b, script:not([id='trace-data']):not(:last-of-type), svg svg, iframe, object").length`, &injected),
		chromedp.Text("#prop-name", &name, chromedp.ByQuery),
		chromedp.Text("#prop-statement", &statement, chromedp.ByQuery),
		chromedp.Text("#prop-expr", &expr, chromedp.ByQuery),
		chromedp.Text("#why-lines", &why, chromedp.ByQuery),
		chromedp.Evaluate(`document.title`, &titleText),
	)
	if err != nil {
		t.Fatal(err)
	}
	if pwned != "undefined" {
		t.Errorf("script from the trace ran: window.pwned = %q", pwned)
	}
	if injected != 0 {
		t.Errorf("%d elements injected into the page", injected)
	}
	if name != tr.Invariant || statement != tr.Statement || !strings.Contains(expr, tr.Expression) {
		t.Errorf("strings not shown literally: %q / %q / %q", name, statement, expr)
	}
	if !strings.Contains(titleText, tr.Invariant) {
		t.Errorf("title %q", titleText)
	}
	if !strings.Contains(why, `"</script><svg onload=window.pwned='expr'>"`) {
		t.Errorf("the explanation does not quote the expression literally: %q", why)
	}
}

// testLeadsTo: the counterexample of a leads-to P ~> Q (bkcheck check
// --invariants none --eventually 'RecoveryCloses=clients.exists(id, c,
// c.recovery_phase > 0) ~> meta_status == "STATUS_CLOSED"', in testdata)
// says at which step P made Q owed, marks that step in the diagram, and
// goes there when the notice is clicked (issue #22, item 11).
func testLeadsTo(t *testing.T, tab tabFunc) {
	path := page(t, readITF(t, "testdata/leads-to.itf.json"))
	ctx, cancel := tab(t)
	defer cancel()
	var owed, opened, clicked, row3, row2 string
	err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible("#owed", chromedp.ByQuery),
		chromedp.Text("#owed", &owed, chromedp.ByQuery),
		chromedp.Text("#step-title", &opened, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#row-2 text").textContent`, &row3),
		chromedp.Evaluate(`document.querySelector("#row-1 text").textContent`, &row2),
		chromedp.Click("#owed", chromedp.ByQuery),
		chromedp.Text("#step-title", &clicked, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(owed, "Owed from step 3:") {
		t.Errorf("the owed notice says %q", owed)
	}
	if !strings.HasPrefix(opened, "Step 4 of 4") {
		t.Errorf("the page opens at %q, not at the last step", opened)
	}
	if row3 != "3\u25C6" || row2 != "2" {
		t.Errorf("row labels %q and %q; want step 3 marked alone", row2, row3)
	}
	if !strings.HasPrefix(clicked, "Step 3 of 4: ClientStartsRecovery") {
		t.Errorf("clicking the notice shows %q", clicked)
	}
}

// testOpensAtTop: a trace whose diagram is taller than the window
// (30 states) opens at the top of the page, the title, the parameters
// and the property in view, with its last step selected all the same;
// stepping with the keyboard then brings the selected row into view
// (issue 38, item 8).
func testOpensAtTop(t *testing.T, tab tabFunc) {
	path := page(t, readITF(t, "../../docs/traces/guarantees/e5-w3-a2-crash-nosync-1.itf.json"))
	ctx, cancel := tab(t)
	defer cancel()
	var scrollY, scrollYEnd float64
	var lastBelow, headerVisible, propertyVisible bool
	var opened string
	err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible("#step-title", chromedp.ByQuery),
		chromedp.Evaluate(`window.scrollY`, &scrollY),
		chromedp.Evaluate(`document.getElementById("row-29").getBoundingClientRect().bottom + window.scrollY > window.innerHeight`, &lastBelow),
		chromedp.Evaluate(`(() => { const r = document.querySelector("header h1").getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; })()`, &headerVisible),
		chromedp.Evaluate(`(() => { const r = document.getElementById("prop-name").getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; })()`, &propertyVisible),
		chromedp.Text("#step-title", &opened, chromedp.ByQuery),
		chromedp.KeyEvent(kb.Home),
		chromedp.KeyEvent(kb.End),
		chromedp.Evaluate(`window.scrollY`, &scrollYEnd),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !lastBelow {
		t.Fatal("the last step's row fits in the window at the top of the page: the test shows nothing")
	}
	if scrollY != 0 || !headerVisible || !propertyVisible {
		t.Errorf("the page opens scrolled to %v pixels (title visible %v, property visible %v); want the top", scrollY, headerVisible, propertyVisible)
	}
	if !strings.HasPrefix(opened, "Step 30 of 30") {
		t.Errorf("the page opens at %q, not at the last step", opened)
	}
	if scrollYEnd == 0 {
		t.Errorf("End does not bring the last step's row into view")
	}
}
