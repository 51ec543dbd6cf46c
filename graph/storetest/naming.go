package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// testNaming checks that two different signatures never block each other:
// the store refuses a name held by another signature without writing
// anything (also when both captures race), and the service's naming rule
// (signature.Names) gives colliding Bamboo names distinct names whatever
// the order of the captures.
func testNaming(t *testing.T, newStore NewStore) {
	sigX := []string{"tool_x"}
	t.Run("a name held by another signature is a conflict and writes nothing", func(t *testing.T) {
		s := newStore(t)
		MustCapture(t, s, In(sigAB, "h1", "k1", At(0)))
		in := WithCause(In(sigX, "h2", "k2", At(1)), "c1", "d")
		in.Name = NameOf(sigAB...)
		_, err := s.Capture(ctx, in)
		if e := RequireCode(t, err, fault.CodeConflict); e.Details["reason"] != audit.ReasonSignatureMismatch {
			t.Fatalf("details = %v, want reason %s", e.Details, audit.ReasonSignatureMismatch)
		}
		p := MustGet(t, s, NameOf(sigAB...))
		requireEqual(t, "signature", p.Signature, sigAB)
		if p.Frequency != 1 || len(p.Causes) != 0 || !Ms(p.UpdatedAt).Equal(Ms(At(0))) {
			t.Errorf("frequency %d, causes %v, updated %v; want 1, none, %v", p.Frequency, p.Causes, p.UpdatedAt, Ms(At(0)))
		}
		if vs, err := s.Versions(ctx, p.Name); err != nil || len(vs) != 1 || vs[0].CodeHash != "h1" {
			t.Errorf("Versions = %+v, %v; want h1 only", vs, err)
		}
		if cs, err := s.Causes(ctx); err != nil || len(cs) != 0 {
			t.Errorf("Causes = %+v, %v; want none", cs, err)
		}
		if !MustCapture(t, s, In(sigAB, "h1", "k2", At(2))).Counted {
			t.Error("the refused capture's usage key was counted")
		}
	})

	t.Run("two signatures racing for one name: one wins, the other writes nothing", func(t *testing.T) {
		s := newStore(t)
		const rounds = 8
		for r := range rounds {
			name := fmt.Sprintf("proc__race%d", r)
			sigs := [][]string{{fmt.Sprintf("a%d", r)}, {fmt.Sprintf("b%d", r)}}
			if r%2 == 1 {
				sigs[0], sigs[1] = sigs[1], sigs[0]
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, sig := range sigs {
				wg.Go(func() {
					in := In(sig, "h", fmt.Sprintf("k%d", i), At(r))
					in.Name = name
					_, errs[i] = s.Capture(ctx, in)
				})
			}
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil:
					winner = i
				case fault.ErrorCode(err) != fault.CodeConflict:
					t.Fatalf("round %d: Capture: %v", r, err)
				}
			}
			if winner < 0 || errs[1-winner] == nil {
				t.Fatalf("round %d: errors %v, want exactly one conflict", r, errs)
			}
			p := MustGet(t, s, name)
			if !slices.Equal(p.Signature, sigs[winner]) || p.Frequency != 1 {
				t.Fatalf("round %d: stored %v with frequency %d, want the winner %v once", r, p.Signature, p.Frequency, sigs[winner])
			}
		}
	})

	t.Run("colliding Bamboo names get distinct names in either order", func(t *testing.T) {
		for _, order := range []string{"legit first", "squat first"} {
			t.Run(order, func(t *testing.T) {
				store := newStore(t)
				svc := namingService(t, store)
				codes := []string{legitCode, squatCode}
				if order == "squat first" {
					codes[0], codes[1] = codes[1], codes[0]
				}
				got := map[string]string{}
				for i, code := range codes {
					out := mustServiceCapture(t, svc, code, fmt.Sprintf("k%d", i))
					if !out.Created {
						t.Fatalf("capture of %q did not create a procedure (it went to %s)", code, out.Procedure.Name)
					}
					got[code] = out.Procedure.Name
				}
				requireNames(t, svc, store, got)
			})
		}
	})

	t.Run("colliding captures at once", func(t *testing.T) {
		store := newStore(t)
		svc := namingService(t, store)
		codes := []string{legitCode, squatCode,
			"return tools.kéll_job()", "return tools.k\u0456ll_job()", "return tools.k_ll_job()", "return tools.kill_job()"}
		const each = 4
		var wg sync.WaitGroup
		var mu sync.Mutex
		got := map[string]string{}
		errs := make(chan error, len(codes)*each)
		for i := range each {
			for j, code := range codes {
				wg.Go(func() {
					out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: code, SessionID: fmt.Sprintf("k%d-%d", i, j)})
					if err != nil {
						errs <- fmt.Errorf("%q: %w", code, err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if n, ok := got[code]; ok && n != out.Procedure.Name {
						errs <- fmt.Errorf("%q captured as %s and %s", code, n, out.Procedure.Name)
					}
					got[code] = out.Procedure.Name
				})
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		requireNames(t, svc, store, got)
		for code, name := range got {
			if p := MustGet(t, store, name); p.Frequency != each {
				t.Errorf("%q: frequency %d, want %d", code, p.Frequency, each)
			}
		}
		if _, total := MustFind(t, store, procedures.Query{}); total != len(codes) {
			t.Errorf("Find total = %d, want %d procedures", total, len(codes))
		}
	})

	t.Run("a long signature whose Bamboo name is taken gets its hashed name", func(t *testing.T) {
		s := newStore(t)
		svc := namingService(t, s)
		legit := analyse(t, longCode).Signature
		bamboo := signature.ProcedureName(legit)
		squat := In([]string{"squatter"}, "hs", "ks", At(0))
		squat.Name = bamboo // a 32-bit collision found by brute force, or stored before the rule
		MustCapture(t, s, squat)
		for i := range 2 {
			out := mustServiceCapture(t, svc, longCode, fmt.Sprintf("k%d", i))
			if out.Procedure.Name != signature.HashedName(legit) || out.Created != (i == 0) {
				t.Fatalf("capture %d: %s (created %v), want %s", i, out.Procedure.Name, out.Created, signature.HashedName(legit))
			}
		}
		requireEqual(t, "squatter signature", MustGet(t, s, bamboo).Signature, []string{"squatter"})
	})

	t.Run("a procedure keeps its name when the catalogue changes", func(t *testing.T) {
		s := newStore(t)
		svc := procedures.NewService(s, procedures.Options{})
		legit := analyse(t, longCode).Signature
		putTools(t, svc, legit[:len(legit)-1]) // one tool unlisted: the hashed name
		first := mustServiceCapture(t, svc, longCode, "k0").Procedure.Name
		if first != signature.HashedName(legit) {
			t.Fatalf("captured as %s with a tool unlisted, want %s", first, signature.HashedName(legit))
		}
		putTools(t, svc, legit) // now every tool is listed: its Bamboo name is free
		out := mustServiceCapture(t, svc, longCode, "k1")
		if out.Procedure.Name != first || out.Created || out.Procedure.Frequency != 2 {
			t.Fatalf("recaptured as %s (created %v, frequency %d), want %s, not created, 2", out.Procedure.Name, out.Created, out.Procedure.Frequency, first)
		}

		s2 := newStore(t)
		svc2 := namingService(t, s2) // every tool listed: the Bamboo name
		first = mustServiceCapture(t, svc2, longCode, "k0").Procedure.Name
		if first != signature.ProcedureName(legit) {
			t.Fatalf("captured as %s with every tool listed, want %s", first, signature.ProcedureName(legit))
		}
		putTools(t, svc2, nil)
		if out := mustServiceCapture(t, svc2, longCode, "k1"); out.Procedure.Name != first || out.Created {
			t.Fatalf("recaptured as %s (created %v) after the catalogue emptied, want %s", out.Procedure.Name, out.Created, first)
		}
	})

	t.Run("a procedure stored under its Bamboo name before the rule keeps it", func(t *testing.T) {
		s := newStore(t)
		svc := namingService(t, s)
		for i, code := range []string{squatCode, "return tools.kéll_job()"} {
			sig := analyse(t, code).Signature
			old := In(sig, "old", fmt.Sprintf("old%d", i), At(0))
			old.Name = signature.ProcedureName(sig)
			MustCapture(t, s, old)
			out := mustServiceCapture(t, svc, code, fmt.Sprintf("k%d", i))
			if out.Procedure.Name != old.Name || out.Created || out.Procedure.Frequency != 2 {
				t.Fatalf("%q captured as %s (created %v, frequency %d), want its stored %s", code, out.Procedure.Name, out.Created, out.Procedure.Frequency, old.Name)
			}
		}
		// The legitimate pair finds its Bamboo name held (the old squat) and
		// takes its hashed name instead of failing.
		out := mustServiceCapture(t, svc, legitCode, "k9")
		if sig := analyse(t, legitCode).Signature; out.Procedure.Name != signature.HashedName(sig) || !out.Created {
			t.Fatalf("legit captured as %s (created %v), want %s", out.Procedure.Name, out.Created, signature.HashedName(sig))
		}
	})
}

// The blocks of the reproduction: the legitimate pair and the
// single invented tool whose Bamboo name is the pair's.
const (
	legitCode = "d = tools.get_task_input_datasets(task_id=task_id)\nreturn tools.search_panda_docs(query=str(d))"
	squatCode = "return tools.get_task_input_datasets__search_panda_docs(task_id=task_id)"
	longCode  = "a = tools.compare_failed_vs_successful_job_logs(task_id=task_id)\n" +
		"b = tools.find_similar_successful_tasks(task_id=task_id)\n" +
		"return [a, b, tools.get_failed_job_log_summary(task_id=task_id)]"
)

// namingService returns a service over s whose catalogue lists every tool of
// the naming cases.
func namingService(t *testing.T, s procedures.Store) *procedures.Service {
	t.Helper()
	svc := procedures.NewService(s, procedures.Options{})
	putTools(t, svc, append(analyse(t, legitCode).Signature, append(analyse(t, longCode).Signature, "kill_job")...))
	return svc
}

func putTools(t *testing.T, svc *procedures.Service, names []string) {
	t.Helper()
	tools := make([]procedures.Tool, len(names))
	for i, n := range names {
		tools[i] = procedures.Tool{Name: n, ReadOnly: true}
	}
	if _, err := svc.PutCatalogue(ctx, tools, "storetest"); err != nil {
		t.Fatalf("PutCatalogue: %v", err)
	}
}

func analyse(t *testing.T, code string) *signature.Analysis {
	t.Helper()
	a, err := signature.Analyze(code, signature.Starlark)
	if err != nil {
		t.Fatalf("Analyze(%q): %v", code, err)
	}
	return a
}

func mustServiceCapture(t *testing.T, svc *procedures.Service, code, session string) procedures.CaptureOutcome {
	t.Helper()
	out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: code, SessionID: session})
	if err != nil {
		t.Fatalf("Capture(%q): %v", code, err)
	}
	return out
}

// requireNames checks that got (code → name) gives every block a distinct
// name, the one of signature.Names for its signature against the naming
// catalogue, and that each stored procedure has its block's signature.
func requireNames(t *testing.T, svc *procedures.Service, store procedures.Store, got map[string]string) {
	t.Helper()
	cat, err := svc.Catalogue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for code, name := range got {
		sig := analyse(t, code).Signature
		want := signature.Names(sig, cat.Has)[0]
		if name != want {
			t.Errorf("%q is named %s, want %s", code, name, want)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("%q and %q share the name %s", code, other, name)
		}
		seen[name] = code
		requireEqual(t, name+" signature", MustGet(t, store, name).Signature, sig)
	}
}
