package signature

import "fmt"

// Error is a rejection of code. Line and Column are 1-based and point into
// the code as written (0 when unknown); columns count runes. Feature names
// what was rejected ("import", "class", "try", "f-string", "load", "syntax",
// "dialect", "code_size", "empty_signature"...). Message is a human sentence
// naming the feature and the position.
type Error struct {
	Line, Column int
	Feature      string
	Message      string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Warning is an advisory note about code that was accepted, such as an opaque
// use of tools. Line and Column are as in Error.
type Warning struct {
	Line, Column int
	Message      string
}

// errorAt builds an *Error whose message is prefixed with the position.
func errorAt(line, col int, feature, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		msg = fmt.Sprintf("line %d, column %d: %s", line, col, msg)
	}
	return &Error{Line: line, Column: col, Feature: feature, Message: msg}
}
