package mcpserve

import (
	"context"
	"net/http"
	"sync"
)

// requests counts the requests a Handler is serving, but for the GETs
// that hold a session's notification stream open: a drain closes the
// sessions once none is left (drainSessions).
type requests struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n falls to 0; nil while none waits
}

// serve runs serve counted, unless r is a GET (a notification stream).
func (q *requests) serve(r *http.Request, serve func()) {
	if r.Method == http.MethodGet {
		serve()
		return
	}
	q.mu.Lock()
	q.n++
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		if q.n--; q.n == 0 && q.idle != nil {
			close(q.idle)
			q.idle = nil
		}
		q.mu.Unlock()
	}()
	serve()
}

// none returns a channel closed once no counted request is being served.
func (q *requests) none() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if q.idle == nil {
		q.idle = make(chan struct{})
	}
	return q.idle
}

// drainSessions closes every MCP session once Config.Draining is closed
// and the requests in flight are answered (or ctx ends first): a session's
// GET notification stream never ends by itself, and the HTTP server's
// drain would wait out its grace for it.
func (h *Handler) drainSessions(ctx context.Context) {
	select {
	case <-h.cfg.Draining:
	case <-ctx.Done():
		return
	}
	select {
	case <-h.inflight.none():
	case <-ctx.Done():
	}
	for ss := range h.server.Sessions() {
		_ = ss.Close()
	}
}
