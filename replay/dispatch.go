package replay

import (
	"context"
	"fmt"
	"slices"

	"github.com/procgraph/procgraph/procedures"
)

// Dispatcher executes a tool call that the allow-set permitted. It is the
// edge procgraph does not own: the upstream tool server. A returned
// *sandbox.Error, or *sandbox.CallFailure, keeps its code (the run's
// failure class: upstream_unavailable, timeout…); any other error becomes
// tool_failed with the error's text as the message, so messages must be
// safe to show a caller.
type Dispatcher interface {
	Dispatch(ctx context.Context, tool string, args map[string]any) (any, error)
}

// CatalogueDispatcher is a Dispatcher that can route a call by a
// catalogue given with it (an upstream gateway of several servers): a
// run's calls are dispatched with the catalogue the run was decided and
// its arguments checked with.
type CatalogueDispatcher interface {
	Dispatcher
	DispatchWith(ctx context.Context, cat *procedures.Catalogue, tool string, args map[string]any) (any, error)
}

// DispatcherFunc adapts a function to a Dispatcher.
type DispatcherFunc func(ctx context.Context, tool string, args map[string]any) (any, error)

// Dispatch calls f.
func (f DispatcherFunc) Dispatch(ctx context.Context, tool string, args map[string]any) (any, error) {
	return f(ctx, tool, args)
}

// ToolFunc implements one tool in process.
type ToolFunc func(ctx context.Context, args map[string]any) (any, error)

// FuncDispatcher dispatches to in-process tool functions by name, for tests,
// benchmarks and embedding.
type FuncDispatcher map[string]ToolFunc

// NewFuncDispatcher returns a Dispatcher over tools.
func NewFuncDispatcher(tools map[string]ToolFunc) FuncDispatcher { return FuncDispatcher(tools) }

// Dispatch calls the function named tool; an unknown name is an error.
func (d FuncDispatcher) Dispatch(ctx context.Context, tool string, args map[string]any) (any, error) {
	f, ok := d[tool]
	if !ok {
		return nil, fmt.Errorf("no tool %q upstream", tool)
	}
	return f(ctx, args)
}

// Names returns the dispatcher's tool names, sorted.
func (d FuncDispatcher) Names() []string {
	names := make([]string, 0, len(d))
	for n := range d {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
