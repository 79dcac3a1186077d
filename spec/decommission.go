package spec

import "math/bits"

// Decommission (--decommission): an operator runs `bookkeeper shell
// decommissionbookie` on a bookie that is down, as
// BookKeeperAdmin.decommissionBookie does it at apache/bookkeeper master
// 9590a97. The command refuses a bookie that is still registered
// (available or read-only), asks the Auditor to audit (triggerAudit, which
// re-sets lostBookieRecoveryDelay), and then polls the metadata until no
// ledger stores entries on the bookie (waitForLedgersToBeReplicated with
// areEntriesOfLedgerStoredInTheBookie). The copying is AutoRecovery's: the
// Auditor's audit (AuditorMarksLedgerUnderreplicated) and the worker.
// The decommissioned bookie never comes back: the operator stopped it for
// good, which is what the command is for. The cookie deleted afterwards
// (PR #4592) is --reformat's story and is not repeated here.

func (g *gen) decommissionActions() {
	for b := 0; b < g.p.Bookies; b++ {
		g.AdminDecommissionsBookie(b)
	}
	g.AdminFinishesDecommission()
}

// AdminDecommissionsBookie: decommissionBookie(b) on a bookie that is down
// and no longer registered ("Bookie: is not shutdown yet" otherwise:
// IllegalOpException, from getAvailableBookies and getReadOnlyBookies,
// the registration client's view: with --registration-expiry a stopped
// bookie stays in it until BookieRegistrationExpires), while an Auditor
// runs (triggerAudit throws UnavailableException when none is elected, as
// after the death watcher shut AutoRecovery down). One decommission per
// run.
func (g *gen) AdminDecommissionsBookie(b int) {
	s := g.s
	if s.DecomBookie != 0 || !s.unregistered().Has(b) || s.RWPhase == RWStopped {
		return
	}
	g.begin(-1)
	g.n.DecomBookie = 1 << uint(b)
	g.out(Action{Kind: AdminDecommissionsBookie, Client: -1, Bookie: int8(b)})
}

// AdminFinishesDecommission: waitForLedgersToBeReplicated's poll finds no
// ledger storing entries on the bookie, and decommissionBookie returns.
// Its second wait, on the under-replicated ledgers whose urL names the
// bookie, polls the same predicate, which has just held, so it returns at
// once.
func (g *gen) AdminFinishesDecommission() {
	s := g.s
	if s.DecomBookie == 0 || s.DecomDone || g.storesEntries(s.DecomBookie) {
		return
	}
	g.begin(-1)
	g.n.DecomDone = true
	g.out(Action{Kind: AdminFinishesDecommission, Client: -1, Bookie: int8(bits.TrailingZeros8(uint8(s.DecomBookie)))})
}

// storesEntries is BookKeeperAdmin.areEntriesOfLedgerStoredInTheBookie for
// the bookie in b: the ledger exists (a ledger not created, or deleted, is
// stored nowhere) and a segment's ensemble names the bookie, other than
// the last segment of a closed ledger whose last entry is before the
// segment starts (areEntriesOfSegmentStoredInTheBookie). With E > Qw a
// segment that names the bookie counts only if the bookie's index stores
// one of its entries (RoundRobinDistributionSchedule.hasEntry, from the
// segment's first entry to its last: the next segment's first, or the
// closed ledger's last), unless it is the open ledger's last segment.
func (g *gen) storesEntries(b Bookies) bool {
	s := g.s
	if !g.ledgerExists() {
		return false
	}
	frags := s.MetaFragmentList()
	for i, f := range frags {
		last := i == len(frags)-1
		if f.Ensemble&b == 0 {
			continue
		}
		if last && s.MetaStatus == StatusClosed && s.MetaLastEntry < f.First {
			continue
		}
		if last && s.MetaStatus != StatusClosed || !g.p.Striped() {
			return true
		}
		end := s.MetaLastEntry
		if !last {
			end = frags[i+1].First - 1
		}
		for id := f.First; id <= end; id++ {
			if g.p.WriteSet(id, f)&b != 0 {
				return true
			}
		}
	}
	return false
}
