package mcpdispatch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/mcpdispatch/internal/mcptest"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/sandbox/sandboxtest"
)

// pool is the sandbox shared by the tests: this test binary re-executed as
// a worker.
var pool *sandbox.Pool

func TestMain(m *testing.M) {
	code := sandboxtest.Main(m, sandbox.PoolConfig{Size: 1, MaxWorkers: 6}, &pool)
	if serverDir != "" {
		_ = os.RemoveAll(serverDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	serverBin string
	serverDir string
	buildErr  error
)

// stdioServer returns the path of testdata/mcpserver, built once per run.
func stdioServer(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		serverDir, buildErr = os.MkdirTemp("", "mcpserver")
		if buildErr != nil {
			return
		}
		serverBin = filepath.Join(serverDir, "mcpserver")
		out, err := exec.Command("go", "build", "-o", serverBin, "./testdata/mcpserver").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return serverBin
}

// upstream is a running test MCP server and its call log.
type upstream struct {
	rec     *mcptest.Recorder
	url     string   // streamable HTTP endpoint, for "http"
	argv    []string // command, for "stdio"
	restart func()   // "http": forget every session, as a restarted server would
}

// newUpstream starts the test server over transport "http" or "stdio".
func newUpstream(t testing.TB, transport string) *upstream {
	t.Helper()
	switch transport {
	case "http":
		rec := &mcptest.Recorder{}
		srv := mcptest.NewServer(rec, false)
		newHandler := func() http.Handler {
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		}
		var h atomic.Pointer[http.Handler]
		first := newHandler()
		h.Store(&first)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
		t.Cleanup(ts.Close)
		return &upstream{rec: rec, url: ts.URL, restart: func() { next := newHandler(); h.Store(&next) }}
	case "stdio":
		file := filepath.Join(t.TempDir(), "calls.jsonl")
		t.Setenv("MCPTEST_RECORD", file)
		return &upstream{rec: &mcptest.Recorder{File: file}, argv: []string{stdioServer(t)}}
	}
	t.Fatalf("unknown transport %q", transport)
	return nil
}

// dispatcher connects to u with opts.
func (u *upstream) dispatcher(t testing.TB, opts Options) *Dispatcher {
	t.Helper()
	d, err := Open(context.Background(), Source{URL: u.url, Command: u.argv, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

var transports = []string{"http", "stdio"}

// testTools is the catalogue the replay tests use.
var testTools = []procedures.Tool{
	{Name: "get_jobs", ReadOnly: true}, {Name: "fetch_logs", ReadOnly: true}, {Name: "greet", ReadOnly: true},
	{Name: "sleep", ReadOnly: true}, {Name: "pid", ReadOnly: true}, {Name: "strict", ReadOnly: true}, {Name: "wait", ReadOnly: true},
	{Name: "kill_job"}, {Name: "fail_job"}, {Name: "crash"},
}

// world is a real store, service and replayer whose tool calls go to d.
type world struct {
	t   *testing.T
	svc *procedures.Service
	rp  *replay.Replayer
}

func newWorld(t *testing.T, d replay.Dispatcher) *world {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "procgraph.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc := procedures.NewService(st, procedures.Options{AllowMutatingAutorun: true})
	if _, err := svc.PutCatalogue(context.Background(), testTools, "tester"); err != nil {
		t.Fatal(err)
	}
	rp := replay.New(svc, pool, d, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	return &world{t: t, svc: svc, rp: rp}
}

// run captures code and replays it with args in the interactive phase, as
// reviewed by an operator, so state-changing tools run too.
func (w *world) run(code string, args map[string]any) *replay.InvokeResult {
	w.t.Helper()
	ctx := context.Background()
	out, err := w.svc.Capture(ctx, procedures.CaptureRequest{Code: code, SessionID: "capture"})
	if err != nil {
		w.t.Fatalf("capture: %v\n%s", err, code)
	}
	res, err := w.rp.Invoke(ctx, replay.InvokeRequest{Name: out.Procedure.Name, Arguments: args,
		Phase: audit.PhaseInteractive, ReviewedBy: "tester", ReviewerHasGrantScope: true})
	if err != nil {
		w.t.Fatalf("invoke %s: %v", out.Procedure.Name, err)
	}
	return res
}

// mustSucceed runs code and requires success.
func (w *world) mustSucceed(code string, args map[string]any) any {
	w.t.Helper()
	res := w.run(code, args)
	if res.Status != replay.StatusSucceeded {
		w.t.Fatalf("status %s, error %+v", res.Status, res.Error)
	}
	return res.Result
}

// mustFail runs code and requires a failure with code.
func (w *world) mustFail(code string, args map[string]any, want sandbox.ErrorCode) *sandbox.Error {
	w.t.Helper()
	res := w.run(code, args)
	if res.Status != replay.StatusFailed || res.Error == nil || res.Error.Code != want {
		w.t.Fatalf("status %s, error %+v; want failed with %s", res.Status, res.Error, want)
	}
	return res.Error
}
