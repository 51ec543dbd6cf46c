package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
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
		{"GET", "/v1/whoami", nil, "WhoAmI"},
		{"GET", "/readyz", nil, "Readiness"},
		{"GET", "/v1/upstreams", nil, "Upstreams"},
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

// TestOpenAPIDocumentIsValid validates the served /openapi.json against the
// official OpenAPI 3.1 schema (testdata), and every component schema against
// the JSON Schema 2020-12 meta-schema (the 3.1 schema leaves Schema Objects
// to it); and checks the Idempotency-Key header is documented where docs/api.md
// accepts it.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	e := mustEnv(t, envOpts{})
	status, body := e.do(t, http.DefaultClient, "GET", "/openapi.json", nil)
	if status != 200 {
		t.Fatalf("/openapi.json: %d %s", status, body)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "openapi-3.1.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	comp.Draft = jsonschema.Draft2020
	const oas = "https://spec.openapis.org/oas/3.1/schema/2022-10-07"
	if err := comp.AddResource(oas, bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	oasSchema, err := comp.Compile(oas)
	if err != nil {
		t.Fatal(err)
	}
	if err := oasSchema.Validate(doc); err != nil {
		t.Fatalf("/openapi.json is not a valid OpenAPI 3.1 document: %#v", err)
	}
	meta, err := comp.Compile("https://json-schema.org/draft/2020-12/schema")
	if err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for name, s := range schemas {
		if err := meta.Validate(s); err != nil {
			t.Errorf("components.schemas.%s is not a JSON Schema: %v", name, err)
		}
	}

	// The meta-schema must be able to fail: a document with a mistake.
	bad := map[string]any{"openapi": "3.1.0", "info": map[string]any{"title": "x"}, "paths": map[string]any{}}
	if err := oasSchema.Validate(bad); err == nil {
		t.Fatal("a document without info.version validates: the schema checks nothing")
	}

	paths := doc["paths"].(map[string]any)
	for _, op := range []struct{ path, method string }{{"/v1/procedures", "post"}, {"/v1/procedures/{name}/invoke", "post"}} {
		o := paths[op.path].(map[string]any)[op.method].(map[string]any)
		found := false
		params, _ := o["parameters"].([]any)
		for _, p := range params {
			if pm := p.(map[string]any); pm["name"] == "Idempotency-Key" && pm["in"] == "header" {
				found = true
			}
		}
		if !found {
			t.Errorf("%s %s does not document the Idempotency-Key header: %v", op.method, op.path, params)
		}
	}
}
