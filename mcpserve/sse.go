package mcpserve

import (
	"bytes"
	"net/http"
)

// namedEmptyEvents are the SSE event-name lines the Go SDK (v1.8.0) puts on
// events that carry no message: the priming event (an id, SEP-1699) and
// the close event (a retry). The specification (2025-11-25, "Sending
// Messages to the Server") describes the priming event as an event ID and
// an empty data field, which clients read as a message of no data; named
// "prime", the official Python SDK logs "Unknown SSE event: prime" on every
// request (and "close" likewise). The SDK has no option for it.
var namedEmptyEvents = [][]byte{[]byte("event: prime\n"), []byte("event: close\n")}

// unnamedEmptyEvents drops those names, so the events are the
// specification's unnamed ones: ids, retries and resumption stay as they
// are. The SDK writes each event in one Write (see its writeEvent), which
// is what this relies on; the interop tests fail if that changes.
type unnamedEmptyEvents struct {
	http.ResponseWriter
}

// Write implements http.ResponseWriter.
func (w unnamedEmptyEvents) Write(b []byte) (int, error) {
	for _, name := range namedEmptyEvents {
		if bytes.HasPrefix(b, name) {
			n, err := w.ResponseWriter.Write(b[len(name):])
			if err != nil {
				return n, err
			}
			return len(b), nil
		}
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush and set deadlines.
func (w unnamedEmptyEvents) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// withUnnamedEmptyEvents serves h with unnamedEmptyEvents.
func withUnnamedEmptyEvents(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(unnamedEmptyEvents{w}, r)
	})
}
