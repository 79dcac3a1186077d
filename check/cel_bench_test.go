package check_test

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/bkcheck/bkcheck/check"
	"github.com/bkcheck/bkcheck/explorer"
	"github.com/bkcheck/bkcheck/spec"
)

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCELvsCompiled searches the 1,795,149-state model (--bookies 2
// -w 2 -a 2, 2 workers) with the shipped cfg's invariants compiled, and
// with the same invariants in CEL (their CEL forms, --invariants none),
// alternating the two in every iteration so that both see the same
// machine. It reports the median of each: distinct states per second of
// wall time and CPU time per state (less sensitive to a busy machine),
// and their ratios. docs/performance.md quotes it:
//
//	go test ./check -run XXX -bench CELvsCompiled -benchtime 5x
func BenchmarkCELvsCompiled(b *testing.B) {
	cfg := check.DefaultConfig()
	cfg.Params = spec.Params{Bookies: 2, Clients: 2, WriteQuorum: 2, AckQuorum: 2, Entries: 1, Inflight: 1}
	cfg.Workers = 2
	cfg.EnsureDefaults()
	cel := inCEL(&testing.T{}, cfg)
	var rate, cpu [2][]float64
	for i := 0; i < b.N; i++ {
		for k, c := range []check.Config{cfg, cel} {
			start, startCPU := time.Now(), cpuTime()
			rep, err := check.Run(context.Background(), c)
			if err != nil || rep.Status != explorer.OK || rep.Distinct != 1795149 {
				b.Fatal(err, rep.Status, rep.Distinct)
			}
			rate[k] = append(rate[k], float64(rep.Distinct)/time.Since(start).Seconds())
			cpu[k] = append(cpu[k], float64((cpuTime()-startCPU).Nanoseconds())/float64(rep.Distinct))
		}
	}
	med := func(xs []float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	b.ReportMetric(med(rate[0]), "compiled-states/s")
	b.ReportMetric(med(rate[1]), "cel-states/s")
	b.ReportMetric(med(cpu[0]), "compiled-cpu-ns/state")
	b.ReportMetric(med(cpu[1]), "cel-cpu-ns/state")
	b.ReportMetric(med(rate[0])/med(rate[1]), "wall-slowdown")
	b.ReportMetric(med(cpu[1])/med(cpu[0]), "cpu-slowdown")
}
