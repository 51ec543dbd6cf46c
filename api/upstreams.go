package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/mcpdispatch"
	"github.com/procgraph/procgraph/procedures"
)

// Upstreams is what the API reads of the upstream servers
// (*mcpdispatch.Gateway): their states for /readyz, their status for
// GET /v1/upstreams. Neither calls a server.
type Upstreams interface {
	States() []mcpdispatch.ServerState
	Status(ctx context.Context) ([]mcpdispatch.ServerStatus, error)
}

// upstreamParams filter GET /v1/upstreams.
var upstreamParams = []queryParam{
	{name: "server", typ: "string", repeatable: true, doc: "only these servers (their keys in the upstreams file)"},
	{name: "state", typ: "string", repeatable: true, enum: mcpdispatch.States, doc: "only servers in these states"},
}

// UpstreamsAnswer is GET /v1/upstreams's answer: the servers' overall
// state (mcpdispatch.Overall, over every server whatever the filters) and
// the servers the filters keep, by key.
type UpstreamsAnswer struct {
	Status    string                     `json:"status"`
	Upstreams []mcpdispatch.ServerStatus `json:"upstreams"`
}

// Readiness is /readyz's answer: the store's state and, when upstream
// servers are configured, each one's (ok, degraded, down, unknown) and
// their overall state as status.
type Readiness struct {
	Status    string                    `json:"status"`
	Store     string                    `json:"store"`
	Upstreams []mcpdispatch.ServerState `json:"upstreams"`
}

// The readiness states beside mcpdispatch's.
const (
	readyOK          = "ok"
	readyUnavailable = "unavailable" // the store does not answer: 503
)

// readyz answers whether the store answers (503 when not) and the upstream
// servers' states: ok when every one is ok, degraded when some are not,
// down when none is up. A server that is down does not make procgraph
// unready: finds, captures, reviews and other servers' tools still work,
// and that server's calls fail at once with a class that demotes nothing.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	out := Readiness{Status: readyOK, Store: readyOK, Upstreams: []mcpdispatch.ServerState{}}
	if s.upstreams != nil {
		out.Upstreams = s.upstreams.States()
		out.Status = mcpdispatch.Overall(out.Upstreams)
	}
	if err := s.svc.Ping(ctx); err != nil {
		s.log.Warn().Err(err).Msg("readiness check failed")
		out.Status, out.Store = readyUnavailable, readyUnavailable
		writeJSON(w, http.StatusServiceUnavailable, out)
		return nil
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getUpstreams answers GET /v1/upstreams: every configured server's
// transport, state, negotiated protocol revision, tool counts and last
// failure class; never an address, command line, header, environment
// value or token.
func (s *Server) getUpstreams(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for _, k := range q["server"] {
		if err := procedures.CheckServerKey(k); err != nil {
			return fault.Errorf(fault.CodeInvalid, "query parameter \"server\": %s", fault.ErrorMessage(err)).WithDetails("field", "server")
		}
	}
	out := UpstreamsAnswer{Status: readyOK, Upstreams: []mcpdispatch.ServerStatus{}}
	if s.upstreams == nil {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	all, err := s.upstreams.Status(r.Context())
	if err != nil {
		return fault.Errorf(fault.CodeUnavailable, "the catalogue could not be read")
	}
	states := make([]mcpdispatch.ServerState, len(all))
	for i, st := range all {
		states[i] = mcpdispatch.ServerState{Server: st.Server, State: st.State}
		if (len(q["server"]) == 0 || slices.Contains(q["server"], st.Server)) && (len(q["state"]) == 0 || slices.Contains(q["state"], st.State)) {
			out.Upstreams = append(out.Upstreams, st)
		}
	}
	out.Status = mcpdispatch.Overall(states)
	writeJSON(w, http.StatusOK, out)
	return nil
}
