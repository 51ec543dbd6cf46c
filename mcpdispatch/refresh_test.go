package mcpdispatch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/internal/cputime"
	"github.com/procgraph/procgraph/procedures"
)

// countingStore counts what a refresh writes to the store: catalogue puts
// and audit records.
type countingStore struct {
	*embedded.Store
	puts, records atomic.Int64
}

func (s *countingStore) PutCatalogue(ctx context.Context, c *procedures.Catalogue) error {
	s.puts.Add(1)
	return s.Store.PutCatalogue(ctx, c)
}

func (s *countingStore) AppendDecision(ctx context.Context, d audit.Decision) error {
	s.records.Add(1)
	return s.Store.AppendDecision(ctx, d)
}

func (s *countingStore) writes() int64 { return s.puts.Load() + s.records.Load() }

// newCountingService is a Service over an embedded store whose writes are
// counted.
func newCountingService(tb testing.TB) (*procedures.Service, *countingStore) {
	tb.Helper()
	st, err := embedded.Open(filepath.Join(tb.TempDir(), "procgraph.db"), embedded.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	cs := &countingStore{Store: st}
	return procedures.NewService(cs, procedures.Options{}), cs
}

// liveTool is a tool of a live test server: it answers its own name.
func liveTool(s *mcp.Server, name string, readOnly bool, pathType string) {
	t := &mcp.Tool{Name: name, Description: "the " + name + " tool",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": pathType}}}}
	if readOnly {
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	}
	s.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
	})
}

// liveServer is an MCP server over streamable HTTP whose tools the test
// changes while it runs (it announces tools/list_changed).
func liveServer(tb testing.TB) (*mcp.Server, string) {
	tb.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "live", Version: "v1"}, nil)
	liveTool(s, "read-file", true, "string")
	liveTool(s, "write_file", false, "string")
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	tb.Cleanup(ts.Close)
	return s, ts.URL
}

// waitCatalogue polls svc's catalogue until ok holds for it.
func waitCatalogue(t *testing.T, svc *procedures.Service, what string, ok func(*procedures.Catalogue) bool) *procedures.Catalogue {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := svc.Catalogue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ok(c) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never happened; catalogue %+v", what, c.Tools)
		}
	}
}

// TestRefresherFollowsListChanged: two servers of an upstreams file, one
// trusted, on one live server. The start's refresh adds their tools (read
// only only where trusted); a tool added, changed and removed on the live
// server reaches the catalogue through tools/list_changed alone (no timer);
// a server that cannot be reached changes nothing and holds no other.
func TestRefresherFollowsListChanged(t *testing.T) {
	ctx := context.Background()
	live, url := liveServer(t)
	ups := []Upstream{{Key: "t", Prefix: "t", URL: url, TrustAnnotations: true}, {Key: "u", Prefix: "u", URL: url},
		{Key: "dead", Prefix: "dead", URL: "http://127.0.0.1:1/mcp"}}
	svc, store := newCountingService(t)
	ref := NewRefresher(ups, RefreshOptions{})
	g, ds, err := OpenUpstreams(ctx, ups, GatewayOptions{Supervise: true, OnToolsChanged: ref.Notify, Base: Options{MinBackoff: time.Hour, MaxBackoff: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	ref.Attach(ds)
	errs := ref.RefreshAll(ctx, svc)
	if errs["t"] != nil || errs["u"] != nil || errs["dead"] == nil {
		t.Fatalf("start: %v", errs)
	}
	c, err := svc.Catalogue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, tl := range c.Tools {
		names = append(names, tl.Name)
		if want := tl.Name == "t__read_file"; tl.ReadOnly != want || !tl.FollowsServer() {
			t.Errorf("%s: read_only %v, follows %v", tl.Name, tl.ReadOnly, tl.FollowsServer())
		}
	}
	if !slices.Equal(names, []string{"t__read_file", "t__write_file", "u__read_file", "u__write_file"}) {
		t.Fatalf("start catalogue %v", names)
	}
	written := store.writes()
	if r, err := ref.Refresh(ctx, "t", svc); err != nil || r.Changes() || store.writes() != written {
		t.Fatalf("an unchanged refresh: %+v, %v, %d writes", r, err, store.writes()-written)
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); ref.Run(runCtx, svc) }()
	t.Cleanup(func() { stop(); <-done })

	liveTool(live, "stat", true, "string") // new: read-only only on the trusted server
	c = waitCatalogue(t, svc, "the new tool", func(c *procedures.Catalogue) bool { return c.Has("t__stat") && c.Has("u__stat") })
	if ts, _ := c.Tool("t__stat"); !ts.ReadOnly {
		t.Error("a new tool of a trusted server is not read-only")
	}
	if us, _ := c.Tool("u__stat"); us.ReadOnly {
		t.Error("a new tool of an untrusted server is read-only")
	}
	old := c.SchemaHash("t__read_file")
	liveTool(live, "read-file", true, "integer") // its input schema changes
	waitCatalogue(t, svc, "the changed schema", func(c *procedures.Catalogue) bool {
		return c.SchemaHash("t__read_file") != old && c.SchemaHash("u__read_file") != "" && c.Has("u__stat")
	})
	live.RemoveTools("write_file")
	c = waitCatalogue(t, svc, "the removal", func(c *procedures.Catalogue) bool { return !c.Has("t__write_file") && !c.Has("u__write_file") })
	if len(c.Tools) != 4 {
		t.Fatalf("after the removal %+v", c.Tools)
	}
}

// benchUpstreams starts servers in-memory servers of tools tools each and
// a Refresher of them attached to their dispatchers.
func benchUpstreams(b *testing.B, servers, tools int) (*Refresher, func()) {
	b.Helper()
	var ups []Upstream
	ds := map[string]*Dispatcher{}
	for i := range servers {
		key := fmt.Sprintf("s%d", i)
		srv := mcp.NewServer(&mcp.Implementation{Name: key, Version: "v1"}, nil)
		for j := range tools {
			liveTool(srv, fmt.Sprintf("tool-%03d", j), j%2 == 0, "string")
		}
		d := newDispatcher(key, Options{Server: key, CallTimeout: DefaultCallTimeout, ConnectTimeout: DefaultConnectTimeout,
			MinBackoff: DefaultMinBackoff, MaxBackoff: DefaultMaxBackoff, MaxResultBytes: DefaultMaxResultBytes}, func() mcp.Transport {
			ct, st := mcp.NewInMemoryTransports()
			if _, err := srv.Connect(context.Background(), st, nil); err != nil {
				b.Fatal(err)
			}
			return ct
		})
		ds[key] = d
		ups = append(ups, Upstream{Key: key, Prefix: key, TrustAnnotations: i == 0})
	}
	ref := NewRefresher(ups, RefreshOptions{})
	ref.Attach(ds)
	return ref, func() {
		for _, d := range ds {
			_ = d.Close()
		}
	}
}

// BenchmarkCatalogueRefresh: a refresh of 3 servers × 100 tools over
// in-memory transports into a real service and embedded store, when
// nothing changed: its CPU time per refresh (this process's, the servers'
// answers included) and the store writes it made (none).
func BenchmarkCatalogueRefresh(b *testing.B) {
	ctx := context.Background()
	ref, closeAll := benchUpstreams(b, 3, 100)
	defer closeAll()
	svc, store := newCountingService(b)
	for key, err := range ref.RefreshAll(ctx, svc) { // the start: 300 tools added
		if err != nil {
			b.Fatalf("%s: %v", key, err)
		}
	}
	if c, err := svc.Catalogue(ctx); err != nil || len(c.Tools) != 300 {
		b.Fatalf("catalogue: %v", err)
	}
	written := store.writes()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for b.Loop() {
		for key, err := range ref.RefreshAll(ctx, svc) {
			if err != nil {
				b.Fatalf("%s: %v", key, err)
			}
		}
	}
	cpu := cputime.Process() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/refresh")
	b.ReportMetric(float64(store.writes()-written)/float64(b.N), "writes/refresh")
	if store.writes() != written {
		b.Fatalf("%d store writes for refreshes that changed nothing", store.writes()-written)
	}
}

// TestSlowListingHoldsNothing: while one server's tools/list hangs, a
// refresh of another server completes, and a call to the hung server
// itself is answered: a refresh takes no call slot and holds no other
// server.
func TestSlowListingHoldsNothing(t *testing.T) {
	ctx := context.Background()
	slow := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "v1"}, nil)
	liveTool(slow, "read", true, "string")
	release, listing := make(chan struct{}), make(chan struct{}, 1)
	hold := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				select {
				case listing <- struct{}{}:
				default:
				}
				<-release
			}
			return next(ctx, method, req)
		}
	}
	slow.AddReceivingMiddleware(hold)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return slow }, nil))
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	_, fastURL := liveServer(t)
	ups := []Upstream{{Key: "slow", Prefix: "slow", URL: ts.URL, MaxConcurrency: 1}, {Key: "fast", Prefix: "fast", URL: fastURL}}
	svc, _ := newCountingService(t)
	ref := NewRefresher(ups, RefreshOptions{})
	g, ds, err := OpenUpstreams(ctx, ups, GatewayOptions{OnToolsChanged: ref.Notify, Base: Options{MaxConcurrency: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	ref.Attach(ds)

	slowDone := make(chan error, 1)
	go func() { _, err := ref.Refresh(ctx, "slow", svc); slowDone <- err }()
	<-listing // the slow server's listing is in flight, and hangs
	if r, err := ref.Refresh(ctx, "fast", svc); err != nil || len(r.Added) != 2 {
		t.Fatalf("the fast server's refresh: %+v, %v", r, err)
	}
	if out, err := ds["slow"].Dispatch(ctx, "read", map[string]any{"path": "a"}); err != nil || out != "read" {
		t.Fatalf("a call to the server whose listing hangs: %v, %v", out, err)
	}
	select {
	case err := <-slowDone:
		t.Fatalf("the hung listing ended: %v", err)
	default:
	}
	close(release)
	if err := <-slowDone; err != nil {
		t.Fatalf("the slow refresh: %v", err)
	}
	c, err := svc.Catalogue(ctx)
	if err != nil || !c.Has("slow__read") || !c.Has("fast__read_file") {
		t.Fatalf("catalogue %v, %v", c, err)
	}
}
