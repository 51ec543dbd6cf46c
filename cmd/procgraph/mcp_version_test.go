package main

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/internal/buildinfo"
)

// TestMCPServerInfoAndRevision: both endpoints identify with this build's
// release (serverInfo.version), and a client asking for the 2026-07-28
// revision (the go-sdk's default) negotiates 2025-11-25: procgraph's MCP
// sessions are stateful, and the SDK serves 2026-07-28 (and its
// InputRequiredResult) only on stateless servers, so the in-client review
// stays elicitation (ADR 0023). When this changes, the review's
// multi-round-trip path must come with it.
func TestMCPServerInfoAndRevision(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{Upstream: mustUpstream(t)})
	for _, path := range []string{"/mcp", "/mcp/interactive"} {
		t.Run(path, func(t *testing.T) {
			res := mustMCPClient(t, s, path, &mcp.ClientOptions{}).InitializeResult()
			if res.ServerInfo == nil || res.ServerInfo.Name != "procgraph" || res.ServerInfo.Version != buildinfo.Version() {
				t.Fatalf("serverInfo %+v, want procgraph %s", res.ServerInfo, buildinfo.Version())
			}
			if res.ProtocolVersion != "2025-11-25" {
				t.Fatalf("negotiated %s, want 2025-11-25 (see ADR 0023 before serving a newer revision)", res.ProtocolVersion)
			}
		})
	}
}
