package mcpdispatch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/procgraph/procgraph/procedures"
)

// The states of an upstream server (ServerStatus.State).
const (
	// StateOK: a session is established and its last call did not time out.
	StateOK = "ok"
	// StateDegraded: a session is established but calls are timing out,
	// or none is established yet and no attempt has failed (connecting, or
	// the next call connects).
	StateDegraded = "degraded"
	// StateDown: the last connection attempt failed (calls fail at once
	// until the backoff ends), or the server is closed.
	StateDown = "down"
	// StateUnknown: a server procgraph holds no session with (the
	// --upstream-http tool server: one stateless POST per call).
	StateUnknown = "unknown"
)

// States lists the states, in order of health.
var States = []string{StateOK, StateDegraded, StateDown, StateUnknown}

// The transports (ServerStatus.Transport).
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http" // MCP over streamable HTTP
	// TransportHTTPJSON is --upstream-http: procgraph's own JSON POST per
	// call, not MCP.
	TransportHTTPJSON = "http-json"
)

// DispatcherStatus is what a Dispatcher knows of its server now. It holds
// no address, command line, header, environment value or token.
type DispatcherStatus struct {
	Transport string
	State     string
	// ProtocolVersion is the MCP revision the current session negotiated;
	// "" without a session.
	ProtocolVersion string
	// ToolsListed is how many tools the server listed the last time they
	// were listed (ListTools); -1 when they never were.
	ToolsListed int
	// ConnectionFailures counts the connection attempts that failed in a
	// row (0 once one succeeds).
	ConnectionFailures int
}

// dispatcherStats is what a Dispatcher keeps for its Status beside the
// session's own state.
type dispatcherStats struct {
	transport string
	listed    atomic.Int64 // tools listed last, plus one (0: never listed)
}

// listedTools records that the server listed n tools.
func (s *dispatcherStats) listedTools(n int) { s.listed.Store(int64(n) + 1) }

// Status is the server's state now (see the State constants). It takes the
// dispatcher's lock briefly and calls nothing upstream.
func (d *Dispatcher) Status() DispatcherStatus {
	st := DispatcherStatus{Transport: d.stats.transport, ToolsListed: int(d.stats.listed.Load()) - 1}
	d.mu.Lock()
	c := d.session
	st.ConnectionFailures = d.failures
	if c != nil {
		st.ProtocolVersion = d.protocol // the live session's (none while there is none)
	}
	switch {
	case d.closed:
		st.State = StateDown
	case c != nil && c.timeouts > 0:
		st.State = StateDegraded
	case c != nil:
		st.State = StateOK
	case d.failures > 0:
		st.State = StateDown
	default:
		st.State = StateDegraded
	}
	d.mu.Unlock()
	return st
}

// ServerStatus is one server of a Gateway as GET /v1/upstreams and
// `procgraph upstreams` show it: never its URL, command line, headers,
// environment values or tokens.
type ServerStatus struct {
	// Server is the server's key ("" for the unnamed server of the
	// --upstream-* flags).
	Server    string `json:"server"`
	Transport string `json:"transport"`
	State     string `json:"state"`
	// ProtocolVersion is the MCP revision the session negotiated, null
	// without a session.
	ProtocolVersion *string `json:"protocol_version"`
	// ToolsInCatalogue counts the catalogue's tools routed to the server.
	ToolsInCatalogue int `json:"tools_in_catalogue"`
	// ToolsListed is how many tools the server listed the last time they
	// were listed; null when they never were.
	ToolsListed *int `json:"tools_listed"`
	// ConnectionFailures counts the failed connection attempts in a row.
	ConnectionFailures int `json:"connection_failures"`
	// LastErrorClass is the failure class of the last call to the server
	// that failed (a run's class: health.FailureClasses,
	// invalid_arguments); null when none failed since the start.
	LastErrorClass *string    `json:"last_error_class"`
	LastErrorAt    *time.Time `json:"last_error_at"`
}

// ServerState is a server's key and state (readiness).
type ServerState struct {
	Server string `json:"server"`
	State  string `json:"state"`
}

// stater is a Caller that knows its server's state (a Dispatcher).
type stater interface{ Status() DispatcherStatus }

// gatewayStatus is what a Gateway keeps for Status: the last failed call
// per server, and the catalogue's tool count per server for the last
// catalogue revision counted.
type gatewayStatus struct {
	mu       sync.Mutex
	lastErr  map[string]lastError
	revision string         // the catalogue revision counted
	counts   map[string]int // its tools by server
}

type lastError struct {
	class string
	at    time.Time
}

// NoteCall records that a call to server ended with the failure class
// class ("" when it answered): the last failed call's class is the
// server's LastErrorClass. A server that is not configured is ignored.
func (g *Gateway) NoteCall(server, class string) {
	if class == "" {
		return
	}
	if _, ok := g.servers[server]; !ok {
		return
	}
	g.status.mu.Lock()
	if g.status.lastErr == nil {
		g.status.lastErr = map[string]lastError{}
	}
	g.status.lastErr[server] = lastError{class: class, at: time.Now().UTC()}
	g.status.mu.Unlock()
}

// States returns each configured server's key and state, by key. It reads
// nothing but the dispatchers' state: its cost does not depend on the
// catalogue.
func (g *Gateway) States() []ServerState {
	keys := g.Servers()
	out := make([]ServerState, len(keys))
	for i, k := range keys {
		out[i] = ServerState{Server: k, State: stateOf(g.servers[k])}
	}
	return out
}

// stateOf is c's state: a Dispatcher's, else unknown.
func stateOf(c Caller) string {
	if s, ok := c.(stater); ok {
		return s.Status().State
	}
	return StateUnknown
}

// Overall is the state of a set of servers: ok when every one is ok (or
// there is none), down when every one is down, degraded otherwise. A
// server of unknown state counts as ok.
func Overall(states []ServerState) string {
	ok, down := 0, 0
	for _, s := range states {
		switch s.State {
		case StateOK, StateUnknown:
			ok++
		case StateDown:
			down++
		}
	}
	switch {
	case ok == len(states):
		return StateOK
	case down == len(states):
		return StateDown
	}
	return StateDegraded
}

// Status returns every configured server's status, by key. The catalogue
// tool counts are those of the catalogue calls are routed by, counted once
// per catalogue revision: after the first call for a revision its cost
// does not depend on the catalogue's size (the catalogue read aside). A
// catalogue that cannot be read is an error.
func (g *Gateway) Status(ctx context.Context) ([]ServerStatus, error) {
	counts := map[string]int{}
	if g.catalogue != nil {
		cat, err := g.catalogue(ctx)
		if err != nil {
			return nil, err
		}
		counts = g.countTools(cat)
	}
	keys := g.Servers()
	out := make([]ServerStatus, len(keys))
	g.status.mu.Lock()
	last := make(map[string]lastError, len(g.status.lastErr))
	for k, v := range g.status.lastErr {
		last[k] = v
	}
	g.status.mu.Unlock()
	for i, k := range keys {
		st := ServerStatus{Server: k, Transport: TransportHTTPJSON, State: StateUnknown, ToolsInCatalogue: counts[k]}
		if s, ok := g.servers[k].(stater); ok {
			ds := s.Status()
			st.Transport, st.State, st.ConnectionFailures = ds.Transport, ds.State, ds.ConnectionFailures
			if ds.ProtocolVersion != "" {
				st.ProtocolVersion = &ds.ProtocolVersion
			}
			if ds.ToolsListed >= 0 {
				st.ToolsListed = &ds.ToolsListed
			}
		}
		if le, ok := last[k]; ok {
			st.LastErrorClass, st.LastErrorAt = &le.class, &le.at
		}
		out[i] = st
	}
	return out, nil
}

// countTools is cat's tools by server, counted once per revision.
func (g *Gateway) countTools(cat *procedures.Catalogue) map[string]int {
	if cat == nil {
		return map[string]int{}
	}
	g.status.mu.Lock()
	defer g.status.mu.Unlock()
	if g.status.counts != nil && g.status.revision == cat.Revision {
		return g.status.counts
	}
	counts := map[string]int{}
	for _, t := range cat.Tools {
		counts[t.Server]++
	}
	g.status.revision, g.status.counts = cat.Revision, counts
	return counts
}
