package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"

	"github.com/procgraph/procgraph/procedures"
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

// TokenEntry is one token in the tokens file: its holder, the sha256 hex of
// the token, and its scopes. The token itself is never stored.
type TokenEntry struct {
	Name   string   `json:"name"`
	SHA256 string   `json:"sha256"`
	Scopes []string `json:"scopes"`
}

// TokensFile is the tokens file's shape.
type TokensFile struct {
	Tokens []TokenEntry `json:"tokens"`
}

var (
	holderPattern = regexp.MustCompile(`^[A-Za-z0-9_.@-]{1,64}$`)
	hashPattern   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Validate checks every entry: a holder name, a 64-hex hash, known scopes,
// no duplicate holder or hash.
func (f *TokensFile) Validate() error {
	names, hashes := map[string]bool{}, map[string]bool{}
	for i, t := range f.Tokens {
		if !holderPattern.MatchString(t.Name) {
			return fmt.Errorf("tokens[%d].name %q must be 1-64 of [A-Za-z0-9_.@-]", i, t.Name)
		}
		if !hashPattern.MatchString(t.SHA256) {
			return fmt.Errorf("tokens[%d] (%s): sha256 must be 64 lower-case hex digits", i, t.Name)
		}
		if len(t.Scopes) == 0 {
			return fmt.Errorf("tokens[%d] (%s): scopes must not be empty", i, t.Name)
		}
		for _, s := range t.Scopes {
			if _, err := ParseScope(s); err != nil {
				return fmt.Errorf("tokens[%d] (%s): %v", i, t.Name, err)
			}
		}
		if names[t.Name] {
			return fmt.Errorf("tokens[%d]: holder %q appears twice", i, t.Name)
		}
		if hashes[t.SHA256] {
			return fmt.Errorf("tokens[%d] (%s): the same token hash appears twice", i, t.Name)
		}
		names[t.Name], hashes[t.SHA256] = true, true
	}
	return nil
}

// ReadTokensFile reads and validates a tokens file.
func ReadTokensFile(path string) (*TokensFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var f TokensFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s is not a tokens file: %v", path, err)
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &f, nil
}

// HashToken returns the sha256 hex of a token, as the tokens file keeps it.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Principal is who made a request: the token's holder and its scopes.
type Principal struct {
	Name   string
	Scopes map[Scope]bool
}

// Has reports whether p holds scope.
func (p Principal) Has(scope Scope) bool { return p.Scopes[scope] }

// Authenticator checks bearer tokens. With no tokens, every caller is
// "anonymous" with every scope (the server then listens on loopback only).
type Authenticator struct {
	entries []authEntry
}

type authEntry struct {
	hash      [32]byte
	principal Principal
}

// NewAuthenticator returns an authenticator for f; nil or empty f disables auth.
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
func (a *Authenticator) Enabled() bool { return len(a.entries) > 0 }

// anonymous is the caller when auth is off.
var anonymous = Principal{Name: "anonymous", Scopes: map[Scope]bool{
	ScopeRead: true, ScopeCapture: true, ScopeInvoke: true, ScopeGrant: true, ScopeAdmin: true}}

// Authenticate returns the principal for the request's bearer token. It
// compares the token's hash against every entry in constant time.
func (a *Authenticator) Authenticate(r *http.Request) (Principal, error) {
	if !a.Enabled() {
		return anonymous, nil
	}
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return Principal{}, procedures.Errorf(procedures.CodeUnauthorized, "a bearer token is required")
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	found := -1
	for i := range a.entries {
		if subtle.ConstantTimeCompare(sum[:], a.entries[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, procedures.Errorf(procedures.CodeUnauthorized, "the bearer token is not valid")
	}
	return a.entries[found].principal, nil
}

type principalKey struct{}

func withPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principalOf returns the request's authenticated principal.
func principalOf(r *http.Request) Principal {
	p, _ := r.Context().Value(principalKey{}).(Principal)
	return p
}
