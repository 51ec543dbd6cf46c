package mcpserve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/replay"
)

// TestRunCodeArgumentsKeepTheirNumbers: run_code hands the block its
// arguments as the client sent them, an integer past 2^53 exact, as
// POST /v1/turns and a proc__ call do.
func TestRunCodeArgumentsKeepTheirNumbers(t *testing.T) {
	e := newEnvWith(t, false, func(c *Config, st *embedded.Store) {
		c.Gate = gate.New(c.Replayer.(*replay.Replayer), st, gate.Options{})
	})
	s := e.connect("/mcp", "invoker", nil)
	for _, c := range []struct {
		name, n string
	}{
		{"past 2^53", "9007199254740993"},
		{"negative past -2^53", "-9007199254740993"},
		{"small", "42"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, s, RunCodeToolName, map[string]any{"code": "logs = tools.fetch_logs(task_id=task_id)\nreturn {\"n\": task_id}",
				"arguments": map[string]any{"task_id": json.Number(c.n)}, "session_id": "args"})
			if res.IsError || !strings.Contains(text(res), `"result":{"n":`+c.n+`}`) {
				t.Fatalf("run_code returned %v %s; want result n = %s", res.IsError, text(res), c.n)
			}
		})
	}
}
