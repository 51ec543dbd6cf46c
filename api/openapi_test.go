package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// TestAnswersMatchTheOpenAPISchemas: live answers of every route with a
// JSON answer validate against the schema /openapi.json gives for them.
func TestAnswersMatchTheOpenAPISchemas(t *testing.T) {
	e := mustEnv(t, envOpts{})
	c := http.DefaultClient
	doc, err := json.Marshal(e.srv.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	comp.Draft = jsonschema.Draft2020
	if err := comp.AddResource("openapi.json", bytes.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	schema := func(name string) *jsonschema.Schema {
		t.Helper()
		s, err := comp.Compile("openapi.json#/components/schemas/" + name)
		if err != nil {
			t.Fatalf("schema %s: %v", name, err)
		}
		return s
	}
	status, body := e.do(t, c, "POST", "/v1/procedures", map[string]any{"code": readOnlyCode, "session_id": "s1",
		"cause": map[string]any{"name": "stuck"}})
	if status != 201 {
		t.Fatalf("capture: %d %s", status, body)
	}
	var captured struct {
		Procedure struct {
			Name     string `json:"name"`
			CodeHash string `json:"code_hash"`
		} `json:"procedure"`
	}
	_ = json.Unmarshal(body, &captured)
	name := captured.Procedure.Name
	checks := []struct {
		method, path string
		body         any
		schema       string
	}{
		{"POST", "/v1/procedures", map[string]any{"code": readOnlyCode, "session_id": "s2"}, "CaptureAnswer"},
		{"GET", "/healthz", nil, "Status"},
		{"GET", "/readyz", nil, "Status"},
		{"GET", "/v1/tools", nil, "Catalogue"},
		{"GET", "/v1/procedures", nil, "ProcedureList"},
		{"GET", "/v1/procedures/tools", nil, "PlannerTools"},
		{"GET", "/v1/procedures/" + name, nil, "Procedure"},
		{"GET", "/v1/procedures/" + name + "/versions", nil, "Versions"},
		{"GET", "/v1/procedures/" + name + "/versions/" + captured.Procedure.CodeHash, nil, "Version"},
		{"GET", "/v1/procedures/" + name + "/versions/nope", nil, "Error"},
		{"POST", "/v1/procedures/" + name + "/invoke", map[string]any{"phase": "automatic", "arguments": map[string]any{"task_id": 1}}, "InvokeAnswer"},
		{"PUT", "/v1/procedures/" + name + "/auto-run", map[string]any{"enabled": true, "reason": "ok"}, "DecisionAnswer"},
		{"DELETE", "/v1/procedures/" + name + "/auto-run", nil, "DecisionAnswer"},
		{"POST", "/v1/procedures/" + name + "/versions/" + captured.Procedure.CodeHash + "/promote", nil, "DecisionAnswer"},
		{"GET", "/v1/causes", nil, "Causes"},
		{"GET", "/v1/causes/stuck", nil, "CauseAnswer"},
		{"GET", "/v1/graph?procedure=" + name, nil, "Graph"},
		{"GET", "/v1/decisions", nil, "Decisions"},
		{"GET", "/v1/procedures/proc__nope", nil, "Error"},
		{"PUT", "/v1/tools", map[string]any{"tools": testTools}, "Catalogue"},
	}
	for _, ch := range checks {
		t.Run(ch.method+" "+ch.path, func(t *testing.T) {
			status, body := e.do(t, c, ch.method, ch.path, ch.body)
			if status >= 500 {
				t.Fatalf("status %d: %s", status, body)
			}
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatalf("not JSON: %s", body)
			}
			if err := schema(ch.schema).Validate(v); err != nil {
				t.Fatalf("the answer does not match %s: %v\n%s", ch.schema, err, body)
			}
		})
	}
}
