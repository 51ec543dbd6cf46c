package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/auth"
)

// TestWhoAmI: GET /v1/whoami answers each token's holder and exactly its
// scopes (in auth.AllScopes order), never the token or its hash, and
// "anonymous" with every scope when auth is off; calling it asks nothing
// of the service, the replayer or the gate (so it writes no audit record).
func TestWhoAmI(t *testing.T) {
	e, f := mustFakeEnv(t, scopeAuthenticator(t))
	tests := []struct {
		name, token, holder string
		scopes              []string
	}{
		{name: "read", token: "tok-read", holder: "holder-read", scopes: []string{"read"}},
		{name: "admin", token: "tok-admin", holder: "holder-admin", scopes: []string{"admin"}},
		{name: "two scopes", token: "tok-operator", holder: "operator", scopes: []string{"invoke", "grant"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, body := e.send(t, scopeCase{method: "GET", path: "/v1/whoami"}, tc.token)
			if st != http.StatusOK {
				t.Fatalf("%d %s", st, body)
			}
			var me WhoAmI
			if err := json.Unmarshal(body, &me); err != nil {
				t.Fatal(err)
			}
			if me.Name != tc.holder || !slices.Equal(me.Scopes, tc.scopes) {
				t.Fatalf("whoami = %+v, want %s with %v", me, tc.holder, tc.scopes)
			}
			if strings.Contains(string(body), tc.token) || strings.Contains(string(body), auth.HashToken(tc.token)) {
				t.Fatalf("whoami shows the token or its hash: %s", body)
			}
		})
	}
	if calls := f.calls(); len(calls) != 0 {
		t.Fatalf("whoami called %v below the transport", calls)
	}

	open, _ := mustFakeEnv(t, nil)
	st, body := open.do(t, http.DefaultClient, "GET", "/v1/whoami", nil)
	var me WhoAmI
	_ = json.Unmarshal(body, &me)
	want := []string{"read", "capture", "invoke", "grant", "admin"}
	if st != http.StatusOK || me.Name != "anonymous" || !slices.Equal(me.Scopes, want) {
		t.Fatalf("without tokens: %d %s; want anonymous with %v", st, body, want)
	}
}
