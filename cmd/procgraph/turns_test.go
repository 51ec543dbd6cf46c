package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// turnActors is a server with tokens: two agents (invoke), an operator
// (grant) and a viewer (read).
type turnActors struct {
	*server
	agent, agent2, op, viewer string
}

func mustTurnServer(t testing.TB, up *upstream, extra ...string) *turnActors {
	t.Helper()
	file := filepath.Join(t.TempDir(), "tokens.json")
	a := &turnActors{
		agent:  mustCreateToken(t, file, "agent", "read,invoke,capture"),
		agent2: mustCreateToken(t, file, "agent2", "read,invoke"),
		op:     mustCreateToken(t, file, "op", "read,grant"),
		viewer: mustCreateToken(t, file, "viewer", "read"),
	}
	a.server = mustServe(t, serverOpts{Upstream: up, TokensFile: file, AllowMutating: true, Extra: extra})
	a.server.token = a.agent
	return a
}

func (a *turnActors) as(t testing.TB, tok, method, path string, body any) reply {
	t.Helper()
	return a.send(t, req{Method: method, Path: path, Body: body, Token: &tok})
}

// submit submits a turn as the agent.
func (a *turnActors) submit(t *testing.T, body map[string]any) reply {
	t.Helper()
	return a.as(t, a.agent, "POST", "/v1/turns", body)
}

const turnKillCode = "return tools.kill_job(panda_id=panda_id)"

func killTurn(session string, id int) map[string]any {
	return map[string]any{"code": turnKillCode, "session_id": session, "phase": "interactive",
		"arguments": map[string]any{"panda_id": id}}
}

// mustPending submits body and requires a pending turn; returns its id.
func (a *turnActors) mustPending(t *testing.T, body map[string]any) string {
	t.Helper()
	out := mustStatus(t, a.submit(t, body), 202)
	turn := out["turn"].(map[string]any)
	if turn["status"] != "pending" {
		t.Fatalf("turn %v, want pending", turn)
	}
	return turn["id"].(string)
}

// mustAutoRun submits body (pending), has the operator resolve it auto_run
// with reason, and runs it as the agent; it returns the turn's id.
func (a *turnActors) mustAutoRun(t *testing.T, body map[string]any, reason string) string {
	t.Helper()
	id := a.mustPending(t, body)
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "auto_run", "reason": reason}), 200)
	mustStatus(t, a.run(t, a.agent, id), 200)
	return id
}

func (a *turnActors) resolve(t *testing.T, tok, id string, body map[string]any) reply {
	t.Helper()
	return a.as(t, tok, "POST", "/v1/approvals/"+id+"/resolve", body)
}

func (a *turnActors) run(t *testing.T, tok, id string) reply {
	t.Helper()
	return a.as(t, tok, "POST", "/v1/turns/"+id+"/run", nil)
}

// TestTurnBoundary: nothing a turn calls reaches the upstream before an
// operator with grant approved it, and an approved turn runs once, for its
// requester only.
func TestTurnBoundary(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up)

	// Automatic phase: read-only runs, state-changing is denied.
	out := mustStatus(t, a.submit(t, map[string]any{"code": "return tools.get_task_jobs_summary(task_id=task_id)",
		"session_id": "auto", "phase": "automatic", "arguments": map[string]any{"task_id": 3}}), 200)
	if out["status"] != "succeeded" || out["decision"].(map[string]any)["reason"] != "read_only" {
		t.Fatalf("automatic read-only turn: %v", out)
	}
	if got := up.tools(); !slices.Equal(got, []string{"get_task_jobs_summary"}) {
		t.Fatalf("upstream saw %v", got)
	}
	up.reset()
	body := killTurn("auto", 1)
	body["phase"] = "automatic"
	d := mustError(t, a.submit(t, body), 403, "denied")
	if d["decision"].(map[string]any)["reason"] != "state_changing_in_automatic_phase" {
		t.Fatalf("details %v", d)
	}
	up.mustSeeNothing(t, "automatic state-changing turn")

	// Bad input: nothing is asked.
	mustError(t, a.submit(t, map[string]any{"code": "import os", "session_id": "s", "phase": "interactive"}), 422, "invalid_code")
	mustError(t, a.submit(t, map[string]any{"code": turnKillCode, "session_id": "s", "phase": "interactive"}), 422, "invalid_arguments")
	// Typed from the catalogue: kill_job's panda_id is an integer.
	mustError(t, a.submit(t, map[string]any{"code": turnKillCode, "session_id": "s", "phase": "interactive",
		"arguments": map[string]any{"panda_id": "all"}}), 422, "invalid_arguments")
	mustError(t, a.submit(t, map[string]any{"code": turnKillCode, "phase": "interactive"}), 400, "invalid_request")
	pend := mustStatus(t, a.as(t, a.op, "GET", "/v1/approvals?status=pending", nil), 200)
	if n := len(pend["approvals"].([]any)); n != 0 {
		t.Fatalf("%d approvals after rejected input, want 0", n)
	}

	// Interactive: pending; nothing ran.
	id := a.mustPending(t, killTurn("s1", 42))
	up.mustSeeNothing(t, "pending turn")
	appr := mustStatus(t, a.as(t, a.op, "GET", "/v1/approvals/"+id, nil), 200)
	if appr["code"] != turnKillCode || appr["arguments"].(map[string]any)["panda_id"] != float64(42) {
		t.Fatalf("operator's approval view %v", appr)
	}
	if v := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/approvals/"+id, nil), 200); v["arguments"] != nil {
		t.Fatalf("a caller without grant sees argument values: %v", v["arguments"])
	}

	// Refusals that run nothing.
	mustError(t, a.run(t, a.agent, id), 409, "conflict")
	mustError(t, a.resolve(t, a.agent, id, map[string]any{"choice": "run_once"}), 403, "forbidden")
	mustError(t, a.resolve(t, a.op, id, map[string]any{"choice": "RUN_ONCE"}), 400, "invalid_request")
	mustError(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once", "extra": 1}), 400, "invalid_request")
	mustError(t, a.resolve(t, a.op, strings.ToUpper(id), map[string]any{"choice": "run_once"}), 404, "not_found")
	mustError(t, a.resolve(t, a.op, id+"0", map[string]any{"choice": "run_once"}), 404, "not_found")
	mustError(t, a.resolve(t, a.op, "trn_00000000000000000000000000000000", map[string]any{"choice": "run_once"}), 404, "not_found")
	mustError(t, a.as(t, a.agent2, "GET", "/v1/turns/"+id, nil), 403, "forbidden")
	up.mustSeeNothing(t, "refused resolutions")

	// An exact approval: runs once, for its requester.
	res := mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once", "reason": "checked"}), 200)
	if dd := res["decision"].(map[string]any); dd["kind"] != "approval" || dd["actor"] != "op" || dd["reason"] != "operator_approved" {
		t.Fatalf("approval decision %v", dd)
	}
	mustError(t, a.resolve(t, a.op, id, map[string]any{"choice": "reject"}), 409, "conflict")
	mustError(t, a.run(t, a.agent2, id), 403, "forbidden")
	up.mustSeeNothing(t, "approved, not yet run")
	ran := mustStatus(t, a.run(t, a.agent, id), 200)
	if ran["status"] != "succeeded" || ran["turn"].(map[string]any)["status"] != "succeeded" ||
		ran["decision"].(map[string]any)["reason"] != "operator_approved" {
		t.Fatalf("run: %v", ran)
	}
	mustError(t, a.run(t, a.agent, id), 409, "conflict")
	if got := up.tools(); !slices.Equal(got, []string{"kill_job"}) {
		t.Fatalf("upstream saw %v, want kill_job once", got)
	}
	done := mustStatus(t, a.as(t, a.op, "GET", "/v1/approvals/"+id, nil), 200)
	if done["code"] != "" || done["arguments"] != nil {
		t.Fatalf("a run turn keeps code %q / arguments %v", done["code"], done["arguments"])
	}
	up.reset()

	// Reject and cancel run nothing.
	rid := a.mustPending(t, killTurn("s1", 43))
	mustStatus(t, a.resolve(t, a.op, rid, map[string]any{"choice": "reject"}), 200)
	mustError(t, a.run(t, a.agent, rid), 409, "conflict")
	cid := a.mustPending(t, killTurn("s1", 44))
	c := mustStatus(t, a.as(t, a.agent, "DELETE", "/v1/turns/"+cid, nil), 200)
	if c["turn"].(map[string]any)["status"] != "cancelled" {
		t.Fatalf("cancel: %v", c)
	}
	mustError(t, a.resolve(t, a.op, cid, map[string]any{"choice": "run_once"}), 409, "conflict")
	mustError(t, a.run(t, a.agent, cid), 409, "conflict")
	up.mustSeeNothing(t, "rejected and cancelled turns")

	// Crossed parallel turns in two sessions never resolve each other.
	x := a.mustPending(t, killTurn("sx", 1))
	y := a.mustPending(t, map[string]any{"code": "return tools.retry_task(task_id=task_id)", "session_id": "sy",
		"phase": "interactive", "arguments": map[string]any{"task_id": 2}})
	mustStatus(t, a.resolve(t, a.op, x, map[string]any{"choice": "run_once"}), 200)
	mustError(t, a.run(t, a.agent, y), 409, "conflict")
	mustStatus(t, a.run(t, a.agent, x), 200)
	if got := up.tools(); !slices.Equal(got, []string{"kill_job"}) {
		t.Fatalf("upstream saw %v, want only the approved kill_job", got)
	}
	yt := mustStatus(t, a.as(t, a.agent, "GET", "/v1/turns/"+y, nil), 200)["turn"].(map[string]any)
	if yt["status"] != "pending" {
		t.Fatalf("the other session's turn is %v", yt["status"])
	}
	up.reset()

	// Long poll: a waiting submit runs as soon as the operator approves.
	var wg sync.WaitGroup
	var waited reply
	wg.Go(func() {
		body := killTurn("sw", 9)
		body["wait_s"] = 30
		waited = a.submit(t, body)
	})
	var wid string
	for deadline := time.Now().Add(10 * time.Second); wid == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		l := mustStatus(t, a.as(t, a.op, "GET", "/v1/approvals?status=pending&session=sw", nil), 200)["approvals"].([]any)
		if len(l) == 1 {
			wid = l[0].(map[string]any)["id"].(string)
		}
	}
	if wid == "" {
		t.Fatal("the waiting turn never showed up as pending")
	}
	start := time.Now()
	mustStatus(t, a.resolve(t, a.op, wid, map[string]any{"choice": "run_once"}), 200)
	wg.Wait()
	if waited.Status != 200 || time.Since(start) > 20*time.Second {
		t.Fatalf("the waiting submit answered %d after %v: %s", waited.Status, time.Since(start), waited.Body)
	}

	// Audit: one decision per turn that ended (automatic ×2, run ×3,
	// rejected, cancelled; y is still pending) and per resolution (×4).
	if n := len(a.decisions(t, "kind=turn&limit=1000")); n != 7 {
		t.Fatalf("%d turn decisions, want 7", n)
	}
	if n := len(a.decisions(t, "kind=approval&limit=1000")); n != 4 {
		t.Fatalf("%d approval decisions, want 4", n)
	}
	// Audit: every turn, approval and policy decision holds no code or
	// argument values.
	for _, kind := range []string{"turn", "approval"} {
		ds := a.decisions(t, "kind="+kind+"&limit=1000")
		if len(ds) == 0 {
			t.Fatalf("no %s decisions", kind)
		}
		for _, d := range ds {
			s := fmt.Sprint(d)
			if strings.Contains(s, "panda_id") || strings.Contains(s, "tools.") {
				t.Fatalf("decision holds code or arguments: %v", d)
			}
		}
	}
}

// TestTurnPendingBound: 32 concurrent submitters never get more than
// --max-pending-approvals pending; the rest are refused 429 busy.
func TestTurnPendingBound(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up, "--max-pending-approvals", "3")
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			r := a.submit(t, killTurn(fmt.Sprintf("b%d", i), i))
			mu.Lock()
			counts[r.Status]++
			mu.Unlock()
			if r.Status == 429 {
				d := mustError(t, r, 429, "busy")
				if d["reason"] != "pending_approvals" || r.Header.Get("Retry-After") == "" {
					t.Errorf("busy answer: %v, Retry-After %q", d, r.Header.Get("Retry-After"))
				}
			}
		})
	}
	wg.Wait()
	if counts[202] != 3 || counts[429] != 29 {
		t.Fatalf("statuses %v, want 3 pending and 29 busy", counts)
	}
	up.mustSeeNothing(t, "pending turns")
}

// TestTurnExpiry: past its deadline an approval resolves nothing and its
// turn never runs.
func TestTurnExpiry(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up, "--approval-timeout", "1s")
	id := a.mustPending(t, killTurn("s", 1))
	id2 := a.mustPending(t, killTurn("s", 2))
	mustStatus(t, a.resolve(t, a.op, id2, map[string]any{"choice": "run_once"}), 200)
	time.Sleep(1100 * time.Millisecond)
	if l := mustStatus(t, a.as(t, a.op, "GET", "/v1/approvals?status=pending", nil), 200)["approvals"].([]any); len(l) != 0 {
		t.Fatalf("expired approvals listed as pending: %v", l)
	}
	d := mustError(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once"}), 409, "conflict")
	if d["status"] != "expired" {
		t.Fatalf("details %v, want status expired", d)
	}
	mustError(t, a.run(t, a.agent, id2), 409, "conflict")
	up.mustSeeNothing(t, "expired turns")
	ds := a.decisions(t, "kind=turn")
	expired := 0
	for _, d := range ds {
		if d["reason"] == "approval_expired" {
			expired++
		}
	}
	if expired != 2 {
		t.Fatalf("%d approval_expired decisions, want 2", expired)
	}
}

// TestTurnPolicies: auto_run on a state-changing block skips review for
// the same code with the values the operator saw and for a
// formatting-only change, never for other values, a logic change or
// another session; revoking by prefix restores review; auto_run on a
// proc__-only block makes durable grants bound to the current hashes.
func TestTurnPolicies(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up)
	id := a.mustAutoRun(t, killTurn("p", 1), "safe here")
	hash := mustStatus(t, a.as(t, a.agent, "GET", "/v1/turns/"+id, nil), 200)["turn"].(map[string]any)["code_hash"].(string)

	again := mustStatus(t, a.submit(t, killTurn("p", 1)), 200)
	if again["decision"].(map[string]any)["reason"] != "session_policy" {
		t.Fatalf("same code: %v", again["decision"])
	}
	// A state-changing block's policy covers the values the operator saw
	// only (docs/design.md "What an authorization binds to").
	mustStatus(t, a.submit(t, killTurn("p", 2)), 202)
	reformatted := killTurn("p", 1)
	reformatted["code"] = "\n" + turnKillCode + "   \n\n"
	mustStatus(t, a.submit(t, reformatted), 200)
	logic := killTurn("p", 4)
	logic["code"] = "return tools.kill_job(panda_id=panda_id + 1)"
	mustStatus(t, a.submit(t, logic), 202)
	mustStatus(t, a.submit(t, killTurn("other", 5)), 202)

	pol := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/sessions/p/policies", nil), 200)
	ps := pol["policies"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["code_hash"] != hash || ps[0].(map[string]any)["policy"] != "auto_run" {
		t.Fatalf("policies %v", ps)
	}
	mustError(t, a.as(t, a.op, "DELETE", "/v1/sessions/p/policies/"+hash[:4], nil), 400, "invalid_request")
	mustError(t, a.as(t, a.agent, "DELETE", "/v1/sessions/p/policies/"+hash[:8], nil), 403, "forbidden")
	mustStatus(t, a.as(t, a.op, "DELETE", "/v1/sessions/p/policies/"+hash[:8], nil), 200)
	mustStatus(t, a.submit(t, killTurn("p", 1)), 202)
	if n := len(a.decisions(t, "kind=policy")); n != 2 {
		t.Fatalf("%d policy decisions, want 2 (set, revoke)", n)
	}

	// auto_run on a proc__-only block: durable grants.
	name := mustCaptureName(t, a.server, "s = tools.get_task_jobs_summary(task_id=task_id)\ntools.retry_task(task_id=task_id)\nreturn s", "cap")
	block := map[string]any{"code": "return tools." + name + "(task_id=task_id)", "session_id": "g", "phase": "interactive",
		"arguments": map[string]any{"task_id": 5}}
	gid := a.mustPending(t, block)
	mustStatus(t, a.resolve(t, a.op, gid, map[string]any{"choice": "auto_run"}), 200)
	p := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/procedures/"+name, nil), 200)
	ar := p["auto_run"].(map[string]any)
	if ar["active"] != true || ar["code_hash"] != p["code_hash"] || ar["granted_by"] != "op" {
		t.Fatalf("grant %v on %s", ar, p["code_hash"])
	}
	block["session_id"] = "another"
	next := mustStatus(t, a.submit(t, block), 200)
	if next["decision"].(map[string]any)["reason"] != "durable_auto_run" {
		t.Fatalf("granted block: %v", next["decision"])
	}
}

// TestTurnPolicyBoundToRequester: a session policy decides only the turns
// of the requester whose approved turn set it. Another token holder
// submitting the same code under that session id is reviewed (nothing
// reaches the upstream), and the policy keeps applying to its requester.
func TestTurnPolicyBoundToRequester(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up)
	a.mustAutoRun(t, killTurn("mine", 1), "agent's session")
	up.reset()

	other := mustStatus(t, a.as(t, a.agent2, "POST", "/v1/turns", killTurn("mine", 1)), 202)
	turn := other["turn"].(map[string]any)
	if turn["status"] != "pending" || turn["requested_by"] != "agent2" {
		t.Fatalf("another requester's turn under the session: %v", other)
	}
	up.mustSeeNothing(t, "another requester's turn under a policy it did not set")
	for _, d := range a.decisions(t, "kind=turn") {
		if d["reason"] == "session_policy" {
			t.Fatalf("decided by a policy set for another requester: %v", d)
		}
	}

	own := mustStatus(t, a.submit(t, killTurn("mine", 1)), 200)
	if own["decision"].(map[string]any)["reason"] != "session_policy" {
		t.Fatalf("the requester's own turn: %v", own["decision"])
	}
	if got := up.tools(); !slices.Equal(got, []string{"kill_job"}) {
		t.Fatalf("upstream saw %v, want the requester's one kill_job", got)
	}
	ps := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/sessions/mine/policies", nil), 200)["policies"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["requested_by"] != "agent" || ps[0].(map[string]any)["set_by"] != "op" {
		t.Fatalf("policies %v", ps)
	}
}

// TestTurnCapture: a succeeded turn with capture is captured under its
// session; a rejected one captures nothing.
func TestTurnCapture(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up)
	code := "a = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nreturn [a, b]"
	body := map[string]any{"code": code, "session_id": "c1", "phase": "automatic", "arguments": map[string]any{"task_id": 1},
		"capture": map[string]any{"cause": map[string]any{"name": "stuck"}, "summary": "look"}}
	out := mustStatus(t, a.submit(t, body), 200)
	p, _ := out["procedure"].(map[string]any)
	if p == nil || p["frequency"] != float64(1) {
		t.Fatalf("captured %v", out["procedure"])
	}
	body["phase"] = "interactive"
	body["code"] = "a = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.kill_job(panda_id=task_id)\nreturn [a, b]"
	id := a.mustPending(t, body)
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "reject"}), 200)
	list := mustStatus(t, a.as(t, a.viewer, "GET", "/v1/procedures?tool=kill_job", nil), 200)
	if list["total"] != float64(0) {
		t.Fatalf("a rejected turn was captured: %v", list)
	}
}

// TestTurnRunDeadline: an approved turn's run has the one deadline of its
// request (--replay-timeout from the run's arrival): a tool call that
// outlasts it ends the run as a timeout.
func TestTurnRunDeadline(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up, "--replay-timeout", "1s")
	up.setDelay("kill_job", 10*time.Second)
	id := a.mustPending(t, killTurn("d", 1))
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once"}), 200)
	start := time.Now()
	out := mustStatus(t, a.run(t, a.agent, id), 200)
	e, _ := out["error"].(map[string]any)
	if out["status"] != "failed" || e["code"] != "timeout" || time.Since(start) > 5*time.Second {
		t.Fatalf("run past the deadline: %v after %v", out, time.Since(start))
	}
	if st := mustStatus(t, a.as(t, a.agent, "GET", "/v1/turns/"+id, nil), 200)["turn"].(map[string]any)["status"]; st != "failed" {
		t.Fatalf("turn status %v, want failed", st)
	}
	mustError(t, a.run(t, a.agent, id), 409, "conflict")
}
