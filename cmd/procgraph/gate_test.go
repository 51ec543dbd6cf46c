package main

import (
	"slices"
	"testing"
)

// TestGateEndToEnd drives the sandbox gate through the real Main, a real
// worker process and the recording upstream, where the gate is all that
// stands between a call and the upstream.
func TestGateEndToEnd(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, AllowMutating: true})

	// A read-only procedure (its static signature is one read-only tool)
	// that reaches kill_job — known to the catalogue, state-changing —
	// through a computed name. The decision allows the run; only the
	// allow-set check at call time keeps kill_job from the upstream, in
	// every phase that allows it, even with a durable grant.
	dynamic := mustCaptureName(t, s, "s = tools.get_task_jobs_summary(task_id=task_id)\n"+
		"getattr(tools, \"kill_\" + \"job\")(panda_id=task_id)\nreturn s", "gate")
	p := mustStatus(t, s.get(t, "/v1/procedures/"+dynamic), 200)
	if p["read_only"] != true || p["opaque"] != true {
		t.Fatalf("%s: read_only %v, opaque %v; want a read-only opaque procedure", dynamic, p["read_only"], p["opaque"])
	}
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + dynamic + "/auto-run", Body: map[string]any{"enabled": true}}), 200)
	for _, phase := range []map[string]any{
		{"phase": "automatic"},
		{"phase": "interactive", "reviewed_by": "op"},
	} {
		up.reset()
		body := map[string]any{"arguments": map[string]any{"task_id": 7}}
		for k, v := range phase {
			body[k] = v
		}
		out := mustStatus(t, s.invoke(t, dynamic, body), 200)
		d, _ := out["decision"].(map[string]any)
		if d["outcome"] != "allowed" || !slices.Equal(toStrings(d["allowed_tools"]), []string{"get_task_jobs_summary"}) {
			t.Fatalf("%v: decision %v; want allowed with only get_task_jobs_summary", phase, d)
		}
		e, _ := out["error"].(map[string]any)
		if out["status"] != "failed" || e["code"] != "tool_refused" || e["tool"] != "kill_job" {
			t.Fatalf("%v: replay %v; want failed tool_refused on kill_job", phase, out)
		}
		if got := up.tools(); !slices.Equal(got, []string{"get_task_jobs_summary"}) {
			t.Fatalf("%v: the upstream saw %v, want only get_task_jobs_summary", phase, got)
		}
	}

	// The call limit (100 by default) is the gate's alone: the 101st call
	// of an allowed tool never reaches the upstream.
	loop := mustCaptureName(t, s, "for i in range(150):\n    tools.get_retry_chain(task_id=task_id + i)\nreturn task_id", "gate")
	up.reset()
	out := mustStatus(t, s.invoke(t, loop, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}), 200)
	if e, _ := out["error"].(map[string]any); out["status"] != "failed" || e["code"] != "call_limit" {
		t.Fatalf("replay %v; want failed call_limit", out)
	}
	if n := len(up.tools()); n != 100 {
		t.Fatalf("the upstream saw %d calls, want the limit, 100", n)
	}
	if p := mustStatus(t, s.get(t, "/v1/procedures/"+dynamic), 200); num(p["use_count"]) != 0 {
		t.Fatalf("refused runs were counted: use_count %v", p["use_count"])
	}
}
