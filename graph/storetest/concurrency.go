package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

func testConcurrency(t *testing.T, newStore NewStore) {
	name := NameOf(sigAB...)

	t.Run("distinct usage keys all count", func(t *testing.T) {
		s := newStore(t)
		const n = 64
		var wg sync.WaitGroup
		var created, counted atomic.Int64
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Go(func() {
				in := WithCause(In(sigAB, fmt.Sprintf("h%d", i%4), fmt.Sprintf("k%d", i), At(i)), "c1", "")
				res, err := s.Capture(ctx, in)
				if err != nil {
					errs <- err
					return
				}
				if res.Created {
					created.Add(1)
				}
				if res.Counted {
					counted.Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("Capture: %v", err)
		}
		if created.Load() != 1 || counted.Load() != n {
			t.Errorf("Created %d times, Counted %d times; want 1, %d", created.Load(), counted.Load(), n)
		}
		p := MustGet(t, s, name)
		if p.Frequency != n {
			t.Errorf("frequency = %d, want %d", p.Frequency, n)
		}
		if f, _ := causeLink(p, "c1"); f != n {
			t.Errorf("edge frequency = %d, want %d", f, n)
		}
		if _, total := MustFind(t, s, procedures.Query{}); total != 1 {
			t.Errorf("Find total = %d, want 1", total)
		}
		vs, err := s.Versions(ctx, name)
		if err != nil || len(vs) != 4 {
			t.Fatalf("Versions = %v, %v", vs, err)
		}
		var sum int64
		for _, v := range vs {
			sum += v.Frequency
		}
		if sum != n {
			t.Errorf("version frequencies sum to %d, want %d", sum, n)
		}
	})

	t.Run("same usage key counts once", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k0", At(0)))
		const n = 20
		var wg sync.WaitGroup
		var counted atomic.Int64
		for i := 0; i < n; i++ {
			wg.Go(func() {
				var res procedures.CaptureResult
				var err error
				if i%2 == 0 {
					res, err = s.Capture(ctx, In(sigAB, "h1", "same", At(i)))
				} else {
					var u procedures.UseResult
					u, err = s.RecordUse(ctx, use(name, "", "same", true, At(i)))
					res.Counted = u.Counted
				}
				if err != nil {
					t.Errorf("capture or use: %v", err)
				}
				if res.Counted {
					counted.Add(1)
				}
			})
		}
		wg.Wait()
		if counted.Load() != 1 {
			t.Errorf("Counted %d times, want 1", counted.Load())
		}
		p := MustGet(t, s, name)
		if p.Frequency != 2 || p.UseCount != n/2 {
			t.Errorf("frequency %d use count %d, want 2 and %d", p.Frequency, p.UseCount, n/2)
		}
	})

	t.Run("new procedures of one class from 16 clients count exactly", func(t *testing.T) { testRacingNew(t, newStore(t)) })
	t.Run("grants and promotions stay consistent with captures", func(t *testing.T) { testRacingGrants(t, newStore(t)) })
	t.Run("concurrent catalogue puts never mix", func(t *testing.T) { testRacingCatalogues(t, newStore(t)) })
}

// testRacingGrants captures new versions while promoting and granting.
func testRacingGrants(t *testing.T, s procedures.Store) {
	name := NameOf(sigAB...)
	MustCapture(t, s, In(sigAB, "h0", "k0", At(0)))
	MustCapture(t, s, Failed(In(sigAB, "bad", "k0", At(0))))
	const rounds = 6
	var wg sync.WaitGroup
	var promoted, granted, conflicts atomic.Int64
	var everCurrent sync.Map
	everCurrent.Store("h0", true)
	for g := 0; g < 4; g++ {
		wg.Go(func() { // capturers
			for i := 0; i < rounds; i++ {
				in := In(sigAB, fmt.Sprintf("h%d_%d", g, i), fmt.Sprintf("k%d_%d", g, i), At(i))
				if i%3 == 2 {
					in = Failed(in)
				}
				if _, err := s.Capture(ctx, in); err != nil {
					t.Errorf("Capture: %v", err)
				}
			}
		})
	}
	for g := 0; g < 2; g++ {
		wg.Go(func() { // promoters
			for i := 0; i < rounds; i++ {
				idx := i / 2
				hash := fmt.Sprintf("h%d_%d", g+1, idx)
				if i%3 == 1 {
					hash = "bad"
				}
				_, err := s.Promote(ctx, name, hash, Decision(audit.KindPromote, name, hash, At(100+i)))
				switch fault.ErrorCode(err) {
				case "":
					everCurrent.Store(hash, true)
					promoted.Add(1)
				case fault.CodeNotFound: // not captured yet
				case fault.CodeConflict:
					if hash != "bad" && idx%3 != 2 {
						t.Errorf("promote %s: %v", hash, err)
					}
				default:
					t.Errorf("promote %s: %v", hash, err)
				}
			}
		})
	}
	for g := 0; g < 2; g++ {
		wg.Go(func() { // granters
			for i := 0; i < rounds; i++ {
				p, err := s.Get(ctx, name)
				if err != nil {
					t.Errorf("Get: %v", err)
					return
				}
				gr := &procedures.Grant{Enabled: true, GrantedBy: "op", GrantedAt: At(200 + i)}
				_, err = s.SetGrant(ctx, name, gr, p.CodeHash, nil, Decision(audit.KindGrant, name, p.CodeHash, At(200+i)))
				switch fault.ErrorCode(err) {
				case "":
					granted.Add(1)
				case fault.CodeConflict:
					conflicts.Add(1)
					if e := RequireCode(t, err, fault.CodeConflict); e.Details["reason"] != audit.ReasonCodeChanged {
						t.Errorf("conflict details = %v", e.Details)
					}
				default:
					t.Errorf("SetGrant: %v", err)
				}
			}
		})
	}
	wg.Wait()

	p := MustGet(t, s, name)
	cur := MustVersion(t, s, name, p.CodeHash)
	if !cur.Current || cur.Status != procedures.StatusSucceeded {
		t.Errorf("current version %s: current %v status %s", p.CodeHash, cur.Current, cur.Status)
	}
	if _, ok := everCurrent.Load(p.CodeHash); !ok {
		t.Errorf("current hash %s was never initial nor promoted", p.CodeHash)
	}
	if p.Grant != nil {
		if _, ok := everCurrent.Load(p.Grant.CodeHash); !ok {
			t.Errorf("grant bound to %s, which was never current", p.Grant.CodeHash)
		}
	}
	ds := MustDecisions(t, s, audit.DecisionFilter{Procedure: name, Limit: 1000})
	var nPromote, nGrant int64
	for _, d := range ds {
		switch d.Kind {
		case audit.KindPromote:
			nPromote++
		case audit.KindGrant:
			nGrant++
			if _, ok := everCurrent.Load(d.CodeHash); !ok {
				t.Errorf("grant decision for %s, which was never current", d.CodeHash)
			}
		}
	}
	if nPromote != promoted.Load() || nGrant != granted.Load() {
		t.Errorf("decisions: %d promote, %d grant; successful calls: %d promote, %d grant", nPromote, nGrant, promoted.Load(), granted.Load())
	}
	if vs, err := s.Versions(ctx, name); err != nil || len(vs) != 4*rounds+2 {
		t.Errorf("Versions = %d, %v; want %d", len(vs), err, 4*rounds+2)
	}
	t.Logf("%d promotions, %d grants, %d grant conflicts", promoted.Load(), granted.Load(), conflicts.Load())
}

// testRacingCatalogues puts two disjoint catalogues at once, again and
// again: the stored one is always exactly one of them (a mixture could
// leave a tool read-only that neither lists).
func testRacingCatalogues(t *testing.T, s procedures.Store) {
	mk := func(prefix string) *procedures.Catalogue {
		var tools []procedures.Tool
		for i := 0; i < 5; i++ {
			tools = append(tools, procedures.Tool{Name: fmt.Sprintf("%s%d", prefix, i), ReadOnly: true})
		}
		c, err := procedures.NewCatalogue(tools)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := mk("a"), mk("b")
	toolNames := func(c *procedures.Catalogue) string {
		var out string
		for _, tool := range c.Tools {
			out += tool.Name + ","
		}
		return out
	}
	for round := 0; round < 8; round++ {
		var wg sync.WaitGroup
		for _, c := range []*procedures.Catalogue{a, b} {
			wg.Go(func() {
				if err := s.PutCatalogue(ctx, c); err != nil {
					t.Errorf("PutCatalogue: %v", err)
				}
			})
		}
		wg.Wait()
		got, err := s.Catalogue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case got.Revision == a.Revision && toolNames(got) == toolNames(a):
		case got.Revision == b.Revision && toolNames(got) == toolNames(b):
		default:
			t.Fatalf("round %d: stored catalogue %s (revision %s) is neither A nor B", round, toolNames(got), got.Revision)
		}
	}
}

// testRacingNew captures new procedures of one class, all calling one
// tool, from 16 goroutines at once, some of them failed (another class)
// and made succeeded (a succeeded capture) while others are captured:
// every total Find reads from counts is then exact.
func testRacingNew(t *testing.T, s procedures.Store) {
	const clients, each = 16, 4
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				in := In([]string{fmt.Sprintf("tool_%d_%d", c, i), "tool_z"}, "h", "k", At(i))
				if i == each-1 {
					in = Failed(in)
				}
				if _, err := s.Capture(ctx, in); err != nil {
					t.Errorf("Capture: %v", err)
					return
				}
				if i == each-1 && c%2 == 0 {
					if _, err := s.Capture(ctx, In(in.Signature, "h2", "k2", At(i+1))); err != nil {
						t.Errorf("Capture: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	if _, total := MustFind(t, s, procedures.Query{Tools: []string{"tool_z"}}); total != clients*each {
		t.Errorf("Find(tool_z) total = %d, want %d", total, clients*each)
	}
	// By status, from the class counts (a page of one: not counted from
	// the page): the promoted ones left the failed class.
	failed := clients / 2
	for status, want := range map[procedures.Status]int{procedures.StatusSucceeded: clients*each - failed, procedures.StatusFailed: failed} {
		if _, total := MustFind(t, s, procedures.Query{Status: status, Limit: 1}); total != want {
			t.Errorf("Find(status %s) total = %d, want %d", status, total, want)
		}
	}
	RequireToolTotals(t, s, "after 16 clients")
}
