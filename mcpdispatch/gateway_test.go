package mcpdispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/mcpdispatch/internal/mcptest"
	"github.com/procgraph/procgraph/procedures"
)

// TestGatewayRoutesByCatalogue: two servers, each tool's call reaches the
// server its catalogue entry names under its upstream name; a tool the
// catalogue lacks, or whose server is not configured, reaches none.
func TestGatewayRoutesByCatalogue(t *testing.T) {
	a, b := newUpstream(t, "http"), newUpstream(t, "http")
	ups := []Upstream{{Key: "alpha", URL: a.url, Prefix: "alpha", TrustAnnotations: true}, {Key: "beta", URL: b.url, Prefix: ""}}
	g, ds, err := OpenUpstreams(context.Background(), ups, GatewayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	tools, skipped, err := ListAll(context.Background(), ups, ds)
	if err != nil || len(skipped) != 0 {
		t.Fatalf("%v %v", skipped, err)
	}
	extra := []procedures.Tool{{Name: "gamma__x", Server: "gamma", UpstreamName: "x"}, {Name: "bare_x"}}
	cat, err := procedures.NewCatalogue(append(tools, extra...))
	if err != nil {
		t.Fatal(err)
	}
	if ro, _ := cat.Tool("alpha__get_sum"); !ro.ReadOnly || ro.Server != "alpha" || ro.UpstreamName != "get-sum" {
		t.Fatalf("alpha__get_sum %+v", ro)
	}
	if bt, _ := cat.Tool("get_sum"); bt.ReadOnly || bt.Server != "beta" {
		t.Fatalf("beta's get_sum (annotations not trusted) %+v", bt)
	}
	g.Route(func(context.Context) (*procedures.Catalogue, error) { return cat, nil })

	ctx := context.Background()
	out, err := g.Dispatch(ctx, "alpha__get_sum", map[string]any{"a": 2, "b": 3})
	if err != nil {
		t.Fatal(err)
	}
	if sum, _ := out.(map[string]any)["sum"].(json.Number); sum.String() != "5" {
		t.Fatalf("alpha__get_sum = %v", out)
	}
	if _, err := g.Dispatch(ctx, "get_jobs", map[string]any{"task_id": 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Dispatch(ctx, "bad_name", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(a.rec.Tools(), ","); got != "get-sum" {
		t.Fatalf("alpha received %s, want get-sum", got)
	}
	if got := strings.Join(b.rec.Tools(), ","); got != "get_jobs,bad-name" {
		t.Fatalf("beta received %s, want get_jobs,bad-name", got)
	}

	for name, want := range map[string]string{"gamma__x": `server "gamma" is not configured`, "bare_x": "no unnamed upstream", "not_listed": "not in the catalogue"} {
		if _, err := g.Dispatch(ctx, name, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	if len(a.rec.Calls())+len(b.rec.Calls()) != 3 {
		t.Fatalf("a refused call was sent: %v %v", a.rec.Tools(), b.rec.Tools())
	}
	// A failure names its server.
	if _, err := g.Dispatch(ctx, "alpha__fail_job", nil); err == nil || !strings.HasPrefix(err.Error(), "server alpha: tool fail_job failed upstream") {
		t.Fatalf("alpha__fail_job: %v", err)
	}
	var none Gateway
	if _, err := none.Dispatch(ctx, "x", nil); err == nil {
		t.Fatal("a gateway without a catalogue dispatched")
	}
}

// TestGatewaySupervises: a server down at start does not stop the others;
// it is connected once it answers, without waiting for a call.
func TestGatewaySupervises(t *testing.T) {
	up := newUpstream(t, "http")
	var serving atomic.Bool
	real := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcptest.NewServer(up.rec, false) }, nil)
	late := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !serving.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		real.ServeHTTP(w, r)
	}))
	t.Cleanup(late.Close)
	ups := []Upstream{{Key: "late", URL: late.URL}, {Key: "up", URL: up.url}}
	g, ds, err := OpenUpstreams(context.Background(), ups, GatewayOptions{Supervise: true,
		Base: Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	errs := Connect(context.Background(), ds)
	if errs["up"] != nil || errs["late"] == nil {
		t.Fatalf("at start: %v", errs)
	}
	serving.Store(true)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ds["late"].mu.Lock()
		connected := ds["late"].session != nil
		ds["late"].mu.Unlock()
		if connected {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the late server was never connected")
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ds["up"].Dispatch(context.Background(), "get_jobs", nil); err == nil {
		t.Fatal("a closed gateway's server answered")
	}
}

// TestOpenUpstreamsRefusesWhatCannotWork: a command that is not on PATH
// refuses the start, naming its server; nothing is left running.
func TestOpenUpstreamsRefusesWhatCannotWork(t *testing.T) {
	ups := []Upstream{{Key: "ok", Command: []string{stdioServer(t)}}, {Key: "missing", Command: []string{"procgraph-no-such-command"}}}
	_, _, err := OpenUpstreams(context.Background(), ups, GatewayOptions{Supervise: true})
	if err == nil || !strings.Contains(err.Error(), `upstream server "missing"`) {
		t.Fatalf("%v", err)
	}
}

// TestImportUpstreamsJSON: the import of two servers over stdio names
// their tools with prefixes, and a server's standard error reaches the
// warnings, escaped.
func TestImportUpstreamsJSON(t *testing.T) {
	bin := stdioServer(t)
	ups := []Upstream{{Key: "jobs", Command: []string{bin}, Prefix: "jobs", TrustAnnotations: true, Env: map[string]string{"MCPTEST_STDERR": "starting \x1b[31mred"}},
		{Key: "math", Command: []string{bin}, Prefix: "m"}}
	var out, warn bytes.Buffer
	if err := ImportUpstreamsJSON(context.Background(), &out, &warn, ups, Options{}); err != nil {
		t.Fatal(err)
	}
	var file struct {
		Tools []procedures.Tool `json:"tools"`
	}
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		t.Fatal(err)
	}
	c, err := procedures.NewCatalogue(file.Tools)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tools) != 24 {
		t.Fatalf("%d tools", len(c.Tools))
	}
	if tl, _ := c.Tool("m__get_sum"); tl.Server != "math" || tl.UpstreamName != "get-sum" || tl.ReadOnly {
		t.Fatalf("m__get_sum %+v", tl)
	}
	if tl, _ := c.Tool("jobs__get_sum"); tl.Server != "jobs" || !tl.ReadOnly {
		t.Fatalf("jobs__get_sum %+v", tl)
	}
	if !strings.Contains(warn.String(), "server jobs: starting \\u001b[31mred\n") {
		t.Fatalf("the server's stderr, escaped, is not in the warnings: %q", warn.String())
	}

	// One server that cannot be listed fails the import, by name.
	ups = append(ups, Upstream{Key: "down", URL: "http://127.0.0.1:1/mcp"})
	err = ImportUpstreamsJSON(context.Background(), &out, &warn, ups, Options{ConnectTimeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), `upstream server "down"`) {
		t.Fatalf("%v", err)
	}
}

// TestPrefixedLines: a server's standard error is line by line, bounded
// and escaped.
func TestPrefixedLines(t *testing.T) {
	var out bytes.Buffer
	p := &prefixedLines{w: &out, prefix: "server fs: "}
	_, _ = p.Write([]byte("first\nsec"))
	_, _ = p.Write([]byte("ond \x1b[31mred\r\n" + strings.Repeat("x", 3000) + "\n"))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || lines[0] != "server fs: first" || strings.Contains(lines[1], "\x1b") || !strings.HasPrefix(lines[1], "server fs: second ") {
		t.Fatalf("%q", lines)
	}
	if len(lines[2]) > maxStderrLine+64 {
		t.Fatalf("a line of %d bytes", len(lines[2]))
	}
}

// BenchmarkGatewayRoute is what routing adds to a call: the catalogue read
// (the embedded store's, 300 tools of three servers) and the lookup; the
// server is a stub that answers at once.
func BenchmarkGatewayRoute(b *testing.B) {
	st, err := embedded.Open(filepath.Join(b.TempDir(), "procgraph.db"), embedded.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	svc := procedures.NewService(st, procedures.Options{})
	var tools []procedures.Tool
	stub := CallerFunc(func(context.Context, string, map[string]any) (any, error) { return nil, nil })
	servers := map[string]Caller{}
	for _, key := range []string{"fs", "git", "everything"} {
		servers[key] = stub
		for i := range 100 {
			up := fmt.Sprintf("tool-%d", i)
			name, _ := ToolName(key, up)
			tools = append(tools, procedures.Tool{Name: name, Server: key, UpstreamName: up, InputSchema: map[string]any{"type": "object"}})
		}
	}
	if _, err := svc.PutCatalogue(context.Background(), tools, "bench"); err != nil {
		b.Fatal(err)
	}
	g := NewGateway(servers, svc.Catalogue)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Dispatch(ctx, "git__tool_42", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// CallerFunc adapts a function to a Caller.
type CallerFunc func(ctx context.Context, tool string, args map[string]any) (any, error)

// Dispatch calls f.
func (f CallerFunc) Dispatch(ctx context.Context, tool string, args map[string]any) (any, error) {
	return f(ctx, tool, args)
}

// TestServerOptions: a server's max_concurrency holds a call back until a
// slot is free (abandoned with its caller, never sent), and its
// protocol_version is the revision offered.
func TestServerOptions(t *testing.T) {
	u := newUpstream(t, "http")
	d := u.dispatcher(t, Options{MaxConcurrency: 1, ProtocolVersion: "2025-06-18"})
	d.slots <- struct{}{} // the one slot is taken
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := d.Dispatch(ctx, "get_jobs", nil); err == nil || !strings.Contains(err.Error(), "abandoned") {
		t.Fatalf("a call without a slot: %v", err)
	}
	if n := len(u.rec.Calls()); n != 0 {
		t.Fatalf("a call without a slot reached the server (%d calls)", n)
	}
	<-d.slots
	if _, err := d.Dispatch(context.Background(), "get_jobs", nil); err != nil {
		t.Fatal(err)
	}
	s, err := d.Session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v := s.InitializeResult().ProtocolVersion; v != "2025-06-18" {
		t.Fatalf("negotiated %s", v)
	}
}

// TestSupervisedCommandRestarts: a supervised command server that exits is
// started again without waiting for a call; the other server's session is
// untouched.
func TestSupervisedCommandRestarts(t *testing.T) {
	bin := stdioServer(t)
	ups := []Upstream{{Key: "a", Command: []string{bin}}, {Key: "b", Command: []string{bin}}}
	g, ds, err := OpenUpstreams(context.Background(), ups, GatewayOptions{Supervise: true,
		Base: Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	for key, err := range Connect(context.Background(), ds) {
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
	}
	session := func(key string) *mcp.ClientSession {
		ds[key].mu.Lock()
		defer ds[key].mu.Unlock()
		if ds[key].session == nil {
			return nil
		}
		return ds[key].session.s
	}
	a, b := session("a"), session("b")
	if _, err := ds["a"].Dispatch(context.Background(), "crash", nil); err == nil {
		t.Fatal("crash answered")
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if s := session("a"); s != nil && s != a {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the crashed server was not started again")
		}
	}
	if session("b") != b {
		t.Fatal("the other server's session changed")
	}
}

// TestStderrBudget: a server's stderr is logged at most 100 lines a
// minute, escaped, with its key; the rest is counted and the count logged.
func TestStderrBudget(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := &lineLogger{log: zerolog.New(&out).With().Str("server", "fs").Logger(), cmd: "npx", now: func() time.Time { return clock }}
	for i := range 150 {
		fmt.Fprintf(l, "line %d \x1b[2J\n", i)
	}
	clock = clock.Add(time.Minute)
	fmt.Fprintf(l, "next minute\n")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 102 {
		t.Fatalf("%d records", len(lines))
	}
	if !strings.Contains(lines[0], `"server":"fs","upstream":"npx","stderr":"line 0 \\u001b[2J"`) {
		t.Fatalf("first record %s", lines[0])
	}
	if !strings.Contains(lines[100], `"dropped":50`) || !strings.Contains(lines[101], `"stderr":"next minute"`) {
		t.Fatalf("records 100 and 101: %s %s", lines[100], lines[101])
	}
}

// TestGatewayDispatchWithReadsNoCatalogue: a call dispatched with its
// run's catalogue goes where that catalogue routes it, under its upstream
// name, and the gateway reads no catalogue of its own for it (a Neo4j
// statement per call).
func TestGatewayDispatchWithReadsNoCatalogue(t *testing.T) {
	var got []string
	record := func(key string) Caller {
		return CallerFunc(func(_ context.Context, tool string, _ map[string]any) (any, error) {
			got = append(got, key+":"+tool)
			return map[string]any{}, nil
		})
	}
	g := NewGateway(map[string]Caller{"a": record("a"), "b": record("b")}, func(context.Context) (*procedures.Catalogue, error) {
		t.Error("the gateway read a catalogue for a call dispatched with one")
		return nil, errors.New("not to be read")
	})
	cat, err := procedures.NewCatalogue([]procedures.Tool{{Name: "a__get_sum", Server: "a", UpstreamName: "get-sum"}, {Name: "b__x", Server: "b", UpstreamName: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"b__x", "a__get_sum"} {
		if _, err := g.DispatchWith(ctx, cat, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.DispatchWith(ctx, cat, "c__y", nil); err == nil {
		t.Fatal("a tool the run's catalogue lacks was dispatched")
	}
	if strings.Join(got, ",") != "b:x,a:get-sum" {
		t.Fatalf("calls %v", got)
	}
}
