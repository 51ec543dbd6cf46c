// Package fault holds procgraph's one error type: an Error with a Code that
// every package returns and only the edges translate (api/ and mcpserve/ into
// statuses, graph/ from backend errors into codes). It is a leaf: it imports
// nothing of procgraph's, so every package can use it.
package fault

import (
	"errors"
	"fmt"
)

// Code classifies an error. Codes are translated into transport statuses only
// at the edges (api/), and backend errors into codes only in graph/.
type Code string

// The error codes. Their string values are the API's error codes.
const (
	CodeInvalid          Code = "invalid_request"   // malformed input
	CodeInvalidCode      Code = "invalid_code"      // procedure code rejected by analysis
	CodeInvalidArguments Code = "invalid_arguments" // replay arguments fail the input schema
	CodeNotFound         Code = "not_found"         // no such procedure, version or cause
	CodeConflict         Code = "conflict"          // the request conflicts with the current state
	CodeDenied           Code = "denied"            // a replay decision denied it
	CodeTooLarge         Code = "payload_too_large" // input over a size limit
	CodeUnauthorized     Code = "unauthorized"      // missing or wrong credentials
	CodeForbidden        Code = "forbidden"         // credentials lack the scope
	CodeUnavailable      Code = "unavailable"       // the store cannot be reached; nothing was written
	CodeInternal         Code = "internal"          // a bug
	// CodeBusy: admission refused the request and nothing ran; details
	// carry "reason" (ReasonReplayQueue) and DetailRetryAfter.
	CodeBusy Code = "busy"
)

// Busy details.
const (
	// ReasonReplayQueue is the reason of a busy refusal in front of the
	// sandbox workers (docs/api.md's 429 busy).
	ReasonReplayQueue = "replay_queue"
	// DetailRetryAfter is the details key of a busy refusal's whole seconds
	// to wait before trying again (the HTTP Retry-After header).
	DetailRetryAfter = "retry_after_seconds"
)

// Error is procgraph's one error type. Message is safe to show to a caller;
// Details carries structured, equally safe context (positions, reasons).
type Error struct {
	Code    Code
	Message string
	Details map[string]any
}

// Error implements error.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithDetails returns e with the key set in its details.
func (e *Error) WithDetails(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// ErrorCode returns the code of err: "" for nil, the code of the first *Error
// in its chain, else CodeInternal.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorMessage returns the caller-safe message of err: the message of the
// first *Error in its chain, else a generic text that leaks nothing.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// DetailDecision is the details key of the decision an error carries (a
// denied invoke, a refused grant or promote); the API answers it as
// details.decision. audit.DecisionOf reads it back.
const DetailDecision = "decision"
