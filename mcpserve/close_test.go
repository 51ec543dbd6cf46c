package mcpserve

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/audit"
)

// TestHandlerLeavesTheFeed: a Handler holds a change-feed subscription only
// while in use. Made and dropped, it holds none; its first request
// subscribes (and a capture after it is in the next tool list); Close
// leaves the feed and the shared session limits, may be called again, and
// ends Run at once; a closed handler still answers with the tools it has.
func TestHandlerLeavesTheFeed(t *testing.T) {
	e := newEnv(t, false)
	feed := e.svc.Changes()
	before := feed.Subscribers()
	limits := NewSessionLimits(0, 0)
	h, err := New(Config{Service: e.svc, Replayer: e.rp, Phase: audit.PhaseAutomatic, Sessions: limits})
	if err != nil {
		t.Fatal(err)
	}
	if n := feed.Subscribers(); n != before {
		t.Fatalf("%d subscriptions after New, want %d: an unused handler holds none", n, before)
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v1"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: newTestServer(t, h)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := feed.Subscribers(); n != before+1 {
		t.Fatalf("%d subscriptions after the first request, want %d", n, before+1)
	}
	ro := e.capture(readOnlyCode)
	if names := toolNames(t, s); !slices.Contains(names, ro.Name) {
		t.Fatalf("%s not listed after the capture: %v", ro.Name, names)
	}

	h.Close()
	h.Close()
	if n := feed.Subscribers(); n != before {
		t.Fatalf("%d subscriptions after Close, want %d", n, before)
	}
	limits.mu.Lock()
	held := slices.Contains(limits.servers, h.server)
	limits.mu.Unlock()
	if held {
		t.Fatal("the session limits still hold the closed handler's server")
	}
	ran := make(chan struct{})
	go func() { h.Run(context.Background()); close(ran) }()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("Run on a closed handler did not return")
	}
	if n := feed.Subscribers(); n != before {
		t.Fatalf("%d subscriptions after Run on a closed handler, want %d", n, before)
	}
	if names := toolNames(t, s); !slices.Contains(names, ro.Name) {
		t.Fatalf("a closed handler lost its tools: %v", names)
	}
}
