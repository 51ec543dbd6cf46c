package api

import (
	"net/http"

	"github.com/procgraph/procgraph/auth"
)

// WhoAmI is the answer of GET /v1/whoami: the holder of the request's token
// (the audit log's actor) and the scopes it carries, in auth.AllScopes
// order. Never the token or its hash. Without tokens configured it is
// "anonymous" with every scope.
type WhoAmI struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
}

// whoami answers who the token belongs to and what it may do, for any valid
// token whatever its scopes; it reads and changes nothing else.
func (s *Server) whoami(w http.ResponseWriter, r *http.Request) error {
	p := principalOf(r)
	me := WhoAmI{Name: p.Name, Scopes: []string{}}
	for _, sc := range auth.AllScopes {
		if p.Has(sc) {
			me.Scopes = append(me.Scopes, string(sc))
		}
	}
	writeJSON(w, http.StatusOK, me)
	return nil
}
