package bridge

// steers is, for each class of the recorder's decisions, the model's
// actions a decision of that class can make happen next (the delivered
// frame's consumer and the answers it causes; the timeout's, the crash's
// and the metadata write's consequences). Steering weighs a decision by
// the actions of its class that no valid record has taken yet: the
// environment is pushed towards what BookKeeper has not been seen to do,
// as ModelFuzz's coverage feedback does, and BookKeeper's code still
// decides everything else.
var steers = map[string][]string{
	"create":                   {"ClientCreatesLedger", "ClientFailsToCreateLedger"},
	"add":                      {"ClientSendsAddEntryRequests"},
	"create-op":                {"ClientCreatesAddOp"},
	"queue":                    {"ClientSendsAddEntryRequests"},
	"deliver AddEntryRequest":  {"BookieSendsAddConfirmedResponse", "BookieSendsAddFencedResponse", "BookieSendsAddReadOnlyResponse"},
	"deliver AddEntryResponse": {"ClientReceivesAddConfirmedResponse", "ClientReceivesAddFencedResponse", "ClientReceivesAddErrorResponse", "RecoveryClientReceivesAddConfirmedResponse", "RecoveryClientClosesLedger"},
	"deliver FenceRequest":     {"BookieSendsFencingReadLacResponse"},
	"deliver FenceResponse":    {"ClientReceivesFencingReadLacResponse", "ClientSendsRecoveryReadRequests"},
	"deliver ReadRequest":      {"BookieSendsReadResponse"},
	"deliver ReadResponse":     {"ClientReceivesRecoveryReadResponse", "ClientSendsNextRecoveryRead", "ClientWritesBackEntry", "RecoveryClientClosesLedger"},
	"release":                  {"ClientUpdatesEnsembleMetadata", "ClientCompletesEnsembleChange", "ClientClosesLedgerSuccess", "ClientClosesLedgerFail", "ClientStartsRecovery", "RecoveryClientClosesLedger"},
	"close":                    {"ClientClosesLedgerSuccess", "ClientClosesLedgerFail"},
	"recover":                  {"ClientStartsRecovery"},
	"timeout":                  {"ClientReceivesAddTimeout", "ClientUpdatesEnsembleMetadata", "ClientCompletesEnsembleChange"},
	"crash":                    {"BookieCrashes"},
	"restart":                  {"BookieRestarts"},
	"expire":                   {"BookieRegistrationExpires"},
	"delete":                   {"ClientDeletesLedger"},
	"collect":                  {"BookieCollectsLedger"},
}

// steerBoost is how much more likely a decision is for each uncovered
// action of its class.
const steerBoost = 4

// steer weighs the decisions by the uncovered actions they can lead to
// (uncovered nil: no steering, the weights as they are).
func steer(ds []decision, uncovered func() map[string]bool) []decision {
	if uncovered == nil {
		return ds
	}
	u := uncovered()
	out := make([]decision, len(ds))
	for i, d := range ds {
		n := 0
		for _, a := range steers[d.kind] {
			if u[a] {
				n++
			}
		}
		d.weight *= 1 + steerBoost*n
		out[i] = d
	}
	return out
}
