package neo4j

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/reuse"
)

// TestCapturePageUnknownClass: a capture's page (CaptureInput.Page) is
// selected by the classes this store has read; when the statement meets a
// class it has not (another instance created its first procedure), the
// store answers no page and the service reads it after the write, so the
// suggestion still names the procedure of that class (ADR 0049).
func TestCapturePageUnknownClass(t *testing.T) {
	ctx := context.Background()
	s := freshStore(t)
	other, err := connect(ctx, settings(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	svc := procedures.NewService(s, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{{Name: "cp_get", ReadOnly: true}, {Name: "cp_list", ReadOnly: true}}, "tester"); err != nil {
		t.Fatal(err)
	}
	// This store reads the classes while none is exposed.
	if _, err := svc.Capture(ctx, procedures.CaptureRequest{Code: "a = tools.cp_zz(x=task_id)\nreturn tools.cp_get(x=a)\n"}); err != nil {
		t.Fatal(err)
	}
	exposed := true
	if ps, _, err := s.Find(ctx, procedures.Query{Tools: []string{"cp_get"}, Exposed: &exposed}); err != nil || len(ps) != 0 {
		t.Fatalf("Find exposed: %d %v", len(ps), err)
	}
	// Another instance captures the first exposed procedure: its class is
	// one this store has not read.
	out, err := procedures.NewService(other, procedures.Options{}).Capture(ctx, procedures.CaptureRequest{Code: "a = tools.cp_get(x=task_id)\nreturn tools.cp_list(x=a)\n"})
	if err != nil || !out.Procedure.Exposed {
		t.Fatalf("other capture: %+v %v", out.Procedure, err)
	}
	got, err := svc.Capture(ctx, procedures.CaptureRequest{Code: "return tools.cp_get(x=task_id)\n"})
	if err != nil || !got.Created {
		t.Fatalf("capture: %+v %v", got, err)
	}
	if sg := got.Suggestion; sg == nil || sg.Tool != out.Procedure.Name || sg.Reason != reuse.SuggestCoveredBy {
		t.Errorf("suggestion %+v, want %s covered_by", got.Suggestion, out.Procedure.Name)
	}
}
