// Package auth holds procgraph's bearer tokens and scopes: the tokens file
// (hashes, holders, scopes), the Authenticator that checks a request's
// token, and the Principal it yields. The HTTP API and the MCP server share
// it.
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"github.com/procgraph/procgraph/fault"
)

// Scope is a permission a token carries.
type Scope string

// The scopes.
const (
	ScopeRead    Scope = "read"
	ScopeCapture Scope = "capture"
	ScopeInvoke  Scope = "invoke"
	ScopeGrant   Scope = "grant"
	ScopeAdmin   Scope = "admin"
)

// AllScopes lists every scope.
var AllScopes = []Scope{ScopeRead, ScopeCapture, ScopeInvoke, ScopeGrant, ScopeAdmin}

// ParseScope checks a scope name.
func ParseScope(s string) (Scope, error) {
	for _, sc := range AllScopes {
		if string(sc) == s {
			return sc, nil
		}
	}
	return "", fmt.Errorf("unknown scope %q (want one of read, capture, invoke, grant, admin)", s)
}

// Principal is who made a request: the token's holder and its scopes.
type Principal struct {
	Name   string
	Scopes map[Scope]bool
}

// Has reports whether p holds scope.
func (p Principal) Has(scope Scope) bool { return p.Scopes[scope] }

// Anonymous is the caller when auth is off: every scope.
func Anonymous() Principal {
	all := make(map[Scope]bool, len(AllScopes))
	for _, s := range AllScopes {
		all[s] = true
	}
	return Principal{Name: "anonymous", Scopes: all}
}

// Authenticator checks bearer tokens. With no tokens, every caller is
// Anonymous (the server then listens on loopback only). Its tokens are a
// tokens file's (NewAuthenticator) or a store's (NewStoreAuthenticator,
// store.go: the store's tokens kept in memory and brought up to date at
// most SyncEvery after the last look, so that a token revoked on any
// instance is refused by every instance within it).
type Authenticator struct {
	entries []authEntry
	live    *liveTokens // nil: entries are the tokens
}

type authEntry struct {
	hash      [32]byte
	principal Principal
}

// NewAuthenticator returns an authenticator for f; nil or empty f disables
// auth. A server loads its tokens with LoadTokensFile, which refuses an
// empty file.
func NewAuthenticator(f *TokensFile) *Authenticator {
	a := &Authenticator{}
	if f == nil {
		return a
	}
	for _, t := range f.Tokens {
		var e authEntry
		raw, _ := hex.DecodeString(t.SHA256)
		copy(e.hash[:], raw)
		e.principal = Principal{Name: t.Name, Scopes: map[Scope]bool{}}
		for _, s := range t.Scopes {
			e.principal.Scopes[Scope(s)] = true
		}
		a.entries = append(a.entries, e)
	}
	return a
}

// Enabled reports whether tokens are required.
func (a *Authenticator) Enabled() bool { return a != nil && (a.live != nil || len(a.entries) > 0) }

// Authenticate returns the principal for the request's bearer token. It
// compares the token's hash against every entry in constant time. Errors
// have code unauthorized.
func (a *Authenticator) Authenticate(r *http.Request) (Principal, error) {
	if !a.Enabled() {
		return Anonymous(), nil
	}
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return Principal{}, fault.Errorf(fault.CodeUnauthorized, "a bearer token is required")
	}
	return a.Check(r.Context(), strings.TrimSpace(token))
}

// Check returns the principal of token. A store's tokens are looked up by
// the token's hash and the hash compared in constant time (checkLive); a
// tokens file's hash is compared against every entry in constant time.
// Errors have code unauthorized (unavailable when the store cannot be
// read: no token is then accepted).
func (a *Authenticator) Check(ctx context.Context, token string) (Principal, error) {
	sum := sha256.Sum256([]byte(token))
	if a.live != nil {
		return a.live.check(ctx, sum)
	}
	found := -1
	for i := range a.entries {
		if subtle.ConstantTimeCompare(sum[:], a.entries[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, fault.Errorf(fault.CodeUnauthorized, "the bearer token is not valid")
	}
	return a.entries[found].principal, nil
}

// Forbidden is the error of a request whose token lacks scope (code
// forbidden, details.scope).
func Forbidden(scope Scope) error {
	return fault.Errorf(fault.CodeForbidden, "the token lacks the %s scope", scope).WithDetails("scope", string(scope))
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal ctx carries, if any.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
