package api

import (
	"net/http"

	"github.com/procgraph/procgraph/procedures"
)

type catalogueBody struct {
	Tools    []procedures.Tool `json:"tools"`
	Revision string            `json:"revision"`
}

func (s *Server) getTools(w http.ResponseWriter, r *http.Request) error {
	c, err := s.svc.Catalogue(r.Context())
	if err != nil {
		return err
	}
	tools := c.Tools
	if tools == nil {
		tools = []procedures.Tool{}
	}
	writeJSON(w, http.StatusOK, catalogueBody{Tools: tools, Revision: c.Revision})
	return nil
}

func (s *Server) putTools(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Tools []procedures.Tool `json:"tools"`
	}
	if err := s.decodeBody(r.Body, "ToolsPut", s.maxBody, &body); err != nil {
		return err
	}
	c, err := s.svc.PutCatalogue(r.Context(), body.Tools, principalOf(r).Name)
	if err != nil {
		return err
	}
	s.log.Info().Str("actor", principalOf(r).Name).Int("tools", len(c.Tools)).Str("revision", c.Revision).Msg("catalogue replaced")
	tools := c.Tools
	if tools == nil {
		tools = []procedures.Tool{}
	}
	writeJSON(w, http.StatusOK, catalogueBody{Tools: tools, Revision: c.Revision})
	return nil
}
