package traces

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// viewerTemplate is the self-contained HTML viewer: no network, no CDN; the
// sequence diagram is drawn as SVG by the page's own script from the trace
// data embedded in it.
//
// A trace file is data from anyone (attached to a bug report, shared in an
// issue), so every string that comes from it — property name, statement,
// expression, explanation, action labels — reaches the page either through
// html/template's contextual escaping (the header) or inside the JSON data
// block, which encoding/json writes with <, > and & escaped (so it cannot
// close its <script> element), and which the script only ever puts into
// the page as text (textContent, setAttribute on SVG attributes), never as
// markup. TestHTMLViewerExplained/inert (viewertest) checks it in a browser.
//
//go:embed viewer.html
var viewerTemplate string

var viewer = template.Must(template.New("viewer").Parse(viewerTemplate))

// scriptHash is the Content-Security-Policy source of the page's one
// script (the last <script> element, which holds no template action): the
// page runs it and nothing else, not even an inline event handler that
// some string might smuggle in. It is the hash of the script as the
// template writes it (html/template drops its comments).
var scriptHash = func() string {
	i := strings.LastIndex(viewerTemplate, "<script>")
	if i < 0 || strings.Contains(viewerTemplate[i:], "{{") {
		panic("traces: viewer.html: the last <script> must be static")
	}
	var b strings.Builder
	if err := viewer.Execute(&b, map[string]any{"Data": template.JS("{}")}); err != nil {
		panic(err)
	}
	page := b.String()
	script := page[strings.LastIndex(page, "<script>")+len("<script>") : strings.LastIndex(page, "</script>")]
	sum := sha256.Sum256([]byte(script))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}()

type htmlVar struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	Changed bool   `json:"changed"`
}

type htmlStep struct {
	Action string    `json:"action"`
	Events []Event   `json:"events"`
	Vars   []htmlVar `json:"vars"`
}

// htmlProperty is what the page says about the property.
type htmlProperty struct {
	Name       string   `json:"name"`
	Kind       string   `json:"kind"` // invariant, terminal, eventually, probe, deadlock
	Statement  string   `json:"statement"`
	Expression string   `json:"expression"` // a CEL property's, or a built-in's CEL form
	Equivalent bool     `json:"equivalent"` // Expression is a built-in's CEL form
	Why        []string `json:"why"`        // the explanation, line by line, the one that matters first (RenderHTML)
	// Disabled are a lasso's fairness constraints met vacuously: the
	// actions disabled in a state of its cycle, by state. The page lists
	// them collapsed.
	Disabled []htmlDisabled `json:"disabled"`
	Reads    []htmlVar      `json:"reads"`     // rows that decide it (highlighted at the last step)
	OwedFrom int            `json:"owed-from"` // a leads-to's step where the right side became owed (Explanation.OwedFrom), 0 if none
}

// htmlDisabled is the actions of --fair disabled in one state of a
// lasso's cycle.
type htmlDisabled struct {
	State   int      `json:"state"`
	Actions []string `json:"actions"`
}

// RenderHTML writes the trace as one self-contained HTML page: what the
// property states and why the last state breaks it (or, for a probe,
// satisfies it), the deciding line first and a lasso's vacuously fair
// actions collapsed, the sequence diagram (messages never delivered drawn as
// such), the state at each step with what changed highlighted and, at the
// last step, the values that decide the verdict; keyboard stepping
// (arrows, j/k, Home/End) and #step-N links.
func RenderHTML(w io.Writer, t *Trace) error {
	verdict := "the last state " + t.What()
	parts := t.Model.Participants(t.Steps[len(t.Steps)-1].State)
	var steps []htmlStep
	var prev []Var
	for i, st := range t.Steps {
		vars := t.Model.Rows(st.State)
		changed := map[string]bool{}
		if i > 0 {
			for _, v := range Diff(prev, vars) {
				changed[v.Name] = true
			}
		}
		hs := htmlStep{Action: "Init", Events: []Event{}}
		if !st.Initial {
			hs.Action = t.Model.ActionString(st.Action)
			if ev := stepEvents(t, i); ev != nil {
				hs.Events = ev
			}
		}
		for _, v := range vars {
			hs.Vars = append(hs.Vars, htmlVar{v.Name, v.Value, changed[v.Name]})
		}
		steps = append(steps, hs)
		prev = vars
	}
	prop := htmlProperty{Name: t.Invariant, Kind: t.Kind, Statement: t.Statement, Expression: t.Expression, Why: []string{}, Reads: []htmlVar{}, Disabled: []htmlDisabled{}}
	switch {
	case t.Error != "":
		prop.Kind, prop.Name, prop.Statement = "error", "the model failed", t.Error
	case t.Deadlock:
		prop.Kind = "deadlock"
	case prop.Kind == "" && t.Terminal:
		prop.Kind = "terminal"
	case prop.Kind == "":
		prop.Kind = "invariant"
	}
	// The why box opens with the one line that matters: the
	// explanation's first line, the part of the property that is false in
	// the last state with the values that make it so (a lasso's last
	// state is the one its cycle returns to: false there, false forever).
	// A lasso's cycle follows, with each action of --fair taken in it:
	// what the cycle keeps doing. An action disabled in a state of the
	// cycle meets its weak-fairness constraint without being taken, which
	// says nothing about why the property fails; --fair all makes dozens
	// of those lines, which buried the rest, so they go into Disabled,
	// which the page shows collapsed.
	if ex := t.Explanation; ex != nil {
		if ex.Equivalent {
			prop.Expression, prop.Equivalent = ex.Expression, true
		}
		prop.Why = append(prop.Why, ex.Lines...)
		prop.OwedFrom = ex.OwedFrom
		for _, r := range ex.Reads {
			prop.Reads = append(prop.Reads, htmlVar{Name: r.Name, Value: r.Value})
		}
	}
	if t.Loop > 0 {
		prop.Why = append(prop.Why, fmt.Sprintf("the behaviour returns to state %d and repeats the cycle forever", t.Loop))
		for _, f := range t.Fairness {
			if f.Taken {
				prop.Why = append(prop.Why, "the cycle is fair: "+f.String())
			}
		}
		states, names := disabledByState(t.Fairness)
		for _, st := range states {
			prop.Disabled = append(prop.Disabled, htmlDisabled{State: st, Actions: names[st]})
		}
	}
	data, err := json.Marshal(map[string]any{"participants": parts, "steps": steps, "verdict": verdict, "property": prop})
	if err != nil {
		return err
	}
	title := t.Invariant
	switch {
	case t.Error != "":
		title = "model failure"
	case t.Deadlock:
		title = "deadlock"
	}
	what := "counterexample"
	if t.Kind == "probe" {
		what = "witness"
	}
	return viewer.Execute(w, map[string]any{
		"What":    what,
		"Title":   fmt.Sprintf("%s, %d states", title, len(t.Steps)),
		"Params":  t.Model.Params(),
		"Verdict": verdict,
		// The JSON sits in a <script type="application/json"> element.
		// encoding/json escapes <, > and & (and U+2028/9), so no string
		// in it can end the element; template.JS keeps html/template
		// from quoting it a second time.
		"Data":       template.JS(data),
		"ScriptHash": scriptHash,
	})
}
