package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/procedures"
)

// driftedTools is testTools with get_jobs's input schema changed (and, when
// describe, fetch_logs's description: not drift).
func driftedTools(describe bool) []any {
	out := []any{}
	for _, t := range testTools {
		m := map[string]any{"name": t.Name, "read_only": t.ReadOnly, "external_access": t.ExternalAccess}
		if t.Name == "get_jobs" {
			m["input_schema"] = map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "string"}}}
		}
		if describe && t.Name == "fetch_logs" {
			m["description"] = "new words only"
		}
		out = append(out, m)
	}
	return out
}

type driftView struct {
	Stale bool               `json:"stale"`
	Drift []procedures.Drift `json:"drift"`
	AR    struct {
		Active         bool    `json:"active"`
		InactiveReason *string `json:"inactive_reason"`
	} `json:"auto_run"`
}

// TestDriftRoundTrip: over HTTP, a catalogue change that changes a tool's
// contract makes the procedure's current version stale in every view (the
// procedure, its versions, one version, the list, the planner view,
// GET /v1/drift) and leaves its grant inactive (catalogue_drift); a
// description change and a malformed catalogue change nothing;
// accept-drift (audited, kind drift) clears it but no grant; an unknown
// version or one not stale is a clear error; a successful run under the
// current catalogue clears it too.
func TestDriftRoundTrip(t *testing.T) {
	e := mustEnv(t, envOpts{})
	ctx := context.Background()
	out, err := e.svc.Capture(ctx, procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	name, hash := out.Procedure.Name, out.Procedure.CodeHash
	p := "/v1/procedures/" + name
	c := http.DefaultClient
	get := func(path string, v any) {
		t.Helper()
		code, body := e.do(t, c, "GET", path, nil)
		if code != 200 || json.Unmarshal(body, v) != nil {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
	}
	var drift struct {
		Versions []procedures.DriftEntry `json:"versions"`
		Total    int                     `json:"total"`
	}
	get("/v1/drift", &drift)
	if drift.Total != 0 || len(drift.Versions) != 0 {
		t.Fatalf("before any change: %+v", drift)
	}
	if code, body := e.do(t, c, "PUT", p+"/auto-run", map[string]any{"enabled": true, "reason": "reviewed"}); code != 200 {
		t.Fatalf("grant: %d %s", code, body)
	}

	// A description change is not drift.
	if code, body := e.do(t, c, "PUT", "/v1/tools", map[string]any{"tools": driftedTools(true)[1:]}); code != 200 {
		t.Fatalf("PUT tools: %d %s", code, body)
	}
	if code, body := e.do(t, c, "PUT", "/v1/tools", map[string]any{"tools": append([]any{testTools[0]}, driftedTools(true)[1:]...)}); code != 200 {
		t.Fatalf("PUT tools: %d %s", code, body)
	}
	var dv driftView
	get(p, &dv)
	if dv.Stale || len(dv.Drift) != 0 || !dv.AR.Active {
		t.Fatalf("after a description change: %+v", dv)
	}

	// A malformed catalogue changes nothing.
	bad := append(driftedTools(false), map[string]any{"name": "get_jobs", "read_only": true})
	if code, body := e.do(t, c, "PUT", "/v1/tools", map[string]any{"tools": bad}); code != http.StatusUnprocessableEntity && code != http.StatusBadRequest {
		t.Fatalf("PUT of a malformed catalogue: %d %s", code, body)
	}
	get(p, &dv)
	if dv.Stale {
		t.Fatalf("a refused catalogue made the version stale: %+v", dv)
	}

	if code, body := e.do(t, c, "PUT", "/v1/tools", map[string]any{"tools": driftedTools(false)}); code != 200 {
		t.Fatalf("PUT tools: %d %s", code, body)
	}
	want := []procedures.Drift{{Tool: "get_jobs", Change: procedures.DriftInputSchema}}
	get(p, &dv)
	if !dv.Stale || !slices.Equal(driftKinds(dv.Drift), driftKinds(want)) || dv.AR.Active || dv.AR.InactiveReason == nil || *dv.AR.InactiveReason != binding.InactiveCatalogueDrift {
		t.Fatalf("after a contract change: %+v", dv)
	}
	var vs struct{ Versions []driftView }
	get(p+"/versions", &vs)
	if len(vs.Versions) != 1 || !vs.Versions[0].Stale || !slices.Equal(driftKinds(vs.Versions[0].Drift), driftKinds(want)) {
		t.Fatalf("versions: %+v", vs)
	}
	get(p+"/versions/"+hash, &dv)
	if !dv.Stale || !slices.Equal(driftKinds(dv.Drift), driftKinds(want)) {
		t.Fatalf("version: %+v", dv)
	}
	var list struct{ Procedures []driftView }
	get("/v1/procedures", &list)
	if len(list.Procedures) != 1 || !list.Procedures[0].Stale || !slices.Equal(driftKinds(list.Procedures[0].Drift), driftKinds(want)) {
		t.Fatalf("list: %+v", list)
	}
	var planner struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Stale       bool   `json:"stale"`
		} `json:"tools"`
	}
	get("/v1/procedures/tools", &planner)
	if len(planner.Tools) != 1 || !planner.Tools[0].Stale || !strings.Contains(planner.Tools[0].Description, "Stale: since it last worked, get_jobs changed its input_schema.") {
		t.Fatalf("planner view: %+v", planner)
	}
	get("/v1/drift", &drift)
	if drift.Total != 1 || len(drift.Versions) != 1 || drift.Versions[0].Procedure != name || drift.Versions[0].CodeHash != hash ||
		!drift.Versions[0].Current || !slices.Equal(driftKinds(drift.Versions[0].Drift), driftKinds(want)) {
		t.Fatalf("GET /v1/drift: %+v", drift)
	}
	if code, body := e.do(t, c, "GET", "/v1/drift?limit=0", nil); code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
		t.Fatalf("limit 0: %d %s", code, body)
	}

	// accept-drift: unknown version, then accepted, then not stale.
	unknown := strings.Repeat("0", 64)
	if code, body := e.do(t, c, "POST", p+"/versions/"+unknown+"/accept-drift", map[string]any{"reason": "x"}); code != http.StatusNotFound {
		t.Fatalf("accept-drift of an unknown version: %d %s", code, body)
	}
	if code, body := e.do(t, c, "POST", "/v1/procedures/proc__nope/versions/"+hash+"/accept-drift", nil); code != http.StatusNotFound {
		t.Fatalf("accept-drift of an unknown procedure: %d %s", code, body)
	}
	code, body := e.do(t, c, "POST", p+"/versions/"+hash+"/accept-drift", map[string]any{"reason": "the string id is fine"})
	var ans struct {
		Procedure driftView      `json:"procedure"`
		Decision  audit.Decision `json:"decision"`
	}
	if code != 200 || json.Unmarshal(body, &ans) != nil {
		t.Fatalf("accept-drift: %d %s", code, body)
	}
	if ans.Procedure.Stale || len(ans.Procedure.Drift) != 0 || ans.Decision.Kind != audit.KindDrift ||
		ans.Decision.Reason != audit.ReasonDriftAccepted || ans.Decision.Note != "the string id is fine" || ans.Decision.CodeHash != hash {
		t.Fatalf("accept-drift answered %s", body)
	}
	if ans.Procedure.AR.Active {
		t.Fatalf("accept-drift re-activated the grant: %s", body)
	}
	get("/v1/drift", &drift)
	if drift.Total != 0 {
		t.Fatalf("after accept: %+v", drift)
	}
	code, body = e.do(t, c, "POST", p+"/versions/"+hash+"/accept-drift", nil)
	if code != http.StatusConflict || !strings.Contains(string(body), `"reason":"not_stale"`) {
		t.Fatalf("accept-drift of a version not stale: %d %s", code, body)
	}
	var ds struct{ Decisions []audit.Decision }
	get("/v1/decisions?kind=drift", &ds)
	if len(ds.Decisions) != 1 {
		t.Fatalf("drift decisions: %+v", ds)
	}

	// A run that succeeds under the current catalogue clears it.
	if code, body := e.do(t, c, "PUT", "/v1/tools", map[string]any{"tools": testTools}); code != 200 {
		t.Fatalf("PUT tools: %d %s", code, body)
	}
	get(p, &dv)
	if !dv.Stale {
		t.Fatalf("changed back: %+v", dv)
	}
	code, body = e.do(t, c, "POST", p+"/invoke", map[string]any{"arguments": map[string]any{"task_id": 1}, "phase": "interactive"})
	if code != 200 || !strings.Contains(string(body), `"status":"succeeded"`) {
		t.Fatalf("invoke: %d %s", code, body)
	}
	get(p, &dv)
	if dv.Stale || len(dv.Drift) != 0 {
		t.Fatalf("a successful run left the drift: %+v", dv)
	}
}

// driftKinds is each drift entry as "tool change" (what changed in a
// schema, Changes, is procedures' TestSchemaDiff's).
func driftKinds(ds []procedures.Drift) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Tool + " " + d.Change
	}
	return out
}
