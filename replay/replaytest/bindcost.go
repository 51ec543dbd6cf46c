package replaytest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// BindCost is the world of the binding-cost tests (the gate's store calls,
// Neo4j's statements): a gate over store (and turns, its turn store) with
// mutating auto-run on, DefaultTools, a read-only procedure inner
// (ReadOnlyCode) with a durable grant, and a session policy (auto_run) on a
// block that calls a tool and inner. It returns the gate, a turn the
// policy decides and one the grant decides; each runs in process. The
// service's authorization revision is polled once after the setup
// (procedures.Service.PollAuthorization, as the process's poller would)
// and its clock stands still, so what the grant cover and the gate's
// policy index read stays trusted however slow the machine: the counts do
// not depend on timing.
func BindCost(tb testing.TB, store procedures.Store, turns gate.TurnStore) (g *gate.Gate, policy, grant gate.TurnRequest) {
	tb.Helper()
	ctx := context.Background()
	now := time.Now()
	svc := procedures.NewService(store, procedures.Options{AllowMutatingAutorun: true, Now: func() time.Time { return now }})
	if _, err := svc.PutCatalogue(ctx, DefaultTools, "tester"); err != nil {
		tb.Fatal(err)
	}
	out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: ReadOnlyCode, Status: procedures.StatusSucceeded, SessionID: "capture"})
	if err != nil {
		tb.Fatal(err)
	}
	inner := out.Procedure.Name
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: inner, Enabled: true, Actor: "op"}); err != nil {
		tb.Fatal(err)
	}
	g = gate.New(replay.New(svc, sandbox.NewInProcess(), &Recorder{}, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}}), turns, gate.Options{})
	policy = gate.TurnRequest{Code: "x = tools.get_jobs(task_id=task_id)\nreturn [x, tools." + inner + "(task_id=task_id)]",
		SessionID: "s", Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 7}, Actor: "agent"}
	ans, err := g.Submit(ctx, policy)
	if err != nil || ans.Turn.Status != gate.TurnPending {
		tb.Fatalf("submit: %+v, %v", ans, err)
	}
	if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: ans.Turn.ID, Choice: gate.ChoiceAutoRun, Actor: "op", HasGrant: true}); err != nil {
		tb.Fatal(err)
	}
	grant = gate.TurnRequest{Code: "return tools." + inner + "(task_id=task_id)", SessionID: "g", Phase: audit.PhaseInteractive,
		Arguments: map[string]any{"task_id": 7}, Actor: "agent"}
	if err := svc.PollAuthorization(ctx); err != nil {
		tb.Fatal(err)
	}
	return g, policy, grant
}

// Counter counts named events (store calls, statements) from any
// goroutine. The zero value is ready to use.
type Counter struct {
	mu sync.Mutex
	n  map[string]int
}

// Add counts one name.
func (c *Counter) Add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

// Take returns the counts since the last Take as "name×n", sorted and
// joined by spaces, and starts again from none.
func (c *Counter) Take() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, v := range c.n {
		out = append(out, fmt.Sprintf("%s×%d", k, v))
	}
	sort.Strings(out)
	c.n = nil
	return strings.Join(out, " ")
}
