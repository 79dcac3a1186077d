// Package explorer searches the state space of any model that satisfies
// Model. It never knows BookKeeper: states reach it as canonical byte
// encodings, transitions as compact action labels. It owns the search order,
// the visited set, the frontier, concurrency and the verdict.
package explorer

// Action labels one transition: which action of the model fired and with
// which parameters. It is small and comparable so that it can be stored next
// to a parent link without allocation; the model turns it into text.
type Action struct {
	Kind   uint8   // model-defined action number
	Params [4]int8 // model-defined parameters (e.g. client, bookie, entry, loss pattern)
}

// Model is what the explorer searches. Implementations must be pure and
// deterministic: the same encoded state always yields the same successors in
// the same order, whichever goroutine asks.
type Model interface {
	// Init emits the encoded initial states in a fixed order. The slices
	// are only valid during the call. key is what identifies the state for
	// deduplication (its fingerprint is taken): a canonical form under
	// symmetry, or nil to use enc itself.
	Init(emit func(enc, key []byte))
	// NewExpander returns scratch space for one goroutine. Expanders are not
	// shared between goroutines; models may be.
	NewExpander() Expander
	// DescribeAction renders an action label for people.
	DescribeAction(a Action) string
}

// Expander holds one decoded state and expands it. Keeping the decoded form
// between Check and Successors means each distinct state is decoded once.
// A method that panics ends the search with the Error verdict, naming the
// call and the state (modelerror.go); Check and CheckTerminal report a
// property they cannot evaluate by panicking with a *PropertyError.
type Expander interface {
	// Load decodes enc; later calls refer to this state.
	Load(enc []byte) error
	// Check evaluates the selected invariants on the loaded state and returns
	// the name of the first one (in selection order) that fails, or "".
	Check() string
	// CheckTerminal evaluates the selected properties of terminal states
	// on the loaded state, which has no successor, and returns the name of
	// the first that fails, or "".
	CheckTerminal() string
	// Successors emits every successor of the loaded state in a fixed
	// order, including successors equal to states already seen. The slices
	// are only valid during the call to emit; key is as for Init. The
	// search continues from enc (the actual state), deduplicated by key.
	Successors(emit func(a Action, enc, key []byte))
}

// KeyedExpander is what an Expander implements when it can tell a
// successor's key before its encoding: the search then asks for the
// encoding only of successors it has not seen. Under symmetry the key is
// a canonical form the model computes anyway, most successors are states
// already seen, and encoding each of them as well was a tenth of the
// search. SuccessorKeys emits the same successors in the same order as
// Successors, each with its (non-nil) key; encode appends the encoding of
// the successor being emitted to dst and is valid only during that call
// to emit.
type KeyedExpander interface {
	SuccessorKeys(emit func(a Action, key []byte, encode func(dst []byte) []byte))
}

// AppendingExpander is what an Expander implements when it can encode
// each successor straight onto the end of a buffer the search gives it
// (its arena of candidates), instead of into a buffer of its own that the
// search then copies. SuccessorsAppend emits the same successors in the
// same order as Successors: for each it appends the encoding to *buf and
// calls emit with off, where the encoding begins; the search may shorten
// *buf again during emit. The key is the encoding (no symmetry).
type AppendingExpander interface {
	SuccessorsAppend(buf *[]byte, emit func(a Action, off int))
}

// Constrainer is what an Expander implements when its model has state
// constraints (TLC's CONSTRAINT): InModel reports whether the loaded state
// satisfies them. A state outside them is checked against the invariants,
// as TLC checks it, but not expanded, and it is not a terminal state (no
// terminal property, no deadlock): the search is of the constrained model.
// Unlike TLC, which drops such a state, the explorer keeps it in the
// visited set, so it counts among the distinct states.
type Constrainer interface {
	InModel() bool
}

// GoalExpander is what an Expander implements when its model has goals
// (SimOptions.Goals): questions a random walk answers by reaching a state
// where one holds (bkcheck's probes), never violations. Goals sets
// held[g] to whether goal g holds in the state Check evaluated; a walk
// asks only after Check found nothing, and goes on whatever the answer.
type GoalExpander interface {
	Goals(held []bool)
}
