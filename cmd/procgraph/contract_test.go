package main

import (
	"net/url"
	"strings"
	"testing"
)

// TestErrorContract drives every error code of docs/api.md through real HTTP
// (401 and 403 forbidden: TestAuthMatrix) and checks the error shape and
// the details each code promises.
func TestErrorContract(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	mustCaptureName(t, s, readOnlyCode, "setup")
	mustCaptureName(t, s, killCode, "setup")
	failed := s.mustCapture(t, map[string]any{"code": "a = tools.search_panda_docs(query=q)\nreturn tools.get_retry_chain(task_id=1)", "status": "failed"}, nil)
	failedName := procOf(t, failed)["name"].(string)

	bigCode := "a = tools.get_retry_chain(task_id=1)\nb = tools.get_task_jobs_summary(task_id=1)\n# " + strings.Repeat("x", 65<<10)
	cases := []struct {
		name   string
		req    req
		status int
		code   string
		check  func(t *testing.T, details map[string]any)
	}{
		{name: "malformed JSON", req: req{Method: "POST", Path: "/v1/procedures", Body: `{"code": `}, status: 400, code: "invalid_request"},
		{name: "empty body", req: req{Method: "POST", Path: "/v1/procedures", Body: ``}, status: 400, code: "invalid_request"},
		{name: "unknown field", req: req{Method: "POST", Path: "/v1/procedures", Body: `{"code": "x", "bogus": 1}`},
			status: 400, code: "invalid_request", check: field("bogus")},
		{name: "unknown nested field", req: req{Method: "POST", Path: "/v1/procedures", Body: `{"code": "x", "cause": {"name": "c", "zzz": 1}}`},
			status: 400, code: "invalid_request", check: field("cause.zzz")},
		{name: "wrong type code", req: req{Method: "POST", Path: "/v1/procedures", Body: `{"code": 5}`},
			status: 400, code: "invalid_request", check: field("code")},
		{name: "wrong type phase", req: req{Method: "POST", Path: "/v1/procedures/" + readOnlyName + "/invoke", Body: `{"phase": 3}`},
			status: 400, code: "invalid_request", check: field("phase")},
		{name: "missing phase", req: req{Method: "POST", Path: "/v1/procedures/" + readOnlyName + "/invoke", Body: `{"arguments": {"task_id": 1}}`},
			status: 400, code: "invalid_request", check: field("phase")},
		{name: "unknown phase", req: req{Method: "POST", Path: "/v1/procedures/" + readOnlyName + "/invoke", Body: `{"phase": "sometimes"}`},
			status: 400, code: "invalid_request", check: field("phase")},
		{name: "body is an array", req: req{Method: "PUT", Path: "/v1/procedures/" + readOnlyName + "/auto-run", Body: `[true]`},
			status: 400, code: "invalid_request"},
		{name: "enabled is a string", req: req{Method: "PUT", Path: "/v1/procedures/" + readOnlyName + "/auto-run", Body: `{"enabled": "yes"}`},
			status: 400, code: "invalid_request", check: field("enabled")},
		{name: "tools put wrong type", req: req{Method: "PUT", Path: "/v1/tools", Body: `{"tools": [{"name": "x", "read_only": "true"}]}`},
			status: 400, code: "invalid_request", check: field("tools.0.read_only")},
		{name: "unknown query parameter", req: req{Method: "GET", Path: "/v1/procedures?foo=1"}, status: 400, code: "invalid_request", check: field("foo")},
		{name: "repeated query parameter", req: req{Method: "GET", Path: "/v1/procedures?limit=1&limit=2"}, status: 400, code: "invalid_request", check: field("limit")},
		{name: "non-integer limit", req: req{Method: "GET", Path: "/v1/procedures?limit=ten"}, status: 400, code: "invalid_request", check: field("limit")},
		{name: "limit over 500", req: req{Method: "GET", Path: "/v1/procedures?limit=501"}, status: 400, code: "invalid_request", check: field("limit")},
		{name: "limit zero", req: req{Method: "GET", Path: "/v1/procedures?limit=0"}, status: 400, code: "invalid_request", check: field("limit")},
		{name: "negative offset", req: req{Method: "GET", Path: "/v1/procedures?offset=-1"}, status: 400, code: "invalid_request", check: field("offset")},
		{name: "bad boolean", req: req{Method: "GET", Path: "/v1/procedures?read_only=yes"}, status: 400, code: "invalid_request", check: field("read_only")},
		{name: "bad status", req: req{Method: "GET", Path: "/v1/procedures?status=meh"}, status: 400, code: "invalid_request", check: field("status")},
		{name: "planner view limit", req: req{Method: "GET", Path: "/v1/procedures/tools?limit=1000"}, status: 400, code: "invalid_request", check: field("limit")},
		{name: "planner view unknown parameter", req: req{Method: "GET", Path: "/v1/procedures/tools?tool=x"}, status: 400, code: "invalid_request", check: field("tool")},
		{name: "decisions bad kind", req: req{Method: "GET", Path: "/v1/decisions?kind=run"}, status: 400, code: "invalid_request", check: field("kind")},
		{name: "graph depth", req: req{Method: "GET", Path: "/v1/graph?depth=99"}, status: 400, code: "invalid_request", check: field("depth")},
		{name: "query on a route without parameters", req: req{Method: "GET", Path: "/v1/causes?limit=1"}, status: 400, code: "invalid_request", check: field("limit")},
		{name: "malformed query", req: req{Method: "GET", Path: "/v1/procedures?limit=%zz"}, status: 400, code: "invalid_request"},
		{name: "method not allowed", req: req{Method: "PATCH", Path: "/v1/tools", Body: `{}`}, status: 405, code: "invalid_request"},

		{name: "denied", req: req{Method: "POST", Path: "/v1/procedures/" + killName + "/invoke", Body: `{"arguments": {"task_id": 1}, "phase": "automatic"}`},
			status: 403, code: "denied", check: func(t *testing.T, d map[string]any) {
				dec, ok := d["decision"].(map[string]any)
				if !ok || dec["outcome"] != "denied" || dec["reason"] != "state_changing_in_automatic_phase" || !strings.HasPrefix(dec["id"].(string), "pgd_") {
					t.Fatalf("details.decision = %v", d["decision"])
				}
				if d["suggestion"] == nil && dec["suggestion"] == nil {
					t.Fatalf("no suggestion in %v", d)
				}
			}},

		{name: "no such procedure", req: req{Method: "GET", Path: "/v1/procedures/proc__nope__zilch"}, status: 404, code: "not_found"},
		{name: "versions of no procedure", req: req{Method: "GET", Path: "/v1/procedures/proc__nope__zilch/versions"}, status: 404, code: "not_found"},
		{name: "invoke no procedure", req: req{Method: "POST", Path: "/v1/procedures/proc__nope__zilch/invoke", Body: `{"phase": "automatic"}`}, status: 404, code: "not_found"},
		{name: "grant no procedure", req: req{Method: "PUT", Path: "/v1/procedures/proc__nope__zilch/auto-run", Body: `{"enabled": true}`}, status: 404, code: "not_found"},
		{name: "revoke no procedure", req: req{Method: "DELETE", Path: "/v1/procedures/proc__nope__zilch/auto-run"}, status: 404, code: "not_found"},
		{name: "promote no procedure", req: req{Method: "POST", Path: "/v1/procedures/proc__nope__zilch/versions/" + strings.Repeat("a", 64) + "/promote"}, status: 404, code: "not_found"},
		{name: "promote no version", req: req{Method: "POST", Path: "/v1/procedures/" + readOnlyName + "/versions/" + strings.Repeat("a", 64) + "/promote"}, status: 404, code: "not_found"},
		{name: "no such cause", req: req{Method: "GET", Path: "/v1/causes/" + url.PathEscape("never seen")}, status: 404, code: "not_found"},
		{name: "no such route", req: req{Method: "GET", Path: "/v1/nothing"}, status: 404, code: "not_found"},

		{name: "grant a state-changing procedure", req: req{Method: "PUT", Path: "/v1/procedures/" + killName + "/auto-run", Body: `{"enabled": true, "reason": "r"}`},
			status: 409, code: "conflict", check: func(t *testing.T, d map[string]any) {
				if d["reason"] != "not_read_only" {
					t.Fatalf("details.reason = %v", d["reason"])
				}
			}},
		{name: "grant a failed procedure", req: req{Method: "PUT", Path: "/v1/procedures/" + failedName + "/auto-run", Body: `{"enabled": true}`},
			status: 409, code: "conflict", check: func(t *testing.T, d map[string]any) {
				if d["reason"] != "procedure_not_succeeded" {
					t.Fatalf("details.reason = %v", d["reason"])
				}
			}},

		{name: "body over 1 MiB", req: req{Method: "POST", Path: "/v1/procedures", Body: `{"code": "` + strings.Repeat("x", 1<<20) + `"}`},
			status: 413, code: "payload_too_large"},
		{name: "code over 64 KiB", req: req{Method: "POST", Path: "/v1/procedures", Body: map[string]any{"code": bigCode}},
			status: 413, code: "payload_too_large"},

		{name: "import", req: req{Method: "POST", Path: "/v1/procedures", Body: map[string]any{"code": "import os\nreturn tools.get_retry_chain(task_id=1)", "dialect": "python-async"}},
			status: 422, code: "invalid_code", check: position(1)},
		{name: "class", req: req{Method: "POST", Path: "/v1/procedures", Body: map[string]any{"code": "x = 1\nclass A:\n    pass\n"}},
			status: 422, code: "invalid_code", check: position(2)},
		{name: "syntax error", req: req{Method: "POST", Path: "/v1/procedures", Body: map[string]any{"code": "a = tools.get_retry_chain(task_id=1\n"}},
			status: 422, code: "invalid_code", check: position(-1)},
		{name: "empty signature", req: req{Method: "POST", Path: "/v1/procedures", Body: map[string]any{"code": "return 1 + 1"}},
			status: 422, code: "invalid_code", check: position(-1)},
		{name: "single use of an unknown procedure", req: req{Method: "POST", Path: "/v1/procedures", Body: map[string]any{"code": "return tools.proc__nope__zilch(task_id=1)"}},
			status: 422, code: "invalid_code", check: position(-1)},

		{name: "missing argument", req: req{Method: "POST", Path: "/v1/procedures/" + readOnlyName + "/invoke", Body: `{"arguments": {}, "phase": "automatic"}`},
			status: 422, code: "invalid_arguments", check: argErrors},
		{name: "extra argument", req: req{Method: "POST", Path: "/v1/procedures/" + readOnlyName + "/invoke", Body: `{"arguments": {"task_id": 1, "rm": true}, "phase": "automatic"}`},
			status: 422, code: "invalid_arguments", check: argErrors},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up.reset()
			before := len(s.decisions(t, "limit=1000"))
			details := mustError(t, s.send(t, tc.req), tc.status, tc.code)
			if tc.check != nil {
				tc.check(t, details)
			}
			up.mustSeeNothing(t, tc.name)
			after := len(s.decisions(t, "limit=1000"))
			wantNew := 0
			if tc.code == "denied" || tc.code == "conflict" {
				wantNew = 1 // a refusal is audited
			}
			if after-before != wantNew {
				t.Fatalf("%d new decisions, want %d", after-before, wantNew)
			}
			s.mustHealthy(t)
		})
	}
}

// field checks details.field.
func field(name string) func(t *testing.T, d map[string]any) {
	return func(t *testing.T, d map[string]any) {
		t.Helper()
		if d["field"] != name {
			t.Fatalf("details.field = %v, want %s (details %v)", d["field"], name, d)
		}
	}
}

// position checks details line, column and feature; line -1: any line.
func position(line int) func(t *testing.T, d map[string]any) {
	return func(t *testing.T, d map[string]any) {
		t.Helper()
		for _, k := range []string{"line", "column", "feature"} {
			if _, ok := d[k]; !ok {
				t.Fatalf("details.%s missing: %v", k, d)
			}
		}
		if f, _ := d["feature"].(string); f == "" {
			t.Fatalf("details.feature empty: %v", d)
		}
		if line >= 0 && num(d["line"]) != line {
			t.Fatalf("details.line = %v, want %d: %v", d["line"], line, d)
		}
	}
}

func argErrors(t *testing.T, d map[string]any) {
	t.Helper()
	errs, ok := d["errors"].([]any)
	if !ok || len(errs) == 0 {
		t.Fatalf("details.errors = %v", d["errors"])
	}
}
