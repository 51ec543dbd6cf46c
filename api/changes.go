package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/procgraph/procgraph/fault"
)

// Change streams.
const (
	// DefaultMaxChangeStreams bounds the open GET /v1/changes streams of one
	// server (Config.MaxChangeStreams): each holds a feed subscription and a
	// connection.
	DefaultMaxChangeStreams = 256
	// changeKeepAlive is how often an idle stream sends a comment, so proxies
	// and the client see the connection alive.
	changeKeepAlive = 15 * time.Second
	// changeWriteTimeout bounds one write to a stream; a client that stops
	// reading is dropped instead of holding a subscription.
	changeWriteTimeout = 10 * time.Second
)

// changes is GET /v1/changes (read): the service's change feed
// (changes.Feed) as Server-Sent Events, one `change` event per committed
// change, for the console and any client that follows the graph. An event
// names what changed (kind, procedure, code hash, decision id, turn id),
// never values. A stream that fell behind gets a `lost` change: reread.
// It ends when the server's drain begins (Config.Draining).
func (s *Server) changes(w http.ResponseWriter, r *http.Request) error {
	if s.streams.Add(1) > int64(s.maxStreams) {
		s.streams.Add(-1)
		return fault.Errorf(fault.CodeBusy, "%d change streams are open, the most this server serves; try again later", s.maxStreams).
			WithDetails("reason", "change_streams").WithDetails(fault.DetailRetryAfter, 5)
	}
	defer s.streams.Add(-1)
	sub := s.svc.Changes().Subscribe(0)
	defer sub.Close()

	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(text string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(changeWriteTimeout))
		if _, err := fmt.Fprint(w, text); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send(": procgraph change feed\n\n") {
		return nil
	}
	tick := time.NewTicker(changeKeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-sub.Done():
			return nil
		case <-s.draining:
			return nil
		case <-tick.C:
			if !send(": keep-alive\n\n") {
				return nil
			}
		case <-sub.Ready():
			for _, c := range sub.Take() {
				data, err := json.Marshal(c)
				if err != nil {
					return nil
				}
				if !send(fmt.Sprintf("id: %d\nevent: change\ndata: %s\n\n", c.Seq, data)) {
					return nil
				}
			}
		}
	}
}
