package sandbox

import (
	"fmt"

	"go.starlark.net/starlark"
)

// caller is how the Starlark side reaches tools. In process it is the gate
// itself; in a worker it asks the parent, where the gate is.
type caller interface {
	// call performs tool name with JSON-safe args and returns its JSON-safe
	// result, or the error that ends the run.
	call(name string, args map[string]any) (any, *Error)
}

// toolsValue is the predeclared `tools`. Any attribute is a tool bound to
// that name: the lookup never fails and reveals nothing; whether the tool may
// run is decided when it is called, by the gate.
type toolsValue struct {
	st *runState
}

var (
	_ starlark.HasAttrs = (*toolsValue)(nil)
	_ starlark.Callable = (*toolFunc)(nil)
)

func (t *toolsValue) String() string        { return "<tools>" }
func (t *toolsValue) Type() string          { return "tools" }
func (t *toolsValue) Freeze()               {}
func (t *toolsValue) Truth() starlark.Bool  { return starlark.True }
func (t *toolsValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: tools") }

// Attr returns the tool bound to name, whatever the name.
func (t *toolsValue) Attr(name string) (starlark.Value, error) {
	return &toolFunc{name: name, st: t.st}, nil
}

// AttrNames returns nil: the tools are not listed.
func (t *toolsValue) AttrNames() []string { return nil }

// toolFunc is tools.<name>: calling it asks for one tool call.
type toolFunc struct {
	name string
	st   *runState
}

func (f *toolFunc) Name() string          { return "tools." + f.name }
func (f *toolFunc) String() string        { return "<tool " + f.name + ">" }
func (f *toolFunc) Type() string          { return "tool" }
func (f *toolFunc) Freeze()               {}
func (f *toolFunc) Truth() starlark.Bool  { return starlark.True }
func (f *toolFunc) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: tool") }

// CallInternal converts the keyword arguments to JSON, makes the call and
// converts the result back. A failed call ends the run: the error is kept in
// the run state, which the program cannot clear.
func (f *toolFunc) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("tools.%s takes keyword arguments only (got %d positional)", f.name, len(args))
	}
	m := make(map[string]any, len(kwargs))
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		x, err := toJSON(kv[1])
		if err != nil {
			return nil, fmt.Errorf("tools.%s: argument %s: %v", f.name, k, err)
		}
		m[k] = x
	}
	res, e := f.st.caller.call(f.name, m)
	if e != nil {
		return nil, f.st.fail(e)
	}
	v, err := fromJSON(res)
	if err != nil {
		return nil, f.st.fail(toolErrorf(ToolFailed, f.name, "tools.%s returned a value that is not JSON: %v", f.name, err))
	}
	return v, nil
}
