package procedures_test

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// TestGrantsList: the procedures holding a grant, by name, classified
// (AutoRun active or not); a revoked grant is gone.
func TestGrantsList(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, true)
	ro := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode}).Procedure
	kill := mustCapture(t, svc, procedures.CaptureRequest{Code: killCode}).Procedure
	mustCapture(t, svc, procedures.CaptureRequest{Code: "return tools.get_jobs(task_id=1)\n"})
	for _, name := range []string{ro.Name, kill.Name} {
		if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: name, Enabled: true, Actor: "alice"}); err != nil {
			t.Fatalf("SetAutoRun(%s): %v", name, err)
		}
	}
	list := func() []string {
		t.Helper()
		ps, err := svc.GrantsList(ctx)
		if err != nil {
			t.Fatalf("GrantsList: %v", err)
		}
		var out []string
		for _, p := range ps {
			if !p.AutoRun.Enabled || !p.AutoRun.Active || p.AutoRun.GrantedBy == nil || *p.AutoRun.GrantedBy != "alice" {
				t.Errorf("%s: auto_run %+v, want alice's active grant", p.Name, p.AutoRun)
			}
			out = append(out, p.Name)
		}
		return out
	}
	// proc__get_jobs__get_logs < proc__get_jobs__kill_job
	if got := list(); len(got) != 2 || got[0] != ro.Name || got[1] != kill.Name {
		t.Fatalf("GrantsList = %v, want [%s %s]", got, ro.Name, kill.Name)
	}
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: ro.Name, Enabled: false, Actor: "alice"}); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if got := list(); len(got) != 1 || got[0] != kill.Name {
		t.Fatalf("after revoking %s: GrantsList = %v, want [%s]", ro.Name, got, kill.Name)
	}
}
