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
	"Decision": `{"type": "object", "properties": {"id": {"type": "string"}, "kind": {"type": "string", "enum": ["invoke", "grant", "revoke", "promote"]},
		"procedure": {"type": "string"}, "code_hash": {"type": "string"}, "phase": {"type": "string"},
		"outcome": {"type": "string", "enum": ["allowed", "denied"]}, "reason": {"type": "string"}, "actor": {"type": "string"},
		"allowed_tools": {"type": "array", "items": {"type": "string"}}, "at": {"type": "string", "format": "date-time"}}}`,
	"Tool": `{"type": "object", "properties": {"name": {"type": "string"}, "description": {"type": "string"}, "read_only": {"type": "boolean"},
		"external_access": {"type": "boolean"}, "input_schema": {"type": "object"}}}`,
	"Procedure": `{"type": "object", "properties": {"name": {"type": "string"}, "signature": {"type": "array", "items": {"type": "string"}},
		"summary": {"type": "string"}, "description": {"type": "string"}, "code": {"type": "string"}, "dialect": {"type": "string"},
		"code_hash": {"type": "string"}, "parameters": {"type": "array", "items": {"type": "string"}}, "input_schema": {"type": "object"},
		"status": {"type": "string"}, "frequency": {"type": "integer"}, "use_count": {"type": "integer"}, "read_only": {"type": "boolean"},
		"state_changing_tools": {"type": "array", "items": {"type": "string"}}, "unknown_tools": {"type": "array", "items": {"type": "string"}},
		"opaque": {"type": "boolean"}, "warnings": {"type": "array"}, "external_access": {"type": "boolean"}, "exposed": {"type": "boolean"},
		"auto_run": {"type": "object"}, "causes": {"type": "array"}, "created_at": {"type": "string", "format": "date-time"},
		"updated_at": {"type": "string", "format": "date-time"}, "last_used_at": {"type": ["string", "null"], "format": "date-time"}}}`,
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
		op := map[string]any{
			"summary":     rt.summary,
			"operationId": operationID(rt),
			"responses": map[string]any{
				"200":     map[string]any{"description": "OK", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}},
				"default": map[string]any{"description": "Error", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}},
			},
		}
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
		if rt.body != "" {
			op["requestBody"] = map[string]any{"required": rt.method != "DELETE" && rt.body != "ReasonBody",
				"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/" + rt.body}}}}
		}
		if rt.scope != "" {
			op["security"] = []any{map[string]any{"bearer": []any{string(rt.scope)}}}
		}
		item[strings.ToLower(rt.method)] = op
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
