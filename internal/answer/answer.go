// Package answer turns an error into what a caller is told: the HTTP status,
// the API's error code, a public message and details. The HTTP API, the MCP
// server (its HTTP errors and its tool errors) and nested replays all answer
// through Of, so internal error text never reaches a caller on any of them.
package answer

import (
	"errors"
	"net/http"

	"github.com/procgraph/procgraph/fault"
)

// Error is the public form of an error.
type Error struct {
	Status  int            // HTTP status
	Code    fault.Code     // the API's error code
	Message string         // safe to show to the caller
	Details map[string]any // safe structured context; never nil
	// RetryAfter is a busy refusal's advice in whole seconds (the HTTP
	// Retry-After header); 0 for other errors.
	RetryAfter int
}

// internalMessage is the whole public message of an internal error.
const internalMessage = "internal error"

// Of returns the public form of err (nil for nil). The code and message
// are those of the first *fault.Error in err's chain; an error without
// one, or of code internal, is answered "internal error" with no details,
// whatever its text (a store path, a driver message).
func Of(err error) *Error {
	if err == nil {
		return nil
	}
	var pe *fault.Error
	if !errors.As(err, &pe) || pe.Code == fault.CodeInternal {
		return &Error{Status: http.StatusInternalServerError, Code: fault.CodeInternal, Message: internalMessage, Details: map[string]any{}}
	}
	details := pe.Details
	if details == nil {
		details = map[string]any{}
	}
	a := &Error{Status: Status(pe.Code), Code: pe.Code, Message: pe.Message, Details: details}
	if n, ok := details[fault.DetailRetryAfter].(int); ok && pe.Code == fault.CodeBusy && n > 0 {
		a.RetryAfter = n
	}
	return a
}

// Status maps an error code to its HTTP status.
func Status(code fault.Code) int {
	switch code {
	case fault.CodeInvalid:
		return http.StatusBadRequest
	case fault.CodeUnauthorized:
		return http.StatusUnauthorized
	case fault.CodeForbidden, fault.CodeDenied:
		return http.StatusForbidden
	case fault.CodeNotFound:
		return http.StatusNotFound
	case fault.CodeConflict:
		return http.StatusConflict
	case fault.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case fault.CodeInvalidCode, fault.CodeInvalidArguments:
		return http.StatusUnprocessableEntity
	case fault.CodeUnavailable:
		return http.StatusServiceUnavailable
	case fault.CodeBusy:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

// ServerFault reports whether the error is the server's (internal or
// unavailable): the transport logs the full error, which the caller never
// sees.
func (e *Error) ServerFault() bool {
	return e.Code == fault.CodeInternal || e.Code == fault.CodeUnavailable
}

// Body is the contract's error shape: {"error": {code, message, details}}.
type Body struct {
	Error BodyError `json:"error"`
}

// BodyError is the inside of Body.
type BodyError struct {
	Code    fault.Code     `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// Body returns e in the contract's error shape.
func (e *Error) Body() Body {
	return Body{Error: BodyError{Code: e.Code, Message: e.Message, Details: e.Details}}
}
