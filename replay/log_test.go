package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
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

// TestRunEventSaysWhereTheTimeWent: the run's event, sent once the run is
// committed, carries the time before the run (prepare and decide), the
// run's and the one commit's, and only the top level's has a commit.
func TestRunEventSaysWhereTheTimeWent(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), false)
	var buf syncBuffer
	e.Replayer = replay.New(e.Service, sandbox.NewInProcess(), e.Upstream, replay.Options{Logger: zerolog.New(&buf)})
	inner := e.Capture(replaytest.ReadOnlyCode)
	outer := e.Capture(callerOf(inner.Name))
	e.MustSucceed(replay.InvokeRequest{Name: outer.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": "t1"}})
	var runs []map[string]any
	for line := range strings.Lines(buf.String()) {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if ev["message"] == "replay run" {
			runs = append(runs, ev)
		}
	}
	if len(runs) != 2 {
		t.Fatalf("%d run events, want the nested run's and the top level's:\n%s", len(runs), buf.String())
	}
	for _, ev := range runs {
		top := ev["depth"] == float64(0)
		for _, field := range []string{"duration", "prepared"} {
			if _, ok := ev[field].(float64); !ok {
				t.Errorf("run event at depth %v lacks %s: %v", ev["depth"], field, ev)
			}
		}
		if _, ok := ev["commit"].(float64); ok != top {
			t.Errorf("run event at depth %v: commit present %v, want %v: %v", ev["depth"], ok, top, ev)
		}
	}
	// The top level's event comes after its commit: last.
	if runs[1]["depth"] != float64(0) {
		t.Errorf("the top level's run event is not the last: %v", runs)
	}
}
