package api

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
)

// responseSchemas describe the answers, for the OpenAPI document.
var responseSchemas = map[string]string{
	"Error": `{"type": "object", "required": ["error"], "properties": {"error": {"type": "object",
		"required": ["code", "message", "details"], "properties": {
		"code": {"type": "string", "enum": ["invalid_request", "unauthorized", "forbidden", "denied", "not_found", "conflict",
			"payload_too_large", "invalid_code", "invalid_arguments", "unavailable", "internal"]},
		"message": {"type": "string"}, "details": {"type": "object"}}}}}`,
	"Status": `{"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}}`,
	"Decision": `{"type": "object", "required": ["id", "kind", "procedure", "code_hash", "phase", "outcome", "reason", "actor", "allowed_tools", "at"],
		"properties": {"id": {"type": "string"}, "kind": {"type": "string", "enum": ["invoke", "grant", "revoke", "promote", "catalogue"]},
		"procedure": {"type": "string"}, "code_hash": {"type": "string"}, "phase": {"type": "string"},
		"outcome": {"type": "string", "enum": ["allowed", "denied"]}, "reason": {"type": "string"}, "actor": {"type": "string"},
		"allowed_tools": {"type": "array", "items": {"type": "string"}}, "at": {"type": "string", "format": "date-time"},
		"note": {"type": "string"}, "suggestion": {"type": "string"}}}`,
	"Tool": `{"type": "object", "required": ["name", "read_only", "external_access"], "properties": {"name": {"type": "string"},
		"description": {"type": "string"}, "read_only": {"type": "boolean"}, "external_access": {"type": "boolean"}, "input_schema": {"type": "object"}}}`,
	"Catalogue": `{"type": "object", "required": ["tools", "revision"], "properties": {
		"tools": {"type": "array", "items": {"$ref": "#/components/schemas/Tool"}}, "revision": {"type": "string"}}}`,
	"Procedure": `{"type": "object", "required": ["name", "signature", "code_hash", "status", "frequency", "read_only", "exposed", "auto_run"],
		"properties": {"name": {"type": "string"}, "signature": {"type": "array", "items": {"type": "string"}},
		"summary": {"type": "string"}, "description": {"type": "string"}, "code": {"type": "string"}, "dialect": {"type": "string"},
		"code_hash": {"type": "string"}, "parameters": {"type": "array", "items": {"type": "string"}}, "input_schema": {"type": "object"},
		"status": {"type": "string", "enum": ["succeeded", "failed"]}, "frequency": {"type": "integer"}, "use_count": {"type": "integer"},
		"read_only": {"type": "boolean"}, "state_changing_tools": {"type": "array", "items": {"type": "string"}},
		"unknown_tools": {"type": "array", "items": {"type": "string"}}, "opaque": {"type": "boolean"},
		"warnings": {"type": "array", "items": {"type": "object", "properties": {"line": {"type": "integer"}, "column": {"type": "integer"}, "message": {"type": "string"}}}},
		"external_access": {"type": "boolean"}, "exposed": {"type": "boolean"},
		"auto_run": {"type": "object", "properties": {"enabled": {"type": "boolean"}, "active": {"type": "boolean"},
			"granted_by": {"type": ["string", "null"]}, "granted_at": {"type": ["string", "null"], "format": "date-time"},
			"reason": {"type": ["string", "null"]}, "code_hash": {"type": ["string", "null"]}, "inactive_reason": {"type": ["string", "null"]}}},
		"causes": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "frequency": {"type": "integer"}}}},
		"created_at": {"type": "string", "format": "date-time"}, "updated_at": {"type": "string", "format": "date-time"},
		"last_used_at": {"type": ["string", "null"], "format": "date-time"}}}`,
	"CaptureAnswer": `{"type": "object", "required": ["procedure", "created", "version_created", "counted"], "properties": {
		"procedure": {"$ref": "#/components/schemas/Procedure"}, "created": {"type": "boolean"},
		"version_created": {"type": "boolean"}, "counted": {"type": "boolean"}}}`,
	"ProcedureList": `{"type": "object", "required": ["procedures", "total"], "properties": {
		"procedures": {"type": "array", "items": {"$ref": "#/components/schemas/Procedure"}}, "total": {"type": "integer"}}}`,
	"PlannerTools": `{"type": "object", "required": ["tools"], "properties": {"tools": {"type": "array", "items": {"type": "object",
		"required": ["name", "description", "input_schema", "read_only", "external_access", "auto_run", "frequency", "signature"],
		"properties": {"name": {"type": "string"}, "description": {"type": "string"}, "input_schema": {"type": "object"},
		"read_only": {"type": "boolean"}, "external_access": {"type": "boolean"}, "auto_run": {"type": "boolean"},
		"frequency": {"type": "integer"}, "signature": {"type": "array", "items": {"type": "string"}}}}}}}`,
	"Versions": `{"type": "object", "required": ["versions"], "properties": {"versions": {"type": "array", "items": {"type": "object",
		"additionalProperties": false, "required": ["code_hash", "captured_at", "frequency", "status", "current"], "properties": {"code_hash": {"type": "string"},
		"captured_at": {"type": "string", "format": "date-time"}, "frequency": {"type": "integer"},
		"status": {"type": "string", "enum": ["succeeded", "failed"]}, "current": {"type": "boolean"}}}}}}`,
	"Version": `{"type": "object", "required": ["code_hash", "code", "dialect", "status", "current", "captured_at", "frequency"], "properties": {
		"code_hash": {"type": "string"}, "code": {"type": "string"}, "dialect": {"type": "string"},
		"parameters": {"type": "array", "items": {"type": "string"}}, "input_schema": {"type": "object"}, "summary": {"type": "string"},
		"opaque": {"type": "boolean"}, "warnings": {"type": "array"}, "status": {"type": "string", "enum": ["succeeded", "failed"]},
		"frequency": {"type": "integer"}, "captured_at": {"type": "string", "format": "date-time"}, "current": {"type": "boolean"}}}`,
	"DecisionAnswer": `{"type": "object", "required": ["procedure", "decision"], "properties": {
		"procedure": {"$ref": "#/components/schemas/Procedure"}, "decision": {"$ref": "#/components/schemas/Decision"}}}`,
	"InvokeAnswer": `{"type": "object", "required": ["decision", "status", "result", "output", "calls", "error"], "properties": {
		"decision": {"$ref": "#/components/schemas/Decision"}, "status": {"type": "string", "enum": ["succeeded", "failed"]},
		"result": {}, "output": {"type": "string"},
		"calls": {"type": "array", "items": {"type": "object", "properties": {"tool": {"type": "string"}, "ok": {"type": "boolean"}, "duration_ms": {"type": "integer"}}}},
		"error": {"type": ["object", "null"], "properties": {"code": {"type": "string", "enum": ["tool_failed", "tool_refused", "step_limit",
			"timeout", "memory_limit", "call_limit", "runtime_error"]}, "message": {"type": "string"}, "tool": {"type": "string"}}}}}`,
	"Causes": `{"type": "object", "required": ["causes"], "properties": {"causes": {"type": "array", "items": {"type": "object",
		"properties": {"name": {"type": "string"}, "description": {"type": "string"}, "procedures": {"type": "integer"}, "frequency": {"type": "integer"}}}}}}`,
	"CauseAnswer": `{"type": "object", "required": ["name", "procedures"], "properties": {"name": {"type": "string"}, "description": {"type": "string"},
		"frequency": {"type": "integer"}, "procedure_count": {"type": "integer"},
		"procedures": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "frequency": {"type": "integer"}}}}}}`,
	"Graph": `{"type": "object", "required": ["nodes", "edges"], "properties": {
		"nodes": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"},
			"kind": {"type": "string", "enum": ["procedure", "cause", "tool"]}, "label": {"type": "string"}, "properties": {"type": "object"}}}},
		"edges": {"type": "array", "items": {"type": "object", "properties": {"source": {"type": "string"}, "target": {"type": "string"},
			"kind": {"type": "string"}, "frequency": {"type": "integer"}}}}, "truncated": {"type": "boolean"}}}`,
	"Decisions": `{"type": "object", "required": ["decisions", "next"], "properties": {
		"decisions": {"type": "array", "items": {"$ref": "#/components/schemas/Decision"}}, "next": {"type": ["string", "null"]}}}`,
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// OpenAPI returns the API as an OpenAPI 3.1 document built from the route
// table and the request schemas the server validates with.
func (s *Server) OpenAPI() map[string]any {
	components := map[string]any{}
	for name, text := range requestSchemas {
		components[name] = mustJSON(text)
	}
	for name, text := range responseSchemas {
		components[name] = mustJSON(text)
	}
	paths := map[string]any{}
	for _, rt := range s.routeTable() {
		item, _ := paths[rt.pattern].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[rt.pattern] = item
		}
		ok := map[string]any{"description": "OK", "content": map[string]any{"text/plain": map[string]any{"schema": map[string]any{"type": "string"}}}}
		if rt.response != "" {
			ok = jsonResponse("OK", rt.response)
		}
		responses := map[string]any{"200": ok, "default": jsonResponse("Error", "Error")}
		if rt.response == "CaptureAnswer" {
			responses["201"] = jsonResponse("Created: the procedure is new", rt.response)
		}
		op := map[string]any{"summary": rt.summary, "operationId": operationID(rt), "responses": responses}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(rt.pattern, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, q := range rt.query {
			schema := map[string]any{"type": q.typ}
			if len(q.enum) > 0 {
				schema["enum"] = q.enum
			}
			if q.typ == "integer" {
				schema["minimum"], schema["maximum"] = q.min, q.max
			}
			if q.repeatable {
				schema = map[string]any{"type": "array", "items": schema}
			}
			params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.doc, "schema": schema, "explode": true})
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if rt.method == "POST" && (rt.pattern == "/v1/procedures" || strings.HasSuffix(rt.pattern, "/invoke")) {
			params = append(params, map[string]any{"name": "Idempotency-Key", "in": "header", "schema": map[string]any{"type": "string", "maxLength": 512},
				"description": "the usage key when there is no session_id"})
		}
		if rt.body != "" {
			op["requestBody"] = map[string]any{"required": rt.method != "DELETE" && rt.body != "ReasonBody",
				"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/" + rt.body}}}}
		}
		if rt.scope != "" {
			op["security"] = []any{map[string]any{"bearer": []any{string(rt.scope)}}}
		}
		item[strings.ToLower(rt.method)] = op
	}
	for path, summary := range s.mcpPaths {
		item := map[string]any{}
		for _, method := range []string{"get", "post", "delete"} {
			item[method] = map[string]any{"summary": summary + " (JSON-RPC; see the MCP specification)",
				"operationId": method + strings.NewReplacer("/", "_").Replace(path),
				"security":    []any{map[string]any{"bearer": []any{"read"}}},
				"responses":   map[string]any{"200": map[string]any{"description": "MCP messages"}, "default": jsonResponse("Error", "Error")}}
		}
		paths[path] = item
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]any{"title": "procgraph", "version": "1"},
		"paths":   paths,
		"components": map[string]any{
			"schemas":         components,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
		},
	}
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, s.OpenAPI())
	return nil
}

func operationID(rt route) string {
	id := strings.ToLower(rt.method) + strings.NewReplacer("/", "_", "{", "", "}", "", "-", "_", ".", "_").Replace(rt.pattern)
	return id
}

func mustJSON(text string) any {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		panic("api: schema does not parse: " + err.Error())
	}
	return v
}

// jsonResponse is an OpenAPI response whose body is the named schema.
func jsonResponse(description, schema string) map[string]any {
	return map[string]any{"description": description,
		"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/" + schema}}}}
}
