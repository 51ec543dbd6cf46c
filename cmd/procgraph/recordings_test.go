package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordingsKeptAndPurged: with --record-responses on (the default),
// each successful replay keeps a recording of its tool calls and answers,
// one per argument set (a failed run none); the grant scope reads them, never the audit log or
// the server's log; a purge deletes them, audited; --record-responses false
// at start deletes what was kept and records nothing more.
func TestRecordingsKeptAndPurged(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	data := filepath.Join(t.TempDir(), "p.db")
	s := mustServe(t, serverOpts{Upstream: up, Data: data})
	name := mustCaptureName(t, s, readOnlyCode, "r1")
	for _, task := range []int{1, 1, 2} {
		mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": task}, "phase": "automatic"}), 200)
	}
	// A failed run keeps no recording.
	up.mu.Lock()
	up.fail["get_retry_chain"] = "down"
	up.mu.Unlock()
	mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 9}, "phase": "automatic"}), 200)
	up.mu.Lock()
	delete(up.fail, "get_retry_chain")
	up.mu.Unlock()
	var got struct {
		Recordings []struct {
			ID         string
			CodeHash   string `json:"code_hash"`
			Arguments  map[string]any
			Calls      []map[string]any
			ResultHash string `json:"result_hash"`
		}
	}
	r := s.get(t, "/v1/procedures/"+name+"/recordings")
	mustStatus(t, r, 200)
	r.Into(t, &got)
	if len(got.Recordings) != 2 {
		t.Fatalf("%d recordings, want 2 (one per argument set)", len(got.Recordings))
	}
	var one struct{ Recordings []map[string]any }
	r1 := s.get(t, "/v1/procedures/"+name+"/recordings?version="+got.Recordings[0].CodeHash)
	mustStatus(t, r1, 200)
	r1.Into(t, &one)
	if len(one.Recordings) != 2 {
		t.Fatalf("?version= of the one version: %d recordings, want 2", len(one.Recordings))
	}
	var page struct {
		Recordings []struct{ ID string }
		Total      int
	}
	s.get(t, "/v1/procedures/"+name+"/recordings?limit=1&offset=1").Into(t, &page)
	if page.Total != 2 || len(page.Recordings) != 1 || page.Recordings[0].ID != got.Recordings[1].ID {
		t.Fatalf("?limit=1&offset=1 = %+v; want the second of 2", page)
	}
	for _, q := range []string{"limit=0", "limit=101", "offset=-1", "limit=x"} {
		mustStatus(t, s.get(t, "/v1/procedures/"+name+"/recordings?"+q), 400)
	}
	r1 = s.get(t, "/v1/procedures/"+name+"/recordings?version=nope")
	mustStatus(t, r1, 200)
	r1.Into(t, &one)
	if len(one.Recordings) != 0 {
		t.Fatalf("?version= of no version: %d recordings", len(one.Recordings))
	}
	newest := got.Recordings[0]
	if newest.Arguments["task_id"] != 2.0 || len(newest.Calls) != 2 || newest.ResultHash == "" {
		t.Fatalf("the newest recording = %+v; want task 2's, with its two calls", newest)
	}
	resp, _ := newest.Calls[0]["response"].(map[string]any)
	if newest.Calls[0]["tool"] != "get_task_jobs_summary" || resp["tasks"] == nil {
		t.Fatalf("the first recorded call = %v; want get_task_jobs_summary with the upstream's answer", newest.Calls[0])
	}
	if text := metricValue(string(s.get(t, "/metrics").Body), `procgraph_recordings_total{outcome="kept"}`); text != 3 {
		t.Errorf("procgraph_recordings_total{outcome=\"kept\"} = %v, want 3", text)
	}
	decisions := string(s.get(t, "/v1/decisions").Body)
	// The upstream answers {"tool", "args", "tasks": [{"task_id": 101}]}.
	if strings.Contains(decisions, "tasks") || strings.Contains(decisions, `"task_id":101`) {
		t.Errorf("the audit log carries tool output:\n%s", decisions)
	}
	if logs := s.logs.String(); strings.Contains(logs, "tasks") || strings.Contains(logs, `"task_id":101`) {
		t.Errorf("the log carries tool output:\n%s", s.logs.String())
	}

	ans := mustStatus(t, s.send(t, req{Method: "DELETE", Path: "/v1/procedures/" + name + "/recordings", Body: map[string]any{"reason": "rotating the upstream"}}), 200)
	d, _ := ans["decision"].(map[string]any)
	if ans["deleted"] != 2.0 || d["kind"] != "recordings" || d["reason"] != "recordings_purged" || d["note"] != "rotating the upstream" {
		t.Fatalf("the purge answered %v", ans)
	}
	r = s.get(t, "/v1/procedures/"+name+"/recordings")
	mustStatus(t, r, 200)
	r.Into(t, &got)
	if len(got.Recordings) != 0 {
		t.Fatalf("after the purge: %d recordings", len(got.Recordings))
	}
	mustStatus(t, s.get(t, "/v1/procedures/proc__nope/recordings"), 404)

	// Off at start: what was kept is deleted, and nothing more is kept.
	mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 3}, "phase": "automatic"}), 200)
	s.Stop(t)
	s = mustServe(t, serverOpts{Upstream: up, Data: data, Extra: []string{"--record-responses", "false"}})
	mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": 4}, "phase": "automatic"}), 200)
	r = s.get(t, "/v1/procedures/"+name+"/recordings")
	mustStatus(t, r, 200)
	r.Into(t, &got)
	if len(got.Recordings) != 0 {
		t.Fatalf("with --record-responses false: %d recordings", len(got.Recordings))
	}
}
