package spec

import (
	"bytes"
	"encoding/json"
)

// LegacyParams are parameters as bkcheck 0.1.0 wrote them (Go field
// names, in traces and run directories), with the data-loss fault it then
// had: DataLoss restarts with an empty disk, DataLossMode blank or limbo.
// They are read so that old traces still open; the fault became
// --reformat (an operator re-format: the bookie rejoins empty), and limbo
// became --data-integrity, which applies BookKeeper's condition (the
// ledger is open and its last ensemble holds the bookie) where 0.1.0 put
// every re-formatted bookie in limbo.
type LegacyParams struct {
	Params
	DataLoss     int
	DataLossMode string
}

// DecodeLegacyParams reads 0.1.0's JSON form strictly.
func DecodeLegacyParams(b []byte) (Params, error) {
	var lp LegacyParams
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&lp); err != nil {
		return Params{}, err
	}
	p := lp.Params
	p.Reformat = lp.DataLoss
	p.DataIntegrity = lp.DataLossMode == "limbo" && lp.DataLoss > 0
	if p.DataIntegrity {
		p.ReformatCookie = CookieKept // 0.1's limbo ran the check on every re-format
	}
	return p, nil
}
