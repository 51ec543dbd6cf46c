package mcpserve

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/internal/answer"
)

// ModernRevision is the first MCP revision without sessions (2026-07-28):
// every request carries its revision (the MCP-Protocol-Version header and
// _meta), initialize gives way to server/discover, list_changed reaches a
// client through subscriptions/listen, and a server asks its client through
// an input-required result (inputRequests, requestState) instead of a
// request of its own (elicitation).
const ModernRevision = "2026-07-28"

// protocolVersionHeader names the revision of a streamable HTTP request.
const protocolVersionHeader = "Mcp-Protocol-Version"

// modern reports whether r is a request of ModernRevision or later: the
// stateless handler serves it; every other request (initialize and the
// sessions it opens, a header naming 2025-11-25 or older, none) goes to the
// stateful one. Revisions compare as the SDK compares them (as strings):
// an unknown later or malformed one goes to the stateless handler, whose
// SDK refuses it naming the revisions it serves.
func modern(r *http.Request) bool {
	return r.Header.Get(protocolVersionHeader) >= ModernRevision
}

// modernRequest reports whether a tool call is of ModernRevision or later
// (its _meta's revision; the SDK refuses such a request on a stateful
// session, so it arrives only through the stateless handler).
func modernRequest(req *mcp.CallToolRequest) bool {
	return req.ProtocolVersion() >= ModernRevision
}

// newStatelessHandler is the handler serving ModernRevision: the same
// server (its tools, its list_changed), no sessions, each request its own
// and authenticated on its own.
func (h *Handler) newStatelessHandler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.server }, &mcp.StreamableHTTPOptions{
		Stateless: true,
		// An answer is one JSON body, not an event stream: at this
		// revision nothing is sent to the client in the middle of a request
		// (a review is an input-required result, not an elicitation), and
		// a body is what a client reads fastest. subscriptions/listen
		// stays an event stream (the SDK keeps it one).
		JSONResponse:               true,
		MaxRequestBodyBytes:        h.cfg.MaxBody,
		DisableLocalhostProtection: h.cfg.Auth.Enabled(),
	})
}

// listenHolder is the session cap's holder of an MCP request: the token
// holder, or "" without tokens (one holder, no per-token cap), as a
// stateful session's.
func (h *Handler) listenHolder(req mcp.Request) string {
	if !h.cfg.Auth.Enabled() {
		return ""
	}
	return h.callerOf(req).name
}

// methodListen is the ModernRevision request that stays open to receive
// list_changed: the one thing a stateless client holds open.
const methodListen = "subscriptions/listen"

// capListens counts each open subscriptions/listen as a session against
// the SessionLimits (per token holder and in total, beside the stateful
// sessions) for as long as it is open: a stateless client holds no more at
// once than a stateful one. One past a cap is refused with a JSON-RPC error
// whose data is the API's busy error (details.reason mcp_sessions). A
// listen ends, answered, when the server drains (Config.Draining): it
// never ends by itself, and the drain would wait out its grace for it.
func (h *Handler) capListens(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != methodListen {
			return next(ctx, method, req)
		}
		holder := h.listenHolder(req)
		if err := h.cfg.Sessions.reserve(holder); err != nil {
			h.log.Warn().Str("phase", string(h.cfg.Phase)).Msg("mcp: a subscriptions/listen was refused at the session cap")
			return nil, busyRPCError(err)
		}
		defer h.cfg.Sessions.settle(holder, "")
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if h.cfg.Draining != nil {
			go func() {
				select {
				case <-h.cfg.Draining:
					cancel()
				case <-ctx.Done():
				}
			}()
		}
		return next(ctx, method, req)
	}
}

// codeBusy is the JSON-RPC error code of a request refused at a cap (the
// implementation-defined server-error range).
const codeBusy = -32001

// busyRPCError is err (a fault) as a JSON-RPC error: its message, and the
// API's error body as data.
func busyRPCError(err error) error {
	a := answer.Of(err)
	data, _ := json.Marshal(a.Body())
	return &jsonrpc.Error{Code: codeBusy, Message: string(a.Code) + ": " + a.Message, Data: data}
}
