package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
)

// chainTools is the catalogue of the nesting-chain cases: t0..t3 read-only,
// w0 state-changing (read-only when w0ReadOnly), x0 not in it.
func chainTools(w0ReadOnly bool) []procedures.Tool {
	return []procedures.Tool{
		{Name: "t0", ReadOnly: true}, {Name: "t1", ReadOnly: true}, {Name: "t2", ReadOnly: true},
		{Name: "t3", ReadOnly: true}, {Name: "w0", ReadOnly: w0ReadOnly},
	}
}

// randomChains captures, in a random order, chains of procedures each
// calling the one before it (a proc__ reference, sometimes beside a tool),
// from 1 to MaxNesting+3 long, some with a state-changing or unknown tool at
// the bottom, some failed or opaque. It returns their names.
func randomChains(t *testing.T, s procedures.Store, rng *rand.Rand) []string {
	t.Helper()
	tools := []string{"t0", "t1", "t2", "t3", "w0", "x0"}
	var ins []procedures.CaptureInput
	for c := 0; c < 6; c++ {
		depth := 1 + rng.IntN(procedures.MaxNesting+3)
		bottom := tools[rng.IntN(4)]
		if rng.IntN(4) == 0 {
			bottom = tools[4+rng.IntN(2)]
		}
		sig := []string{fmt.Sprintf("t%d", c%4), bottom}
		if sig[0] == sig[1] {
			sig = sig[1:]
		}
		slices.Sort(sig)
		for level := 0; level < depth; level++ {
			if level > 0 {
				sig = []string{chainName(c, level-1)}
				if rng.IntN(3) > 0 {
					sig = append(sig, tools[rng.IntN(4)])
				}
				slices.Sort(sig)
			}
			in := In(sig, fmt.Sprintf("h%d", level), fmt.Sprintf("k%d", c), At(c*10+level))
			in.Name = chainName(c, level) // names joined from signatures could collide
			switch rng.IntN(8) {
			case 0:
				in = Failed(in)
			case 1:
				in.Version.Opaque = true
			}
			ins = append(ins, in)
		}
	}
	rng.Shuffle(len(ins), func(i, j int) { ins[i], ins[j] = ins[j], ins[i] })
	var names []string
	for _, in := range ins {
		if r := MustCapture(t, s, in); r.Created {
			names = append(names, in.Name)
		}
	}
	return names
}

func mustCatalogue(tb testing.TB, tools []procedures.Tool) *procedures.Catalogue {
	tb.Helper()
	c, err := procedures.NewCatalogue(tools)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// chainName is the name of the procedure at level of chain c.
func chainName(c, level int) string { return fmt.Sprintf("%sc%d_l%d", procedures.ProcPrefix, c, level) }

// requireFindAgreesWithGet checks, with mutating auto-run off and on, that
// Find's read-only and exposed filters (page and total) select exactly the
// procedures whose Get says so.
func requireFindAgreesWithGet(t *testing.T, s procedures.Store, all []string) {
	t.Helper()
	for _, allow := range []bool{false, true} {
		svc := procedures.NewService(s, procedures.Options{AllowMutatingAutorun: allow})
		want := map[string][]string{}
		for _, name := range all {
			p, err := svc.Get(ctx, name)
			if err != nil {
				t.Fatalf("Get(%s): %v", name, err)
			}
			want[fmt.Sprint("read_only=", p.ReadOnly)] = append(want[fmt.Sprint("read_only=", p.ReadOnly)], name)
			want[fmt.Sprint("exposed=", p.Exposed)] = append(want[fmt.Sprint("exposed=", p.Exposed)], name)
			if p.Problem == audit.ReasonNestingTooDeep && p.ReadOnly {
				t.Errorf("%s: nesting too deep yet read-only", name)
			}
		}
		for _, b := range []bool{true, false} {
			for _, filter := range []string{"read_only", "exposed"} {
				r := procedures.FindRequest{Limit: procedures.MaxFindLimit}
				if filter == "read_only" {
					r.ReadOnly = &b
				} else {
					r.Exposed = &b
				}
				page, total, err := svc.Find(ctx, r)
				if err != nil {
					t.Fatalf("Find(%s=%v): %v", filter, b, err)
				}
				key := fmt.Sprint(filter, "=", b)
				got := names(page)
				slices.Sort(got)
				w := slices.Sorted(slices.Values(want[key]))
				if !slices.Equal(got, w) || total != len(w) {
					t.Errorf("allow mutating %v: Find(%s) = %v (total %d), Get says %v", allow, key, got, total, w)
				}
				for _, p := range page {
					if (filter == "read_only" && p.ReadOnly != b) || (filter == "exposed" && p.Exposed != b) {
						t.Errorf("allow mutating %v: Find(%s) returned %s decorated read_only=%v exposed=%v", allow, key, p.Name, p.ReadOnly, p.Exposed)
					}
				}
			}
		}
	}
}

func testFindAgreesWithGet(t *testing.T, newStore NewStore) {
	t.Run("filters agree with Get on random nesting chains", func(t *testing.T) {
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		for round := 0; round < 3; round++ {
			s := newStore(t)
			rng := rand.New(rand.NewPCG(seed, uint64(round)))
			svc := procedures.NewService(s, procedures.Options{})
			if _, err := svc.PutCatalogue(ctx, chainTools(false), "test"); err != nil {
				t.Fatal(err)
			}
			names := randomChains(t, s, rng)
			requireFindAgreesWithGet(t, s, names)
			// A catalogue change reclassifies what depends on it.
			if _, err := svc.PutCatalogue(ctx, chainTools(true), "test"); err != nil {
				t.Fatal(err)
			}
			requireFindAgreesWithGet(t, s, names)
			if _, err := svc.PutCatalogue(ctx, chainTools(true)[1:], "test"); err != nil {
				t.Fatal(err)
			}
			requireFindAgreesWithGet(t, s, names)
		}
	})

	t.Run("concurrent new procedures and catalogue changes keep classes exact", func(t *testing.T) {
		s := newStore(t)
		svc := procedures.NewService(s, procedures.Options{})
		if _, err := svc.PutCatalogue(ctx, chainTools(false), "test"); err != nil {
			t.Fatal(err)
		}
		// Chains captured top down from many goroutines (a caller often
		// before its callee), while the catalogue flips w0 back and forth.
		var ins []procedures.CaptureInput
		for c := 0; c < 8; c++ {
			bottom := []string{"t0", "w0"}[c%2]
			for level := 5; level >= 0; level-- {
				sig := []string{"t1", bottom}
				if level > 0 {
					sig = []string{chainName(c, level-1), "t2"}
				}
				in := In(sig, "h", fmt.Sprintf("k%d", c), At(level))
				in.Name = chainName(c, level)
				ins = append(ins, in)
			}
		}
		var wg sync.WaitGroup
		var next atomic.Int64
		for g := 0; g < 8; g++ {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= len(ins) {
						return
					}
					if _, err := s.Capture(ctx, ins[i]); err != nil {
						t.Errorf("Capture: %v", err)
						return
					}
				}
			})
		}
		wg.Go(func() {
			for round := 0; round < 6; round++ {
				if err := s.PutCatalogue(ctx, mustCatalogue(t, chainTools(round%2 == 0))); err != nil {
					t.Errorf("PutCatalogue: %v", err)
					return
				}
			}
		})
		wg.Wait()
		var all []string
		for _, in := range ins {
			all = append(all, in.Name)
		}
		requireFindAgreesWithGet(t, s, all)
	})

	t.Run("a chain deeper than the nesting limit is nesting_too_deep, not state-changing", func(t *testing.T) {
		s := newStore(t)
		svc := procedures.NewService(s, procedures.Options{AllowMutatingAutorun: true})
		if _, err := svc.PutCatalogue(ctx, chainTools(false), "test"); err != nil {
			t.Fatal(err)
		}
		sig := []string{"t0", "t1"}
		var chain []string
		for level := 0; level <= procedures.MaxNesting+1; level++ { // six procedures
			if level > 0 {
				sig = []string{NameOf(sig...), "t2"}
			}
			MustCapture(t, s, In(sig, "h", "k", At(level)))
			chain = append(chain, NameOf(sig...))
		}
		for level, name := range chain {
			p, err := svc.Get(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			deep := level > procedures.MaxNesting
			if p.ReadOnly == deep || p.Exposed == deep || (p.Problem == audit.ReasonNestingTooDeep) != deep || len(p.StateChangingTools) != 0 {
				t.Errorf("level %d: read_only %v exposed %v problem %q state-changing %v", level, p.ReadOnly, p.Exposed, p.Problem, p.StateChangingTools)
			}
		}
		requireFindAgreesWithGet(t, s, chain)
	})
}
