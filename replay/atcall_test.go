package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/decide"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/usage"
)

// jobsUpstream is the recording upstream of the tests at the call: it
// records every call that reaches it; get_jobs answers Jobs (which a test
// may change between runs), fetch_logs a line, kill_job and restart_job
// what they did.
type jobsUpstream struct {
	mu    sync.Mutex
	calls []replaytest.Call
	jobs  []any
	// logsDown: fetch_logs fails.
	logsDown bool
}

func (u *jobsUpstream) Dispatch(_ context.Context, tool string, args map[string]any) (any, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls = append(u.calls, replaytest.Call{Tool: tool, Args: args})
	switch tool {
	case "get_jobs":
		return slices.Clone(u.jobs), nil
	case "fetch_logs":
		if u.logsDown {
			return nil, errors.New("the log server is down")
		}
		return "no errors", nil
	case "kill_job", "restart_job":
		return map[string]any{"done": tool, "panda_id": args["panda_id"]}, nil
	}
	return nil, fmt.Errorf("no tool %q upstream", tool)
}

// setJobs sets what get_jobs answers from now on.
func (u *jobsUpstream) setJobs(jobs ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.jobs = jobs
}

// saw is the calls that reached the upstream, as "tool" or
// "tool(panda_id)".
func (u *jobsUpstream) saw() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := []string{}
	for _, c := range u.calls {
		s := c.Tool
		if id, ok := c.Args["panda_id"]; ok {
			s = fmt.Sprintf("%s(%v)", c.Tool, id)
		}
		out = append(out, s)
	}
	return out
}

func job(id, failed int) map[string]any { return map[string]any{"panda_id": id, "failed": failed} }

// killFailing reads the jobs of a task, branches on what it read and kills
// each job that failed more than twice (line 4).
const killFailing = `jobs = tools.get_jobs(task_id=task_id)
for j in jobs:
    if j["failed"] > 2:
        tools.kill_job(panda_id=j["panda_id"])
logs = tools.fetch_logs(task_id=task_id)
return {"jobs": len(jobs), "logs": logs}`

// killFailingAsync is killFailing in dialect python-async.
const killFailingAsync = `async def first_failing(task_id):
    jobs = await tools.get_jobs(task_id=task_id)
    return [j for j in jobs if j["failed"] > 2]
failing = await first_failing(task_id)
for j in failing:
    await tools.kill_job(panda_id=j["panda_id"])
return len(failing)`

// atEnv is one world of the tests at the call: a real store with
// replaytest's catalogue, a replayer in runner over a jobsUpstream.
type atEnv struct {
	t  *testing.T
	e  *replaytest.Env
	r  *replay.Replayer
	up *jobsUpstream
}

func newAtEnv(t *testing.T, runner sandbox.Runner) *atEnv {
	t.Helper()
	return newAtEnvMutating(t, runner, false)
}

// newAtEnvMutating is newAtEnv with --allow-mutating-autorun allowMutating.
func newAtEnvMutating(t *testing.T, runner sandbox.Runner, allowMutating bool) *atEnv {
	t.Helper()
	e := replaytest.New(t, runner, allowMutating)
	up := &jobsUpstream{}
	r := replay.New(e.Service, runner, up, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	return &atEnv{t: t, e: e, r: r, up: up}
}

// request prepares code (dialect "" is starlark) with task_id 1 under the
// current catalogue, as an approved turn's run whose allow-set lets every
// known tool of its signature run (what the gate gives a block reviewed at
// the call), its decision recorded.
func (a *atEnv) request(code, dialect string) replay.RunRequest {
	a.t.Helper()
	ctx := context.Background()
	b, err := a.r.PrepareBlock(ctx, code, dialect, map[string]any{"task_id": 1})
	if err != nil {
		a.t.Fatal(err)
	}
	allowed := replay.AllowSet(b.Analysis.Signature, b.Class, decide.Verdict{Outcome: audit.Allowed, StateChanging: true})
	d, err := a.r.Record(ctx, audit.Decision{Kind: audit.KindTurn, Procedure: b.Name, CodeHash: b.Analysis.CodeHash,
		Phase: audit.PhaseInteractive, Outcome: audit.Allowed, Reason: audit.ReasonOperatorApproved,
		Actor: "agent", Session: "s", AllowedTools: allowed})
	if err != nil {
		a.t.Fatal(err)
	}
	return replay.RunRequest{Block: b, Decision: d, Allowed: allowed, UsageKey: usage.UsageKey("s", ""), Pending: &replay.Pending{},
		Request: replay.InvokeRequest{Name: b.Name, Phase: audit.PhaseInteractive, SessionID: "s", Actor: "agent", ReviewedBy: "operator", ReviewerHasGrantScope: true}}
}

// mustPause runs or resumes req and wants a pause.
func (a *atEnv) mustPause(res *replay.AtCallResult, err error) *replay.Pause {
	a.t.Helper()
	if err != nil {
		a.t.Fatal(err)
	}
	if res.Pause == nil {
		a.t.Fatalf("the run did not pause: %+v", res.Result)
	}
	return res.Pause
}

// mustEnd wants the run to have ended, succeeded.
func (a *atEnv) mustEnd(res *replay.AtCallResult, err error) *replay.InvokeResult {
	a.t.Helper()
	if err != nil {
		a.t.Fatal(err)
	}
	if res.Pause != nil || res.Result == nil || res.Result.Status != replay.StatusSucceeded {
		a.t.Fatalf("the run did not end succeeded: pause %+v, result %+v", res.Pause, res.Result)
	}
	return res.Result
}

// wantSaw checks what reached the upstream so far.
func (a *atEnv) wantSaw(want ...string) {
	a.t.Helper()
	if got := a.up.saw(); !slices.Equal(got, want) {
		a.t.Fatalf("the upstream saw %v, want %v", got, want)
	}
}

// roundTrip is p stored as JSON and read back: a pause is a plain value.
func roundTrip(t *testing.T, p *replay.Pause) *replay.Pause {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var out replay.Pause
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// wantRefused wants err to be a conflict of reason.
func wantRefused(t *testing.T, res *replay.AtCallResult, err error, reason string) {
	t.Helper()
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.CodeConflict || fe.Details["reason"] != reason {
		t.Fatalf("got %+v, %v; want a conflict of reason %s", res, err, reason)
	}
	if res != nil {
		t.Fatalf("a refused resume answered %+v", res)
	}
}

func digest(t *testing.T, x any) string {
	t.Helper()
	d, err := jsonvalue.Digest(x)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAtCallPausesAndResumes is the review at the call with real worker
// processes: a block that reads, branches on what it read and kills a job
// pauses before the kill with the real panda_id, nothing state-changing
// dispatched; the approval resumes it, the read answered from the record,
// the kill dispatched exactly once; a rejection (no resume) dispatches
// nothing.
func TestAtCallPausesAndResumes(t *testing.T) {
	ctx := context.Background()
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			a := newAtEnv(t, rn.r)
			a.up.setJobs(job(101, 1), job(202, 5))
			req := a.request(killFailing, "")
			p := a.mustPause(a.r.RunAtCall(ctx, req))
			a.wantSaw("get_jobs")
			wantArgs := map[string]any{"panda_id": int64(202)}
			if p.Position != 1 || p.Tool != "kill_job" || !sameJSON(p.Arguments, wantArgs) || p.Line != 4 {
				t.Fatalf("pause = %+v, want call 1, tools.kill_job(panda_id=202) on line 4", p)
			}
			if p.SchemaHash != req.Block.Catalogue.SchemaHash("kill_job") || p.SchemaHash == "" || p.ArgsDigest != digest(t, wantArgs) {
				t.Fatalf("pause binds schema hash %q, args digest %q", p.SchemaHash, p.ArgsDigest)
			}
			if len(p.Calls) != 1 || p.Calls[0].Tool != "get_jobs" || !sameJSON(p.Calls[0].Arguments, map[string]any{"task_id": 1}) ||
				string(p.Calls[0].Response) != `[{"failed":1,"panda_id":101},{"failed":5,"panda_id":202}]` {
				t.Fatalf("pause's reads = %+v", p.Calls)
			}
			if pl, ok := rn.r.(*sandbox.Pool); ok {
				if s := pl.Stats(); s.Busy != 0 {
					t.Fatalf("a paused run holds %d busy workers", s.Busy)
				}
			}
			// A reject is no resume: nothing more reaches the upstream.
			a.wantSaw("get_jobs")

			// The jobs upstream change after the pause: the resumed run
			// reads the recorded answer, not the upstream, and reaches the
			// same call.
			a.up.setJobs(job(303, 9))
			stored := roundTrip(t, p)
			res, err := a.r.ResumeAtCall(ctx, req, stored, stored.Approval(false))
			out := a.mustEnd(res, err)
			a.wantSaw("get_jobs", "kill_job(202)", "fetch_logs")
			if !slices.Equal(res.Dispatched, []int{1}) || len(res.Calls) != 3 || res.Calls[1].Tool != "kill_job" {
				t.Fatalf("resume dispatched %v, calls %+v", res.Dispatched, res.Calls)
			}
			if !sameJSON(map[string]any{"r": out.Result}, map[string]any{"r": map[string]any{"jobs": 2, "logs": "no errors"}}) {
				t.Fatalf("result = %v", out.Result)
			}
		})
	}
}

// TestAtCallAnswersExactly: a resume gives the program the very values
// the first run got, through a pause stored as JSON: an answer's 5.0
// stays a float (its text "5.0" in the call the program makes of it), 5
// an integer.
func TestAtCallAnswersExactly(t *testing.T) {
	ctx := context.Background()
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			a := newAtEnv(t, rn.r)
			a.up.setJobs(map[string]any{"panda_id": 202, "failed": 5.0}, map[string]any{"panda_id": 303, "failed": 5})
			req := a.request(`jobs = tools.get_jobs(task_id=task_id)
for j in jobs:
    tools.kill_job(panda_id=j["panda_id"], reason="failed %s times, a %s" % (j["failed"], type(j["failed"])))
return len(jobs)`, "")
			p := a.mustPause(a.r.RunAtCall(ctx, req))
			if want := (map[string]any{"panda_id": 202, "reason": "failed 5.0 times, a float"}); !sameJSON(p.Arguments, want) {
				t.Fatalf("paused at %v, want %v", p.Arguments, want)
			}
			p2 := a.mustPause(a.r.ResumeAtCall(ctx, req, roundTrip(t, p), p.Approval(false)))
			if want := (map[string]any{"panda_id": 303, "reason": "failed 5 times, a int"}); !sameJSON(p2.Arguments, want) {
				t.Fatalf("paused at %v, want %v", p2.Arguments, want)
			}
			res, err := a.r.ResumeAtCall(ctx, req, roundTrip(t, p2), p2.Approval(false))
			a.mustEnd(res, err)
			a.wantSaw("get_jobs", "kill_job(202)", "kill_job(303)")
		})
	}
}

// TestAtCallPausesAtEachCall: a block with two kills pauses twice, the
// second pause holding the first kill's recorded answer; every call
// reaches the upstream once. Approving the rest of the run at the first
// pause dispatches both kills in one resume.
func TestAtCallPausesAtEachCall(t *testing.T) {
	ctx := context.Background()
	t.Run("two pauses", func(t *testing.T) {
		a := newAtEnv(t, pool)
		a.up.setJobs(job(202, 5), job(101, 0), job(303, 3))
		req := a.request(killFailing, "")
		p1 := a.mustPause(a.r.RunAtCall(ctx, req))
		p2 := a.mustPause(a.r.ResumeAtCall(ctx, req, roundTrip(t, p1), p1.Approval(false)))
		a.wantSaw("get_jobs", "kill_job(202)")
		if p2.Position != 2 || p2.Tool != "kill_job" || !sameJSON(p2.Arguments, map[string]any{"panda_id": 303}) || p2.Line != 4 {
			t.Fatalf("second pause = %+v", p2)
		}
		if len(p2.Calls) != 2 || p2.Calls[1].Tool != "kill_job" ||
			string(p2.Calls[1].Response) != `{"done":"kill_job","panda_id":202}` {
			t.Fatalf("second pause's calls = %+v", p2.Calls)
		}
		res, err := a.r.ResumeAtCall(ctx, req, roundTrip(t, p2), p2.Approval(false))
		a.mustEnd(res, err)
		a.wantSaw("get_jobs", "kill_job(202)", "kill_job(303)", "fetch_logs")
		if !slices.Equal(res.Dispatched, []int{2}) {
			t.Fatalf("the second resume dispatched %v", res.Dispatched)
		}
	})
	t.Run("the rest of the run approved", func(t *testing.T) {
		a := newAtEnv(t, pool)
		a.up.setJobs(job(202, 5), job(303, 3))
		req := a.request(killFailing, "")
		p := a.mustPause(a.r.RunAtCall(ctx, req))
		res, err := a.r.ResumeAtCall(ctx, req, p, p.Approval(true))
		a.mustEnd(res, err)
		a.wantSaw("get_jobs", "kill_job(202)", "kill_job(303)", "fetch_logs")
		if !slices.Equal(res.Dispatched, []int{1, 2}) {
			t.Fatalf("dispatched %v", res.Dispatched)
		}
	})
}

// TestAtCallFailsAfterTheCall: a resumed run whose read after the
// approved call fails ends failed, as any run, the approved call
// dispatched once and the failed call last among its calls.
func TestAtCallFailsAfterTheCall(t *testing.T) {
	ctx := context.Background()
	a := newAtEnv(t, pool)
	a.up.setJobs(job(202, 5))
	req := a.request(killFailing, "")
	p := a.mustPause(a.r.RunAtCall(ctx, req))
	a.up.mu.Lock()
	a.up.logsDown = true
	a.up.mu.Unlock()
	res, err := a.r.ResumeAtCall(ctx, req, p, p.Approval(false))
	if err != nil || res.Pause != nil || res.Result == nil || res.Result.Status != replay.StatusFailed || res.Result.Decision.Result != health.FailureToolError {
		t.Fatalf("resume = %+v, %v; want a failed run", res, err)
	}
	a.wantSaw("get_jobs", "kill_job(202)", "fetch_logs")
	if n := len(res.Calls); n != 3 || res.Calls[2].Tool != "fetch_logs" || res.Calls[2].Error == "" || !slices.Equal(res.Dispatched, []int{1}) {
		t.Fatalf("calls %+v, dispatched %v", res.Calls, res.Dispatched)
	}
}

// TestAtCallWithoutStateChange: a block that makes no state-changing call
// ends as it would in the automatic phase, with no pause.
func TestAtCallWithoutStateChange(t *testing.T) {
	ctx := context.Background()
	a := newAtEnv(t, pool)
	a.up.setJobs(job(101, 1))
	req := a.request(killFailing, "")
	res, err := a.r.RunAtCall(ctx, req)
	out := a.mustEnd(res, err)
	a.wantSaw("get_jobs", "fetch_logs")
	if len(res.Calls) != 2 || len(res.Dispatched) != 0 || out.Decision.Result != "succeeded" {
		t.Fatalf("calls %+v, dispatched %v, decision result %q", res.Calls, res.Dispatched, out.Decision.Result)
	}
	ro := req
	ro.Allowed = replay.AllowSet(req.Block.Analysis.Signature, req.Block.Class, decide.Verdict{Outcome: audit.Allowed})
	auto, _ := a.r.RunBlock(ctx, ro)
	if auto.Status != out.Status || !sameJSON(map[string]any{"r": auto.Result}, map[string]any{"r": out.Result}) {
		t.Fatalf("at the call %+v, in the automatic phase's allow-set %+v", out, auto)
	}
}

// TestAtCallPythonAsync: the same in dialect python-async, the call's line
// that of the code as written.
func TestAtCallPythonAsync(t *testing.T) {
	ctx := context.Background()
	a := newAtEnv(t, pool)
	a.up.setJobs(job(101, 1), job(202, 5))
	req := a.request(killFailingAsync, "python-async")
	p := a.mustPause(a.r.RunAtCall(ctx, req))
	if p.Position != 1 || p.Tool != "kill_job" || !sameJSON(p.Arguments, map[string]any{"panda_id": 202}) || p.Line != 6 {
		t.Fatalf("pause = %+v", p)
	}
	res, err := a.r.ResumeAtCall(ctx, req, p, p.Approval(false))
	a.mustEnd(res, err)
	a.wantSaw("get_jobs", "kill_job(202)")
}

// TestAtCallNestedProcedures: a read-only proc__ call is a read (run as a
// nested replay, answered from the record on resume); a state-changing one
// pauses the run like a tool, with no schema hash of its own (its binding
// is the nested procedure's), and runs once, with its own calls, when
// approved.
func TestAtCallNestedProcedures(t *testing.T) {
	ctx := context.Background()
	// A nested state-changing replay runs only with mutating auto-run on
	// (decide.Decide): the engine does not change that.
	a := newAtEnvMutating(t, pool, true)
	a.up.setJobs(job(202, 5))
	reads := a.e.Capture("return tools.get_jobs(task_id=task_id)")
	kills := a.e.Capture("return tools.kill_job(panda_id=panda_id)")
	req := a.request(fmt.Sprintf(`jobs = tools.%s(task_id=task_id)
return tools.%s(panda_id=jobs[0]["panda_id"])`, reads.Name, kills.Name), "")
	p := a.mustPause(a.r.RunAtCall(ctx, req))
	a.wantSaw("get_jobs")
	if p.Position != 1 || p.Tool != kills.Name || p.SchemaHash != "" || !sameJSON(p.Arguments, map[string]any{"panda_id": 202}) || p.Line != 2 {
		t.Fatalf("pause = %+v", p)
	}
	res, err := a.r.ResumeAtCall(ctx, req, roundTrip(t, p), p.Approval(false))
	out := a.mustEnd(res, err)
	a.wantSaw("get_jobs", "kill_job(202)")
	if !sameJSON(out.Result.(map[string]any), map[string]any{"done": "kill_job", "panda_id": 202}) {
		t.Fatalf("result = %v", out.Result)
	}
}

// TestAtCallRefusals: every resume that is not of the paused call as it
// paused is refused, and nothing reaches the upstream — not the approved
// call, not a read again.
func TestAtCallRefusals(t *testing.T) {
	ctx := context.Background()
	a := newAtEnv(t, pool)
	a.up.setJobs(job(101, 1), job(202, 5))
	req := a.request(killFailing, "")
	p := a.mustPause(a.r.RunAtCall(ctx, req))
	a.wantSaw("get_jobs")
	tests := []struct {
		name   string
		pause  func(p *replay.Pause)         // changes the pause (nil: as it paused)
		change func(ap *replay.CallApproval) // changes the approval, after the pause's
		req    func() replay.RunRequest      // the request resumed (nil: req)
		reason string
		code   fault.Code // instead of a reason
	}{
		{name: "the approval names other arguments", change: func(ap *replay.CallApproval) { ap.ArgsDigest = digest(t, map[string]any{"panda_id": 101}) },
			reason: replay.ReasonApprovalMismatch},
		{name: "the approval names another schema hash", change: func(ap *replay.CallApproval) { ap.SchemaHash = "sha256:" + strings.Repeat("0", 64) },
			reason: replay.ReasonApprovalMismatch},
		{name: "the approval names another position", change: func(ap *replay.CallApproval) { ap.Position = 2 }, reason: replay.ReasonApprovalMismatch},
		{name: "the approval names another tool", change: func(ap *replay.CallApproval) { ap.Tool = "restart_job" }, reason: replay.ReasonApprovalMismatch},
		{name: "a tool answered otherwise: another job is killed", pause: func(p *replay.Pause) {
			p.Calls[0].Response = rawJSON(t, []any{job(101, 1), job(202, 0), job(303, 9)})
		}, reason: replay.ReasonDiverged},
		{name: "a tool answered otherwise: nothing is killed", pause: func(p *replay.Pause) {
			p.Calls[0].Response = rawJSON(t, []any{job(101, 1), job(202, 0)})
		}, reason: replay.ReasonDiverged},
		{name: "the pause and its approval name other arguments", pause: func(p *replay.Pause) {
			p.Arguments = map[string]any{"panda_id": 101}
			p.ArgsDigest = digest(t, p.Arguments)
		}, reason: replay.ReasonDiverged},
		{name: "the pause and its approval name another schema hash", pause: func(p *replay.Pause) {
			p.SchemaHash = "sha256:" + strings.Repeat("0", 64)
		}, reason: replay.ReasonDiverged},
		{name: "the pause and its approval name another tool", pause: func(p *replay.Pause) { p.Tool = "restart_job" }, reason: replay.ReasonDiverged},
		{name: "the pause and its approval name another position", pause: func(p *replay.Pause) { p.Position, p.Calls = 0, p.Calls[:0] },
			reason: replay.ReasonDiverged},
		{name: "a recorded read with other arguments", pause: func(p *replay.Pause) { p.Calls[0].Arguments = map[string]any{"task_id": 2} },
			reason: replay.ReasonDiverged},
		{name: "a recorded read of another tool", pause: func(p *replay.Pause) { p.Calls[0].Tool = "fetch_logs" }, reason: replay.ReasonDiverged},
		{name: "another block", req: func() replay.RunRequest {
			return a.request(strings.Replace(killFailing, "> 2", "> 1", 1), "")
		}, reason: replay.ReasonDiverged},
		{name: "the pause's arguments are not its digest's", pause: func(p *replay.Pause) { p.Arguments = map[string]any{"panda_id": 101} }, code: fault.CodeInvalid},
		{name: "the pause's position is not after its calls", pause: func(p *replay.Pause) { p.Position = 2 }, code: fault.CodeInvalid},
		{name: "a recorded answer is not JSON", pause: func(p *replay.Pause) { p.Calls[0].Response = json.RawMessage("{") }, code: fault.CodeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := roundTrip(t, p)
			if tc.pause != nil {
				tc.pause(q)
			}
			ap := q.Approval(false)
			if tc.change != nil {
				tc.change(&ap)
			}
			r := req
			if tc.req != nil {
				r = tc.req()
			}
			res, err := a.r.ResumeAtCall(ctx, r, q, ap)
			if tc.code != "" {
				if fault.ErrorCode(err) != tc.code || res != nil {
					t.Fatalf("got %+v, %v; want %s", res, err, tc.code)
				}
			} else {
				wantRefused(t, res, err, tc.reason)
			}
			a.wantSaw("get_jobs")
		})
	}
}

// TestAtCallEndsBeforeTheCall: a resumed run that ends, or fails, before
// the approved call — its record answered otherwise — diverged: nothing is
// dispatched and no result is answered.
func TestAtCallEndsBeforeTheCall(t *testing.T) {
	ctx := context.Background()
	a := newAtEnv(t, sandbox.NewInProcess())
	a.up.setJobs(job(202, 5))
	req := a.request(`jobs = tools.get_jobs(task_id=task_id)
if jobs[0]["failed"] > 2:
    tools.kill_job(panda_id=jobs[0]["panda_id"])
return len(jobs)`, "")
	p := a.mustPause(a.r.RunAtCall(ctx, req))
	tests := []struct {
		name   string
		answer any
	}{
		{"it ends", []any{job(202, 0)}},
		{"it fails", []any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := roundTrip(t, p)
			q.Calls[0].Response = rawJSON(t, tc.answer)
			res, err := a.r.ResumeAtCall(ctx, req, q, q.Approval(false))
			wantRefused(t, res, err, replay.ReasonDiverged)
			a.wantSaw("get_jobs")
		})
	}
}

// TestAtCallCatalogueChanged: the killed tool's contract changes between
// the pause and the resume (the block prepared again under the new
// catalogue): the resume diverges, nothing dispatched.
func TestAtCallCatalogueChanged(t *testing.T) {
	ctx := context.Background()
	a := newAtEnv(t, pool)
	a.up.setJobs(job(202, 5))
	p := a.mustPause(a.r.RunAtCall(ctx, a.request(killFailing, "")))
	tools := slices.Clone(replaytest.DefaultTools)
	for i := range tools {
		if tools[i].Name == "kill_job" {
			tools[i].InputSchema = map[string]any{"type": "object", "properties": map[string]any{"panda_id": map[string]any{"type": "integer"}}}
		}
	}
	if _, err := a.e.Service.PutCatalogue(ctx, tools, "tester"); err != nil {
		t.Fatal(err)
	}
	res, err := a.r.ResumeAtCall(ctx, a.request(killFailing, ""), p, p.Approval(false))
	wantRefused(t, res, err, replay.ReasonDiverged)
	a.wantSaw("get_jobs")
}

// TestAtCallReadsBounded: reads larger than a recording may be are not
// kept as a pause: the run is refused, nothing state-changing dispatched.
func TestAtCallReadsBounded(t *testing.T) {
	ctx := context.Background()
	a := newAtEnv(t, sandbox.NewInProcess())
	a.up.setJobs(job(202, 5), strings.Repeat("x", recording.MaxRecordingBytes))
	req := a.request(`jobs = tools.get_jobs(task_id=task_id)
return tools.kill_job(panda_id=jobs[0]["panda_id"])`, "")
	res, err := a.r.RunAtCall(ctx, req)
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.CodeTooLarge || fe.Details["reason"] != "recording_too_large" || res != nil {
		t.Fatalf("got %+v, %v; want recording_too_large", res, err)
	}
	a.wantSaw("get_jobs")
}

// rawJSON is x as JSON.
func rawJSON(t *testing.T, x any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameJSON reports whether a and b are one JSON value.
func sameJSON(a, b map[string]any) bool {
	da, err1 := jsonvalue.Digest(a)
	db, err2 := jsonvalue.Digest(b)
	return err1 == nil && err2 == nil && da == db
}
