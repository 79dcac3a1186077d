package check

import (
	"github.com/bkcheck/bkcheck/spec"
)

// specState is a trace step's state of the current model.
func specState(s any) *spec.State {
	st := s.(spec.State)
	return &st
}
