package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bkcheck/bkcheck/internal/docblock"
	"github.com/bkcheck/bkcheck/schema"
	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
)

// settingsTable renders the settings of targets as a Markdown table.
func settingsTable(targets ...schema.Target) string {
	var b strings.Builder
	b.WriteString("| flag | meaning | default |\n|---|---|---|\n")
	for _, t := range targets {
		for _, f := range t.S.Fields() {
			name := "`--" + f.Name
			if f.Unit != "" && !f.IsBool() {
				name += " " + f.Unit
			}
			name += "`"
			if f.Short != "" {
				name = "`-" + f.Short + "`, " + name
			}
			def := ""
			if !t.S.IsZero(t.V, f.Name) {
				def = t.S.Get(t.V, f.Name)
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", name, strings.ReplaceAll(f.Help, "|", "\\|"), def)
		}
	}
	return b.String()
}

// TestReadmeSettings keeps the README's table of the settings of bkcheck
// check equal to their declarations.
func TestReadmeSettings(t *testing.T) {
	var targets []schema.Target
	for _, s := range lookupCommand("check").sections() {
		targets = append(targets, s.Target)
	}
	readmeBlock(t, "settings:check", settingsTable(targets...), "TestReadmeSettings")
}

// TestReadmeCommands keeps the README's list of commands equal to the
// command table.
func TestReadmeCommands(t *testing.T) {
	readmeBlock(t, "commands", commandsTable(), "TestReadmeCommands")
}

// readmeBlock checks that the README's <!-- marker --> ... <!-- end -->
// block holds text, and rewrites it with -update-docs.
func readmeBlock(t *testing.T, marker, text, test string) {
	t.Helper()
	if err := docblock.Check(filepath.Join("..", "..", "README.md"), marker, text, *updateDocs,
		"go test ./cmd/bkcheck -run "+test+" -update-docs"); err != nil {
		t.Error(err)
	}
}

// mdAnchors are the anchors of a Markdown page as GitHub makes them: each
// heading's slug (lower case, punctuation dropped, spaces as hyphens, a
// repeated one numbered), and every id or name attribute.
func mdAnchors(t *testing.T, path string) map[string]bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(string(b), "")
	out, seen := map[string]bool{}, map[string]int{}
	drop := regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	for _, m := range regexp.MustCompile(`(?m)^#{1,6} (.*)$`).FindAllStringSubmatch(text, -1) {
		s := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), ""), " ", "-")
		if n, ok := seen[s]; ok {
			seen[s] = n + 1
			s = fmt.Sprintf("%s-%d", s, n+1)
		} else {
			seen[s] = 0
		}
		out[s] = true
	}
	for _, m := range regexp.MustCompile(`(?:id|name)="([^"]+)"`).FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// TestDocsStandAlone: the repository's docs are for its users; every
// reference resolves inside the repository, every property and action is
// documented, and the README's examples use the built binary (go run hides
// exit codes).
func TestDocsStandAlone(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	records, _ := filepath.Glob(filepath.Join("..", "..", "docs", "record", "*.md"))
	files = append(append(files, records...), filepath.Join("..", "..", "README.md"), filepath.Join("..", "..", "docs", "traces", "README.md"))
	outside := regexp.MustCompile(`\.\./shared|the digest|tlc-counts\.md|closing note of issue|issue #?\d+ of bkcheck|design\.md`)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if loc := outside.FindIndex(b); loc != nil {
			t.Errorf("%s refers outside the repository: %q", f, b[loc[0]:loc[1]])
		}
		for _, m := range link.FindAllSubmatch(b, -1) {
			target := string(m[1])
			if strings.Contains(target, "://") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			full := f
			if path != "" {
				full = filepath.Join(filepath.Dir(f), path)
			}
			if _, err := os.Stat(full); err != nil {
				t.Errorf("%s links %s, which does not exist", f, target)
				continue
			}
			if anchor != "" && strings.HasSuffix(full, ".md") && !mdAnchors(t, full)[anchor] {
				t.Errorf("%s links %s: %s has no heading or id %q", f, target, full, anchor)
			}
		}
	}
	model, err := os.ReadFile(filepath.Join("..", "..", "docs", "model.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range invariants.All {
		if !strings.Contains(string(model), "`"+inv.Name+"`") {
			t.Errorf("docs/model.md does not describe the property %s", inv.Name)
		}
	}
	for k := spec.ActionKind(1); k < spec.NumActionKinds; k++ {
		if !strings.Contains(string(model), k.String()) {
			t.Errorf("docs/model.md does not describe the action %s", k)
		}
	}
	for _, f := range spec.ParamsSchema.Fields() {
		if !strings.Contains(string(model), "--"+f.Name) {
			t.Errorf("docs/model.md does not describe --%s", f.Name)
		}
	}
	readme, _ := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if !strings.Contains(string(readme), "go build -o bkcheck ./cmd/bkcheck") {
		t.Error("the README does not show how to build the binary")
	}
	if n := strings.Count(string(readme), "go run ./cmd/bkcheck"); n != 1 {
		t.Errorf("the README uses go run %d times; only the first command should (go run hides exit codes)", n)
	}
}

// TestReadmeSimulateFigure: the README's figures for its simulate example
// (the walk that first fails and its trace's length) are what that
// command gives (issue #22, item 9: a figure a page quotes comes from the
// run, or a test pins it).
func TestReadmeSimulateFigure(t *testing.T) {
	code, out, errOut := runArgs(t, "simulate", "--bookies", "5", "-w", "5", "-a", "2", "--reformat", "1",
		"--traces", "100000", "--depth", "60", "--loss-rate", "0.05", "--trace-out", filepath.Join(t.TempDir(), "walk.itf.json"))
	seed := regexp.MustCompile(`Walk seed (\d+) fails`).FindStringSubmatch(out)
	length := regexp.MustCompile(`Counterexample: (\d+) states`).FindStringSubmatch(out)
	if code != exitViolation || seed == nil || length == nil {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	n, _ := strconv.ParseInt(seed[1], 10, 64)
	want := fmt.Sprintf("the first truncation comes at walk seed %s,\na %s-state trace", group(n), length[1])
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not say %q", want)
	}
}
