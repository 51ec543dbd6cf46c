// Package ui is procgraph's console (docs/api.md "Console"): static assets
// embedded in the binary, served by api at /ui/. The pages use the public
// API only, render every value as text (never HTML) and run under a strict
// Content-Security-Policy.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static vendor/cytoscape.min.js vendor/cytoscape.LICENSE
var assets embed.FS

// ContentSecurityPolicy is the policy every console answer carries: scripts,
// styles and connections only from procgraph itself, no inline code, no
// plugins, no framing.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// SetHeaders sets the headers every console answer carries, whoever
// writes it (Handler, and the server's redirect of /ui to /ui/):
// ContentSecurityPolicy, no framing, no referrer, and no caching beyond
// revalidation. X-Content-Type-Options: nosniff is set on every answer of
// the server, the console's included, by api.Protect.
func SetHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
}

// Handler serves the console's files; mount it under /ui/ with that prefix
// stripped. Every answer carries SetHeaders' headers.
func Handler() http.Handler {
	static, _ := fs.Sub(assets, "static")
	vendor, _ := fs.Sub(assets, "vendor")
	mux := http.NewServeMux()
	mux.Handle("/vendor/", http.StripPrefix("/vendor/", http.FileServerFS(vendor)))
	mux.Handle("/", http.FileServerFS(static))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetHeaders(w.Header())
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the console is read with GET", http.StatusMethodNotAllowed)
			return
		}
		mux.ServeHTTP(w, r)
	})
}
