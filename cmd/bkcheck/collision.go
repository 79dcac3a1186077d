package main

import (
	"fmt"
	"io"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/state"
)

// collisionWarning is what a verdict adds when the fingerprint collision
// estimate exceeds state.CollisionWarning: two distinct states may have
// shared a fingerprint, so a state (and what follows it) may have been
// missed. "" if not.
func collisionWarning(rep *check.Report) string {
	p := rep.Collision()
	if p <= state.CollisionWarning || rep.Status == explorer.Violation {
		return ""
	}
	wider := 96
	if rep.Fingerprint >= 96 {
		wider = 128
	}
	if rep.Fingerprint >= 128 {
		return fmt.Sprintf("the fingerprint collision estimate %.1e exceeds %.0e: a collision may have hidden states from the search", p, state.CollisionWarning)
	}
	return fmt.Sprintf("the fingerprint collision estimate %.1e exceeds %.0e: a collision may have hidden states from the search; rerun with --fingerprint %d", p, state.CollisionWarning, wider)
}

// jsonDisk is what a search on disk kept there, per distinct state.
type jsonDisk struct {
	FrontierBytesPerState float64 `json:"frontier-bytes-per-state"`
	VisitedBytesPerState  float64 `json:"visited-bytes-per-state"`
	LinkBytesPerState     float64 `json:"link-bytes-per-state"`
	PeakBytes             int64   `json:"peak-bytes"`
	Exact                 bool    `json:"exact-table"`
}

func diskJSON(rep *check.Report) *jsonDisk {
	st := rep.Store
	if st.VisitedDiskBytes == 0 || rep.Distinct == 0 {
		return nil
	}
	d := &jsonDisk{PeakBytes: st.PeakDiskBytes, Exact: st.Exact,
		VisitedBytesPerState: float64(st.VisitedDiskBytes) / float64(rep.Distinct),
		LinkBytesPerState:    float64(st.LinkDiskBytes) / float64(rep.Distinct)}
	if st.FrontierStates > 0 {
		d.FrontierBytesPerState = float64(st.FrontierBytes) / float64(st.FrontierStates)
	}
	return d
}

// diskText reports what a search on disk kept there.
func diskText(w io.Writer, rep *check.Report) {
	d := diskJSON(rep)
	if d == nil {
		return
	}
	fmt.Fprintf(w, "On disk (this shard): visited set %.1f bytes/state, parent links %.1f, largest level %.1f; at most %s at a level's end.\n",
		d.VisitedBytesPerState, d.LinkBytesPerState, d.FrontierBytesPerState, humanBytes(d.PeakBytes))
}

// jsonExchange is what a shard sent to the others and waited for at the
// barriers, in this session (explorer.ExchangeStats).
type jsonExchange struct {
	Levels             int     `json:"levels"`
	SentRecords        int64   `json:"sent-records"`
	SentBytes          int64   `json:"sent-bytes"`
	SentBytesPerRecord float64 `json:"sent-bytes-per-record"`
	BarrierWaitS       float64 `json:"barrier-wait-s"`
}

func exchangeJSON(rep *check.Report) *jsonExchange {
	x := rep.Store.Exchange
	if x.Levels == 0 {
		return nil
	}
	j := &jsonExchange{Levels: x.Levels, SentRecords: x.SentRecords, SentBytes: x.SentBytes, BarrierWaitS: x.BarrierWait.Seconds()}
	if x.SentRecords > 0 {
		j.SentBytesPerRecord = float64(x.SentBytes) / float64(x.SentRecords)
	}
	return j
}

// exchangeText reports a shard's exchange with the others.
func exchangeText(w io.Writer, rep *check.Report) {
	x := exchangeJSON(rep)
	if x == nil {
		return
	}
	fmt.Fprintf(w, "Exchange (this shard, this session): %d successors sent to other shards in %s (%.1f bytes each), %.2f s waiting at the barriers of %d levels.\n",
		x.SentRecords, humanBytes(x.SentBytes), x.SentBytesPerRecord, x.BarrierWaitS, x.Levels)
}
