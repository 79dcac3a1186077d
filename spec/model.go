package spec

// Model is a validated parameter set with what is worth computing once:
// the candidate ensembles in TLC's CHOOSE order. It is immutable and safe to
// share between goroutines; each goroutine brings its own scratch State.
type Model struct {
	P         Params
	V         Variant
	ensembles []Bookies
	excluded  uint64 // bit k: ActionKind k may not occur
	// blank is what Decode starts each state from: the initial state with
	// no bookie down (Decode reads which are). Building it anew for every
	// decoded state was a tenth of decoding.
	blank State
	has   derived
}

// derived is what Params' methods derive from the parameters (and the
// variant, looked up by name), computed once: encode, Decode and Next
// ask on every state.
type derived struct {
	faulty, deferredCheck, handles, fencesCanBeLost, lossyJournal, javaAddPath, ordered, sequenceReads, createWindow, createsAddOps bool
	// spare: an ensemble change can find a replacement (the action table's needSpare).
	spare bool
}

func derive(p Params) derived {
	return derived{faulty: p.Faulty(), deferredCheck: p.DeferredCheck(), handles: p.HasHandles(), fencesCanBeLost: p.FencesCanBeLost(),
		lossyJournal: p.LossyJournal(), javaAddPath: p.JavaAddPath(), ordered: p.Ordered(), sequenceReads: p.SequenceReads(),
		createWindow: p.JavaAddPath() && p.CreateWindow, createsAddOps: p.CreatesAddOps(), spare: needSpare.ok(p)}
}

// NewModel fills in p's defaults, validates it and prepares the model.
func NewModel(p Params) (*Model, error) {
	p.EnsureDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	v, _ := VariantByName(p.Variant)
	m := &Model{P: p, V: v, ensembles: p.ensembles(), blank: p.Init(), has: derive(p)}
	m.blank.BDown = 0
	for _, name := range p.Exclude {
		k, _ := ActionKindByName(name)
		m.excluded |= 1 << uint(k)
	}
	return m, nil
}

// Init returns the unique initial state.
func (m *Model) Init() State { return m.P.Init() }
