package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestTurnLongPollEnds: a long poll (wait_s) ends when its client goes away
// and as soon as the turn is resolved, well before wait_s.
func TestTurnLongPollEnds(t *testing.T) {
	e := mustEnv(t, envOpts{})
	body, _ := json.Marshal(map[string]any{"code": readOnlyCode, "session_id": "lp", "phase": "interactive",
		"arguments": map[string]any{"task_id": 1}, "wait_s": 60})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, _ := http.NewRequestWithContext(ctx, "POST", e.http.URL+"/v1/turns", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(r); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, "the long poll to start", func() bool { return e.gate.Waiting() == 1 })
	cancel()
	<-done
	waitFor(t, "the long poll to end after its client left", func() bool { return e.gate.Waiting() == 0 })

	// A GET that waits ends as soon as an operator resolves the turn.
	st, data := e.do(t, http.DefaultClient, "POST", "/v1/turns", map[string]any{"code": readOnlyCode, "session_id": "lp",
		"phase": "interactive", "arguments": map[string]any{"task_id": 2}})
	if st != 202 {
		t.Fatalf("%d %s", st, data)
	}
	var pending struct{ Turn struct{ ID string } }
	_ = json.Unmarshal(data, &pending)
	go func() {
		waitFor(t, "the GET to wait", func() bool { return e.gate.Waiting() == 1 })
		e.do(t, http.DefaultClient, "POST", "/v1/approvals/"+pending.Turn.ID+"/resolve", map[string]any{"choice": "run_once"})
	}()
	start := time.Now()
	st, data = e.do(t, http.DefaultClient, "GET", "/v1/turns/"+pending.Turn.ID+"?wait_s=60", nil)
	var got struct{ Turn struct{ Status string } }
	_ = json.Unmarshal(data, &got)
	if st != 200 || got.Turn.Status != "approved" || time.Since(start) > 30*time.Second {
		t.Fatalf("GET ?wait_s=60: %d %s after %v", st, data, time.Since(start))
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Errorf("timed out waiting for %s", what)
}
