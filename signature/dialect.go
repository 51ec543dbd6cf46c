package signature

import "fmt"

// Dialect is the language a procedure's code is written in.
type Dialect string

// The supported dialects.
const (
	Starlark    Dialect = "starlark"
	PythonAsync Dialect = "python-async"
)

// ParseDialect maps "" and "starlark" to Starlark and "python-async" to
// PythonAsync; anything else is an *Error with Feature "dialect".
func ParseDialect(s string) (Dialect, error) {
	switch s {
	case "", string(Starlark):
		return Starlark, nil
	case string(PythonAsync):
		return PythonAsync, nil
	}
	return "", &Error{Feature: "dialect",
		Message: fmt.Sprintf("unknown dialect %q: want %q or %q", s, Starlark, PythonAsync)}
}
