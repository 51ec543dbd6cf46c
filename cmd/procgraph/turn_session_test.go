package main

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
)

// turnAudit counts the turn and approval decisions of a server by session
// ("kind reason" -> count); a record without a session counts under "".
func turnAudit(t *testing.T, a *turnActors) map[string]map[string]int {
	t.Helper()
	out := map[string]map[string]int{}
	for _, kind := range []string{"turn", "approval"} {
		for _, d := range a.decisions(t, "kind="+kind+"&limit=1000") {
			s, _ := d["session"].(string)
			if out[s] == nil {
				out[s] = map[string]int{}
			}
			out[s][fmt.Sprint(d["kind"], " ", d["reason"])]++
		}
	}
	return out
}

// TestTurnDecisionsCarrySession: every audit record of a turn — decided
// at once (allowed or denied), approved and run, rejected, cancelled,
// auto-run by a session policy, expired, submitted over MCP without a
// session_id — and every operator's approval names the agent session the
// turn belongs to, as policy records do: the audit says which session a
// decision was about.
func TestTurnDecisionsCarrySession(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	a := mustTurnServer(t, up)

	readOnly := map[string]any{"code": "return tools.get_task_jobs_summary(task_id=task_id)", "session_id": "auto-ok",
		"phase": "automatic", "arguments": map[string]any{"task_id": 3}}
	mustStatus(t, a.submit(t, readOnly), 200)
	deny := killTurn("auto-deny", 1)
	deny["phase"] = "automatic"
	d := mustError(t, a.submit(t, deny), 403, "denied")
	if got := d["decision"].(map[string]any)["session"]; got != "auto-deny" {
		t.Fatalf("the denial's decision names session %v", got)
	}

	id := a.mustPending(t, killTurn("run", 2))
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once", "reason": "checked"}), 200)
	mustStatus(t, a.run(t, a.agent, id), 200)

	id = a.mustPending(t, killTurn("reject", 3))
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "reject"}), 200)

	id = a.mustPending(t, killTurn("cancel", 4))
	mustStatus(t, a.as(t, a.agent, "DELETE", "/v1/turns/"+id, nil), 200)

	a.mustAutoRun(t, killTurn("policy", 5), "reviewed")
	mustStatus(t, a.submit(t, killTurn("policy", 5)), 200)

	// Over MCP without a session_id: the MCP session's (2026-07-28: mcp:
	// and the token holder).
	sess := mustMCPAt(t, a.server, "/mcp", a.agent, nil, modernMCP)
	if res := callTool(t, sess, "run_code", map[string]any{"code": "return tools.get_task_jobs_summary(task_id=7)"}); res.IsError {
		t.Fatalf("run_code: %s", mcpText(res))
	}

	want := map[string]map[string]int{
		"auto-ok":   {"turn read_only": 1},
		"auto-deny": {"turn state_changing_in_automatic_phase": 1},
		"run":       {"approval operator_approved": 1, "turn operator_approved": 1},
		"reject":    {"approval operator_rejected": 1, "turn operator_rejected": 1},
		"cancel":    {"turn turn_cancelled": 1},
		"policy":    {"approval operator_approved": 1, "turn operator_approved": 1, "turn session_policy": 1},
		"mcp:agent": {"turn read_only": 1},
	}
	if got := turnAudit(t, a); !maps.EqualFunc(got, want, maps.Equal) {
		t.Fatalf("turn and approval decisions by session:\n got %v\nwant %v", got, want)
	}

	// Expired: the deadline's decision names the session too.
	e := mustTurnServer(t, up, "--approval-timeout", "1s")
	id = e.mustPending(t, killTurn("expire", 7))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		turn := mustStatus(t, e.as(t, e.agent, "GET", "/v1/turns/"+id, nil), 200)["turn"].(map[string]any)
		if turn["status"] == "expired" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not expire: %v", turn)
		}
	}
	got := turnAudit(t, e)
	if !slices.Equal(slices.Collect(maps.Keys(got)), []string{"expire"}) || got["expire"]["turn approval_expired"] != 1 {
		t.Fatalf("an expired turn's decisions by session: %v", got)
	}
}
