package main

import (
	"context"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/health"
)

// killed kills the server process at once (SIGKILL: nothing of it runs
// after this) and opens the store it leaves, as the next start would.
func (s *serverProcess) killed(tb testing.TB, data string) *embedded.Store {
	tb.Helper()
	if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		tb.Fatal(err)
	}
	_ = s.cmd.Wait()
	st, err := embedded.Open(data, embedded.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

// TestKilledAfterTheAnswerLosesNothing (docs/design.md "One commit per
// run"): a read-only invoke and an automatic read-only turn commit what
// they leave after their run, once, before they answer; a server killed
// (SIGKILL) right after the answers leaves it all in the store — each
// decision with its result, the use count, the health, the recording.
func TestKilledAfterTheAnswerLosesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := t.TempDir() + "/p.db"
	s := mustServeProcess(t, serverOpts{Upstream: mustUpstream(t), Data: data}.args(t))
	mustCaptureName(t, s.server, readOnlyCode, "seed")
	inv := mustStatus(t, s.invoke(t, readOnlyName, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic", "session_id": "k9"}), 200)
	turn := mustStatus(t, s.post(t, "/v1/turns", map[string]any{"code": readOnlyCode, "session_id": "k9", "phase": "automatic",
		"arguments": map[string]any{"task_id": 2}}), 200)
	st := s.killed(t, data)

	want := map[string]string{
		inv["decision"].(map[string]any)["id"].(string):  health.ResultSucceeded,
		turn["decision"].(map[string]any)["id"].(string): health.ResultSucceeded,
	}
	ds, err := st.ListDecisions(ctx, audit.DecisionFilter{Procedure: readOnlyName})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range ds {
		if _, ok := want[d.ID]; ok {
			got[d.ID] = d.Result
		}
	}
	if len(got) != len(want) || got[inv["decision"].(map[string]any)["id"].(string)] != health.ResultSucceeded ||
		got[turn["decision"].(map[string]any)["id"].(string)] != health.ResultSucceeded {
		t.Fatalf("records after the kill: %v, want %v", got, want)
	}
	p, err := st.Get(ctx, readOnlyName)
	if err != nil {
		t.Fatal(err)
	}
	if p.UseCount != 1 || p.Health.Runs != 2 {
		t.Fatalf("after the kill: use count %d, health runs %d; want 1 and 2 (the invoke and the turn)", p.UseCount, p.Health.Runs)
	}
	if _, n, err := st.Recordings(ctx, readOnlyName, "", 10, 0); err != nil || n != 2 {
		t.Fatalf("recordings after the kill: %d, %v; want the invoke's and the turn's", n, err)
	}
}

// TestKilledMidRunKeepsWhatRanFirst (docs/design.md "One commit per
// run"): a state-changing run commits its decision before its first tool
// call — an approved turn with its claim (at most once: it stays running,
// never approved again) — so a server killed (SIGKILL) while the run
// waits on a tool leaves both in the store.
func TestKilledMidRunKeepsWhatRanFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := t.TempDir() + "/p.db"
	up := mustUpstream(t)
	up.setDelay("kill_job", time.Hour)
	s := mustServeProcess(t, serverOpts{Upstream: up, Data: data, AllowMutating: true}.args(t))
	mustCaptureName(t, s.server, killCode, "seed")
	pending := mustStatus(t, s.post(t, "/v1/turns", map[string]any{"code": killCode, "session_id": "k9", "phase": "interactive",
		"arguments": map[string]any{"task_id": 3}}), 202)
	id := pending["turn"].(map[string]any)["id"].(string)
	mustStatus(t, s.post(t, "/v1/approvals/"+id+"/resolve", map[string]any{"choice": "run_once", "reason": "go"}), 200)
	// Both answer only once kill_job does (never): sent from goroutines,
	// their answers are the connection the kill closes.
	post := func(path, body string) {
		if r, err := http.Post(s.URL+path, "application/json", strings.NewReader(body)); err == nil {
			_ = r.Body.Close()
		}
	}
	go post("/v1/turns/"+id+"/run", "")
	go post("/v1/procedures/"+killName+"/invoke", `{"arguments": {"task_id": 4}, "phase": "interactive", "reviewed_by": "op"}`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		n := 0
		for _, tool := range up.tools() {
			if tool == "kill_job" {
				n++
			}
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runs did not reach kill_job: %v", up.tools())
		}
	}
	st := s.killed(t, data)

	cur, err := st.GetApproval(ctx, id)
	if err != nil || cur.Status != gate.TurnRunning {
		t.Fatalf("the turn after the kill: %+v, %v; want running", cur, err)
	}
	claimed, err := st.ListDecisions(ctx, audit.DecisionFilter{Kind: audit.KindTurn, Outcome: audit.Allowed})
	if err != nil || len(claimed) != 1 || claimed[0].Reason != audit.ReasonOperatorApproved || claimed[0].Result != "" {
		t.Fatalf("the turn's records after the kill: %+v, %v; want its approval, without a result", claimed, err)
	}
	reviewed, err := st.ListDecisions(ctx, audit.DecisionFilter{Procedure: killName, Kind: audit.KindInvoke})
	if err != nil || len(reviewed) != 1 || reviewed[0].Reason != audit.ReasonOperatorReviewed || reviewed[0].Result != "" {
		t.Fatalf("the invoke's records after the kill: %+v, %v; want its decision, without a result", reviewed, err)
	}
}
