// Package vocab is what every model declares about itself once, and what
// the cold paths read: its state variables (name, shape, when present),
// its actions (and where each comes from), its invariants and variants,
// and the forms of a state that people and tools read (text rows, ITF
// values, sequence-diagram events). A model package (spec, spec413)
// implements Model for one parameter set; ITF writing and reading, the
// text, Mermaid, DOT and HTML renderers, replay and coverage are written
// once against it (packages traces and check).
//
// The hot paths — a state's encoding, its decoding, relabelling for
// symmetry — stay hand-written in each model; their completeness is pinned
// by tests that walk the model's descriptor.
package vocab

import "encoding/json"

// Shape is how a state variable is indexed.
type Shape uint8

const (
	Scalar    Shape = iota // one value (a status, a counter, a record)
	BookieSet              // a set of bookies
	PerBookie              // a function from bookies to values
	PerClient              // a function from clients to records
	Messages               // the messages variable: records with delivery counts
	Sequence               // a sequence of records (fragments)
)

var shapeNames = [...]string{"scalar", "bookie set", "per bookie", "per client", "messages", "sequence"}

func (s Shape) String() string {
	if int(s) < len(shapeNames) {
		return shapeNames[s]
	}
	return "shape?"
}

// Var describes one state variable.
type Var struct {
	Name  string // its TLA+ and ITF name
	Shape Shape
	Doc   string
	// When says in words when the variable is present ("always", or the
	// options that add it); Present decides it for a parameter set.
	When string
}

// Origin says where an action comes from.
type Origin uint8

const (
	FromSpec      Origin = iota // an action of the TLA+ specification
	FromExtension               // bkcheck's extension: a fault, striping, deletion
	FromVariant                 // a protocol variant (a bug reproduced, a proposed fix)
)

var originNames = [...]string{"TLA+ spec", "extension", "variant"}

func (o Origin) String() string {
	if int(o) < len(originNames) {
		return originNames[o]
	}
	return "origin?"
}

// Action describes one action of a model.
type Action struct {
	Name   string
	Origin Origin
	// EnabledBy names the setting or variant that adds the action ("" for
	// the spec's own actions, which are always there).
	EnabledBy string
}

// Invariant describes one named property of a model.
type Invariant struct {
	Name, Statement, Source string
	Default                 bool // checked when --invariants is not given
	Terminal                bool // a property of terminal states
}

// Variant describes one protocol variant of a model.
type Variant struct{ Name, Description, Source, Issue string }

// Descriptor is a model's vocabulary, independent of any parameter set.
type Descriptor struct {
	Name       string // the registry name (--model)
	Doc        string // one line for people
	Vars       []Var  // every state variable, in declaration order
	Actions    []Action
	Invariants []Invariant
	Variants   []Variant
}

// Row is one variable (or one element of a function-valued variable) and
// its value as text: a state's readable form is a list of rows in a fixed
// order, so two states can be compared line by line.
type Row struct{ Name, Value string }

// Event is one thing a step shows in a sequence diagram: a message arrow
// (delivered or lost) between two participants, or a note over one.
type Event struct {
	Kind string `json:"kind"` // "msg", "lost", "pending" (sent, never delivered) or "note"
	From string `json:"from"`
	To   string `json:"to,omitempty"`
	Text string `json:"text"`
}

// Participant is a lifeline of a sequence diagram.
type Participant struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// Model is one model bound to a parameter set, as the cold paths see it.
// States and actions are the model's own values (its State and Action
// types, by value), opaque to the callers.
type Model interface {
	// Descriptor is the model's vocabulary.
	Descriptor() *Descriptor
	// Params renders the parameter set for people; ParamsJSON for files
	// (the model's parameter schema, with defaults filled in).
	Params() string
	ParamsJSON() (json.RawMessage, error)
	// Vars are the state variables present under these parameters, in
	// declaration order (the ITF trace's vars).
	Vars() []Var

	// Init is the initial state.
	Init() any
	// Rows is the readable form of a state.
	Rows(state any) []Row
	// ActionString renders an action for people.
	ActionString(action any) string

	// ITF is a state's ITF value: one entry per present variable, values
	// as encoding/json writes them in the ADR-015 encodings.
	ITF(state any) map[string]any
	// VarITF is one variable's entry of ITF; ok is false when the
	// variable is not present.
	VarITF(state any, name string) (value any, ok bool)
	// ActionITF is an action's name and nondeterministic picks.
	ActionITF(action any) (name string, picks map[string]any)
	// FromITF reads a state written by ITF (numbers as json.Number); the
	// first problem goes to d.
	FromITF(d *Decoder, state map[string]any) any
	// ActionFromITF reads an action written by ActionITF.
	ActionFromITF(d *Decoder, name string, picks map[string]any) any

	// Participants are a diagram's lifelines, given the last state.
	Participants(last any) []Participant
	// Events is what the step from prev to cur by action shows.
	Events(action, prev, cur any) []Event
	// Undelivered are the messages the step from prev to cur sends that
	// are still in flight in last: sent, never delivered.
	Undelivered(prev, cur, last any) []Event
}

// DefaultModel is the model of a trace or run that names none (every
// trace of the current model, and those of bkcheck 0.1).
const DefaultModel = "current"
