package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/bkcheck/bkcheck/internal/atomicfile"
	"github.com/bkcheck/bkcheck/vocab"
)

// ITF is the Informal Trace Format (Apalache ADR-015, .itf.json): the
// canonical machine-readable form of a bkcheck counterexample. Values use
// the ADR's encodings: records as objects, sequences as arrays, sets as
// {"#set": [...]}, functions as {"#map": [[k, v], ...]}; model values (Nil,
// statuses, message types, bookie and client ids) as strings. Every state
// after the first records the action taken and its parameters in the
// variables mbt::actionTaken and mbt::nondetPicks, as Quint does. Which
// variables a state has, and how each is written, is the model's
// (vocab.Model.ITF); #meta names the model ("model", absent for
// vocab.DefaultModel) and its parameters. A lasso (Trace.Loop) has the
// ADR's optional top-level "loop": the 0-based index of the state the
// last state equals (the behaviour repeats the states after it forever),
// and #meta.fairness says how its cycle is fair.

// ErrITF is wrapped by every error about malformed ITF input.
var ErrITF = vocab.ErrITF

const (
	varAction = "mbt::actionTaken"
	varPicks  = "mbt::nondetPicks"
)

// Version is bkcheck's version, recorded in ITF metadata
// (#meta.bkcheck-version). It names the trace format: 0.1.0 for bkcheck
// 0.1's traces (#meta.params as Go field names, the data-loss fault) and
// for the first schema-keyed ones; 0.2.0 for traces written from a
// model's vocabulary (#meta.model names a model other than the default;
// #meta.error and #meta.invariants record the error verdict). Both read.
var Version = "0.2.0"

// itfMeta is what #meta records about the run.
type itfMeta struct {
	Format      string          `json:"format"`
	FormatDesc  string          `json:"format-description"`
	Source      string          `json:"source"`
	Version     string          `json:"bkcheck-version"`
	Params      json.RawMessage `json:"params"` // the model's parameter schema, as JSON
	Invariant   string          `json:"invariant"`
	Statement   string          `json:"statement"`
	Deadlock    bool            `json:"deadlock,omitempty"`
	Terminal    bool            `json:"terminal,omitempty"`
	Kind        string          `json:"kind,omitempty"`       // a CEL property's kind
	Expression  string          `json:"expression,omitempty"` // a CEL property's expression
	Description string          `json:"description"`
	Model       string          `json:"model,omitempty"`      // absent: vocab.DefaultModel
	Error       string          `json:"error,omitempty"`      // the model failed on the last state (Trace.Error)
	Checked     []string        `json:"invariants,omitempty"` // with Error: the invariants the run checked
	Fairness    []FairStep      `json:"fairness,omitempty"`   // a lasso's cycle: how it is fair to each --fair action
}

// stateVars lists the variables of a trace of m, in declaration order.
func stateVars(m vocab.Model) []string {
	var vars []string
	for _, v := range m.Vars() {
		vars = append(vars, v.Name)
	}
	return append(vars, varAction, varPicks)
}

// EncodeITF writes t as an ITF JSON document.
func EncodeITF(w io.Writer, t *Trace) error {
	m := t.Model
	params, err := m.ParamsJSON()
	if err != nil {
		return err
	}
	meta := itfMeta{
		Format: "ITF", FormatDesc: "https://apalache-mc.org/docs/adr/015adr-trace.html", Source: "bkcheck",
		Version: Version, Params: params, Invariant: t.Invariant, Statement: t.Statement,
		Deadlock: t.Deadlock, Terminal: t.Terminal, Kind: t.Kind, Expression: t.Expression, Error: t.Error, Checked: t.Checked, Fairness: t.Fairness,
		Description: fmt.Sprintf("%s of %d states found by bkcheck on %s", map[bool]string{false: "counterexample", true: "witness"}[t.Kind == "probe"], len(t.Steps), m.Params()),
	}
	if name := m.Descriptor().Name; name != vocab.DefaultModel {
		meta.Model = name
	}
	doc := map[string]any{"#meta": meta, "params": []string{}, "vars": stateVars(m)}
	if t.Loop > 0 {
		doc["loop"] = t.Loop - 1
	}
	states := make([]any, len(t.Steps))
	for i, st := range t.Steps {
		s := m.ITF(st.State)
		s["#meta"] = map[string]any{"index": i}
		if st.Initial {
			s[varAction] = "init"
			s[varPicks] = map[string]any{}
		} else {
			s[varAction], s[varPicks] = m.ActionITF(st.Action)
		}
		states[i] = s
	}
	doc["states"] = states
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// A Resolver finds the model a trace names (its #meta.model, "" for
// vocab.DefaultModel) with the parameters in #meta.params.
type Resolver func(model string, params json.RawMessage) (vocab.Model, error)

// DecodeITF reads an ITF document written by EncodeITF. It never panics:
// malformed input gives an error wrapping ErrITF that says where.
// A UTF-8 byte-order mark before the document (some editors write one)
// is skipped.
func DecodeITF(r io.Reader, resolve Resolver) (*Trace, error) {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(utf8BOM)); err == nil && string(b) == utf8BOM {
		br.Discard(len(utf8BOM))
	}
	jd := json.NewDecoder(br)
	jd.UseNumber()
	var raw map[string]json.RawMessage
	if err := jd.Decode(&raw); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%w: the file holds a JSON %s, not a JSON object: not an ITF trace", ErrITF, te.Value)
		}
		return nil, fmt.Errorf("%w: %v", ErrITF, err)
	}
	metaJSON, ok := raw["#meta"]
	if !ok {
		return nil, fmt.Errorf(`%w: the file has no "#meta": it is not an ITF trace written by bkcheck, so which model and settings it was checked with are unknown`, ErrITF)
	}
	var meta itfMeta
	if err := json.Unmarshal(metaJSON, &meta); err != nil {
		return nil, fmt.Errorf("%w: #meta: %v", ErrITF, err)
	}
	if meta.Source != "bkcheck" {
		return nil, fmt.Errorf("%w: #meta.source is %q, not a bkcheck trace", ErrITF, meta.Source)
	}
	if len(meta.Params) == 0 {
		return nil, fmt.Errorf("%w: #meta.params: missing", ErrITF)
	}
	m, err := resolve(meta.Model, meta.Params)
	if err != nil {
		return nil, fmt.Errorf("%w: #meta.params: %v", ErrITF, err)
	}
	var states []any
	sd := json.NewDecoder(bytes.NewReader(raw["states"]))
	sd.UseNumber()
	if err := sd.Decode(&states); err != nil {
		return nil, fmt.Errorf("%w: states: %v", ErrITF, err)
	}
	if len(states) == 0 {
		return nil, fmt.Errorf("%w: no states", ErrITF)
	}
	d := &vocab.Decoder{}
	t := &Trace{Model: m, Invariant: meta.Invariant, Statement: meta.Statement, Deadlock: meta.Deadlock, Terminal: meta.Terminal,
		Kind: meta.Kind, Expression: meta.Expression, Error: meta.Error, Checked: meta.Checked, Fairness: meta.Fairness}
	switch t.Kind {
	case "", "invariant", "terminal", "eventually", "probe":
	default:
		return nil, fmt.Errorf("%w: #meta.kind is %q, not invariant, terminal, eventually or probe", ErrITF, t.Kind)
	}
	if t.Invariant == "" && !t.Deadlock && t.Error == "" {
		// A trace says what its last state is; without it there is
		// nothing to confirm.
		return nil, fmt.Errorf("%w: #meta names no property the last state violates (invariant), no deadlock and no failure (error)", ErrITF)
	}
	if l, ok := raw["loop"]; ok {
		var loop int
		if err := json.Unmarshal(l, &loop); err != nil || loop < 0 || loop >= len(states)-1 {
			return nil, fmt.Errorf("%w: loop: want the index of a state before the last, got %s", ErrITF, l)
		}
		if t.Kind != "eventually" {
			return nil, fmt.Errorf("%w: loop: only an eventually property's counterexample is a lasso (#meta.kind is %q)", ErrITF, t.Kind)
		}
		t.Loop = loop + 1
	}
	for _, f := range t.Fairness {
		if t.Loop == 0 || f.Step < t.Loop || f.Step > len(states) {
			return nil, fmt.Errorf("%w: #meta.fairness: %s: step %d is not in the cycle", ErrITF, f.Constraint, f.Step)
		}
	}
	for i, sv := range states {
		d.At(fmt.Sprintf("states[%d]", i), func() {
			st := d.Obj(sv)
			step := Step{Initial: i == 0, State: m.FromITF(d, st)}
			if a, ok := st[varAction]; i == 0 && ok && a != "init" {
				d.At(varAction, func() { d.Fail("the first state's action must be \"init\", got %v", a) })
			}
			if i > 0 {
				name := d.Str(d.Field(st, varAction))
				step.Action = m.ActionFromITF(d, name, d.Obj(d.Field(st, varPicks)))
			}
			t.Steps = append(t.Steps, step)
		})
		if err := d.Err(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// utf8BOM is the UTF-8 encoding of U+FEFF, the byte-order mark.
const utf8BOM = "\ufeff"

// ReadITFFile reads the ITF trace in the file at path (DecodeITF).
func ReadITFFile(path string, resolve Resolver) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return DecodeITF(f, resolve)
}

// WriteITFFile writes t as ITF JSON to path, atomically: the file appears
// whole or not at all, readable by everyone (traces are meant to be shared).
func WriteITFFile(path string, t *Trace) error {
	return atomicfile.Write(path, func(w io.Writer) error { return EncodeITF(w, t) })
}
