package api

import "net/http"

// noSniff marks an answer X-Content-Type-Options: nosniff, so a browser
// never reads a body (a stored value, a DOT label, a dump line) as anything
// but its Content-Type. Server.ServeHTTP and Protect call it before
// anything else, so every answer carries it: routes, errors, refusals,
// streams, metrics, the console and MCP.
func noSniff(w http.ResponseWriter) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
}
