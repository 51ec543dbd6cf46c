package neo4jstore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// TestBindingChecksCostNoStatement: on Neo4j, a turn decided (and run) by
// a session policy and one decided by a durable grant run exactly the
// statements they ran before bindings (QueryObserver): the binding checks
// read nothing more.
func TestBindingChecksCostNoStatement(t *testing.T) {
	ctx := context.Background()
	s := freshStore(t)
	svc := procedures.NewService(s, procedures.Options{AllowMutatingAutorun: true})
	cat := []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "fetch_logs", ReadOnly: true}}
	if _, err := svc.PutCatalogue(ctx, cat, "tester"); err != nil {
		t.Fatal(err)
	}
	out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: "jobs = tools.get_jobs(task_id=task_id)\nreturn tools.fetch_logs(task_id=task_id)",
		Status: procedures.StatusSucceeded, SessionID: "capture"})
	if err != nil {
		t.Fatal(err)
	}
	inner := out.Procedure.Name
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: inner, Enabled: true, Actor: "op"}); err != nil {
		t.Fatal(err)
	}
	disp := replay.DispatcherFunc(func(context.Context, string, map[string]any) (any, error) { return map[string]any{}, nil })
	g := gate.New(replay.New(svc, sandbox.NewInProcess(), disp, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}}), s, gate.Options{})
	policy := gate.TurnRequest{Code: "x = tools.get_jobs(task_id=task_id)\nreturn [x, tools." + inner + "(task_id=task_id)]",
		SessionID: "s", Phase: procedures.PhaseInteractive, Arguments: map[string]any{"task_id": 7}, Actor: "agent"}
	ans, err := g.Submit(ctx, policy)
	if err != nil || ans.Turn.Status != gate.TurnPending {
		t.Fatalf("submit: %+v, %v", ans, err)
	}
	if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: ans.Turn.ID, Choice: gate.ChoiceAutoRun, Actor: "op", HasGrant: true}); err != nil {
		t.Fatal(err)
	}
	grant := gate.TurnRequest{Code: "return tools." + inner + "(task_id=task_id)", SessionID: "g", Phase: procedures.PhaseInteractive,
		Arguments: map[string]any{"task_id": 7}, Actor: "agent"}
	for _, c := range []struct {
		name   string
		req    gate.TurnRequest
		reason string
		want   string
	}{
		// find_filtered is the reuse suggestion of a block that is not
		// proc__-only; procedure_catalogue reads a procedure with the
		// catalogue (procedures.CatalogueGetter, ADR 0020).
		{"policy", policy, procedures.ReasonSessionPolicy, "catalogue_since×1 decision_append×2 find_filtered×1 policy_get×1 procedure_catalogue×1 procedures_by_name×1 use×1 version×1"},
		{"grant", grant, procedures.ReasonDurableAutoRun, "catalogue_since×1 decision_append×2 policy_get×1 procedure_catalogue×1 procedures_by_name×1 use×1 version×1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			n := map[string]int{}
			octx := WithQueryObserver(ctx, func(q string, _, _ time.Duration) { mu.Lock(); n[q]++; mu.Unlock() })
			ans, err := g.Submit(octx, c.req)
			if err != nil || !ans.Ran() || ans.Decision.Reason != c.reason || ans.Status != replay.StatusSucceeded {
				t.Fatalf("submit: %+v, %v", ans, err)
			}
			mu.Lock()
			var got []string
			for q, k := range n {
				got = append(got, fmt.Sprintf("%s×%d", q, k))
			}
			mu.Unlock()
			sort.Strings(got)
			if s := strings.Join(got, " "); s != c.want {
				t.Fatalf("statements %s, want %s (as before bindings)", s, c.want)
			}
		})
	}
}
