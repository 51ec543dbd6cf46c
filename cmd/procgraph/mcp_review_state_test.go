package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPReviewRoundTripBound: at 2026-07-28 the in-client review is an
// input-required result whose requestState answers only the turn, caller
// and call it was asked for, once: an altered state, another reviewer's
// retry, a retry with other arguments, an answer on a 2025-11-25 session,
// an approval replaying a cancelled review's state and a replay of an
// approval are refused and run nothing; the genuine answer runs the
// block once. The client drives the round trip itself (the SDK's automatic
// retry is off) to send what a hostile client would.
func TestMCPReviewRoundTripBound(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	file := filepath.Join(t.TempDir(), "tokens.json")
	alice := mustCreateToken(t, file, "alice", "read,invoke,grant")
	bob := mustCreateToken(t, file, "bob", "read,invoke,grant")
	s := mustServe(t, serverOpts{Upstream: up, TokensFile: file, AllowMutating: true})
	manual := &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the review was asked by elicitation on a 2026-07-28 client")
			return &mcp.ElicitResult{Action: "cancel"}, nil
		},
	}
	asAlice := mustMCPAt(t, s, "/mcp/interactive", alice, manual, modernMCP)
	asBob := mustMCPAt(t, s, "/mcp/interactive", bob, manual, modernMCP)
	args := map[string]any{"code": turnKillCode, "arguments": map[string]any{"panda_id": 7}, "session_id": "mrtr"}
	call := func(sess *mcp.ClientSession, args map[string]any, state string, answer *mcp.ElicitResult) *mcp.CallToolResult {
		t.Helper()
		p := &mcp.CallToolParams{Name: "run_code", Arguments: args, RequestState: state}
		if answer != nil {
			p.InputResponses = mcp.InputResponseMap{"review": answer}
		}
		res, err := sess.CallTool(context.Background(), p)
		if err != nil {
			t.Fatalf("run_code: %v", err)
		}
		return res
	}
	approve := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"choice": "run_once", "reason": "checked"}}
	refused := func(what string, res *mcp.CallToolResult, code string) {
		t.Helper()
		if !res.IsError || !strings.HasPrefix(mcpText(res), code) {
			t.Fatalf("%s: %s, want a tool error %s", what, mcpText(res), code)
		}
		up.mustSeeNothing(t, what)
	}

	first := call(asAlice, args, "", nil)
	review, ok := first.InputRequests["review"].(*mcp.ElicitParams)
	if !first.NeedsInput() || !ok || first.RequestState == "" || !strings.Contains(review.Message, "kill_job") {
		t.Fatalf("the first call: input %v, requests %v, state %q", first.NeedsInput(), first.InputRequests, first.RequestState)
	}
	state := first.RequestState
	// One character of its MAC changed: the third from the end (the last
	// of unpadded base64 may hold unused bits, so changing it can decode
	// to the same bytes; one in the payload would fail to decode whatever
	// the MAC says).
	at := len(state) - 3
	altered := state[:at] + map[bool]string{true: "B", false: "A"}[state[at] == 'A'] + state[at+1:]
	refused("an altered state", call(asAlice, args, altered, approve), "invalid_request")
	refused("another reviewer's retry", call(asBob, args, state, approve), "invalid_request")
	other := map[string]any{"code": turnKillCode, "arguments": map[string]any{"panda_id": 8}, "session_id": "mrtr"}
	refused("a retry with other arguments", call(asAlice, other, state, approve), "invalid_request")
	refused("a retry without the answer", call(asAlice, args, state, nil), "invalid_request")
	legacy := mustMCPAt(t, s, "/mcp/interactive", alice, &mcp.ClientOptions{}, legacyMCP)
	refused("an answer on a 2025-11-25 session", call(legacy, args, state, approve), "invalid_request")

	// A cancelled review leaves the turn pending; its state answered
	// once, and a replay with an approval is refused all the same.
	first = call(asAlice, args, "", nil)
	cancelled := call(asAlice, args, first.RequestState, &mcp.ElicitResult{Action: "cancel"})
	if cancelled.IsError || !strings.Contains(mcpText(cancelled), "pending approval") {
		t.Fatalf("a cancelled review: %s", mcpText(cancelled))
	}
	replayed := call(asAlice, args, first.RequestState, approve)
	refused("an approval replaying a cancelled review's state", replayed, "conflict")
	if !strings.Contains(mcpText(replayed), "used already") {
		t.Fatalf("the replay was refused for another reason: %s", mcpText(replayed))
	}

	first = call(asAlice, args, "", nil)
	state = first.RequestState
	res := call(asAlice, args, state, approve)
	if res.IsError || res.NeedsInput() || !strings.Contains(mcpText(res), "operator_approved") {
		t.Fatalf("the genuine answer: %s", mcpText(res))
	}
	if tools := up.tools(); len(tools) != 1 || tools[0] != "kill_job" {
		t.Fatalf("the upstream saw %v, want one kill_job", tools)
	}
	up.reset()
	refused("a replayed answer", call(asAlice, args, state, approve), "conflict")
}
