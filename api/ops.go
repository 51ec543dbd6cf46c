package api

import (
	"net/http"
	"strings"
	"time"
)

// index answers GET /: where to go from here (the console, the API
// description, health, metrics, the API and MCP), each path with what it
// is.
func (s *Server) index(w http.ResponseWriter, r *http.Request) error {
	links := map[string]string{"/v1/": "the HTTP API (see /openapi.json)",
		"/ui/": "the console: browse, review and grant in a browser"}
	for _, rt := range s.routeTable() {
		if rt.method == "GET" && rt.pattern != "/" && !strings.HasPrefix(rt.pattern, "/v1/") {
			links[rt.pattern] = rt.summary
		}
	}
	for path, what := range s.mcpPaths {
		links[path] = what
	}
	writeJSON(w, http.StatusOK, map[string]any{"service": "procgraph", "links": links})
	return nil
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyTimeout bounds /readyz's store check.
const readyTimeout = 5 * time.Second

func (s *Server) metricsHandler(w http.ResponseWriter, r *http.Request) error {
	s.promhttp.ServeHTTP(w, r)
	return nil
}
