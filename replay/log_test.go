package replay

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/procedures"
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
	e.rp = New(e.svc, sandbox.NewInProcess(), NewFuncDispatcher(map[string]ToolFunc{
		"get_jobs":   func(context.Context, map[string]any) (any, error) { return "RESULT-SECRET", nil },
		"fetch_logs": func(context.Context, map[string]any) (any, error) { return nil, nil },
	}), Options{Logger: zerolog.New(&buf)})
	p := e.capture(readOnlyCode + "\nprint('OUTPUT-SECRET')")
	e.mustSucceed(InvokeRequest{Name: p.Name, Phase: procedures.PhaseAutomatic, Arguments: map[string]any{"task_id": "ARG-SECRET"}})
	sc := e.capture(stateChangingCode)
	e.mustDeny(InvokeRequest{Name: sc.Name, Phase: procedures.PhaseAutomatic, Arguments: map[string]any{"task_id": "ARG-SECRET"}}, procedures.ReasonStateChangingAuto)
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
