package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/decide"
)

// TestHelp: the top-level help lists every command; each command's --help
// (and help CMD) prints that command's own flags on stdout and exits 0.
func TestHelp(t *testing.T) {
	t.Parallel()
	code, top, errOut := runMain(t, "help")
	if code != 0 || errOut != "" {
		t.Fatalf("help: exit %d, %s", code, errOut)
	}
	// The flags each command lists, and flags it must not list (another
	// command's).
	own := map[string][]string{
		"serve":             {"--addr", "--store", "--upstream-http", "--tokens-file", "--allow-mutating-autorun", "--log-format"},
		"token create":      {"--name", "--scopes", "--expires", "--server", "--store", "--data", "--tokens-file", "--json"},
		"token list":        {"--server", "--store", "--data", "--json"},
		"token rotate":      {"--expires", "--server", "--store", "--data", "--json"},
		"token revoke":      {"--server", "--store", "--data", "--json"},
		"signature":         {"--dialect", "--tools", "--json"},
		"run":               {"--tools", "--upstream-http", "--phase", "--dialect", "--allow-mutating", "--arg", "--json"},
		"tools import":      {"--from-mcp", "--from-mcp-command", "--trust-annotations"},
		"procedures list":   {"--cause", "--tool", "--limit", "--offset", "--read-only", "--exposed", "--status", "--q", "--json"},
		"procedures show":   {"--json"},
		"capture":           {"--dialect", "--cause", "--session", "--summary", "--status", "--lift", "--json"},
		"lift":              {"--dry-run", "--json"},
		"versions":          {"--json"},
		"drift":             {"--limit", "--offset", "--json"},
		"accept-drift":      {"--reason", "--json"},
		"verify":            {"--version", "--all", "--json"},
		"promote":           {"--reason", "--json"},
		"autorun grant":     {"--reason", "--json"},
		"autorun revoke":    {"--reason", "--json"},
		"retire":            {"--reason", "--json"},
		"unretire":          {"--reason", "--json"},
		"undemote":          {"--reason", "--json"},
		"invoke":            {"--phase", "--arg", "--session", "--cause", "--reviewed-by", "--json"},
		"upstreams":         {"--server", "--state", "--json"},
		"tools get":         {"--json"},
		"tools put":         {"--json"},
		"decisions":         {"--procedure", "--kind", "--limit", "--before", "--json"},
		"causes":            {"--json"},
		"graph":             {"--procedure", "--cause", "--tool", "--depth", "--json"},
		"export":            {"--store", "--data", "--o", "--server", "--with-recordings"},
		"doctor":            {"--addr", "--data", "--store", "--tools", "--tokens-file", "--upstream-http", "--json"},
		"version":           {"--json"},
		"turn wait":         {"--timeout", "--no-run", "--json"},
		"turn run":          {"--json"},
		"import":            {"--store", "--data", "--batch", "--recordings-per-version"},
		"turn":              {"--session", "--phase", "--arg", "--wait", "--capture-cause", "--dialect", "--summary", "--json"},
		"approvals list":    {"--status", "--session", "--limit", "--json"},
		"approvals show":    {"--json"},
		"approvals approve": {"--choice", "--reason", "--code", "--json"},
		"approvals reject":  {"--reason", "--json"},
		"policies list":     {"--json"},
		"policies revoke":   {"--json"},
		"backup":            {"--o"},
		"restore":           {"--data"},
		"compact":           {"--data"},
		"audit prune":       {"--before", "--o", "--store", "--data"},
	}
	notOwn := map[string][]string{
		"procedures show": {"--limit", "--cause", "--offset"},
		"tools get":       {"--from-mcp"},
		"autorun revoke":  {"--limit"},
	}
	var all []string
	for _, g := range commands() {
		for _, c := range g.commands {
			all = append(all, c.name)
		}
	}
	for _, name := range all {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(top, "procgraph "+name+" ") {
				t.Errorf("the top-level help does not list %q:\n%s", name, top)
			}
			flags, ok := own[name]
			if !ok {
				t.Fatalf("no expectation for %q: add its flags to this test", name)
			}
			args := append(strings.Fields(name), "--help")
			code, out, errOut := runMain(t, args...)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: procgraph "+name) {
				t.Fatalf("%q: exit %d, stderr %q, stdout:\n%s", args, code, errOut, out)
			}
			for _, f := range flags {
				if !strings.Contains(out, "  "+f+" ") && !strings.Contains(out, "  "+f+"\n") {
					t.Errorf("%q does not list %s:\n%s", args, f, out)
				}
			}
			for _, f := range notOwn[name] {
				if strings.Contains(out, "  "+f+" ") {
					t.Errorf("%q lists another command's %s:\n%s", args, f, out)
				}
			}
			code, viaHelp, _ := runMain(t, append([]string{"help"}, strings.Fields(name)...)...)
			if code != 0 || viaHelp != out {
				t.Errorf("help %s: exit %d, output differs from --help:\n%s", name, code, viaHelp)
			}
		})
	}
	if len(own) != len(all) {
		t.Errorf("%d expectations for %d commands", len(own), len(all))
	}
	t.Run("groups", func(t *testing.T) {
		code, out, _ := runMain(t, "procedures", "--help")
		if code != 0 || !strings.Contains(out, "procedures list") || !strings.Contains(out, "procedures show") {
			t.Fatalf("procedures --help: exit %d\n%s", code, out)
		}
		code, _, errOut := runMain(t, "tools", "frob")
		if code != 2 || !strings.Contains(errOut, `unknown subcommand "frob"`) || !strings.Contains(errOut, "tools import") {
			t.Fatalf("tools frob: exit %d\n%s", code, errOut)
		}
		code, _, errOut = runMain(t)
		if code != 2 || !strings.Contains(errOut, "procgraph serve") {
			t.Fatalf("no arguments: exit %d\n%s", code, errOut)
		}
	})
}

// TestCLIForPeople checks what a person sees: the dialect chosen by file
// name, key: value and tables instead of JSON, the decisions table's id,
// code hash and note, the server's suggestion on a denial, and how to allow
// a state-changing run; and that --json is the server's answer in its
// order.
func TestCLIForPeople(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	t.Setenv("PROCGRAPH_URL", s.URL)
	cat := catalogueFile(t)
	py := write("async.py", "a = await tools.get_task_jobs_summary(task_id=task_id)\nreturn a")
	kill := write("kill.star", killCode)
	ro := write("ro.star", readOnlyCode)

	t.Run("signature picks python-async for .py", func(t *testing.T) {
		var out map[string]any
		mustRunJSON(t, &out, "signature", "--json", py)
		if out["dialect"] != "python-async" || out["name"] != "proc__get_task_jobs_summary" {
			t.Fatalf("signature %s: %v", py, out)
		}
		code, text, errOut := runMain(t, "signature", py)
		if code != 0 || !strings.Contains(text, "dialect:") || !strings.Contains(text, "python-async") || strings.HasPrefix(text, "{") {
			t.Fatalf("exit %d: %s %s", code, text, errOut)
		}
		// A kept backslash (python-async) is warned about once, at its position.
		esc := write("escape.py", "p = \"\\d+\"\na = await tools.get_task_jobs_summary(task_id=p)\nreturn a")
		code, text, errOut = runMain(t, "signature", esc)
		if code != 0 || strings.Count(text, "line 1, column 6") != 1 || !strings.Contains(text, "warning: line 1, column 6: invalid escape") {
			t.Fatalf("signature %s: exit %d: %s %s", esc, code, text, errOut)
		}
		// --dialect still wins: the same file as Starlark is refused.
		if code, _, _ := runMain(t, "signature", "--dialect", "starlark", py); code != 1 {
			t.Fatalf("--dialect starlark on await: exit %d, want 1", code)
		}
	})

	for _, f := range []string{ro, kill} {
		if code, _, errOut := runMain(t, "capture", f); code != 0 {
			t.Fatalf("capture %s: %s", f, errOut)
		}
	}
	if code, _, errOut := runMain(t, "autorun", "grant", readOnlyName, "--reason", "reviewed the log comparison"); code != 0 {
		t.Fatal(errOut)
	}

	t.Run("decisions shows id, code hash and note", func(t *testing.T) {
		ds := s.decisions(t, "kind=grant")
		if len(ds) != 1 {
			t.Fatalf("grants: %v", ds)
		}
		code, out, errOut := runMain(t, "decisions", "--kind", "grant")
		if code != 0 {
			t.Fatal(errOut)
		}
		hash := ds[0]["code_hash"].(string)
		for _, want := range []string{"ID", "CODE HASH", "NOTE", ds[0]["id"].(string), hash[:12], "reviewed the log comparison"} {
			if !strings.Contains(out, want) {
				t.Errorf("decisions lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("a denial prints the server's suggestion", func(t *testing.T) {
		up.reset()
		code, _, errOut := runMain(t, "invoke", killName, "--phase", "automatic", "--arg", "task_id=1")
		if code != 1 || !strings.Contains(errOut, "suggestion: "+decide.SuggestInteractive) {
			t.Fatalf("exit %d:\n%s", code, errOut)
		}
		up.mustSeeNothing(t, "a denied invoke")
		// With --json the error answer is on stdout as the server sent it.
		code, out, _ := runMain(t, "invoke", killName, "--phase", "automatic", "--arg", "task_id=1", "--json")
		var body struct {
			Error struct {
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		if code != 1 || json.Unmarshal([]byte(out), &body) != nil || body.Error.Code != "denied" || body.Error.Details["suggestion"] != decide.SuggestInteractive {
			t.Fatalf("exit %d: %s", code, out)
		}
	})

	t.Run("run --phase interactive says how to allow a state-changing file", func(t *testing.T) {
		up.reset()
		code, _, errOut := runMain(t, "run", "--tools", cat, "--upstream-http", up.URL, "--phase", "interactive", "--arg", "task_id=1", kill)
		if code != 1 || !strings.Contains(errOut, "state_changing_disabled") || !strings.Contains(errOut, "add --allow-mutating") {
			t.Fatalf("exit %d:\n%s", code, errOut)
		}
		up.mustSeeNothing(t, "a denied run")
		code, _, errOut = runMain(t, "run", "--tools", cat, "--upstream-http", up.URL, "--phase", "automatic", "--arg", "task_id=1", kill)
		if code != 1 || !strings.Contains(errOut, "suggestion: "+decide.SuggestInteractive) {
			t.Fatalf("automatic: exit %d:\n%s", code, errOut)
		}
		code, out, errOut := runMain(t, "run", "--tools", cat, "--upstream-http", up.URL, "--phase", "interactive", "--allow-mutating", "--arg", "task_id=1", kill)
		if code != 0 || !strings.Contains(out, "status:") || !strings.Contains(out, "succeeded") {
			t.Fatalf("--allow-mutating: exit %d: %s %s", code, out, errOut)
		}
	})

	t.Run("people get tables or key: value", func(t *testing.T) {
		for _, args := range [][]string{
			{"procedures", "list"}, {"procedures", "show", readOnlyName}, {"versions", readOnlyName}, {"tools", "get"},
			{"decisions"}, {"causes"}, {"graph", "--procedure", readOnlyName}, {"capture", ro},
			{"invoke", readOnlyName, "--phase", "automatic", "--arg", "task_id=2"},
			{"signature", "--tools", cat, ro}, {"autorun", "revoke", readOnlyName, "--reason", "done"},
		} {
			code, out, errOut := runMain(t, args...)
			if code != 0 || out == "" || strings.HasPrefix(strings.TrimSpace(out), "{") {
				t.Fatalf("%v: exit %d, %q, %s", args, code, out, errOut)
			}
		}
	})

	t.Run("--json is the API's answer in its order", func(t *testing.T) {
		for _, path := range []string{"/v1/procedures/" + readOnlyName, "/v1/tools", "/v1/causes", "/v1/procedures?limit=25&offset=0"} {
			var args []string
			switch {
			case strings.HasPrefix(path, "/v1/procedures/"):
				args = []string{"procedures", "show", readOnlyName, "--json"}
			case path == "/v1/tools":
				args = []string{"tools", "get", "--json"}
			case path == "/v1/causes":
				args = []string{"causes", "--json"}
			default:
				args = []string{"procedures", "list", "--json"}
			}
			r := s.get(t, path)
			var want bytes.Buffer
			if err := json.Indent(&want, r.Body, "", "  "); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runMain(t, args...)
			if code != 0 || strings.TrimSpace(out) != strings.TrimSpace(want.String()) {
				t.Fatalf("%v: exit %d %s\ngot:\n%s\nwant (GET %s):\n%s", args, code, errOut, out, path, want.String())
			}
		}
		code, out, _ := runMain(t, "invoke", readOnlyName, "--phase", "automatic", "--arg", "task_id=3", "--json")
		if code != 0 || !slices.Equal(topKeys(t, out), []string{"decision", "status", "result", "output", "calls", "error"}) {
			t.Fatalf("invoke --json keys %v: %s", topKeys(t, out), out)
		}
	})
}

// topKeys is the order of a JSON object's top-level keys.
func topKeys(tb testing.TB, s string) []string {
	tb.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	if _, err := dec.Token(); err != nil {
		tb.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			tb.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			tb.Fatal(err)
		}
	}
	return keys
}
