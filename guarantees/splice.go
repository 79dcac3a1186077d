package guarantees

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseSetting reads a setting written E/Qw/Qa ("5/3/2"); it must be one
// of Settings.
func ParseSetting(s string) ([3]int, error) {
	var st [3]int
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return st, fmt.Errorf("setting %q: want E/Qw/Qa, such as 5/3/2", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return st, fmt.Errorf("setting %q: %q is not a number", s, p)
		}
		st[i] = n
	}
	for _, known := range Settings {
		if known == st {
			return st, nil
		}
	}
	return st, fmt.Errorf("setting %q is not one of the page's (%s)", s, settingList())
}

func settingList() string {
	l := make([]string, len(Settings))
	for i, st := range Settings {
		l[i] = fmt.Sprintf("%d/%d/%d", st[0], st[1], st[2])
	}
	return strings.Join(l, ", ")
}

// footerHeading opens the page's footer, after the settings' sections.
const footerHeading = "## Not covered"

// arHeading starts the AutoRecovery section, the page's last.
const arHeading = "## With AutoRecovery"

// heading is the first line of a setting's section.
func heading(st [3]int) string {
	return fmt.Sprintf("## E = %d, Qw = %d, Qa = %d\n", st[0], st[1], st[2])
}

// Splice puts a page generated for some of the settings (Options.Settings)
// into the whole page generated earlier: the header, the footer and those
// settings' sections come from partial, every other section from whole,
// each in its place. It fails if whole lacks a section partial does not
// bring, so a page is never left with a setting missing.
func Splice(whole, partial []byte) ([]byte, error) {
	w, p := split(string(whole)), split(string(partial))
	var b strings.Builder
	b.WriteString(p.header)
	for _, st := range Settings {
		sec, ok := p.sections[st]
		if !ok {
			if sec, ok = w.sections[st]; !ok {
				return nil, fmt.Errorf("the page has no section %q to keep", strings.TrimSpace(heading(st)))
			}
		}
		b.WriteString(sec)
	}
	b.WriteString(p.footer)
	if !strings.Contains(p.footer, "\n"+arHeading+"\n") {
		// The subset left the AutoRecovery section out: keep the page's.
		if i := strings.Index(string(whole), "\n"+arHeading+"\n"); i >= 0 {
			b.WriteString(string(whole)[i:])
		}
	}
	return []byte(b.String()), nil
}

type pageParts struct {
	header, footer string
	sections       map[[3]int]string
}

// split cuts a page at its settings' headings: the header before the
// first, each section up to the next heading, the footer from the first
// "## " heading that is not a setting's.
func split(page string) pageParts {
	pp := pageParts{sections: map[[3]int]string{}}
	starts := map[int][3]int{}
	var cuts []int
	for _, st := range Settings {
		if i := strings.Index(page, "\n"+heading(st)); i >= 0 {
			starts[i+1] = st
			cuts = append(cuts, i+1)
		}
	}
	footer := len(page)
	if i := strings.Index(page, "\n"+footerHeading+"\n"); i >= 0 {
		footer = i + 1
	}
	cuts = append(cuts, footer)
	slices.Sort(cuts)
	pp.header = page[:cuts[0]]
	for i := 0; i+1 < len(cuts); i++ {
		if st, ok := starts[cuts[i]]; ok {
			pp.sections[st] = page[cuts[i]:cuts[i+1]]
		}
	}
	pp.footer = page[footer:]
	return pp
}
