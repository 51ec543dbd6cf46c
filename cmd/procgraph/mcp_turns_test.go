package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func callRunCode(t *testing.T, sess *mcp.ClientSession, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: args})
	if err != nil {
		t.Fatalf("run_code: %v", err)
	}
	return res
}

// TestMCPRunCode: run_code is the turn on both endpoints; on
// /mcp/interactive a client that cannot elicit gets the pending approval's
// id and await_approval runs it once an operator approved it over HTTP.
func TestMCPRunCode(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, AllowMutating: true})

	auto := mustMCPClient(t, s, "/mcp", nil)
	if _, ok := mcpToolNames(t, auto)["await_approval"]; ok {
		t.Fatal("/mcp offers await_approval: nothing waits for an operator there")
	}
	res := callRunCode(t, auto, map[string]any{"code": "return tools.get_task_jobs_summary(task_id=4)"})
	if res.IsError || !strings.Contains(mcpText(res), "read_only") {
		t.Fatalf("read-only run_code on /mcp: %s", mcpText(res))
	}
	up.reset()
	res = callRunCode(t, auto, map[string]any{"code": turnKillCode, "arguments": map[string]any{"panda_id": 1}})
	if !res.IsError || !strings.Contains(mcpText(res), "state_changing_in_automatic_phase") {
		t.Fatalf("state-changing run_code on /mcp: %s", mcpText(res))
	}
	up.mustSeeNothing(t, "run_code denied on /mcp")

	inter := mustMCPClient(t, s, "/mcp/interactive", nil)
	res = callRunCode(t, inter, map[string]any{"code": turnKillCode, "arguments": map[string]any{"panda_id": 2}, "session_id": "m"})
	var pending struct {
		PendingApproval string `json:"pending_approval"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError || json.Unmarshal(b, &pending) != nil || pending.PendingApproval == "" {
		t.Fatalf("run_code without elicitation: %s", mcpText(res))
	}
	up.mustSeeNothing(t, "pending run_code")
	mustStatus(t, s.post(t, "/v1/approvals/"+pending.PendingApproval+"/resolve", map[string]any{"choice": "run_once"}), 200)
	res, err := inter.CallTool(context.Background(), &mcp.CallToolParams{Name: "await_approval", Arguments: map[string]any{"id": pending.PendingApproval, "wait_s": 5}})
	if err != nil {
		t.Fatalf("await_approval: %v", err)
	}
	if res.IsError {
		t.Fatalf("await_approval: %s", mcpText(res))
	}
	res, err = inter.CallTool(context.Background(), &mcp.CallToolParams{Name: "await_approval", Arguments: map[string]any{"id": pending.PendingApproval}})
	if err != nil {
		t.Fatalf("second await_approval: %v", err)
	}
	if !res.IsError {
		t.Fatalf("a second await_approval ran the turn again: %s", mcpText(res))
	}
	if got := up.tools(); !slices.Equal(got, []string{"kill_job"}) {
		t.Fatalf("upstream saw %v, want kill_job once", got)
	}
}

// TestMCPRunCodeElicitation: a client that elicits, held by an operator
// with grant, reviews the block in the client: accepted it runs (recorded
// as that holder's approval), declined it is rejected and runs nothing; an
// auto_run on a proc__-only block creates a grant, and the client is told
// its tool list changed. Both ways a client is asked: an input-required
// result (2026-07-28, stateless) and elicitation on a session (2025-11-25).
func TestMCPRunCodeElicitation(t *testing.T) {
	for _, revision := range []string{modernMCP, legacyMCP} {
		t.Run(revision, func(t *testing.T) { testMCPRunCodeElicitation(t, revision) })
	}
}

func testMCPRunCodeElicitation(t *testing.T, revision string) {
	up := mustUpstream(t)
	s, _ := mustServeFirstTokens(t, serverOpts{Upstream: up, AllowMutating: true})
	var answer atomic.Value
	answer.Store(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"choice": "run_once", "reason": "looks right"}})
	var asked atomic.Int64
	var changed atomic.Int64
	sess := mustMCPAt(t, s, "/mcp/interactive", s.token, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			if !strings.Contains(req.Params.Message, "kill_job") && !strings.Contains(req.Params.Message, "proc__") {
				t.Errorf("the review does not name the tools: %q", req.Params.Message)
			}
			return answer.Load().(*mcp.ElicitResult), nil
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
	}, revision)
	if got := sess.InitializeResult().ProtocolVersion; got != revision {
		t.Fatalf("negotiated %s, want %s", got, revision)
	}
	res := callRunCode(t, sess, map[string]any{"code": turnKillCode, "arguments": map[string]any{"panda_id": 3}, "session_id": "e"})
	if res.IsError || !strings.Contains(mcpText(res), "operator_approved") || asked.Load() != 1 {
		t.Fatalf("accepted review: asked %d, %s", asked.Load(), mcpText(res))
	}
	ds := s.decisions(t, "kind=approval")
	if len(ds) != 1 || ds[0]["actor"] != "operator" {
		t.Fatalf("approval decisions %v", ds)
	}
	up.reset()
	answer.Store(&mcp.ElicitResult{Action: "decline"})
	res = callRunCode(t, sess, map[string]any{"code": turnKillCode, "arguments": map[string]any{"panda_id": 4}, "session_id": "e"})
	if !res.IsError || !strings.Contains(mcpText(res), "denied") {
		t.Fatalf("declined review: %s", mcpText(res))
	}
	up.mustSeeNothing(t, "declined review")

	name := mustCaptureName(t, s, "s = tools.get_task_jobs_summary(task_id=task_id)\ntools.retry_task(task_id=task_id)\nreturn s", "cap")
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, ok := mcpToolNames(t, sess)[name]; ok {
			break
		}
	}
	time.Sleep(300 * time.Millisecond) // the capture's own list_changed has arrived
	before := changed.Load()
	answer.Store(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"choice": "auto_run"}})
	res = callRunCode(t, sess, map[string]any{"code": "return tools." + name + "(task_id=task_id)", "arguments": map[string]any{"task_id": 1}, "session_id": "e"})
	if res.IsError {
		t.Fatalf("auto_run review: %s", mcpText(res))
	}
	p := mustStatus(t, s.get(t, "/v1/procedures/"+name), 200)
	if p["auto_run"].(map[string]any)["active"] != true {
		t.Fatalf("no active grant after auto_run: %v", p["auto_run"])
	}
	for deadline := time.Now().Add(5 * time.Second); changed.Load() == before && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if changed.Load() == before {
		t.Fatal("no tools/list_changed after the grant")
	}
}

// runCodeSuggestion returns the suggestion of a run_code answer's
// structured content (nil when it has none) and checks the decision-free
// parts: a suggestion names a tool, a reason and a message.
func runCodeSuggestion(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	var body struct {
		Suggestion map[string]any `json:"suggestion"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("run_code structured content %s: %v", b, err)
	}
	return body.Suggestion
}

// TestMCPRunCodeSuggestsReuse: run_code's answer carries the reuse
// suggestion POST /v1/turns carries — when the turn ran at once (/mcp),
// when it waits for an operator (/mcp/interactive, no elicitation: the
// text names the tool too), and when an operator reviewed it in the client
// and it ran; a block no exposed procedure composes carries none.
func TestMCPRunCodeSuggestsReuse(t *testing.T) {
	up := mustUpstream(t)
	s, ft := mustServeFirstTokens(t, serverOpts{Upstream: up})
	s.token = ft.agent // the reviewer below is the operator
	name := mustCaptureName(t, s, readOnlyCode, "setup")
	if name != readOnlyName {
		t.Fatalf("captured %s", name)
	}
	want := func(t *testing.T, res *mcp.CallToolResult, reason string) {
		t.Helper()
		sug := runCodeSuggestion(t, res)
		if sug == nil || sug["tool"] != name || sug["reason"] != reason || sug["message"] == "" {
			t.Fatalf("suggestion %v, want %s (%s): %s", sug, name, reason, mcpText(res))
		}
	}

	auto := mustMCPClient(t, s, "/mcp", nil)
	res := callRunCode(t, auto, map[string]any{"code": "return tools.get_task_jobs_summary(task_id=4)"})
	if res.IsError || !strings.Contains(mcpText(res), "read_only") {
		t.Fatalf("read-only run_code on /mcp: %s", mcpText(res))
	}
	want(t, res, "covered_by")
	res = callRunCode(t, auto, map[string]any{"code": "x = tools.get_retry_chain(task_id=2)\ny = tools.get_task_jobs_summary(task_id=2)\nreturn [x, y]"})
	if res.IsError {
		t.Fatalf("same tools on /mcp: %s", mcpText(res))
	}
	want(t, res, "same_signature")

	up.reset()
	inter := mustMCPClient(t, s, "/mcp/interactive", nil)
	res = callRunCode(t, inter, map[string]any{"code": "return tools.get_retry_chain(task_id=5)", "session_id": "p"})
	var pending struct {
		PendingApproval string `json:"pending_approval"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError || json.Unmarshal(b, &pending) != nil || pending.PendingApproval == "" {
		t.Fatalf("run_code pending: %s", mcpText(res))
	}
	want(t, res, "covered_by")
	if !strings.Contains(mcpText(res), name) {
		t.Fatalf("the pending answer's text does not name %s: %s", name, mcpText(res))
	}
	up.mustSeeNothing(t, "pending run_code")

	res = callRunCode(t, inter, map[string]any{"code": turnKillCode, "arguments": map[string]any{"panda_id": 1}, "session_id": "p"})
	if res.IsError || runCodeSuggestion(t, res) != nil {
		t.Fatalf("a block no exposed procedure composes: %s", mcpText(res))
	}

	reviewer := mustMCPAs(t, s, "/mcp/interactive", ft.operator, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"choice": "run_once"}}, nil
		},
	})
	res = callRunCode(t, reviewer, map[string]any{"code": "return tools.get_task_jobs_summary(task_id=6)", "session_id": "r"})
	if res.IsError || !strings.Contains(mcpText(res), "operator_approved") {
		t.Fatalf("reviewed run_code: %s", mcpText(res))
	}
	want(t, res, "covered_by")
}
