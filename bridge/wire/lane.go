package wire

import "fmt"

// A Lane is one connection's frames in one direction that were read and
// not yet forwarded, oldest first, with the promise TCP keeps for them: a
// connection delivers its frames in the order they were sent, or, from
// some frame on, nothing more (the connection stalls: the network holds
// that frame and every frame behind it) until it closes. It never loses
// one frame and delivers the next, so a lost message of the model is a
// stalled frame here, not a discarded one: only closing the connection
// (a crash, CloseLinks) ends the stall, and the client then fails every
// request outstanding on it (PerChannelBookieClient.channelInactive).
//
// The proxy keeps a Lane for each link and direction; the bridge's fake
// BookKeeper (bridge/transcript_test.go) keeps the same, so that a test
// without a JVM refuses what the proxy refuses.
type Lane struct {
	frames  []*Frame
	stalled *Frame // the oldest stalled frame; nil while the lane flows
}

// OutOfOrderError refuses to deliver Frame while Older, read before it on
// the same connection in the same direction, is still held: TCP delivers
// a connection's frames in the order they were sent.
type OutOfOrderError struct{ Frame, Older *Frame }

func (e *OutOfOrderError) Error() string {
	return fmt.Sprintf("frame %v cannot be delivered before frame %v, held ahead of it on the same connection", e.Frame, e.Older)
}

// StalledError refuses to deliver Frame: its connection stalled at frame
// Stalled (Frame itself, or one read before it in the same direction),
// which the network never delivers. Only closing the connection ends a
// stall.
type StalledError struct{ Frame, Stalled *Frame }

func (e *StalledError) Error() string {
	if e.Frame == e.Stalled {
		return fmt.Sprintf("frame %v cannot be delivered: the connection stalled at it", e.Frame)
	}
	return fmt.Sprintf("frame %v cannot be delivered: the connection stalled at frame %v, ahead of it", e.Frame, e.Stalled)
}

// Add appends a frame just read.
func (l *Lane) Add(f *Frame) { l.frames = append(l.frames, f) }

// Stall makes f a frame the network never delivers: from now on f and
// every frame behind it are undeliverable. It reports whether f is in the
// lane.
func (l *Lane) Stall(f *Frame) bool {
	i := l.index(f)
	if i < 0 {
		return false
	}
	if l.stalled == nil || i < l.index(l.stalled) {
		l.stalled = f
	}
	return true
}

// Take removes f from the lane to deliver it: only the oldest frame goes,
// and none at or behind a stalled one.
func (l *Lane) Take(f *Frame) error {
	i := l.index(f)
	switch {
	case i < 0:
		return fmt.Errorf("frame %v is not held", f)
	case l.stalled != nil && i >= l.index(l.stalled):
		return &StalledError{Frame: f, Stalled: l.stalled}
	case i > 0:
		return &OutOfOrderError{Frame: f, Older: l.frames[0]}
	}
	l.frames = l.frames[1:]
	return nil
}

// passing removes and returns the frames at the head of the lane that the
// proxy forwards without the harness (pass): they were waiting only for
// the frames ahead of them.
func (l *Lane) passing() []*Frame {
	var out []*Frame
	for len(l.frames) > 0 && l.frames[0].pass {
		out = append(out, l.frames[0])
		l.frames = l.frames[1:]
	}
	return out
}

func (l *Lane) index(f *Frame) int {
	for i, g := range l.frames {
		if g == f {
			return i
		}
	}
	return -1
}
