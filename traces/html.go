package traces

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
)

// viewerTemplate is the self-contained HTML viewer: no network, no CDN; the
// sequence diagram is drawn as SVG by the page's own script from the trace
// data embedded in it.
//
//go:embed viewer.html
var viewerTemplate string

var viewer = template.Must(template.New("viewer").Parse(viewerTemplate))

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

type htmlParticipant struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// RenderHTML writes the trace as one self-contained HTML page: the
// sequence diagram, the state at each step with what changed highlighted,
// keyboard stepping (arrows, j/k, Home/End) and #step-N links.
func RenderHTML(w io.Writer, t *Trace) error {
	p := t.Params
	verdict := "the last state violates " + t.Invariant
	if t.Deadlock {
		verdict = "the last state has no successor (deadlock)"
	} else if t.Terminal {
		verdict = "the last state has no successor and violates " + t.Invariant
	}
	var parts []htmlParticipant
	last := &t.Steps[len(t.Steps)-1].State
	for c := 0; c < p.Clients; c++ {
		parts = append(parts, htmlParticipant{fmt.Sprintf("c%d", c+1), fmt.Sprintf("c%d (%s)", c+1, clientRole(&last.Clients[c]))})
	}
	parts = append(parts, htmlParticipant{"meta", "metadata"})
	for b := 0; b < p.Bookies; b++ {
		parts = append(parts, htmlParticipant{fmt.Sprintf("b%d", b+1), fmt.Sprintf("b%d", b+1)})
	}
	var steps []htmlStep
	var prev []Var
	for i, st := range t.Steps {
		vars := Vars(p, &st.State)
		changed := map[string]bool{}
		if i > 0 {
			for _, v := range Diff(prev, vars) {
				changed[v.Name] = true
			}
		}
		hs := htmlStep{Action: "Init", Events: []Event{}}
		if !st.Initial {
			hs.Action = st.Action.String()
			if ev := StepEvents(p, st.Action, &t.Steps[i-1].State, &st.State); ev != nil {
				hs.Events = ev
			}
		}
		for _, v := range vars {
			hs.Vars = append(hs.Vars, htmlVar{v.Name, v.Value, changed[v.Name]})
		}
		steps = append(steps, hs)
		prev = vars
	}
	data, err := json.Marshal(map[string]any{"participants": parts, "steps": steps, "verdict": verdict})
	if err != nil {
		return err
	}
	title := t.Invariant
	if t.Deadlock {
		title = "deadlock"
	}
	return viewer.Execute(w, map[string]any{
		"Title":   fmt.Sprintf("%s, %d states", title, len(t.Steps)),
		"Params":  p.String(),
		"Verdict": verdict,
		// The JSON sits in a <script type="application/json"> element;
		// html/template escapes it for that context.
		"Data": template.JS(data),
	})
}
