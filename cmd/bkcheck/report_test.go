package main

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 38: under --symmetry the summary counts orbits, as --max-states
// and the rest of the tool say, and names them so; without it, the line
// keeps TLC's words ("distinct states").
func TestSummaryNamesOrbits(t *testing.T) {
	base := []string{"check", "--bookies", "3", "--clients", "1", "-w", "2", "-a", "2", "--entries", "1"}
	for _, c := range []struct {
		extra      []string
		noun, rate string
		not        string
	}{
		{nil, "distinct states, ", "distinct states/s", "orbits"},
		{[]string{"--symmetry", "bookies"}, "orbits (distinct states up to symmetry), ", "orbits/s", "distinct states,"},
	} {
		args := append(append([]string{}, base...), c.extra...)
		code, out, errOut := runArgs(t, append(args, "--json")...)
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", c.extra, code, errOut)
		}
		n := lastJSON(t, out)["distinct"].(float64)
		_, out, _ = runArgs(t, args...)
		if want := fmt.Sprintf("\n%.0f %s", n, c.noun); !strings.Contains(out, want) || !strings.Contains(out, c.rate) || strings.Contains(out, c.not) {
			t.Errorf("%v: want %q and %q, not %q:\n%s", c.extra, want, c.rate, c.not, out)
		}
	}
}

// TestProgressNamesOrbits: the progress lines name what they count as the
// summary does: orbits under --symmetry, distinct states without.
func TestProgressNamesOrbits(t *testing.T) {
	base := []string{"check", "--bookies", "3", "--clients", "1", "-w", "2", "-a", "2", "--entries", "1", "--progress", "1ns"}
	for _, c := range []struct {
		extra     []string
		says, not string
	}{
		{nil, " distinct, ", "orbits"},
		{[]string{"--symmetry", "bookies"}, " orbits, ", " distinct, "},
	} {
		code, _, errOut := runArgs(t, append(append([]string{}, base...), c.extra...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", c.extra, code, errOut)
		}
		var lines []string
		for _, l := range strings.Split(errOut, "\n") {
			if strings.HasPrefix(l, "progress: ") {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			t.Fatalf("%v: no progress line:\n%s", c.extra, errOut)
		}
		for _, l := range lines {
			if !strings.Contains(l, c.says) || strings.Contains(l, c.not) {
				t.Errorf("%v: %q: want %q, not %q", c.extra, l, c.says, c.not)
			}
		}
	}
}
