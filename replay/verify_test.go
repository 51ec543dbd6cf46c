package replay_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// TestVerifyAgainstRecordings: a version replays against each of its
// recordings with no upstream call; a recording the run follows passes,
// and every way of leaving it is named: another result (changed_result),
// another tool, other arguments, a call the recording lacks or one it has
// that the run does not make (diverged, with the call), arguments the
// tool's current schema refuses (invalid_call), a recorded tool error the
// code does not survive (failed); a version without recordings is none.
func TestVerifyAgainstRecordings(t *testing.T) {
	ctx := context.Background()
	e := replaytest.New(t, sandbox.NewInProcess(), false)
	rp := replay.New(e.Service, sandbox.NewInProcess(), e.Upstream, replay.Options{RecordResponses: true, Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	p := e.Capture(replaytest.ReadOnlyCode)
	if ans, err := rp.Verify(ctx, p.Name, "", "op"); err != nil || ans.Verification.Status != "none" || len(ans.Results) != 0 {
		t.Fatalf("Verify without recordings = %+v, %v; want none", ans, err)
	}
	req := replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 42}, SessionID: "s"}
	if res, err := rp.Invoke(ctx, req); err != nil || res.Status != replay.StatusSucceeded {
		t.Fatalf("Invoke = %+v, %v", res, err)
	}
	recs, _, err := e.Service.Recordings(ctx, p.Name, "", recording.MaxRecordingsPage, 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Recordings = %+v, %v; want one", recs, err)
	}
	rec := recs[0]
	upstreamCalls := len(e.Upstream.Calls())
	verify := func(t *testing.T) replay.VerifyResult {
		t.Helper()
		ans, err := rp.Verify(ctx, p.Name, p.CodeHash, "op")
		if err != nil || len(ans.Results) != 1 || ans.Verification.Recordings != 1 {
			t.Fatalf("Verify = %+v, %v", ans, err)
		}
		if got := ans.Results[0].Outcome == replay.VerifyPassed; got != (ans.Verification.Status == "passed") || got != (ans.Verification.Passed == 1) {
			t.Fatalf("summary %+v disagrees with the result %+v", ans.Verification, ans.Results[0])
		}
		return ans.Results[0]
	}
	put := func(t *testing.T, calls []recording.RecordedCall, result any) {
		t.Helper()
		r, err := recording.NewRecording(p.Name, p.CodeHash, rec.Arguments, calls, result, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.RecordUse(ctx, procedures.UseInput{Name: p.Name, CodeHash: p.CodeHash, UsageKey: "s", Replay: true,
			At: time.Now(), Recording: r, KeepRecordings: 1}); err != nil {
			t.Fatal(err)
		}
	}
	result := map[string]any{"jobs": rec.Calls[0].Response, "logs": rec.Calls[1].Response}
	call := func(i int) *int { return &i }
	with := func(edit func(cs []recording.RecordedCall) []recording.RecordedCall) []recording.RecordedCall {
		cs := append([]recording.RecordedCall(nil), rec.Calls...)
		return edit(cs)
	}

	t.Run("as recorded", func(t *testing.T) {
		if r := verify(t); r.Outcome != replay.VerifyPassed || r.Recording != rec.ID {
			t.Fatalf("the recording as it was kept: %+v, want passed", r)
		}
		if v := e.Get(p.Name).Verification; v == nil || v.Status != "passed" || v.Recordings != 1 || v.Passed != 1 {
			t.Fatalf("the version keeps %+v, want the passed verification", v)
		}
	})
	t.Run("cut short", func(t *testing.T) {
		// A verification its caller gives up on stores nothing: the version
		// keeps the passed one.
		cut, cancel := context.WithCancel(ctx)
		cutRP := replay.New(e.Service, cancelling{sandbox.NewInProcess(), cancel}, e.Upstream,
			replay.Options{RecordResponses: true, Limits: sandbox.Limits{Timeout: 20 * time.Second}})
		if ans, err := cutRP.Verify(cut, p.Name, p.CodeHash, "op"); err == nil {
			t.Fatalf("Verify with its caller gone = %+v, want an error", ans)
		}
		if v := e.Get(p.Name).Verification; v == nil || v.Status != "passed" {
			t.Fatalf("the version keeps %+v, want the passed verification", v)
		}
	})
	for _, tc := range []struct {
		name    string
		calls   []recording.RecordedCall
		result  any
		outcome string
		call    *int
	}{
		{"another result", rec.Calls, "something else", replay.VerifyChangedResult, nil},
		{"another tool", with(func(cs []recording.RecordedCall) []recording.RecordedCall { cs[0], cs[1] = cs[1], cs[0]; return cs }), result, replay.VerifyDiverged, call(0)},
		{"other arguments", with(func(cs []recording.RecordedCall) []recording.RecordedCall {
			cs[1] = recording.RecordedCall{Tool: cs[1].Tool, Arguments: map[string]any{"task_id": 43}, Response: cs[1].Response}
			return cs
		}), result, replay.VerifyDiverged, call(1)},
		{"a call the recording lacks", with(func(cs []recording.RecordedCall) []recording.RecordedCall { return cs[:1] }), result, replay.VerifyDiverged, call(1)},
		{"a call the run does not make", with(func(cs []recording.RecordedCall) []recording.RecordedCall { return append(cs, cs[1]) }), result, replay.VerifyDiverged, call(2)},
		{"a recorded tool error", with(func(cs []recording.RecordedCall) []recording.RecordedCall {
			cs[0] = recording.RecordedCall{Tool: cs[0].Tool, Arguments: cs[0].Arguments, Error: "upstream down"}
			return cs
		}), result, replay.VerifyFailed, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			put(t, tc.calls, tc.result)
			r := verify(t)
			if r.Outcome != tc.outcome || (tc.call == nil) != (r.Call == nil) || (tc.call != nil && *r.Call != *tc.call) {
				t.Fatalf("%+v, want %s at %v", r, tc.outcome, tc.call)
			}
			if v := e.Get(p.Name).Verification; v == nil || v.Status != "failed" || v.Passed != 0 {
				t.Fatalf("the version keeps %+v, want the failed verification", v)
			}
		})
	}

	t.Run("stored code that no longer analyses", func(t *testing.T) {
		// Versions written by an older procgraph (or carried by a dump) whose
		// code today's analysis refuses, or analyses to another code hash:
		// each recording is failed, saying so, and nothing runs.
		for i, tc := range []struct{ name, code, detail string }{
			{"refused characters", p.Code + "\v\n", "the stored code does not analyse: "},
			{"another code hash", p.Code + "\n# changed after it was hashed\n", "the stored code does not analyse: the stored code analyses to another code hash"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				hash := strings.Repeat(strconv.Itoa(i+1), len(p.CodeHash))
				if _, err := e.Store.Capture(ctx, procedures.CaptureInput{Name: p.Name, Signature: p.Signature, UsageKey: "old-" + tc.name, At: time.Now(),
					Version: procedures.Version{CodeHash: hash, Code: tc.code, Dialect: p.Dialect, Status: procedures.StatusSucceeded}}); err != nil {
					t.Fatal(err)
				}
				r, err := recording.NewRecording(p.Name, hash, rec.Arguments, rec.Calls, result, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := e.Store.RecordUse(ctx, procedures.UseInput{Name: p.Name, CodeHash: hash, UsageKey: "s", Replay: true,
					At: time.Now(), Recording: r, KeepRecordings: 1}); err != nil {
					t.Fatal(err)
				}
				ans, err := rp.Verify(ctx, p.Name, hash, "op")
				if err != nil || len(ans.Results) != 1 {
					t.Fatalf("Verify = %+v, %v; want one result", ans, err)
				}
				if res := ans.Results[0]; res.Outcome != replay.VerifyFailed || !strings.HasPrefix(res.Detail, tc.detail) {
					t.Fatalf("%+v, want failed with %q", res, tc.detail)
				}
				if ans.Verification.Status != "failed" {
					t.Fatalf("summary %+v, want failed", ans.Verification)
				}
			})
		}
	})
	t.Run("arguments the current schema refuses", func(t *testing.T) {
		put(t, rec.Calls, result)
		tools := append([]procedures.Tool(nil), replaytest.DefaultTools...)
		tools[1].InputSchema = map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "string"}}}
		if _, err := e.Service.PutCatalogue(ctx, tools, "tester"); err != nil {
			t.Fatal(err)
		}
		r := verify(t)
		if r.Outcome != replay.VerifyInvalidCall || r.Call == nil || *r.Call != 1 {
			t.Fatalf("%+v, want invalid_call at call 1 (fetch_logs now takes a string)", r)
		}
	})
	if n := len(e.Upstream.Calls()); n != upstreamCalls {
		t.Fatalf("verifications reached the upstream: %d calls after the invoke's %d", n, upstreamCalls)
	}
}

// cancelling is a sandbox runner whose caller gives up as each run starts.
type cancelling struct {
	sandbox.Runner
	cancel func()
}

func (c cancelling) Run(ctx context.Context, req sandbox.Request, tools sandbox.ToolCaller) sandbox.Result {
	c.cancel()
	return c.Runner.Run(ctx, req, tools)
}

// TestBackgroundVerificationTakesASpareSlot: the verification of stale
// versions never queues ahead of a live replay: while every slot is
// held it waits outside the queue, a live request arriving meanwhile gets
// the slot first, and it runs once a slot is spare.
func TestBackgroundVerificationTakesASpareSlot(t *testing.T) {
	ctx := context.Background()
	e := replaytest.New(t, sandbox.NewInProcess(), false)
	adm := sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: 1, Queue: 4})
	rp := replay.New(e.Service, sandbox.NewInProcess(), e.Upstream, replay.Options{RecordResponses: true, Admission: adm,
		Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	p := e.Capture(replaytest.ReadOnlyCode)
	if res, err := rp.Invoke(ctx, replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic,
		Arguments: map[string]any{"task_id": 42}, SessionID: "s"}); err != nil || res.Status != replay.StatusSucceeded {
		t.Fatalf("Invoke = %+v, %v", res, err)
	}
	tools := append([]procedures.Tool(nil), replaytest.DefaultTools...)
	tools[0].OutputSchema = map[string]any{"type": "object"}
	if _, err := e.Service.PutCatalogue(ctx, tools, "tester"); err != nil {
		t.Fatal(err)
	}
	live, err := adm.Acquire(ctx, "live")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		n, err := rp.VerifyStale(ctx)
		if err != nil {
			t.Errorf("VerifyStale: %v", err)
		}
		done <- n
	}()
	time.Sleep(200 * time.Millisecond) // a few of its polls
	if s := adm.Stats(); s.Waiting != 0 {
		t.Fatalf("the background verification queued for the held slot: %+v", s)
	}
	second := make(chan func(), 1)
	go func() {
		r, err := adm.Acquire(ctx, "live2")
		if err != nil {
			t.Errorf("the second live request: %v", err)
		}
		second <- r
	}()
	for adm.Stats().Waiting != 1 {
		time.Sleep(time.Millisecond)
	}
	live()
	release := <-second // handed the slot, ahead of the background
	select {
	case n := <-done:
		t.Fatalf("the background verification ran (%d) while a live request held the only slot", n)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	if n := <-done; n != 1 {
		t.Fatalf("VerifyStale verified %d versions, want 1", n)
	}
	if v := e.Get(p.Name).Verification; v == nil || v.Status != "passed" {
		t.Fatalf("the stale version's verification: %+v, want passed", v)
	}
}

// TestVerificationLiftsDemotion: a demoted procedure stays demoted
// through a verification that fails, and one of its current version that
// passes under the current catalogue lifts it, audited as a health
// decision by procgraph (docs/design.md "Health of each version").
func TestVerificationLiftsDemotion(t *testing.T) {
	ctx := context.Background()
	e := replaytest.New(t, sandbox.NewInProcess(), false)
	rp := replay.New(e.Service, sandbox.NewInProcess(), e.Upstream, replay.Options{RecordResponses: true, Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	p := e.Capture(replaytest.ReadOnlyCode)
	req := replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 42}, SessionID: "s"}
	if res, err := rp.Invoke(ctx, req); err != nil || res.Status != replay.StatusSucceeded {
		t.Fatalf("Invoke = %+v, %v", res, err)
	}
	recs, _, err := e.Service.Recordings(ctx, p.Name, "", recording.MaxRecordingsPage, 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Recordings = %+v, %v; want one", recs, err)
	}
	rec := recs[0]
	for _, caller := range []string{"a", "b"} {
		if _, err := e.Store.RecordUse(ctx, procedures.UseInput{Name: p.Name, UsageKey: "k", At: time.Now(), DemoteAfter: 2,
			Run: &health.Run{Failure: health.FailureToolError, At: time.Now(), Caller: caller}}); err != nil {
			t.Fatal(err)
		}
	}
	if !e.Get(p.Name).Demoted {
		t.Fatal("two callers' failures did not demote")
	}
	put := func(result any) {
		t.Helper()
		r, err := recording.NewRecording(p.Name, p.CodeHash, rec.Arguments, rec.Calls, result, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.RecordUse(ctx, procedures.UseInput{Name: p.Name, CodeHash: p.CodeHash, UsageKey: "s", Replay: true,
			At: time.Now(), Recording: r, KeepRecordings: 1}); err != nil {
			t.Fatal(err)
		}
	}
	health := func() []audit.Decision {
		t.Helper()
		ds, err := e.Service.Decisions(ctx, audit.DecisionFilter{Procedure: p.Name, Kind: audit.KindHealth})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	put("something else")
	if ans, err := rp.Verify(ctx, p.Name, "", "op"); err != nil || ans.Verification.Status != "failed" {
		t.Fatalf("Verify = %+v, %v; want failed", ans, err)
	}
	if !e.Get(p.Name).Demoted || len(health()) != 0 {
		t.Fatal("a failed verification lifted the demotion")
	}
	put(map[string]any{"jobs": rec.Calls[0].Response, "logs": rec.Calls[1].Response})
	if ans, err := rp.Verify(ctx, p.Name, "", "op"); err != nil || ans.Verification.Status != "passed" {
		t.Fatalf("Verify = %+v, %v; want passed", ans, err)
	}
	if e.Get(p.Name).Demoted {
		t.Fatal("a passed verification of the current version did not lift the demotion")
	}
	if ds := health(); len(ds) != 1 || ds[0].Reason != audit.ReasonHealthRestored || ds[0].Actor != audit.ActorProcgraph {
		t.Fatalf("health decisions = %+v; want one health_restored by procgraph", ds)
	}
}
