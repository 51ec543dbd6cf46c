package mcpserve

import (
	"strings"
	"testing"

	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/internal/fields"
)

// TestToolInputsBoundedInBytes: a fixed tool's argument within its
// schema's maxLength in characters but over its byte bound, or a
// session_id the one rule refuses, is a tool error invalid_request before
// anything is looked up or run.
func TestToolInputsBoundedInBytes(t *testing.T) {
	e := newEnvWith(t, false, func(c *Config) { c.Gate = gate.New(c.Replayer, gate.Options{}) })
	s := e.connect("/mcp/interactive", "invoker", nil)
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"turn id over its bytes", AwaitApprovalToolName, map[string]any{"id": strings.Repeat("é", fields.MaxTurnIDBytes/2+1)}, "id is longer than 64 bytes"},
		{"session id over its bytes", RunCodeToolName, map[string]any{"code": readOnlyCode, "session_id": strings.Repeat("é", fields.MaxKeyBytes/2+1)}, "session_id must be UTF-8 of at most 512 bytes"},
		{"session id with a NUL", RunCodeToolName, map[string]any{"code": readOnlyCode, "session_id": "a\x00b"}, "session_id"},
		{"session id with a C1 control", RunCodeToolName, map[string]any{"code": readOnlyCode, "session_id": "a\u0085b"}, "session_id"},
		{"summary over its bytes", RunCodeToolName, map[string]any{"code": readOnlyCode, "summary": strings.Repeat("é", fields.MaxReasonBytes/2+1)}, "summary is longer than 2048 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, s, c.tool, c.args)
			if !res.IsError || !strings.HasPrefix(text(res), "invalid_request") || !strings.Contains(text(res), c.want) {
				t.Fatalf("%s: error %v %q, want invalid_request mentioning %q", c.tool, res.IsError, text(res), c.want)
			}
		})
	}
	if got := e.up.seen(); len(got) != 0 {
		t.Fatalf("upstream called: %v", got)
	}
}
