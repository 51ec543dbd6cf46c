package mcpserve

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// fixedScopes is the scope a call of each fixed tool needs (docs/mcp.md).
var fixedScopes = map[string]auth.Scope{
	FindToolName:          auth.ScopeRead,
	AutoRunToolName:       auth.ScopeGrant,
	RunCodeToolName:       auth.ScopeInvoke,
	AwaitApprovalToolName: auth.ScopeInvoke,
}

// scopeOf is the scope a call of tool name needs: a fixed tool's
// (fixedScopes), invoke for a proc__ tool; not ok for any other name. It
// is the one rule of who may call what over MCP: each tool's handler
// checks it (mayCall) and tools/list offers a caller only the tools it may
// call (listCallable).
func scopeOf(name string) (auth.Scope, bool) {
	if s, ok := fixedScopes[name]; ok {
		return s, true
	}
	if strings.HasPrefix(name, procedures.ProcPrefix) {
		return auth.ScopeInvoke, true
	}
	return "", false
}

// mayCall returns nil when c may call tool name (scopeOf), else the
// error it is refused with.
func (c caller) mayCall(name string) error {
	s, ok := scopeOf(name)
	if !ok {
		return fault.Errorf(fault.CodeForbidden, "no caller may call this tool")
	}
	if !c.has(s) {
		return auth.Forbidden(s)
	}
	return nil
}

// methodListTools is the request listing the tools.
const methodListTools = "tools/list"

// listCallable answers tools/list with only the tools the caller may call
// (mayCall), on both handlers: the agent token is not offered
// set_procedure_auto_run, a read-only token no proc__ tool. With tokens
// the list depends on the token, so it is marked private: no cache may
// answer it to another caller.
func (h *Handler) listCallable(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != methodListTools || err != nil {
			return res, err
		}
		list, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return res, err
		}
		c := h.callerOf(req)
		kept := make([]*mcp.Tool, 0, len(list.Tools))
		for _, t := range list.Tools {
			if c.mayCall(t.Name) == nil {
				kept = append(kept, t)
			}
		}
		list.Tools = kept
		if h.cfg.Auth.Enabled() {
			list.CacheScope = "private"
		}
		return list, nil
	}
}
