package main

// The mutants of docs/design.md "Tokens in the store" (issue 34 item 1):
// revocation and rotation seen without a restart, expiry, the scopes a
// rotation keeps, the audit of every change, who may manage tokens, and
// a tokens file that cannot bring a revoked token back.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "tok/revoked-token-accepted",
			Why:      "a revoked token stays in the authenticator's copy of the store's tokens: it is still accepted",
			Edits:    []Edit{{Dir: "auth", Find: "if !r.RevokedAt.IsZero() {\n\t\t\tcontinue\n\t\t}", Replace: "if false {\n\t\t\tcontinue\n\t\t}"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTokenCommandsThroughTheServer"},
		},
		{
			Name:     "tok/store-never-read-again",
			Why:      "the authenticator never reads the store again after start: a token created, rotated or revoked elsewhere needs a restart",
			Edits:    []Edit{{Dir: "auth", Find: "return l.now().Sub(l.synced) < SyncEvery", Replace: "return true"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTokenCommandsThroughTheServer"},
		},
		{
			Name:     "tok/expiry-ignored",
			Why:      "a token past its expiry is accepted",
			Edits:    []Edit{{Dir: "auth", Find: "if !t.expires.IsZero() && !now.Before(t.expires) {", Replace: "if false {"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestExpiredTokenRefused"},
		},
		{
			Name:     "tok/scope-widened-on-rotate",
			Why:      "a rotated token gets every scope instead of the old token's",
			Edits:    []Edit{{Dir: "tokens", Find: "Scopes: slices.Clone(old.Scopes),", Replace: `Scopes: []string{"read", "capture", "invoke", "grant", "admin"},`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTokenCommandsThroughTheServer"},
		},
		{
			Name:     "tok/audit-missing",
			Why:      "a token created in the embedded store leaves no audit record",
			Edits:    []Edit{{Dir: "graph/embedded", Find: "if out, err = createToken(tx, rec, reuse); err != nil { return err } return appendDecision(tx, d)", Replace: "if out, err = createToken(tx, rec, reuse); err != nil { return err }; return nil"}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTokenCommandsThroughTheServer"},
		},
		{
			Name:     "tok/hash-in-audit",
			Why:      "a token change's audit record carries the token's hash",
			Edits:    []Edit{{Dir: "tokens", Find: `note := fmt.Sprintf("holder %s; scopes %s", rec.Holder, strings.Join(rec.Scopes, ","))`, Replace: `note := fmt.Sprintf("holder %s; scopes %s; %s", rec.Holder, strings.Join(rec.Scopes, ","), rec.SHA256)`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTokenCommandsThroughTheServer"},
		},
		{
			Name:     "tok/any-scope-manages-tokens",
			Why:      "a token without the admin scope creates tokens (an agent mints itself an admin token)",
			Edits:    []Edit{{Dir: "api", Find: `{method: "POST", pattern: "/v1/tokens", scope: auth.ScopeAdmin,`, Replace: `{method: "POST", pattern: "/v1/tokens", scope: auth.ScopeRead,`}},
			Packages: []string{"./cmd/procgraph"},
			Tests:    []string{"TestTokenCommandsThroughTheServer"},
		},
		{
			Name:     "tok/file-revives-revoked",
			Why:      "a tokens file imported at start brings back a holder revoked in the store",
			Edits:    []Edit{{Dir: "graph/embedded", Find: "if old != nil && (old.RevokedAt == 0 || !reuse) {", Replace: "if old != nil && old.RevokedAt == 0 {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Tokens"},
		},
		{
			Name:     "tok/first-tokens-every-start",
			Why:      "the first tokens are created again on a store that holds tokens",
			Edits:    []Edit{{Dir: "graph/embedded", Find: "if getU64(tx.Bucket(bMeta).Get(metaTokenRevision)) != 0 {", Replace: "if false {"}},
			Packages: []string{"./graph/embedded"},
			Tests:    []string{"TestStore/Tokens"},
		},
	}...)
}
