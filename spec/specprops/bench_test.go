package specprops

import (
	"testing"

	"github.com/bkcheck/bkcheck/spec"
	"github.com/bkcheck/bkcheck/spec/invariants"
)

// BenchmarkBuiltins: the cost of one evaluation of each built-in's CEL form
// and of its compiled form, over states of random walks of the
// --bookies 2 -w 2 -a 2 model.
func BenchmarkBuiltins(b *testing.B) {
	p := spec.DefaultParams()
	p.AckQuorum = 2
	p.EnsureDefaults()
	states, _ := sampleStates(b, p, 300)
	for _, name := range invariants.Default {
		bi, _ := BuiltinByName(name)
		set, err := Compile(p, bi.Defs(""))
		if err != nil {
			b.Fatal(err)
		}
		ev, err := set.NewEvaluator()
		if err != nil {
			b.Fatal(err)
		}
		invs, _ := invariants.Lookup([]string{name})
		b.Run(name+"/cel", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				ev.Load(&states[i%len(states)])
				if _, err := ev.Holds(0); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/compiled", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				invs[0].Holds(&p, &states[i%len(states)])
			}
		})
	}
}
