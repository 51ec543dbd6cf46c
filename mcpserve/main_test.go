package mcpserve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/sandbox/sandboxtest"
)

// pool is the sandbox the tests replay in: this test binary re-executed as
// a worker.
var pool *sandbox.Pool

func TestMain(m *testing.M) {
	os.Exit(sandboxtest.Main(m, sandbox.PoolConfig{Size: 1, MaxWorkers: 6}, &pool))
}

// recorder is the upstream tool server: it records every call it receives.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) Dispatch(_ context.Context, tool string, args map[string]any) (any, error) {
	r.mu.Lock()
	r.calls = append(r.calls, tool)
	r.mu.Unlock()
	return map[string]any{"tool": tool, "task_id": args["task_id"]}, nil
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// The tokens of the tests, by holder.
var tokens = map[string][]string{
	"reader":   {"read"},
	"invoker":  {"read", "invoke"},
	"operator": {"read", "invoke", "grant"},
	"granter":  {"read", "grant"},
	"capturer": {"capture"},
}

// env is a procgraph with MCP mounted at /mcp (automatic) and
// /mcp/interactive, over a real embedded store and the sandbox pool.
type env struct {
	t     *testing.T
	st    *embedded.Store
	dir   string // the store's directory
	svc   *procedures.Service
	rp    *replay.Replayer
	up    *recorder
	auto  *Handler
	inter *Handler
	url   string
	// exposed is the handlers' shared read of the exposed procedures, as
	// serve shares one.
	exposed *Exposed
	// configure adjusts each handler's Config; optional.
	configure func(*Config, *embedded.Store)
}

func newEnv(t *testing.T, allowMutating bool) *env {
	t.Helper()
	return newEnvWith(t, allowMutating, nil)
}

// newEnvWith is newEnv with configure applied to both handlers' Config
// (given the env's store).
func newEnvWith(t *testing.T, allowMutating bool, configure func(*Config, *embedded.Store)) *env {
	t.Helper()
	dir := t.TempDir()
	st, err := embedded.Open(filepath.Join(dir, "procgraph.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc := procedures.NewService(st, procedures.Options{AllowMutatingAutorun: allowMutating})
	if _, err := svc.PutCatalogue(context.Background(), []procedures.Tool{
		{Name: "get_jobs", ReadOnly: true, ExternalAccess: true}, {Name: "fetch_logs", ReadOnly: true}, {Name: "kill_job"},
	}, "tester"); err != nil {
		t.Fatal(err)
	}
	up := &recorder{}
	rp := replay.New(svc, pool, up, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	var tf auth.TokensFile
	for name, scopes := range tokens {
		tf.Tokens = append(tf.Tokens, auth.TokenEntry{Name: name, SHA256: auth.HashToken("tok-" + name), Scopes: scopes})
	}
	authn := auth.NewAuthenticator(&tf)
	e := &env{t: t, st: st, dir: dir, svc: svc, rp: rp, up: up, configure: configure, exposed: NewExposed()}
	e.auto = e.handler(audit.PhaseAutomatic, authn)
	e.inter = e.handler(audit.PhaseInteractive, authn)
	mux := http.NewServeMux()
	mux.Handle("/mcp", e.auto)
	mux.Handle("/mcp/interactive", e.inter)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	e.url = ts.URL
	return e
}

func (e *env) handler(phase audit.Phase, authn *auth.Authenticator) *Handler {
	e.t.Helper()
	cfg := Config{Service: e.svc, Replayer: e.rp, Phase: phase, Auth: authn, Exposed: e.exposed}
	if e.configure != nil {
		e.configure(&cfg, e.st)
	}
	h, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// capture stores code as a succeeded procedure.
func (e *env) capture(code string) *procedures.Procedure {
	e.t.Helper()
	out, err := e.svc.Capture(context.Background(), procedures.CaptureRequest{Code: code, SessionID: "capture"})
	if err != nil {
		e.t.Fatalf("capture: %v\n%s", err, code)
	}
	return out.Procedure
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP client session to path as holder.
func (e *env) connect(path, holder string, opts *mcp.ClientOptions) *mcp.ClientSession {
	e.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: e.url + path, HTTPClient: &http.Client{Transport: bearer{"tok-" + holder}}}
	s, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		e.t.Fatalf("connect %s as %s: %v", path, holder, err)
	}
	e.t.Cleanup(func() { _ = s.Close() })
	return s
}

// call calls a tool and returns its result.
func call(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

// text is a result's first text content.
func text(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// The procedures the tests use.
const (
	readOnlyCode = `jobs = tools.get_jobs(task_id=task_id)
logs = tools.fetch_logs(task_id=task_id)
return {"jobs": jobs, "logs": logs}`
	stateChangingCode = `jobs = tools.get_jobs(task_id=task_id)
return tools.kill_job(task_id=task_id)`
	// escapeCode is opaque (never exposed); read-only by its static signature.
	escapeCode = `jobs = tools.fetch_logs(task_id=task_id)
t = tools
t.kill_job(task_id=task_id)
return jobs`
)
