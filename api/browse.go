package api

import (
	"net/http"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/graphview"
	"github.com/procgraph/procgraph/procedures"
)

func (s *Server) causes(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.svc.Causes(r.Context())
	if err != nil {
		return err
	}
	if cs == nil {
		cs = []procedures.Cause{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"causes": cs})
	return nil
}

func (s *Server) cause(w http.ResponseWriter, r *http.Request) error {
	c, procs, err := s.svc.Cause(r.Context(), urlParam(r, "name"))
	if err != nil {
		return err
	}
	if procs == nil {
		procs = []procedures.CauseProcedure{}
	}
	writeJSON(w, http.StatusOK, causeBody{Name: c.Name, Description: c.Description, Frequency: c.Frequency,
		ProcedureCount: c.Procedures, Procedures: procs})
	return nil
}

// causeBody is one cause with its procedures and their edge frequencies.
type causeBody struct {
	Name           string                      `json:"name"`
	Description    string                      `json:"description"`
	Frequency      int64                       `json:"frequency"`
	ProcedureCount int64                       `json:"procedure_count"`
	Procedures     []procedures.CauseProcedure `json:"procedures"`
}

func (s *Server) graph(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	g, err := s.svc.Graph(r.Context(), graphview.GraphQuery{
		Procedures: q["procedure"], Causes: q["cause"], Tools: q["tool"], Depth: queryInt(r, "depth", 1),
		Limit: queryInt(r, "limit", 0), Offset: queryInt(r, "offset", 0),
	})
	if err != nil {
		return err
	}
	writeGraph(w, q.Get("format"), g)
	return nil
}

func (s *Server) decisions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit := queryInt(r, "limit", audit.DefaultDecisionLimit)
	ds, err := s.svc.Decisions(r.Context(), audit.DecisionFilter{
		Procedure: q.Get("procedure"), Kind: audit.DecisionKind(q.Get("kind")), Limit: limit, Before: q.Get("before"),
		Actor: q.Get("actor"), Outcome: audit.Outcome(q.Get("outcome")), Since: queryTime(r, "since"), Until: queryTime(r, "until"),
	})
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []audit.Decision{}
	}
	// next pages back: pass it as before. It is null when this page was
	// not full (nothing older matches).
	var next *string
	if len(ds) == limit {
		next = &ds[len(ds)-1].ID
	}
	writeJSON(w, http.StatusOK, map[string]any{"decisions": ds, "next": next})
	return nil
}
