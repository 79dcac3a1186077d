package schema

import (
	"errors"
	"fmt"
	"strings"
)

// Problem is one thing wrong with a configuration: the setting it concerns
// and what is wrong with it, worded to follow the setting's name
// ("write-quorum: must be at least 1 (got 0)"). Validation names settings,
// never flags: the command line renders a name as the flag the user typed.
type Problem struct {
	Field string // setting name; "" when the problem concerns no one setting
	Msg   string
}

func (p Problem) String() string {
	if p.Field == "" {
		return p.Msg
	}
	return p.Field + ": " + p.Msg
}

// Problems lists every problem of a configuration, so that a user fixes
// them all in one go instead of one per run. A non-empty Problems is an
// error; Err turns an empty one into nil.
type Problems []Problem

// Add records a problem of field.
func (ps *Problems) Add(field, format string, args ...any) {
	*ps = append(*ps, Problem{Field: field, Msg: fmt.Sprintf(format, args...)})
}

// Merge appends the problems of err: its Problems if it is one, else err
// as a problem of no particular setting.
func (ps *Problems) Merge(err error) {
	if err == nil {
		return
	}
	var other Problems
	if errors.As(err, &other) {
		*ps = append(*ps, other...)
		return
	}
	*ps = append(*ps, Problem{Msg: err.Error()})
}

// Err returns ps as an error, or nil when there is no problem.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

func (ps Problems) Error() string {
	return ps.Render(func(field string) string { return field })
}

// Render lists the problems, naming each setting as name(field) renders it.
func (ps Problems) Render(name func(field string) string) string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		if p.Field == "" {
			lines[i] = p.Msg
		} else {
			lines[i] = name(p.Field) + ": " + p.Msg
		}
	}
	if len(lines) == 1 {
		return "invalid settings: " + lines[0]
	}
	return "invalid settings:\n  - " + strings.Join(lines, "\n  - ")
}

// AsProblems returns the problems err carries, if it is (or wraps) Problems.
func AsProblems(err error) (Problems, bool) {
	var ps Problems
	ok := errors.As(err, &ps)
	return ps, ok
}
