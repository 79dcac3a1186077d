package bridge

// schedule orders a trace's steps as BookKeeper can take them. Java's
// sequence read sends a later replica's read only when the earlier ones
// missed, and not at all once the entry is decided. A step on such a read
// waits (with the steps that consume what it sends), and the steps after
// it that do not depend on it go first: the same behaviour up to the order
// of independent steps. A waiting step whose read Java will never send is
// not taken in BookKeeper (Result.Skipped), nor is a step that consumes
// what such a step sent. States are compared whenever no step waits.
type schedule struct {
	states   []itfState
	java     sequenceReads
	deferred []int
	// phantom: the messages of steps not taken in BookKeeper, by key.
	phantom map[string]bool
}

// sequenceReads is what the schedule asks of the run about Java's
// sequence reads (run.waits, run.neverSent): whether the read a step
// handles is not sent yet, and whether it never will be.
type sequenceReads interface {
	waits(prev, next itfState) bool
	neverSent(prev, next itfState) bool
}

// Why a waiting step is not taken in BookKeeper.
const (
	skipPhantom = "it takes the answer of a step not taken in BookKeeper"
	skipDecided = "its sequence read had decided the entry without this replica"
	skipEnded   = "Java's sequence read asks this replica only after the earlier ones answer, and the trace ends before they do"
)

func newSchedule(states []itfState, java sequenceReads) *schedule {
	return &schedule{states: states, java: java, phantom: map[string]bool{}}
}

// arrive says whether step i (from states[i-1] to states[i]) is taken now;
// if not, it waits.
func (s *schedule) arrive(i int) bool {
	if s.java.waits(s.states[i-1], s.states[i]) || s.dependsOnWaiting(i, s.deferred) {
		s.deferred = append(s.deferred, i)
		return false
	}
	return true
}

// waiting says whether a step waits.
func (s *schedule) waiting() bool { return len(s.deferred) > 0 }

// next is the waiting step to take now, or to skip (skip says why), and
// false when none can go yet. final: the trace has no more steps, so
// every waiting step goes, taken or skipped. The caller takes the step
// before it asks again: taking it may let others go.
func (s *schedule) next(final bool) (d int, skip string, ok bool) {
	for j, d := range s.deferred {
		if s.dependsOnWaiting(d, s.deferred[:j]) {
			continue
		}
		prev, next := s.states[d-1], s.states[d]
		switch {
		case consumesAny(prev, next, s.phantom):
			skip = skipPhantom
		case s.java.neverSent(prev, next):
			skip = skipDecided
		case final && s.java.waits(prev, next):
			skip = skipEnded
		case s.java.waits(prev, next):
			continue
		}
		if skip != "" {
			for _, m := range sentAt(prev, next) {
				s.phantom[m.key()] = true
			}
		}
		s.deferred = append(s.deferred[:j], s.deferred[j+1:]...)
		return d, skip, true
	}
	return 0, "", false
}

// dependsOnWaiting says whether step i consumes what one of the steps
// before it among waiting sends.
func (s *schedule) dependsOnWaiting(i int, waiting []int) bool {
	for _, d := range waiting {
		if d < i && feeds(s.states[d-1], s.states[d], s.states[i-1], s.states[i]) {
			return true
		}
	}
	return false
}
