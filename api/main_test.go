package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/tokens"
)

// TestMain makes the test binary a sandbox worker when a Pool starts it.
func TestMain(m *testing.M) {
	sandbox.ExitIfWorker()
	os.Exit(m.Run())
}

// testTools is the catalogue of the package's tests and benchmarks.
var testTools = []procedures.Tool{
	{Name: "get_jobs", ReadOnly: true, ExternalAccess: true},
	{Name: "fetch_logs", ReadOnly: true},
	{Name: "kill_job"},
}

const readOnlyCode = "jobs = tools.get_jobs(task_id=task_id)\nlogs = tools.fetch_logs(task_id=task_id)\nreturn {\"jobs\": jobs, \"logs\": logs}"

// env is a Server over a real embedded store, with a dispatcher that
// answers every call.
type env struct {
	store *embedded.Store
	svc   *procedures.Service
	rp    *replay.Replayer
	gate  *gate.Gate
	srv   *Server
	http  *httptest.Server
}

type envOpts struct {
	runner           sandbox.Runner
	auth             *auth.Authenticator
	allowMutating    bool // --allow-mutating-autorun
	maxChangeStreams int  // Config.MaxChangeStreams
	upstreams        Upstreams
}

// mustEnv builds an env; the runner defaults to in-process.
func mustEnv(tb testing.TB, o envOpts) *env {
	tb.Helper()
	st, err := embedded.Open(filepath.Join(tb.TempDir(), "p.db"), embedded.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	svc := procedures.NewService(st, procedures.Options{AllowMutatingAutorun: o.allowMutating})
	if _, err := svc.PutCatalogue(context.Background(), testTools, "tester"); err != nil {
		tb.Fatal(err)
	}
	if o.runner == nil {
		o.runner = sandbox.NewInProcess()
	}
	disp := replay.DispatcherFunc(func(ctx context.Context, tool string, args map[string]any) (any, error) {
		return map[string]any{"tool": tool, "n": 1}, nil
	})
	rp := replay.New(svc, o.runner, disp, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	tg := gate.New(rp, st, gate.Options{})
	srv, err := New(Config{Service: svc, Replayer: rp, Turns: tg, Dumps: st, Auth: o.auth,
		Tokens: tokens.NewManager(st, procedures.NewRecorder(st, procedures.RecorderOptions{})), MaxChangeStreams: o.maxChangeStreams, Upstreams: o.upstreams})
	if err != nil {
		tb.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	tb.Cleanup(hs.Close)
	return &env{store: st, svc: svc, rp: rp, gate: tg, srv: srv, http: hs}
}

// do sends one request with a JSON body (nil: none) and returns status and body.
func (e *env) do(tb testing.TB, c *http.Client, method, path string, body any) (int, []byte) {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	r, _ := http.NewRequest(method, e.http.URL+path, rd)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(r)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// A stream does not end: its opening block is the answer.
		return resp.StatusCode, readEvent(tb, bufio.NewReader(resp.Body))
	}
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}
