package explorer

import (
	"bytes"
	"fmt"
	"slices"
)

// replay rebuilds a counterexample from its parent links: path lists, from
// the last state back to the first, the index of each state among the
// successors its parent emitted (for the initial state, among the initial
// states). Replaying the indices forwards through the model recovers the
// actions and encodings exactly: the search stores no state bytes and no
// fingerprints for this. A model that panics here, though it did not
// along the same path during the search, is not deterministic: that is an
// error, not a verdict.
func replay(m Model, path []uint32) (steps []Step, err error) {
	defer func() {
		if r := recover(); r != nil {
			steps, err = nil, fmt.Errorf("explorer: replaying trace: %w (model not deterministic?)", modelError("replay", r))
		}
	}()
	path = slices.Clone(path)
	slices.Reverse(path)
	if len(path) == 0 {
		return nil, fmt.Errorf("explorer: replaying an empty trace")
	}
	steps = make([]Step, 0, len(path))
	var i uint32
	m.Init(func(enc, _ []byte) {
		if i == path[0] {
			steps = append(steps, Step{Initial: true, State: bytes.Clone(enc)})
		}
		i++
	})
	if len(steps) == 0 {
		return nil, fmt.Errorf("explorer: replaying trace: no initial state %d (model not deterministic?)", path[0])
	}
	exp := m.NewExpander()
	for k := 1; k < len(path); k++ {
		if err := exp.Load(steps[k-1].State); err != nil {
			return nil, fmt.Errorf("explorer: replaying trace step %d: %w", k, err)
		}
		i = 0
		exp.Successors(func(a Action, enc, _ []byte) {
			if i == path[k] {
				steps = append(steps, Step{Action: a, State: bytes.Clone(enc)})
			}
			i++
		})
		if len(steps) != k+1 {
			return nil, fmt.Errorf("explorer: replaying trace step %d: no successor %d (model not deterministic?)", k, path[k])
		}
	}
	return steps, nil
}
