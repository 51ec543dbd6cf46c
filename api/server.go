// Package api serves procgraph's HTTP API v1 (see docs/api.md): capture, find,
// the planner view, replay, auto-run grants, the catalogue, causes, the
// graph and the audit log, with bearer-token scopes, request validation by
// JSON Schema, Prometheus metrics and an OpenAPI 3.1 document.
package api

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/go-chi/chi/v5"
	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/metrics"
)

// Body limits.
const (
	DefaultMaxBody = fields.MaxBodyBytes
)

// Config wires a Server.
type Config struct {
	Service  Service  // *procedures.Service, or a test's fake
	Replayer Replayer // *replay.Replayer, or a test's fake
	Auth     *auth.Authenticator
	Metrics  *metrics.Registry
	Logger   zerolog.Logger
	// MaxBody bounds request bodies; DefaultMaxBody when zero.
	MaxBody int64
	// MCPPaths are the MCP endpoints mounted beside this server (path to a
	// one-line summary), documented in /openapi.json; optional.
	MCPPaths map[string]string
	// Turns is the turn gate (*gate.Gate); without it (a nil interface)
	// the turn routes answer 503.
	Turns TurnGate
	// MaxChangeStreams bounds the open GET /v1/changes streams;
	// DefaultMaxChangeStreams when zero.
	MaxChangeStreams int
	// Draining, when set, is closed as the HTTP server's drain begins: the
	// change streams end then (they never end by themselves, and the
	// drain would wait out its grace for them).
	Draining <-chan struct{}
	// Dumps is the store GET /v1/export writes a dump of (dump.Write);
	// without it the route answers invalid: the store cannot be exported.
	Dumps dump.Source
	// Upstreams are the upstream servers (*mcpdispatch.Gateway) /readyz
	// and GET /v1/upstreams report on; without them there are none.
	Upstreams Upstreams
	// Tokens manages the store's bearer tokens (*tokens.Manager); without
	// it the token routes answer unavailable.
	Tokens TokenAdmin
}

// Server is procgraph's HTTP API.
type Server struct {
	svc      Service
	replay   Replayer
	auth     *auth.Authenticator
	metrics  *metrics.Registry
	promhttp http.Handler
	log      zerolog.Logger
	maxBody  int64
	schemas  schemaSet
	router   chi.Router
	mcpPaths map[string]string
	turns    TurnGate
	dumps    dump.Source
	// upstreams are the upstream servers; nil when none is configured.
	upstreams Upstreams
	tokens    TokenAdmin

	maxStreams int             // bound on open change streams
	streams    atomic.Int64    // open change streams
	draining   <-chan struct{} // closed when the drain begins (Config.Draining)
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	schemas, err := compileRequestSchemas()
	if err != nil {
		return nil, err
	}
	s := &Server{svc: cfg.Service, replay: cfg.Replayer, auth: cfg.Auth, metrics: cfg.Metrics,
		log: cfg.Logger, maxBody: cfg.MaxBody, schemas: schemas, mcpPaths: cfg.MCPPaths, turns: cfg.Turns,
		dumps: cfg.Dumps, tokens: cfg.Tokens, maxStreams: cfg.MaxChangeStreams, upstreams: cfg.Upstreams,
		draining: cfg.Draining}
	if s.maxStreams <= 0 {
		s.maxStreams = DefaultMaxChangeStreams
	}
	if s.auth == nil {
		s.auth = auth.NewAuthenticator(nil)
	}
	if s.metrics == nil {
		s.metrics = metrics.New()
	}
	s.promhttp = s.metrics.Handler()
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	s.router = s.routes()
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if serveUI(w, r) {
		return
	}
	s.router.ServeHTTP(w, r)
}

// Router returns the chi router (for route listings).
func (s *Server) Router() chi.Router { return s.router }

// Metrics returns the server's metrics registry.
func (s *Server) Metrics() *metrics.Registry { return s.metrics }

// route is one operation of the contract.
type route struct {
	method, pattern string
	scope           auth.Scope // "" for the unauthenticated operations endpoints (unless anyToken)
	anyToken        bool       // any valid token, whatever its scopes (scope "")
	handler         func(http.ResponseWriter, *http.Request) error
	summary         string
	body            string // request schema name, "" when there is no body
	response        string // answer schema name (OpenAPI), "" when not JSON
	query           []queryParam
	idempotencyKey  bool // the Idempotency-Key header is the usage key (docs/api.md)
	// recordings says every answer carries recordings (tool output): the
	// caller needs recordingsScope besides scope (checkRecordings).
	recordings bool
}

// routes lists every operation; the router and the OpenAPI document are both
// built from it.
func (s *Server) routeTable() []route {
	return append([]route{
		{method: "GET", pattern: "/", handler: s.index, summary: "Where to start: the endpoints without parameters and MCP", response: "Index"},
		{method: "GET", pattern: "/healthz", handler: s.healthz, summary: "Process liveness", response: "Status"},
		{method: "GET", pattern: "/readyz", handler: s.readyz, summary: "Readiness: the store (503 when it does not answer) and each upstream server's state", response: "Readiness"},
		{method: "GET", pattern: "/metrics", handler: s.metricsHandler, summary: "Prometheus metrics"},
		{method: "GET", pattern: "/openapi.json", handler: s.openapi, summary: "This API as OpenAPI 3.1"},
		{method: "GET", pattern: "/v1/whoami", anyToken: true, handler: s.whoami, summary: "The holder of this token and its scopes (never the token)", response: "WhoAmI"},
		{method: "GET", pattern: "/v1/upstreams", scope: auth.ScopeAdmin, handler: s.getUpstreams, summary: "The upstream servers: transport, state, negotiated MCP revision, tool counts, last failure class (never addresses, headers, environment or tokens)", query: upstreamParams, response: "Upstreams"},
		{method: "GET", pattern: "/v1/tools", scope: auth.ScopeRead, handler: s.getTools, summary: "The tool catalogue", response: "Catalogue"},
		{method: "PUT", pattern: "/v1/tools", scope: auth.ScopeAdmin, handler: s.putTools, summary: "Replace the tool catalogue", body: "ToolsPut", response: "Catalogue"},
		{method: "POST", pattern: "/v1/procedures", scope: auth.ScopeCapture, handler: s.capture, summary: "Capture a procedure", body: "CaptureRequest", response: "CaptureAnswer", idempotencyKey: true},
		{method: "GET", pattern: "/v1/procedures", scope: auth.ScopeRead, handler: s.findProcedures, summary: "find_all_procedures", query: findParams, response: "ProcedureList"},
		{method: "GET", pattern: "/v1/procedures/tools", scope: auth.ScopeRead, handler: s.plannerTools, summary: "Exposed procedures as tool descriptors", query: plannerParams, response: "PlannerTools"},
		{method: "GET", pattern: "/v1/procedures/{name}", scope: auth.ScopeRead, handler: s.getProcedure, summary: "One procedure", response: "Procedure"},
		{method: "GET", pattern: "/v1/procedures/{name}/versions", scope: auth.ScopeRead, handler: s.versions, summary: "A procedure's versions", response: "Versions"},
		{method: "GET", pattern: "/v1/procedures/{name}/versions/{code_hash}", scope: auth.ScopeRead, handler: s.version, summary: "One version with its code (review before promoting)", response: "Version"},
		{method: "POST", pattern: "/v1/procedures/{name}/versions/{code_hash}/promote", scope: auth.ScopeGrant, handler: s.promote, summary: "Make a version current", body: "ReasonBody", response: "DecisionAnswer"},
		{method: "POST", pattern: "/v1/procedures/{name}/versions/{code_hash}/accept-drift", scope: auth.ScopeGrant, handler: s.acceptDrift, summary: "Accept a stale version's drift: it takes the current tool contracts as its baseline (authorizations stay bound)", body: "ReasonBody", response: "DecisionAnswer"},
		{method: "GET", pattern: "/v1/drift", scope: auth.ScopeRead, handler: s.drift, summary: "Stale versions: their tools changed since they last worked, current ones first", query: driftParams, response: "DriftList"},
		{method: "PUT", pattern: "/v1/procedures/{name}/auto-run", scope: auth.ScopeGrant, handler: s.grantAutoRun, summary: "set_procedure_auto_run", body: "AutoRunPut", response: "DecisionAnswer"},
		{method: "DELETE", pattern: "/v1/procedures/{name}/auto-run", scope: auth.ScopeGrant, handler: s.revokeAutoRun, summary: "Revoke durable auto-run", body: "ReasonBody", response: "DecisionAnswer"},
		{method: "POST", pattern: "/v1/procedures/{name}/verify", scope: auth.ScopeInvoke, handler: s.verify, summary: "Verify a version against its recordings, calling no tool", body: "VerifyRequest", response: "VerifyAnswer"},
		{method: "GET", pattern: "/v1/procedures/{name}/recordings", scope: recordingsScope, handler: s.recordings, summary: "The procedure's recordings (tool calls with their answers: grant scope)", query: recordingParams, response: "Recordings"},
		{method: "DELETE", pattern: "/v1/procedures/{name}/recordings", scope: auth.ScopeGrant, handler: s.purgeRecordings, summary: "Purge the procedure's recordings, audited", body: "ReasonBody", response: "RecordingsPurged"},
		{method: "PUT", pattern: "/v1/procedures/{name}/retirement", scope: auth.ScopeAdmin, handler: s.retire, summary: "Retire a procedure: hidden from planners and refused on invoke, kept for analysis", body: "RetirementPut", response: "DecisionAnswer"},
		{method: "DELETE", pattern: "/v1/procedures/{name}/retirement", scope: auth.ScopeAdmin, handler: s.unretire, summary: "Bring a retired procedure back", body: "ReasonBody", response: "DecisionAnswer"},
		{method: "DELETE", pattern: "/v1/procedures/{name}/demotion", scope: auth.ScopeAdmin, handler: s.liftDemotion, summary: "Lift a demoted procedure's demotion: exposed again, its failure streak from 0", body: "ReasonBody", response: "DecisionAnswer"},
		{method: "POST", pattern: "/v1/procedures/{name}/invoke", scope: auth.ScopeInvoke, handler: s.invoke, summary: "Replay a procedure", body: "InvokeRequest", response: "InvokeAnswer", idempotencyKey: true},
		{method: "GET", pattern: "/v1/causes", scope: auth.ScopeRead, handler: s.causes, summary: "Every cause", response: "Causes"},
		{method: "GET", pattern: "/v1/causes/{name}", scope: auth.ScopeRead, handler: s.cause, summary: "One cause and its procedures", response: "CauseAnswer"},
		{method: "GET", pattern: "/v1/graph", scope: auth.ScopeRead, handler: s.graph, summary: "A neighbourhood of the procedure graph", query: graphParams, response: "Graph"},
		{method: "GET", pattern: "/v1/changes", scope: auth.ScopeRead, handler: s.changes, summary: "The change feed as Server-Sent Events: one change event per committed change (names, never values)"},
		{method: "GET", pattern: "/v1/decisions", scope: auth.ScopeRead, handler: s.decisions, summary: "The audit log, newest first", query: decisionParams, response: "Decisions"},
		{method: "GET", pattern: "/v1/export", scope: auth.ScopeAdmin, handler: s.export, summary: "Everything the store holds as a line-delimited JSON dump, streamed (procgraph import loads it); with_recordings=true adds the recordings and needs the grant scope too", query: exportParams},
		{method: "GET", pattern: "/v1/backup", scope: auth.ScopeAdmin, recordings: true, handler: s.backup, summary: "A consistent copy of the embedded store's file, taken while serving; it holds the recordings, so it needs the grant scope too"},
	}, append(s.turnRoutes(), s.tokenRoutes()...)...)
}

func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, fault.Errorf(fault.CodeNotFound, "no route for %s %s", r.Method, r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeRefusal(w, http.StatusMethodNotAllowed, fault.CodeInvalid,
			fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path), nil)
	})
	for _, rt := range s.routeTable() {
		r.Method(rt.method, rt.pattern, s.chain(rt))
	}
	return r
}
