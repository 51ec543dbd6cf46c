// Package mcpserve serves procgraph to MCP clients over streamable HTTP:
// find_all_procedures, set_procedure_auto_run (with auth on), and every exposed procedure
// as its proc__ tool. Calling a proc__ tool is an invoke — the same
// decision, audit record and sandbox as POST /v1/procedures/{name}/invoke —
// in the phase the Handler was built for.
//
// Authentication is the HTTP API's: the same bearer tokens and scopes
// (read to connect and list, invoke to call a proc__ tool, grant to call
// set_procedure_auto_run: scopeOf), and tools/list offers a caller only the
// tools its token may call; the token's holder is the audit actor, and an
// MCP session stays bound to the holder that opened it.
//
// The proc__ tools follow the exposed set: Refresh recomputes it and adds,
// replaces or removes tools, and the SDK sends notifications/tools/list_changed
// to connected clients. Run follows the service's change feed, refreshing
// at most once per RefreshSpacing, and a request that finds changes
// waiting refreshes before it is answered; the handlers of a server share
// one read of the list per change (Exposed), and each tool is compared
// field by field, so a refresh that changes nothing costs the read. A
// Handler subscribes to the feed on first use; Close (which Run calls
// when it ends) leaves it.
package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/internal/answer"
	"github.com/procgraph/procgraph/internal/buildinfo"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
)

// Defaults for Config.
const (
	DefaultToolLimit      = procedures.MaxFindLimit
	DefaultSessionTimeout = 30 * time.Minute
	DefaultMaxBody        = 1 << 20
)

// Service is what the MCP handlers ask of the domain (*procedures.Service):
// the exposed procedures' page, set_procedure_auto_run, and the change feed
// that refreshes the proc__ tools.
type Service interface {
	Find(ctx context.Context, r procedures.FindRequest) ([]*procedures.Procedure, int, error)
	SetAutoRun(ctx context.Context, r procedures.AutoRunRequest) (*procedures.Procedure, audit.Decision, error)
	Changes() *changes.Feed
}

// Replayer is what the MCP handlers ask of replays (*replay.Replayer): a
// proc__ call's invoke and the exposed procedures' tools.
type Replayer interface {
	Invoke(ctx context.Context, req replay.InvokeRequest) (*replay.InvokeResult, error)
	Tools(ctx context.Context, causes []string, limit int) ([]replay.ToolDescriptor, error)
}

// TurnGate is what run_code and await_approval ask of the turn gate
// (*gate.Gate).
type TurnGate interface {
	Submit(ctx context.Context, req gate.TurnRequest) (*gate.TurnAnswer, error)
	Get(ctx context.Context, id, actor string, wait time.Duration) (*gate.Turn, error)
	Run(ctx context.Context, id, actor string) (*gate.TurnAnswer, error)
	Approval(ctx context.Context, id string, showArgs bool) (*gate.Approval, error)
	Resolve(ctx context.Context, req gate.ResolveRequest) (*gate.Turn, audit.Decision, error)
}

// The production types implement the interfaces (checked at compile time).
var (
	_ Service  = (*procedures.Service)(nil)
	_ Replayer = (*replay.Replayer)(nil)
	_ TurnGate = (*gate.Gate)(nil)
)

// Config wires a Handler.
type Config struct {
	Service  Service
	Replayer Replayer
	// Phase is the phase of every proc__ call through this handler:
	// automatic (only read-only procedures run) or interactive.
	Phase audit.Phase
	// Auth checks bearer tokens; nil or empty means no auth (every caller
	// is "anonymous" with every scope, as in the HTTP API).
	Auth   *auth.Authenticator
	Logger zerolog.Logger
	// ToolLimit bounds the proc__ tools offered (in find order); default 500.
	ToolLimit int
	// SessionTimeout closes MCP sessions idle this long; default 30 min.
	SessionTimeout time.Duration
	// MaxBody bounds a request body; default 1 MiB.
	MaxBody int64
	// Gate is the turn gate: run_code (and await_approval on the
	// interactive endpoint) are offered when it is set.
	Gate TurnGate
	// Sessions caps the sessions open at once; share one between the
	// handlers of a server. Default: a private NewSessionLimits(0, 0).
	Sessions *SessionLimits
	// Exposed is the list of exposed procedures the proc__ tools are made
	// of, read once per change; share one between the handlers of a
	// server. Default: a private NewExposed().
	Exposed *Exposed
	// Draining, when set, is closed as the HTTP server's drain begins:
	// every subscriptions/listen is answered then, and (while Run runs)
	// the sessions are closed once the requests in flight are answered,
	// which ends their notification streams. Neither ends by itself, and
	// the drain would wait out its grace for them.
	Draining <-chan struct{}
}

// Handler is an http.Handler serving procgraph as an MCP server over
// streamable HTTP. It is safe for concurrent use.
type Handler struct {
	cfg    Config
	server *mcp.Server
	mcp    http.Handler // stateful: sessions, revisions up to 2025-11-25
	// stateless serves ModernRevision requests (see modern); it shares
	// server with mcp.
	stateless http.Handler
	log       zerolog.Logger
	// reviews issues and redeems the requestState of in-client reviews
	// asked by an input-required result.
	reviews *reviewStates

	refreshMu sync.Mutex
	current   map[string]*mcp.Tool // proc__ tool name -> the tool offered
	refreshed atomic.Bool
	// lastRefresh is when the last refresh began (refreshMu); Run's next
	// one waits until spacing (RefreshSpacing) has passed since, with
	// after (time.After; tests replace both).
	lastRefresh time.Time
	spacing     time.Duration
	after       func(time.Duration) <-chan time.Time
	// changes is the service's change feed: Run refreshes on it, and a
	// request finding changes waiting refreshes first (see syncTools).
	// It is nil until the handler is first used (subscribe) and after
	// Close; refreshMu guards it.
	changes *changes.Subscription
	closed  bool // Close was called (refreshMu)
	// inflight counts the requests served but notification streams, for
	// the drain (drainSessions).
	inflight requests
}

// New returns a Handler for cfg. It reads nothing yet and holds nothing: the
// first Refresh, request or Run subscribes to the change feed and loads the
// proc__ tools. Run, or Close, leaves the feed again.
func New(cfg Config) (*Handler, error) {
	switch {
	case cfg.Service == nil || cfg.Replayer == nil:
		return nil, errors.New("mcpserve: Service and Replayer are required")
	case !cfg.Phase.Valid():
		return nil, errors.New("mcpserve: Phase must be automatic or interactive")
	}
	if cfg.Auth == nil {
		cfg.Auth = auth.NewAuthenticator(nil)
	}
	if cfg.ToolLimit <= 0 || cfg.ToolLimit > procedures.MaxFindLimit {
		cfg.ToolLimit = DefaultToolLimit
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Sessions == nil {
		cfg.Sessions = NewSessionLimits(0, 0)
	}
	if cfg.Exposed == nil {
		cfg.Exposed = NewExposed()
	}
	h := &Handler{cfg: cfg, log: cfg.Logger, current: map[string]*mcp.Tool{}, reviews: newReviewStates(),
		spacing: RefreshSpacing, after: time.After}
	instructions := "procgraph: replay reviewed procedures (proc__ tools) in the " + string(cfg.Phase) +
		" phase; find_all_procedures browses them"
	if cfg.Auth.Enabled() {
		instructions += ", set_procedure_auto_run (offered to tokens with the grant scope) grants or revokes durable auto-run"
	}
	instructions += "."
	h.server = mcp.NewServer(&mcp.Implementation{Name: "procgraph", Version: buildinfo.Version()}, &mcp.ServerOptions{
		Instructions: instructions,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	if err := h.addFixedTools(); err != nil {
		return nil, err
	}
	if err := h.addTurnTools(); err != nil {
		return nil, err
	}
	h.server.AddReceivingMiddleware(h.capListens, h.listCallable)
	cfg.Sessions.addServer(h.server)
	// Stream resumption: a client that reconnects with Last-Event-ID gets
	// the messages it missed (a list_changed among them), up to 4 MiB.
	events := mcp.NewMemoryEventStore(nil)
	events.SetMaxBytes(4 << 20)
	var inner http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.server }, &mcp.StreamableHTTPOptions{
		EventStore:          events,
		SessionTimeout:      cfg.SessionTimeout,
		MaxRequestBodyBytes: cfg.MaxBody,
		// Without tokens procgraph listens on loopback only, where DNS
		// rebinding is the threat; with tokens, a rebinding page has no
		// token, and a reverse proxy on loopback must keep working.
		DisableLocalhostProtection: cfg.Auth.Enabled(),
	})
	stateless := h.newStatelessHandler()
	if cfg.Auth.Enabled() {
		// Binds each MCP session to the token holder that opened it and
		// hands the holder and scopes to the tool handlers (on the
		// stateless handler: to each request's).
		bearer := mcpauth.RequireBearerToken(tokenInfoFromContext, &mcpauth.RequireBearerTokenOptions{AllowMissingExpiration: true})
		inner, stateless = bearer(inner), bearer(stateless)
	}
	h.mcp = http.NewCrossOriginProtection().Handler(withUnnamedEmptyEvents(inner))
	h.stateless = http.NewCrossOriginProtection().Handler(withUnnamedEmptyEvents(stateless))
	return h, nil
}

// ServeHTTP authenticates the request (read scope required) and serves MCP:
// a request of ModernRevision or later statelessly, any other through the
// stateful handler's sessions.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.inflight.serve(r, func() { h.serveHTTP(w, r) })
}

func (h *Handler) serveHTTP(w http.ResponseWriter, r *http.Request) {
	p, err := h.cfg.Auth.Authenticate(r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="procgraph"`)
		h.writeError(w, err)
		return
	}
	if !p.Has(auth.ScopeRead) {
		h.writeError(w, auth.Forbidden(auth.ScopeRead))
		return
	}
	if err := h.syncTools(r.Context()); err != nil {
		h.log.Warn().Err(err).Msg("mcp: loading the proc__ tools failed; serving the previous ones until the next refresh")
	}
	r = r.WithContext(auth.WithPrincipal(r.Context(), p))
	if modern(r) {
		h.stateless.ServeHTTP(w, r)
		return
	}
	if !opensSession(r) {
		if answerAsJSON(r) {
			serveJSONAnswer(h.mcp, w, r)
			return
		}
		h.mcp.ServeHTTP(w, r)
		return
	}
	// Without tokens every caller is anonymous: one holder, no per-token cap.
	holder := ""
	if h.cfg.Auth.Enabled() {
		holder = p.Name
	}
	if err := h.cfg.Sessions.reserve(holder); err != nil {
		h.log.Warn().Str("actor", p.Name).Str("phase", string(h.cfg.Phase)).Msg("mcp: a new session was refused at the session cap")
		h.writeError(w, err)
		return
	}
	rec := &sessionSettler{ResponseWriter: w, settle: func(id string) { h.cfg.Sessions.settle(holder, id) }}
	defer rec.done()
	h.mcp.ServeHTTP(rec, r)
}

// tokenInfoFromContext is the SDK's token verifier: ServeHTTP has already
// authenticated the request.
func tokenInfoFromContext(ctx context.Context, _ string, _ *http.Request) (*mcpauth.TokenInfo, error) {
	p, ok := auth.PrincipalFrom(ctx)
	if !ok {
		return nil, mcpauth.ErrInvalidToken
	}
	ti := &mcpauth.TokenInfo{UserID: p.Name}
	for s, ok := range p.Scopes {
		if ok {
			ti.Scopes = append(ti.Scopes, string(s))
		}
	}
	return ti, nil
}

// caller is who makes an MCP request.
type caller struct {
	name   string
	scopes map[auth.Scope]bool
}

func (c caller) has(s auth.Scope) bool { return c.scopes[s] }

// callerOf returns the caller of req: the token holder, or, when auth is
// off, anonymous with every scope but grant (docs/design.md "Secure by
// default": an MCP client is an agent, and an agent must not grant
// itself, by set_procedure_auto_run, reviewing its own turn by elicitation
// or being its own reviewer on a proc__ call). With auth on and no token
// info (which the middleware prevents), the caller has no scope.
func (h *Handler) callerOf(req mcp.Request) caller {
	if !h.cfg.Auth.Enabled() {
		p := auth.Anonymous()
		delete(p.Scopes, auth.ScopeGrant)
		return caller{name: p.Name, scopes: p.Scopes}
	}
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil || extra.TokenInfo.UserID == "" {
		return caller{name: "unknown", scopes: map[auth.Scope]bool{}}
	}
	c := caller{name: extra.TokenInfo.UserID, scopes: map[auth.Scope]bool{}}
	for _, s := range extra.TokenInfo.Scopes {
		c.scopes[auth.Scope(s)] = true
	}
	return c
}

// Close leaves the change feed and the shared session limits. A closed
// handler keeps answering with the tools it last loaded (only an explicit
// Refresh changes them); Run returns. Close may be called more than once.
func (h *Handler) Close() {
	h.refreshMu.Lock()
	defer h.refreshMu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	if h.changes != nil {
		h.changes.Close()
		h.changes = nil
	}
	h.cfg.Sessions.removeServer(h.server)
}

// subscribeLocked subscribes to the change feed on first use and returns
// the subscription; nil once the handler is closed. refreshMu is held.
func (h *Handler) subscribeLocked() *changes.Subscription {
	if h.changes == nil && !h.closed {
		h.changes = h.cfg.Service.Changes().Subscribe(0)
	}
	return h.changes
}

// writeError answers err at the HTTP level in the API's error shape (see
// answer.Of); a server fault is logged, never shown.
func (h *Handler) writeError(w http.ResponseWriter, err error) {
	a := answer.Of(err)
	if a.ServerFault() {
		h.log.Error().Err(err).Str("code", string(a.Code)).Msg("mcp: request failed")
	}
	if a.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(a.RetryAfter))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.Status)
	_ = json.NewEncoder(w).Encode(a.Body())
}
