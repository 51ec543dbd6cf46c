package main

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cpuCode is a read-only procedure that computes for a while (about a
// third of a second of one core here) after one tool call.
const cpuCode = "a = tools.get_task_jobs_summary(task_id=task_id)\nn = 0\nfor i in range(300000):\n    n += i % 7\nreturn n"

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// timedReply is an answer and how long it took.
type timedReply struct {
	reply
	took time.Duration
}

// mustBusy requires a 429 busy answer with reason replay_queue, the limit
// given and a Retry-After header of at least one second.
func mustBusy(tb testing.TB, r reply, limit string) {
	tb.Helper()
	d := mustError(tb, r, 429, "busy")
	if d["reason"] != "replay_queue" || d["limit"] != limit {
		tb.Fatalf("details = %v, want reason replay_queue, limit %s", d, limit)
	}
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 {
		tb.Fatalf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
}

// TestAdmissionRefusesAtOnce: 16 CPU-heavy invokes (after a slow tool call) at once on a server
// running 2 at a time with a queue of 2. The ones that find the queue full
// are refused at once with 429 busy and Retry-After; the admitted ones
// succeed; no answer comes later than the deadline (plus the time to
// answer); and every refused one was neither decided nor run.
func TestAdmissionRefusesAtOnce(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	// The tool call is slow too, so that all the requests arrive while the
	// first ones hold their slots, however loaded the machine.
	up.setDelay("get_task_jobs_summary", time.Second)
	const timeout = 20 * time.Second
	s := mustServe(t, serverOpts{Upstream: up, Extra: []string{"--max-concurrent-replays", "2", "--replay-queue", "2",
		"--replay-timeout", timeout.String()}})
	name := mustCaptureName(t, s, cpuCode, "setup")
	const n = 16
	replies := make([]timedReply, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			t0 := time.Now()
			r := s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": i}, "phase": "automatic"})
			replies[i] = timedReply{r, time.Since(t0)}
		})
	}
	close(start)
	wg.Wait()
	var ok, busy int
	var slowestBusy, slowest time.Duration
	for _, r := range replies {
		slowest = max(slowest, r.took)
		switch r.Status {
		case 200:
			if body := r.JSON(t); body["status"] != "succeeded" {
				t.Fatalf("admitted replay: %s", r.Body)
			}
			ok++
		case 429:
			mustBusy(t, r.reply, "queue")
			slowestBusy = max(slowestBusy, r.took)
			busy++
		default:
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	}
	t.Logf("%d succeeded, %d busy; slowest busy answer %v, slowest answer %v", ok, busy, slowestBusy, slowest)
	if ok < 2 || busy < n-4-2 || ok+busy != n {
		t.Fatalf("%d succeeded and %d busy of %d, want at least 2 and %d", ok, busy, n, n-6)
	}
	// Refused at once: a busy answer never waits for a run to end.
	if slowestBusy > timeout/4 {
		t.Errorf("a busy answer took %v", slowestBusy)
	}
	if slowest > timeout+5*time.Second {
		t.Errorf("an answer took %v, past the deadline of %v", slowest, timeout)
	}
	if got := len(s.decisions(t, "kind=invoke&limit=1000")); got != ok {
		t.Fatalf("%d invoke decisions for %d admitted replays: refused ones were decided", got, ok)
	}
	text := string(s.get(t, "/metrics").Body)
	if got := metricValue(text, `procgraph_replays_busy_total{limit="queue"}`); got != float64(busy) {
		t.Errorf("procgraph_replays_busy_total{limit=\"queue\"} = %v, want %d", got, busy)
	}
	if got := metricValue(text, "procgraph_replays_running"); got != 0 {
		t.Errorf("procgraph_replays_running = %v after every replay ended", got)
	}
	p := mustStatus(t, s.get(t, "/v1/procedures/"+name), 200)
	if num(p["use_count"]) != ok {
		t.Fatalf("use_count %v after %d successful replays", p["use_count"], ok)
	}
}

// TestAdmissionPerToken: one token holder cannot take every slot. With a
// cap of one replay per holder, alice's second invoke (HTTP) and her MCP
// proc__ call are refused busy while her first one runs; bob's invoke runs.
func TestAdmissionPerToken(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	up.setDelay("get_task_jobs_summary", 2*time.Second)
	file := filepath.Join(t.TempDir(), "tokens.json")
	alice := mustCreateToken(t, file, "alice", "read,capture,invoke")
	bob := mustCreateToken(t, file, "bob", "read,invoke")
	s := mustServe(t, serverOpts{Upstream: up, TokensFile: file, Extra: []string{"--max-concurrent-replays", "3",
		"--max-replays-per-token", "1"}})
	s.token = alice
	name := mustCaptureName(t, s, readOnlyCode, "setup")
	body := map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}
	first := make(chan reply, 1)
	go func() { first <- s.invoke(t, name, body) }()
	for len(up.tools()) == 0 { // alice's first replay is running
		time.Sleep(5 * time.Millisecond)
	}
	mustBusy(t, s.send(t, req{Method: "POST", Path: "/v1/procedures/" + name + "/invoke", Body: body, Token: &alice}), "key")

	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v1"}, nil)
	sess, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{alice}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"task_id": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.HasPrefix(mcpText(res), "busy (replay_queue)") {
		t.Fatalf("MCP call while at the cap: error %v, %q", res.IsError, mcpText(res))
	}

	r := s.send(t, req{Method: "POST", Path: "/v1/procedures/" + name + "/invoke", Body: body, Token: &bob})
	if got := mustStatus(t, r, 200); got["status"] != "succeeded" {
		t.Fatalf("bob: %s", r.Body)
	}
	mustStatus(t, <-first, 200)
	// Her slot is free again.
	mustStatus(t, s.send(t, req{Method: "POST", Path: "/v1/procedures/" + name + "/invoke", Body: body, Token: &alice}), 200)
}

// TestAdmissionDeadlineThroughMain: one deadline per invoke, fixed at its
// arrival. With one slot, a 1 s deadline and a tool that takes 3 s, the
// running replay ends with timeout at its deadline and the waiting ones are
// refused busy (limit deadline) at theirs: none is answered late. Once the
// server has seen how long a slot is held, a request whose expected wait
// passes its deadline is refused at once.
func TestAdmissionDeadlineThroughMain(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	up.setDelay("get_task_jobs_summary", 3*time.Second)
	const timeout = time.Second
	s := mustServe(t, serverOpts{Upstream: up, Extra: []string{"--max-concurrent-replays", "1", "--replay-queue", "4",
		"--replay-timeout", timeout.String()}})
	name := mustCaptureName(t, s, cpuCode, "setup")
	body := map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}
	replies := make([]timedReply, 3)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Go(func() {
			t0 := time.Now()
			r := s.invoke(t, name, body)
			replies[i] = timedReply{r, time.Since(t0)}
		})
	}
	wg.Wait()
	var timedOut, busy int
	for _, r := range replies {
		if r.took > timeout+2*time.Second {
			t.Errorf("answered after %v, deadline %v: %s", r.took, timeout, r.Body)
		}
		switch r.Status {
		case 200:
			if e, _ := r.JSON(t)["error"].(map[string]any); e["code"] != "timeout" {
				t.Fatalf("the admitted replay: %s", r.Body)
			}
			timedOut++
		case 429:
			mustBusy(t, r.reply, "deadline")
			busy++
		default:
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	}
	if timedOut != 1 || busy != 2 {
		t.Fatalf("%d timed out and %d busy, want 1 and 2", timedOut, busy)
	}

	// A slot is now known to be held about a second: with it taken, the
	// next request would wait past its deadline, and is told so at once.
	held := make(chan reply, 1)
	go func() { held <- s.invoke(t, name, body) }()
	for len(up.tools()) < 2 { // the second run holds the slot
		time.Sleep(5 * time.Millisecond)
	}
	t0 := time.Now()
	r := s.invoke(t, name, body)
	mustBusy(t, r, "deadline")
	if took := time.Since(t0); took > timeout/2 {
		t.Errorf("refused after %v: not at once", took)
	}
	<-held
}

// TestAdmissionRefusesTurns: turns pass the same admission as invokes. With
// one slot and no queue, while agent2's automatic turn holds the slot (its
// tool call is slow), agent's automatic turn (POST /v1/turns) and the run of
// her approved turn (POST /v1/turns/{id}/run) are refused at once with 429
// busy (replay_queue, limit queue) and Retry-After: neither is decided, no
// call reaches the upstream, and the approved turn stays approved — its one
// run is not spent, and it runs once the slot is free.
func TestAdmissionRefusesTurns(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	up.setDelay("get_task_jobs_summary", 3*time.Second)
	a := mustTurnServer(t, up, "--max-concurrent-replays", "1", "--replay-queue", "0")
	id := a.mustPending(t, killTurn("s1", 7))
	mustStatus(t, a.resolve(t, a.op, id, map[string]any{"choice": "run_once"}), 200)
	agentTurns := func() int {
		n := 0
		for _, d := range a.decisions(t, "kind=turn&limit=1000") {
			if d["actor"] == "agent" {
				n++
			}
		}
		return n
	}
	if n := agentTurns(); n != 0 {
		t.Fatalf("%d turn decisions by agent before any ran", n)
	}

	held := make(chan reply, 1)
	go func() {
		held <- a.as(t, a.agent2, "POST", "/v1/turns", map[string]any{"code": "return tools.get_task_jobs_summary(task_id=task_id)",
			"session_id": "holder", "phase": "automatic", "arguments": map[string]any{"task_id": 1}})
	}()
	for len(up.tools()) == 0 { // agent2's turn holds the slot
		time.Sleep(5 * time.Millisecond)
	}
	mustBusy(t, a.submit(t, map[string]any{"code": "return tools.get_scout_job_details(task_id=task_id)",
		"session_id": "s2", "phase": "automatic", "arguments": map[string]any{"task_id": 2}}), "queue")
	mustBusy(t, a.run(t, a.agent, id), "queue")
	if got := up.tools(); !slices.Equal(got, []string{"get_task_jobs_summary"}) {
		t.Fatalf("the upstream saw %v, want only the holder's call", got)
	}
	if n := agentTurns(); n != 0 {
		t.Fatalf("%d turn decisions by agent: a refused turn was decided", n)
	}
	turn := mustStatus(t, a.get(t, "/v1/turns/"+id), 200)["turn"].(map[string]any)
	if turn["status"] != "approved" {
		t.Fatalf("the approved turn is %v after a refused run", turn["status"])
	}
	if got := metricValue(string(a.get(t, "/metrics").Body), `procgraph_replays_busy_total{limit="queue"}`); got != 2 {
		t.Errorf(`procgraph_replays_busy_total{limit="queue"} = %v, want 2`, got)
	}

	if out := mustStatus(t, <-held, 200); out["status"] != "succeeded" {
		t.Fatalf("the holder's turn: %v", out)
	}
	up.reset()
	if out := mustStatus(t, a.run(t, a.agent, id), 200); out["status"] != "succeeded" {
		t.Fatalf("the approved turn, run with the slot free: %v", out)
	}
	if got := up.tools(); !slices.Equal(got, []string{"kill_job"}) {
		t.Fatalf("the upstream saw %v, want kill_job once", got)
	}
	if n := agentTurns(); n != 1 {
		t.Fatalf("%d turn decisions by agent after one run, want 1", n)
	}
}
