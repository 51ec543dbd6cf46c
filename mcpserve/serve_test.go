package mcpserve

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
)

// TestListTools: the fixed tools and the exposed procedures, with their
// schemas and read-only hints; opaque and single-tool procedures are not
// offered.
func TestListTools(t *testing.T) {
	e := newEnv(t, true)
	ro, sc := e.capture(readOnlyCode), e.capture(stateChangingCode)
	opaque := e.capture(escapeCode)
	e.capture(`return tools.get_jobs(task_id=task_id)`)
	s := e.connect("/mcp", "operator", nil)
	tools := map[string]*mcp.Tool{}
	for tool, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = tool
	}
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{FindToolName, ro.Name, sc.Name, AutoRunToolName}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v (opaque %s must not be offered)", names, want, opaque.Name)
	}
	rt, st := tools[ro.Name], tools[sc.Name]
	if !rt.Annotations.ReadOnlyHint || st.Annotations.ReadOnlyHint || st.Annotations.DestructiveHint == nil || !*st.Annotations.DestructiveHint {
		t.Fatalf("annotations %+v / %+v", rt.Annotations, st.Annotations)
	}
	if !tools[FindToolName].Annotations.ReadOnlyHint || tools[AutoRunToolName].Annotations.ReadOnlyHint {
		t.Fatal("fixed tools' read-only hints")
	}
	schema, _ := json.Marshal(rt.InputSchema)
	if !strings.Contains(string(schema), `"required":["task_id"]`) || !strings.Contains(string(schema), `"type":"object"`) {
		t.Fatalf("input schema %s", schema)
	}
	if !strings.Contains(rt.Description, "fetch_logs and get_jobs") {
		t.Fatalf("description %q", rt.Description)
	}
	if rt.Meta[MetaAutoRun] != false || st.Meta[MetaSignature] == nil {
		t.Fatalf("meta %v / %v", rt.Meta, st.Meta)
	}
}

// TestInvokeAutomatic: /mcp replays read-only procedures; a state-changing
// one is denied before anything runs; an escape is refused at run time.
func TestInvokeAutomatic(t *testing.T) {
	e := newEnv(t, true)
	ro, sc := e.capture(readOnlyCode), e.capture(stateChangingCode)
	opaque := e.capture(escapeCode)
	outer := e.capture("jobs = tools.get_jobs(task_id=task_id)\nreturn tools." + opaque.Name + "(task_id=task_id)")
	s := e.connect("/mcp", "invoker", nil)

	res := call(t, s, ro.Name, map[string]any{"task_id": 42})
	if res.IsError {
		t.Fatalf("read-only call failed: %s", text(res))
	}
	want := `{"jobs":{"task_id":42,"tool":"get_jobs"},"logs":{"task_id":42,"tool":"fetch_logs"}}`
	if got, _ := json.Marshal(res.StructuredContent); string(got) != want || text(res) != want {
		t.Fatalf("structured %s, text %s", got, text(res))
	}
	if id, _ := res.Meta[MetaDecision].(string); !strings.HasPrefix(id, "pgd_") {
		t.Fatalf("meta %v", res.Meta)
	}
	if got := e.up.seen(); !slices.Equal(got, []string{"get_jobs", "fetch_logs"}) {
		t.Fatalf("upstream saw %v", got)
	}

	res = call(t, s, sc.Name, map[string]any{"task_id": 1})
	if !res.IsError || !strings.Contains(text(res), "state_changing_in_automatic_phase") {
		t.Fatalf("state-changing in automatic: %v %s", res.IsError, text(res))
	}
	if got := e.up.seen(); len(got) != 2 {
		t.Fatalf("the denied replay reached the upstream: %v", got)
	}
	ds, err := e.svc.Decisions(context.Background(), audit.DecisionFilter{Procedure: sc.Name})
	if err != nil || len(ds) != 1 || ds[0].Outcome != audit.Denied || ds[0].Actor != "invoker" || ds[0].Phase != audit.PhaseAutomatic {
		t.Fatalf("audit %+v, %v", ds, err)
	}

	if !slices.Contains(toolNames(t, s), outer.Name) {
		t.Fatalf("%s is not offered", outer.Name)
	}
	res = call(t, s, outer.Name, map[string]any{"task_id": 3})
	if !res.IsError || !strings.HasPrefix(text(res), "tool_refused") || res.Meta[MetaErrorCode] != "tool_refused" {
		t.Fatalf("escape: %v %s %v", res.IsError, text(res), res.Meta)
	}
	if slices.Contains(e.up.seen(), "kill_job") {
		t.Fatalf("the upstream saw kill_job: %v", e.up.seen())
	}

	res = call(t, s, ro.Name, map[string]any{"task": 1})
	if !res.IsError || !strings.HasPrefix(text(res), "invalid_arguments") {
		t.Fatalf("bad arguments: %s", text(res))
	}
}

// TestInvokeInteractive: a grant through set_procedure_auto_run lets
// /mcp/interactive run a state-changing procedure, audited with the holder.
func TestInvokeInteractive(t *testing.T) {
	e := newEnv(t, true)
	sc := e.capture(stateChangingCode)
	s := e.connect("/mcp/interactive", "operator", nil)
	res := call(t, s, sc.Name, map[string]any{"task_id": 1})
	if !res.IsError || !strings.Contains(text(res), "review_required") {
		t.Fatalf("ungranted: %s", text(res))
	}
	res = call(t, s, AutoRunToolName, map[string]any{"name": sc.Name, "enabled": true, "reason": "reviewed"})
	if res.IsError {
		t.Fatalf("grant: %s", text(res))
	}
	var out struct {
		Decision audit.Decision `json:"decision"`
	}
	if err := json.Unmarshal([]byte(text(res)), &out); err != nil || out.Decision.Kind != audit.KindGrant || out.Decision.Actor != "operator" {
		t.Fatalf("grant answer %s: %v", text(res), err)
	}
	res = call(t, s, sc.Name, map[string]any{"task_id": 1})
	if res.IsError || !slices.Contains(e.up.seen(), "kill_job") {
		t.Fatalf("granted: %s; upstream %v", text(res), e.up.seen())
	}
	auto := e.connect("/mcp", "operator", nil)
	if res := call(t, auto, sc.Name, map[string]any{"task_id": 1}); !res.IsError || !strings.Contains(text(res), "state_changing_in_automatic_phase") {
		t.Fatalf("granted, automatic: %s", text(res))
	}
}

// TestAutoRunConflict: granting a state-changing procedure while mutating
// auto-run is off is a tool error with the reason, and audited.
func TestAutoRunConflict(t *testing.T) {
	e := newEnv(t, false)
	sc := e.capture(stateChangingCode)
	s := e.connect("/mcp/interactive", "operator", nil)
	res := call(t, s, AutoRunToolName, map[string]any{"name": sc.Name, "enabled": true})
	if !res.IsError || !strings.HasPrefix(text(res), "conflict (not_read_only)") {
		t.Fatalf("conflict: %s", text(res))
	}
	res = call(t, s, AutoRunToolName, map[string]any{"name": "proc__nope", "enabled": false})
	if !res.IsError || !strings.HasPrefix(text(res), "not_found") {
		t.Fatalf("unknown: %s", text(res))
	}
	ds, _ := e.svc.Decisions(context.Background(), audit.DecisionFilter{Procedure: sc.Name})
	if len(ds) != 1 || ds[0].Reason != audit.ReasonNotReadOnly || ds[0].Actor != "operator" {
		t.Fatalf("audit %+v", ds)
	}
}

// TestFind: find_all_procedures has the HTTP filters and validation.
func TestFind(t *testing.T) {
	e := newEnv(t, false)
	ro := e.capture(readOnlyCode)
	e.capture(stateChangingCode)
	s := e.connect("/mcp", "reader", nil)
	res := call(t, s, FindToolName, map[string]any{"exposed": true})
	var page struct {
		Procedures []procedures.Procedure `json:"procedures"`
		Total      int                    `json:"total"`
	}
	if err := json.Unmarshal([]byte(text(res)), &page); err != nil || page.Total != 1 || page.Procedures[0].Name != ro.Name {
		t.Fatalf("exposed: %s (%v)", text(res), err)
	}
	if res := call(t, s, FindToolName, nil); res.IsError || !strings.Contains(text(res), `"total":2`) {
		t.Fatalf("all: %s", text(res))
	}
	for _, bad := range []map[string]any{{"limit": 0}, {"limit": 501}, {"colour": "red"}, {"status": "weird"}, {"tool": "x"}} {
		if res := call(t, s, FindToolName, bad); !res.IsError || !strings.HasPrefix(text(res), "invalid_request") {
			t.Fatalf("%v: %s", bad, text(res))
		}
	}
}

func toolNames(t *testing.T, s *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range s.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}
