package replay_test

import (
	"context"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// routeRecorder is a CatalogueDispatcher that records the catalogue each
// call was routed with, and fails a call dispatched without one.
type routeRecorder struct {
	t         *testing.T
	revisions []string
}

func (r *routeRecorder) Dispatch(context.Context, string, map[string]any) (any, error) {
	r.t.Error("a call was dispatched without its run's catalogue")
	return map[string]any{}, nil
}

func (r *routeRecorder) DispatchWith(_ context.Context, cat *procedures.Catalogue, _ string, _ map[string]any) (any, error) {
	r.revisions = append(r.revisions, cat.Revision)
	return map[string]any{}, nil
}

// TestCallsRoutedByTheRunsCatalogue: a replay dispatches each upstream
// call with the catalogue its run was decided with (so a gateway of
// several servers reads no catalogue per call).
func TestCallsRoutedByTheRunsCatalogue(t *testing.T) {
	e := replaytest.New(t, sandbox.NewInProcess(), false)
	p := e.Capture(replaytest.ReadOnlyCode)
	cat, err := e.Service.Catalogue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec := &routeRecorder{t: t}
	rp := replay.New(e.Service, sandbox.NewInProcess(), rec, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	res, err := rp.Invoke(context.Background(), replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}})
	if err != nil || res.Status != replay.StatusSucceeded {
		t.Fatalf("invoke: %+v %v", res, err)
	}
	if len(rec.revisions) != 2 || rec.revisions[0] != cat.Revision || rec.revisions[1] != cat.Revision {
		t.Fatalf("calls routed with revisions %v, want two of %s", rec.revisions, cat.Revision)
	}
}
