package viewertest

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// layout900 measures, in a page 900 pixels wide, what a narrow window
// used to break: the participant names (the diagram's own text elements;
// its rows are groups), the lifelines (its own lines) and the notes (a
// row's text that starts with ▸, measured with its frame when it has one).
// A note's lane is the lifeline nearest its middle; it lies in that
// lane's column (between the midpoints to the neighbouring lifelines), and
// that lane is the one it names (data-lane).
const layout900 = `(() => {
  const svg = document.getElementById("svg");
  const labels = [...svg.querySelectorAll(":scope > text")].map(t => ({name: t.textContent, r: t.getBoundingClientRect()}));
  const lanes = [...svg.querySelectorAll(":scope > line")].map(l => ({id: l.dataset.lane || "", x: l.getBoundingClientRect().left}));
  const overlaps = [];
  labels.forEach((a, i) => labels.slice(i + 1).forEach(b => {
    if (a.r.left < b.r.right - 0.5 && b.r.left < a.r.right - 0.5 && a.r.top < b.r.bottom - 0.5 && b.r.top < a.r.bottom - 0.5) overlaps.push(a.name + " / " + b.name);
  }));
  const strays = [];
  let notes = 0;
  svg.querySelectorAll("g.row text").forEach(t => {
    if (!t.textContent.startsWith("\u25B8")) return;
    notes++;
    const box = t.closest("g.note") || t;
    const r = box.getBoundingClientRect();
    const mid = (r.left + r.right) / 2;
    let k = 0;
    lanes.forEach((l, i) => { if (Math.abs(l.x - mid) < Math.abs(lanes[k].x - mid)) k = i; });
    const lo = k > 0 ? (lanes[k - 1].x + lanes[k].x) / 2 : -Infinity;
    const hi = k < lanes.length - 1 ? (lanes[k].x + lanes[k + 1].x) / 2 : Infinity;
    const lane = lanes[k].id || "lifeline " + (k + 1);
    if (r.left < lo - 0.5 || r.right > hi + 0.5) strays.push(t.textContent + ": runs out of the column of " + lane);
    else if (box.dataset.lane !== lanes[k].id) strays.push(t.textContent + ": in the column of " + lane + ", not its own (" + (box.dataset.lane || "none") + ")");
  });
  return {width: window.innerWidth, labels: labels.length, lanes: lanes.length, overlaps: overlaps, notes: notes, strays: strays,
    pageOverflow: document.documentElement.scrollWidth > document.documentElement.clientWidth};
})()`

// testFits900: in a window 900 pixels wide, the diagram of a trace with
// six participants (two clients, one of them "c2 (recovery client)", the
// metadata store and three bookies) prints no participant name over
// another, and each note stays in its own lane's column: the metadata
// store's notes (a fragment list) do not run over the bookies' lanes
// (issue 47, part 4, item 13). The page itself does not scroll sideways.
func testFits900(t *testing.T, tab tabFunc) {
	tr := readITF(t, "../../docs/traces/findings/f-4812.itf.json")
	parts := tr.Model.Participants(tr.Steps[len(tr.Steps)-1].State)
	path := page(t, tr)
	ctx, cancel := tab(t)
	defer cancel()
	var got struct {
		Width        int
		Labels       int
		Lanes        int
		Overlaps     []string
		Notes        int
		Strays       []string
		PageOverflow bool
	}
	err := chromedp.Run(ctx,
		chromedp.EmulateViewport(900, 900),
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible("#svg", chromedp.ByQuery),
		chromedp.Evaluate(layout900, &got),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got.Width != 900 {
		t.Fatalf("the window is %d pixels wide", got.Width)
	}
	if got.Labels != len(parts) || got.Lanes != len(parts) || got.Notes == 0 {
		t.Fatalf("found %d names, %d lifelines and %d notes; the trace has %d participants and notes", got.Labels, got.Lanes, got.Notes, len(parts))
	}
	if len(got.Overlaps) > 0 {
		t.Errorf("participant names print over one another: %q", got.Overlaps)
	}
	if len(got.Strays) > 0 {
		t.Errorf("%d of %d notes leave their lane's column: %q", len(got.Strays), got.Notes, got.Strays)
	}
	if got.PageOverflow {
		t.Errorf("the page scrolls sideways")
	}
}
