package viewertest

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/bkcheck/bkcheck/check"
)

// lassos are the gallery's lasso counterexamples, run with --fair all:
// one action taken in the cycle, 54 disabled in a state of it.
var lassos = []string{"../../docs/traces/findings/f-4872.itf.json", "../../docs/traces/findings/f-3887.itf.json"}

// pageData is the part of a page's embedded data the why box shows.
type pageData struct {
	Property struct {
		Why      []string
		Disabled []struct {
			State   int
			Actions []string
		}
	}
}

var dataBlock = regexp.MustCompile(`(?s)<script id="trace-data" type="application/json">(.*?)</script>`)

// TestWhyBoxLasso: a lasso's why box (no browser: the page's data and
// markup) opens with the explanation's first line, what decides the
// property; it names each action taken in the cycle, and none of the
// actions disabled in a state of it, which are listed, each once at its
// state, apart, under a <details> element that is closed (issue 47, part
// 4, item 13).
func TestWhyBoxLasso(t *testing.T) {
	for _, file := range lassos {
		t.Run(file[strings.LastIndex(file, "/")+1:], func(t *testing.T) {
			tr := readITF(t, file)
			ex, err := check.Explain(tr)
			if err != nil || ex == nil || len(ex.Lines) == 0 {
				t.Fatalf("no explanation (%v)", err)
			}
			html, err := os.ReadFile(page(t, tr))
			if err != nil {
				t.Fatal(err)
			}
			m := dataBlock.FindSubmatch(html)
			if m == nil {
				t.Fatal("no trace data in the page")
			}
			var d pageData
			if err := json.Unmarshal(m[1], &d); err != nil {
				t.Fatal(err)
			}
			why := d.Property.Why
			if len(why) == 0 || why[0] != ex.Lines[0] {
				t.Errorf("the why box opens with %q, not with what decides the property, %q", why, ex.Lines[0])
			}
			var wantDisabled, gotDisabled []string
			for _, f := range tr.Fairness {
				if f.Taken {
					if !slices.ContainsFunc(why, func(l string) bool { return strings.Contains(l, f.String()) }) {
						t.Errorf("the why box does not say %q", f.String())
					}
					continue
				}
				wantDisabled = append(wantDisabled, fmt.Sprint(f.Step, f.Constraint))
			}
			if len(wantDisabled) == 0 {
				t.Fatal("no action disabled in the cycle: the test shows nothing")
			}
			for _, l := range why {
				if strings.Contains(l, "disabled") {
					t.Errorf("the why box shows a disabled action: %q", l)
				}
			}
			for _, g := range d.Property.Disabled {
				for _, a := range g.Actions {
					gotDisabled = append(gotDisabled, fmt.Sprint(g.State, a))
				}
			}
			slices.Sort(wantDisabled)
			slices.Sort(gotDisabled)
			if !slices.Equal(gotDisabled, wantDisabled) {
				t.Errorf("the collapsed list has %d actions by state, the trace %d", len(gotDisabled), len(wantDisabled))
			}
			if !strings.Contains(string(html), `<details id="why-fair">`) {
				t.Errorf("the page has no closed <details> for the disabled actions")
			}
		})
	}
}

// testWhyCollapsed: in the browser, the lasso's why box shows its lines
// and the summary of the disabled actions, and not their list until the
// summary is clicked.
func testWhyCollapsed(t *testing.T, tab tabFunc) {
	path := page(t, readITF(t, lassos[0]))
	ctx, cancel := tab(t)
	defer cancel()
	var whyShown, summaryShown, listShown, listShownAfter bool
	shown := func(id string, v *bool) chromedp.Action {
		return chromedp.Evaluate(`document.getElementById("`+id+`").checkVisibility()`, v)
	}
	err := chromedp.Run(ctx,
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible("#step-title", chromedp.ByQuery),
		shown("why-lines", &whyShown),
		shown("why-fair-summary", &summaryShown),
		shown("why-fair-lines", &listShown),
		chromedp.Click("#why-fair-summary", chromedp.ByQuery),
		shown("why-fair-lines", &listShownAfter),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !whyShown || !summaryShown || listShown || !listShownAfter {
		t.Errorf("why lines shown %v, summary of the disabled actions %v, their list %v (after a click %v); want shown, shown, hidden, shown",
			whyShown, summaryShown, listShown, listShownAfter)
	}
}
