package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/procgraph/procgraph/procedures"
)

// errorBody is the contract's error shape.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// statusOf maps an error code to its HTTP status.
func statusOf(code procedures.Code) int {
	switch code {
	case procedures.CodeInvalid:
		return http.StatusBadRequest
	case procedures.CodeUnauthorized:
		return http.StatusUnauthorized
	case procedures.CodeForbidden, procedures.CodeDenied:
		return http.StatusForbidden
	case procedures.CodeNotFound:
		return http.StatusNotFound
	case procedures.CodeConflict:
		return http.StatusConflict
	case procedures.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case procedures.CodeInvalidCode, procedures.CodeInvalidArguments:
		return http.StatusUnprocessableEntity
	case procedures.CodeUnavailable:
		return http.StatusServiceUnavailable
	case procedures.CodeBusy:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

// writeError answers err in the contract's shape. Internal errors are
// logged with the request and answered with a message that leaks nothing.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := procedures.ErrorCode(err)
	body := errorBody{Error: errorDetail{Code: string(code), Message: procedures.ErrorMessage(err), Details: map[string]any{}}}
	var pe *procedures.Error
	if errors.As(err, &pe) && pe.Details != nil {
		body.Error.Details = pe.Details
	}
	if code == procedures.CodeInternal || code == procedures.CodeUnavailable {
		s.log.Error().Err(err).Str("request_id", requestID(r)).Str("code", string(code)).Msg("request failed")
	}
	if code == procedures.CodeInternal {
		body.Error.Message = "internal error"
		body.Error.Details = map[string]any{}
	}
	if n, ok := body.Error.Details[procedures.DetailRetryAfter].(int); ok && code == procedures.CodeBusy {
		w.Header().Set("Retry-After", strconv.Itoa(n))
	}
	writeJSON(w, statusOf(code), body)
}

// writeJSON answers v as JSON with status.
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
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// bufferPool recycles answer buffers; large ones are not kept.
var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}
