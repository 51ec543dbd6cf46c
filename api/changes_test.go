package api

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
)

// readEvent reads one Server-Sent Events block (up to its blank line).
func readEvent(tb testing.TB, rd *bufio.Reader) []byte {
	tb.Helper()
	var b strings.Builder
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			tb.Fatalf("reading the change stream: %v (read %q)", err, b.String())
		}
		if line == "\n" {
			return []byte(b.String())
		}
		b.WriteString(line)
	}
}

// changeEvent is the change of an `event: change` block.
func changeEvent(tb testing.TB, block []byte) changes.Change {
	tb.Helper()
	var c changes.Change
	var event string
	for _, line := range strings.Split(string(block), "\n") {
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c); err != nil {
				tb.Fatalf("data of %q: %v", block, err)
			}
		}
	}
	if event != "change" {
		tb.Fatalf("block %q is not a change event", block)
	}
	return c
}

// openChanges opens GET /v1/changes and reads its opening comment.
func openChanges(tb testing.TB, e *env, ctx context.Context) (*http.Response, *bufio.Reader) {
	tb.Helper()
	r, _ := http.NewRequestWithContext(ctx, "GET", e.http.URL+"/v1/changes", nil)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		tb.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		tb.Fatalf("GET /v1/changes: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	rd := bufio.NewReader(resp.Body)
	if open := readEvent(tb, rd); !strings.HasPrefix(string(open), ":") {
		tb.Fatalf("opening block %q, want a comment", open)
	}
	return resp, rd
}

// TestChangesStream: GET /v1/changes streams each committed change as it
// commits — a capture, then a turn that waits for an operator and its
// cancellation — naming things, never code or argument values; a request
// that fails publishes nothing; a closed stream leaves the feed.
func TestChangesStream(t *testing.T) {
	e := mustEnv(t, envOpts{})
	before := e.svc.Changes().Subscribers()
	ctx, cancel := context.WithCancel(context.Background())
	resp, rd := openChanges(t, e, ctx)
	defer resp.Body.Close()

	// A capture that fails (empty signature) publishes nothing; the next
	// event is the capture that commits.
	if _, err := e.svc.Capture(ctx, procedures.CaptureRequest{Code: "return 1", SessionID: "s"}); err == nil {
		t.Fatal("a block without a tool call was captured")
	}
	out, err := e.svc.Capture(ctx, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	block := readEvent(t, rd)
	c := changeEvent(t, block)
	if c.Kind != changes.ChangeCapture || c.Procedure != out.Procedure.Name || c.Seq == 0 {
		t.Fatalf("first change %+v, want the capture of %s", c, out.Procedure.Name)
	}
	if !strings.Contains(string(block), "id: ") {
		t.Fatalf("change block %q has no id", block)
	}

	ans, err := e.gate.Submit(ctx, gate.TurnRequest{Code: readOnlyCode, SessionID: "s", Phase: audit.PhaseInteractive,
		Arguments: map[string]any{"task_id": 7}, Summary: "look", Actor: "anonymous"})
	if err != nil || ans.Ran() {
		t.Fatalf("interactive turn: %+v, %v; want pending", ans, err)
	}
	block = readEvent(t, rd)
	if c = changeEvent(t, block); c.Kind != changes.ChangeApproval || c.Turn != ans.Turn.ID {
		t.Fatalf("change %+v, want the approval of %s", c, ans.Turn.ID)
	}
	if _, err := e.gate.Cancel(ctx, ans.Turn.ID, "anonymous"); err != nil {
		t.Fatal(err)
	}
	block = readEvent(t, rd)
	if c = changeEvent(t, block); c.Kind != changes.ChangeApproval || c.Turn != ans.Turn.ID {
		t.Fatalf("change %+v, want the cancelled approval of %s", c, ans.Turn.ID)
	}
	for _, leak := range []string{"tools.get_jobs", "task_id", "return"} {
		if strings.Contains(string(block), leak) {
			t.Fatalf("change event %q holds %q", block, leak)
		}
	}

	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for e.svc.Changes().Subscribers() != before {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers after the stream closed, want %d", e.svc.Changes().Subscribers(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestChangesStreamBound: past Config.MaxChangeStreams open streams a new
// one is refused 429 busy (reason change_streams, Retry-After); closing one
// makes room again.
func TestChangesStreamBound(t *testing.T) {
	e := mustEnv(t, envOpts{maxChangeStreams: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r1, _ := openChanges(t, e, ctx)
	defer r1.Body.Close()
	ctx2, cancel2 := context.WithCancel(context.Background())
	r2, _ := openChanges(t, e, ctx2)

	resp, err := http.Get(e.http.URL + "/v1/changes")
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || body.Error.Code != "busy" ||
		body.Error.Details["reason"] != "change_streams" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third stream: %d %+v Retry-After %q; want 429 busy change_streams", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}

	cancel2()
	r2.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(e.http.URL + "/v1/changes")
		if err == nil && resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			return
		}
		if err == nil {
			resp.Body.Close()
		}
		if time.Now().After(deadline) {
			t.Fatal("a closed stream did not make room for a new one")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
