package api

import (
	"net/http"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/recording"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/reuse"
)

type captureBody struct {
	Code         string         `json:"code"`
	Dialect      string         `json:"dialect"`
	Summary      *string        `json:"summary"`
	Cause        *causeInput    `json:"cause"`
	SessionID    *string        `json:"session_id"`
	Status       string         `json:"status"`
	ParamsSchema map[string]any `json:"params_schema"`
	Metadata     map[string]any `json:"metadata"`
	Lift         *bool          `json:"lift"`
}

type causeInput struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
}

type captureAnswer struct {
	Procedure      *procedures.Procedure `json:"procedure"`
	Created        bool                  `json:"created"`
	VersionCreated bool                  `json:"version_created"`
	Counted        bool                  `json:"counted"`
	// Version names the version this capture stored (null for a use): the
	// procedure's current version may be another.
	Version *procedures.CapturedVersion `json:"version"`
	// Suggestion: an exposed procedure to call instead (reuse before
	// regenerate), null when none.
	Suggestion *reuse.Suggestion `json:"suggestion"`
	// Lifted: the literals lifted into parameters; Warnings: why literals
	// that could have been were not.
	Lifted   []procedures.Lifted  `json:"lifted"`
	Warnings []procedures.Warning `json:"warnings"`
}

func (s *Server) capture(w http.ResponseWriter, r *http.Request) error {
	var b captureBody
	if err := s.decodeBody(r.Body, "CaptureRequest", s.maxBody, &b); err != nil {
		return err
	}
	req := procedures.CaptureRequest{
		Code: b.Code, Dialect: b.Dialect, Summary: deref(b.Summary), SessionID: deref(b.SessionID),
		IdempotencyKey: r.Header.Get("Idempotency-Key"), Status: procedures.Status(b.Status),
		ParamsSchema: b.ParamsSchema, Metadata: b.Metadata, NoLift: b.Lift != nil && !*b.Lift,
	}
	if b.Cause != nil {
		req.Cause = &procedures.CauseInput{Name: b.Cause.Name, Description: deref(b.Cause.Description)}
	}
	out, err := s.svc.Capture(r.Context(), req)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if out.Created {
		status = http.StatusCreated
	}
	writeJSON(w, status, captureAnswer{Procedure: out.Procedure, Created: out.Created, VersionCreated: out.VersionCreated, Counted: out.Counted, Version: out.Version, Suggestion: out.Suggestion,
		Lifted: out.Lifted, Warnings: out.Warnings})
	return nil
}

func (s *Server) findProcedures(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	page, total, err := s.svc.Find(r.Context(), procedures.FindRequest{
		Q: q.Get("q"), Causes: q["cause"], Tools: q["tool"], MinTools: queryInt(r, "min_tools", 0),
		Status: procedures.Status(q.Get("status")), ReadOnly: queryBool(r, "read_only"), Exposed: queryBool(r, "exposed"),
		Limit: queryInt(r, "limit", fields.DefaultFindLimit), Offset: queryInt(r, "offset", 0),
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"procedures": page, "total": total})
	return nil
}

func (s *Server) plannerTools(w http.ResponseWriter, r *http.Request) error {
	tools, err := s.replay.ToolsMatching(r.Context(), r.URL.Query().Get("q"), r.URL.Query()["cause"], queryInt(r, "limit", fields.DefaultFindLimit))
	if err != nil {
		return err
	}
	if tools == nil {
		tools = []replay.ToolDescriptor{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": tools})
	return nil
}

func (s *Server) getProcedure(w http.ResponseWriter, r *http.Request) error {
	p, err := s.svc.Get(r.Context(), urlParam(r, "name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) versions(w http.ResponseWriter, r *http.Request) error {
	vs, err := s.svc.Versions(r.Context(), urlParam(r, "name"))
	if err != nil {
		return err
	}
	listed := make([]procedures.Version, len(vs))
	for i, v := range vs {
		listed[i] = v.Listed()
	}
	writeJSON(w, http.StatusOK, map[string]any{"versions": listed})
	return nil
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) error {
	name, hash := urlParam(r, "name"), urlParam(r, "code_hash")
	p, err := s.svc.Get(r.Context(), name)
	if err != nil {
		return err
	}
	v, err := s.svc.VersionView(r.Context(), name, hash)
	if err != nil {
		return err
	}
	v.Current = p.CodeHash == v.CodeHash
	writeJSON(w, http.StatusOK, v)
	return nil
}

type decisionAnswer struct {
	Procedure *procedures.Procedure `json:"procedure"`
	Decision  audit.Decision        `json:"decision"`
}

type reasonBody struct {
	Reason *string `json:"reason"`
}

func (s *Server) promote(w http.ResponseWriter, r *http.Request) error {
	var b reasonBody
	if err := s.optionalBody(r, "ReasonBody", &b); err != nil {
		return err
	}
	p, d, err := s.svc.Promote(r.Context(), procedures.PromoteRequest{
		Name: urlParam(r, "name"), CodeHash: urlParam(r, "code_hash"), Reason: deref(b.Reason), Actor: principalOf(r).Name,
	})
	return s.answerDecision(w, p, d, err)
}

// answerDecision answers a grant, revoke, promote or retire: the procedure
// and its decision (recorded and counted by the service's Recorder); a
// refusal is answered as an error.
func (s *Server) answerDecision(w http.ResponseWriter, p *procedures.Procedure, d audit.Decision, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, decisionAnswer{Procedure: p, Decision: d})
	return nil
}

func (s *Server) grantAutoRun(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Enabled bool    `json:"enabled"`
		Reason  *string `json:"reason"`
	}
	if err := s.decodeBody(r.Body, "AutoRunPut", s.maxBody, &b); err != nil {
		return err
	}
	return s.setAutoRun(w, r, b.Enabled, deref(b.Reason))
}

func (s *Server) revokeAutoRun(w http.ResponseWriter, r *http.Request) error {
	var b reasonBody
	if err := s.optionalBody(r, "ReasonBody", &b); err != nil {
		return err
	}
	return s.setAutoRun(w, r, false, deref(b.Reason))
}

func (s *Server) setAutoRun(w http.ResponseWriter, r *http.Request, enabled bool, reason string) error {
	p, d, err := s.svc.SetAutoRun(r.Context(), procedures.AutoRunRequest{
		Name: urlParam(r, "name"), Enabled: enabled, Reason: reason, Actor: principalOf(r).Name,
	})
	return s.answerDecision(w, p, d, err)
}

// retire is PUT /v1/procedures/{name}/retirement (admin): the procedure is
// hidden from planners and refused on invoke, audited as a retire decision.
func (s *Server) retire(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Reason string `json:"reason"`
	}
	if err := s.decodeBody(r.Body, "RetirementPut", s.maxBody, &b); err != nil {
		return err
	}
	return s.setRetired(w, r, true, b.Reason)
}

// unretire is DELETE /v1/procedures/{name}/retirement (admin).
func (s *Server) unretire(w http.ResponseWriter, r *http.Request) error {
	var b reasonBody
	if err := s.optionalBody(r, "ReasonBody", &b); err != nil {
		return err
	}
	return s.setRetired(w, r, false, deref(b.Reason))
}

func (s *Server) setRetired(w http.ResponseWriter, r *http.Request, retired bool, reason string) error {
	p, d, err := s.svc.SetRetired(r.Context(), procedures.RetireRequest{
		Name: urlParam(r, "name"), Retired: retired, Reason: reason, Actor: principalOf(r).Name,
	})
	return s.answerDecision(w, p, d, err)
}

// liftDemotion is DELETE /v1/procedures/{name}/demotion (admin): an
// operator lifts the procedure's demotion, audited as a health decision.
func (s *Server) liftDemotion(w http.ResponseWriter, r *http.Request) error {
	var b reasonBody
	if err := s.optionalBody(r, "ReasonBody", &b); err != nil {
		return err
	}
	p, d, err := s.svc.LiftDemotion(r.Context(), procedures.LiftDemotionRequest{
		Name: urlParam(r, "name"), Reason: deref(b.Reason), Actor: principalOf(r).Name,
	})
	return s.answerDecision(w, p, d, err)
}

type invokeBody struct {
	Arguments  map[string]any `json:"arguments"`
	Phase      string         `json:"phase"`
	SessionID  *string        `json:"session_id"`
	Cause      *string        `json:"cause"`
	ReviewedBy *string        `json:"reviewed_by"`
}

func (s *Server) invoke(w http.ResponseWriter, r *http.Request) error {
	var b invokeBody
	if err := s.decodeBody(r.Body, "InvokeRequest", s.maxBody, &b); err != nil {
		return err
	}
	caller := principalOf(r)
	res, err := s.replay.Invoke(r.Context(), replay.InvokeRequest{
		Name: urlParam(r, "name"), Arguments: b.Arguments, Phase: audit.Phase(b.Phase),
		SessionID: deref(b.SessionID), IdempotencyKey: r.Header.Get("Idempotency-Key"), Cause: deref(b.Cause),
		ReviewedBy: deref(b.ReviewedBy), ReviewerHasGrantScope: caller.Has(auth.ScopeGrant), Actor: caller.Name,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// optionalBody decodes a body that may be absent.
func (s *Server) optionalBody(r *http.Request, schema string, dst any) error {
	if r.ContentLength == 0 && r.Header.Get("Transfer-Encoding") == "" {
		return nil
	}
	return s.decodeBody(r.Body, schema, s.maxBody, dst)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// recordings is GET /v1/procedures/{name}/recordings (grant): a page of
// them; they hold tool output.
func (s *Server) recordings(w http.ResponseWriter, r *http.Request) error {
	rs, total, err := s.svc.Recordings(r.Context(), urlParam(r, "name"), r.URL.Query().Get("version"),
		queryInt(r, "limit", recording.DefaultRecordingsPage), queryInt(r, "offset", 0))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"recordings": rs, "total": total})
	return nil
}

// purgeRecordings is DELETE /v1/procedures/{name}/recordings (grant),
// audited as a recordings decision.
func (s *Server) purgeRecordings(w http.ResponseWriter, r *http.Request) error {
	var b reasonBody
	if err := s.optionalBody(r, "ReasonBody", &b); err != nil {
		return err
	}
	d, n, err := s.svc.PurgeRecordings(r.Context(), urlParam(r, "name"), principalOf(r).Name, deref(b.Reason))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"decision": d, "deleted": n})
	return nil
}

// verify is POST /v1/procedures/{name}/verify (invoke): a version
// replayed against its recordings, calling no tool.
func (s *Server) verify(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Version *string `json:"version"`
	}
	if err := s.optionalBody(r, "VerifyRequest", &b); err != nil {
		return err
	}
	ans, err := s.replay.Verify(r.Context(), urlParam(r, "name"), deref(b.Version), principalOf(r).Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ans)
	return nil
}
