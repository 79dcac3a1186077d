package guarantees

import (
	"strings"
	"testing"
)

func TestParseSetting(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [3]int
		err  string
	}{
		{"5/3/2", [3]int{5, 3, 2}, ""},
		{"2/2/2", [3]int{2, 2, 2}, ""},
		{"9/9/9", [3]int{}, "not one of the page's (2/2/2, 3/3/2, 3/3/3, 5/3/2, 5/5/2)"},
		{"5/3", [3]int{}, "want E/Qw/Qa"},
		{"5/x/2", [3]int{}, `"x" is not a number`},
	} {
		got, err := ParseSetting(c.in)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("ParseSetting(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
		} else if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("ParseSetting(%q) error = %v; want one containing %q", c.in, err, c.err)
		}
	}
}

// page builds a page with the given header, one section per setting
// (its text tagged with tag) and a footer.
func page(header, tag, footer string, settings ...[3]int) string {
	var b strings.Builder
	b.WriteString(header)
	for _, st := range settings {
		b.WriteString(heading(st) + "\n| q | " + tag + " |\n\n")
	}
	return b.String() + "## Not covered\n\n- " + footer + "\n"
}

func TestSplice(t *testing.T) {
	whole := page("# Page\n\nold header\n\n", "old", "old footer", Settings...)
	partial := page("# Page\n\nnew header\n\n", "new", "new footer", Settings[1], Settings[3])
	got, err := Splice([]byte(whole), []byte(partial))
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString("# Page\n\nnew header\n\n")
	for i, st := range Settings {
		tag := "old"
		if i == 1 || i == 3 {
			tag = "new"
		}
		want.WriteString(heading(st) + "\n| q | " + tag + " |\n\n")
	}
	want.WriteString("## Not covered\n\n- new footer\n")
	if string(got) != want.String() {
		t.Errorf("Splice:\n%s\nwant:\n%s", got, want.String())
	}
	// The AutoRecovery section, the page's last, is kept unless the
	// partial page brings one.
	arOld, arNew := "\n"+arHeading+"\n\n| ar | old |\n", "\n"+arHeading+"\n\n| ar | new |\n"
	for _, c := range []struct{ partial, want string }{
		{partial, want.String() + arOld},
		{partial + arNew, want.String() + arNew},
	} {
		got, err := Splice([]byte(whole+arOld), []byte(c.partial))
		if err != nil || string(got) != c.want {
			t.Errorf("Splice with an AutoRecovery section: %v\n%s\nwant:\n%s", err, got, c.want)
		}
	}
	// A page missing a section the partial one does not bring is refused.
	short := page("# Page\n\n", "old", "f", Settings[0], Settings[1])
	if _, err := Splice([]byte(short), []byte(partial)); err == nil || !strings.Contains(err.Error(), "E = 3, Qw = 3, Qa = 3") {
		t.Errorf("Splice of a page without the 3/3/3 section: err = %v", err)
	}
}

// TestLadderScope: what an open answer's scope says of the loss ladder.
func TestLadderScope(t *testing.T) {
	open := answer{status: "unknown", distinct: 15_000_000, depth: 16, symmetric: true, walks: Walks}
	base := "no counterexample within 15,000,000 orbits (symmetry over bookies and clients), the search reaching depth 16, nor in 200,000 random walks"
	for _, c := range []struct {
		name   string
		losses []restrictedSearch
		noLoss restrictedSearch
		want   string
	}{
		{"one rung proved, the next at its bound",
			[]restrictedSearch{{k: 1, status: "ok", distinct: 615_811}, {k: 2, status: "unknown", distinct: 75_000_000, depth: 30}}, restrictedSearch{},
			"; **proved for every behaviour that loses at most one message** (exhaustive, 615,811 orbits), nor within 75,000,000 orbits losing at most 2 messages (depth 30)"},
		{"three rungs proved",
			[]restrictedSearch{{k: 1, status: "ok", distinct: 10}, {k: 2, status: "ok", distinct: 20}, {k: 3, status: "ok", distinct: 30}, {k: 4, status: "unknown", distinct: 40, depth: 9}}, restrictedSearch{},
			"; **proved for every behaviour that loses at most 3 messages** (exhaustive, 10, 20 and 30 orbits losing at most 1, 2 and 3 messages), nor within 40 orbits losing at most 4 messages (depth 9)"},
		{"the first rung at its bound, no loss proved",
			[]restrictedSearch{{k: 1, status: "unknown", distinct: 75_000_000, depth: 20}}, restrictedSearch{k: 0, status: "ok", distinct: 11_567_669},
			", nor within 75,000,000 orbits losing at most one message (depth 20); **proved for every behaviour that loses no message** other than those sent to a crashed bookie (exhaustive, 11,567,669 orbits)"},
		{"nothing restricted", nil, restrictedSearch{}, ""},
	} {
		a := open
		a.losses, a.noLoss = c.losses, c.noLoss
		if got := a.scope(); got != base+c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, base+c.want)
		}
	}
	found := answer{status: "violation", length: 24, losses: []restrictedSearch{{k: 1, status: "violation", found: true}}}
	if got, want := found.traceNote(), "24-state trace, the shortest that loses at most one message"; got != want {
		t.Errorf("traceNote = %q, want %q", got, want)
	}
}
