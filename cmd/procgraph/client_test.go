package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mustRunJSON runs a client command through Main, requires exit 0 and
// decodes its --json output.
func mustRunJSON(tb testing.TB, v any, args ...string) {
	tb.Helper()
	code, out, errOut := runMain(tb, args...)
	if code != 0 {
		tb.Fatalf("procgraph %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		tb.Fatalf("procgraph %s: output is not JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestClientCommands runs every client command through Main against a live
// server with tokens, checking the --json output and the errors.
func TestClientCommands(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	root := mustCreateToken(t, tokens, "root", "read,capture,invoke,grant,admin")
	reader := mustCreateToken(t, tokens, "reader", "read")
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up, TokensFile: tokens})
	t.Setenv("PROCGRAPH_URL", s.URL+"/")
	t.Setenv("PROCGRAPH_TOKEN", root)
	write := fileWriter(t, dir)
	v1 := write("v1.star", readOnlyCode)
	v2 := write("v2.star", readOnlyCode+"\n\"v2\"")
	py := write("async.py", "a = await tools.get_task_jobs_summary(task_id=task_id)\nb, c = await asyncio.gather(tools.get_retry_chain(task_id=task_id), tools.fetch_brokerage_context(task_id=task_id))\nreturn [a, b, c]")
	kill := write("kill.star", killCode)

	var cap struct {
		Procedure map[string]any `json:"procedure"`
		Created   bool           `json:"created"`
		Counted   bool           `json:"counted"`
	}
	mustRunJSON(t, &cap, "capture", v1, "--cause", "cli cause", "--session", "cli-1", "--summary", "from the CLI", "--json")
	if !cap.Created || !cap.Counted || cap.Procedure["name"] != readOnlyName || cap.Procedure["summary"] != "from the CLI" {
		t.Fatalf("capture: %+v", cap)
	}
	mustRunJSON(t, &cap, "capture", "--json", v2, "--session", "cli-2")
	if cap.Created || !cap.Counted || num(cap.Procedure["frequency"]) != 2 {
		t.Fatalf("capture v2: %+v", cap)
	}
	mustRunJSON(t, &cap, "capture", py, "--json")
	if cap.Procedure["dialect"] != "python-async" || len(cap.Procedure["signature"].([]any)) != 3 {
		t.Fatalf("capture .py: %+v", cap.Procedure)
	}
	mustRunJSON(t, &cap, "capture", kill, "--json")

	var list struct {
		Procedures []map[string]any `json:"procedures"`
		Total      int              `json:"total"`
	}
	mustRunJSON(t, &list, "procedures", "list", "--json")
	if list.Total != 3 || len(list.Procedures) != 3 || list.Procedures[0]["name"] != readOnlyName {
		t.Fatalf("procedures list: %+v", list)
	}
	mustRunJSON(t, &list, "procedures", "list", "--read-only", "false", "--json")
	if list.Total != 1 || list.Procedures[0]["name"] != killName {
		t.Fatalf("procedures list --read-only false: %+v", list)
	}
	mustRunJSON(t, &list, "procedures", "list", "--cause", "cli cause", "--tool", "get_retry_chain", "--limit", "1", "--json")
	if list.Total != 1 || len(list.Procedures) != 1 {
		t.Fatalf("procedures list --cause --tool: %+v", list)
	}
	var show map[string]any
	mustRunJSON(t, &show, "procedures", "show", readOnlyName, "--json")
	if show["name"] != readOnlyName || show["code"] != readOnlyCode {
		t.Fatalf("procedures show: %v", show)
	}
	var versions struct {
		Versions []struct {
			CodeHash string `json:"code_hash"`
			Current  bool   `json:"current"`
		} `json:"versions"`
	}
	mustRunJSON(t, &versions, "versions", readOnlyName, "--json")
	if len(versions.Versions) != 2 {
		t.Fatalf("versions: %+v", versions)
	}
	other := versions.Versions[0].CodeHash
	if versions.Versions[0].Current {
		other = versions.Versions[1].CodeHash
	}
	var review map[string]any
	mustRunJSON(t, &review, "versions", readOnlyName, other, "--json")
	if review["code_hash"] != other || review["current"] != false || review["code"] == "" {
		t.Fatalf("versions NAME HASH: %v", review)
	}
	var dec struct {
		Procedure map[string]any `json:"procedure"`
		Decision  map[string]any `json:"decision"`
	}
	mustRunJSON(t, &dec, "autorun", "grant", readOnlyName, "--reason", "safe", "--json")
	if dec.Decision["kind"] != "grant" || dec.Decision["actor"] != "root" || dec.Procedure["auto_run"].(map[string]any)["active"] != true {
		t.Fatalf("autorun grant: %+v", dec)
	}
	mustRunJSON(t, &dec, "promote", readOnlyName, other, "--reason", "newer", "--json")
	if dec.Decision["kind"] != "promote" || dec.Procedure["code_hash"] != other {
		t.Fatalf("promote: %+v", dec)
	}
	mustRunJSON(t, &dec, "autorun", "revoke", readOnlyName, "--reason", "done", "--json")
	if dec.Decision["kind"] != "revoke" || dec.Procedure["auto_run"].(map[string]any)["enabled"] != false {
		t.Fatalf("autorun revoke: %+v", dec)
	}
	var inv map[string]any
	mustRunJSON(t, &inv, "invoke", readOnlyName, "--phase", "automatic", "--arg", "task_id=42", "--session", "cli-inv", "--json")
	if inv["status"] != "succeeded" || inv["decision"].(map[string]any)["reason"] != "read_only" {
		t.Fatalf("invoke: %v", inv)
	}
	if got := up.tools(); !slices.Equal(got[len(got)-2:], []string{"get_task_jobs_summary", "get_retry_chain"}) {
		t.Fatalf("upstream saw %v", got)
	}
	var cat struct {
		Tools    []map[string]any `json:"tools"`
		Revision string           `json:"revision"`
	}
	mustRunJSON(t, &cat, "tools", "get", "--json")
	if len(cat.Tools) != 14 || !strings.HasPrefix(cat.Revision, "sha256:") {
		t.Fatalf("tools get: %+v", cat)
	}
	catFile := write("cat.json", `{"tools": [{"name": "get_task_jobs_summary", "read_only": true}, {"name": "get_retry_chain", "read_only": true}]}`)
	var put struct {
		Tools    []map[string]any `json:"tools"`
		Revision string           `json:"revision"`
	}
	mustRunJSON(t, &put, "tools", "put", catFile, "--json")
	if len(put.Tools) != 2 || put.Revision == cat.Revision {
		t.Fatalf("tools put: %+v", put)
	}
	var ds struct {
		Decisions []map[string]any `json:"decisions"`
	}
	mustRunJSON(t, &ds, "decisions", "--json")
	kinds := []string{}
	for _, d := range ds.Decisions {
		kinds = append(kinds, d["kind"].(string))
	}
	// The catalogue records: the one `tools put` made and the one serve
	// made from --tools at start; before it, the first start's two tokens.
	if !slices.Equal(kinds, []string{"catalogue", "invoke", "revoke", "promote", "grant", "catalogue", "token", "token"}) {
		t.Fatalf("decisions: %v", kinds)
	}
	mustRunJSON(t, &ds, "decisions", "--kind", "grant", "--procedure", readOnlyName, "--json")
	if len(ds.Decisions) != 1 {
		t.Fatalf("decisions --kind grant: %v", ds)
	}

	t.Run("tables without --json", func(t *testing.T) {
		for _, args := range [][]string{{"procedures", "list"}, {"procedures", "show", readOnlyName}, {"versions", readOnlyName}, {"tools", "get"}, {"decisions"}} {
			code, out, errOut := runMain(t, args...)
			if code != 0 || out == "" || strings.HasPrefix(out, "{") {
				t.Fatalf("%v: exit %d, %q, %s", args, code, out, errOut)
			}
		}
	})
	errCases := []struct {
		name  string
		args  []string
		token string
		code  int
		msg   []string
	}{
		{"unknown procedure", []string{"procedures", "show", "proc__nope"}, "", 1, []string{"not_found", "404"}},
		// kill_job left the catalogue with the tools put above: refused up front.
		{"denied invoke", []string{"invoke", killName, "--phase", "automatic", "--arg", "task_id=1"}, "", 1, []string{"denied", "403", "unknown_tool", "kill_job"}},
		{"bad arguments", []string{"invoke", readOnlyName, "--phase", "automatic"}, "", 1, []string{"invalid_arguments", "422"}},
		{"grant conflict", []string{"autorun", "grant", killName, "--reason", "x"}, "", 1, []string{"conflict", "409", "not_read_only"}},
		{"invalid code", []string{"capture", write("bad.star", "x = 1\nclass A:\n    pass\n")}, "", 1, []string{"invalid_code", "line 2", "feature class"}},
		{"forbidden", []string{"tools", "put", catFile}, reader, 1, []string{"forbidden", "403", "admin"}},
		{"wrong token", []string{"procedures", "list"}, "pgt_wrong", 1, []string{"unauthorized", "401"}},
		{"missing file", []string{"capture", filepath.Join(dir, "none.star")}, "", 1, []string{"none.star"}},
		{"tools put not JSON", []string{"tools", "put", write("notjson.json", "{")}, "", 1, []string{"not JSON"}},
		{"usage: procedures", []string{"procedures"}, "", 2, []string{"usage"}},
		{"usage: invoke without phase", []string{"invoke", readOnlyName}, "", 2, []string{"usage"}},
		{"usage: bad --arg", []string{"invoke", readOnlyName, "--phase", "automatic", "--arg", "novalue"}, "", 2, []string{"k=v"}},
		{"usage: promote", []string{"promote", readOnlyName}, "", 2, []string{"usage"}},
		{"usage: autorun", []string{"autorun", "maybe", readOnlyName}, "", 2, []string{"usage"}},
		{"usage: unknown flag", []string{"decisions", "--colour"}, "", 2, []string{"colour"}},
		{"unknown command", []string{"frobnicate"}, "", 2, []string{"unknown command"}},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.token != "" {
				t.Setenv("PROCGRAPH_TOKEN", tc.token)
			}
			code, _, errOut := runMain(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			for _, m := range tc.msg {
				if !strings.Contains(errOut, m) {
					t.Fatalf("stderr lacks %q: %s", m, errOut)
				}
			}
		})
	}
	t.Run("server unreachable", func(t *testing.T) {
		t.Setenv("PROCGRAPH_URL", "http://127.0.0.1:1")
		code, _, errOut := runMain(t, "procedures", "list")
		if code != 1 || !strings.Contains(errOut, "cannot reach procgraph at http://127.0.0.1:1") {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	})
	t.Run("failed replay exits 1 with its JSON", func(t *testing.T) {
		up.fail["get_retry_chain"] = "down"
		defer delete(up.fail, "get_retry_chain")
		code, out, _ := runMain(t, "invoke", readOnlyName, "--phase", "automatic", "--arg", "task_id=1", "--json")
		var res map[string]any
		if code != 1 || json.Unmarshal([]byte(out), &res) != nil || res["status"] != "failed" {
			t.Fatalf("exit %d: %s", code, out)
		}
	})
}

// TestOffline checks `signature` and `run` without a server.
func TestOffline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := fileWriter(t, dir)
	cat := catalogueFile(t)
	good := write("good.star", killCode)
	t.Run("signature", func(t *testing.T) {
		var out map[string]any
		mustRunJSON(t, &out, "signature", "--tools", cat, good, "--json")
		if out["name"] != killName || out["read_only"] != false || !slices.Equal(toStrings(out["state_changing_tools"]), []string{"kill_job"}) ||
			!slices.Equal(toStrings(out["parameters"]), []string{"task_id"}) || len(out["code_hash"].(string)) != 64 {
			t.Fatalf("signature: %v", out)
		}
		mustRunJSON(t, &out, "signature", "--json", good)
		if !slices.Equal(toStrings(out["unknown_tools"]), []string{"get_task_jobs_summary", "kill_job"}) {
			t.Fatalf("signature without a catalogue: %v", out)
		}
		// A long signature has Bamboo's truncated name only when every tool
		// is listed (docs/design.md "Procedure names").
		long := write("long.star", "a = tools.compare_failed_vs_successful_job_logs(task_id=1)\nreturn [a, tools.find_similar_successful_tasks(task_id=1), tools.get_failed_job_log_summary(task_id=1)]\n")
		mustRunJSON(t, &out, "signature", "--json", "--tools", cat, long)
		if out["name"] != "proc__compare_failed_vs_successful_job_logs__find_s_4fb9185c" {
			t.Fatalf("long signature with the catalogue: name %v", out["name"])
		}
		mustRunJSON(t, &out, "signature", "--json", long)
		if name, _ := out["name"].(string); len(name) < 23 || !strings.HasSuffix(name[:len(name)-20], "___") {
			t.Fatalf("long signature without a catalogue: name %q, want a hashed one", name)
		}
	})
	sigErrors := []struct {
		name, file, dialect string
		want                []string
	}{
		{"class", "x = 1\nclass A:\n    pass\n", "starlark", []string{"line 2", "column 1", "feature: class"}},
		{"import", "a = tools.get_retry_chain(task_id=1)\nimport os\n", "python-async", []string{"line 2", "feature: import"}},
		{"f-string", "a = tools.get_retry_chain(task_id=1)\nreturn f\"{a}\"\n", "python-async", []string{"line 2", "feature"}},
		{"syntax", "a = (\n", "starlark", []string{"line", "feature"}},
		{"empty signature", "return 1\n", "starlark", []string{"feature: empty_signature"}},
	}
	for _, tc := range sigErrors {
		t.Run("signature "+tc.name, func(t *testing.T) {
			code, out, errOut := runMain(t, "signature", "--dialect", tc.dialect, write(tc.name+".star", tc.file))
			if code == 0 || out != "" {
				t.Fatalf("exit %d, stdout %q", code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Fatalf("stderr lacks %q: %s", w, errOut)
				}
			}
		})
	}
	up := mustUpstream(t)
	compare := "../../examples/procedures/compare_logs.star"
	t.Run("run read-only", func(t *testing.T) {
		up.reset()
		var out map[string]any
		mustRunJSON(t, &out, "run", "--json", "--tools", cat, "--upstream-http", up.URL, "--phase", "automatic", "--arg", "task_id=42", compare)
		if out["status"] != "succeeded" {
			t.Fatalf("run: %v", out)
		}
		if got := up.tools(); !slices.Equal(got, []string{"find_similar_successful_tasks", "get_failed_job_log_summary", "compare_failed_vs_successful_job_logs"}) {
			t.Fatalf("upstream saw %v", got)
		}
		if args := up.calls[0].Args; args["task_id"] != float64(42) {
			t.Fatalf("arguments %v", args)
		}
	})
	t.Run("run state-changing in the automatic phase", func(t *testing.T) {
		up.reset()
		code, _, errOut := runMain(t, "run", "--tools", cat, "--upstream-http", up.URL, "--phase", "automatic", "--arg", "task_id=1", good)
		if code != 1 || !strings.Contains(errOut, "state_changing_in_automatic_phase") {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		up.mustSeeNothing(t, "a denied run")
	})
	t.Run("run escape is refused", func(t *testing.T) {
		up.reset()
		esc := write("esc.star", "s = tools.get_task_jobs_summary(task_id=1)\nreturn getattr(tools, \"kill_\" + \"job\")(panda_id=1)")
		code, out, _ := runMain(t, "run", "--tools", cat, "--upstream-http", up.URL, "--phase", "automatic", esc, "--json")
		var res map[string]any
		if code != 1 || json.Unmarshal([]byte(out), &res) != nil || res["error"].(map[string]any)["code"] != "tool_refused" {
			t.Fatalf("exit %d: %s", code, out)
		}
		if slices.Contains(up.tools(), "kill_job") {
			t.Fatal("kill_job reached the upstream")
		}
	})
	t.Run("run usage", func(t *testing.T) {
		if code, _, _ := runMain(t, "run", "--tools", cat, good); code != 2 {
			t.Fatalf("exit %d, want 2", code)
		}
	})
}

// TestRunAndSignatureName: `run` records a file under the name
// `signature` prints for it, with the same catalogue — a long signature of
// catalogue tools included (Bamboo's truncated name, not the hashed one):
// both prepare the block through one pipeline (replay.FileBlock).
func TestRunAndSignatureName(t *testing.T) {
	write := fileWriter(t, t.TempDir())
	cat := catalogueFile(t)
	up := mustUpstream(t)
	for _, tc := range []struct{ name, code string }{
		{"short", "return tools.get_task_jobs_summary(task_id=1)\n"},
		{"long", "a = tools.compare_failed_vs_successful_job_logs(failed_task_id=1)\nreturn [a, tools.find_similar_successful_tasks(task_id=1), tools.get_failed_job_log_summary(task_id=1)]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := write(tc.name+".star", tc.code)
			var sig, run map[string]any
			mustRunJSON(t, &sig, "signature", "--json", "--tools", cat, file)
			mustRunJSON(t, &run, "run", "--json", "--tools", cat, "--upstream-http", up.URL, "--phase", "automatic", file)
			d, _ := run["decision"].(map[string]any)
			if d == nil || d["procedure"] != sig["name"] {
				t.Fatalf("run's decision names %v, signature prints %v", d["procedure"], sig["name"])
			}
		})
	}
}

// TestCLIDotSegmentNames: a name that is a dot segment ("..", ".") reaches
// the server as itself: the CLI escapes it (%2E%2E), which a server or
// proxy would otherwise remove from the path.
func TestCLIDotSegmentNames(t *testing.T) {
	s := mustServe(t, serverOpts{})
	t.Setenv("PROCGRAPH_URL", s.URL)
	for _, cause := range []string{"..", ".", "a/.."} {
		s.mustCapture(t, map[string]any{"code": readOnlyCode, "cause": map[string]any{"name": cause}}, nil)
		code, out, errOut := runMain(t, "causes", cause, "--json")
		if code != 0 || !strings.Contains(out, `"name": "`+cause+`"`) {
			t.Errorf("causes %q: exit %d\n%s%s", cause, code, out, errOut)
		}
	}
}
