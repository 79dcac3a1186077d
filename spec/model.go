package spec

// Model is a validated parameter set with what is worth computing once:
// the candidate ensembles in TLC's CHOOSE order. It is immutable and safe to
// share between goroutines; each goroutine brings its own scratch State.
type Model struct {
	P         Params
	V         Variant
	ensembles []Bookies
	excluded  uint64 // bit k: ActionKind k may not occur
}

// NewModel fills in p's defaults, validates it and prepares the model.
func NewModel(p Params) (*Model, error) {
	p.EnsureDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	v, _ := VariantByName(p.Variant)
	m := &Model{P: p, V: v, ensembles: p.ensembles()}
	for _, name := range p.Exclude {
		k, _ := ActionKindByName(name)
		m.excluded |= 1 << uint(k)
	}
	return m, nil
}

// Init returns the unique initial state.
func (m *Model) Init() State { return m.P.Init() }
