package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// sharedTools is the tools of the shared catalogue (examples/catalogue.json)
// as a PUT /v1/tools body.
func sharedTools(tb testing.TB) map[string]any {
	tb.Helper()
	raw, err := os.ReadFile(catalogueFile(tb))
	if err != nil {
		tb.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		tb.Fatal(err)
	}
	return map[string]any{"tools": body["tools"]}
}

// TestCaptureSeesCatalogueJustPut: an instance reads its own catalogue
// writes. A capture sent the moment PUT /v1/tools answered lifts its
// literal with the catalogue just put, though the instance had read (and
// holds) the empty one before (issue 35 item 8).
func TestCaptureSeesCatalogueJustPut(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{NoCatalogue: true, Upstream: up})
	// A first capture reads the (empty) catalogue: the instance holds it.
	first := s.mustCapture(t, map[string]any{"code": "return tools.get_retry_chain(task_id=task_id)\n"}, nil)
	fp := first["procedure"].(map[string]any)
	if len(fp["unknown_tools"].([]any)) != 1 {
		t.Fatalf("under the empty catalogue get_retry_chain is not unknown: %v", fp)
	}
	automatic := map[string]any{"arguments": map[string]any{"task_id": 3}, "phase": "automatic"}
	mustError(t, s.invoke(t, fp["name"].(string), automatic), 403, "denied")
	up.mustSeeNothing(t, "an automatic invoke of a procedure of an unknown tool")
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: sharedTools(t)}), 200)
	out := s.mustCapture(t, map[string]any{"code": "return tools.get_task_jobs_summary(task_id=42)\n"}, nil)
	p := out["procedure"].(map[string]any)
	if lifted, _ := out["lifted"].([]any); len(lifted) != 1 || strings.Join(jsonStrings(p["parameters"]), ",") != "task_id" ||
		strings.Contains(p["code"].(string), "42") || len(p["unknown_tools"].([]any)) != 0 {
		t.Fatalf("the capture right after PUT /v1/tools did not see the catalogue put: %s", mustJSON(t, out))
	}
	v, _ := out["version"].(map[string]any)
	if v["code_hash"] != p["code_hash"] || v["current"] != true || v["created"] != true || strings.Join(jsonStrings(v["parameters"]), ",") != "task_id" {
		t.Fatalf("version %v, want the new current version with parameter task_id", v)
	}
	// An invoke and a turn after the PUT see it too: the tool is read-only
	// now, and the turn's capture lifts.
	if out := mustStatus(t, s.invoke(t, fp["name"].(string), automatic), 200); out["status"] != "succeeded" {
		t.Fatalf("automatic invoke after the PUT: %v", out)
	}
	turn := mustStatus(t, s.post(t, "/v1/turns", map[string]any{"code": "return tools.get_failed_job_log_summary(task_id=7)",
		"session_id": "after-put", "phase": "automatic", "capture": map[string]any{}}), 200)
	if l, _ := turn["lifted"].([]any); len(l) != 1 {
		t.Fatalf("the turn's capture after the PUT did not lift: %s", mustJSON(t, turn))
	}
}

// TestCaptureAnswersStoredVersion: a capture that stores a version that
// does not become current answers with that version (its hash, current
// false), not only the procedure's current one; the CLI prints the hash of
// the version stored (issue 35 item 8).
func TestCaptureAnswersStoredVersion(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{})
	first := s.mustCapture(t, map[string]any{"code": "return tools.get_retry_chain(task_id=task_id)\n"}, nil)
	current := first["procedure"].(map[string]any)["code_hash"].(string)
	// Same signature, another program: a second succeeded version, not current
	// (the first succeeded version stays current until promoted).
	out := s.mustCapture(t, map[string]any{"code": "r = tools.get_retry_chain(task_id=task_id)\nreturn {'chain': r}\n"}, nil)
	p := out["procedure"].(map[string]any)
	v, _ := out["version"].(map[string]any)
	if out["version_created"] != true || p["code_hash"] != current || v == nil {
		t.Fatalf("second version: %s", mustJSON(t, out))
	}
	stored, _ := v["code_hash"].(string)
	if stored == "" || stored == current || v["current"] != false || v["created"] != true || strings.Join(jsonStrings(v["parameters"]), ",") != "task_id" {
		t.Fatalf("version %v, want the version stored (not %s, not current)", v, current)
	}
	// The version it names is the one stored.
	got := mustStatus(t, s.get(t, "/v1/procedures/"+p["name"].(string)+"/versions/"+stored), 200)
	if !strings.Contains(got["code"].(string), "r = tools.get_retry_chain") || got["current"] != false {
		t.Fatalf("the version named is not the one stored: %v", got)
	}
	// The same code again: no version created, still named.
	again := s.mustCapture(t, map[string]any{"code": "r = tools.get_retry_chain(task_id=task_id)\nreturn {'chain': r}\n"}, nil)
	if v, _ := again["version"].(map[string]any); v["code_hash"] != stored || v["created"] != false || v["current"] != false {
		t.Fatalf("capture of a stored version: version %v, want %s", v, stored)
	}

	env := map[string]string{"PROCGRAPH_URL": s.URL}
	file := fileWriter(t, t.TempDir())("third.star", "x = tools.get_retry_chain(task_id=task_id)\nreturn [x]\n")
	code, stdout, stderr := runMainWith(t, env, "capture", file)
	if code != 0 {
		t.Fatalf("capture: exit %d\n%s%s", code, stdout, stderr)
	}
	hash := ""
	for _, line := range strings.Split(stdout, "\n") {
		if k, val, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "code hash" {
			hash = strings.TrimSpace(val)
		}
	}
	if hash == "" || hash == current || !strings.Contains(stdout, "current version") || !strings.Contains(stdout, current) {
		t.Fatalf("the CLI's capture did not print the stored version's hash (and the current one beside it):\n%s", stdout)
	}
	got = mustStatus(t, s.get(t, "/v1/procedures/"+p["name"].(string)+"/versions/"+hash), 200)
	if !strings.Contains(got["code"].(string), "x = tools.get_retry_chain") {
		t.Fatalf("the CLI printed %s, which is not the version it stored: %v", hash, got)
	}
}

// jsonStrings is a decoded JSON array of strings.
func jsonStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}
