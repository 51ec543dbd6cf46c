package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
)

// sessionIDCases are session ids a hostile or careless client sends, and
// whether the one rule (usage.CheckSessionID) accepts them.
var sessionIDCases = []struct {
	name string
	id   string
	ok   bool
}{
	{"plain", "agent-7/run.1", true},
	{"multi-byte at the limit", strings.Repeat("é", fields.MaxKeyBytes/2), true},
	{"multi-byte over the limit in bytes, not in characters", strings.Repeat("é", fields.MaxKeyBytes/2+1), false},
	{"ASCII over the limit", strings.Repeat("a", fields.MaxKeyBytes+1), false},
	{"NUL", "a\x00b", false},
	{"unit separator", "a\x1fb", false},
	{"newline", "a\nb", false},
	{"DEL", "a\x7fb", false},
	{"C1 next line", "a\u0085b", false},
}

// TestSessionIDOneRule: a session id is accepted or refused alike by
// capture, invoke and turns, over HTTP and in the domain they call
// (Service.Capture, Replayer.Invoke, Gate.Submit): refused, it is
// invalid_request naming session_id. Capture and invoke once took control
// characters that turns refused.
func TestSessionIDOneRule(t *testing.T) {
	e := mustEnv(t, envOpts{})
	ctx := context.Background()
	out, err := e.svc.Capture(ctx, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "setup"})
	if err != nil {
		t.Fatal(err)
	}
	name := out.Procedure.Name
	for _, c := range sessionIDCases {
		t.Run(c.name, func(t *testing.T) {
			for _, h := range []struct {
				entry, method, path string
				body                map[string]any
			}{
				{"capture", "POST", "/v1/procedures", map[string]any{"code": readOnlyCode}},
				{"invoke", "POST", "/v1/procedures/" + name + "/invoke", map[string]any{"phase": "automatic", "arguments": map[string]any{"task_id": 1}}},
				{"turn", "POST", "/v1/turns", map[string]any{"code": readOnlyCode, "phase": "automatic", "arguments": map[string]any{"task_id": 1}}},
			} {
				h.body["session_id"] = c.id
				status, body := e.do(t, http.DefaultClient, h.method, h.path, h.body)
				if c.ok != (status < 300) {
					t.Errorf("HTTP %s: status %d, want accepted %v: %s", h.entry, status, c.ok, body)
					continue
				}
				if !c.ok {
					var ans struct {
						Error struct {
							Code    string         `json:"code"`
							Details map[string]any `json:"details"`
						} `json:"error"`
					}
					_ = json.Unmarshal(body, &ans)
					if status != 400 || ans.Error.Code != "invalid_request" || ans.Error.Details["field"] != "session_id" {
						t.Errorf("HTTP %s: %d %s, want 400 invalid_request on session_id", h.entry, status, body)
					}
				}
			}
			_, capErr := e.svc.Capture(ctx, procedures.CaptureRequest{Code: readOnlyCode, SessionID: c.id})
			_, invErr := e.rp.Invoke(ctx, replay.InvokeRequest{Name: name, Phase: audit.PhaseAutomatic,
				Arguments: map[string]any{"task_id": 1}, SessionID: c.id})
			_, turnErr := e.gate.Submit(ctx, gate.TurnRequest{Code: readOnlyCode, Phase: audit.PhaseAutomatic,
				Arguments: map[string]any{"task_id": 1}, SessionID: c.id})
			for entry, err := range map[string]error{"Service.Capture": capErr, "Replayer.Invoke": invErr, "Gate.Submit": turnErr} {
				if c.ok != (err == nil) {
					t.Errorf("%s: %v, want accepted %v", entry, err, c.ok)
					continue
				}
				var fe *fault.Error
				if !c.ok && (!errors.As(err, &fe) || fe.Code != fault.CodeInvalid || fe.Details["field"] != "session_id") {
					t.Errorf("%s: %v, want invalid_request on session_id", entry, err)
				}
			}
		})
	}
}

// TestBodiesAreBoundedInBytes: a string within its schema's maxLength in
// characters but over its byte bound is refused at the edge naming the
// field, also where no domain check bounds it (a tool's description):
// the service is never called.
func TestBodiesAreBoundedInBytes(t *testing.T) {
	e, f := mustFakeEnv(t, nil)
	over := strings.Repeat("é", fields.MaxToolDescBytes/2+1)
	status, body := e.do(t, http.DefaultClient, "PUT", "/v1/tools", map[string]any{"tools": []any{
		map[string]any{"name": "get_jobs"}, map[string]any{"name": "fetch_logs", "description": over}}})
	if status != 400 || !strings.Contains(string(body), `"field":"tools.1.description"`) ||
		!strings.Contains(string(body), "longer than 8192 bytes") {
		t.Fatalf("PUT /v1/tools with a %d-byte description: %d %s", len(over), status, body)
	}
	if calls := f.calls(); len(calls) != 0 {
		t.Fatalf("a refused body reached %v", calls)
	}
	atLimit := strings.Repeat("é", fields.MaxToolDescBytes/2)
	if status, body := e.do(t, http.DefaultClient, "PUT", "/v1/tools", map[string]any{"tools": append(testToolsAny(), map[string]any{"name": "described", "description": atLimit})}); status != 200 {
		t.Fatalf("PUT /v1/tools with a %d-byte description: %d %s", len(atLimit), status, body)
	}
}

// testToolsAny is testTools as JSON values.
func testToolsAny() []any {
	b, _ := json.Marshal(testTools)
	var out []any
	_ = json.Unmarshal(b, &out)
	return out
}
