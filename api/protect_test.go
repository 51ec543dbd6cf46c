package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/procgraph/procgraph/auth"
)

func TestProtect(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	tokens := auth.NewAuthenticator(&auth.TokensFile{Tokens: []auth.TokenEntry{{Name: "a", SHA256: auth.HashToken("t"), Scopes: []string{"read"}}}})
	tests := []struct {
		name    string
		auth    *auth.Authenticator
		method  string
		host    string
		headers map[string]string
		want    int
	}{
		{"loopback IPv4", nil, "GET", "127.0.0.1:8474", nil, 204},
		{"loopback name", nil, "POST", "localhost:8474", nil, 204},
		{"loopback IPv6", nil, "GET", "[::1]:8474", nil, 204},
		{"other 127 address", nil, "GET", "127.0.0.2", nil, 204},
		{"rebinding name without tokens", nil, "GET", "evil.example:8474", nil, 403},
		{"rebinding name, state change", nil, "PUT", "evil.example:8474", map[string]string{"Origin": "http://evil.example:8474"}, 403},
		{"public address without tokens", nil, "GET", "10.1.2.3:8474", nil, 403},
		{"any host with tokens", tokens, "GET", "procgraph.internal:8474", nil, 204},
		{"cross-site post", nil, "POST", "127.0.0.1:8474", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"cross-origin post", tokens, "POST", "procgraph.internal", map[string]string{"Origin": "https://evil.example"}, 403},
		{"cross-site get is safe", nil, "GET", "127.0.0.1:8474", map[string]string{"Sec-Fetch-Site": "cross-site"}, 204},
		{"same-origin post", nil, "POST", "127.0.0.1:8474", map[string]string{"Sec-Fetch-Site": "same-origin"}, 204},
		{"non-browser post", tokens, "POST", "procgraph.internal", nil, 204},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/v1/tools", nil)
			r.Host = tc.host
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			Protect(ok, tc.auth).ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body.String())
			}
			if got := w.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Fatalf("X-Content-Type-Options %q, want nosniff on every answer", got)
			}
			if tc.want == 403 && w.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("refusal is not in the error shape: %q", w.Body.String())
			}
			if tc.want == 403 {
				var body struct {
					Error struct {
						Code    string
						Details map[string]any
					}
				}
				want := "host_not_loopback"
				if tc.auth != nil || tc.headers["Sec-Fetch-Site"] == "cross-site" {
					want = "cross_origin"
				}
				if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Code != "forbidden" || body.Error.Details["reason"] != want {
					t.Fatalf("refusal %s, want forbidden with reason %s", w.Body.String(), want)
				}
			}
		})
	}
}
