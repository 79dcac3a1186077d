package spec

import (
	"fmt"
	"strings"
)

// Variant is a named preset of protocol options on the one model. Variants
// are not copies of the model: each differs from the reference in the
// options it sets, so what a variant changes can be read off its fields.
type Variant struct {
	Name        string
	Description string
	Source      string
	// RecoveryReadsFence: recovery reads set the fenced flag on the bookies
	// they reach (the fence field of GetRecoveryReadRequests).
	RecoveryReadsFence bool
	// GuaranteedWriteQuorum applies the six changes of the Guaranteed
	// Write Quorum proposal: the client tracks LAFR (last add fully
	// replicated) and keeps an add pending until it and its prefix reached
	// Qw; a new fragment starts at LAFR+1; a failed bookie that holds an
	// acknowledged entry of the new fragment is pinned (cannot be
	// replaced); the writer closes only with no pending add; recovery
	// closes only with no pending add (as already); fencing returns LAFR.
	GuaranteedWriteQuorum bool
}

// Variants lists the protocol variants bkcheck knows; the first is the default.
var Variants = []Variant{
	{
		Name:               "reference",
		Description:        "the protocol as specified in BookKeeperProtocol.tla (release 4.14 onwards): recovery reads fence",
		Source:             "github.com/Vanlightly/bookkeeper-tlaplus BookKeeperProtocol.tla @ fe199dc",
		RecoveryReadsFence: true,
	},
	{
		Name:               "no-recovery-fence",
		Description:        "recovery reads do not fence, as in release 4.13: an entry half-written before fencing can be acknowledged while recovery decides it does not exist (ledger truncation)",
		Source:             "apache/bookkeeper issue #2614, fixed by PR #2616; the spec's EXERCISE: fence |-> FALSE in GetRecoveryReadRequests",
		RecoveryReadsFence: false,
	},
	{
		Name:                  "gwq",
		Description:           "Guaranteed Write Quorum: entries of closed ledgers and of all but the last fragment reach Qw (LAFR tracking, fragments start at LAFR+1, pinned bookies, close only without pending adds, fencing returns LAFR)",
		Source:                "tweaks/ProtocolWithGuaranteedWriteQuorum.tla (Vanlightly/bookkeeper-tlaplus) and the blog post 'Tweaking the BookKeeper protocol - Guaranteeing write quorum', applied to the 2024 reference spec",
		RecoveryReadsFence:    true,
		GuaranteedWriteQuorum: true,
	},
}

// VariantByName returns the named variant; "" is the reference.
func VariantByName(name string) (Variant, error) {
	if name == "" {
		return Variants[0], nil
	}
	names := make([]string, len(Variants))
	for i, v := range Variants {
		if v.Name == name {
			return v, nil
		}
		names[i] = v.Name
	}
	return Variant{}, fmt.Errorf("unknown variant %q; known: %s", name, strings.Join(names, ", "))
}
