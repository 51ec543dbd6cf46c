package api

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"

	"github.com/segmentio/encoding/json"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/answer"
)

// writeError answers err in the contract's shape (see answer.Of). Server
// faults are logged with the request; the caller sees only the public form.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	a := answer.Of(err)
	if a.ServerFault() {
		s.log.Error().Err(err).Str("request_id", requestID(r)).Str("code", string(a.Code)).Msg("request failed")
	}
	if a.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(a.RetryAfter))
	}
	writeJSON(w, a.Status, a.Body())
}

// writeAnswer answers err in the contract's shape (see answer.Of), for
// refusals made before a request reaches the server's routes (Protect).
func writeAnswer(w http.ResponseWriter, err error) {
	a := answer.Of(err)
	writeJSON(w, a.Status, a.Body())
}

// writeRefusal answers a refusal whose status no error code maps to (405).
func writeRefusal(w http.ResponseWriter, status int, code fault.Code, message string, details map[string]any) {
	if details == nil {
		details = map[string]any{}
	}
	writeJSON(w, status, answer.Body{Error: answer.BodyError{Code: code, Message: message, Details: details}})
}

// writeJSON answers v as JSON with status. It encodes with
// segmentio/encoding/json, a drop-in for encoding/json that writes the same
// bytes about three times faster (a list page of 25 procedures spent half
// its handler time encoding).
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := bufferPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 {
			bufferPool.Put(buf)
		}
	}()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":"internal","message":"internal error","details":{}}}` + "\n")
	}
	writeBody(w, status, "application/json", buf.Bytes())
}

// writeBody answers body, of contentType, with status. (Every answer's
// X-Content-Type-Options is set by Protect.)
func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// bufferPool recycles answer buffers; large ones are not kept.
var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}
