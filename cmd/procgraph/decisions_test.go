package main

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDecisionTable drives every row of docs/design.md's "Authorization of a
// replay" table through HTTP, on a server with mutating auto-run off and one
// with it on, and checks that a denied or rejected replay reaches no tool.
func TestDecisionTable(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	off := mustServe(t, serverOpts{Upstream: up})
	on := mustServe(t, serverOpts{Upstream: up, AllowMutating: true})
	const (
		grantedCode = "s = tools.get_task_jobs_summary(task_id=task_id)\nreturn tools.retry_task(task_id=task_id)"
		grantedName = "proc__get_task_jobs_summary__retry_task"
		failedCode  = "a = tools.search_panda_docs(query=q)\nreturn tools.get_retry_chain(task_id=1)"
		failedName  = "proc__get_retry_chain__search_panda_docs"
	)
	for _, s := range []*server{off, on} {
		mustCaptureName(t, s, readOnlyCode, "setup")
		mustCaptureName(t, s, killCode, "setup")
		mustCaptureName(t, s, grantedCode, "setup")
		s.mustCapture(t, map[string]any{"code": failedCode, "status": "failed"}, nil)
	}
	// With mutating auto-run on, a state-changing procedure can be granted.
	mustStatus(t, on.send(t, req{Method: "PUT", Path: "/v1/procedures/" + grantedName + "/auto-run", Body: map[string]any{"enabled": true, "reason": "ok"}}), 200)
	mustError(t, off.send(t, req{Method: "PUT", Path: "/v1/procedures/" + grantedName + "/auto-run", Body: map[string]any{"enabled": true}}), 409, "conflict")

	task := map[string]any{"task_id": 5}
	cases := []struct {
		name    string
		s       *server
		proc    string
		body    map[string]any
		status  int    // 200, 403 or 422
		reason  string // the decision's reason; "" for 422
		reached []string
	}{
		{"version not succeeded", off, failedName, map[string]any{"arguments": map[string]any{"q": "x", "task_id": 1}, "phase": "interactive"}, 403, "procedure_not_succeeded", nil},
		{"version not succeeded (on)", on, failedName, map[string]any{"arguments": map[string]any{"q": "x", "task_id": 1}, "phase": "interactive", "reviewed_by": "op"}, 403, "procedure_not_succeeded", nil},
		{"arguments fail the schema", off, readOnlyName, map[string]any{"arguments": map[string]any{"task": 1}, "phase": "automatic"}, 422, "", nil},
		{"a string where the catalogue types an integer", off, readOnlyName, map[string]any{"arguments": map[string]any{"task_id": "5"}, "phase": "automatic"}, 422, "", nil},
		{"arguments fail the schema (state-changing)", on, killName, map[string]any{"arguments": map[string]any{}, "phase": "interactive", "reviewed_by": "op"}, 422, "", nil},
		{"automatic, read-only", off, readOnlyName, map[string]any{"arguments": task, "phase": "automatic"}, 200, "read_only", []string{"get_task_jobs_summary", "get_retry_chain"}},
		{"automatic, state-changing", off, killName, map[string]any{"arguments": task, "phase": "automatic"}, 403, "state_changing_in_automatic_phase", nil},
		{"automatic, state-changing, on, granted", on, grantedName, map[string]any{"arguments": task, "phase": "automatic"}, 403, "state_changing_in_automatic_phase", nil},
		{"automatic, state-changing, on, reviewed", on, killName, map[string]any{"arguments": task, "phase": "automatic", "reviewed_by": "op"}, 403, "state_changing_in_automatic_phase", nil},
		{"interactive, read-only", off, readOnlyName, map[string]any{"arguments": task, "phase": "interactive"}, 200, "read_only", []string{"get_task_jobs_summary", "get_retry_chain"}},
		{"interactive, state-changing, off", off, killName, map[string]any{"arguments": task, "phase": "interactive"}, 403, "state_changing_disabled", nil},
		{"interactive, state-changing, off, reviewed", off, killName, map[string]any{"arguments": task, "phase": "interactive", "reviewed_by": "op"}, 403, "state_changing_disabled", nil},
		{"interactive, state-changing, on, active grant", on, grantedName, map[string]any{"arguments": task, "phase": "interactive"}, 200, "durable_auto_run", []string{"get_task_jobs_summary", "retry_task"}},
		{"interactive, state-changing, on, reviewed", on, killName, map[string]any{"arguments": task, "phase": "interactive", "reviewed_by": "op"}, 200, "operator_reviewed", []string{"get_task_jobs_summary", "kill_job"}},
		{"interactive, state-changing, on, otherwise", on, killName, map[string]any{"arguments": task, "phase": "interactive"}, 403, "review_required", nil},
		{"interactive, state-changing, on, empty reviewer", on, killName, map[string]any{"arguments": task, "phase": "interactive", "reviewed_by": ""}, 403, "review_required", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up.reset()
			before := len(tc.s.decisions(t, "kind=invoke&limit=1000"))
			r := tc.s.invoke(t, tc.proc, tc.body)
			var d map[string]any
			switch tc.status {
			case 200:
				out := mustStatus(t, r, 200)
				if out["status"] != "succeeded" || out["error"] != nil {
					t.Fatalf("replay %v", out)
				}
				d = out["decision"].(map[string]any)
			case 403:
				d = mustError(t, r, 403, "denied")["decision"].(map[string]any)
			case 422:
				mustError(t, r, 422, "invalid_arguments")
			}
			after := tc.s.decisions(t, "kind=invoke&limit=1000")
			if tc.status == 422 {
				if len(after) != before {
					t.Fatalf("a rejected replay left %d decisions", len(after)-before)
				}
			} else {
				if len(after) != before+1 || after[0]["id"] != d["id"] {
					t.Fatalf("want exactly one new decision %v, have %d new (newest %v)", d["id"], len(after)-before, after[0])
				}
				if d["reason"] != tc.reason || d["kind"] != "invoke" || d["procedure"] != tc.proc || d["actor"] != "anonymous" ||
					d["phase"] != tc.body["phase"] {
					t.Fatalf("decision %v, want reason %s", d, tc.reason)
				}
				wantOutcome := map[int]string{200: "allowed", 403: "denied"}[tc.status]
				if d["outcome"] != wantOutcome {
					t.Fatalf("outcome %v, want %s", d["outcome"], wantOutcome)
				}
				allowed := toStrings(d["allowed_tools"])
				if tc.status == 403 && len(allowed) != 0 {
					t.Fatalf("a denial with allowed_tools %v", allowed)
				}
				for _, a := range allowed {
					if !strings.Contains(tc.proc, a) {
						t.Fatalf("allowed tool %s is not in the signature of %s", a, tc.proc)
					}
				}
			}
			if got := up.tools(); !slices.Equal(got, orEmpty(tc.reached)) {
				t.Fatalf("the upstream saw %v, want %v", got, orEmpty(tc.reached))
			}
		})
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestEscapeFormsAreRefused captures code that reaches a tool outside its
// static signature (or an unknown one) and checks the replay fails with
// tool_refused while the upstream never sees the tool.
func TestEscapeFormsAreRefused(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	// Every case is a version of one procedure (the signature is static:
	// get_task_jobs_summary) and each replay of it fails: --demote-after 0
	// keeps the later cases from being denied as demoted.
	s := mustServe(t, serverOpts{Upstream: up, AllowMutating: true, Extra: []string{"--demote-after", "0"}})
	const summary = "s = tools.get_task_jobs_summary(task_id=task_id)\n"
	cases := []struct {
		name   string
		code   string
		body   map[string]any
		opaque bool
	}{
		{"getattr with a computed name", summary + "return getattr(tools, \"kill_\" + \"job\")(panda_id=1)", nil, true},
		{"getattr then call", summary + "m = getattr(tools, \"kill_job\")\nreturn m(panda_id=1)", nil, true},
		{"alias of tools", summary + "t = tools\nm = t.kill_job\nreturn m(panda_id=1)", nil, true},
		{"tools passed to a function", summary + "def f(x):\n    return x.kill_job(panda_id=1)\nreturn f(tools)", nil, true},
		{"tools in a list", summary + "l = [tools]\nreturn l[0].kill_job(panda_id=1)", nil, true},
		{"nested function getattr", summary + "def g():\n    return getattr(tools, \"retry_\" + \"task\")\nreturn g()(task_id=1)", nil, true},
		// m = tools.kill_job; m() names kill_job statically: it runs only when
		// allowed; with kill_job unknown to the catalogue (below) the replay
		// is refused before it runs (unknown_tool), even an operator-reviewed
		// interactive one.
		{"bound method of an unknown tool", summary + "m = tools.kill_job\nreturn m(panda_id=1)", map[string]any{"phase": "interactive", "reviewed_by": "op"}, false},
	}
	names := map[string]string{}
	for _, tc := range cases {
		out := s.mustCapture(t, map[string]any{"code": tc.code, "session_id": tc.name}, nil)
		p := procOf(t, out)
		if p["opaque"] != tc.opaque {
			t.Fatalf("%s: opaque %v, want %v", tc.name, p["opaque"], tc.opaque)
		}
		if tc.opaque && (p["exposed"] != false || len(p["warnings"].([]any)) == 0 || slices.Contains(toStrings(p["signature"]), "kill_job")) {
			t.Fatalf("%s: an opaque procedure must be unexposed, with warnings, signature static: %v", tc.name, p)
		}
		names[tc.name] = p["name"].(string)
	}
	// kill_job leaves the catalogue: unknown, never in an allow-set.
	var cat struct {
		Tools []map[string]any `json:"tools"`
	}
	s.get(t, "/v1/tools").Into(t, &cat)
	var without []map[string]any
	for _, tool := range cat.Tools {
		if tool["name"] != "kill_job" {
			without = append(without, tool)
		}
	}
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": without}}), 200)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up.reset()
			body := map[string]any{"arguments": map[string]any{"task_id": 9}, "phase": "automatic"}
			for k, v := range tc.body {
				body[k] = v
			}
			if tc.name == "bound method of an unknown tool" {
				d := mustError(t, s.invoke(t, names[tc.name], body), 403, "denied")
				if d["decision"].(map[string]any)["reason"] != "unknown_tool" || len(up.tools()) != 0 {
					t.Fatalf("replay %v, the upstream saw %v; want denied unknown_tool, nothing called", d, up.tools())
				}
				return
			}
			out := mustStatus(t, s.invoke(t, names[tc.name], body), 200)
			e, _ := out["error"].(map[string]any)
			if out["status"] != "failed" || e == nil || e["code"] != "tool_refused" {
				t.Fatalf("replay %v, want failed tool_refused", out)
			}
			if tool, _ := e["tool"].(string); tool != "kill_job" && tool != "retry_task" {
				t.Fatalf("error.tool = %v", e["tool"])
			}
			if got := up.tools(); !slices.Equal(got, []string{"get_task_jobs_summary"}) {
				t.Fatalf("the upstream saw %v, want only get_task_jobs_summary", got)
			}
			if out["result"] != nil {
				t.Fatalf("a failed replay has a result: %v", out["result"])
			}
		})
	}
}

// TestConcurrentCapturesCount sends 48 concurrent captures of one signature
// under distinct session ids: the frequency is exactly 48.
func TestConcurrentCapturesCount(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{Upstream: mustUpstream(t)})
	const n = 48
	var wg sync.WaitGroup
	errs := make(chan error, n)
	created := make(chan bool, n)
	for i := range n {
		wg.Go(func() {
			code := readOnlyCode
			if i%3 == 0 {
				code += fmt.Sprintf("\n\"variant %d\"", i%6)
			}
			r := s.send(t, req{Method: "POST", Path: "/v1/procedures", Body: map[string]any{"code": code, "session_id": fmt.Sprintf("session-%d", i), "cause": map[string]any{"name": "load"}}})
			if r.Status != 200 && r.Status != 201 {
				errs <- fmt.Errorf("capture %d: %d %s", i, r.Status, r.Body)
				return
			}
			created <- r.Status == 201
		})
	}
	wg.Wait()
	close(errs)
	close(created)
	for err := range errs {
		t.Error(err)
	}
	n201 := 0
	for c := range created {
		if c {
			n201++
		}
	}
	p := mustStatus(t, s.get(t, "/v1/procedures/"+readOnlyName), 200)
	if num(p["frequency"]) != n || n201 != 1 {
		t.Fatalf("frequency %v, 201 answers %d; want %d and 1", p["frequency"], n201, n)
	}
	if c := p["causes"].([]any); len(c) != 1 || num(c[0].(map[string]any)["frequency"]) != n {
		t.Fatalf("cause edge %v", p["causes"])
	}
	total := 0
	var vs struct {
		Versions []struct {
			Frequency int `json:"frequency"`
		} `json:"versions"`
	}
	s.get(t, "/v1/procedures/"+readOnlyName+"/versions").Into(t, &vs)
	for _, v := range vs.Versions {
		total += v.Frequency
	}
	if len(vs.Versions) != 3 || total != n {
		t.Fatalf("%d versions with %d uses, want 3 and %d", len(vs.Versions), total, n)
	}
}

// TestRestartKeepsState stops Main and starts it again on the same data
// file (without --tools: the stored catalogue must survive too).
func TestRestartKeepsState(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	data := filepath.Join(t.TempDir(), "p.db")
	s := mustServe(t, serverOpts{Upstream: up, Data: data})
	for _, sess := range []string{"a", "b", "c"} {
		s.mustCapture(t, map[string]any{"code": readOnlyCode, "session_id": sess, "cause": map[string]any{"name": "restart cause", "description": "d"}}, nil)
	}
	mustCaptureName(t, s, killCode, "a")
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + readOnlyName + "/auto-run", Body: map[string]any{"enabled": true, "reason": "kept"}}), 200)
	mustStatus(t, s.invoke(t, readOnlyName, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic", "session_id": "replay"}), 200)
	mustError(t, s.invoke(t, killName, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}), 403, "denied")
	var cat struct {
		Tools []map[string]any `json:"tools"`
	}
	s.get(t, "/v1/tools").Into(t, &cat)
	// A catalogue change made over HTTP must survive the restart.
	cat.Tools = append(cat.Tools, map[string]any{"name": "extra_tool", "read_only": true})
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": cat.Tools}}), 200)

	snapshot := func(s *server) map[string]string {
		out := map[string]string{}
		for _, path := range []string{"/v1/procedures", "/v1/procedures/" + readOnlyName, "/v1/causes", "/v1/causes/restart%20cause",
			"/v1/decisions", "/v1/tools", "/v1/procedures/tools", "/v1/procedures/" + readOnlyName + "/versions"} {
			out[path] = string(s.get(t, path).Body)
		}
		return out
	}
	before := snapshot(s)
	s.Stop(t)

	again, err := startMain(t, serverOpts{Upstream: up, Data: data, NoCatalogue: true}.args(t))
	if err != nil {
		t.Fatal(err)
	}
	after := snapshot(again)
	for path, b := range before {
		if after[path] != b {
			t.Errorf("%s changed across the restart:\nbefore %s\nafter  %s", path, b, after[path])
		}
	}
	p := mustStatus(t, again.get(t, "/v1/procedures/"+readOnlyName), 200)
	if num(p["frequency"]) != 4 || num(p["use_count"]) != 1 || p["auto_run"].(map[string]any)["active"] != true || p["last_used_at"] == nil {
		t.Fatalf("after the restart: %v", p)
	}
	// grant, two invokes, and two catalogue changes (serve --tools at the
	// first start, the PUT): the restart with an unchanged --tools adds none.
	if ds := again.decisions(t, ""); len(ds) != 5 {
		t.Fatalf("decisions after the restart: %v", ds)
	}
	// Still works: a replay counts on top of the kept state.
	mustStatus(t, again.invoke(t, readOnlyName, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic", "session_id": "after"}), 200)
	if p := mustStatus(t, again.get(t, "/v1/procedures/"+readOnlyName), 200); num(p["frequency"]) != 5 {
		t.Fatalf("frequency after a replay %v", p["frequency"])
	}
}

// TestDecisionsPageBack: the audit log pages back with before and next
// until every record was seen once; a bad cursor is a 400 naming before.
func TestDecisionsPageBack(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	name := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\nreturn [a, tools.get_retry_chain(task_id=task_id)]\n", "p1")
	for i := 0; i < 5; i++ {
		mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": i}, "phase": "automatic"}), 200)
	}
	all := s.decisions(t, "limit=1000&kind=invoke")
	if len(all) != 5 {
		t.Fatalf("want 5 decisions, got %d", len(all))
	}
	var seen []any
	path := "/v1/decisions?kind=invoke&limit=2"
	for pages := 0; pages < 10; pages++ {
		var out struct {
			Decisions []map[string]any `json:"decisions"`
			Next      *string          `json:"next"`
		}
		r := s.get(t, path)
		mustStatus(t, r, 200)
		r.Into(t, &out)
		for _, d := range out.Decisions {
			seen = append(seen, d["id"])
		}
		if out.Next == nil {
			break
		}
		path = "/v1/decisions?kind=invoke&limit=2&before=" + *out.Next
	}
	if len(seen) != len(all) {
		t.Fatalf("paged %d records, want %d: %v", len(seen), len(all), seen)
	}
	for i, d := range all {
		if seen[i] != d["id"] {
			t.Fatalf("record %d: paged %v, want %v", i, seen[i], d["id"])
		}
	}
	details := mustError(t, s.get(t, "/v1/decisions?before=pgd_nope"), 400, "invalid_request")
	if details["field"] != "before" {
		t.Fatalf("details = %v, want field before", details)
	}
}

// TestDecisionsFilters: GET /v1/decisions filters by actor, outcome, kind,
// procedure and a time range on the server (a page of matches, not a
// filtered page), and answers a malformed, oversized or hostile filter
// with a 400 naming the parameter.
func TestDecisionsFilters(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	name := mustCaptureName(t, s, readOnlyCode, "p1")
	mustCaptureName(t, s, killCode, "p2")
	for i := 0; i < 3; i++ {
		mustStatus(t, s.invoke(t, name, map[string]any{"arguments": map[string]any{"task_id": i}, "phase": "automatic"}), 200)
	}
	mustStatus(t, s.invoke(t, killName, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"}), 403)
	all := s.decisions(t, "limit=1000")
	count := func(pred func(map[string]any) bool) int {
		n := 0
		for _, d := range all {
			if pred(d) {
				n++
			}
		}
		return n
	}
	mid := all[len(all)/2]["at"].(string)
	for _, c := range []struct {
		query string
		pred  func(map[string]any) bool
	}{
		{"outcome=denied", func(d map[string]any) bool { return d["outcome"] == "denied" }},
		{"outcome=allowed&kind=invoke", func(d map[string]any) bool { return d["outcome"] == "allowed" && d["kind"] == "invoke" }},
		{"actor=" + all[0]["actor"].(string), func(d map[string]any) bool { return d["actor"] == all[0]["actor"] }},
		{"actor=nobody", func(map[string]any) bool { return false }},
		{"procedure=" + killName + "&outcome=denied", func(d map[string]any) bool { return d["procedure"] == killName && d["outcome"] == "denied" }},
		{"since=" + mid, func(d map[string]any) bool { return !atOf(t, d).Before(atOf(t, map[string]any{"at": mid})) }},
		{"until=" + mid, func(d map[string]any) bool { return atOf(t, d).Before(atOf(t, map[string]any{"at": mid})) }},
	} {
		got := s.decisions(t, "limit=1000&"+c.query)
		if want := count(c.pred); len(got) != want || want == 0 && c.query != "actor=nobody" {
			t.Errorf("%s: %d records, want %d", c.query, len(got), want)
		}
		for _, d := range got {
			if !c.pred(d) {
				t.Errorf("%s: listed %v", c.query, d)
			}
		}
	}
	// A page of one denied record, not the first record filtered away.
	if got := s.decisions(t, "limit=1&outcome=denied"); len(got) != 1 {
		t.Errorf("a one-record page of denied: %d records", len(got))
	}
	for _, c := range []struct{ query, field string }{
		{"outcome=maybe", "outcome"},
		{"outcome=allowed&outcome=denied", "outcome"},
		{"kind=launch", "kind"},
		{"since=yesterday", "since"},
		{"until=2026-13-01T00:00:00Z", "until"},
		{"since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z", "since"},
		{"actor=" + strings.Repeat("a", 5000), "actor"},
		{"actor=", "actor"},
		{"actor=%ff", "actor"},
		{"procedure=%00", ""},
		{"limit=0", "limit"},
		{"limit=1001", "limit"},
		{"limit=-1", "limit"},
		{"after=2026-01-01T00:00:00Z", "after"},
		{"before=" + url.QueryEscape("' OR 1=1 --"), "before"},
		{"since=%zz", "(query)"},
	} {
		r := s.get(t, "/v1/decisions?"+c.query)
		details := mustError(t, r, 400, "invalid_request")
		if c.field != "" && details["field"] != c.field {
			t.Errorf("%s: details %v, want field %s", c.query, details, c.field)
		}
	}
}

// atOf is a listed decision's time (RFC 3339 strings with trailing zeros
// dropped do not compare as strings: "…51.14Z" > "…51.142Z").
func atOf(t *testing.T, d map[string]any) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, d["at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return at
}
