package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/mcpdispatch"
)

// responseSchemas describe the answers, for the OpenAPI document.
var responseSchemas = map[string]string{
	"Error": `{"type": "object", "required": ["error"], "properties": {"error": {"type": "object",
		"required": ["code", "message", "details"], "properties": {
		"code": {"type": "string", "enum": ["invalid_request", "unauthorized", "forbidden", "denied", "not_found", "conflict",
			"payload_too_large", "invalid_code", "invalid_arguments", "unavailable", "busy", "internal"]},
		"message": {"type": "string"}, "details": {"type": "object", "properties": {
			"reason": {"type": "string", "description": "why; for busy (429, with Retry-After and details.retry_after_seconds): replay_queue, pending_approvals, pending_approvals_requester, waiters, searches, change_streams or mcp_sessions"},
			"scope": {"type": "string", "description": "for forbidden: the scope the token lacks"}}}}}}}`,
	"Status": `{"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}}`,
	"Readiness": `{"type": "object", "additionalProperties": false, "required": ["status", "store", "upstreams"], "properties": {
		"status": {"type": "string", "enum": ["ok", "degraded", "down", "unavailable"], "description": "unavailable (503) when the store does not answer; else the upstream servers' overall state: ok when every one is ok (or none is configured), down when every one is down, degraded otherwise"},
		"store": {"type": "string", "enum": ["ok", "unavailable"]},
		"upstreams": {"type": "array", "items": {"$ref": "#/components/schemas/UpstreamState"}}}}`,
	"UpstreamState": `{"type": "object", "additionalProperties": false, "required": ["server", "state"], "properties": {
		"server": {"type": "string", "description": "the server's key in the upstreams file; empty for the unnamed server of the --upstream-* flags"},
		"state": {"type": "string", "enum": ` + jsonList(mcpdispatch.States) + `, "description": "ok: a session is established; degraded: calls are timing out, or it is connecting; down: the last connection attempt failed (its calls fail at once until it answers); unknown: --upstream-http, which keeps no session"}}}`,
	"Upstreams": `{"type": "object", "additionalProperties": false, "required": ["status", "upstreams"], "properties": {
		"status": {"type": "string", "enum": ["ok", "degraded", "down"], "description": "every configured server's overall state, whatever the filters"},
		"upstreams": {"type": "array", "items": {"$ref": "#/components/schemas/Upstream"}}}}`,
	"Upstream": `{"type": "object", "additionalProperties": false, "required": ["server", "transport", "state", "protocol_version", "tools_in_catalogue", "tools_listed", "connection_failures", "last_error_class", "last_error_at"], "properties": {
		"server": {"type": "string", "description": "the server's key in the upstreams file; empty for the unnamed server of the --upstream-* flags"},
		"transport": {"type": "string", "enum": ["stdio", "http", "http-json"], "description": "stdio (a command procgraph runs), http (MCP over streamable HTTP), http-json (--upstream-http: one JSON POST per call, not MCP)"},
		"state": {"type": "string", "enum": ` + jsonList(mcpdispatch.States) + `},
		"protocol_version": {"type": ["string", "null"], "description": "the MCP revision the current session negotiated; null without a session"},
		"tools_in_catalogue": {"type": "integer", "minimum": 0, "description": "the catalogue's tools routed to this server"},
		"tools_listed": {"type": ["integer", "null"], "minimum": 0, "description": "how many tools the server listed the last time procgraph listed them; null when it never did"},
		"connection_failures": {"type": "integer", "minimum": 0, "description": "failed connection attempts in a row"},
		"last_error_class": {"type": ["string", "null"], "description": "the failure class of the last call to this server that failed, as a run's is named (tool_error, timeout, invalid_arguments…); null when none failed since the start"},
		"last_error_at": {"type": ["string", "null"], "format": "date-time"}}}`,
	"Index": `{"type": "object", "required": ["service", "links"], "properties": {"service": {"type": "string"},
		"links": {"type": "object", "additionalProperties": {"type": "string"}}}}`,
	"WhoAmI": `{"type": "object", "additionalProperties": false, "required": ["name", "scopes"], "properties": {"name": {"type": "string"},
		"scopes": {"type": "array", "uniqueItems": true, "items": {"type": "string", "enum": ["read", "capture", "invoke", "grant", "admin"]}}}}`,
	"Decision": `{"type": "object", "required": ["id", "kind", "procedure", "code_hash", "phase", "outcome", "reason", "actor", "allowed_tools", "at"],
		"properties": {"id": {"type": "string"}, "kind": {"type": "string", "enum": ` + jsonList(audit.DecisionKindNames()) + `},
		"procedure": {"type": "string"}, "code_hash": {"type": "string"}, "phase": {"type": "string"},
		"outcome": {"type": "string", "enum": ["allowed", "denied"]}, "reason": {"type": "string"}, "actor": {"type": "string"},
		"allowed_tools": {"type": "array", "items": {"type": "string"}}, "at": {"type": "string", "format": "date-time"},
		"note": {"type": "string"}, "suggestion": {"type": "string"},
		"session": {"type": "string", "description": "the agent session decided about (policy decisions)"},
		"result": {"type": "string", "enum": ` + jsonList(health.RunResults) + `, "description": "what happened to the run an allowed invoke or turn decided: succeeded or the class it failed under; absent while it runs, for a run that never ended and for other decisions"}}}`,
	"Tool": `{"type": "object", "required": ["name", "read_only", "external_access"], "properties": {"name": {"type": "string"},
		"description": {"type": "string"}, "read_only": {"type": "boolean"}, "external_access": {"type": "boolean"}, "input_schema": {"type": "object"},
		"output_schema": {"type": "object"}, "schema_hash": {"type": "string", "description": "sha256 of the canonical JSON of input_schema, output_schema, read_only and external_access (computed; ignored on PUT)"},
		"server": {"type": "string", "description": "the key of the upstream server the tool is called on (the upstreams file); absent for the unnamed server of the --upstream-* flags"},
		"upstream_name": {"type": "string", "description": "the tool's name on its server, sent on the wire; absent when it is name"},
		"listed": {"type": "string", "description": "the hash of the entry as its server listed it (tools import, a catalogue refresh): while the entry is exactly that, a refresh follows the server; an entry edited or written by hand is the operator's, kept over refreshes"}}}`,
	"Drift": `{"type": "array", "description": "what changed in the catalogue since the version's baseline (empty: not stale)", "items": {"type": "object",
		"required": ["tool", "change"], "properties": {"tool": {"type": "string"},
		"change": {"type": "string", "enum": ["input_schema", "output_schema", "read_only", "external_access", "removed"]},
		"changes": {"type": "array", "description": "for a schema change whose earlier schema the version kept: what changed in it, by JSON pointer (at most 50, the last then says how many more)",
			"items": {"type": "object", "required": ["path", "change"], "properties": {"path": {"type": "string"},
			"change": {"type": "string", "enum": ["added", "removed", "changed", "more"]},
			"was": {"type": "string", "description": "the earlier value's JSON, cut to 200 bytes"}, "now": {"type": "string", "description": "the current value's JSON, cut to 200 bytes"}}}}}}}`,
	"Health": `{"type": "object", "description": "how the version's runs went (docs/design.md \"Health of each version\")",
		"required": ["runs", "succeeded", "failed", "failures", "success_rate", "p50_ms", "p95_ms", "last_success_at", "last_failure_at", "last_failure_class", "consecutive_failures", "demotion_streak", "demotion_callers"],
		"additionalProperties": false, "properties": {"runs": {"type": "integer"}, "succeeded": {"type": "integer"}, "failed": {"type": "integer"},
		"failures": {"type": "object", "propertyNames": {"enum": ` + jsonList(health.FailureClasses) + `}, "additionalProperties": {"type": "integer"}},
		"success_rate": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
		"p50_ms": {"type": ["integer", "null"], "description": "the upper bound of the duration bucket of the median run"},
		"p95_ms": {"type": ["integer", "null"]},
		"last_success_at": {"type": ["string", "null"], "format": "date-time"}, "last_failure_at": {"type": ["string", "null"], "format": "date-time"},
		"last_failure_class": {"type": ["string", "null"], "enum": ` + strings.TrimSuffix(jsonList(health.FailureClasses), "]") + `, null]},
		"consecutive_failures": {"type": "integer"},
		"demotion_streak": {"type": "integer", "description": "the runs since the last success that failed under a class counting toward demotion (not upstream_unavailable or timeout)"},
		"demotion_callers": {"type": "integer", "enum": [0, 1, 2], "description": "how many callers ran the demotion streak's failures: 0, 1, or 2 for two or more (a demotion needs two)"}}}`,
	"DriftList": `{"type": "object", "required": ["versions", "total"], "properties": {"total": {"type": "integer"},
		"versions": {"type": "array", "items": {"type": "object", "required": ["procedure", "code_hash", "current", "drift", "verification"],
		"properties": {"procedure": {"type": "string"}, "code_hash": {"type": "string"}, "current": {"type": "boolean"},
		"drift": {"$ref": "#/components/schemas/Drift"}, "verification": {"type": ["object", "null"]}}}}}}`,
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
			"reason": {"type": ["string", "null"]}, "code_hash": {"type": ["string", "null"]}, "inactive_reason": {"type": ["string", "null"]},
			"grantable": {"type": "boolean", "description": "a grant asked for now would be accepted (the rule of PUT auto-run)"},
			"grant_refusal": {"type": ["string", "null"], "enum": ["procedure_not_succeeded", "not_read_only", null], "description": "why a grant asked for now would be refused; null when grantable"}}},
		"causes": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "frequency": {"type": "integer"}}}},
		"stale": {"type": "boolean"}, "drift": {"$ref": "#/components/schemas/Drift"}, "health": {"$ref": "#/components/schemas/Health"},
		"demoted": {"type": "boolean", "description": "the current version's failures, from two callers or more, reached --demote-after: not exposed, its grant inactive (unhealthy), still invokable interactively; a passing verification, a promote or an operator (DELETE …/demotion) lifts it, no run does"},
		"verification": {"$ref": "#/components/schemas/Verification"},
		"created_at": {"type": "string", "format": "date-time"}, "updated_at": {"type": "string", "format": "date-time"},
		"last_used_at": {"type": ["string", "null"], "format": "date-time"},
		"retired": {"type": ["object", "null"], "required": ["retired_by", "retired_at", "reason"], "properties": {
			"retired_by": {"type": "string"}, "retired_at": {"type": "string", "format": "date-time"}, "reason": {"type": "string"}}}}}`,
	"CaptureAnswer": `{"type": "object", "required": ["procedure", "created", "version_created", "counted"], "properties": {
		"procedure": {"$ref": "#/components/schemas/Procedure"}, "created": {"type": "boolean"},
		"version_created": {"type": "boolean"}, "counted": {"type": "boolean"},
		"version": {"type": ["object", "null"], "description": "the version this capture stored (null for a use of a procedure): the procedure's current version may be another",
			"required": ["code_hash", "current", "created", "parameters"], "properties": {"code_hash": {"type": "string"},
			"current": {"type": "boolean", "description": "it is the procedure's current version after the capture"},
			"created": {"type": "boolean", "description": "this capture created it"},
			"parameters": {"type": "array", "items": {"type": "string"}}}},
		"lifted": {"type": "array", "items": {"$ref": "#/components/schemas/Lifted"}},
		"warnings": {"type": "array", "items": {"type": "object", "required": ["line", "column", "message"], "properties": {
			"line": {"type": "integer"}, "column": {"type": "integer"}, "message": {"type": "string"}}}}}}`,
	"Lifted": `{"type": "object", "required": ["parameter", "tool", "argument", "line", "column", "example"], "properties": {
		"parameter": {"type": "string"}, "tool": {"type": "string"}, "argument": {"type": "string"},
		"line": {"type": "integer"}, "column": {"type": "integer"}, "example": {"type": ["integer", "number", "string", "boolean"]}}}`,
	"ProcedureList": `{"type": "object", "required": ["procedures", "total"], "properties": {
		"procedures": {"type": "array", "items": {"$ref": "#/components/schemas/Procedure"}}, "total": {"type": "integer"}}}`,
	"PlannerTools": `{"type": "object", "required": ["tools"], "properties": {"tools": {"type": "array", "items": {"type": "object",
		"required": ["name", "description", "input_schema", "read_only", "external_access", "auto_run", "frequency", "signature"],
		"properties": {"name": {"type": "string"}, "description": {"type": "string"}, "input_schema": {"type": "object"},
		"read_only": {"type": "boolean"}, "external_access": {"type": "boolean"}, "auto_run": {"type": "boolean"},
		"frequency": {"type": "integer"}, "signature": {"type": "array", "items": {"type": "string"}},
		"stale": {"type": "boolean", "description": "a tool changed since the procedure last worked (the description says which)"},
		"success_rate": {"type": ["number", "null"], "minimum": 0, "maximum": 1, "description": "the current version's successful runs over its runs (null before the first)"},
		"runs": {"type": "integer", "description": "the current version's runs"}}}}}}`,
	"Versions": `{"type": "object", "required": ["versions"], "properties": {"versions": {"type": "array", "items": {"type": "object",
		"additionalProperties": false, "required": ["code_hash", "captured_at", "frequency", "status", "current"], "properties": {"code_hash": {"type": "string"},
		"canonical_hash": {"type": "string", "description": "the hash of the version's canonical program: another text of it is a use of this version"},
		"captured_at": {"type": "string", "format": "date-time"}, "frequency": {"type": "integer"},
		"status": {"type": "string", "enum": ["succeeded", "failed"]}, "current": {"type": "boolean"},
		"stale": {"type": "boolean"}, "drift": {"$ref": "#/components/schemas/Drift"}, "health": {"$ref": "#/components/schemas/Health"},
		"verification": {"$ref": "#/components/schemas/Verification"}}}}}}`,
	"Version": `{"type": "object", "required": ["code_hash", "code", "dialect", "status", "current", "captured_at", "frequency"], "properties": {
		"code_hash": {"type": "string"}, "canonical_hash": {"type": "string"}, "code": {"type": "string"}, "dialect": {"type": "string"},
		"parameters": {"type": "array", "items": {"type": "string"}}, "input_schema": {"type": "object"}, "summary": {"type": "string"},
		"opaque": {"type": "boolean"}, "warnings": {"type": "array"}, "status": {"type": "string", "enum": ["succeeded", "failed"]},
		"frequency": {"type": "integer"}, "captured_at": {"type": "string", "format": "date-time"}, "current": {"type": "boolean"},
		"stale": {"type": "boolean"}, "drift": {"$ref": "#/components/schemas/Drift"}, "health": {"$ref": "#/components/schemas/Health"},
		"verification": {"$ref": "#/components/schemas/Verification"}}}`,
	"TokenList": `{"type": "object", "required": ["tokens"], "properties": {"tokens": {"type": "array", "items": {"$ref": "#/components/schemas/Token"}}}}`,
	"Token": `{"type": "object", "required": ["holder", "scopes", "created_at", "created_by", "status"], "properties": {
		"holder": {"type": "string"}, "scopes": {"type": "array", "items": {"type": "string", "enum": ["read", "capture", "invoke", "grant", "admin"]}},
		"created_at": {"type": "string", "format": "date-time"}, "created_by": {"type": "string"},
		"expires_at": {"type": "string", "format": "date-time"}, "last_used_at": {"type": "string", "format": "date-time", "description": "written at most once a minute"},
		"revoked_at": {"type": "string", "format": "date-time"}, "status": {"type": "string", "enum": ["live", "expired", "revoked"]}}}`,
	"TokenCreated": `{"type": "object", "required": ["token", "record"], "properties": {"token": {"type": "string", "description": "the bearer token, answered this once: only its hash is kept"},
		"record": {"$ref": "#/components/schemas/Token"}}}`,
	"TokenAnswer": `{"type": "object", "required": ["record"], "properties": {"record": {"$ref": "#/components/schemas/Token"}}}`,
	"Recordings": `{"type": "object", "required": ["recordings", "total"], "properties": {"total": {"type": "integer"}, "recordings": {"type": "array", "items": {"type": "object",
		"required": ["id", "procedure", "code_hash", "recorded_at", "arguments", "calls", "result_hash", "bytes"], "properties": {
		"id": {"type": "string"}, "procedure": {"type": "string"}, "code_hash": {"type": "string"},
		"recorded_at": {"type": "string", "format": "date-time"}, "arguments": {"type": "object"},
		"calls": {"type": "array", "items": {"type": "object", "required": ["tool", "arguments"], "properties": {
			"tool": {"type": "string"}, "arguments": {"type": "object"}, "response": {}, "error": {"type": "string"}}}},
		"result_hash": {"type": "string"}, "bytes": {"type": "integer"}}}}}}`,
	"VerifyAnswer": `{"type": "object", "required": ["procedure", "code_hash", "verification", "results"], "properties": {
		"procedure": {"type": "string"}, "code_hash": {"type": "string"},
		"verification": {"$ref": "#/components/schemas/Verification"},
		"results": {"type": "array", "items": {"type": "object", "required": ["recording", "outcome"], "properties": {
			"recording": {"type": "string"},
			"outcome": {"type": "string", "enum": ["passed", "changed_result", "diverged", "invalid_call", "failed"]},
			"call": {"type": "integer", "description": "the call (from 0) that diverged or was invalid"},
			"detail": {"type": "string"}}}}}}`,
	"Verification": `{"type": ["object", "null"], "required": ["status", "at", "catalogue_revision", "recordings", "passed"], "properties": {
		"status": {"type": "string", "enum": ["passed", "failed", "none"]}, "at": {"type": "string", "format": "date-time"},
		"catalogue_revision": {"type": "string"}, "recordings": {"type": "integer"}, "passed": {"type": "integer"}}}`,
	"RecordingsPurged": `{"type": "object", "required": ["decision", "deleted"], "properties": {
		"decision": {"$ref": "#/components/schemas/Decision"}, "deleted": {"type": "integer"}}}`,
	"DecisionAnswer": `{"type": "object", "required": ["procedure", "decision"], "properties": {
		"procedure": {"$ref": "#/components/schemas/Procedure"}, "decision": {"$ref": "#/components/schemas/Decision"}}}`,
	"InvokeAnswer": `{"type": "object", "required": ["decision", "status", "result", "output", "calls", "error"], "properties": {
		"decision": {"$ref": "#/components/schemas/Decision"}, "status": {"type": "string", "enum": ["succeeded", "failed"]},
		"result": {}, "output": {"type": "string"},
		"calls": {"type": "array", "items": {"type": "object", "properties": {"tool": {"type": "string"}, "ok": {"type": "boolean"}, "duration_ms": {"type": "integer"}}}},
		"error": {"type": ["object", "null"], "properties": {"code": {"type": "string", "enum": ["tool_failed", "tool_refused", "step_limit",
			"timeout", "memory_limit", "call_limit", "runtime_error", "invalid_arguments", "upstream_unavailable"]}, "message": {"type": "string"}, "tool": {"type": "string"}}}}}`,
	"Causes": `{"type": "object", "required": ["causes"], "properties": {"causes": {"type": "array", "items": {"type": "object",
		"properties": {"name": {"type": "string"}, "description": {"type": "string"}, "procedures": {"type": "integer"}, "frequency": {"type": "integer"}}}}}}`,
	"CauseAnswer": `{"type": "object", "required": ["name", "procedures"], "properties": {"name": {"type": "string"}, "description": {"type": "string"},
		"frequency": {"type": "integer"}, "procedure_count": {"type": "integer"},
		"procedures": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "frequency": {"type": "integer"}}}}}}`,
	"Graph": `{"type": "object", "required": ["nodes", "edges"], "properties": {
		"nodes": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"},
			"kind": {"type": "string", "enum": ["procedure", "cause", "tool"]}, "label": {"type": "string"}, "properties": {"type": "object"}}}},
		"edges": {"type": "array", "items": {"type": "object", "properties": {"source": {"type": "string"}, "target": {"type": "string"},
			"kind": {"type": "string"}, "frequency": {"type": "integer"}}}},
		"truncated": {"type": "boolean", "description": "not the whole graph the query asked for: the node bound cut it, or (no start) procedures beyond the page were left out"},
		"total_procedures": {"type": "integer", "description": "how many procedures the store holds"},
		"total_edges": {"type": ["integer", "null"], "description": "how many edges the store holds (CALLS and INVESTIGATED_BY)"},
		"next_offset": {"type": ["integer", "null"], "description": "without a start: the offset of the next page of procedures to start from (null: none left)"}}}`,
	"Decisions": `{"type": "object", "required": ["decisions", "next"], "properties": {
		"decisions": {"type": "array", "items": {"$ref": "#/components/schemas/Decision"}}, "next": {"type": ["string", "null"]}}}`,
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// OpenAPI returns the API as an OpenAPI 3.1 document built from the route
// table and the request schemas the server validates with.
func (s *Server) OpenAPI() *OpenAPIDocument {
	doc := &OpenAPIDocument{
		OpenAPI: "3.1.0",
		Info:    OpenAPIInfo{Title: "procgraph", Version: "1"},
		Paths:   map[string]PathItem{},
		Components: OpenAPIComponents{
			Schemas:         map[string]json.RawMessage{},
			SecuritySchemes: map[string]SecurityScheme{"bearer": {Type: "http", Scheme: "bearer"}},
		},
	}
	for name, body := range requestBodies {
		doc.Components.Schemas[name] = requestSchema(body)
	}
	for name, text := range responseSchemas {
		doc.Components.Schemas[name] = compactJSON(text)
	}
	for _, rt := range s.routeTable() {
		item := doc.Paths[rt.pattern]
		if item == nil {
			item = PathItem{}
			doc.Paths[rt.pattern] = item
		}
		item[strings.ToLower(rt.method)] = operation(rt)
	}
	for path, summary := range s.mcpPaths {
		item := PathItem{}
		for _, method := range []string{"get", "post", "delete"} {
			item[method] = &Operation{Summary: summary + " (JSON-RPC; see the MCP specification)",
				OperationID: method + strings.NewReplacer("/", "_").Replace(path),
				Security:    bearer(string(auth.ScopeRead)),
				Responses:   map[string]Response{"200": {Description: "MCP messages"}, "default": jsonResponse("Error", "Error")}}
		}
		doc.Paths[path] = item
	}
	return doc
}

// operation documents one route.
func operation(rt route) *Operation {
	ok := Response{Description: "OK", Content: map[string]MediaType{"text/plain": {Schema: json.RawMessage(`{"type":"string"}`)}}}
	if rt.response != "" {
		ok = jsonResponse("OK", rt.response)
	}
	op := &Operation{Summary: rt.summary, OperationID: operationID(rt), Parameters: parameters(rt),
		Responses: map[string]Response{"200": ok, "default": jsonResponse("Error", "Error")}}
	if rt.response == "CaptureAnswer" {
		op.Responses["201"] = jsonResponse("Created: the procedure is new", rt.response)
	}
	if rt.response == "TokenCreated" && rt.method == "POST" && rt.body == "TokenCreate" {
		op.Responses = map[string]Response{"201": jsonResponse("Created: the token, shown once", rt.response), "default": op.Responses["default"]}
	}
	if rt.body != "" {
		op.RequestBody = &RequestBody{Required: rt.method != "DELETE" && rt.body != "ReasonBody" && rt.body != "TokenRotate",
			Content: map[string]MediaType{"application/json": {Schema: schemaRef(rt.body)}}}
	}
	switch {
	case rt.recordings:
		op.Security = bearer(string(rt.scope), string(recordingsScope))
	case rt.scope != "":
		op.Security = bearer(string(rt.scope))
	case rt.anyToken:
		op.Security = []map[string][]string{{"bearer": {}}}
	}
	return op
}

// parameters are a route's path parameters, query parameters and, where
// docs/api.md accepts it, the Idempotency-Key header.
func parameters(rt route) []Parameter {
	var params []Parameter
	for _, m := range pathParam.FindAllStringSubmatch(rt.pattern, -1) {
		params = append(params, Parameter{Name: m[1], In: "path", Required: true, Schema: json.RawMessage(`{"type":"string"}`)})
	}
	explode := true
	for _, q := range rt.query {
		schema := map[string]any{"type": q.typ}
		if len(q.enum) > 0 {
			schema["enum"] = q.enum
		}
		if q.format != "" {
			schema["format"] = q.format
		}
		if q.noControl {
			schema["pattern"] = fields.NoControlPattern
		}
		if q.typ == "integer" {
			schema["minimum"], schema["maximum"] = q.min, q.max
		}
		if q.repeatable {
			schema = map[string]any{"type": "array", "items": schema}
		}
		b, _ := json.Marshal(schema)
		params = append(params, Parameter{Name: q.name, In: "query", Description: q.doc, Explode: &explode, Schema: b})
	}
	if rt.idempotencyKey {
		params = append(params, Parameter{Name: "Idempotency-Key", In: "header", Description: "the usage key when there is no session_id",
			Schema: fields.IdempotencyKey.Schema(fields.Options{})})
	}
	return params
}

// bearer is a security requirement: a bearer token with every one of
// scopes.
func bearer(scopes ...string) []map[string][]string {
	return []map[string][]string{{"bearer": scopes}}
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, s.OpenAPI())
	return nil
}

func operationID(rt route) string {
	id := strings.ToLower(rt.method) + strings.NewReplacer("/", "_", "{", "", "}", "", "-", "_", ".", "_").Replace(rt.pattern)
	return id
}

// compactJSON is a schema text as JSON; it panics on text that is not
// JSON (the texts are constants, checked by the tests).
func compactJSON(text string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		panic("api: schema does not parse: " + err.Error())
	}
	return b.Bytes()
}

// schemaRef refers to a component schema.
func schemaRef(name string) json.RawMessage {
	return json.RawMessage(`{"$ref":"#/components/schemas/` + name + `"}`)
}

// jsonResponse is an OpenAPI response whose body is the named schema.
func jsonResponse(description, schema string) Response {
	return Response{Description: description, Content: map[string]MediaType{"application/json": {Schema: schemaRef(schema)}}}
}

// jsonList is items as a JSON array, for a schema built from Go values.
func jsonList(items []string) string {
	b, _ := json.Marshal(items)
	return string(b)
}
