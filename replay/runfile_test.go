package replay_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

func TestRunFile(t *testing.T) {
	ctx := context.Background()
	cat, err := procedures.NewCatalogue(replaytest.DefaultTools)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"task_id": 3}
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			t.Run("read-only", func(t *testing.T) {
				d := &replaytest.Recorder{}
				res, err := replay.RunFile(ctx, replay.RunFileRequest{Code: replaytest.ReadOnlyCode, Catalogue: cat, Arguments: args, Runner: rn.r, Dispatcher: d})
				if err != nil || res.Status != replay.StatusSucceeded || res.Decision.Reason != audit.ReasonReadOnly ||
					res.Decision.Phase != audit.PhaseInteractive || res.Decision.ID == "" {
					t.Fatalf("RunFile = %+v, %v", res, err)
				}
				if !slices.Equal(d.Tools(), []string{"get_jobs", "fetch_logs"}) {
					t.Fatalf("dispatched %v", d.Tools())
				}
			})
			t.Run("state-changing without AllowMutating", func(t *testing.T) {
				d := &replaytest.Recorder{}
				_, err := replay.RunFile(ctx, replay.RunFileRequest{Code: replaytest.StateChangingCode, Catalogue: cat, Arguments: args, Runner: rn.r, Dispatcher: d})
				if fault.ErrorCode(err) != fault.CodeDenied || len(d.Tools()) != 0 {
					t.Fatalf("err = %v, dispatched %v", err, d.Tools())
				}
				if dec, ok := audit.DecisionOf(err); !ok || dec.Reason != audit.ReasonStateChangingDisabled {
					t.Fatalf("decision %+v", dec)
				}
			})
			t.Run("state-changing with AllowMutating", func(t *testing.T) {
				d := &replaytest.Recorder{}
				res, err := replay.RunFile(ctx, replay.RunFileRequest{Code: replaytest.StateChangingCode, Catalogue: cat, Arguments: args, Runner: rn.r, Dispatcher: d, AllowMutating: true})
				if err != nil || res.Status != replay.StatusSucceeded || res.Decision.Reason != audit.ReasonOperatorReviewed || !d.Saw("kill_job") {
					t.Fatalf("RunFile = %+v, %v", res, err)
				}
			})
			t.Run("automatic stays read-only", func(t *testing.T) {
				d := &replaytest.Recorder{}
				_, err := replay.RunFile(ctx, replay.RunFileRequest{Code: replaytest.StateChangingCode, Catalogue: cat, Arguments: args, Runner: rn.r, Dispatcher: d,
					AllowMutating: true, Phase: audit.PhaseAutomatic})
				if fault.ErrorCode(err) != fault.CodeDenied || len(d.Tools()) != 0 {
					t.Fatalf("err = %v", err)
				}
			})
			t.Run("unknown and proc__ never allowed", func(t *testing.T) {
				d := &replaytest.Recorder{}
				res, err := replay.RunFile(ctx, replay.RunFileRequest{Code: "tools.get_jobs()\nreturn tools.proc__fetch_logs__get_jobs(task_id=1)",
					Catalogue: cat, Runner: rn.r, Dispatcher: d, AllowMutating: true})
				if err != nil || res.Error == nil || res.Error.Code != sandbox.ToolRefused || res.Error.Tool != "proc__fetch_logs__get_jobs" {
					t.Fatalf("RunFile = %+v, %v", res, err)
				}
				if !slices.Equal(res.Decision.AllowedTools, []string{"get_jobs"}) {
					t.Fatalf("allowed %v", res.Decision.AllowedTools)
				}
			})
		})
	}
	t.Run("python-async", func(t *testing.T) {
		d := &replaytest.Recorder{}
		code := "a, b = await asyncio.gather(tools.get_jobs(task_id=task_id), tools.fetch_logs(task_id=task_id))\nreturn [a, b]"
		res, err := replay.RunFile(ctx, replay.RunFileRequest{Code: code, Dialect: "python-async", Catalogue: cat, Arguments: args, Runner: sandbox.NewInProcess(), Dispatcher: d})
		if err != nil || res.Status != replay.StatusSucceeded || len(d.Tools()) != 2 {
			t.Fatalf("RunFile = %+v, %v", res, err)
		}
	})
	t.Run("rejections", func(t *testing.T) {
		in := sandbox.NewInProcess()
		for _, c := range []struct {
			req  replay.RunFileRequest
			code fault.Code
		}{
			{replay.RunFileRequest{Code: replaytest.ReadOnlyCode, Catalogue: cat}, fault.CodeInvalid},
			{replay.RunFileRequest{Code: replaytest.ReadOnlyCode, Catalogue: cat, Runner: in, Phase: "x", Arguments: args}, fault.CodeInvalid},
			{replay.RunFileRequest{Code: replaytest.ReadOnlyCode, Catalogue: cat, Runner: in, Dialect: "python3", Arguments: args}, fault.CodeInvalid},
			{replay.RunFileRequest{Code: "import os", Catalogue: cat, Runner: in}, fault.CodeInvalidCode},
			{replay.RunFileRequest{Code: "return 1", Catalogue: cat, Runner: in}, fault.CodeInvalidCode},
			{replay.RunFileRequest{Code: replaytest.ReadOnlyCode, Catalogue: cat, Runner: in}, fault.CodeInvalidArguments},
			{replay.RunFileRequest{Code: replaytest.ReadOnlyCode, Runner: in, Arguments: args}, fault.CodeDenied}, // no catalogue: all unknown
		} {
			if _, err := replay.RunFile(ctx, c.req); fault.ErrorCode(err) != c.code {
				t.Errorf("RunFile(%.20q) err = %v, want %s", c.req.Code, err, c.code)
			}
		}
	})
}

func TestInvokeThroughHTTPDispatcher(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req replay.UpstreamRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		seen = append(seen, req.Tool)
		switch req.Tool {
		case "get_jobs":
			io.WriteString(w, `{"result": {"jobs": [{"id": 1}]}}`)
		case "fetch_logs":
			io.WriteString(w, `{"error": {"message": "log store offline"}}`)
		}
	}))
	defer srv.Close()
	hd, err := replay.NewHTTPDispatcher(srv.URL, replay.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, pool, false)
	e.Replayer.SetDispatcher(hd)
	p := e.Capture(replaytest.ReadOnlyCode)
	res := e.mustFailWith(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}},
		sandbox.ToolFailed, "fetch_logs")
	if !strings.Contains(res.Error.Message, "log store offline") || !slices.Equal(seen, []string{"get_jobs", "fetch_logs"}) {
		t.Fatalf("error %+v, upstream saw %v", res.Error, seen)
	}
	if len(res.Calls) != 2 || !res.Calls[0].OK || res.Calls[1].OK {
		t.Fatalf("calls %+v", res.Calls)
	}
}

// TestRunFileRecordsItsResult: a run of `procgraph run` with a store keeps
// what happened to it on its decision (succeeded, or the class it failed
// under), as every run does.
func TestRunFileRecordsItsResult(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), false)
	ctx := context.Background()
	cat, err := procedures.NewCatalogue(replaytest.DefaultTools)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.RunFile(ctx, replay.RunFileRequest{Code: replaytest.ReadOnlyCode, Catalogue: cat, Arguments: map[string]any{"task_id": 3},
		Runner: sandbox.NewInProcess(), Dispatcher: &replaytest.Recorder{}, Recorder: e.Service.Recorder()})
	if err != nil || res.Status != replay.StatusSucceeded {
		t.Fatalf("RunFile = %+v, %v", res, err)
	}
	ds, err := e.Service.Decisions(ctx, audit.DecisionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.ID == res.Decision.ID {
			if d.Result != health.ResultSucceeded {
				t.Fatalf("the stored decision's result is %q, want %q", d.Result, health.ResultSucceeded)
			}
			return
		}
	}
	t.Fatalf("the run's decision %s is not stored", res.Decision.ID)
}
