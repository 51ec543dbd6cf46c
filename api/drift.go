package api

import (
	"net/http"

	"github.com/procgraph/procgraph/procedures"
)

// drift answers GET /v1/drift: a page of the stale versions.
func (s *Server) drift(w http.ResponseWriter, r *http.Request) error {
	page, err := s.svc.Drifted(r.Context(), queryInt(r, "limit", defaultDriftLimit), queryInt(r, "offset", 0))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// acceptDrift answers POST …/versions/{code_hash}/accept-drift.
func (s *Server) acceptDrift(w http.ResponseWriter, r *http.Request) error {
	var b reasonBody
	if err := s.optionalBody(r, "ReasonBody", &b); err != nil {
		return err
	}
	p, d, err := s.svc.AcceptDrift(r.Context(), procedures.AcceptDriftRequest{
		Name: urlParam(r, "name"), CodeHash: urlParam(r, "code_hash"), Reason: deref(b.Reason), Actor: principalOf(r).Name,
	})
	return s.answerDecision(w, p, d, err)
}
