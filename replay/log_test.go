package replay_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/replay"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLogsHoldNoArgumentsCodeOrResults(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), false)
	var buf syncBuffer
	e.Replayer = replay.New(e.Service, sandbox.NewInProcess(), replay.NewFuncDispatcher(map[string]replay.ToolFunc{
		"get_jobs":   func(context.Context, map[string]any) (any, error) { return "RESULT-SECRET", nil },
		"fetch_logs": func(context.Context, map[string]any) (any, error) { return nil, nil },
	}), replay.Options{Logger: zerolog.New(&buf)})
	p := e.Capture(replaytest.ReadOnlyCode + "\nprint('OUTPUT-SECRET')")
	e.MustSucceed(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": "ARG-SECRET"}})
	sc := e.Capture(replaytest.StateChangingCode)
	e.MustDeny(replay.InvokeRequest{Name: sc.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": "ARG-SECRET"}}, audit.ReasonStateChangingAuto)
	logs := buf.String()
	if !strings.Contains(logs, "replay decision") || !strings.Contains(logs, "replay run") {
		t.Fatalf("logs lack the decision or the run:\n%s", logs)
	}
	for _, secret := range []string{"ARG-SECRET", "RESULT-SECRET", "OUTPUT-SECRET", "tools.get_jobs("} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q:\n%s", secret, logs)
		}
	}
}

// TestLogsHoldNoDynamicToolNames: a tool name built at run time (getattr
// on tools) is program data — here an argument value — and the run's
// refusal names it; the log says a dynamic name was refused, never which.
func TestLogsHoldNoDynamicToolNames(t *testing.T) {
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			e := newEnv(t, rn.r, false)
			var buf syncBuffer
			e.Replayer = replay.New(e.Service, rn.r, e.Upstream, replay.Options{Logger: zerolog.New(&buf)})
			p := e.Capture("jobs = tools.get_jobs(task_id=task_id)\nreturn getattr(tools, task_id)()")
			res, err := e.Invoke(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": "ARG-SECRET"}})
			if err != nil || res.Error == nil || res.Error.Code != sandbox.ToolRefused || res.Error.Tool != "ARG-SECRET" {
				t.Fatalf("invoke = %+v, %v; want the dynamic call refused", res, err)
			}
			logs := buf.String()
			if !strings.Contains(logs, "replay run") || !strings.Contains(logs, string(sandbox.ToolRefused)) {
				t.Fatalf("the log lacks the refused run:\n%s", logs)
			}
			if strings.Contains(logs, "ARG-SECRET") {
				t.Fatalf("the log holds the argument value:\n%s", logs)
			}
		})
	}
}
