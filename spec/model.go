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
	faulty, deferredCheck, handles, fencesCanBeLost, lossyJournal, javaAddPath, ordered, sequenceReads bool
}

func derive(p Params) derived {
	return derived{faulty: p.Faulty(), deferredCheck: p.DeferredCheck(), handles: p.HasHandles(), fencesCanBeLost: p.FencesCanBeLost(),
		lossyJournal: p.LossyJournal(), javaAddPath: p.JavaAddPath(), ordered: p.Ordered(), sequenceReads: p.SequenceReads()}
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

// RequiredActions are the actions that the model's options add and that a
// search of it should therefore see fire: the variant's own actions and
// each enabled fault's. A run in which one never fires exercised less than
// its options claim (coverage; bkcheck regress fails such a case).
func (m *Model) RequiredActions() []ActionKind {
	p := m.P
	req := append([]ActionKind(nil), m.V.Actions...)
	add := func(on bool, ks ...ActionKind) {
		if on {
			req = append(req, ks...)
		}
	}
	add(p.Crashes > 0, BookieCrashes, BookieRestarts)
	add(p.DeferredCheck(), BookieRunsPreBootCheck)
	// A fence needs a second client (a recovery): with one, only a lossy
	// journal gives BookieSyncsJournal something to flush.
	add(p.LossyJournal() || p.FencesCanBeLost() && p.Clients > 1, BookieSyncsJournal)
	add(p.DiskLoss > 0, BookieLosesDisk)
	add(p.Reformat > 0, BookieRejoinsEmpty)
	add(p.ReadOnly > 0, BookieBecomesReadOnly, BookieSendsAddReadOnlyResponse)
	add(p.DiskFull > 0, BookieFillsDisk)
	add(p.CorruptReads > 0, BookieFailsRead)
	add(p.DeleteLedger, ClientDeletesLedger, BookieCollectsLedger)
	// A second replica is asked only with Qw > 1 and a recovery.
	add(p.SequenceReads() && p.WriteQuorum > 1 && p.Clients > 1, ClientSendsNextRecoveryRead)
	// An idle checkpoint moves the mark past a record the busy one has not
	// already: a fence record, which needs a recovery.
	add(p.Checkpoints, BookieCheckpoints)
	add(p.Checkpoints && p.Clients > 1, BookieCheckpointsIdle)
	// A lost bookie is what the Auditor audits and the worker repairs.
	add(p.AutoRecovery && (p.Crashes > 0 || p.DiskLoss > 0), AuditorMarksLedgerUnderreplicated, WorkerAcquiresLedger)
	out := req[:0]
	for _, k := range req {
		if m.excluded&(1<<uint(k)) == 0 {
			out = append(out, k)
		}
	}
	return out
}
