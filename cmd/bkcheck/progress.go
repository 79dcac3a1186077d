package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
)

// progress reports a running search: a live status line on a terminal,
// a plain line every interval elsewhere, a JSON event every interval with
// --json. It is called from the search goroutine only.
type progress struct {
	r         *reporter
	tty       bool
	interval  time.Duration
	last      time.Time
	lastStats explorer.Stats
	shown     bool // a live line is on screen
	// noun is what the distinct count counts: "distinct" states, or
	// "orbits" under symmetry (rateNoun).
	noun string
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func newProgress(r *reporter, interval time.Duration, sym spec.Symmetry) *progress {
	p := &progress{r: r, tty: !r.json && isTerminal(r.stderr), interval: interval, last: time.Now(), noun: "distinct"}
	if sym != (spec.Symmetry{}) {
		p.noun = "orbits"
	}
	if p.tty {
		p.interval = 250 * time.Millisecond
	}
	return p
}

// every is how often the explorer should call back.
func (p *progress) every() time.Duration { return p.interval }

func (p *progress) report(st explorer.Stats) {
	sampleAnon()
	now := time.Now()
	dt := now.Sub(p.last)
	if dt < p.interval {
		return
	}
	rate := float64(st.Distinct-p.lastStats.Distinct) / dt.Seconds()
	p.last, p.lastStats = now, st
	rss := residentBytes()
	switch {
	case p.r.json:
		p.r.enc.Encode(map[string]any{
			"type": "progress", "depth": st.Depth, "distinct": st.Distinct, "generated": st.Generated,
			"queue": st.Queue, "distinct-per-s": rate, "elapsed-s": st.Elapsed.Seconds(), "rss-bytes": rss,
		})
	case p.tty:
		fmt.Fprintf(p.r.stderr, "\r\x1b[Kdepth %d | %s %s | generated %s | queue %s | %s %s/s | %s | mem %s",
			st.Depth, p.noun, group(st.Distinct), group(st.Generated), group(st.Queue), group(int64(rate)), p.rateNoun(),
			st.Elapsed.Round(time.Second), humanBytes(rss))
		p.shown = true
	default:
		fmt.Fprintf(p.r.stderr, "progress: depth %d, %s %s, %s generated, %s queued, %s %s/s, %s elapsed, %s resident\n",
			st.Depth, group(st.Distinct), p.noun, group(st.Generated), group(st.Queue), group(int64(rate)), p.rateNoun(),
			st.Elapsed.Round(time.Second), humanBytes(rss))
	}
}

// rateNoun is what the rate counts per second.
func (p *progress) rateNoun() string {
	if p.noun == "orbits" {
		return "orbits"
	}
	return "distinct states"
}

// done clears the live line before the result is printed.
func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.r.stderr, "\r\x1b[K")
		p.shown = false
	}
}

// residentBytes is the process's resident set size (Linux), or 0.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// peakAnon is the highest anonymous resident memory sampled (at every
// progress call and at the end). Anonymous memory is what the process
// itself holds; the rest of the resident set is file pages Badger maps,
// which the kernel can drop under pressure.
var peakAnon int64

func sampleAnon() {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "RssAnon:") {
			if f := strings.Fields(line); len(f) >= 2 {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				peakAnon = max(peakAnon, kb<<10)
			}
		}
	}
}

// peakResidentBytes is the high-water mark of the resident set (Linux VmHWM), or 0.
func peakResidentBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%d KiB", n>>10)
	}
}

// group writes n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
