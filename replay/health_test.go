package replay_test

import (
	"context"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// TestRunsCountInHealth: every run of a stored version counts in its
// health, a failed one by its class and nowhere else (no use, no
// frequency); denied replays, which do not run, count nowhere.
func TestRunsCountInHealth(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), false)
	p := e.Capture(replaytest.ReadOnlyCode)
	req := replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 42}, SessionID: "s-1"}
	e.MustSucceed(req)
	e.Upstream.Fail = map[string]string{"fetch_logs": "upstream down"}
	for range 2 {
		res, err := e.Invoke(req)
		if err != nil || res.Status != replay.StatusFailed {
			t.Fatalf("Invoke with a failing tool: %+v, %v", res, err)
		}
	}
	got := e.Get(p.Name)
	h := got.Health
	if h.Runs != 3 || h.Succeeded != 1 || h.Failed != 2 || h.ConsecutiveFailures != 2 ||
		h.Failures[health.FailureToolError] != 2 || h.LastFailureClass != health.FailureToolError ||
		h.LastSuccessAt == nil || h.LastFailureAt == nil {
		t.Fatalf("health after a success and two tool errors = %+v", h)
	}
	if got.UseCount != 1 || got.Frequency != 2 {
		t.Fatalf("use count %d, frequency %d; want 1, 2 (failed runs are not uses)", got.UseCount, got.Frequency)
	}
	// The planner view carries the record, in its fields and its words.
	tools, err := e.Replayer.Tools(context.Background(), nil, 0)
	if err != nil || len(tools) != 1 {
		t.Fatalf("Tools = %+v, %v", tools, err)
	}
	d := tools[0]
	const note = "Record: 1 of 3 runs succeeded. The last 2 failed (the last: tool_error)."
	if d.Runs != 3 || d.SuccessRate == nil || *d.SuccessRate != 1.0/3 || !strings.HasSuffix(d.Description, " "+note) {
		t.Fatalf("descriptor: runs %d, success rate %v, description %q; want 3, 1/3, ending %q", d.Runs, d.SuccessRate, d.Description, note)
	}
	denied := e.Capture(replaytest.StateChangingCode)
	e.MustDeny(replay.InvokeRequest{Name: denied.Name, Phase: audit.PhaseAutomatic,
		Arguments: map[string]any{"task_id": 1}}, audit.ReasonStateChangingAuto)
	if n := e.Get(denied.Name).Health.Runs; n != 0 {
		t.Fatalf("a denied replay counted %d runs", n)
	}
}

func TestFailureClass(t *testing.T) {
	for _, tc := range []struct {
		code sandbox.ErrorCode
		want string
	}{
		{sandbox.ToolFailed, health.FailureToolError},
		{sandbox.ToolRefused, health.FailureToolRefused},
		{sandbox.Timeout, health.FailureTimeout},
		{sandbox.UpstreamUnavailable, health.FailureUpstreamUnavailable},
		{sandbox.InvalidArguments, health.FailureInvalidArguments},
		{sandbox.StepLimit, health.FailureStepLimit},
		{sandbox.CallLimit, health.FailureStepLimit},
		{sandbox.MemoryLimit, health.FailureMemoryLimit},
		{sandbox.RuntimeError, health.FailureInternal},
		{"something new", health.FailureInternal},
	} {
		t.Run(string(tc.code), func(t *testing.T) {
			if got := replay.FailureClass(&sandbox.Error{Code: tc.code}); got != tc.want {
				t.Fatalf("FailureClass(%s) = %q, want %q", tc.code, got, tc.want)
			}
		})
	}
	if got := replay.FailureClass(nil); got != "" {
		t.Fatalf("FailureClass(nil) = %q, want \"\"", got)
	}
}
