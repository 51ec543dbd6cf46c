package replay_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/metrics"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// counts reads a counter family of reg as "label values joined by /" -> count.
func counts(t *testing.T, reg *metrics.Registry, family string, labels ...string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			key := ""
			for i, name := range labels {
				if i > 0 {
					key += "/"
				}
				key += l[name]
			}
			out[key] = m.GetCounter().GetValue()
		}
	}
	return out
}

// TestEveryDecisionAndRunIsCounted: top-level, nested and structurally
// refused decisions all go through the service's Recorder, so what is
// counted is exactly what is stored; every run, nested ones included, is
// counted by status. `procgraph run` (RunFile) records through a Recorder too.
func TestEveryDecisionAndRunIsCounted(t *testing.T) {
	ctx := context.Background()
	st := replaytest.OpenStore(t)
	reg := metrics.New()
	svc := procedures.NewService(st, procedures.Options{Counter: reg})
	if _, err := svc.PutCatalogue(ctx, replaytest.DefaultTools, "tester"); err != nil {
		t.Fatal(err)
	}
	disp := &replaytest.Recorder{}
	rp := replay.New(svc, sandbox.NewInProcess(), disp, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}, Counter: reg})
	e := &env{&replaytest.Env{T: t, Store: st, Service: svc, Replayer: rp, Upstream: disp}}

	inner := e.Capture(replaytest.ReadOnlyCode)
	outer := e.Capture(callerOf(inner.Name))
	kill := e.Capture(replaytest.StateChangingCode)
	e.MustSucceed(replay.InvokeRequest{Name: outer.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 7}})
	e.MustDeny(replay.InvokeRequest{Name: kill.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 7}}, audit.ReasonStateChangingAuto)
	c := replay.NewChain(replay.InvokeRequest{Phase: audit.PhaseAutomatic, Actor: "t"}, "k", []string{"proc__outer", inner.Name})
	if _, err := rp.CallNested(ctx, c, inner.Name, map[string]any{"task_id": 1}); err == nil {
		t.Fatal("a cycle ran")
	}

	ds, err := svc.Decisions(ctx, audit.DecisionFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]float64{}
	for _, d := range ds {
		stored[string(d.Kind)+"/"+string(d.Outcome)+"/"+d.Reason]++
	}
	counted := counts(t, reg, metrics.Decisions, "kind", "outcome", "reason")
	if !reflect.DeepEqual(stored, counted) {
		t.Fatalf("stored %v\ncounted %v", stored, counted)
	}
	for k, want := range map[string]float64{"invoke/allowed/read_only": 2, "invoke/denied/state_changing_in_automatic_phase": 1, "invoke/denied/cycle": 1} {
		if counted[k] != want {
			t.Errorf("%s counted %v, want %v", k, counted[k], want)
		}
	}
	if got := counts(t, reg, metrics.Replays, "status", "error"); !reflect.DeepEqual(got, map[string]float64{"succeeded/": 2}) {
		t.Errorf("replays counted %v, want the outer and the nested run", got)
	}

	cat, err := svc.Catalogue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	offline := procedures.NewRecorder(nil, procedures.RecorderOptions{Counter: reg})
	res, err := replay.RunFile(ctx, replay.RunFileRequest{Code: replaytest.ReadOnlyCode, Catalogue: cat, Arguments: map[string]any{"task_id": 1},
		Runner: sandbox.NewInProcess(), Dispatcher: &replaytest.Recorder{}, Recorder: offline})
	if err != nil || res.Decision.Actor != replay.LocalActor {
		t.Fatalf("RunFile = %+v, %v", res, err)
	}
	if got := counts(t, reg, metrics.Decisions, "kind", "outcome", "reason")["invoke/allowed/read_only"]; got != 3 {
		t.Fatalf("RunFile's decision counted: %v, want 3 in all", got)
	}
	if after, _ := svc.Decisions(ctx, audit.DecisionFilter{Limit: 1000}); len(after) != len(ds) {
		t.Fatal("an offline decision reached the store")
	}
}
