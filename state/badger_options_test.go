package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBadgerOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opt      BadgerOptions
		problems []string // one substring per problem, in order
	}{
		{"defaults", BadgerOptions{Dir: "d"}, nil},
		{"minimum", BadgerOptions{Dir: "d", MemoryBudget: MinBadgerMemoryBudget}, nil},
		{"default budget", BadgerOptions{Dir: "d", MemoryBudget: DefaultBadgerMemoryBudget}, nil},
		{"no dir", BadgerOptions{MemoryBudget: 64 << 20}, []string{"BadgerOptions.Dir is empty"}},
		{"negative", BadgerOptions{Dir: "d", MemoryBudget: -1}, []string{"BadgerOptions.MemoryBudget is -1, negative"}},
		{"tiny", BadgerOptions{Dir: "d", MemoryBudget: 1}, []string{"BadgerOptions.MemoryBudget is 1 bytes, below the minimum of 33554432 (32 MiB)"}},
		{"just below", BadgerOptions{Dir: "d", MemoryBudget: MinBadgerMemoryBudget - 1}, []string{"BadgerOptions.MemoryBudget is 33554431 bytes, below the minimum"}},
		{"no dir, negative", BadgerOptions{MemoryBudget: -5}, []string{"BadgerOptions.Dir", "BadgerOptions.MemoryBudget is -5"}},
		{"no dir, tiny", BadgerOptions{MemoryBudget: 1 << 20}, []string{"BadgerOptions.Dir", "BadgerOptions.MemoryBudget is 1048576 bytes, below"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opt.Validate()
			if len(tc.problems) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tc.problems)
			}
			var got []string
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range j.Unwrap() {
					got = append(got, e.Error())
				}
			} else {
				got = []string{err.Error()}
			}
			if len(got) != len(tc.problems) {
				t.Fatalf("Validate() lists %d problems %q, want %d", len(got), got, len(tc.problems))
			}
			for i, want := range tc.problems {
				if !strings.Contains(got[i], want) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], want)
				}
				if !strings.Contains(err.Error(), got[i]) {
					t.Errorf("Error() %q leaves out %q", err, got[i])
				}
			}
		})
	}
}

func TestBadgerOptionsEnsureDefaults(t *testing.T) {
	for _, tc := range []struct{ budget, want int64 }{
		{0, DefaultBadgerMemoryBudget},
		{64 << 20, 64 << 20},
		{-1, -1}, // left for Validate to report
	} {
		o := BadgerOptions{Dir: "d", MemoryBudget: tc.budget}
		if got := o.EnsureDefaults(); got != &o || o.MemoryBudget != tc.want || o.Dir != "d" {
			t.Errorf("EnsureDefaults on budget %d: %+v (same pointer %v), want budget %d", tc.budget, o, got == &o, tc.want)
		}
	}
	var nilOpt *BadgerOptions
	if o := nilOpt.EnsureDefaults(); o == nil || o.MemoryBudget != DefaultBadgerMemoryBudget {
		t.Errorf("EnsureDefaults on nil = %+v", o)
	}
	if DefaultBadgerMemoryBudget < MinBadgerMemoryBudget {
		t.Error("the default budget is below the minimum")
	}
	// The minimum leaves the fingerprint cache something.
	if _, fp := badgerOptions("d", MinBadgerMemoryBudget); fp <= 0 {
		t.Errorf("the minimum budget leaves the fingerprint cache %d bytes", fp)
	}
}

// TestOpenBadgerOptions: OpenBadgerVisited applies the default and refuses
// invalid options, every problem listed, before it creates anything.
func TestOpenBadgerOptions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "visited")
	_, err := OpenBadgerVisited(BadgerOptions{Dir: dir, MemoryBudget: 1})
	if err == nil || !strings.Contains(err.Error(), "MemoryBudget") {
		t.Fatalf("budget 1: err = %v", err)
	}
	if _, serr := os.Stat(dir); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("invalid options created %s (%v)", dir, serr)
	}
	_, err = OpenBadgerVisited(BadgerOptions{MemoryBudget: -1})
	if err == nil || !strings.Contains(err.Error(), "Dir") || !strings.Contains(err.Error(), "MemoryBudget") {
		t.Fatalf("no dir, budget -1: err = %v", err)
	}
	v, err := OpenBadgerVisited(BadgerOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, want := badgerOptions(dir, DefaultBadgerMemoryBudget); v.fpBudget != want {
		t.Errorf("budget 0: fingerprint budget %d, want the default's %d", v.fpBudget, want)
	}
}
