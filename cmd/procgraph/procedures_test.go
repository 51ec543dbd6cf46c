package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCaptureCounting checks 201 then 200, created, version_created and
// counted, and the usage keys: session_id, else Idempotency-Key, else a
// fresh key per request; and that a single proc__X block counts a use of X.
func TestCaptureCounting(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{Upstream: mustUpstream(t)})
	variant := readOnlyCode + "\n\"a second version\""
	steps := []struct {
		name                             string
		body                             map[string]any
		header                           map[string]string
		status                           int
		created, versionCreated, counted bool
		frequency                        int
	}{
		{"first capture", map[string]any{"code": readOnlyCode, "session_id": "s1"}, nil, 201, true, true, true, 1},
		{"same session again", map[string]any{"code": readOnlyCode, "session_id": "s1"}, nil, 200, false, false, false, 1},
		{"another session", map[string]any{"code": readOnlyCode, "session_id": "s2"}, nil, 200, false, false, true, 2},
		{"new version, new session", map[string]any{"code": variant, "session_id": "s3"}, nil, 200, false, true, true, 3},
		{"new version, old session", map[string]any{"code": variant, "session_id": "s1"}, nil, 200, false, false, false, 3},
		{"idempotency key", map[string]any{"code": readOnlyCode}, map[string]string{"Idempotency-Key": "k1"}, 200, false, false, true, 4},
		{"idempotency key again", map[string]any{"code": readOnlyCode}, map[string]string{"Idempotency-Key": "k1"}, 200, false, false, false, 4},
		{"session wins over the key", map[string]any{"code": readOnlyCode, "session_id": "s2"}, map[string]string{"Idempotency-Key": "k-new"}, 200, false, false, false, 4},
		{"no key at all", map[string]any{"code": readOnlyCode}, nil, 200, false, false, true, 5},
		{"no key at all again", map[string]any{"code": readOnlyCode}, nil, 200, false, false, true, 6},
		{"a single proc__ call is a use", map[string]any{"code": "return tools." + readOnlyName + "(task_id=task_id)", "session_id": "s9"}, nil, 200, false, false, true, 7},
		{"the same use again", map[string]any{"code": "return tools." + readOnlyName + "(task_id=task_id)", "session_id": "s9"}, nil, 200, false, false, false, 7},
		{"a session named like a key", map[string]any{"code": readOnlyCode, "session_id": "k1"}, nil, 200, false, false, true, 8},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			r := s.send(t, req{Method: "POST", Path: "/v1/procedures", Body: st.body, Header: st.header})
			out := mustStatus(t, r, st.status)
			p := procOf(t, out)
			if p["name"] != readOnlyName {
				t.Fatalf("name %v, want %s", p["name"], readOnlyName)
			}
			if out["created"] != st.created || out["version_created"] != st.versionCreated || out["counted"] != st.counted {
				t.Fatalf("created=%v version_created=%v counted=%v, want %v %v %v", out["created"], out["version_created"], out["counted"],
					st.created, st.versionCreated, st.counted)
			}
			if num(p["frequency"]) != st.frequency {
				t.Fatalf("frequency %v, want %d", p["frequency"], st.frequency)
			}
			if got := num(procOf(t, map[string]any{"procedure": s.get(t, "/v1/procedures/"+readOnlyName).JSON(t)})["frequency"]); got != st.frequency {
				t.Fatalf("GET frequency %d, want %d", got, st.frequency)
			}
		})
	}
	t.Run("procedure shape", func(t *testing.T) {
		p := mustStatus(t, s.get(t, "/v1/procedures/"+readOnlyName), 200)
		want := []string{"auto_run", "causes", "code", "code_hash", "created_at", "description", "dialect", "exposed", "external_access",
			"frequency", "input_schema", "last_used_at", "name", "opaque", "parameters", "read_only", "signature", "state_changing_tools",
			"status", "summary", "unknown_tools", "updated_at", "use_count", "warnings"}
		for _, k := range want {
			if _, ok := p[k]; !ok {
				t.Errorf("Procedure lacks %q", k)
			}
		}
		if p["code"] != readOnlyCode || len(p["code_hash"].(string)) != 64 || p["read_only"] != true || p["exposed"] != true || p["status"] != "succeeded" {
			t.Fatalf("procedure %v", p)
		}
		ar := p["auto_run"].(map[string]any)
		for _, k := range []string{"enabled", "active", "granted_by", "granted_at", "reason", "code_hash", "inactive_reason"} {
			if _, ok := ar[k]; !ok {
				t.Errorf("auto_run lacks %q", k)
			}
		}
		if !slices.Equal(toStrings(p["parameters"]), []string{"task_id"}) {
			t.Fatalf("parameters %v", p["parameters"])
		}
		if _, err := time.Parse(time.RFC3339, p["created_at"].(string)); err != nil || !strings.HasSuffix(p["created_at"].(string), "Z") {
			t.Fatalf("created_at %v is not RFC 3339 UTC", p["created_at"])
		}
	})
}

func mustTime(tb testing.TB, v any) time.Time {
	tb.Helper()
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !strings.HasSuffix(s, "Z") {
		tb.Fatalf("time %v is not RFC 3339 UTC", v)
	}
	return at
}

func toStrings(v any) []string {
	out := []string{}
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func names(list []any) []string {
	out := []string{}
	for _, x := range list {
		out = append(out, x.(map[string]any)["name"].(string))
	}
	return out
}

// TestFindAndPlannerView checks every filter of find_all_procedures, the
// total before limit and offset, the order, and the planner view.
func TestFindAndPlannerView(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	const (
		three   = "a = tools.get_task_input_datasets(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nreturn [a, b, tools.fetch_brokerage_context(task_id=task_id)]"
		single  = "return tools.get_retry_chain(task_id=task_id)"
		singleN = "proc__get_retry_chain"
		failedC = "a = tools.search_panda_docs(query=q)\nreturn [a, tools.get_retry_chain(task_id=1)]"
		failedN = "proc__get_retry_chain__search_panda_docs"
		opaque  = "a = tools.get_scout_job_details(task_id=1)\nb = tools.get_task_jobs_summary(task_id=1)\nreturn getattr(tools, \"get_\" + \"retry_chain\")(task_id=1)"
		opaqueN = "proc__get_scout_job_details__get_task_jobs_summary"
	)
	capture := func(code, session, cause, status string) {
		body := map[string]any{"code": code, "session_id": session, "summary": "summary of " + session}
		if cause != "" {
			body["cause"] = map[string]any{"name": cause, "description": "about " + cause}
		}
		if status != "" {
			body["status"] = status
		}
		s.mustCapture(t, body, nil)
	}
	for i := range 4 {
		capture(readOnlyCode, "ro-"+string(rune('a'+i)), "c1", "")
	}
	for i := range 3 {
		capture(killCode, "kill-"+string(rune('a'+i)), "c2", "")
	}
	capture(three, "three-a", "c1", "")
	// A name over 60 characters is cut and hashed.
	threeName := mustCaptureName(t, s, three, "three-a")
	if len(threeName) != 60 || !strings.HasPrefix(threeName, "proc__fetch_brokerage_context__get_retry_chain__get_") {
		t.Fatalf("long name %q", threeName)
	}
	capture(three, "three-b", "", "")
	capture(single, "single", "", "")
	capture(failedC, "failed", "", "failed")
	capture(opaque, "opaque", "", "")
	// A replay of single: a newer last_used_at than its frequency-1 peers.
	mustStatus(t, s.invoke(t, singleN, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic", "session_id": "single"}), 200)

	// Frequencies 4, 3, 2; then frequency 1 by last_used_at (the replay of
	// single, then the latest captures first).
	all := []string{readOnlyName, killName, threeName, singleN, opaqueN, failedN}
	cases := []struct {
		name  string
		query string
		want  []string // in the order of all
		total int
	}{
		{"everything", "", all, 6},
		{"limit and offset", "limit=2&offset=1", []string{killName, threeName}, 6},
		{"offset past the end", "offset=50", []string{}, 6},
		{"one cause", "cause=c1", []string{readOnlyName, threeName}, 2},
		{"any of two causes", "cause=c1&cause=c2", []string{readOnlyName, killName, threeName}, 3},
		{"unknown cause", "cause=nothing", []string{}, 0},
		{"one tool", "tool=get_retry_chain", []string{readOnlyName, threeName, singleN, failedN}, 4},
		{"all of two tools", "tool=get_retry_chain&tool=get_task_jobs_summary", []string{readOnlyName}, 1},
		{"min_tools 3", "min_tools=3", []string{threeName}, 1},
		{"min_tools 2", "min_tools=2", []string{readOnlyName, killName, threeName, failedN, opaqueN}, 5},
		{"read_only false", "read_only=false", []string{killName}, 1},
		{"read_only true", "read_only=true", []string{readOnlyName, threeName, singleN, failedN, opaqueN}, 5},
		{"exposed true", "exposed=true", []string{readOnlyName, threeName}, 2},
		{"exposed false", "exposed=false", []string{killName, singleN, failedN, opaqueN}, 4},
		{"status failed", "status=failed", []string{failedN}, 1},
		{"status succeeded", "status=succeeded", []string{readOnlyName, killName, threeName, singleN, opaqueN}, 5},
		{"filters before the limit", "read_only=true&limit=2&offset=1", []string{threeName, singleN}, 5},
		{"combined", "cause=c1&tool=get_task_input_datasets&exposed=true&min_tools=3&status=succeeded&read_only=true", []string{threeName}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := mustStatus(t, s.get(t, "/v1/procedures?"+tc.query), 200)
			want := []string{}
			for _, n := range all {
				if slices.Contains(tc.want, n) {
					want = append(want, n)
				}
			}
			if tc.name == "limit and offset" || tc.name == "filters before the limit" {
				want = tc.want
			}
			if got := names(out["procedures"].([]any)); !slices.Equal(got, want) {
				t.Fatalf("procedures %v, want %v", got, want)
			}
			if num(out["total"]) != tc.total {
				t.Fatalf("total %v, want %d", out["total"], tc.total)
			}
		})
	}
	t.Run("order is frequency, last_used_at, name", func(t *testing.T) {
		ps := mustStatus(t, s.get(t, "/v1/procedures?limit=500"), 200)["procedures"].([]any)
		for i := 1; i < len(ps); i++ {
			a, b := ps[i-1].(map[string]any), ps[i].(map[string]any)
			fa, fb := num(a["frequency"]), num(b["frequency"])
			la, _ := a["last_used_at"].(string)
			lb, _ := b["last_used_at"].(string)
			ok := fa > fb || fa == fb && (la > lb || la == lb && a["name"].(string) < b["name"].(string))
			if !ok {
				t.Fatalf("%v (%d, %q) before %v (%d, %q)", a["name"], fa, la, b["name"], fb, lb)
			}
		}
	})
	t.Run("planner view", func(t *testing.T) {
		tools := mustStatus(t, s.get(t, "/v1/procedures/tools"), 200)["tools"].([]any)
		if got := names(tools); !slices.Equal(got, []string{readOnlyName, threeName}) {
			t.Fatalf("planner view %v", got)
		}
		d := tools[0].(map[string]any)
		for _, k := range []string{"name", "description", "input_schema", "read_only", "external_access", "auto_run", "frequency", "signature"} {
			if _, ok := d[k]; !ok {
				t.Errorf("descriptor lacks %q: %v", k, d)
			}
		}
		desc := d["description"].(string)
		for _, want := range []string{"get_task_jobs_summary", "get_retry_chain", "summary of ro-", "c1"} {
			if !strings.Contains(desc, want) {
				t.Errorf("description %q does not name %q", desc, want)
			}
		}
		if d["auto_run"] != false || num(d["frequency"]) != 4 || d["read_only"] != true || d["external_access"] != true {
			t.Fatalf("descriptor %v", d)
		}
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"limit=1", []string{readOnlyName}},
			{"cause=c2", []string{}},
			{"cause=c1&cause=c2&limit=5", []string{readOnlyName, threeName}},
		} {
			got := names(mustStatus(t, s.get(t, "/v1/procedures/tools?"+tc.query), 200)["tools"].([]any))
			if !slices.Equal(got, tc.want) {
				t.Errorf("planner view ?%s = %v, want %v", tc.query, got, tc.want)
			}
		}
	})
	t.Run("causes", func(t *testing.T) {
		cs := mustStatus(t, s.get(t, "/v1/causes"), 200)["causes"].([]any)
		byName := map[string]map[string]any{}
		for _, c := range cs {
			byName[c.(map[string]any)["name"].(string)] = c.(map[string]any)
		}
		if c := byName["c1"]; c == nil || num(c["procedures"]) != 2 || num(c["frequency"]) != 5 || c["description"] != "about c1" {
			t.Fatalf("cause c1 = %v (all: %v)", byName["c1"], cs)
		}
		if c := byName["c2"]; c == nil || num(c["procedures"]) != 1 || num(c["frequency"]) != 3 {
			t.Fatalf("cause c2 = %v", byName["c2"])
		}
		one := mustStatus(t, s.get(t, "/v1/causes/c1"), 200)
		procs := one["procedures"].([]any)
		freq := map[string]int{}
		for _, p := range procs {
			freq[p.(map[string]any)["name"].(string)] = num(p.(map[string]any)["frequency"])
		}
		if one["name"] != "c1" || freq[readOnlyName] != 4 || freq[threeName] != 1 || len(freq) != 2 {
			t.Fatalf("cause c1 = %v", one)
		}
	})
	t.Run("graph", func(t *testing.T) {
		g := mustStatus(t, s.get(t, "/v1/graph?procedure="+readOnlyName), 200)
		kinds := map[string]string{}
		for _, n := range g["nodes"].([]any) {
			n := n.(map[string]any)
			for _, k := range []string{"id", "kind", "label", "properties"} {
				if _, ok := n[k]; !ok {
					t.Fatalf("node lacks %q: %v", k, n)
				}
			}
			kinds[n["label"].(string)] = n["kind"].(string)
		}
		if kinds[readOnlyName] != "procedure" || kinds["get_retry_chain"] != "tool" || kinds["c1"] != "cause" {
			t.Fatalf("graph nodes %v", kinds)
		}
		edges := g["edges"].([]any)
		if len(edges) < 3 {
			t.Fatalf("graph edges %v", edges)
		}
		for _, e := range edges {
			e := e.(map[string]any)
			for _, k := range []string{"source", "target", "kind", "frequency"} {
				if _, ok := e[k]; !ok {
					t.Fatalf("edge lacks %q: %v", k, e)
				}
			}
		}
		g = mustStatus(t, s.get(t, "/v1/graph?cause=c2&depth=2"), 200)
		found := false
		for _, n := range g["nodes"].([]any) {
			found = found || n.(map[string]any)["label"] == "kill_job"
		}
		if !found {
			t.Fatalf("cause c2 at depth 2 does not reach kill_job: %v", g)
		}
	})
	up.reset()
}

// TestVersionsPromoteAutoRun checks versions, promote (404, 409 for a
// failed version), the grant's binding to the code hash, auto-run grant and
// revoke, and the decisions they leave (newest first, filtered).
func TestVersionsPromoteAutoRun(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	v1 := s.mustCapture(t, map[string]any{"code": readOnlyCode, "session_id": "a"}, nil)
	v2 := s.mustCapture(t, map[string]any{"code": readOnlyCode + "\n\"v2\"", "session_id": "b"}, nil)
	s.mustCapture(t, map[string]any{"code": readOnlyCode + "\n\"v2\"", "session_id": "c"}, nil)
	bad := s.mustCapture(t, map[string]any{"code": readOnlyCode + "\n\"v3\"", "session_id": "d", "status": "failed"}, nil)
	h1 := procOf(t, v1)["code_hash"].(string)
	if procOf(t, v2)["code_hash"] != h1 || procOf(t, bad)["status"] != "succeeded" {
		t.Fatalf("the first succeeded version must stay current: %v", procOf(t, v2))
	}
	var vs struct {
		Versions []struct {
			CodeHash   string `json:"code_hash"`
			CapturedAt string `json:"captured_at"`
			Frequency  int    `json:"frequency"`
			Status     string `json:"status"`
			Current    bool   `json:"current"`
		} `json:"versions"`
	}
	mustStatus(t, s.get(t, "/v1/procedures/"+readOnlyName+"/versions"), 200)
	s.get(t, "/v1/procedures/"+readOnlyName+"/versions").Into(t, &vs)
	if len(vs.Versions) != 3 {
		t.Fatalf("versions %+v", vs)
	}
	var h2, h3 string
	for _, v := range vs.Versions {
		switch {
		case v.CodeHash == h1:
			if !v.Current || v.Frequency != 1 || v.Status != "succeeded" {
				t.Fatalf("v1 %+v", v)
			}
		case v.Status == "failed":
			h3 = v.CodeHash
		default:
			h2 = v.CodeHash
			if v.Current || v.Frequency != 2 {
				t.Fatalf("v2 %+v", v)
			}
		}
		if _, err := time.Parse(time.RFC3339, v.CapturedAt); err != nil {
			t.Fatalf("captured_at %q", v.CapturedAt)
		}
	}

	grant := mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + readOnlyName + "/auto-run", Body: map[string]any{"enabled": true, "reason": "safe"}}), 200)
	gd, gp := grant["decision"].(map[string]any), procOf(t, grant)
	ar := gp["auto_run"].(map[string]any)
	if gd["kind"] != "grant" || gd["outcome"] != "allowed" || gd["actor"] != "anonymous" || ar["enabled"] != true || ar["active"] != true ||
		ar["code_hash"] != h1 || ar["granted_by"] != "anonymous" || ar["reason"] != "safe" {
		t.Fatalf("grant answer %v", grant)
	}
	if d := mustStatus(t, s.get(t, "/v1/procedures/tools"), 200)["tools"].([]any)[0].(map[string]any); d["auto_run"] != true {
		t.Fatalf("planner view auto_run %v", d["auto_run"])
	}

	cases := []struct {
		name, path string
		body       any
		status     int
		code       string
	}{
		{"promote an unknown hash", "/v1/procedures/" + readOnlyName + "/versions/" + strings.Repeat("0", 64) + "/promote", map[string]any{"reason": "x"}, 404, "not_found"},
		{"promote a failed version", "/v1/procedures/" + readOnlyName + "/versions/" + h3 + "/promote", map[string]any{"reason": "x"}, 409, "conflict"},
		{"promote on an unknown procedure", "/v1/procedures/proc__a__b/versions/" + h2 + "/promote", nil, 404, "not_found"},
		{"promote with a bad body", "/v1/procedures/" + readOnlyName + "/versions/" + h2 + "/promote", map[string]any{"why": "x"}, 400, "invalid_request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustError(t, s.send(t, req{Method: "POST", Path: tc.path, Body: tc.body}), tc.status, tc.code)
		})
	}
	t.Run("promote", func(t *testing.T) {
		out := mustStatus(t, s.post(t, "/v1/procedures/"+readOnlyName+"/versions/"+h2+"/promote", map[string]any{"reason": "cleaner"}), 200)
		p, d := procOf(t, out), out["decision"].(map[string]any)
		if p["code_hash"] != h2 || d["kind"] != "promote" || d["outcome"] != "allowed" || d["code_hash"] != h2 {
			t.Fatalf("promote answer %v", out)
		}
		ar := p["auto_run"].(map[string]any)
		if ar["enabled"] != true || ar["active"] != false || ar["inactive_reason"] != "code_changed" {
			t.Fatalf("the grant bound to v1 must go inactive: %v", ar)
		}
		var after struct {
			Versions []struct {
				CodeHash string `json:"code_hash"`
				Current  bool   `json:"current"`
			} `json:"versions"`
		}
		s.get(t, "/v1/procedures/"+readOnlyName+"/versions").Into(t, &after)
		for _, v := range after.Versions {
			if v.Current != (v.CodeHash == h2) {
				t.Fatalf("versions after promote %+v", after)
			}
		}
		// Promote without a body.
		mustStatus(t, s.send(t, req{Method: "POST", Path: "/v1/procedures/" + readOnlyName + "/versions/" + h1 + "/promote"}), 200)
	})
	t.Run("revoke", func(t *testing.T) {
		out := mustStatus(t, s.send(t, req{Method: "DELETE", Path: "/v1/procedures/" + readOnlyName + "/auto-run", Body: map[string]any{"reason": "done"}}), 200)
		d, ar := out["decision"].(map[string]any), procOf(t, out)["auto_run"].(map[string]any)
		if d["kind"] != "revoke" || d["outcome"] != "allowed" || ar["enabled"] != false || ar["active"] != false {
			t.Fatalf("revoke answer %v", out)
		}
		// PUT enabled:false revokes too; DELETE without a body is fine.
		mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + readOnlyName + "/auto-run", Body: map[string]any{"enabled": false}}), 200)
		mustStatus(t, s.send(t, req{Method: "DELETE", Path: "/v1/procedures/" + readOnlyName + "/auto-run"}), 200)
	})
	t.Run("decisions newest first and filtered", func(t *testing.T) {
		all := s.decisions(t, "")
		var kinds []string
		for i, d := range all {
			kinds = append(kinds, d["kind"].(string)+"/"+d["outcome"].(string))
			if i > 0 && mustTime(t, d["at"]).After(mustTime(t, all[i-1]["at"])) {
				t.Fatalf("decisions not newest first: %v", all)
			}
			for _, k := range []string{"id", "kind", "procedure", "code_hash", "outcome", "reason", "actor", "allowed_tools", "at"} {
				if _, ok := d[k]; !ok {
					t.Fatalf("decision lacks %q: %v", k, d)
				}
			}
		}
		want := []string{"revoke/allowed", "revoke/allowed", "revoke/allowed", "promote/allowed", "promote/allowed", "promote/denied", "grant/allowed", "catalogue/allowed"}
		if !slices.Equal(kinds, want) {
			t.Fatalf("decision kinds %v, want %v", kinds, want)
		}
		for _, tc := range []struct {
			query string
			n     int
		}{
			{"kind=promote", 3}, {"kind=grant", 1}, {"kind=invoke", 0}, {"limit=2", 2},
			{"procedure=" + readOnlyName, 7}, {"procedure=proc__other", 0}, {"procedure=" + readOnlyName + "&kind=revoke&limit=1", 1},
		} {
			if got := s.decisions(t, tc.query); len(got) != tc.n {
				t.Errorf("decisions?%s: %d, want %d", tc.query, len(got), tc.n)
			}
		}
	})
	up.mustSeeNothing(t, "versions, grants and promotions")
}

// TestCatalogueReclassifies checks GET and PUT /v1/tools, and that a tool
// flipped to read_only false re-classifies its procedures at once: the next
// automatic invoke is denied and reaches no tool.
func TestCatalogueReclassifies(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	s := mustServe(t, serverOpts{Upstream: up})
	mustCaptureName(t, s, readOnlyCode, "a")
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/procedures/" + readOnlyName + "/auto-run", Body: map[string]any{"enabled": true}}), 200)
	var cat struct {
		Tools    []map[string]any `json:"tools"`
		Revision string           `json:"revision"`
	}
	mustStatus(t, s.get(t, "/v1/tools"), 200)
	s.get(t, "/v1/tools").Into(t, &cat)
	if len(cat.Tools) != 14 || !strings.HasPrefix(cat.Revision, "sha256:") {
		t.Fatalf("catalogue %d tools, revision %q", len(cat.Tools), cat.Revision)
	}
	args := map[string]any{"arguments": map[string]any{"task_id": 3}, "phase": "automatic"}
	mustStatus(t, s.invoke(t, readOnlyName, args), 200)

	flipped := make([]map[string]any, len(cat.Tools))
	for i, tool := range cat.Tools {
		c := map[string]any{}
		for k, v := range tool {
			c[k] = v
		}
		if c["name"] == "get_retry_chain" {
			c["read_only"] = false
		}
		flipped[i] = c
	}
	put := mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": flipped}}), 200)
	if put["revision"] == cat.Revision || len(put["tools"].([]any)) != 14 {
		t.Fatalf("put answer %v", put)
	}
	if got := mustStatus(t, s.get(t, "/v1/tools"), 200)["revision"]; got != put["revision"] {
		t.Fatalf("GET revision %v after PUT %v", got, put["revision"])
	}
	p := mustStatus(t, s.get(t, "/v1/procedures/"+readOnlyName), 200)
	ar := p["auto_run"].(map[string]any)
	if p["read_only"] != false || !slices.Equal(toStrings(p["state_changing_tools"]), []string{"get_retry_chain"}) || p["exposed"] != false ||
		ar["active"] != false || ar["inactive_reason"] != "not_read_only" {
		t.Fatalf("after the flip: %v", p)
	}
	if tools := mustStatus(t, s.get(t, "/v1/procedures/tools"), 200)["tools"].([]any); len(tools) != 0 {
		t.Fatalf("planner view after the flip: %v", tools)
	}
	up.reset()
	d := mustError(t, s.invoke(t, readOnlyName, args), 403, "denied")
	if d["decision"].(map[string]any)["reason"] != "state_changing_in_automatic_phase" {
		t.Fatalf("decision %v", d)
	}
	up.mustSeeNothing(t, "denied after the flip")

	// Unknown tool: a catalogue without get_retry_chain fails closed.
	var without []map[string]any
	for _, tool := range cat.Tools {
		if tool["name"] != "get_retry_chain" {
			without = append(without, tool)
		}
	}
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": without}}), 200)
	p = mustStatus(t, s.get(t, "/v1/procedures/"+readOnlyName), 200)
	if p["read_only"] != false || !slices.Equal(toStrings(p["unknown_tools"]), []string{"get_retry_chain"}) {
		t.Fatalf("with an unknown tool: %v", p)
	}
	mustError(t, s.invoke(t, readOnlyName, args), 403, "denied")
	up.mustSeeNothing(t, "denied with an unknown tool")

	// Back: read-only again, and the grant is active again.
	mustStatus(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: map[string]any{"tools": cat.Tools}}), 200)
	p = mustStatus(t, s.get(t, "/v1/procedures/"+readOnlyName), 200)
	if p["read_only"] != true || p["auto_run"].(map[string]any)["active"] != true {
		t.Fatalf("after restoring: %v", p)
	}
	t.Run("invalid catalogues", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			body string
		}{
			{"duplicate names", `{"tools": [{"name": "a"}, {"name": "a"}]}`},
			{"empty name", `{"tools": [{"name": ""}]}`},
			{"no tools key", `{}`},
			{"tools null", `{"tools": null}`},
			{"input_schema not an object", `{"tools": [{"name": "a", "input_schema": 1}]}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				mustError(t, s.send(t, req{Method: "PUT", Path: "/v1/tools", Body: tc.body}), 400, "invalid_request")
			})
		}
		if got := mustStatus(t, s.get(t, "/v1/tools"), 200)["revision"]; got != cat.Revision {
			t.Fatalf("a rejected PUT changed the catalogue: %v", got)
		}
	})
	_ = url.PathEscape
}

// TestNestedReplaysDoNotStarveTheSandbox: more concurrent invokes of a
// procedure that calls another than the sandbox has workers for outer runs
// all succeed: nested calls have their own workers.
func TestNestedReplaysDoNotStarveTheSandbox(t *testing.T) {
	t.Parallel()
	up := mustUpstream(t)
	up.setDelay("get_task_jobs_summary", 200*time.Millisecond)
	s := mustServe(t, serverOpts{Upstream: up}) // one warm worker: at most 4 outer runs at once
	inner := mustCaptureName(t, s, "a = tools.get_task_jobs_summary(task_id=task_id)\nreturn [a, tools.get_retry_chain(task_id=task_id)]\n", "n1")
	outer := mustCaptureName(t, s, "x = tools."+inner+"(task_id=task_id)\nreturn [x, tools.get_task_input_datasets(task_id=task_id)]\n", "n2")
	const n = 6
	statuses := make(chan string, n)
	for i := 0; i < n; i++ {
		go func() {
			r := s.invoke(t, outer, map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "automatic"})
			var out map[string]any
			if r.Status != 200 || json.Unmarshal(r.Body, &out) != nil {
				statuses <- fmt.Sprintf("HTTP %d %s", r.Status, r.Body)
				return
			}
			statuses <- fmt.Sprint(out["status"], " ", out["error"])
		}()
	}
	for i := 0; i < n; i++ {
		if st := <-statuses; st != "succeeded <nil>" {
			t.Fatalf("a nested replay failed: %s", st)
		}
	}
}
