package mcpserve

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/replay"
)

// TestToolInputsBoundedInBytes: a fixed tool's argument within its
// schema's maxLength in characters but over its byte bound, or a
// session_id the one rule refuses, is a tool error invalid_request before
// anything is looked up or run.
func TestToolInputsBoundedInBytes(t *testing.T) {
	e := newEnvWith(t, false, func(c *Config, st *embedded.Store) {
		c.Gate = gate.New(c.Replayer.(*replay.Replayer), st, gate.Options{})
	})
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

// TestToolSchemaBoundsAreTheGoBounds: every bounded string of every fixed
// tool's input publishes its byte bound as maxLength, and the Go check
// refuses one two-byte character more, naming the field.
func TestToolSchemaBoundsAreTheGoBounds(t *testing.T) {
	checked := 0
	for name, in := range map[string]fields.Field{FindToolName: findInput, AutoRunToolName: autoRunInput,
		RunCodeToolName: runCodeInput, AwaitApprovalToolName: awaitInput} {
		var published map[string]any
		if err := json.Unmarshal(toolSchema(in), &published); err != nil {
			t.Fatal(err)
		}
		in.Walk(func(path string, f fields.Field) {
			if f.Type != fields.String || f.MaxBytes == 0 {
				return
			}
			checked++
			own := published
			doc := any(strings.Repeat("é", f.MaxBytes/2+1))
			parts := strings.Split(path, ".")
			for _, part := range parts {
				if part == "[]" {
					own, _ = own["items"].(map[string]any)
				} else {
					props, _ := own["properties"].(map[string]any)
					own, _ = props[part].(map[string]any)
				}
			}
			for i := len(parts) - 1; i >= 0; i-- {
				if parts[i] == "[]" {
					doc = []any{doc}
				} else {
					doc = map[string]any{parts[i]: doc}
				}
			}
			if own == nil || own["maxLength"] != float64(f.MaxBytes) {
				t.Errorf("%s %s: schema %v, want maxLength %d", name, path, own, f.MaxBytes)
			}
			var fe *fault.Error
			want := strings.ReplaceAll(path, "[]", "0")
			if err := in.Check(doc); !errors.As(err, &fe) || fe.Details["field"] != want {
				t.Errorf("%s %s: Check = %v, want a refusal of %s", name, path, err, want)
			}
		})
	}
	if checked < 7 {
		t.Fatalf("only %d bounded strings checked", checked)
	}
}
