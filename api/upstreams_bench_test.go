package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/mcpdispatch"
	"github.com/procgraph/procgraph/procedures"
)

// upstreamsFixture is a Gateway over three MCP servers (streamable HTTP,
// in this process), each connected, routing by a catalogue of n tools
// spread over them (built as a store reads it back: StoredCatalogue, past
// the PUT bound, to measure 100k).
func upstreamsFixture(b *testing.B, n int) *mcpdispatch.Gateway {
	b.Helper()
	var ups []mcpdispatch.Upstream
	keys := []string{"fs", "git", "everything"}
	for _, key := range keys {
		s := mcp.NewServer(&mcp.Implementation{Name: key, Version: "v1"}, nil)
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		b.Cleanup(hs.Close)
		ups = append(ups, mcpdispatch.Upstream{Key: key, URL: hs.URL, Prefix: key})
	}
	g, ds, err := mcpdispatch.OpenUpstreams(context.Background(), ups, mcpdispatch.GatewayOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = g.Close() })
	for key, err := range mcpdispatch.Connect(context.Background(), ds) {
		if err != nil {
			b.Fatalf("%s: %v", key, err)
		}
	}
	tools := make([]procedures.Tool, n)
	for i := range tools {
		key := keys[i%len(keys)]
		tools[i] = procedures.Tool{Name: fmt.Sprintf("%s__tool_%06d", key, i), Server: key, UpstreamName: fmt.Sprintf("tool-%06d", i),
			InputSchema: map[string]any{"type": "object"}}
	}
	cat := procedures.StoredCatalogue(tools, fmt.Sprintf("sha256:bench-%d", n))
	g.Route(func(context.Context) (*procedures.Catalogue, error) { return cat, nil })
	return g
}

// BenchmarkUpstreamsStatus measures GET /v1/upstreams and /readyz over
// loopback HTTP with three connected upstream servers and a catalogue of
// 1k and 100k tools, against GET /healthz: after the first read of a
// catalogue revision (its tools counted per server once, timed and
// logged), neither grows with the catalogue.
func BenchmarkUpstreamsStatus(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			g := upstreamsFixture(b, n)
			e := mustEnv(b, envOpts{upstreams: g})
			c := benchClient(1)
			start := time.Now()
			if st, body := e.do(b, c, "GET", "/v1/upstreams", nil); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
			b.Logf("first GET /v1/upstreams of this revision (counts %d tools): %v", n, time.Since(start).Round(time.Microsecond))
			for _, path := range []string{"/healthz", "/readyz", "/v1/upstreams"} {
				b.Run(path[1:], func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if st, body := e.do(b, c, "GET", path, nil); st != 200 {
							b.Fatalf("%s: %d %s", path, st, body)
						}
					}
				})
			}
		})
	}
}
