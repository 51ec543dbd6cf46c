package mcpserve

import (
	"net/http"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/procgraph/procgraph/fault"
)

// Defaults for SessionLimits.
const (
	DefaultMaxSessions         = 1024
	DefaultMaxSessionsPerToken = 64
)

// ReasonMCPSessions is the details.reason of a new MCP session refused at
// a cap (code busy).
const ReasonMCPSessions = "mcp_sessions"

// The caps that refuse a new MCP session: its details.limit, and the keys
// of SessionStats.Refused.
const (
	LimitPerToken = "per_token"
	LimitTotal    = "total"
)

// sessionRetryAfter is the Retry-After of a refused session, in seconds:
// slots free when a client closes a session (DELETE) or one stays idle for
// the session timeout.
const sessionRetryAfter = 60

// SessionLimits caps the MCP sessions open at once, per token holder (when
// tokens are configured) and in total, across every Handler sharing it
// (/mcp and /mcp/interactive). A
// request that would open a session past a cap is refused — 429 busy,
// details.reason mcp_sessions, details.limit per_token or total — and the
// open sessions are left alone: procgraph never closes a client's session
// to make room. A session's slot frees when the client closes it (DELETE)
// or when it has been idle for the session timeout. It is safe for
// concurrent use.
type SessionLimits struct {
	total, perToken int

	mu      sync.Mutex
	refused map[string]int64  // limit -> sessions refused since start
	open    map[string]string // session id -> holder
	pending map[string]int    // holder -> sessions being opened
	servers []*mcp.Server     // whose sessions are live
}

// NewSessionLimits returns limits of total sessions and perToken per token
// holder; a value below 1 takes its default.
func NewSessionLimits(total, perToken int) *SessionLimits {
	if total < 1 {
		total = DefaultMaxSessions
	}
	if perToken < 1 {
		perToken = DefaultMaxSessionsPerToken
	}
	return &SessionLimits{total: total, perToken: perToken, open: map[string]string{}, pending: map[string]int{}, refused: map[string]int64{}}
}

func (l *SessionLimits) addServer(s *mcp.Server) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.servers = append(l.servers, s)
}

// removeServer forgets s (its handler was closed); its sessions no longer
// count once pruned.
func (l *SessionLimits) removeServer(s *mcp.Server) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.servers = slices.DeleteFunc(l.servers, func(x *mcp.Server) bool { return x == s })
}

// reserve takes a slot for a session holder is opening, or refuses it;
// holder "" (no tokens: every caller is anonymous) has no per-token cap.
// The caller releases the slot with settle.
func (l *SessionLimits) reserve(holder string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune()
	mine, all := l.pending[holder], 0
	for _, n := range l.pending {
		all += n
	}
	for _, h := range l.open {
		if h == holder {
			mine++
		}
		all++
	}
	switch {
	case holder != "" && mine >= l.perToken:
		l.refused[LimitPerToken]++
		return refused(LimitPerToken, l.perToken,
			"%s holds %d MCP sessions, the most one token may (--mcp-max-sessions-per-token); close one (DELETE with its Mcp-Session-Id) or wait until an idle one expires", holder, mine)
	case all >= l.total:
		l.refused[LimitTotal]++
		return refused(LimitTotal, l.total,
			"procgraph holds %d MCP sessions, the most it keeps (--mcp-max-sessions); try again later", all)
	}
	l.pending[holder]++
	return nil
}

// settle ends a reservation: the session opened under id, or none ("").
func (l *SessionLimits) settle(holder, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending[holder]--; l.pending[holder] <= 0 {
		delete(l.pending, holder)
	}
	if id != "" {
		l.open[id] = holder
	}
}

// SessionStats is what /metrics reports of the MCP sessions.
type SessionStats struct {
	Open    int              // sessions open (or being opened) now
	Refused map[string]int64 // sessions refused since start, by limit: every Limit… key, 0 included
}

// Stats returns the sessions open now and those refused so far.
func (l *SessionLimits) Stats() SessionStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune()
	st := SessionStats{Open: len(l.open), Refused: map[string]int64{}}
	for _, n := range l.pending {
		st.Open += n
	}
	for _, k := range []string{LimitPerToken, LimitTotal} {
		st.Refused[k] = l.refused[k]
	}
	return st
}

// prune forgets the sessions the servers no longer have (closed by the
// client, expired, or never opened). It holds l.mu.
func (l *SessionLimits) prune() {
	if len(l.open) == 0 {
		return
	}
	live := make(map[string]bool, len(l.open))
	for _, s := range l.servers {
		for ss := range s.Sessions() {
			live[ss.ID()] = true
		}
	}
	for id := range l.open {
		if !live[id] {
			delete(l.open, id)
		}
	}
}

func refused(limit string, max int, format string, args ...any) error {
	return fault.Errorf(fault.CodeBusy, format, args...).
		WithDetails("reason", ReasonMCPSessions).WithDetails("limit", limit).WithDetails("max", max).
		WithDetails(fault.DetailRetryAfter, sessionRetryAfter)
}

// opensSession reports whether r may open a new session: a POST without an
// Mcp-Session-Id (the SDK opens one for an initialize; whether it did shows
// in its answer).
func opensSession(r *http.Request) bool {
	return r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == ""
}

// sessionSettler settles a reservation when the answer's header goes out,
// with the Mcp-Session-Id the SDK answered (none: the request opened no
// session, e.g. a stateless server/discover). Settling before the client
// can read the answer means its next request never meets this one's
// reservation.
type sessionSettler struct {
	http.ResponseWriter
	settle  func(id string)
	settled bool
}

func (w *sessionSettler) settleOnce() {
	if !w.settled {
		w.settled = true
		w.settle(w.Header().Get("Mcp-Session-Id"))
	}
}

// done settles a request that wrote nothing.
func (w *sessionSettler) done() {
	if !w.settled {
		w.settled = true
		w.settle("")
	}
}

func (w *sessionSettler) WriteHeader(code int) {
	w.settleOnce()
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionSettler) Write(b []byte) (int, error) {
	w.settleOnce()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *sessionSettler) Unwrap() http.ResponseWriter { return w.ResponseWriter }
