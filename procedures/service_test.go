package procedures_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/graphview"
	"github.com/procgraph/procgraph/procedures"
)

// newService returns a Service over a fresh embedded store with a small
// catalogue: two read-only tools and one that changes state.
func newService(t *testing.T, allowMutating bool) *procedures.Service {
	t.Helper()
	svc, _ := newServiceStore(t, allowMutating)
	return svc
}

// newServiceStore is newService with its store, for tests that wrap it.
func newServiceStore(t *testing.T, allowMutating bool) (*procedures.Service, procedures.Store) {
	t.Helper()
	store, err := embedded.Open(filepath.Join(t.TempDir(), "p.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := procedures.NewService(store, procedures.Options{AllowMutatingAutorun: allowMutating})
	if _, err := svc.PutCatalogue(context.Background(), []procedures.Tool{
		{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true, ExternalAccess: true}, {Name: "kill_job"},
	}, "tester"); err != nil {
		t.Fatal(err)
	}
	return svc, store
}

func mustCapture(t *testing.T, svc *procedures.Service, req procedures.CaptureRequest) procedures.CaptureOutcome {
	t.Helper()
	out, err := svc.Capture(context.Background(), req)
	if err != nil {
		t.Fatalf("capture: %v", err)
	}
	return out
}

const (
	readOnlyCode = "a = tools.get_jobs(task_id=task_id)\nreturn tools.get_logs(jobs=a)\n"
	killCode     = "a = tools.get_jobs(task_id=task_id)\ntools.kill_job(panda_id=a)\n"
)

func TestCaptureRules(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, false)
	first := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s1", Cause: &procedures.CauseInput{Name: "stuck task"}})
	if !first.Created || !first.VersionCreated || !first.Counted {
		t.Fatalf("first capture = %+v", first)
	}
	p := first.Procedure
	if p.Name != "proc__get_jobs__get_logs" || !p.ReadOnly || !p.Exposed || !p.ExternalAccess || p.Frequency != 1 {
		t.Fatalf("procedure = %+v", p)
	}
	again := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s1"})
	if again.Created || again.VersionCreated || again.Counted || again.Procedure.Frequency != 1 {
		t.Fatalf("re-committing a session must not count: %+v", again)
	}
	byKey := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode, IdempotencyKey: "k1"})
	byKeyAgain := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode, IdempotencyKey: "k1"})
	if !byKey.Counted || byKeyAgain.Counted || byKeyAgain.Procedure.Frequency != 2 {
		t.Fatalf("idempotency key: %+v then %+v", byKey, byKeyAgain)
	}
	fresh := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode})
	if !fresh.Counted || fresh.Procedure.Frequency != 3 {
		t.Fatalf("no key counts a fresh use: %+v", fresh)
	}
	use := mustCapture(t, svc, procedures.CaptureRequest{Code: "return tools.proc__get_jobs__get_logs(task_id=1)\n", SessionID: "s9"})
	if !use.Use || use.Procedure.Name != p.Name || use.Procedure.Frequency != 4 {
		t.Fatalf("a single proc__ call must count a use of it: %+v", use)
	}
	failedUse := mustCapture(t, svc, procedures.CaptureRequest{Code: "return tools.proc__get_jobs__get_logs(task_id=1)\n", SessionID: "s10", Status: procedures.StatusFailed})
	if !failedUse.Use || failedUse.Counted || failedUse.Procedure.Frequency != 4 {
		t.Fatalf("a failed use must not count: %+v", failedUse)
	}
	_, err := svc.Capture(ctx, procedures.CaptureRequest{Code: "return tools.proc__nope__none(task_id=1)\n"})
	if fault.ErrorCode(err) != fault.CodeInvalidCode {
		t.Fatalf("use of an unknown procedure: %v", err)
	}
	failed := mustCapture(t, svc, procedures.CaptureRequest{Code: killCode, Status: procedures.StatusFailed, SessionID: "s1"})
	if failed.Procedure.Status != procedures.StatusFailed || failed.Procedure.Exposed || failed.Procedure.Frequency != 0 {
		t.Fatalf("a failed capture is knowledge, never exposed nor counted: %+v", failed.Procedure)
	}
}

func TestCaptureRejections(t *testing.T) {
	svc := newService(t, false)
	tests := []struct {
		name string
		req  procedures.CaptureRequest
		code fault.Code
	}{
		{"empty code", procedures.CaptureRequest{Code: "  "}, fault.CodeInvalid},
		{"empty signature", procedures.CaptureRequest{Code: "return 1\n"}, fault.CodeInvalidCode},
		{"import", procedures.CaptureRequest{Code: "import os\n"}, fault.CodeInvalidCode},
		{"bad dialect", procedures.CaptureRequest{Code: readOnlyCode, Dialect: "ruby"}, fault.CodeInvalid},
		{"bad status", procedures.CaptureRequest{Code: readOnlyCode, Status: "maybe"}, fault.CodeInvalid},
		{"oversized code", procedures.CaptureRequest{Code: "x = tools.get_jobs()\n#" + string(make([]byte, 70000))}, fault.CodeTooLarge},
		{"empty cause name", procedures.CaptureRequest{Code: readOnlyCode, Cause: &procedures.CauseInput{Name: " "}}, fault.CodeInvalid},
		{"bad params schema", procedures.CaptureRequest{Code: readOnlyCode, ParamsSchema: map[string]any{"type": "array"}}, fault.CodeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Capture(context.Background(), tc.req)
			if got := fault.ErrorCode(err); got != tc.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tc.code)
			}
		})
	}
	if _, total, _ := svc.Find(context.Background(), procedures.FindRequest{}); total != 0 {
		t.Fatalf("rejected captures must write nothing, found %d", total)
	}
}

func TestFindClassifiesAtReadTime(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, false)
	mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode})
	mustCapture(t, svc, procedures.CaptureRequest{Code: killCode})
	mustCapture(t, svc, procedures.CaptureRequest{Code: "x = tools.proc__get_jobs__get_logs(task_id=t)\nreturn tools.get_jobs(task_id=x)\n"})
	yes, no := true, false
	names := func(r procedures.FindRequest) []string {
		t.Helper()
		page, _, err := svc.Find(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range page {
			out = append(out, p.Name)
		}
		return out
	}
	if got := names(procedures.FindRequest{ReadOnly: &yes}); len(got) != 2 {
		t.Fatalf("read-only (nested read-only counts): %v", got)
	}
	if got := names(procedures.FindRequest{ReadOnly: &no}); len(got) != 1 || got[0] != "proc__get_jobs__kill_job" {
		t.Fatalf("not read-only: %v", got)
	}
	// A catalogue change re-classifies at once: get_logs now changes state,
	// so the nested procedure stops being read-only too.
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs"}, {Name: "kill_job"}}, "tester"); err != nil {
		t.Fatal(err)
	}
	if got := names(procedures.FindRequest{ReadOnly: &yes}); len(got) != 0 {
		t.Fatalf("after the catalogue change nothing is read-only, got %v", got)
	}
	if got := names(procedures.FindRequest{Exposed: &yes}); len(got) != 0 {
		t.Fatalf("nothing is exposed with mutating auto-run off, got %v", got)
	}
	if _, _, err := svc.Find(ctx, procedures.FindRequest{Limit: procedures.MaxFindLimit + 1}); fault.ErrorCode(err) != fault.CodeInvalid {
		t.Fatalf("limit over the maximum: %v", err)
	}
}

func TestSetAutoRunAndPromote(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, false)
	ro := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode}).Procedure
	kill := mustCapture(t, svc, procedures.CaptureRequest{Code: killCode}).Procedure

	_, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: kill.Name, Enabled: true, Actor: "alice"})
	if fault.ErrorCode(err) != fault.CodeConflict {
		t.Fatalf("granting a state-changing procedure with mutating off: %v", err)
	}
	if pe := err.(*fault.Error); pe.Details["reason"] != audit.ReasonNotReadOnly {
		t.Fatalf("reason = %v", pe.Details["reason"])
	}
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: "proc__nope", Enabled: true}); fault.ErrorCode(err) != fault.CodeNotFound {
		t.Fatalf("unknown procedure: %v", err)
	}
	p, d, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: ro.Name, Enabled: true, Actor: "alice", Reason: "checked"})
	if err != nil {
		t.Fatal(err)
	}
	if !p.AutoRun.Active || *p.AutoRun.CodeHash != ro.CodeHash || d.Kind != audit.KindGrant || d.Actor != "alice" {
		t.Fatalf("grant: %+v %+v", p.AutoRun, d)
	}
	// A new version, promoted: the grant is bound to the old hash and stops being active.
	v2 := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode + "\"v2\"\n"})
	if !v2.VersionCreated || v2.Procedure.CodeHash != ro.CodeHash {
		t.Fatalf("the first succeeded version stays current: %+v", v2)
	}
	versions, err := svc.Versions(ctx, ro.Name)
	if err != nil || len(versions) != 2 {
		t.Fatalf("versions: %v %v", versions, err)
	}
	// The other version: two captures in one millisecond are ordered by
	// code hash, not by capture.
	other := versions[1].CodeHash
	if other == ro.CodeHash {
		other = versions[0].CodeHash
	}
	p, _, err = svc.Promote(ctx, procedures.PromoteRequest{Name: ro.Name, CodeHash: other, Actor: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if p.AutoRun.Active || p.AutoRun.InactiveReason == nil || *p.AutoRun.InactiveReason != binding.InactiveCodeChanged {
		t.Fatalf("after promote the grant must be inactive: %+v", p.AutoRun)
	}
	ds, err := svc.Decisions(ctx, audit.DecisionFilter{Procedure: ro.Name})
	if err != nil || len(ds) != 2 || ds[0].Kind != audit.KindPromote || ds[1].Kind != audit.KindGrant {
		t.Fatalf("audit: %+v %v", ds, err)
	}
	denied, _ := svc.Decisions(ctx, audit.DecisionFilter{Procedure: kill.Name})
	if len(denied) != 1 || denied[0].Outcome != audit.Denied {
		t.Fatalf("the refused grant must be audited as denied: %+v", denied)
	}
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: ro.Name, Enabled: false, Actor: "bob"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.Get(ctx, ro.Name); got.AutoRun.Enabled {
		t.Fatalf("revoked grant still enabled: %+v", got.AutoRun)
	}
}

func TestMutatingAutorunOn(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, true)
	kill := mustCapture(t, svc, procedures.CaptureRequest{Code: killCode}).Procedure
	if !kill.Exposed || kill.ReadOnly {
		t.Fatalf("with mutating on a state-changing procedure is exposed, flagged not read-only: %+v", kill)
	}
	p, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: kill.Name, Enabled: true, Actor: "alice"})
	if err != nil || !p.AutoRun.Active {
		t.Fatalf("grant with mutating on: %+v %v", p, err)
	}
}

func TestGraph(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, false)
	p := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode, Cause: &procedures.CauseInput{Name: "stuck task"}}).Procedure
	g, err := svc.Graph(ctx, graphview.GraphQuery{Procedures: []string{p.Name}})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, n := range g.Nodes {
		kinds[n.Kind]++
	}
	if kinds["procedure"] != 1 || kinds["cause"] != 1 || kinds["tool"] != 2 || len(g.Edges) != 3 {
		t.Fatalf("graph = %+v", g)
	}
	for _, n := range g.Nodes {
		if n.Kind != "cause" && n.Properties["class"] != graphview.ClassReadOnly {
			t.Fatalf("node %s class %v, want read_only (the catalogue's and the procedure's)", n.ID, n.Properties["class"])
		}
	}
	g, err = svc.Graph(ctx, graphview.GraphQuery{Causes: []string{"stuck task"}})
	if err != nil || len(g.Nodes) != 2 || g.Nodes[1].Properties["frequency"] != p.Frequency {
		t.Fatalf("a procedure reached from its cause has its counts: %+v %v", g, err)
	}
	g, err = svc.Graph(ctx, graphview.GraphQuery{Tools: []string{"get_jobs"}, Depth: 2})
	if err != nil || len(g.Nodes) != 4 {
		t.Fatalf("from a tool, two hops: %+v %v", g, err)
	}
	if _, err := svc.Graph(ctx, graphview.GraphQuery{Depth: 9}); fault.ErrorCode(err) != fault.CodeInvalid {
		t.Fatalf("depth out of range: %v", err)
	}
	if _, err := svc.Graph(ctx, graphview.GraphQuery{Causes: []string{"nope"}}); fault.ErrorCode(err) != fault.CodeNotFound {
		t.Fatalf("unknown cause: %v", err)
	}
}

// TestGraphWithoutStartReadsTheCatalogueOnce: the graph of the top
// procedures classifies its nodes with the catalogue the listing read.
func TestGraphWithoutStartReadsTheCatalogueOnce(t *testing.T) {
	ctx := context.Background()
	svc, store := newServiceStore(t, false)
	mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode, Cause: &procedures.CauseInput{Name: "stuck task"}})
	mustCapture(t, svc, procedures.CaptureRequest{Code: killCode})
	reads := &atomic.Int64{}
	counted := procedures.NewService(countingCatalogue{Store: store, reads: reads}, procedures.Options{})
	g, err := counted.Graph(ctx, graphview.GraphQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		if n.Kind != "cause" && n.Properties["class"] == nil {
			t.Errorf("node %s has no class", n.ID)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Fatalf("Graph read the catalogue %d times, want 1", n)
	}
}

// failAfterWrite is a real store whose reads of the catalogue fail once a
// write has committed: the state in which a service that read after writing
// would report a committed write as failed.
type failAfterWrite struct {
	procedures.Store
	wrote atomic.Bool
}

func (f *failAfterWrite) Catalogue(ctx context.Context) (*procedures.Catalogue, error) {
	if f.wrote.Load() {
		return nil, fault.Errorf(fault.CodeUnavailable, "the store went away")
	}
	return f.Store.Catalogue(ctx)
}

func (f *failAfterWrite) Capture(ctx context.Context, in procedures.CaptureInput) (procedures.CaptureResult, error) {
	res, err := f.Store.Capture(ctx, in)
	f.wrote.Store(err == nil)
	return res, err
}

func (f *failAfterWrite) SetGrant(ctx context.Context, name string, g *procedures.Grant, hash string, cat *procedures.Catalogue, d audit.Decision) (*procedures.Procedure, error) {
	p, err := f.Store.SetGrant(ctx, name, g, hash, cat, d)
	f.wrote.Store(err == nil)
	return p, err
}

func TestCommittedWritesAreReportedAsDone(t *testing.T) {
	ctx := context.Background()
	_, baseStore := newServiceStore(t, false)
	store := &failAfterWrite{Store: baseStore}
	svc := procedures.NewService(store, procedures.Options{})
	out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s1"})
	if err != nil || !out.Created || !out.Procedure.ReadOnly {
		t.Fatalf("a committed capture must be reported, classified: %+v %v", out, err)
	}
	store.wrote.Store(false)
	p, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: out.Procedure.Name, Enabled: true, Actor: "alice"})
	if err != nil || !p.AutoRun.Active {
		t.Fatalf("a committed grant must be reported: %+v %v", p, err)
	}
}

// promoteDuringRevoke is a real store in which a promote lands between a
// revoke's read and its write, once.
type promoteDuringRevoke struct {
	procedures.Store
	to   string
	done bool
}

func (p *promoteDuringRevoke) SetGrant(ctx context.Context, name string, g *procedures.Grant, hash string, cat *procedures.Catalogue, d audit.Decision) (*procedures.Procedure, error) {
	if g == nil && !p.done {
		p.done = true
		pd := d
		pd.ID, pd.Kind = audit.NewDecisionID(d.At), audit.KindPromote
		if _, err := p.Store.Promote(ctx, name, p.to, pd); err != nil {
			return nil, err
		}
	}
	return p.Store.SetGrant(ctx, name, g, hash, cat, d)
}

func TestRevokeSurvivesARacingPromote(t *testing.T) {
	ctx := context.Background()
	base, baseStore := newServiceStore(t, false)
	p := mustCapture(t, base, procedures.CaptureRequest{Code: readOnlyCode}).Procedure
	if _, _, err := base.SetAutoRun(ctx, procedures.AutoRunRequest{Name: p.Name, Enabled: true, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	v2 := mustCapture(t, base, procedures.CaptureRequest{Code: readOnlyCode + "\"v2\"\n"})
	versions, _ := base.Versions(ctx, p.Name)
	other := versions[1].CodeHash // the other version (two captures in one millisecond are ordered by code hash)
	if other == p.CodeHash {
		other = versions[0].CodeHash
	}
	svc := procedures.NewService(&promoteDuringRevoke{Store: baseStore, to: other}, procedures.Options{})
	got, d, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: p.Name, Enabled: false, Actor: "bob"})
	if err != nil {
		t.Fatalf("revoke during a promote: %v", err)
	}
	if got.AutoRun.Enabled || d.Kind != audit.KindRevoke || got.CodeHash == p.CodeHash {
		t.Fatalf("after the revoke: %+v, decision %+v (v2 %v)", got.AutoRun, d, v2.VersionCreated)
	}
}

// failingAudit is a real store whose audit log cannot be written.
type failingAudit struct{ procedures.Store }

func (failingAudit) AppendDecision(context.Context, audit.Decision) error {
	return fault.Errorf(fault.CodeUnavailable, "the store went away")
}

// TestCatalogueChangesAreAudited: a catalogue change decides what runs
// unattended: it is recorded (kind catalogue, the revision, the actor)
// before it happens, and does not happen if it cannot be recorded.
func TestCatalogueChangesAreAudited(t *testing.T) {
	ctx := context.Background()
	svc, store := newServiceStore(t, false)
	c, err := svc.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "kill_job"}}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := svc.Decisions(ctx, audit.DecisionFilter{Kind: audit.KindCatalogue})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Actor != "alice" || ds[0].CodeHash != c.Revision || ds[0].Reason != audit.ReasonCatalogueReplaced ||
		ds[0].Note != "2 tools, 1 read-only" {
		t.Fatalf("catalogue decisions: %+v", ds)
	}
	broken := procedures.NewService(failingAudit{store}, procedures.Options{})
	if _, err := broken.PutCatalogue(ctx, []procedures.Tool{{Name: "kill_job", ReadOnly: true}}, "mallory"); fault.ErrorCode(err) != fault.CodeUnavailable {
		t.Fatalf("err = %v, want unavailable", err)
	}
	if now, _ := svc.Catalogue(ctx); now.Revision != c.Revision {
		t.Fatal("an unaudited catalogue change happened")
	}
}

// TestCaptureOfAnotherTextIsAUse: a capture whose code is another text of
// a stored version's program — other local names, comments, quotes, an
// inline literal for a binding, its independent reads in another order —
// is a use of that version (docs/design.md "The canonical program"); a
// near miss (another keyword) is another version.
func TestCaptureOfAnotherTextIsAUse(t *testing.T) {
	svc := newService(t, false)
	first := mustCapture(t, svc, procedures.CaptureRequest{Code: "jobs = tools.get_jobs(task_id=task_id)\nreturn tools.get_logs(jobs=jobs)\n", SessionID: "s1"})
	for _, tc := range []struct {
		name, code string
		same       bool
	}{
		{"other names and a comment", "# look at the logs\nj = tools.get_jobs(task_id=task_id)\nreturn tools.get_logs(jobs=j)\n", true},
		{"another keyword", "jobs = tools.get_jobs(task=task_id)\nreturn tools.get_logs(jobs=jobs)\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := mustCapture(t, svc, procedures.CaptureRequest{Code: tc.code, SessionID: "s-" + tc.name})
			if got := out.CodeHash == first.CodeHash && !out.VersionCreated; got != tc.same {
				t.Fatalf("counted on %s (version created %v); first version %s; want the same version: %v", out.CodeHash, out.VersionCreated, first.CodeHash, tc.same)
			}
		})
	}
	v, err := svc.Version(context.Background(), first.Procedure.Name, first.CodeHash)
	if err != nil || v.Frequency != 2 || !strings.Contains(v.Code, "jobs = tools.get_jobs(task_id=task_id)") {
		t.Fatalf("version %+v %v: want the first text, counted twice", v, err)
	}
}
