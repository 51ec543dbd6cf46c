package procedures_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/reuse"
)

// readCounter counts the reads a request makes of its store, by kind,
// and the captures that asked their store for a page with the write
// (CaptureInput.Page) in paged.
type readCounter struct {
	procedures.Store
	mu    sync.Mutex
	reads map[string]int
	paged atomic.Int64
}

func newReadCounter(s procedures.Store) *readCounter {
	return &readCounter{Store: s, reads: map[string]int{}}
}

func (r *readCounter) count(kind string) {
	r.mu.Lock()
	r.reads[kind]++
	r.mu.Unlock()
}

// take returns the reads counted since the last take.
func (r *readCounter) take() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.reads
	r.reads = map[string]int{}
	return got
}

func (r *readCounter) Catalogue(ctx context.Context) (*procedures.Catalogue, error) {
	r.count("catalogue")
	return r.Store.Catalogue(ctx)
}

func (r *readCounter) Get(ctx context.Context, name string) (*procedures.Procedure, error) {
	r.count("get")
	return r.Store.Get(ctx, name)
}

func (r *readCounter) GetMany(ctx context.Context, names []string) (map[string]*procedures.Procedure, error) {
	r.count("get")
	return r.Store.GetMany(ctx, names)
}

func (r *readCounter) Find(ctx context.Context, q procedures.Query) ([]*procedures.Procedure, int, error) {
	r.count("find")
	return r.Store.Find(ctx, q)
}

func (r *readCounter) Capture(ctx context.Context, in procedures.CaptureInput) (procedures.CaptureResult, error) {
	if in.Page != nil {
		r.paged.Add(1)
	}
	return r.Store.Capture(ctx, in)
}

// TestCaptureReadsNothingItsWriteConfirmed: a capture of a procedure that
// exists, or whose tools keep every holder unexposed (NoneExposedWith),
// reads nothing beside its write — the catalogue it was prepared under is
// the one the write confirmed (CaptureInput.Catalogue) — and a capture of
// a new one asks its store for the suggestion's page with the write
// (CaptureInput.Page), reading nothing after it (ADR 0049).
func TestCaptureReadsNothingItsWriteConfirmed(t *testing.T) {
	ctx := context.Background()
	_, inner := newServiceStore(t, false)
	store := newReadCounter(inner)
	svc := procedures.NewService(store, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{
		{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true}, {Name: "get_runs", ReadOnly: true}, {Name: "kill_job"},
	}, "tester"); err != nil {
		t.Fatal(err)
	}
	warm := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "warm"})
	if !warm.Procedure.Exposed {
		t.Fatalf("%s not exposed", warm.Procedure.Name)
	}
	mustCapture(t, svc, procedures.CaptureRequest{Code: killCode, SessionID: "warm"})
	store.take()
	store.paged.Store(0)

	for _, c := range []struct {
		name, code string
		want       int
	}{
		{"existing, exposed", readOnlyCode, 0},
		{"existing, state-changing (no holder exposed)", killCode, 0},
		{"new, state-changing (no holder exposed)", "a = tools.get_logs(task_id=task_id)\ntools.kill_job(panda_id=a)\n", 0},
	} {
		out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: c.code, SessionID: "s-" + c.name})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := store.take(); len(got) != c.want {
			t.Errorf("%s: reads %v, want none (%+v)", c.name, got, out.Suggestion)
		}
	}

	out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: "a = tools.get_runs(task_id=task_id)\nreturn tools.get_jobs(x=a)\n", SessionID: "new"})
	if err != nil || !out.Created {
		t.Fatalf("capture new: %+v %v", out, err)
	}
	if store.paged.Load() != 1 {
		t.Errorf("the suggestion's page of a new procedure was not asked of the store with its write (%d)", store.paged.Load())
	}
	if got := store.take(); len(got) != 0 {
		t.Errorf("capture new: reads %v, want none (the page read with the write)", got)
	}
	if out.Suggestion != nil {
		t.Errorf("suggestion %+v, want none (no exposed procedure holds both tools but itself)", out.Suggestion)
	}
	// A new procedure whose tools an exposed one holds, and more: the page
	// the write read names it.
	out, err = svc.Capture(ctx, procedures.CaptureRequest{Code: "return tools.get_jobs(task_id=task_id)\n", SessionID: "covered"})
	if err != nil || !out.Created {
		t.Fatalf("capture new, covered: %+v %v", out, err)
	}
	if got := store.take(); len(got) != 0 {
		t.Errorf("capture new, covered: reads %v, want none", got)
	}
	if out.Suggestion == nil || out.Suggestion.Tool != warm.Procedure.Name || out.Suggestion.Reason != reuse.SuggestCoveredBy {
		t.Errorf("capture new, covered: suggestion %+v, want %s covered_by", out.Suggestion, warm.Procedure.Name)
	}
}

// TestGrantPreparedFromWhatTheServiceKnows: a grant and a revoke of a
// procedure the service read or wrote are prepared from it and write
// without reading first (ADR 0047); when another instance changed the
// procedure's current version, its status or the catalogue meanwhile, the
// write refuses and the change is prepared again from a read — bound to
// the current version under the current catalogue, never refused for what
// only the stale knowledge said.
func TestGrantPreparedFromWhatTheServiceKnows(t *testing.T) {
	ctx := context.Background()
	_, inner := newServiceStore(t, false)
	store := newReadCounter(inner)
	svc := procedures.NewService(store, procedures.Options{})
	other := procedures.NewService(inner, procedures.Options{})
	out := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s1"})
	name := out.Procedure.Name
	store.take()

	grant := func(step string, enabled bool) *procedures.Procedure {
		t.Helper()
		p, d, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: name, Enabled: enabled, Actor: "alice"})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if d.Outcome != audit.Allowed || p.AutoRun.Enabled != enabled || (enabled && !p.AutoRun.Active) {
			t.Fatalf("%s: %+v %+v", step, d, p.AutoRun)
		}
		return p
	}
	grant("grant", true)
	if got := store.take(); len(got) != 0 {
		t.Errorf("grant of a procedure the service captured: reads %v, want none", got)
	}
	grant("revoke", false)
	if got := store.take(); len(got) != 0 {
		t.Errorf("revoke: reads %v, want none", got)
	}

	// Another instance changes the catalogue: the grant is prepared again
	// under the new one (its binding's schema hash).
	if _, err := other.PutCatalogue(ctx, []procedures.Tool{
		{Name: "get_jobs", ReadOnly: true, InputSchema: map[string]any{"type": "object"}}, {Name: "get_logs", ReadOnly: true}, {Name: "kill_job"},
	}, "bob"); err != nil {
		t.Fatal(err)
	}
	grant("grant after another instance's catalogue", true)
	if got := store.take(); got["catalogue"]+got["get"] == 0 {
		t.Errorf("grant under a catalogue no longer stored: reads %v, want it read again", got)
	}
	cur, err := other.Get(ctx, name)
	if err != nil || !cur.AutoRun.Active {
		t.Fatalf("the grant as another instance sees it: %+v %v", cur.AutoRun, err)
	}

	// Another instance captures a new current version (a failed one first,
	// then it succeeds): revoke and grant follow the current one.
	code2 := "a = tools.get_jobs(task_id=task_id)\nb = tools.get_logs(jobs=a)\nreturn [b]\n"
	if _, err := other.Capture(ctx, procedures.CaptureRequest{Code: code2, SessionID: "o1", NoLift: true}); err != nil {
		t.Fatal(err)
	}
	before, err := other.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Promote(ctx, procedures.PromoteRequest{Name: name, CodeHash: mustVersions(t, other, name)[1].CodeHash, Actor: "bob"}); err != nil {
		t.Fatal(err)
	}
	after, err := other.Get(ctx, name)
	if err != nil || after.CodeHash == before.CodeHash {
		t.Fatalf("promote: %s → %s, %v", before.CodeHash, after.CodeHash, err)
	}
	p := grant("grant after another instance's promote", true)
	if p.Grant == nil || p.Grant.CodeHash != after.CodeHash {
		t.Fatalf("grant bound to %+v, want %s", p.Grant, after.CodeHash)
	}

	// A procedure the service knows failed succeeds on another instance:
	// the grant is not refused for what only the service knew.
	one := "return tools.get_logs(task_id=task_id)\n"
	failed := mustCapture(t, svc, procedures.CaptureRequest{Code: one, SessionID: "f1", Status: procedures.StatusFailed})
	if failed.Procedure.Status != procedures.StatusFailed {
		t.Fatalf("status %s", failed.Procedure.Status)
	}
	if _, err := other.Capture(ctx, procedures.CaptureRequest{Code: one, SessionID: "f2"}); err != nil {
		t.Fatal(err)
	}
	if _, d, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: failed.Procedure.Name, Enabled: true, Actor: "alice"}); err != nil || d.Outcome != audit.Allowed {
		t.Fatalf("grant of a procedure that succeeded since: %+v %v", d, err)
	}
	for _, name := range []string{name, failed.Procedure.Name} {
		ds, err := svc.Decisions(ctx, audit.DecisionFilter{Procedure: name})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Outcome != audit.Allowed {
				t.Errorf("a refusal was recorded: %+v", d)
			}
		}
	}
}

// mustVersions is svc's versions of name, oldest first.
func mustVersions(t *testing.T, svc *procedures.Service, name string) []procedures.Version {
	t.Helper()
	vs, err := svc.Versions(context.Background(), name)
	if err != nil || len(vs) < 2 {
		t.Fatalf("versions of %s: %d, %v", name, len(vs), err)
	}
	return vs
}
