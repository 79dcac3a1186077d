package state

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortFPs: the radix sort agrees with a comparison sort on random,
// clustered and repeated fingerprints of every size.
func TestSortFPs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 3))
	for _, n := range []int{0, 1, 2, 63, 64, 65, 1000, 100000} {
		for _, kind := range []string{"random", "clustered", "repeated-hi"} {
			a := make([]FP, n)
			for i := range a {
				switch kind {
				case "random":
					a[i] = FP{r.Uint64(), r.Uint64()}
				case "clustered":
					a[i] = FP{0xAB00000000000000 | r.Uint64N(1<<20), r.Uint64()}
				default:
					a[i] = FP{r.Uint64N(5) << 60, r.Uint64N(3)}
				}
			}
			want := slices.Clone(a)
			slices.SortFunc(want, FP.Compare)
			b := slices.Clone(a)
			SortFPs(a)
			SortFPsParallel(b, 3)
			if !slices.Equal(a, want) || !slices.Equal(b, want) {
				t.Fatalf("%d %s: not sorted", n, kind)
			}
		}
	}
}

func BenchmarkSortFPs(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 3))
	a := make([]FP, 1<<20)
	for range b.N {
		b.StopTimer()
		for i := range a {
			a[i] = FP{r.Uint64(), r.Uint64()}
		}
		b.StartTimer()
		SortFPs(a)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(a)), "ns/fp")
}

func BenchmarkSortFPsFunc(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 3))
	a := make([]FP, 1<<20)
	for range b.N {
		b.StopTimer()
		for i := range a {
			a[i] = FP{r.Uint64(), r.Uint64()}
		}
		b.StartTimer()
		slices.SortFunc(a, FP.Compare)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(a)), "ns/fp")
}
