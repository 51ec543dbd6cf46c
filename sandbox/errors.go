package sandbox

import "fmt"

// ErrorCode classifies why a run failed. The values are part of the HTTP API
// (the replay response's error.code).
type ErrorCode string

// The error codes of a failed run.
const (
	ToolFailed   ErrorCode = "tool_failed"
	ToolRefused  ErrorCode = "tool_refused"
	StepLimit    ErrorCode = "step_limit"
	Timeout      ErrorCode = "timeout"
	MemoryLimit  ErrorCode = "memory_limit"
	CallLimit    ErrorCode = "call_limit"
	RuntimeError ErrorCode = "runtime_error"
	// InvalidArguments: a tool call's arguments broke the check the run
	// was given (Request.Check: the tool's input_schema), and the call
	// never reached the ToolCaller.
	InvalidArguments ErrorCode = "invalid_arguments"
	// UpstreamUnavailable: a tool call could not reach the server that
	// serves the tool, or lost it before an answer (the ToolCaller's
	// *Error: the sandbox never makes one itself).
	UpstreamUnavailable ErrorCode = "upstream_unavailable"
)

// Error is why a run failed. Tool names the tool involved, if any.
type Error struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
	Tool    string    `json:"tool,omitempty"`
	// Line is the line of the program a Stopped run stopped at (0
	// otherwise).
	Line int `json:"line,omitempty"`
}

// Error returns "code: message".
func (e *Error) Error() string {
	return string(e.Code) + ": " + e.Message
}

// CallFailure is a ToolCaller's error that keeps its class: to errors.As
// it is an *Error of Code and Message (the run fails with that code); its
// Error is Message alone, as a plain error's would be, and it unwraps to
// Cause (errors.Is: context.DeadlineExceeded…), which is never shown.
type CallFailure struct {
	Code    ErrorCode
	Message string
	Cause   error
}

func (e *CallFailure) Error() string { return e.Message }

// Unwrap returns Cause.
func (e *CallFailure) Unwrap() error { return e.Cause }

// As makes e an *Error of its code and message.
func (e *CallFailure) As(target any) bool {
	if p, ok := target.(**Error); ok {
		*p = &Error{Code: e.Code, Message: e.Message}
		return true
	}
	return false
}

func errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func toolErrorf(code ErrorCode, tool, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Tool: tool}
}

// internalError is the generic message for a recovered panic: it names no
// internals.
func internalError() *Error {
	return errorf(RuntimeError, "internal error in the sandbox")
}
