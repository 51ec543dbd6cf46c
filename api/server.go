// Package api serves procgraph's HTTP API v1 (see API.md): capture, find,
// the planner view, replay, auto-run grants, the catalogue, causes, the
// graph and the audit log, with bearer-token scopes, request validation by
// JSON Schema, Prometheus metrics and an OpenAPI 3.1 document.
package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
)

// Body limits.
const (
	DefaultMaxBody = 1 << 20
)

// Config wires a Server.
type Config struct {
	Service  *procedures.Service
	Replayer *replay.Replayer
	Auth     *Authenticator
	Metrics  *Metrics
	Logger   zerolog.Logger
	// MaxBody bounds request bodies; DefaultMaxBody when zero.
	MaxBody int64
	// OnCatalogueChange is called after a catalogue put (e.g. to notify
	// MCP clients); optional.
	OnCatalogueChange func()
	// MCPPaths are the MCP endpoints mounted beside this server (path to a
	// one-line summary), documented in /openapi.json; optional.
	MCPPaths map[string]string
	// OnChange is called after any change that may change the exposed set:
	// a capture, a grant or revoke, a promote; optional. It must not block.
	OnChange func()
}

// Server is procgraph's HTTP API.
type Server struct {
	svc      *procedures.Service
	replay   *replay.Replayer
	auth     *Authenticator
	metrics  *Metrics
	log      zerolog.Logger
	maxBody  int64
	schemas  schemaSet
	router   chi.Router
	onCat    func()
	onChg    func()
	mcpPaths map[string]string
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	schemas, err := compileRequestSchemas()
	if err != nil {
		return nil, err
	}
	s := &Server{svc: cfg.Service, replay: cfg.Replayer, auth: cfg.Auth, metrics: cfg.Metrics,
		log: cfg.Logger, maxBody: cfg.MaxBody, schemas: schemas, onCat: cfg.OnCatalogueChange, onChg: cfg.OnChange, mcpPaths: cfg.MCPPaths}
	if s.auth == nil {
		s.auth = NewAuthenticator(nil)
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	s.router = s.routes()
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// Router returns the chi router (for route listings).
func (s *Server) Router() chi.Router { return s.router }

// Metrics returns the server's metrics registry.
func (s *Server) Metrics() *Metrics { return s.metrics }

// route is one operation of the contract.
type route struct {
	method, pattern string
	scope           Scope // "" for the unauthenticated operations endpoints
	handler         func(http.ResponseWriter, *http.Request) error
	summary         string
	body            string // request schema name, "" when there is no body
	response        string // answer schema name (OpenAPI), "" when not JSON
	query           []queryParam
}

// routes lists every operation; the router and the OpenAPI document are both
// built from it.
func (s *Server) routeTable() []route {
	return []route{
		{method: "GET", pattern: "/healthz", handler: s.healthz, summary: "Process liveness", response: "Status"},
		{method: "GET", pattern: "/readyz", handler: s.readyz, summary: "Store readiness", response: "Status"},
		{method: "GET", pattern: "/metrics", handler: s.metricsHandler, summary: "Prometheus metrics"},
		{method: "GET", pattern: "/openapi.json", handler: s.openapi, summary: "This API as OpenAPI 3.1"},
		{method: "GET", pattern: "/v1/tools", scope: ScopeRead, handler: s.getTools, summary: "The tool catalogue", response: "Catalogue"},
		{method: "PUT", pattern: "/v1/tools", scope: ScopeAdmin, handler: s.putTools, summary: "Replace the tool catalogue", body: "ToolsPut", response: "Catalogue"},
		{method: "POST", pattern: "/v1/procedures", scope: ScopeCapture, handler: s.capture, summary: "Capture a procedure", body: "CaptureRequest", response: "CaptureAnswer"},
		{method: "GET", pattern: "/v1/procedures", scope: ScopeRead, handler: s.findProcedures, summary: "find_all_procedures", query: findParams, response: "ProcedureList"},
		{method: "GET", pattern: "/v1/procedures/tools", scope: ScopeRead, handler: s.plannerTools, summary: "Exposed procedures as tool descriptors", query: plannerParams, response: "PlannerTools"},
		{method: "GET", pattern: "/v1/procedures/{name}", scope: ScopeRead, handler: s.getProcedure, summary: "One procedure", response: "Procedure"},
		{method: "GET", pattern: "/v1/procedures/{name}/versions", scope: ScopeRead, handler: s.versions, summary: "A procedure's versions", response: "Versions"},
		{method: "GET", pattern: "/v1/procedures/{name}/versions/{code_hash}", scope: ScopeRead, handler: s.version, summary: "One version with its code (review before promoting)", response: "Version"},
		{method: "POST", pattern: "/v1/procedures/{name}/versions/{code_hash}/promote", scope: ScopeGrant, handler: s.promote, summary: "Make a version current", body: "ReasonBody", response: "DecisionAnswer"},
		{method: "PUT", pattern: "/v1/procedures/{name}/auto-run", scope: ScopeGrant, handler: s.grantAutoRun, summary: "set_procedure_auto_run", body: "AutoRunPut", response: "DecisionAnswer"},
		{method: "DELETE", pattern: "/v1/procedures/{name}/auto-run", scope: ScopeGrant, handler: s.revokeAutoRun, summary: "Revoke durable auto-run", body: "ReasonBody", response: "DecisionAnswer"},
		{method: "POST", pattern: "/v1/procedures/{name}/invoke", scope: ScopeInvoke, handler: s.invoke, summary: "Replay a procedure", body: "InvokeRequest", response: "InvokeAnswer"},
		{method: "GET", pattern: "/v1/causes", scope: ScopeRead, handler: s.causes, summary: "Every cause", response: "Causes"},
		{method: "GET", pattern: "/v1/causes/{name}", scope: ScopeRead, handler: s.cause, summary: "One cause and its procedures", response: "CauseAnswer"},
		{method: "GET", pattern: "/v1/graph", scope: ScopeRead, handler: s.graph, summary: "A neighbourhood of the procedure graph", query: graphParams, response: "Graph"},
		{method: "GET", pattern: "/v1/decisions", scope: ScopeRead, handler: s.decisions, summary: "The audit log, newest first", query: decisionParams, response: "Decisions"},
	}
}

func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, procedures.Errorf(procedures.CodeNotFound, "no route for %s %s", r.Method, r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: errorDetail{Code: string(procedures.CodeInvalid),
			Message: fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path), Details: map[string]any{}}})
	})
	for _, rt := range s.routeTable() {
		r.Method(rt.method, rt.pattern, s.wrap(rt))
	}
	return r
}

// wrap adds to a handler: request id, recovery, authentication and scope,
// query-parameter checking, metrics and the request log.
func (s *Server) wrap(rt route) http.Handler {
	allowed := map[string]bool{}
	for _, q := range rt.query {
		allowed[q.name] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if v := recover(); v != nil {
				s.log.Error().Str("request_id", id).Str("route", rt.pattern).Str("panic", fmt.Sprint(v)).Msg("handler panicked")
				if !rec.wrote {
					s.writeError(rec, r, fmt.Errorf("panic: %v", v))
				}
			}
			d := time.Since(start)
			s.metrics.ObserveRequest(rt.pattern, r.Method, rec.status, d)
			actor := principalOf(r).Name
			s.log.Info().Str("request_id", id).Str("method", r.Method).Str("route", rt.pattern).
				Int("status", rec.status).Dur("duration", d).Str("actor", actor).Msg("request")
		}()
		if rt.scope != "" {
			p, err := s.auth.Authenticate(r)
			if err != nil {
				rec.Header().Set("WWW-Authenticate", `Bearer realm="procgraph"`)
				s.writeError(rec, r, err)
				return
			}
			r = r.WithContext(withPrincipal(r.Context(), p))
			if !p.Has(rt.scope) {
				s.writeError(rec, r, procedures.Errorf(procedures.CodeForbidden, "the token lacks the %s scope", rt.scope).WithDetails("scope", string(rt.scope)))
				return
			}
		}
		if err := checkQuery(r, rt.query, allowed); err != nil {
			s.writeError(rec, r, err)
			return
		}
		if rt.body != "" {
			if err := checkContentType(r); err != nil {
				s.writeError(rec, r, err)
				return
			}
			r.Body = http.MaxBytesReader(rec, r.Body, s.maxBody+1)
		}
		if err := rt.handler(rec, r); err != nil {
			s.writeError(rec, r, err)
		}
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusRecorder) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if !w.wrote {
		w.wrote = true
	}
	return w.ResponseWriter.Write(b)
}

type requestIDKey struct{}

func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey{}).(string)
	return id
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// changed runs the OnChange hook, if any.
func (s *Server) changed() {
	if s.onChg != nil {
		s.onChg()
	}
}
