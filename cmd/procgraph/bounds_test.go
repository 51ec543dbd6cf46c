package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mustMCPClientAs connects the SDK's client to path on s as the holder of
// token.
func mustMCPClientAs(t *testing.T, s *server, path, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.URL + path,
		HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", path, err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// TestTurnCaptureNeedsCaptureScope: a turn's capture creates a procedure
// (exposed, with planner-visible text), so it needs the capture scope as
// POST /v1/procedures does. An invoke-only token asking for one is refused
// with 403 forbidden naming the scope before anything is decided, recorded
// or run — in either phase — and the same block without capture runs; a
// token with capture captures. Over MCP, run_code takes no capture at all.
func TestTurnCaptureNeedsCaptureScope(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up)
	const code = "a = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nreturn [a, b]"
	body := func(phase string, capture bool) map[string]any {
		b := map[string]any{"code": code, "session_id": "scope", "phase": phase, "arguments": map[string]any{"task_id": 1}}
		if capture {
			b["capture"] = map[string]any{"cause": map[string]any{"name": "planted cause"}, "summary": "planted summary"}
		}
		return b
	}
	before := len(a.decisions(t, "limit=1000"))
	for _, phase := range []string{"automatic", "interactive"} {
		d := mustError(t, a.as(t, a.agent2, "POST", "/v1/turns", body(phase, true)), 403, "forbidden")
		if d["scope"] != "capture" {
			t.Fatalf("%s: details %v, want scope capture", phase, d)
		}
	}
	up.mustSeeNothing(t, "a turn refused for its capture")
	if got := len(a.decisions(t, "limit=1000")); got != before {
		t.Fatalf("a refused turn was recorded: %d decisions, had %d", got, before)
	}
	pending := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/approvals?status=pending", nil), 200)["approvals"].([]any)
	if len(pending) != 0 {
		t.Fatalf("a refused turn is pending: %v", pending)
	}
	list := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/procedures?tool=get_retry_chain", nil), 200)
	if list["total"] != float64(0) {
		t.Fatalf("a refused turn was captured: %v", list)
	}

	// Without capture, the invoke-only token's turn runs; with the scope,
	// the turn captures.
	out := mustStatus(t, a.as(t, a.agent2, "POST", "/v1/turns", body("automatic", false)), 200)
	if out["procedure"] != nil {
		t.Fatalf("a turn without capture captured %v", out["procedure"])
	}
	out = mustStatus(t, a.submit(t, body("automatic", true)), 200)
	if p, _ := out["procedure"].(map[string]any); p == nil {
		t.Fatalf("the capture-scoped turn captured nothing: %v", out)
	}

	// MCP's run_code has no capture argument: asked for one, it refuses
	// the call, on both endpoints, and nothing runs.
	up.reset()
	for _, path := range []string{"/mcp", "/mcp/interactive"} {
		sess := mustMCPClientAs(t, a.server, path, a.agent2)
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{
			"code": code, "arguments": map[string]any{"task_id": 2}, "capture": map[string]any{"summary": "planted"}}})
		if err == nil && !res.IsError {
			t.Fatalf("%s: run_code with capture ran: %s", path, mcpText(res))
		}
	}
	up.mustSeeNothing(t, "run_code asked to capture")
}

// TestTurnPendingPerRequester: one token cannot fill the pending bound and
// starve every other agent. With the defaults (32 in total, 8 per
// requester), 12 concurrent submitters of one token get exactly 8 pending
// and 4 refusals, 429 busy with reason pending_approvals_requester and
// Retry-After, nothing recorded as pending for them; another token's turn
// is still admitted. --max-pending-per-requester above
// --max-pending-approvals refuses to start (TestRefuseToStart).
func TestTurnPendingPerRequester(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up)
	statuses := make([]reply, 12)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() { statuses[i] = a.submit(t, killTurn(fmt.Sprintf("r%d", i), i)) })
	}
	wg.Wait()
	counts := map[int]int{}
	for _, r := range statuses {
		counts[r.Status]++
		if r.Status == 429 {
			d := mustError(t, r, 429, "busy")
			if d["reason"] != "pending_approvals_requester" || d["limit"] != float64(8) {
				t.Fatalf("busy details %v, want reason pending_approvals_requester, limit 8", d)
			}
			if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
				t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
			}
		}
	}
	if counts[202] != 8 || counts[429] != 4 {
		t.Fatalf("statuses %v, want 8 pending and 4 busy", counts)
	}
	for i := range 2 { // another requester still has places
		mustStatus(t, a.as(t, a.agent2, "POST", "/v1/turns", killTurn("other", i)), 202)
	}
	pending := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/approvals?status=pending&limit=100", nil), 200)["approvals"].([]any)
	by := map[string]int{}
	for _, p := range pending {
		by[p.(map[string]any)["requested_by"].(string)]++
	}
	if by["agent"] != 8 || by["agent2"] != 2 || len(by) != 2 {
		t.Fatalf("pending by requester %v, want agent 8 and agent2 2", by)
	}
	up.mustSeeNothing(t, "pending turns")
}

// mustEventually polls cond until it holds, failing after a minute.
func mustEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after a minute", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// mustBusyReason requires a 429 busy answer with details.reason and a
// Retry-After of at least a second.
func mustBusyReason(t *testing.T, r reply, reason string) {
	t.Helper()
	d := mustError(t, r, 429, "busy")
	if d["reason"] != reason {
		t.Fatalf("busy details %v, want reason %s", d, reason)
	}
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
}

// TestLongPollsBounded: with --max-waiters 2, two long polls held (a GET
// with wait_s, a POST /v1/turns with wait_s) leave no place: a third of
// either kind, and MCP's await_approval, is refused at once with 429 busy
// (reason waiters) and Retry-After — the refused POST records nothing
// pending. A GET without wait_s still answers; once the held polls end, a
// long poll is admitted again.
func TestLongPollsBounded(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up, "--max-waiters", "2")
	first := a.mustPending(t, killTurn("w", 1))
	var wg sync.WaitGroup
	held := make([]reply, 2)
	wg.Go(func() { held[0] = a.as(t, a.agent, "GET", "/v1/turns/"+first+"?wait_s=60", nil) })
	wg.Go(func() {
		b := killTurn("w", 2)
		b["wait_s"] = 60
		held[1] = a.submit(t, b)
	})
	mustEventually(t, "two long polls held", func() bool { return a.Main.gate.Waiting() == 2 })

	mustBusyReason(t, a.as(t, a.agent, "GET", "/v1/turns/"+first+"?wait_s=5", nil), "waiters")
	refused := killTurn("w-refused", 3)
	refused["wait_s"] = 5
	mustBusyReason(t, a.submit(t, refused), "waiters")
	if st := mustStatus(t, a.as(t, a.agent, "GET", "/v1/turns/"+first, nil), 200)["turn"].(map[string]any)["status"]; st != "pending" {
		t.Fatalf("turn %s is %v", first, st)
	}
	sess := mustMCPClientAs(t, a.server, "/mcp/interactive", a.agent)
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "await_approval", Arguments: map[string]any{"id": first, "wait_s": 5}})
	if err != nil || !res.IsError || !strings.Contains(mcpText(res), "waiting") {
		t.Fatalf("await_approval past the bound: %v %v", err, res)
	}
	pending := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/approvals?status=pending&limit=100", nil), 200)["approvals"].([]any)
	if len(pending) != 2 {
		t.Fatalf("%d pending approvals, want the 2 held (the refused turn recorded nothing)", len(pending))
	}

	// Resolving both ends the held polls; the places are free again.
	for _, p := range pending {
		mustStatus(t, a.resolve(t, a.op, p.(map[string]any)["id"].(string), map[string]any{"choice": "reject"}), 200)
	}
	wg.Wait()
	if held[0].Status != 200 || held[1].Status != 403 {
		t.Fatalf("held polls answered %d and %d, want 200 (the turn) and 403 (denied)", held[0].Status, held[1].Status)
	}
	second := a.mustPending(t, killTurn("w", 4))
	mustStatus(t, a.as(t, a.agent, "DELETE", "/v1/turns/"+second, nil), 200)
	mustStatus(t, a.as(t, a.agent, "GET", "/v1/turns/"+second+"?wait_s=5", nil), 200)
	up.mustSeeNothing(t, "long polls")
}

// TestSearchesBounded: with every one of --max-concurrent-searches places
// held (as that many searches running would hold them), a q search — GET
// /v1/procedures?q=, the planner view with q, MCP find_all_procedures with
// query — is refused after a short bounded wait with 429 busy (reason
// searches) and Retry-After; a listing without q still answers; once a
// place is free, q searches answer again.
func TestSearchesBounded(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up, "--max-concurrent-searches", "2")
	mustCaptureName(t, a.server, "return tools.get_task_jobs_summary(task_id=task_id)", "s")
	var releases []func()
	for range 2 {
		release, err := a.Main.svc.HoldSearch(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	mustBusyReason(t, a.as(t, a.viewer, "GET", "/v1/procedures?q=jobs", nil), "searches")
	mustBusyReason(t, a.as(t, a.viewer, "GET", "/v1/procedures/tools?q=jobs", nil), "searches")
	sess := mustMCPClientAs(t, a.server, "/mcp", a.agent)
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "find_all_procedures", Arguments: map[string]any{"query": "jobs"}})
	if err != nil || !res.IsError || !strings.Contains(mcpText(res), "searches") {
		t.Fatalf("MCP search past the bound: %v %v", err, res)
	}
	if l := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/procedures", nil), 200); l["total"] != float64(1) {
		t.Fatalf("listing without q: %v", l)
	}
	releases[0]()
	if l := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/procedures?q=jobs", nil), 200); l["total"] != float64(1) {
		t.Fatalf("q search with a free place: %v", l)
	}
	mustStatus(t, a.as(t, a.viewer, "GET", "/v1/procedures/tools?q=jobs", nil), 200)
	releases[1]()
}

// TestPolicyAuditSaysWhoWhatWhich: every policy decision names who
// (actor), what (the session) and which code hash. Setting a policy
// records policy_set with the session; revoking by prefix records one
// policy_revoked for that policy; revoking all records one per revoked
// policy, each with its code hash and the session. No record holds a
// value (code or arguments).
func TestPolicyAuditSaysWhoWhatWhich(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up)
	const session = "audit:1"
	var hashes []string
	for i, code := range []string{turnKillCode, "x = tools.kill_job(panda_id=panda_id)\nreturn x", "return [tools.kill_job(panda_id=panda_id)]"} {
		body := map[string]any{"code": code, "session_id": session, "phase": "interactive", "arguments": map[string]any{"panda_id": 900 + i}}
		id := a.mustAutoRun(t, body, "fine")
		turn := mustStatus(t, a.as(t, a.agent, "GET", "/v1/turns/"+id, nil), 200)["turn"].(map[string]any)
		hashes = append(hashes, turn["code_hash"].(string))
	}
	policy := func(reason string) []map[string]any {
		var out []map[string]any
		for _, d := range a.decisions(t, "kind=policy&limit=100") {
			if d["reason"] == reason {
				out = append(out, d)
			}
		}
		return out
	}
	requireNames := func(ds []map[string]any, want []string) {
		t.Helper()
		var got []string
		for _, d := range ds {
			if d["actor"] != "op" || d["session"] != session {
				t.Fatalf("record %v: want actor op, session %s", d, session)
			}
			got = append(got, d["code_hash"].(string))
			b, _ := json.Marshal(d)
			if strings.Contains(string(b), "panda_id") || strings.Contains(string(b), "tools.") {
				t.Fatalf("a policy record holds a value: %s", b)
			}
		}
		slices.Sort(got)
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(got, want) {
			t.Fatalf("records name %v, want %v", got, want)
		}
	}
	requireNames(policy("policy_set"), hashes)

	out := mustStatus(t, a.as(t, a.op, "DELETE", "/v1/sessions/"+session+"/policies/"+hashes[0][:12], nil), 200)
	if out["revoked"] != float64(1) {
		t.Fatalf("revoke by prefix: %v", out)
	}
	requireNames(policy("policy_revoked"), hashes[:1])
	out = mustStatus(t, a.as(t, a.op, "DELETE", "/v1/sessions/"+session+"/policies", nil), 200)
	if out["revoked"] != float64(2) || len(out["decisions"].([]any)) != 2 {
		t.Fatalf("revoke all: %v", out)
	}
	requireNames(policy("policy_revoked"), hashes)
}
