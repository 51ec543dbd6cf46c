package api

import (
	"net/http"
	"time"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/tokens"
)

// tokenRoutes are the routes of the store's bearer tokens (admin):
// docs/api.md "Tokens". A token is in an answer once, when it is made;
// never in a list, a log or an audit record.
func (s *Server) tokenRoutes() []route {
	return []route{
		{method: "GET", pattern: "/v1/tokens", scope: auth.ScopeAdmin, handler: s.listTokens, summary: "Every token the store keeps (holder, scopes, creation, last use, expiry, revocation; never the token or its hash)", response: "TokenList"},
		{method: "POST", pattern: "/v1/tokens", scope: auth.ScopeAdmin, handler: s.createToken, summary: "Create a token: it is answered once, only its hash is kept; audited", body: "TokenCreate", response: "TokenCreated"},
		{method: "POST", pattern: "/v1/tokens/{holder}/rotate", scope: auth.ScopeAdmin, handler: s.rotateToken, summary: "Give a holder a new token with the same scopes; the old one is refused on every instance within a second; audited", body: "TokenRotate", response: "TokenCreated"},
		{method: "DELETE", pattern: "/v1/tokens/{holder}", scope: auth.ScopeAdmin, handler: s.revokeToken, summary: "Revoke a holder's token: refused on every instance within a second; audited", response: "TokenAnswer"},
	}
}

// TokenView is a token record as the API (and the CLI offline) answers
// it: never the token or its hash.
type TokenView struct {
	Holder     string     `json:"holder"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  time.Time  `json:"created_at"`
	CreatedBy  string     `json:"created_by"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	Status     string     `json:"status"`
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// TokenViewOf is r's view at now: status live, expired or revoked.
func TokenViewOf(r auth.TokenRecord, now time.Time) TokenView {
	v := TokenView{Holder: r.Holder, Scopes: r.Scopes, CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy,
		ExpiresAt: timeOrNil(r.ExpiresAt), LastUsedAt: timeOrNil(r.LastUsedAt), RevokedAt: timeOrNil(r.RevokedAt), Status: "live"}
	switch {
	case !r.RevokedAt.IsZero():
		v.Status = "revoked"
	case !r.Live(now):
		v.Status = "expired"
	}
	if v.Scopes == nil {
		v.Scopes = []string{}
	}
	return v
}

func (s *Server) tokenAdmin() (TokenAdmin, error) {
	if s.tokens == nil {
		return nil, fault.Errorf(fault.CodeUnavailable, "this server keeps no tokens")
	}
	return s.tokens, nil
}

// listTokens is GET /v1/tokens.
func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) error {
	ta, err := s.tokenAdmin()
	if err != nil {
		return err
	}
	recs, err := ta.List(r.Context())
	if err != nil {
		return err
	}
	now := time.Now()
	out := make([]TokenView, len(recs))
	for i, rec := range recs {
		out[i] = TokenViewOf(rec, now)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": out})
	return nil
}

// expiry is the expiry of a body's expires_in_s (zero: none).
func expiry(in *int64) time.Time {
	if in == nil {
		return time.Time{}
	}
	return time.Now().Add(time.Duration(*in) * time.Second)
}

// createToken is POST /v1/tokens.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	ta, err := s.tokenAdmin()
	if err != nil {
		return err
	}
	var b struct {
		Holder    string   `json:"holder"`
		Scopes    []string `json:"scopes"`
		ExpiresIn *int64   `json:"expires_in_s"`
	}
	if err := s.decodeBody(r.Body, "TokenCreate", s.maxBody, &b); err != nil {
		return err
	}
	c, err := ta.Create(r.Context(), tokens.CreateRequest{Holder: b.Holder, Scopes: b.Scopes, ExpiresAt: expiry(b.ExpiresIn), Actor: principalOf(r).Name})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"token": c.Token, "record": TokenViewOf(c.Record, time.Now())})
	return nil
}

// rotateToken is POST /v1/tokens/{holder}/rotate.
func (s *Server) rotateToken(w http.ResponseWriter, r *http.Request) error {
	ta, err := s.tokenAdmin()
	if err != nil {
		return err
	}
	var b struct {
		ExpiresIn *int64 `json:"expires_in_s"`
	}
	if err := s.optionalBody(r, "TokenRotate", &b); err != nil {
		return err
	}
	c, err := ta.Rotate(r.Context(), urlParam(r, "holder"), expiry(b.ExpiresIn), principalOf(r).Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"token": c.Token, "record": TokenViewOf(c.Record, time.Now())})
	return nil
}

// revokeToken is DELETE /v1/tokens/{holder}.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	ta, err := s.tokenAdmin()
	if err != nil {
		return err
	}
	rec, err := ta.Revoke(r.Context(), urlParam(r, "holder"), principalOf(r).Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"record": TokenViewOf(rec, time.Now())})
	return nil
}
