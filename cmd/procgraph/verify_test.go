package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestVerifyCommand: procgraph verify replays a version against its
// recordings on the server, calling no tool: it passes (exit 0) while the
// tools are as recorded, fails (exit 1, naming the call) once the
// catalogue's schema of a tool it calls refuses the recorded arguments,
// and a procedure that never ran is "none"; --all verifies every
// procedure.
func TestVerifyCommand(t *testing.T) {
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	t.Setenv("PROCGRAPH_URL", s.URL)
	t.Setenv("PROCGRAPH_TOKEN", "")
	name := mustCaptureName(t, s, readOnlyCode, "v1")
	mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 7}, "phase": "automatic"}), 200)
	up.reset()

	code, out, errOut := runMain(t, "verify", name)
	if code != 0 || !strings.Contains(out, "passed (1 of 1 recordings)") {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errOut)
	}
	up.mustSeeNothing(t, "a verification")
	other := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\nreturn tools.search_panda_docs(query=\"x\")", "v2")
	code, out, errOut = runMain(t, "verify", "--all", "--json")
	var all struct {
		Verifications []struct {
			Procedure    string
			Verification struct{ Status string }
		}
	}
	if err := json.Unmarshal([]byte(out), &all); code != 0 || err != nil || len(all.Verifications) != 2 {
		t.Fatalf("verify --all --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	for _, v := range all.Verifications {
		if want := map[string]string{name: "passed", other: "none"}[v.Procedure]; v.Verification.Status != want {
			t.Errorf("%s: %s, want %s", v.Procedure, v.Verification.Status, want)
		}
	}

	// The tool server changes get_retry_chain to take a string id.
	var cat struct{ Tools []map[string]any }
	s.get(t, "/v1/tools").Into(t, &cat)
	for _, tool := range cat.Tools {
		if tool["name"] == "get_retry_chain" {
			tool["input_schema"] = map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "string"}}}
		}
	}
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": cat.Tools}}), 200)
	code, out, _ = runMain(t, "verify", name)
	if code != 1 || !strings.Contains(out, "failed (0 of 1 recordings)") || !strings.Contains(out, "invalid_call at call 1") {
		t.Fatalf("verify after the tool changed: exit %d\n%s", code, out)
	}
	up.mustSeeNothing(t, "a failing verification")
	if code, _, errOut := runMain(t, "verify"); code != 2 || !strings.Contains(errOut, "--all") {
		t.Fatalf("verify without a name: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runMain(t, "verify", "proc__nope"); code != 1 || !strings.Contains(errOut, "404") {
		t.Fatalf("verify of an unknown procedure: exit %d, %s", code, errOut)
	}
}

// TestStaleVersionsVerifiedInTheBackground: after a catalogue change, the
// versions it made stale are verified against their recordings in the
// background: one that still passes is stale no more; one the change
// breaks stays stale, its failed verification kept.
func TestStaleVersionsVerifiedInTheBackground(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	name := mustCaptureName(t, s, readOnlyCode, "b1")
	mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 7}, "phase": "automatic"}), 200)
	up.reset()
	change := func(schema map[string]any, key string) {
		var cat struct{ Tools []map[string]any }
		s.get(t, "/v1/tools").Into(t, &cat)
		for _, tool := range cat.Tools {
			if tool["name"] == "get_retry_chain" {
				tool[key] = schema
			}
		}
		mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": cat.Tools}}), 200)
	}
	waitFor := func(what string, ok func(p map[string]any) bool) map[string]any {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			p := mustStatus(t, s.get(t, "/v1/procedures/"+name), 200)
			if ok(p) {
				return p
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the procedure is still %v", what, p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	status := func(p map[string]any) any {
		v, _ := p["verification"].(map[string]any)
		return v["status"]
	}
	// An output schema: drift, but the recorded calls still pass.
	change(map[string]any{"type": "object"}, "output_schema")
	p := waitFor("a change the recording survives", func(p map[string]any) bool { return status(p) != nil })
	if status(p) != "passed" || p["stale"] != false {
		t.Fatalf("after a passing background verification: verification %v, stale %v; want passed, not stale", p["verification"], p["stale"])
	}
	// An input schema the recorded arguments fail.
	change(map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "string"}}}, "input_schema")
	p = waitFor("a breaking change", func(p map[string]any) bool { return status(p) == "failed" })
	if p["stale"] != true {
		t.Fatalf("a version its change broke is not stale: %v", p)
	}
	var drift struct {
		Versions []struct {
			Procedure    string
			Verification map[string]any
		}
	}
	s.get(t, "/v1/drift").Into(t, &drift)
	if len(drift.Versions) != 1 || drift.Versions[0].Procedure != name || drift.Versions[0].Verification["status"] != "failed" {
		t.Fatalf("GET /v1/drift = %+v, want the version with its failed verification", drift)
	}
	up.mustSeeNothing(t, "background verifications")
}
