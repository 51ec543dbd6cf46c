package procedures_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
)

// BenchmarkGrantedProgramOf measures the grant cover's look at a granted
// procedure (procedures.Service.GrantedProgramOf) from the grant index,
// (the authorization cache), and when the store's authorization revision
// moved and was polled before each look (a read of the procedure and its
// lifted program, as every covered turn made before the cache).
func BenchmarkGrantedProgramOf(b *testing.B) {
	ctx := context.Background()
	store, err := embedded.Open(filepath.Join(b.TempDir(), "p.db"), embedded.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	svc := procedures.NewService(store, procedures.Options{Now: func() time.Time { return now }})
	typed := map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}}
	cat, err := svc.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true, InputSchema: typed}, {Name: "get_logs", ReadOnly: true, InputSchema: typed}}, "tester")
	if err != nil {
		b.Fatal(err)
	}
	out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: "j = tools.get_jobs(task_id=1)\nl = tools.get_logs(task_id=1)\nreturn [j, l]\n", Status: procedures.StatusSucceeded, SessionID: "capture"})
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: out.Procedure.Name, Enabled: true, Actor: "op"}); err != nil {
		b.Fatal(err)
	}
	if err := svc.PollAuthorization(ctx); err != nil {
		b.Fatal(err)
	}
	other := procedures.NewService(store, procedures.Options{Now: func() time.Time { return now }})
	for _, c := range []struct {
		name    string
		expired bool
	}{{"index", false}, {"store", true}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if c.expired { // another instance revokes nothing, but moves the revision
					if _, err := other.PutCatalogue(ctx, cat.Tools, "tester"); err != nil {
						b.Fatal(err)
					}
					if err := svc.PollAuthorization(ctx); err != nil {
						b.Fatal(err)
					}
				}
				if gp, err := svc.GrantedProgramOf(ctx, out.Procedure.Signature, cat); err != nil || gp == nil {
					b.Fatalf("%v %v", gp, err)
				}
			}
		})
	}
}
