package main

import (
	"net/http"
	"strings"
	"testing"
)

// consoleHeaders are the headers every console answer carries besides
// X-Content-Type-Options (ui.SetHeaders; nosniff is api.Protect's).
var consoleHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'",
	"X-Frame-Options":         "DENY",
	"Referrer-Policy":         "no-referrer",
}

// TestSecurityHeaders: every answer of a real Main — JSON, GraphML and DOT
// exports, the dump and backup streams, metrics, the change feed, errors,
// refusals before a route, MCP and the console — carries
// X-Content-Type-Options: nosniff, and every console answer (its redirect,
// files, a missing file, a refused method) carries the console's CSP,
// framing and referrer headers.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{})
	name := mustCaptureName(t, s, readOnlyCode, "h")
	cases := []struct {
		name, method, path string
		header             map[string]string
		status             int
		console            bool
	}{
		{"index", "GET", "/", nil, 200, false},
		{"healthz", "GET", "/healthz", nil, 200, false},
		{"metrics", "GET", "/metrics", nil, 200, false},
		{"openapi", "GET", "/openapi.json", nil, 200, false},
		{"procedure", "GET", "/v1/procedures/" + name, nil, 200, false},
		{"graph json", "GET", "/v1/graph?procedure=" + name, nil, 200, false},
		{"graph graphml", "GET", "/v1/graph?format=graphml&procedure=" + name, nil, 200, false},
		{"graph dot", "GET", "/v1/graph?format=dot&procedure=" + name, nil, 200, false},
		{"export", "GET", "/v1/export", nil, 200, false},
		{"backup", "GET", "/v1/backup", nil, 200, false},
		{"change feed", "GET", "/v1/changes", nil, 200, false},
		{"no route", "GET", "/v1/nothing", nil, 404, false},
		{"wrong method", "DELETE", "/healthz", nil, 405, false},
		{"bad query", "GET", "/v1/procedures?nope=1", nil, 400, false},
		{"not loopback", "GET", "/v1/tools", map[string]string{"Host": "evil.example"}, 403, false},
		{"cross-origin", "PUT", "/v1/tools", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403, false},
		{"mcp", "GET", "/mcp", nil, 0, false},
		{"console redirect", "GET", "/ui", nil, 301, true},
		{"console page", "GET", "/ui/", nil, 200, true},
		{"console script", "GET", "/ui/api.js", nil, 200, true},
		{"console vendor", "GET", "/ui/vendor/cytoscape.min.js", nil, 200, true},
		{"console missing", "GET", "/ui/nothing.js", nil, 404, true},
		{"console method", "POST", "/ui/", nil, 405, true},
	}
	noRedirect := &http.Client{Timeout: httpClient.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := http.NewRequest(c.method, s.URL+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.header {
				if k == "Host" {
					r.Host = v
				} else {
					r.Header.Set(k, v)
				}
			}
			resp, err := noRedirect.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close() // the change feed never ends: headers only
			if c.status != 0 && resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q (Content-Type %q)", got, resp.Header.Get("Content-Type"))
			}
			if !c.console {
				return
			}
			for k, want := range consoleHeaders {
				if got := resp.Header.Get(k); !strings.Contains(got, want) {
					t.Errorf("%s %q, want %q", k, got, want)
				}
			}
		})
	}
}
