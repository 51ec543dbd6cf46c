package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTurnCLI: the review loop from two terminals — an agent's `turn
// --wait` runs once an operator approves it with `approvals approve`;
// auto_run makes the next identical turn skip review; `policies revoke`
// restores it.
func TestTurnCLI(t *testing.T) {
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, AllowMutating: true})
	t.Setenv("PROCGRAPH_URL", s.URL)
	file := filepath.Join(t.TempDir(), "kill.star")
	if err := os.WriteFile(file, []byte(turnKillCode+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runMain(t, "turn", file, "--session", "cli", "--phase", "interactive", "--arg", "panda_id=7", "--json")
	if code != 3 {
		t.Fatalf("pending turn: exit %d\n%s%s", code, out, errOut)
	}
	var pending struct {
		Turn struct{ ID, Status string }
	}
	if err := json.Unmarshal([]byte(out), &pending); err != nil || pending.Turn.Status != "pending" {
		t.Fatalf("turn --json: %v %s", err, out)
	}
	code, out, _ = runMain(t, "approvals", "list")
	if code != 0 || !strings.Contains(out, pending.Turn.ID) || !strings.Contains(out, "kill_job") {
		t.Fatalf("approvals list: exit %d\n%s", code, out)
	}
	code, out, _ = runMain(t, "approvals", "show", pending.Turn.ID)
	if code != 0 || !strings.Contains(out, turnKillCode) {
		t.Fatalf("approvals show: exit %d\n%s", code, out)
	}
	code, _, errOut = runMain(t, "approvals", "approve", pending.Turn.ID, "--choice", "maybe")
	if code != 2 || !strings.Contains(errOut, "--choice") {
		t.Fatalf("unknown choice: exit %d %s", code, errOut)
	}
	if code, _, errOut := runMain(t, "approvals", "reject", pending.Turn.ID, "--reason", "not now"); code != 0 {
		t.Fatalf("reject: exit %d %s", code, errOut)
	}
	up.mustSeeNothing(t, "a rejected CLI turn")

	// The loop: the agent waits, the operator approves with auto_run.
	var wg sync.WaitGroup
	var agentCode int
	var agentOut string
	wg.Go(func() {
		agentCode, agentOut, _ = runMain(t, "turn", file, "--session", "cli", "--phase", "interactive", "--arg", "panda_id=8", "--wait", "30s")
	})
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, out, _ := runMain(t, "approvals", "list", "--json")
		var l struct {
			Approvals []struct{ ID string } `json:"approvals"`
		}
		if json.Unmarshal([]byte(out), &l) == nil && len(l.Approvals) == 1 {
			id = l.Approvals[0].ID
		}
	}
	if id == "" {
		t.Fatal("the waiting turn never showed up")
	}
	if code, out, errOut := runMain(t, "approvals", "approve", id, "--choice", "auto_run", "--reason", "routine"); code != 0 {
		t.Fatalf("approve: exit %d %s %s", code, out, errOut)
	}
	wg.Wait()
	if agentCode != 0 || !strings.Contains(agentOut, "succeeded") {
		t.Fatalf("the waiting agent: exit %d\n%s", agentCode, agentOut)
	}
	if code, out, _ := runMain(t, "turn", file, "--session", "cli", "--phase", "interactive", "--arg", "panda_id=8"); code != 0 || !strings.Contains(out, "session_policy") {
		t.Fatalf("the identical turn after auto_run: exit %d\n%s", code, out)
	}
	// A state-changing block's policy covers the argument values the
	// operator saw, not others (docs/design.md "What an authorization
	// binds to").
	if code, out, _ := runMain(t, "turn", file, "--session", "cli", "--phase", "interactive", "--arg", "panda_id=9"); code != 3 {
		t.Fatalf("the same turn with another panda_id after auto_run: exit %d, want 3 (pending)\n%s", code, out)
	}
	if got := up.tools(); !slices.Equal(got, []string{"kill_job", "kill_job"}) {
		t.Fatalf("upstream saw %v", got)
	}
	code, out, _ = runMain(t, "policies", "list", "cli")
	if code != 0 || !strings.Contains(out, "auto_run") || !strings.Contains(out, "FOR") || strings.Contains(out, "(nobody)") {
		t.Fatalf("policies list: exit %d\n%s", code, out)
	}
	if code, _, errOut := runMain(t, "policies", "revoke", "cli", "all"); code != 0 {
		t.Fatalf("policies revoke: exit %d %s", code, errOut)
	}
	if code, _, _ := runMain(t, "turn", file, "--session", "cli", "--phase", "interactive", "--arg", "panda_id=10"); code != 3 {
		t.Fatalf("after revoke: exit %d, want 3 (pending)", code)
	}
}
