package api

import (
	"maps"
	"net/http"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
)

// The turn gate's request bodies (docs/api.md "Turns and approvals").
var turnRequestBodies = map[string]fields.Field{
	"TurnRequest": fields.Body(
		fields.Req(fields.Code), fields.Opt(fields.Dialect), fields.Req(fields.SessionID.NonEmpty()), fields.Req(fields.Phase),
		fields.Nullable(fields.Arguments), fields.Nullable(fields.TurnSummary), fields.Opt(fields.WaitS), fields.Opt(fields.Review),
		fields.Nullable(fields.Field{Name: "capture", Type: fields.Object, Props: []fields.Prop{
			fields.Nullable(fields.Cause), fields.Nullable(fields.Summary), fields.Nullable(fields.Metadata), fields.Opt(fields.Lift)}})),
	"ResolveRequest": fields.Body(fields.Req(fields.Choice), fields.Nullable(fields.Reason), fields.Nullable(fields.Code), fields.Nullable(fields.CallRef)),
}

// The turn gate's answer schemas.
var turnResponseSchemas = map[string]string{
	"Turn": `{"type": "object", "required": ["id", "session_id", "phase", "code_hash", "signature", "read_only", "state_changing_tools",
		"unknown_tools", "opaque", "summary", "status", "requested_by", "requested_at", "deadline", "resolution"], "properties": {
		"id": {"type": "string"}, "session_id": {"type": "string"}, "phase": {"type": "string"}, "code_hash": {"type": "string"},
		"signature": {"type": "array", "items": {"type": "string"}}, "read_only": {"type": "boolean"},
		"state_changing_tools": {"type": "array", "items": {"type": "string"}}, "unknown_tools": {"type": "array", "items": {"type": "string"}},
		"opaque": {"type": "boolean"}, "summary": {"type": "string"},
		"status": {"type": "string", "enum": ["pending", "approved", "rejected", "expired", "cancelled", "running", "succeeded", "failed", "denied"]},
		"requested_by": {"type": "string"}, "requested_at": {"type": "string", "format": "date-time"},
		"deadline": {"type": "string", "format": "date-time"},
		"resolution": {"type": ["object", "null"], "properties": {"choice": {"type": "string"}, "by": {"type": "string"},
			"at": {"type": "string", "format": "date-time"}, "reason": {"type": "string"}, "code_hash": {"type": "string"},
			"call": {"$ref": "#/components/schemas/TurnCall"}}},
		"review": {"type": "string", "enum": ["block", "at_call"]},
		"call": {"$ref": "#/components/schemas/TurnCall"},
		"pauses": {"type": "integer", "minimum": 0, "description": "pauses answered with a call that ran (review at_call)"}}}`,
	"TurnCall": `{"type": "object", "required": ["position", "line", "tool", "schema_hash", "args_digest"], "description": "the call a turn reviewed at_call is paused at", "properties": {
		"position": {"type": "integer", "minimum": 0, "description": "the call's index in the run's tool calls"},
		"line": {"type": "integer", "minimum": 0, "description": "the block's line the call is on (0: unknown)"},
		"tool": {"type": "string"}, "schema_hash": {"type": "string", "description": "the tool's schema hash (\"\" for a proc__ call)"},
		"args_digest": {"type": "string", "description": "the canonical digest of the call's arguments"}}}`,
	"Read": `{"type": "object", "required": ["tool", "arguments", "response", "truncated", "bytes"], "properties": {
		"tool": {"type": "string"}, "arguments": {"type": "object"},
		"response": {"type": "string", "description": "the answer as JSON text, hidden characters escaped, at most 4 KiB"},
		"truncated": {"type": "boolean"}, "bytes": {"type": "integer", "description": "the whole answer's length as JSON"}}}`,
	"TurnState": `{"type": "object", "required": ["turn"], "properties": {"turn": {"$ref": "#/components/schemas/Turn"}}}`,
	"TurnAnswer": `{"type": "object", "required": ["turn"], "properties": {"turn": {"$ref": "#/components/schemas/Turn"},
		"decision": {"$ref": "#/components/schemas/Decision"}, "status": {"type": "string", "enum": ["succeeded", "failed"]},
		"result": {}, "output": {"type": "string"}, "calls": {"type": "array"}, "error": {"type": ["object", "null"]},
		"procedure": {"$ref": "#/components/schemas/Procedure"},
		"lifted": {"type": "array", "items": {"$ref": "#/components/schemas/Lifted"}},
		"suggestion": {"type": "object", "required": ["tool", "reason", "message"], "properties": {"tool": {"type": "string"},
			"reason": {"type": "string", "enum": ["same_signature", "covered_by"]}, "message": {"type": "string"}}}}}`,
	"Approval": `{"allOf": [{"$ref": "#/components/schemas/Turn"}, {"type": "object", "required": ["code", "procedures", "nested", "covers"], "properties": {
		"code": {"type": "string"}, "arguments": {"type": ["object", "null"]},
		"procedures": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"},
			"read_only": {"type": "boolean"}, "auto_run": {"type": "boolean"}}}},
		"nested": {"type": "array", "description": "every proc__ the block may reach, each level, as the approval binds to it (empty once the turn no longer waits to run)",
			"items": {"$ref": "#/components/schemas/ReachedProcedure"}},
		"covers": {"type": "array", "description": "for each choice, what answering it covers (empty once resolved)",
			"items": {"$ref": "#/components/schemas/Cover"}},
		"call": {"type": "object", "description": "the call a turn reviewed at_call is paused at; arguments only to the grant scope",
			"allOf": [{"$ref": "#/components/schemas/TurnCall"}], "properties": {"arguments": {"type": "object"}}},
		"reads": {"type": "array", "description": "the calls before the pause with their answers (grant scope only; [] otherwise)",
			"items": {"$ref": "#/components/schemas/Read"}}}}]}`,
	"ReachedProcedure": `{"type": "object", "required": ["name", "depth", "called_by", "code_hash", "read_only", "state_changing_tools",
		"signature", "dialect", "code", "code_bytes", "truncated", "unavailable"], "properties": {
		"name": {"type": "string"}, "depth": {"type": "integer", "minimum": 1, "description": "1: the block calls it; 2: a procedure of level 1 does; …"},
		"called_by": {"type": "array", "items": {"type": "string"}, "description": "the callers of the level above; \"\" is the block"},
		"code_hash": {"type": "string", "description": "the version the approval binds to; \"absent\" when no procedure has the name (its call is refused)"},
		"read_only": {"type": "boolean"}, "state_changing_tools": {"type": "array", "items": {"type": "string"}},
		"signature": {"type": "array", "items": {"type": "string"}}, "dialect": {"type": "string"},
		"code": {"type": "string", "description": "the version's code, at most 16 KiB of it and 64 KiB for all nested procedures of a review"},
		"code_bytes": {"type": "integer", "description": "the length of the whole code"},
		"truncated": {"type": "boolean", "description": "code is a prefix: the whole text is GET /v1/procedures/{name}/versions/{code_hash}"},
		"unavailable": {"type": "boolean", "description": "the store has no version of that hash: resolving asks for a review again"}}}`,
	"Cover": `{"type": "object", "required": ["choice", "text", "grants"], "properties": {
		"choice": {"type": "string", "enum": ["run_once", "auto_run", "always_ask", "reject", "run_all"]},
		"text": {"type": "string", "description": "what the answer runs and remembers"},
		"grants": {"type": "array", "items": {"type": "string"},
			"description": "the procedures the answer grants durable auto-run to, for every caller and any arguments, until revoked: confirm before answering"},
		"if_edited": {"type": "string", "description": "auto_run only: what the answer covers when the block is replaced (code), which may grant"}}}`,
	"Approvals": `{"type": "object", "required": ["approvals", "next"], "properties": {
		"approvals": {"type": "array", "items": {"$ref": "#/components/schemas/Approval"}}, "next": {"type": ["string", "null"]}}}`,
	"ResolveAnswer": `{"type": "object", "required": ["turn", "decision"], "properties": {
		"turn": {"$ref": "#/components/schemas/Turn"}, "decision": {"$ref": "#/components/schemas/Decision"}}}`,
	"SessionPolicies": `{"type": "object", "required": ["policies", "grants"], "properties": {
		"policies": {"type": "array", "items": {"type": "object", "properties": {"code_hash": {"type": "string"},
			"policy": {"type": "string", "enum": ["auto_run", "always_ask"]}, "summary": {"type": "string"},
			"set_by": {"type": "string"}, "set_at": {"type": "string", "format": "date-time"},
			"requested_by": {"type": "string", "description": "the requester whose turns the policy decides; empty: nobody's"},
			"binding": {"type": "object", "description": "what the operator approved (README: what an approval or a grant binds to); absent: unbound"},
			"inactive_reason": {"type": ["string", "null"], "description": "why the policy does not apply now: unbound, nested_changed, reclassified, catalogue_drift"}}}},
		"grants": {"type": "array", "items": {"type": "object", "properties": {"procedure": {"type": "string"},
			"code_hash": {"type": "string"}, "granted_by": {"type": "string"}, "granted_at": {"type": "string", "format": "date-time"},
			"active": {"type": "boolean"}, "inactive_reason": {"type": ["string", "null"]}}}}}}`,
	"PoliciesRevoked": `{"type": "object", "required": ["revoked", "decision", "decisions"], "properties": {
		"revoked": {"type": "integer"}, "decision": {"$ref": "#/components/schemas/Decision", "description": "the first of decisions"},
		"decisions": {"type": "array", "items": {"$ref": "#/components/schemas/Decision"},
			"description": "one policy_revoked record per revoked policy (its code_hash and session); one without a code hash when none was"}}}`,
}

var (
	turnWaitParams = []queryParam{
		intParam(fields.WaitS, "wait up to this many seconds while the turn is pending"),
	}
	approvalParams = []queryParam{
		{name: "status", typ: "string", enum: turnStatusNames(), doc: "turn status (e.g. pending)"},
		{name: "session", typ: "string", doc: "approvals of this session"},
		{name: "limit", typ: "integer", min: 1, max: gate.MaxApprovalLimit, doc: "how many (default 50)"},
		{name: "before", typ: "string", doc: "page back: approvals older than this turn id (the previous answer's next)"},
	}
)

func turnStatusNames() []string {
	out := make([]string, len(gate.TurnStatuses))
	for i, s := range gate.TurnStatuses {
		out[i] = string(s)
	}
	return out
}

// turnRoutes are the turn gate's operations (part of the route table).
func (s *Server) turnRoutes() []route {
	return []route{
		{method: "POST", pattern: "/v1/turns", scope: auth.ScopeInvoke, handler: s.submitTurn, summary: "Submit a turn: the gate for every block an agent runs", body: "TurnRequest", response: "TurnAnswer"},
		{method: "GET", pattern: "/v1/turns/{id}", scope: auth.ScopeInvoke, handler: s.getTurn, summary: "One turn (its requester), waiting while pending", query: turnWaitParams, response: "TurnState"},
		{method: "POST", pattern: "/v1/turns/{id}/run", scope: auth.ScopeInvoke, handler: s.runTurn, summary: "Run an approved turn, once (its requester)", response: "TurnAnswer"},
		{method: "DELETE", pattern: "/v1/turns/{id}", scope: auth.ScopeInvoke, handler: s.cancelTurn, summary: "Cancel a turn (its requester)", response: "TurnState"},
		{method: "GET", pattern: "/v1/approvals", scope: auth.ScopeRead, handler: s.listApprovals, summary: "Approvals, newest first", query: approvalParams, response: "Approvals"},
		{method: "GET", pattern: "/v1/approvals/{id}", scope: auth.ScopeRead, handler: s.getApproval, summary: "One approval", response: "Approval"},
		{method: "POST", pattern: "/v1/approvals/{id}/resolve", scope: auth.ScopeGrant, handler: s.resolveApproval, summary: "Resolve an approval, once", body: "ResolveRequest", response: "ResolveAnswer"},
		{method: "GET", pattern: "/v1/sessions/{id}/policies", scope: auth.ScopeRead, handler: s.sessionPolicies, summary: "A session's policies and the durable grants", response: "SessionPolicies"},
		{method: "DELETE", pattern: "/v1/sessions/{id}/policies", scope: auth.ScopeGrant, handler: s.revokePolicies, summary: "Revoke all of a session's policies", response: "PoliciesRevoked"},
		{method: "DELETE", pattern: "/v1/sessions/{id}/policies/{prefix}", scope: auth.ScopeGrant, handler: s.revokePolicies, summary: "Revoke the session policy whose code hash starts with prefix", response: "PoliciesRevoked"},
	}
}

// gate returns the turn gate, or CodeUnavailable when none is wired: no
// turn runs without one.
func (s *Server) gate() (TurnGate, error) {
	if s.turns == nil {
		return nil, fault.Errorf(fault.CodeUnavailable, "the turn gate is not configured on this server")
	}
	return s.turns, nil
}

type turnBody struct {
	Code      string         `json:"code"`
	Dialect   string         `json:"dialect"`
	SessionID string         `json:"session_id"`
	Phase     string         `json:"phase"`
	Arguments map[string]any `json:"arguments"`
	Summary   *string        `json:"summary"`
	WaitS     int            `json:"wait_s"`
	Review    string         `json:"review"`
	Capture   *struct {
		Cause    *causeInput    `json:"cause"`
		Summary  *string        `json:"summary"`
		Metadata map[string]any `json:"metadata"`
		Lift     *bool          `json:"lift"`
	} `json:"capture"`
}

func (s *Server) submitTurn(w http.ResponseWriter, r *http.Request) error {
	g, err := s.gate()
	if err != nil {
		return err
	}
	var b turnBody
	if err := s.decodeBody(r.Body, "TurnRequest", s.maxBody, &b); err != nil {
		return err
	}
	caller := principalOf(r)
	req := gate.TurnRequest{Code: b.Code, Dialect: b.Dialect, SessionID: b.SessionID, Phase: audit.Phase(b.Phase),
		Arguments: b.Arguments, Summary: deref(b.Summary), Wait: time.Duration(b.WaitS) * time.Second, Actor: caller.Name,
		MayCapture: caller.Has(auth.ScopeCapture), Review: gate.Review(b.Review)}
	if b.Capture != nil {
		req.Capture = &gate.TurnCapture{Summary: deref(b.Capture.Summary), Metadata: b.Capture.Metadata,
			NoLift: b.Capture.Lift != nil && !*b.Capture.Lift}
		if c := b.Capture.Cause; c != nil {
			req.Capture.Cause = &procedures.CauseInput{Name: c.Name, Description: deref(c.Description)}
		}
	}
	ans, err := g.Submit(r.Context(), req)
	return s.answerTurn(w, ans, err)
}

// answerTurn writes a turn's answer: 200 when it ran, else 202 pending.
func (s *Server) answerTurn(w http.ResponseWriter, ans *gate.TurnAnswer, err error) error {
	if err != nil {
		return err
	}
	status := http.StatusOK
	if !ans.Ran() {
		status = http.StatusAccepted
	}
	writeJSON(w, status, ans)
	return nil
}

func (s *Server) getTurn(w http.ResponseWriter, r *http.Request) error {
	g, err := s.gate()
	if err != nil {
		return err
	}
	t, err := g.Get(r.Context(), urlParam(r, "id"), principalOf(r).Name, time.Duration(queryInt(r, "wait_s", 0))*time.Second)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"turn": t})
	return nil
}

func (s *Server) runTurn(w http.ResponseWriter, r *http.Request) error {
	g, err := s.gate()
	if err != nil {
		return err
	}
	ans, err := g.Run(r.Context(), urlParam(r, "id"), principalOf(r).Name)
	return s.answerTurn(w, ans, err)
}

func (s *Server) cancelTurn(w http.ResponseWriter, r *http.Request) error {
	g, err := s.gate()
	if err != nil {
		return err
	}
	t, err := g.Cancel(r.Context(), urlParam(r, "id"), principalOf(r).Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"turn": t})
	return nil
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) error {
	g, err := s.gate()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := gate.ApprovalFilter{Status: gate.TurnStatus(q.Get("status")), SessionID: q.Get("session"),
		Limit: queryInt(r, "limit", gate.DefaultApprovalLimit), Before: q.Get("before")}
	list, err := g.Approvals(r.Context(), f, principalOf(r).Has(auth.ScopeGrant))
	if err != nil {
		return err
	}
	var next any
	if len(list) == f.Limit && len(list) > 0 {
		next = list[len(list)-1].ID
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": list, "next": next})
	return nil
}

func (s *Server) getApproval(w http.ResponseWriter, r *http.Request) error {
	g, err := s.gate()
	if err != nil {
		return err
	}
	a, err := g.Approval(r.Context(), urlParam(r, "id"), principalOf(r).Has(auth.ScopeGrant))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

type resolveBody struct {
	Choice string        `json:"choice"`
	Reason *string       `json:"reason"`
	Code   *string       `json:"code"`
	Call   *gate.CallRef `json:"call"`
}

func (s *Server) resolveApproval(w http.ResponseWriter, r *http.Request) error {
	g, err := s.gate()
	if err != nil {
		return err
	}
	var b resolveBody
	if err := s.decodeBody(r.Body, "ResolveRequest", s.maxBody, &b); err != nil {
		return err
	}
	caller := principalOf(r)
	t, d, err := g.Resolve(r.Context(), gate.ResolveRequest{ID: urlParam(r, "id"), Choice: gate.Choice(b.Choice),
		Reason: deref(b.Reason), Code: b.Code, Actor: caller.Name, HasGrant: caller.Has(auth.ScopeGrant), Call: b.Call})
	if err != nil && t == nil {
		return err
	}
	if err != nil {
		s.log.Warn().Err(err).Str("turn", t.ID).Msg("approval resolved, but what it remembers could not be stored")
	}
	writeJSON(w, http.StatusOK, map[string]any{"turn": t, "decision": d})
	return nil
}

type grantView struct {
	Procedure string     `json:"procedure"`
	CodeHash  string     `json:"code_hash"`
	GrantedBy string     `json:"granted_by"`
	GrantedAt *time.Time `json:"granted_at"`
	Active    bool       `json:"active"`
	// InactiveReason is the grant's auto_run.inactive_reason.
	InactiveReason *string `json:"inactive_reason"`
}

func (s *Server) sessionPolicies(w http.ResponseWriter, r *http.Request) error {
	g, err := s.gate()
	if err != nil {
		return err
	}
	ps, err := g.SessionPolicies(r.Context(), urlParam(r, "id"))
	if err != nil {
		return err
	}
	granted, err := s.svc.GrantsList(r.Context())
	if err != nil {
		return err
	}
	grants := []grantView{}
	for _, p := range granted {
		grants = append(grants, grantView{Procedure: p.Name, CodeHash: deref(p.AutoRun.CodeHash), GrantedBy: deref(p.AutoRun.GrantedBy),
			GrantedAt: p.AutoRun.GrantedAt, Active: p.AutoRun.Active, InactiveReason: p.AutoRun.InactiveReason})
	}
	writeJSON(w, http.StatusOK, map[string]any{"policies": ps, "grants": grants})
	return nil
}

func (s *Server) revokePolicies(w http.ResponseWriter, r *http.Request) error {
	g, err := s.gate()
	if err != nil {
		return err
	}
	n, ds, err := g.RevokePolicies(r.Context(), urlParam(r, "id"), urlParam(r, "prefix"), principalOf(r).Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"revoked": n, "decision": ds[0], "decisions": ds})
	return nil
}

func init() {
	maps.Copy(requestBodies, turnRequestBodies)
	maps.Copy(responseSchemas, turnResponseSchemas)
}
