package neo4j

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// serviceOver serves the HTTP API over s, with a dispatcher that records
// every call that reaches it.
func serviceOver(t *testing.T, s procedures.Store, seen *[]string) *httptest.Server {
	t.Helper()
	svc := procedures.NewService(s, procedures.Options{})
	disp := replay.DispatcherFunc(func(ctx context.Context, tool string, args map[string]any) (any, error) {
		*seen = append(*seen, tool)
		return map[string]any{"tool": tool, "task": args["task_id"]}, nil
	})
	rp := replay.New(svc, sandbox.NewInProcess(), disp, replay.Options{})
	srv, err := api.New(api.Config{Service: svc, Replayer: rp})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs
}

func call(t *testing.T, hs *httptest.Server, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	r, _ := http.NewRequest(method, hs.URL+path, rd)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: not JSON: %s", method, path, data)
	}
	return resp.StatusCode, out
}

// TestServiceOverNeo4j runs the HTTP API over the Neo4j store: capture,
// find, the planner view, invoke (allowed and denied, the denied one
// reaching no tool), grant, promote, a catalogue change, and a new store on
// the same database that still has everything.
func TestServiceOverNeo4j(t *testing.T) {
	var seen []string
	hs := serviceOver(t, freshStore(t), &seen)
	want := func(code int) func(int, map[string]any) map[string]any {
		return func(status int, out map[string]any) map[string]any {
			t.Helper()
			if status != code {
				t.Fatalf("status %d, want %d: %v", status, code, out)
			}
			return out
		}
	}
	want(200)(call(t, hs, "PUT", "/v1/tools", map[string]any{"tools": []any{
		map[string]any{"name": "get_jobs", "read_only": true, "input_schema": map[string]any{"type": "object"}},
		map[string]any{"name": "fetch_logs", "read_only": true},
		map[string]any{"name": "kill_job"},
	}}))
	ro := "a = tools.get_jobs(task_id=task_id)\nreturn [a, tools.fetch_logs(task_id=task_id)]\n"
	out := want(201)(call(t, hs, "POST", "/v1/procedures", map[string]any{"code": ro, "session_id": "s1",
		"cause":         map[string]any{"name": "stuck", "description": "a stuck task"},
		"params_schema": map[string]any{"properties": map[string]any{"task_id": map[string]any{"type": "integer", "minimum": 1}}}}))
	name := out["procedure"].(map[string]any)["name"].(string)
	want(200)(call(t, hs, "POST", "/v1/procedures", map[string]any{"code": ro, "session_id": "s2"}))
	kill := want(201)(call(t, hs, "POST", "/v1/procedures", map[string]any{"code": "a = tools.get_jobs(task_id=task_id)\ntools.kill_job(panda_id=a)\n"}))
	killName := kill["procedure"].(map[string]any)["name"].(string)

	list := want(200)(call(t, hs, "GET", "/v1/procedures?exposed=true", nil))
	if list["total"] != float64(1) || list["procedures"].([]any)[0].(map[string]any)["frequency"] != float64(2) {
		t.Fatalf("exposed: %v", list)
	}
	tools := want(200)(call(t, hs, "GET", "/v1/procedures/tools?cause=stuck", nil))["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["name"] != name {
		t.Fatalf("planner view: %v", tools)
	}

	res := want(200)(call(t, hs, "POST", "/v1/procedures/"+name+"/invoke", map[string]any{"phase": "automatic", "arguments": map[string]any{"task_id": 3}}))
	if res["status"] != "succeeded" || len(seen) != 2 {
		t.Fatalf("invoke: %v, tools seen %v", res, seen)
	}
	want(422)(call(t, hs, "POST", "/v1/procedures/"+name+"/invoke", map[string]any{"phase": "automatic", "arguments": map[string]any{"task_id": 0}}))
	seen = nil
	denied := want(403)(call(t, hs, "POST", "/v1/procedures/"+killName+"/invoke", map[string]any{"phase": "automatic", "arguments": map[string]any{"task_id": 3}}))
	if len(seen) != 0 || denied["error"].(map[string]any)["details"].(map[string]any)["decision"].(map[string]any)["reason"] != audit.ReasonStateChangingAuto {
		t.Fatalf("denied: %v, tools seen %v", denied, seen)
	}
	want(409)(call(t, hs, "PUT", "/v1/procedures/"+killName+"/auto-run", map[string]any{"enabled": true}))
	granted := want(200)(call(t, hs, "PUT", "/v1/procedures/"+name+"/auto-run", map[string]any{"enabled": true, "reason": "ok"}))
	if granted["procedure"].(map[string]any)["auto_run"].(map[string]any)["active"] != true {
		t.Fatalf("grant: %v", granted)
	}
	// A new version, promoted: the grant is bound to the old code.
	want(200)(call(t, hs, "POST", "/v1/procedures", map[string]any{"code": ro + "\"v2\"\n", "session_id": "s3"}))
	versions := want(200)(call(t, hs, "GET", "/v1/procedures/"+name+"/versions", nil))["versions"].([]any)
	v2 := versions[1].(map[string]any)["code_hash"].(string)
	promoted := want(200)(call(t, hs, "POST", "/v1/procedures/"+name+"/versions/"+v2+"/promote", map[string]any{"reason": "newer"}))
	if promoted["procedure"].(map[string]any)["auto_run"].(map[string]any)["active"] != false {
		t.Fatalf("after promote the grant must be inactive: %v", promoted)
	}
	// The catalogue changes: fetch_logs now changes state; nothing is exposed.
	want(200)(call(t, hs, "PUT", "/v1/tools", map[string]any{"tools": []any{
		map[string]any{"name": "get_jobs", "read_only": true}, map[string]any{"name": "fetch_logs"}, map[string]any{"name": "kill_job"},
	}}))
	if got := want(200)(call(t, hs, "GET", "/v1/procedures?exposed=true", nil))["total"]; got != float64(0) {
		t.Fatalf("exposed after the catalogue change: %v", got)
	}
	decisions := want(200)(call(t, hs, "GET", "/v1/decisions?limit=2", nil))
	if decisions["next"] == nil {
		t.Fatalf("a full page of decisions must give next: %v", decisions)
	}
	older := want(200)(call(t, hs, "GET", "/v1/decisions?limit=100&before="+decisions["next"].(string), nil))["decisions"].([]any)
	// Newest first: catalogue, promote | grant, grant (denied), invoke
	// (denied), invoke, catalogue.
	if len(older) != 5 || older[0].(map[string]any)["kind"] != "grant" || older[3].(map[string]any)["kind"] != "invoke" ||
		older[4].(map[string]any)["kind"] != "catalogue" {
		t.Fatalf("older decisions: %v", older)
	}

	// Another instance on the same database sees everything.
	hs2 := serviceOver(t, openStore(t), &seen)
	got := want(200)(call(t, hs2, "GET", "/v1/procedures/"+name, nil))
	// Frequency: sessions s1, s2, s3 and the invoke's fresh usage key.
	if got["frequency"] != float64(4) || got["use_count"] != float64(1) || got["code_hash"] != v2 {
		t.Fatalf("from another instance: %v", got)
	}
	// v2 was captured without a params_schema: the generated one.
	if req := got["input_schema"].(map[string]any)["required"].([]any); len(req) != 1 || req[0] != "task_id" {
		t.Fatalf("input schema: %v", got["input_schema"])
	}
}
