package explorer

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// A model that panics — a bug in the model, or a property it cannot
// evaluate — does not crash the search: whichever goroutine called it
// (an expansion worker, the search goroutine computing the initial
// states, a simulation walk) recovers the panic, and the search ends
// with the Error verdict, as TLC ends with an evaluation error:
// Result.Violation.Error says what the model was asked to do and what it
// panicked with, and Result.Violation.Trace leads from an initial state
// to the state it failed on (none when it failed computing the initial
// states). The verdict is final, like a violation: a search on disk
// records it in its checkpoint, and resuming the run reports it again.
//
// A state the model fails on counts, in the search, as a state that
// violates something: the search reports the first of these in its
// canonical order (level by level, state order within a level), so for a
// deterministic model the verdict, the failing state and its trace
// (a shortest path to that state, as for a violation) do not depend on
// the number of workers, on memory or disk, or on the number of shards;
// a simulation reports the failure of the lowest-numbered walk of its
// batch, as it does a violation. Only ModelError.Stack varies. To decide
// which failure is first, the other workers finish the batch they are
// expanding (a few chunks each) and then stop, as after a violation; a
// failure stops nothing else early.

// The calls of the model the explorer makes, as ModelError.Call names
// them.
const (
	CallInit          = "Init"
	CallNewExpander   = "NewExpander"
	CallLoad          = "Load"
	CallCheck         = "Check"
	CallCheckTerminal = "CheckTerminal"
	CallSuccessors    = "Successors"
	CallWeight        = "Weight" // SimOptions.Weight, for a successor
)

// ModelError is how a model failed, for the Error verdict.
type ModelError struct {
	// Call is what the explorer had asked of the model (CallInit, ...):
	// for Load, Check, CheckTerminal, Successors and Weight, of the last
	// state of the trace.
	Call string `json:"call"`
	// Property names the property whose evaluation failed, when the model
	// says so by panicking with a *PropertyError; "" otherwise.
	Property string `json:"property,omitempty"`
	// Message is the panic value as text (for a *PropertyError, its
	// error's text).
	Message string `json:"message"`
	// Panic is false when the model reported the failure (a
	// *PropertyError) rather than crashed.
	Panic bool `json:"panic,omitempty"`
	// Stack is the stack of the goroutine that panicked, for whoever
	// debugs the model; empty for a *PropertyError. It is not part of the
	// verdict: it differs from run to run.
	Stack string `json:"stack,omitempty"`
}

// Error says in one line what failed.
func (e *ModelError) Error() string {
	switch {
	case e.Property != "" && e.Panic:
		return fmt.Sprintf("the model panicked evaluating %s (%s): %s", e.Property, e.Call, e.Message)
	case e.Property != "":
		return fmt.Sprintf("%s cannot be evaluated (%s): %s", e.Property, e.Call, e.Message)
	}
	return fmt.Sprintf("the model panicked in %s: %s", e.Call, e.Message)
}

// PropertyError is what a model panics with, from Check or CheckTerminal,
// to report that a property cannot be evaluated in the loaded state (an
// expression that fails at run time, say): the search ends with the Error
// verdict naming the property, and without a stack, since nothing
// crashed.
type PropertyError struct {
	Property string
	Err      error
}

func (e *PropertyError) Error() string {
	return fmt.Sprintf("evaluating %s: %v", e.Property, e.Err)
}

func (e *PropertyError) Unwrap() error { return e.Err }

// modelError turns a recovered panic value into a ModelError, with the
// current goroutine's stack (recover's caller runs on the stack that
// panicked).
func modelError(call string, r any) *ModelError {
	var pe *PropertyError
	if err, ok := r.(error); ok && errors.As(err, &pe) {
		msg := "<nil>"
		if pe.Err != nil {
			msg = pe.Err.Error()
		}
		return &ModelError{Call: call, Property: pe.Property, Message: msg}
	}
	msg := fmt.Sprint(r)
	if err, ok := r.(error); ok {
		msg = err.Error()
	}
	return &ModelError{Call: call, Message: msg, Panic: true, Stack: panicStack(debug.Stack())}
}

// panicStack is a stack taken while recovering a panic without the frames
// of the recovery itself: the goroutine's header line, then the frames
// from the one that panicked down.
func panicStack(stack []byte) string {
	s := string(stack)
	header, rest, ok := strings.Cut(s, "\n")
	if !ok {
		return s
	}
	// The frame of the panic is "panic(...)" and its file line.
	i := strings.Index(rest, "\npanic(")
	if i < 0 {
		return s
	}
	after := rest[i+1:]
	for range 2 { // the panic( line and its file line
		_, after, ok = strings.Cut(after, "\n")
		if !ok {
			return s
		}
	}
	return header + "\n" + after
}

// catch runs f, a call of the model, and returns how it failed if it
// panicked.
func catch(call string, f func()) (merr *ModelError) {
	defer func() {
		if r := recover(); r != nil {
			merr = modelError(call, r)
		}
	}()
	f()
	return nil
}

// errorResult is the result of a search the model failed in before its
// first level: nothing was explored.
func errorResult(merr *ModelError) Result {
	return Result{Status: Error, Violation: &ViolationInfo{Error: merr}, Reason: merr.Error()}
}
