package api

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
)

// turnScopeCases are the turn gate's routes with their docs/api.md scopes, and
// the turns they need: requester-only routes act on turns of the invoke
// holder.
func turnScopeCases(t *testing.T, e *env) []scopeCase {
	t.Helper()
	ctx := context.Background()
	pending := func() string {
		t.Helper()
		ans, err := e.gate.Submit(ctx, gate.TurnRequest{Code: readOnlyCode, SessionID: "scope", Phase: audit.PhaseInteractive,
			Arguments: map[string]any{"task_id": 1}, Actor: "holder-invoke"})
		if err != nil || ans.Ran() {
			t.Fatalf("Submit: %v, %+v", err, ans)
		}
		return ans.Turn.ID
	}
	get, toRun, toCancel, toResolve := pending(), pending(), pending(), pending()
	if _, _, err := e.gate.Resolve(ctx, gate.ResolveRequest{ID: toRun, Choice: gate.ChoiceAlwaysAsk, Actor: "op", HasGrant: true}); err != nil {
		t.Fatal(err)
	}
	hash := e.mustTurn(t, get).CodeHash
	return []scopeCase{
		{"POST", "/v1/turns", "invoke", "/v1/turns", map[string]any{"code": readOnlyCode, "session_id": "s", "phase": "automatic", "arguments": map[string]any{"task_id": 1}}},
		{"GET", "/v1/turns/{id}", "invoke", "/v1/turns/" + get, nil},
		{"POST", "/v1/turns/{id}/run", "invoke", "/v1/turns/" + toRun + "/run", nil},
		{"DELETE", "/v1/turns/{id}", "invoke", "/v1/turns/" + toCancel, nil},
		{"GET", "/v1/approvals", "read", "/v1/approvals?status=pending", nil},
		{"GET", "/v1/approvals/{id}", "read", "/v1/approvals/" + get, nil},
		{"POST", "/v1/approvals/{id}/resolve", "grant", "/v1/approvals/" + toResolve + "/resolve", map[string]any{"choice": "reject"}},
		{"GET", "/v1/sessions/{id}/policies", "read", "/v1/sessions/scope/policies", nil},
		{"DELETE", "/v1/sessions/{id}/policies/{prefix}", "grant", "/v1/sessions/scope/policies/" + hash[:12], nil},
		{"DELETE", "/v1/sessions/{id}/policies", "grant", "/v1/sessions/scope/policies", nil},
	}
}

func (e *env) mustTurn(t *testing.T, id string) *gate.TurnRecord {
	t.Helper()
	r, err := e.store.GetApproval(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
