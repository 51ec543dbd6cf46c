package procedures_test

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/procedures"
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
		{"same signature, other code", "x = tools.get_logs(jobs=tools.get_jobs(task_id=t))\nreturn x", exposedName, procedures.SuggestSameSignature},
		{"covered by an exposed procedure", "return tools.get_logs(jobs=j)", exposedName, procedures.SuggestCoveredBy},
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
