package specprops

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bkcheck/bkcheck/spec"
)

// TestViewMatchesITF: the view's variables are exactly the ITF trace's
// (traces/itf.go), and the view's records have every field the ITF
// records have, under the same names, for models that switch every
// extension on. A variable or a field added to the trace without its
// place in the view fails here.
func TestViewMatchesITF(t *testing.T) {
	striped := spec.DefaultParams()
	striped.Bookies, striped.Ensemble, striped.Variant, striped.Entries = 3, 3, "gwq", 2
	faulty := equivalenceModels()[4]
	faulty.CorruptReads = 1
	deleting := spec.DefaultParams()
	deleting.DeleteLedger = true
	split := spec.DefaultParams()
	split.Variant = "split-add-check"
	deferred := spec.DefaultParams() // b_check_pending
	deferred.Crashes, deferred.Journal, deferred.DataIntegrity = 1, spec.JournalDisabled, true
	checkpointed := spec.DefaultParams() // b_index_key and the other checkpoint sets
	checkpointed.Crashes, checkpointed.Checkpoints = 1, true
	registered := spec.DefaultParams() // b_stale_registration
	registered.Crashes, registered.RegistrationExpiry = 1, true
	// ur_missing and the worker's variables; decom_bookie, decom_done.
	recovering := spec.DefaultParams()
	recovering.Bookies, recovering.Crashes, recovering.AutoRecovery, recovering.Decommission = 3, 1, true, true
	itfVars := map[string]bool{}
	fields := map[string]map[string]bool{} // record type -> ITF keys seen
	note := func(rt string, obj any) {
		m, ok := obj.(map[string]any)
		if !ok {
			return
		}
		if fields[rt] == nil {
			fields[rt] = map[string]bool{}
		}
		for k := range m {
			fields[rt][k] = true
		}
	}
	for _, p := range []spec.Params{striped, faulty, deleting, split, deferred, checkpointed, registered, recovering} {
		p.EnsureDefaults()
		// The states of random walks, as the steps of one trace (the
		// actions do not matter to the encoding of states).
		states, _ := sampleStates(t, p, 30)
		doc := newITFSample(t, p, states, false) // as json.Unmarshal decodes
		for _, v := range doc.vars {
			if v != "mbt::actionTaken" && v != "mbt::nondetPicks" {
				itfVars[v] = true
			}
		}
		for _, st := range doc.itf {
			for _, f := range st["meta_fragments"].([]any) {
				note("Fragment", f)
			}
			if fu, ok := st["faults_used"]; ok {
				note("Faults", fu)
			}
			for _, kv := range st["messages"].(map[string]any)["#map"].([]any) {
				msg := kv.([]any)[0].(map[string]any)
				note("Message", msg)
				if e, ok := msg["entry"]; ok {
					note("Entry", e)
				}
			}
			for _, kv := range st["clients"].(map[string]any)["#map"].([]any) {
				c := kv.([]any)[1].(map[string]any)
				note("Client", c)
				for _, op := range c["pending_add_ops"].(map[string]any)["#set"].([]any) {
					note("PendingAddOp", op)
				}
			}
		}
	}
	var viewVars []string
	for _, v := range variables {
		if v.name != "params" && v.name != "Nil" {
			viewVars = append(viewVars, v.name)
		}
	}
	var itf []string
	for v := range itfVars {
		itf = append(itf, v)
	}
	sort.Strings(viewVars)
	sort.Strings(itf)
	if diff := cmp.Diff(itf, viewVars); diff != "" {
		t.Errorf("view variables differ from the ITF trace's (-ITF +view):\n%s", diff)
	}
	for _, rt := range recordTypes {
		for k := range fields[rt.name] {
			if _, ok := rt.byName[k]; !ok {
				t.Errorf("the ITF %s has field %q, the view's does not", rt.name, k)
			}
		}
	}
	for _, rt := range []string{"Fragment", "Faults", "Message", "Entry", "Client", "PendingAddOp"} {
		if len(fields[rt]) == 0 {
			t.Errorf("no ITF %s seen: the sample does not cover it", rt)
		}
	}
}
