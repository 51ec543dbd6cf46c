package procedures_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/reuse"
)

// TestCaptureSuggestsReuse: a capture whose tools an exposed procedure
// already composes (exactly, or among more) names it; a capture that created
// its procedure is never told to call itself; state-changing or unexposed
// procedures are never suggested.
func TestCaptureSuggestsReuse(t *testing.T) {
	svc := newService(t, false)
	first := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s1"})
	if !first.Created || first.Suggestion != nil {
		t.Fatalf("the creating capture: created %v, suggestion %+v", first.Created, first.Suggestion)
	}
	exposedName := first.Procedure.Name
	cases := []struct {
		name   string
		code   string
		tool   string
		reason string
	}{
		{"same signature, other code", "x = tools.get_logs(jobs=tools.get_jobs(task_id=t))\nreturn x", exposedName, reuse.SuggestSameSignature},
		{"covered by an exposed procedure", "return tools.get_logs(jobs=j)", exposedName, reuse.SuggestCoveredBy},
		{"not covered", "a = tools.get_jobs(task_id=t)\ntools.kill_job(panda_id=a)", "", ""},
		{"a state-changing procedure is not suggested", "return tools.kill_job(panda_id=p)", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := mustCapture(t, svc, procedures.CaptureRequest{Code: c.code, SessionID: "s2"})
			switch {
			case c.tool == "" && out.Suggestion != nil:
				t.Fatalf("suggestion %+v, want none", out.Suggestion)
			case c.tool != "" && (out.Suggestion == nil || out.Suggestion.Tool != c.tool || out.Suggestion.Reason != c.reason):
				t.Fatalf("suggestion %+v, want %s (%s)", out.Suggestion, c.tool, c.reason)
			}
		})
	}
	// Excluding the only exposed one leaves nothing to suggest.
	s, err := svc.Suggest(context.Background(), []string{"get_jobs", "get_logs"}, exposedName)
	if err != nil || s != nil {
		t.Fatalf("Suggest except the only one = %+v, %v", s, err)
	}
	// A catalogue change that makes get_logs change state leaves it
	// unexposed (its kept classification follows in the same
	// transaction): it is no longer suggested, with no recapture.
	if _, err := svc.PutCatalogue(context.Background(), []procedures.Tool{
		{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs"}, {Name: "kill_job"},
	}, "tester"); err != nil {
		t.Fatal(err)
	}
	if s, err := svc.Suggest(context.Background(), []string{"get_jobs", "get_logs"}, ""); err != nil || s != nil {
		t.Fatalf("Suggest after get_logs changes state = %+v, %v", s, err)
	}
}

// TestNoneExposedWithAgreesWithFind: whenever NoneExposedWith says no
// procedure holding a signature's names can be exposed (so Suggest reads
// no page), the store's exposed filter finds none either — for every pair
// and triple of tools, under catalogues that make each tool read-only,
// state-changing or unknown.
func TestNoneExposedWithAgreesWithFind(t *testing.T) {
	svc := newService(t, false)
	ctx := context.Background()
	tools := []string{"get_jobs", "get_logs", "kill_job", "x_tool"}
	for i, c := range []string{
		"x = tools.get_jobs(task_id=t)\nreturn tools.get_logs(jobs=x)",
		"x = tools.get_jobs(task_id=t)\nreturn tools.x_tool(jobs=x)",
		"x = tools.get_logs(task_id=t)\nreturn tools.kill_job(panda_id=x)",
		"x = tools.get_jobs(task_id=t)\ny = tools.get_logs(jobs=x)\nreturn tools.x_tool(logs=y)",
	} {
		mustCapture(t, svc, procedures.CaptureRequest{Code: c, SessionID: fmt.Sprint("s", i)})
	}
	var sigs [][]string
	for i := range tools {
		for j := i + 1; j < len(tools); j++ {
			sigs = append(sigs, []string{tools[i], tools[j]})
			for k := j + 1; k < len(tools); k++ {
				sigs = append(sigs, []string{tools[i], tools[j], tools[k]})
			}
		}
	}
	shortcuts := 0
	for step, cat := range [][]procedures.Tool{
		{{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true}, {Name: "kill_job"}},
		{{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true}, {Name: "x_tool", ReadOnly: true}},
		{{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs"}, {Name: "x_tool", ReadOnly: true}, {Name: "kill_job", ReadOnly: true}},
	} {
		c, err := svc.PutCatalogue(ctx, cat, "tester")
		if err != nil {
			t.Fatal(err)
		}
		exposed := true
		for _, sig := range sigs {
			page, _, err := svc.Find(ctx, procedures.FindRequest{Tools: sig, Exposed: &exposed, Limit: 50, SkipTotal: true})
			if err != nil {
				t.Fatal(err)
			}
			if procedures.NoneExposedWith(sig, c, false) {
				shortcuts++
				if len(page) > 0 {
					t.Fatalf("step %d, %v: NoneExposedWith, but Find finds %s exposed", step, sig, page[0].Name)
				}
			}
		}
	}
	if shortcuts == 0 {
		t.Fatal("NoneExposedWith never held: the test checks nothing")
	}
}

// readsFail is a store whose reads after a write fail while fail is set:
// Find and Catalogue answer unavailable (it is no CatalogueFinder, so the
// suggestion reads through them).
type readsFail struct {
	procedures.Store
	fail bool
}

func (s *readsFail) Find(ctx context.Context, q procedures.Query) ([]*procedures.Procedure, int, error) {
	if s.fail {
		return nil, 0, fault.Errorf(fault.CodeUnavailable, "reads fail")
	}
	return s.Store.Find(ctx, q)
}

func (s *readsFail) Catalogue(ctx context.Context) (*procedures.Catalogue, error) {
	if s.fail {
		return nil, fault.Errorf(fault.CodeUnavailable, "reads fail")
	}
	return s.Store.Catalogue(ctx)
}

// TestCaptureCommittedWhenTheReadAfterFails: a capture reads the catalogue
// with its suggestion after its write (ADR 0020); when that read fails, the
// capture, which committed, is not reported as failed: it answers without
// a suggestion, decorated with the catalogue the service read last.
func TestCaptureCommittedWhenTheReadAfterFails(t *testing.T) {
	_, inner := newServiceStore(t, false)
	store := &readsFail{Store: inner}
	svc := procedures.NewService(store, procedures.Options{})
	mustCapture(t, svc, procedures.CaptureRequest{Code: killCode, SessionID: "s1"})
	store.fail = true
	out, err := svc.Capture(context.Background(), procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s2"})
	if err != nil {
		t.Fatalf("capture after its write: %v", err)
	}
	if !out.Created || out.Suggestion != nil || !out.Procedure.ReadOnly || !out.Procedure.Exposed || out.Procedure.Description == "" {
		t.Fatalf("capture = %+v, procedure %+v", out, out.Procedure)
	}
	store.fail = false
	if p := mustGetProc(t, svc, out.Procedure.Name); p.Frequency != 1 {
		t.Fatalf("stored frequency %d, want 1", p.Frequency)
	}
}

func mustGetProc(t *testing.T, svc *procedures.Service, name string) *procedures.Procedure {
	t.Helper()
	p, err := svc.Get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCaptureSuggestsItselfBeyondThePage: a capture of an exposed procedure
// that already existed suggests that procedure (the exact match), even when
// more than a page of more used exposed procedures also hold its tools.
func TestCaptureSuggestsItselfBeyondThePage(t *testing.T) {
	_, inner := newServiceStore(t, false)
	store := &pageReads{Store: inner}
	svc := procedures.NewService(store, procedures.Options{})
	own := mustBeyondThePage(t, svc)
	store.finds.Store(0)
	again := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "own-2"})
	if n := store.finds.Load(); n != 0 {
		t.Errorf("the capture of an exposed procedure read %d pages or name lookups for its suggestion, want none (it suggests itself)", n)
	}
	if again.Created || !again.Procedure.Exposed {
		t.Fatalf("the second capture: created %v, exposed %v", again.Created, again.Procedure.Exposed)
	}
	if s := again.Suggestion; s == nil || s.Tool != own.Procedure.Name || s.Reason != reuse.SuggestSameSignature {
		t.Fatalf("suggestion %+v, want %s (%s)", s, own.Procedure.Name, reuse.SuggestSameSignature)
	}
}

// TestSuggestFindsTheExactBeyondThePage: a block (a turn's) whose exact
// signature is an exposed procedure is told to call it even when more than
// a page of exposed procedures holding its tools and more are used more
// (the page of the most used left it out).
func TestSuggestFindsTheExactBeyondThePage(t *testing.T) {
	svc := newService(t, false)
	ctx := context.Background()
	own := mustBeyondThePage(t, svc)
	s, err := svc.Suggest(ctx, own.Procedure.Signature, "")
	if err != nil || s == nil || s.Tool != own.Procedure.Name || s.Reason != reuse.SuggestSameSignature {
		t.Fatalf("Suggest = %+v, %v; want %s (%s)", s, err, own.Procedure.Name, reuse.SuggestSameSignature)
	}
	if s, err := svc.Suggest(ctx, own.Procedure.Signature, own.Procedure.Name); err != nil || s == nil || s.Reason != reuse.SuggestCoveredBy {
		t.Fatalf("Suggest except the exact one = %+v, %v; want one that covers it", s, err)
	}
}

// pageReads counts the reads a suggestion can make (Find's pages,
// GetMany's name lookups).
type pageReads struct {
	procedures.Store
	finds atomic.Int64
}

func (s *pageReads) Find(ctx context.Context, q procedures.Query) ([]*procedures.Procedure, int, error) {
	s.finds.Add(1)
	return s.Store.Find(ctx, q)
}

func (s *pageReads) GetMany(ctx context.Context, names []string) (map[string]*procedures.Procedure, error) {
	s.finds.Add(1)
	return s.Store.GetMany(ctx, names)
}

// mustBeyondThePage fills svc with readOnlyCode's exposed procedure (the
// capture it returns) and, more used, one more than a page of exposed
// procedures composing its tools and one more.
func mustBeyondThePage(t *testing.T, svc *procedures.Service) procedures.CaptureOutcome {
	t.Helper()
	tools := []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true}}
	const more = 51 // one more than a page
	for i := range more {
		tools = append(tools, procedures.Tool{Name: fmt.Sprintf("extra_%02d", i), ReadOnly: true})
	}
	if _, err := svc.PutCatalogue(context.Background(), tools, "tester"); err != nil {
		t.Fatal(err)
	}
	own := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "own-1"})
	for i := range more {
		code := fmt.Sprintf("a = tools.get_jobs(task_id=task_id)\nb = tools.extra_%02d(x=a)\nreturn tools.get_logs(jobs=b)\n", i)
		for u := range 3 {
			mustCapture(t, svc, procedures.CaptureRequest{Code: code, SessionID: fmt.Sprintf("more-%d-%d", i, u)})
		}
	}
	return own
}

// TestSuggestReadsABoundedPage: the reuse suggestion, a capture's and a
// block's, asks the store for a Bounded page, a read that does not grow
// with the store (procedures.Query.Bounded).
func TestSuggestReadsABoundedPage(t *testing.T) {
	_, inner := newServiceStore(t, false)
	store := &toolFinds{Store: inner}
	svc := procedures.NewService(store, procedures.Options{})
	out := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s1"})
	if _, err := svc.Suggest(context.Background(), out.Procedure.Signature, ""); err != nil {
		t.Fatal(err)
	}
	if store.all == 0 || store.bounded != store.all {
		t.Fatalf("%d of %d tool-filtered pages bounded, want every one (and at least one)", store.bounded, store.all)
	}
}

// toolFinds counts the tool-filtered Find pages read, and the Bounded ones.
type toolFinds struct {
	procedures.Store
	all, bounded int
}

func (s *toolFinds) Find(ctx context.Context, q procedures.Query) ([]*procedures.Procedure, int, error) {
	if len(q.Tools) > 0 {
		s.all++
		if q.Bounded {
			s.bounded++
		}
	}
	return s.Store.Find(ctx, q)
}
