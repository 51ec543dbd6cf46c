package main

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/internal/buildinfo"
)

// TestMCPServerInfoAndRevision: both endpoints identify with this build's
// release (serverInfo.version) at both revisions they serve: a client
// asking for 2026-07-28 (the go-sdk's default) gets it, statelessly (no
// Mcp-Session-Id: server/discover opens nothing), and one asking for
// 2025-11-25 gets that, with a session (ADR 0028).
func TestMCPServerInfoAndRevision(t *testing.T) {
	t.Parallel()
	s := mustServe(t, serverOpts{Upstream: mustUpstream(t)})
	for _, path := range []string{"/mcp", "/mcp/interactive"} {
		for _, revision := range []string{modernMCP, legacyMCP} {
			t.Run(path+"@"+revision, func(t *testing.T) {
				sess := mustMCPAt(t, s, path, s.token, &mcp.ClientOptions{}, revision)
				res := sess.InitializeResult()
				if res.ServerInfo == nil || res.ServerInfo.Name != "procgraph" || res.ServerInfo.Version != buildinfo.Version() {
					t.Fatalf("serverInfo %+v, want procgraph %s", res.ServerInfo, buildinfo.Version())
				}
				if res.ProtocolVersion != revision {
					t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, revision)
				}
				if stateless := sess.ID() == ""; stateless != (revision == modernMCP) {
					t.Fatalf("at %s the session id is %q", revision, sess.ID())
				}
			})
		}
	}
}
