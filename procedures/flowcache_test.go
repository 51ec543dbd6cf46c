package procedures_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/signature"
)

// TestCaptureKeepsItsFlows: a capture that stores a new version keeps its
// own analysis's flows for its code, so that decorating the procedure (the
// answer, a later read) analyses nothing again — lifted or not — and what
// is kept is what analysing that code gives; a procedure whose code differs
// under the same code hash misses it and is analysed.
func TestCaptureKeepsItsFlows(t *testing.T) {
	ctx := context.Background()
	svc := newLiftService(t)
	for _, tc := range []struct {
		name, code string
		lifted     bool
	}{
		{"lifted", "s = tools.get_task(task_id=42)\nreturn tools.get_jobs(task_id=s, status=st)\n", true},
		{"as written", "s = tools.get_task(task_id=t)\nreturn tools.kill_job(panda_id=s)\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := procedures.FlowAnalyses(svc)
			out := mustCapture(t, svc, procedures.CaptureRequest{Code: tc.code})
			if !out.Created || !out.VersionCreated || (len(out.Lifted) > 0) != tc.lifted {
				t.Fatalf("created %v, version created %v, lifted %v", out.Created, out.VersionCreated, out.Lifted)
			}
			p, err := svc.Get(ctx, out.Procedure.Name)
			if err != nil {
				t.Fatal(err)
			}
			if n := procedures.FlowAnalyses(svc) - before; n != 0 {
				t.Fatalf("%d analyses to decorate the new procedure", n)
			}
			want, err := signature.Analyze(p.Code, signature.Dialect(p.Dialect))
			if err != nil {
				t.Fatal(err)
			}
			if got := procedures.FlowsOf(svc, p); !reflect.DeepEqual(got, want.Flows) || len(got) == 0 {
				t.Fatalf("flows kept %+v, Analyze's %+v", got, want.Flows)
			}
			// Another code under the same hash is not served the entry.
			other := *p
			other.Code = "x = tools.get_jobs(task_id=other)\nreturn tools.get_task(task_id=x)\n"
			got := procedures.FlowsOf(svc, &other)
			if n := procedures.FlowAnalyses(svc) - before; n != 1 {
				t.Fatalf("another code under the hash: %d analyses, want 1", n)
			}
			if len(got) != 1 || got[0].Parameter != "other" {
				t.Fatalf("another code under the hash: flows %+v", got)
			}
		})
	}
}
