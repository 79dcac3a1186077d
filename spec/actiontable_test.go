package spec_test

import (
	"context"
	"slices"
	"testing"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/internal/testtier"
	"github.com/bkcheck/bkcheck/spec"
)

// TestActionTable: every action kind is declared, in order, and the
// vocabulary derived from the table names each once.
func TestActionTable(t *testing.T) {
	if err := spec.CheckActionTable(); err != nil {
		t.Fatal(err)
	}
	if n := len(spec.Descriptor.Actions); n != int(spec.NumActionKinds)-1 {
		t.Fatalf("the vocabulary has %d actions, want %d", n, spec.NumActionKinds-1)
	}
}

// actionGrid are small parameter sets, one or two per option that adds
// actions, each searched exhaustively by TestActionTableCan.
var actionGrid = []struct {
	name string
	long bool
	p    spec.Params
}{
	{"spec 2 bookies 1 client", false, spec.Params{Bookies: 2, Clients: 1, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1}},
	{"spec 3 bookies 1 client", false, spec.Params{Bookies: 3, Clients: 1, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1}},
	{"spec 2 bookies 2 clients Qw 1", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1}},
	{"java 2 bookies 1 client", false, spec.Params{Bookies: 2, Clients: 1, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, AddPath: spec.AddPathJava}},
	{"java 3 bookies 1 client", false, spec.Params{Bookies: 3, Clients: 1, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, AddPath: spec.AddPathJava}},
	{"java create window", false, spec.Params{Bookies: 3, Clients: 1, WriteQuorum: 2, AckQuorum: 2, Entries: 2, Inflight: 2, AddPath: spec.AddPathJava, CreateWindow: true, MaxEnsembleChanges: 1}},
	{"java create window, one add at a time", false, spec.Params{Bookies: 3, Clients: 1, WriteQuorum: 2, AckQuorum: 2, Entries: 2, Inflight: 1, AddPath: spec.AddPathJava, CreateWindow: true, MaxEnsembleChanges: 1}},
	{"java 2 bookies 2 clients Qw 1", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, AddPath: spec.AddPathJava}},
	{"crashes", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, Crashes: 1}},
	{"crashes no-sync journal 1 client", false, spec.Params{Bookies: 2, Clients: 1, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, Crashes: 1, Journal: spec.JournalNoSync}},
	{"disk loss", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, DiskLoss: 1}},
	{"reformat", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, Reformat: 1}},
	{"read-only", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, ReadOnly: 1}},
	{"disk full", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, DiskFull: 1}},
	{"unavailable", false, spec.Params{Bookies: 3, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, Unavailable: 1}},
	{"corrupt reads", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, CorruptReads: 1}},
	{"delete ledger", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, DeleteLedger: true}},
	{"split add check", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, Variant: spec.VariantSplitAddCheck}},
	{"data integrity", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, Crashes: 1, Journal: spec.JournalDisabled, DataIntegrity: true}},
	{"sequence reads", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, RecoveryRead: spec.RecoveryReadSequence}},
	{"registration expiry, a spare", false, spec.Params{Bookies: 3, Clients: 1, Ensemble: 2, WriteQuorum: 2, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, Crashes: 1, RegistrationExpiry: true}},
	{"checkpoints", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, ReliableNetwork: true, Crashes: 1, Checkpoints: true}},
	{"autorecovery, E 1 and a disk lost for good", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, DiskLoss: 1, AutoRecovery: true}},
	{"autorecovery, an empty last fragment", true, spec.Params{Bookies: 3, Clients: 2, WriteQuorum: 1, AckQuorum: 1, Entries: 2, Inflight: 2, Crashes: 1, DiskLoss: 1, ReliableNetwork: true, AutoRecovery: true}},
	{"autorecovery", true, spec.Params{Bookies: 3, Clients: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, ReliableNetwork: true, Crashes: 1, AutoRecovery: true}},
	{"decommission", true, spec.Params{Bookies: 3, Clients: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1, ReliableNetwork: true, DiskLoss: 1, AutoRecovery: true, Decommission: true}},
	{"decommission, E 1 and a disk lost for good", false, spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 1, AckQuorum: 1, Entries: 1, Inflight: 1, DiskLoss: 1, AutoRecovery: true, Decommission: true}},
}

// TestActionTableCan holds the table's can against the generator: on
// each set of the grid, every action that fires is one the table says
// the settings can fire (else a test, a coverage report or the reduction
// would be told it cannot happen), and every action it says they can
// fire does.
func TestActionTableCan(t *testing.T) {
	for _, g := range actionGrid {
		if g.long && !testtier.IsLong() {
			continue
		}
		t.Run(g.name, func(t *testing.T) {
			cfg := check.Config{}
			cfg.Params = g.p
			cfg.Invariants = []string{}
			cfg.MaxStates = 400_000
			cfg.EnsureDefaults()
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			rep, err := check.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d states, depth %d, %s", rep.Distinct, rep.Depth, rep.Status)
			m, err := spec.NewModel(cfg.Params)
			if err != nil {
				t.Fatal(err)
			}
			var can []string
			for _, k := range m.Fireable() {
				can = append(can, k.String())
			}
			for name, n := range rep.Coverage {
				if n > 0 && !slices.Contains(can, name) {
					t.Errorf("%s fired %d times; the table says these settings cannot fire it", name, n)
				}
			}
			if rep.Status != explorer.OK {
				t.Fatalf("the search did not end (%d states): shrink the set", rep.Distinct)
			}
			if len(rep.Idle) > 0 {
				t.Errorf("the table says these settings can fire %v; they never did (%d states)", rep.Idle, rep.Distinct)
			}
		})
	}
}
