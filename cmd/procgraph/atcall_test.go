package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/embedded"
	pgneo4j "github.com/procgraph/procgraph/graph/neo4j"
)

// The review at the call through the real server (docs/design.md "Review
// at the call"): a block that reads, branches on what it read and kills
// the job it read pauses before the kill with the real panda_id, and the
// upstream sees exactly what the operator approved, once.

// atUpstream is the recording upstream of these tests: a PanDA stand-in
// whose task summary says 3 jobs failed, the job to kill being 4000 +
// task_id and another 6000 + task_id, which records every call.
type atUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	calls []atCall
	// block, when set, holds every kill_job call until it is closed.
	block chan struct{}
}

type atCall struct {
	Tool      string
	Arguments map[string]any
}

func mustAtUpstream(tb testing.TB) *atUpstream {
	u := &atUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
		}
		d := json.NewDecoder(r.Body)
		d.UseNumber()
		if d.Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		u.mu.Lock()
		u.calls = append(u.calls, atCall{req.Tool, req.Arguments})
		block := u.block
		u.mu.Unlock()
		var out any
		switch req.Tool {
		case "get_task_jobs_summary":
			id, _ := req.Arguments["task_id"].(json.Number).Int64()
			out = map[string]any{"failed": 3, "panda_id": 4000 + id, "other_panda_id": 6000 + id,
				"note": "log line \u202e with a bidi control"}
		case "kill_job":
			if block != nil {
				<-block
			}
			out = map[string]any{"killed": req.Arguments["panda_id"]}
		default:
			out = map[string]any{"tool": req.Tool}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"result": out})
	}))
	tb.Cleanup(u.Close)
	return u
}

// seen is every call so far, as "tool(arguments as JSON)".
func (u *atUpstream) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := []string{}
	for _, c := range u.calls {
		b, _ := json.Marshal(c.Arguments)
		out = append(out, c.Tool+string(b))
	}
	return out
}

// The blocks of the suite, in both dialects: one kill, and two.
var atBlocks = map[string]map[string]string{
	"starlark": {
		"one": "s = tools.get_task_jobs_summary(task_id=task_id)\nif s[\"failed\"] > 2:\n    tools.kill_job(panda_id=s[\"panda_id\"])\nreturn s[\"failed\"]",
		"two": "s = tools.get_task_jobs_summary(task_id=task_id)\nif s[\"failed\"] > 2:\n    tools.kill_job(panda_id=s[\"panda_id\"])\n    tools.kill_job(panda_id=s[\"other_panda_id\"])\nreturn s[\"failed\"]",
	},
	"python-async": {
		"one": "s = await tools.get_task_jobs_summary(task_id=task_id)\nif s[\"failed\"] > 2:\n    await tools.kill_job(panda_id=s[\"panda_id\"])\nreturn s[\"failed\"]",
		"two": "s = await tools.get_task_jobs_summary(task_id=task_id)\nif s[\"failed\"] > 2:\n    await tools.kill_job(panda_id=s[\"panda_id\"])\n    await tools.kill_job(panda_id=s[\"other_panda_id\"])\nreturn s[\"failed\"]",
	},
}

// submitAtCall submits block code of dialect at the call and requires it
// to pause (202, pending at a call); it returns the turn.
func submitAtCall(tb testing.TB, s *server, dialect, code string, task int) map[string]any {
	tb.Helper()
	out := mustStatus(tb, s.post(tb, "/v1/turns", map[string]any{"code": code, "dialect": dialect, "session_id": "atcall",
		"phase": "interactive", "review": "at_call", "arguments": map[string]any{"task_id": task}}), 202)
	t, _ := out["turn"].(map[string]any)
	if t["status"] != "pending" || t["review"] != "at_call" || t["call"] == nil {
		tb.Fatalf("submitted turn %v; want pending at a call", t)
	}
	return t
}

// callOf is a turn's call.
func callOf(tb testing.TB, t map[string]any) map[string]any {
	tb.Helper()
	c, ok := t["call"].(map[string]any)
	if !ok {
		tb.Fatalf("turn %v is at no call", t)
	}
	return c
}

// answerAt resolves turn t at its call with choice.
func answerAt(tb testing.TB, s *server, t map[string]any, choice string) map[string]any {
	tb.Helper()
	c := callOf(tb, t)
	return mustStatus(tb, s.post(tb, "/v1/approvals/"+t["id"].(string)+"/resolve", map[string]any{"choice": choice,
		"call": map[string]any{"position": c["position"], "args_digest": c["args_digest"]}}), 200)
}

// atServe starts a server of backend on up (env: the Neo4j database's
// NEO4J_* for neo4j).
func atServe(tb testing.TB, backend string, up *atUpstream, data string) *server {
	tb.Helper()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--sandbox-workers", "1", "--tools", catalogueFile(tb),
		"--upstream-http", up.URL, "--auth", "off", "--store", backend}
	s, err := startMain(tb, args)
	if err != nil {
		tb.Fatal(err)
	}
	s.Data = data
	return s
}

// TestAtCallEmbedded is the boundary suite on the embedded store.
func TestAtCallEmbedded(t *testing.T) {
	t.Parallel()
	runAtCallSuite(t, "embedded")
}

// TestAtCallNeo4j is the boundary suite on Neo4j, with two instances
// racing one resume.
func TestAtCallNeo4j(t *testing.T) {
	env := ownedNeo4j(t)
	for k, v := range env {
		t.Setenv(k, v)
	}
	runAtCallSuite(t, "neo4j")
}

func runAtCallSuite(t *testing.T, backend string) {
	up := mustAtUpstream(t)
	dir := t.TempDir()
	s := atServe(t, backend, up, dir+"/p.db")
	suite := t
	restart := func() *server { return atServe(suite, backend, up, dir+"/p.db") }
	for _, dialect := range []string{"starlark", "python-async"} {
		blocks := atBlocks[dialect]
		t.Run(dialect+"/approve runs exactly that call once", func(t *testing.T) {
			before := len(up.seen())
			turn := submitAtCall(t, s, dialect, blocks["one"], 7)
			c := callOf(t, turn)
			if c["tool"] != "kill_job" || num(c["position"]) != 1 || num(c["line"]) != 3 || c["args_digest"] == "" {
				t.Fatalf("paused at %v; want kill_job, call 1, line 3", c)
			}
			if got := up.seen()[before:]; !slices.Equal(got, []string{`get_task_jobs_summary{"task_id":7}`}) {
				t.Fatalf("before the answer the upstream saw %v; want the read only", got)
			}
			a := mustStatus(t, s.get(t, "/v1/approvals/"+turn["id"].(string)), 200)
			ac, _ := a["call"].(map[string]any)
			args, _ := ac["arguments"].(map[string]any)
			if num(args["panda_id"]) != 4007 {
				t.Fatalf("the review shows the call %v; want the real panda_id 4007", ac)
			}
			reads, _ := a["reads"].([]any)
			if len(reads) != 1 {
				t.Fatalf("reads %v; want the one read", a["reads"])
			}
			r0, _ := reads[0].(map[string]any)
			if resp, _ := r0["response"].(string); r0["tool"] != "get_task_jobs_summary" || !strings.Contains(resp, "4007") ||
				!strings.Contains(resp, `\u202e`) || strings.Contains(resp, "\u202e") || r0["truncated"] != false {
				t.Fatalf("read %v; want the summary with its bidi control escaped", r0)
			}
			var choices []string
			for _, cv := range a["covers"].([]any) {
				choices = append(choices, cv.(map[string]any)["choice"].(string))
			}
			if !slices.Contains(choices, "run_all") {
				t.Fatalf("covers %v; want run_all at a call", choices)
			}
			answerAt(t, s, turn, "run_once")
			out := mustStatus(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 200)
			if out["status"] != "succeeded" || num(out["result"]) != 3 {
				t.Fatalf("resumed run %v; want succeeded with 3", out)
			}
			want := []string{`get_task_jobs_summary{"task_id":7}`, `kill_job{"panda_id":4007}`}
			if got := up.seen()[before:]; !slices.Equal(got, want) {
				t.Fatalf("the upstream saw %v; want %v", got, want)
			}
			mustError(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 409, "conflict")
			if got := up.seen()[before:]; !slices.Equal(got, want) {
				t.Fatalf("after a second run the upstream saw %v; want %v", got, want)
			}
		})
		t.Run(dialect+"/reject runs none", func(t *testing.T) {
			before := len(up.seen())
			turn := submitAtCall(t, s, dialect, blocks["one"], 8)
			answerAt(t, s, turn, "reject")
			mustError(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 409, "conflict")
			if got := up.seen()[before:]; !slices.Equal(got, []string{`get_task_jobs_summary{"task_id":8}`}) {
				t.Fatalf("the upstream saw %v; want the read only", got)
			}
		})
		t.Run(dialect+"/two kills pause twice", func(t *testing.T) {
			before := len(up.seen())
			turn := submitAtCall(t, s, dialect, blocks["two"], 9)
			answerAt(t, s, turn, "run_once")
			out := mustStatus(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 202)
			second, _ := out["turn"].(map[string]any)
			c := callOf(t, second)
			if second["status"] != "pending" || num(c["position"]) != 2 || num(second["pauses"]) != 1 {
				t.Fatalf("after the first kill the turn is %v; want pending at call 2, one pause answered", second)
			}
			a := mustStatus(t, s.get(t, "/v1/approvals/"+turn["id"].(string)), 200)
			if args, _ := a["call"].(map[string]any)["arguments"].(map[string]any); num(args["panda_id"]) != 6009 {
				t.Fatalf("the second pause shows %v; want panda_id 6009", a["call"])
			}
			// An answer read at the first pause does not answer the second.
			stale := mustError(t, s.post(t, "/v1/approvals/"+turn["id"].(string)+"/resolve", map[string]any{"choice": "run_once",
				"call": map[string]any{"position": 1, "args_digest": callOf(t, turn)["args_digest"]}}), 409, "conflict")
			if stale["reason"] != "call_changed" {
				t.Fatalf("a stale answer: %v; want call_changed", stale)
			}
			answerAt(t, s, second, "run_once")
			out = mustStatus(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 200)
			want := []string{`get_task_jobs_summary{"task_id":9}`, `kill_job{"panda_id":4009}`, `kill_job{"panda_id":6009}`}
			if got := up.seen()[before:]; out["status"] != "succeeded" || !slices.Equal(got, want) {
				t.Fatalf("run %v, the upstream saw %v; want succeeded after %v", out["status"], got, want)
			}
		})
	}
	t.Run("run_all runs every later call", func(t *testing.T) {
		before := len(up.seen())
		turn := submitAtCall(t, s, "starlark", atBlocks["starlark"]["two"], 10)
		answerAt(t, s, turn, "run_all")
		out := mustStatus(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 200)
		want := []string{`get_task_jobs_summary{"task_id":10}`, `kill_job{"panda_id":4010}`, `kill_job{"panda_id":6010}`}
		if got := up.seen()[before:]; out["status"] != "succeeded" || !slices.Equal(got, want) {
			t.Fatalf("run %v, the upstream saw %v; want %v", out["status"], got, want)
		}
	})
	t.Run("run_all answers a call only", func(t *testing.T) {
		out := mustStatus(t, s.post(t, "/v1/turns", map[string]any{"code": atBlocks["starlark"]["one"], "session_id": "atcall",
			"phase": "interactive", "review": "block", "arguments": map[string]any{"task_id": 15}}), 202)
		turn := out["turn"].(map[string]any)
		if turn["review"] != "block" || turn["call"] != nil {
			t.Fatalf("a block turn %v; want review block, no call", turn)
		}
		d := mustError(t, s.post(t, "/v1/approvals/"+turn["id"].(string)+"/resolve", map[string]any{"choice": "run_all"}), 400, "invalid_request")
		if d["field"] != "choice" {
			t.Fatalf("run_all on a block turn: %v; want field choice", d)
		}
		a := mustStatus(t, s.get(t, "/v1/approvals/"+turn["id"].(string)), 200)
		for _, cv := range a["covers"].([]any) {
			if cv.(map[string]any)["choice"] == "run_all" {
				t.Fatalf("a block turn's covers offer run_all: %v", a["covers"])
			}
		}
	})
	t.Run("a block with no state-changing call runs without review", func(t *testing.T) {
		out := mustStatus(t, s.post(t, "/v1/turns", map[string]any{"code": "return tools.get_task_jobs_summary(task_id=task_id)",
			"session_id": "atcall", "phase": "interactive", "review": "at_call", "arguments": map[string]any{"task_id": 11}}), 200)
		if out["status"] != "succeeded" {
			t.Fatalf("a read-only block at the call: %v; want it run", out)
		}
	})
	t.Run("diverged: nothing dispatched", func(t *testing.T) {
		before := len(up.seen())
		turn := submitAtCall(t, s, "starlark", atBlocks["starlark"]["one"], 12)
		answerAt(t, s, turn, "run_once")
		// The summary read before the pause now says 0 failed: the
		// resumed run takes the other branch.
		s = atAlterPause(t, backend, s, restart, turn["id"].(string), func(p *gate.TurnRecord) {
			p.Pause.Calls[0].Response = json.RawMessage(`{"failed":0,"panda_id":4012,"other_panda_id":6012}`)
		})
		d := mustError(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 409, "conflict")
		dt, _ := d["turn"].(map[string]any)
		if d["reason"] != "diverged" || dt["status"] != "denied" {
			t.Fatalf("a diverged resume: %v; want diverged, the turn denied", d)
		}
		if got := up.seen()[before:]; !slices.Equal(got, []string{`get_task_jobs_summary{"task_id":12}`}) {
			t.Fatalf("the upstream saw %v; want the read only", got)
		}
	})
	t.Run("a catalogue change between the answer and the resume refuses", func(t *testing.T) {
		before := len(up.seen())
		turn := submitAtCall(t, s, "starlark", atBlocks["starlark"]["one"], 14)
		answerAt(t, s, turn, "run_once")
		var cat struct {
			Tools []map[string]any `json:"tools"`
		}
		s.get(t, "/v1/tools").Into(t, &cat)
		for _, tool := range cat.Tools {
			if tool["name"] == "kill_job" {
				tool["input_schema"].(map[string]any)["properties"].(map[string]any)["reason"] = map[string]any{"type": "string"}
			}
		}
		mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": cat.Tools}}), 200)
		d := mustError(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 403, "denied")
		if dec, _ := d["decision"].(map[string]any); dec["reason"] != "catalogue_drift" {
			t.Fatalf("a resume after a catalogue change: %v; want denied catalogue_drift", d)
		}
		if got := up.seen()[before:]; !slices.Equal(got, []string{`get_task_jobs_summary{"task_id":14}`}) {
			t.Fatalf("the upstream saw %v; want the read only", got)
		}
	})
	t.Run("a catalogue change before the answer: reviewed again, then diverged", func(t *testing.T) {
		before := len(up.seen())
		turn := submitAtCall(t, s, "starlark", atBlocks["starlark"]["one"], 16)
		var cat struct {
			Tools []map[string]any `json:"tools"`
		}
		s.get(t, "/v1/tools").Into(t, &cat)
		for _, tool := range cat.Tools {
			if tool["name"] == "kill_job" {
				tool["input_schema"].(map[string]any)["properties"].(map[string]any)["force"] = map[string]any{"type": "boolean"}
			}
		}
		mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": cat.Tools}}), 200)
		c := callOf(t, turn)
		answer := map[string]any{"choice": "run_once", "call": map[string]any{"position": c["position"], "args_digest": c["args_digest"]}}
		d := mustError(t, s.post(t, "/v1/approvals/"+turn["id"].(string)+"/resolve", answer), 409, "conflict")
		if d["reason"] != "catalogue_drift" {
			t.Fatalf("an answer after a catalogue change: %v; want catalogue_drift", d)
		}
		mustStatus(t, s.post(t, "/v1/approvals/"+turn["id"].(string)+"/resolve", answer), 200)
		if d := mustError(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 409, "conflict"); d["reason"] != "diverged" {
			t.Fatalf("the resume of a pause whose tool changed: %v; want diverged", d)
		}
		if got := up.seen()[before:]; !slices.Equal(got, []string{`get_task_jobs_summary{"task_id":16}`}) {
			t.Fatalf("the upstream saw %v; want the read only", got)
		}
	})
	t.Run("two requests racing the resume dispatch once", func(t *testing.T) {
		others := []*server{s}
		if backend == "neo4j" {
			others = append(others, atServe(t, backend, up, dir+"/q.db"))
		}
		before := len(up.seen())
		turn := submitAtCall(t, s, "starlark", atBlocks["starlark"]["one"], 13)
		answerAt(t, s, turn, "run_once")
		up.mu.Lock()
		up.block = make(chan struct{})
		up.mu.Unlock()
		statuses := make([]int, 4)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = others[i%len(others)].post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil).Status
			}()
		}
		// Let the racers reach the claim, then let the one kill through.
		time.Sleep(200 * time.Millisecond)
		up.mu.Lock()
		close(up.block)
		up.block = nil
		up.mu.Unlock()
		wg.Wait()
		slices.Sort(statuses)
		if !slices.Equal(statuses, []int{200, 409, 409, 409}) {
			t.Fatalf("racing runs answered %v; want one 200", statuses)
		}
		want := []string{`get_task_jobs_summary{"task_id":13}`, `kill_job{"panda_id":4013}`}
		if got := up.seen()[before:]; !slices.Equal(got, want) {
			t.Fatalf("the upstream saw %v; want %v", got, want)
		}
	})
}

// atAlterPause changes the stored pause of turn id through the store
// (with the embedded store, s is stopped first and another started with
// restart: one process holds the file) and returns the server to go on
// with.
func atAlterPause(tb testing.TB, backend string, s *server, restart func() *server, id string, alter func(*gate.TurnRecord)) *server {
	tb.Helper()
	ctx := context.Background()
	var ts interface {
		gate.TurnStore
		Close() error
	}
	switch backend {
	case "embedded":
		s.Stop(tb)
		st, err := embedded.Open(s.Data, embedded.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		ts = st
	default:
		env := neo4jEnv
		st, err := pgneo4j.Open(ctx, pgneo4j.Config{URI: env["NEO4J_URI"], Username: env["NEO4J_USERNAME"], Password: env["NEO4J_PASSWORD"], Database: env["NEO4J_DATABASE"]})
		if err != nil {
			tb.Fatal(err)
		}
		ts = st
	}
	cur, err := ts.GetApproval(ctx, id)
	if err != nil {
		tb.Fatal(err)
	}
	alter(cur)
	if _, err := ts.TransitionTurn(ctx, *cur, []gate.TurnStatus{cur.Status}, false, time.Now()); err != nil {
		tb.Fatal(fmt.Errorf("altering the pause: %w", err))
	}
	if err := ts.Close(); err != nil {
		tb.Fatal(err)
	}
	if backend == "embedded" {
		return restart()
	}
	return s
}

// TestAtCallScopesWaitsAndAudit: the call's arguments and the reads are
// the grant scope's alone; the requester's waiting submit runs the
// approved call; auto_run at a call covers the block, whose next turn
// runs with no pause; every pause, answer and resume is audited with
// digests, never an argument value; an unknown review is refused.
func TestAtCallScopesWaitsAndAudit(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "tokens.json")
	agent := mustCreateToken(t, file, "agent", "invoke")
	reader := mustCreateToken(t, file, "reader", "read")
	operator := mustCreateToken(t, file, "operator", "read,grant")
	up := mustAtUpstream(t)
	dir := t.TempDir()
	s, err := startMain(t, []string{"serve", "--addr", "127.0.0.1:0", "--data", dir + "/p.db", "--sandbox-workers", "1",
		"--tools", catalogueFile(t), "--upstream-http", up.URL, "--tokens-file", file, "--review-default", "at_call"})
	if err != nil {
		t.Fatal(err)
	}
	as := func(tok string, q req) reply { q.Token = &tok; return s.send(t, q) }
	body := func(task int, extra map[string]any) map[string]any {
		b := map[string]any{"code": atBlocks["starlark"]["two"], "session_id": "atcall", "phase": "interactive",
			"arguments": map[string]any{"task_id": task}}
		maps.Copy(b, extra)
		return b
	}

	details := mustError(t, as(agent, req{Method: "POST", Path: "/v1/turns", Body: body(1, map[string]any{"review": "per_call"})}), 400, "invalid_request")
	if details["field"] != "review" {
		t.Fatalf("an unknown review: %v; want field review", details)
	}

	// The server's default is at_call: no review in the request.
	turn := mustStatus(t, as(agent, req{Method: "POST", Path: "/v1/turns", Body: body(21, nil)}), 202)["turn"].(map[string]any)
	id := turn["id"].(string)
	if turn["review"] != "at_call" {
		t.Fatalf("turn %v; want the server's default review at_call", turn)
	}
	ra := mustStatus(t, as(reader, req{Method: "GET", Path: "/v1/approvals/" + id}), 200)
	if c, _ := ra["call"].(map[string]any); c == nil || c["arguments"] != nil || c["args_digest"] == "" || len(ra["reads"].([]any)) != 0 {
		t.Fatalf("without grant the review shows call %v, reads %v; want the call without values, no reads", ra["call"], ra["reads"])
	}
	oa := mustStatus(t, as(operator, req{Method: "GET", Path: "/v1/approvals/" + id}), 200)
	if c, _ := oa["call"].(map[string]any); c == nil || c["arguments"] == nil || len(oa["reads"].([]any)) != 1 {
		t.Fatalf("with grant the review shows call %v, reads %v; want the arguments and the read", oa["call"], oa["reads"])
	}

	// The requester waits on GET …?wait_s; the operator answers auto_run
	// at the first call: the run goes on without pauses.
	waited := make(chan reply, 1)
	go func() { waited <- as(agent, req{Method: "GET", Path: "/v1/turns/" + id + "?wait_s=30"}) }()
	c := callOf(t, turn)
	mustStatus(t, as(operator, req{Method: "POST", Path: "/v1/approvals/" + id + "/resolve", Body: map[string]any{"choice": "auto_run",
		"call": map[string]any{"position": c["position"], "args_digest": c["args_digest"]}}}), 200)
	if w := mustStatus(t, <-waited, 200)["turn"].(map[string]any); w["status"] != "approved" {
		t.Fatalf("the waiter saw %v; want approved", w)
	}
	out := mustStatus(t, as(agent, req{Method: "POST", Path: "/v1/turns/" + id + "/run"}), 200)
	want := []string{`get_task_jobs_summary{"task_id":21}`, `kill_job{"panda_id":4021}`, `kill_job{"panda_id":6021}`}
	if got := up.seen(); out["status"] != "succeeded" || !slices.Equal(got, want) {
		t.Fatalf("run %v, the upstream saw %v; want %v", out["status"], got, want)
	}
	// The session's policy covers the block: the next turn runs at once.
	out = mustStatus(t, as(agent, req{Method: "POST", Path: "/v1/turns", Body: body(21, nil)}), 200)
	if d, _ := out["decision"].(map[string]any); d["reason"] != "session_policy" {
		t.Fatalf("the covered block's decision %v; want session_policy", d)
	}

	// A requester waiting in its submit gets the run once it is answered.
	submitted := make(chan reply, 1)
	go func() {
		submitted <- as(agent, req{Method: "POST", Path: "/v1/turns", Body: body(22, map[string]any{"wait_s": 30, "session_id": "other"})})
	}()
	var pending map[string]any
	for pending == nil {
		list := mustStatus(t, as(operator, req{Method: "GET", Path: "/v1/approvals?status=pending&session=other"}), 200)["approvals"].([]any)
		if len(list) > 0 {
			pending = list[0].(map[string]any)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	pc := callOf(t, pending)
	mustStatus(t, as(operator, req{Method: "POST", Path: "/v1/approvals/" + pending["id"].(string) + "/resolve", Body: map[string]any{"choice": "run_once",
		"call": map[string]any{"position": pc["position"], "args_digest": pc["args_digest"]}}}), 200)
	again := mustStatus(t, <-submitted, 202)["turn"].(map[string]any)
	if num(callOf(t, again)["position"]) != 2 || num(again["pauses"]) != 1 {
		t.Fatalf("the waiting submit answered %v; want paused again at call 2", again)
	}

	// The audit names the calls by their digests and holds no value.
	raw := as(operator, req{Method: "GET", Path: "/v1/decisions?limit=500"})
	log := string(raw.Body)
	for _, v := range []string{"4021", "6021", "4022", "6022"} {
		if holdsNumber(log, v) {
			t.Fatalf("the audit holds the argument value %s: %s", v, log)
		}
	}
	var decisions struct {
		Decisions []map[string]any `json:"decisions"`
	}
	raw.Into(t, &decisions)
	reasons := map[string]int{}
	for _, d := range decisions.Decisions {
		note, _ := d["note"].(string)
		if strings.Contains(note, "args "+c["args_digest"].(string)) {
			reasons[d["kind"].(string)+"/"+d["reason"].(string)]++
		}
	}
	for _, k := range []string{"turn/review_required", "approval/operator_approved", "turn/operator_approved"} {
		if k == "turn/operator_approved" && reasons[k] == 2 {
			continue // the resume's claim and the record of what it dispatched
		}
		if reasons[k] != 1 {
			t.Fatalf("records naming the first call by its digest: %v; want one %s", reasons, k)
		}
	}
	// Each dispatched call is on record: the auto_run resume of turn 21
	// dispatched both kills, the run_once resume of turn 22 its first.
	dispatched := 0
	for _, d := range decisions.Decisions {
		if note, _ := d["note"].(string); strings.HasPrefix(note, "dispatched ") {
			dispatched += strings.Count(note, "tools.kill_job args sha256:")
		}
	}
	if dispatched != 3 {
		t.Fatalf("the audit records %d dispatched calls; want 3", dispatched)
	}
}

// TestAtCallCrashAfterDispatchNeverResends: a server killed while the
// approved call is in flight leaves the turn running, and the server that
// opens its store after it never sends the call again: the turn cannot be
// claimed, answered or run, and once no run can still end it (its
// deadline, the replay timeout and the run grace, shortened here) the
// sweep ends it failed, run_lost at that call, audited by the call's
// digests only; the upstream saw the kill once.
func TestAtCallCrashAfterDispatchNeverResends(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	up := mustAtUpstream(t)
	data := filepath.Join(t.TempDir(), "p.db")
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--sandbox-workers", "1", "--tools", catalogueFile(t),
		"--upstream-http", up.URL, "--auth", "off"}
	// The turn's deadline is close enough to wait for: its submit, answer
	// and claim come well within it.
	p := mustServeProcess(t, append(slices.Clone(args), "--approval-timeout", "10s"))
	turn := submitAtCall(t, p.server, "starlark", atBlocks["starlark"]["one"], 31)
	id := turn["id"].(string)
	answerAt(t, p.server, turn, "run_once")
	up.mu.Lock()
	up.block = make(chan struct{})
	up.mu.Unlock()
	go func() {
		r, err := http.Post(p.URL+"/v1/turns/"+id+"/run", "application/json", nil)
		if err == nil {
			r.Body.Close()
		}
	}()
	for !slices.Contains(up.seen(), `kill_job{"panda_id":4031}`) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	up.mu.Lock()
	close(up.block)
	up.block = nil
	up.mu.Unlock()

	s, err := startMainWith(t, append(args, "--replay-timeout", "100ms"), func(c *serveConfig) { c.runGrace = time.Millisecond })
	if err != nil {
		t.Fatal(err)
	}
	if d := mustError(t, s.post(t, "/v1/turns/"+id+"/run", nil), 409, "conflict"); d["status"] != "running" {
		t.Fatalf("running the crashed turn again: %v; want refused, running", d)
	}
	mustError(t, s.post(t, "/v1/approvals/"+id+"/resolve", map[string]any{"choice": "run_once"}), 409, "conflict")
	if got := mustStatus(t, s.get(t, "/v1/turns/"+id), 200)["turn"].(map[string]any); got["status"] != "running" {
		t.Fatalf("the crashed turn is %v; want running until the sweep ends it", got)
	}
	want := []string{`get_task_jobs_summary{"task_id":31}`, `kill_job{"panda_id":4031}`}
	if got := up.seen(); !slices.Equal(got, want) {
		t.Fatalf("the upstream saw %v; want the kill once", got)
	}

	// Past the deadline, the replay timeout and the grace, the sweep ends
	// the turn run_lost at its call.
	deadline, _ := time.Parse(time.RFC3339Nano, turn["deadline"].(string))
	time.Sleep(time.Until(deadline))
	var lost map[string]any
	for end := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := s.gate.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		lost = mustStatus(t, s.get(t, "/v1/turns/"+id), 200)["turn"].(map[string]any)
		if lost["status"] != "running" || time.Now().After(end) {
			break
		}
	}
	c, want1 := callOf(t, lost), callOf(t, turn)
	if lost["status"] != "failed" || c["position"] != want1["position"] || c["args_digest"] != want1["args_digest"] {
		t.Fatalf("after the grace the crashed turn is %v; want failed at call %v", lost, want1)
	}
	raw := s.get(t, "/v1/decisions?limit=500")
	if holdsNumber(string(raw.Body), "4031") {
		t.Fatalf("the audit holds the argument value: %s", raw.Body)
	}
	var decisions struct {
		Decisions []map[string]any `json:"decisions"`
	}
	raw.Into(t, &decisions)
	var notes []string
	for _, d := range decisions.Decisions {
		if d["reason"] == "run_lost" {
			notes = append(notes, d["kind"].(string)+": "+d["note"].(string))
		}
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "turn: ") || !strings.Contains(notes[0], "call 1 tools.kill_job ") ||
		!strings.Contains(notes[0], "args "+c["args_digest"].(string)) {
		t.Fatalf("the audit's run_lost records %q; want one, naming call 1 by its digest", notes)
	}
	if got := up.seen(); !slices.Equal(got, want) {
		t.Fatalf("after the sweep the upstream saw %v; want the kill once", got)
	}
}

// TestAtCallOverMCPAwait: with the server's review at_call, run_code on
// /mcp/interactive pauses at the first kill; await_approval, once the
// operator answered over HTTP, runs that call and answers the next pause
// as pending (never a run it did not make).
func TestAtCallOverMCPAwait(t *testing.T) {
	t.Parallel()
	up := mustAtUpstream(t)
	dir := t.TempDir()
	s, err := startMain(t, []string{"serve", "--addr", "127.0.0.1:0", "--data", dir + "/p.db", "--sandbox-workers", "1",
		"--tools", catalogueFile(t), "--upstream-http", up.URL, "--auth", "off", "--review-default", "at_call"})
	if err != nil {
		t.Fatal(err)
	}
	inter := mustMCPClient(t, s, "/mcp/interactive", nil)
	res := callRunCode(t, inter, map[string]any{"code": atBlocks["starlark"]["two"], "arguments": map[string]any{"task_id": 41}, "session_id": "m"})
	var pending struct {
		PendingApproval string `json:"pending_approval"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError || json.Unmarshal(b, &pending) != nil || pending.PendingApproval == "" {
		t.Fatalf("run_code at the call: %s", mcpText(res))
	}
	turn := mustStatus(t, s.get(t, "/v1/turns/"+pending.PendingApproval), 200)["turn"].(map[string]any)
	answerAt(t, s, turn, "run_once")
	res, err = inter.CallTool(context.Background(), &mcp.CallToolParams{Name: "await_approval", Arguments: map[string]any{"id": pending.PendingApproval, "wait_s": 5}})
	if err != nil {
		t.Fatalf("await_approval: %v", err)
	}
	b, _ = json.Marshal(res.StructuredContent)
	pending.PendingApproval = ""
	if res.IsError || json.Unmarshal(b, &pending) != nil || pending.PendingApproval == "" {
		t.Fatalf("await_approval after the first kill: %s; want pending at the second", mcpText(res))
	}
	want := []string{`get_task_jobs_summary{"task_id":41}`, `kill_job{"panda_id":4041}`}
	if got := up.seen(); !slices.Equal(got, want) {
		t.Fatalf("the upstream saw %v; want %v", got, want)
	}
}

// TestAtCallPauseIsAPendingApproval: a pause counts in the pending
// bounds: past them the turn's first pause is refused 429 busy, its read
// made, nothing state-changing dispatched, nothing pending; a later pause
// of an admitted turn is admitted past them (its approved call ran) and
// counts.
func TestAtCallPauseIsAPendingApproval(t *testing.T) {
	t.Parallel()
	up := mustAtUpstream(t)
	dir := t.TempDir()
	s, err := startMain(t, []string{"serve", "--addr", "127.0.0.1:0", "--data", dir + "/p.db", "--sandbox-workers", "1",
		"--tools", catalogueFile(t), "--upstream-http", up.URL, "--auth", "off", "--max-pending-approvals", "1"})
	if err != nil {
		t.Fatal(err)
	}
	submitAtCall(t, s, "starlark", atBlocks["starlark"]["one"], 51)
	d := mustError(t, s.post(t, "/v1/turns", map[string]any{"code": atBlocks["starlark"]["one"], "session_id": "atcall",
		"phase": "interactive", "review": "at_call", "arguments": map[string]any{"task_id": 52}}), 429, "busy")
	if d["reason"] != "pending_approvals" {
		t.Fatalf("a pause past the bound: %v; want busy pending_approvals", d)
	}
	want := []string{`get_task_jobs_summary{"task_id":51}`, `get_task_jobs_summary{"task_id":52}`}
	if got := up.seen(); !slices.Equal(got, want) {
		t.Fatalf("the upstream saw %v; want the two reads only", got)
	}
	list := mustStatus(t, s.get(t, "/v1/approvals?status=pending"), 200)["approvals"].([]any)
	if len(list) != 1 {
		t.Fatalf("%d approvals pending; want the first pause only", len(list))
	}

	// A later pause of an admitted turn is admitted past the bound: its
	// approved call already ran, and refusing would strand the run. It
	// counts: a new turn's first pause is refused while it waits.
	first := list[0].(map[string]any)
	answerAt(t, s, first, "reject")
	turn := submitAtCall(t, s, "starlark", atBlocks["starlark"]["two"], 53)
	answerAt(t, s, turn, "run_once")
	submitAtCall(t, s, "starlark", atBlocks["starlark"]["one"], 54) // the bound's one place, while turn is approved
	again := mustStatus(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 202)["turn"].(map[string]any)
	if again["status"] != "pending" || num(callOf(t, again)["position"]) != 2 {
		t.Fatalf("the second pause past the bound: %v; want pending at call 2", again)
	}
	if list := mustStatus(t, s.get(t, "/v1/approvals?status=pending"), 200)["approvals"].([]any); len(list) != 2 {
		t.Fatalf("%d approvals pending; want the other turn's first pause and this later one, past the bound of 1", len(list))
	}
	if d := mustError(t, s.post(t, "/v1/turns", map[string]any{"code": atBlocks["starlark"]["one"], "session_id": "atcall",
		"phase": "interactive", "review": "at_call", "arguments": map[string]any{"task_id": 55}}), 429, "busy"); d["reason"] != "pending_approvals" {
		t.Fatalf("a first pause while a later one is past the bound: %v; want busy pending_approvals", d)
	}
	answerAt(t, s, again, "run_once")
	out := mustStatus(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 200)
	if out["status"] != "succeeded" {
		t.Fatalf("the run after its later pause: %v; want succeeded", out)
	}
}

// TestAtCallPauseHoldsNothing: a paused turn is a stored value: pausing
// more turns starts no sandbox worker (the pool's live and busy counts on
// /metrics, the worker processes among this process's children) and
// leaves no goroutine behind (runtime.NumGoroutine of the in-process
// server, settled). Not parallel: it counts the test process's
// goroutines and children.
func TestAtCallPauseHoldsNothing(t *testing.T) {
	up := mustAtUpstream(t)
	s, err := startMain(t, []string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "p.db"), "--sandbox-workers", "1",
		"--tools", catalogueFile(t), "--upstream-http", up.URL, "--auth", "off", "--max-pending-approvals", "64", "--max-pending-per-requester", "64"})
	if err != nil {
		t.Fatal(err)
	}
	type held struct{ goroutines, children, live, busy int }
	// counts waits for the goroutines to settle at most at max (a settled
	// count that stays above it is reported as it is, after a generous
	// deadline); max < 0 waits until two reads agree.
	counts := func(max int) held {
		prev, n := -1, runtime.NumGoroutine()
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); n = runtime.NumGoroutine() {
			if max >= 0 && n <= max || max < 0 && n == prev {
				break
			}
			prev = n
			time.Sleep(20 * time.Millisecond)
		}
		text := string(s.get(t, "/metrics").Body)
		return held{goroutines: n, children: len(workerChildren(t)),
			live: int(metricValue(text, `procgraph_sandbox_workers_live{pool="replay"}`) + metricValue(text, `procgraph_sandbox_workers_live{pool="nested"}`)),
			busy: int(metricValue(text, `procgraph_sandbox_workers_busy{pool="replay"}`) + metricValue(text, `procgraph_sandbox_workers_busy{pool="nested"}`))}
	}
	// One pause first: what a first turn starts once (the gate's caches,
	// the connection) is in the baseline.
	submitAtCall(t, s, "starlark", atBlocks["starlark"]["one"], 60)
	before := counts(-1)
	const n = 8
	for i := range n {
		submitAtCall(t, s, "starlark", atBlocks["starlark"]["two"], 61+i)
	}
	after := counts(before.goroutines)
	if list := mustStatus(t, s.get(t, "/v1/approvals?status=pending"), 200)["approvals"].([]any); len(list) != n+1 {
		t.Fatalf("%d turns pending; want %d", len(list), n+1)
	}
	t.Logf("one pause: %+v; %d more: %+v", before, n, after)
	if after.goroutines > before.goroutines || after.children > before.children || after.live > before.live || after.busy != 0 {
		t.Fatalf("after %d more pauses the server holds %+v; before them %+v: a pause must hold no worker and no goroutine", n, after, before)
	}
}

// TestAtCallPausedReadsCountInHealth: the run at the call that pauses
// made its reads: it counts in the health of the stored version whose
// code it ran, whatever the answer — a turn rejected at its pause, one
// that expires there, and a resume that pauses again and is rejected each
// count their runs, as a run that ends does.
func TestAtCallPausedReadsCountInHealth(t *testing.T) {
	t.Parallel()
	up := mustAtUpstream(t)
	data := filepath.Join(t.TempDir(), "p.db")
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--sandbox-workers", "1", "--tools", catalogueFile(t),
		"--upstream-http", up.URL, "--auth", "off"}
	s, err := startMain(t, args)
	if err != nil {
		t.Fatal(err)
	}
	code := atBlocks["starlark"]["two"]
	name := s.mustCapture(t, map[string]any{"code": code, "session_id": "capture", "lift": false}, nil)["procedure"].(map[string]any)["name"].(string)
	runs := func(s *server, want int, after string) {
		t.Helper()
		h := mustStatus(t, s.get(t, "/v1/procedures/"+name), 200)["health"].(map[string]any)
		if num(h["runs"]) != want || num(h["succeeded"]) != want {
			t.Fatalf("health after %s: %v; want %d runs, each a success", after, h, want)
		}
	}

	turn := submitAtCall(t, s, "starlark", code, 71)
	answerAt(t, s, turn, "reject")
	runs(s, 1, "a turn rejected at its pause")
	// The run at the call and the resume that paused again count once each.
	turn = submitAtCall(t, s, "starlark", code, 72)
	answerAt(t, s, turn, "run_once")
	again := mustStatus(t, s.post(t, "/v1/turns/"+turn["id"].(string)+"/run", nil), 202)["turn"].(map[string]any)
	answerAt(t, s, again, "reject")
	runs(s, 3, "a turn rejected at its second pause")
	s.Stop(t)

	// Expired at its pause (an approval timeout short enough to wait
	// for): its run counts.
	s, err = startMain(t, append(args, "--approval-timeout", "1s"))
	if err != nil {
		t.Fatal(err)
	}
	turn = submitAtCall(t, s, "starlark", code, 73)
	deadline, _ := time.Parse(time.RFC3339Nano, turn["deadline"].(string))
	time.Sleep(time.Until(deadline))
	for got := turn; got["status"] != "expired"; time.Sleep(20 * time.Millisecond) {
		got = mustStatus(t, s.get(t, "/v1/turns/"+turn["id"].(string)), 200)["turn"].(map[string]any)
	}
	runs(s, 4, "a turn expired at its pause")
}

// holdsNumber says whether text holds n as a token of its own: a digest
// or an id whose hex digits happen to spell it does not.
func holdsNumber(text, n string) bool {
	return regexp.MustCompile(`(^|[^0-9A-Za-z_])` + regexp.QuoteMeta(n) + `($|[^0-9A-Za-z_])`).MatchString(text)
}

func TestHoldsNumber(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       bool
	}{
		{"a JSON value", `{"panda_id":4031}`, true},
		{"a string", `"4031"`, true},
		{"in a note", "args 4031; never sent", true},
		{"inside an id", `"id":"pgd_18ee8773d22be4365c21a81d754031df"`, false},
		{"inside a larger number", `{"panda_id":40311}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := holdsNumber(tc.text, "4031"); got != tc.want {
				t.Fatalf("holdsNumber(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}
