package mcpdispatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/mcpdispatch/internal/mcptest"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/sandbox"
)

// codeOf is the sandbox code err carries, "" when none.
func codeOf(err error) sandbox.ErrorCode {
	if se, ok := errors.AsType[*sandbox.Error](err); ok {
		return se.Code
	}
	return ""
}

// waitRecorded waits until rec holds a call of tool (a stdio server's
// record is its file, written as the call arrives).
func waitRecorded(t *testing.T, rec *mcptest.Recorder, tool string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !slices.Contains(rec.Tools(), tool); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the upstream never recorded %s: %v", tool, rec.Tools())
		}
	}
}

// setCallTimeout changes d's call timeout for the calls made after it.
func (d *Dispatcher) setCallTimeout(timeout time.Duration) {
	d.mu.Lock()
	d.opts.CallTimeout = timeout
	d.mu.Unlock()
}

// TestCallClasses: each way an upstream call fails carries the sandbox
// code its failure class is named by, over both transports and through
// the Replayer: isError tool_failed, the server's JSON-RPC -32602
// invalid_arguments, the call's own timeout timeout, a server that cannot
// be reached or is lost mid-call upstream_unavailable.
func TestCallClasses(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			u := newUpstream(t, tr)
			d := u.dispatcher(t, Options{})
			w := newWorld(t, d)
			w.mustFail(`return tools.fail_job(task_id=1)`, nil, sandbox.ToolFailed)
			if v := w.mustSucceed(`return tools.strict(task_id=1)`, nil); v != "ok" {
				t.Fatalf("strict with its arguments: %v", v)
			}
			e := w.mustFail(`tools.pid()
return tools.strict()`, nil, sandbox.InvalidArguments)
			if e.Tool != "strict" || !strings.Contains(e.Message, "refused the arguments: strict: task_id is required") {
				t.Fatalf("a -32602 answer: %+v", e)
			}
			d.setCallTimeout(200 * time.Millisecond)
			// Long past the call's timeout, but short enough that the server
			// closes soon should the cancellation overtake the call under
			// load (the server then never sees the call cancelled).
			e = w.mustFail(`return tools.sleep(ms=10000)`, nil, sandbox.Timeout)
			if !strings.Contains(e.Message, "did not answer within 200ms") {
				t.Fatalf("a call's own timeout: %+v", e)
			}
			d.setCallTimeout(time.Minute)
			if tr == "stdio" {
				e = w.mustFail(`return tools.crash()`, nil, sandbox.UpstreamUnavailable)
				if !strings.Contains(e.Message, "broke during the call") {
					t.Fatalf("a server lost mid-call: %+v", e)
				}
			}
			_ = d.Close()
			w.mustFail(`return tools.greet(name="x")`, nil, sandbox.UpstreamUnavailable)
		})
	}
	down, err := NewHTTP(context.Background(), "http://127.0.0.1:1/mcp", Options{Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	for range 2 { // unreachable, then backing off
		if _, err := down.Dispatch(context.Background(), "greet", nil); codeOf(err) != sandbox.UpstreamUnavailable {
			t.Fatalf("an unreachable server: %v (code %q)", err, codeOf(err))
		}
	}
}

// TestGatewayKeepsTheClass: a server's error keeps its class through the
// Gateway, which names the server in its message.
func TestGatewayKeepsTheClass(t *testing.T) {
	u := newUpstream(t, "http")
	g := NewGateway(map[string]Caller{"jobs": u.dispatcher(t, Options{})}, nil)
	cat, err := procedures.NewCatalogue([]procedures.Tool{{Name: "jobs__strict", Server: "jobs", UpstreamName: "strict"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.DispatchWith(context.Background(), cat, "jobs__strict", nil)
	se, ok := errors.AsType[*sandbox.Error](err)
	if !ok || se.Code != sandbox.InvalidArguments || !strings.HasPrefix(se.Message, "server jobs: tool strict:") {
		t.Fatalf("through the gateway: %v (%+v)", err, se)
	}
}

// TestNoHeadOfLineBlocking: while one call of a server is slow, other
// calls of the same server answer, over both transports; the slow call,
// abandoned, is cancelled upstream (notifications/cancelled: the server's
// handler sees its context end).
func TestNoHeadOfLineBlocking(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			u := newUpstream(t, tr)
			d := u.dispatcher(t, Options{MaxConcurrency: 4, CallTimeout: time.Hour})
			ctx, cancel := context.WithCancel(context.Background())
			slow := make(chan error, 1)
			go func() {
				_, err := d.Dispatch(ctx, "sleep", map[string]any{"ms": 3600000})
				slow <- err
			}()
			defer func() {
				// However the test ends, the slow call ends upstream
				// before the server stops (it waits for its handlers).
				cancel()
				for deadline := time.Now().Add(time.Minute); !slices.Contains(u.rec.Tools(), "sleep:cancelled") && time.Now().Before(deadline); {
					time.Sleep(5 * time.Millisecond)
				}
			}()
			waitRecorded(t, u.rec, "sleep")
			// The slow call never ends by itself: a call queued behind it
			// would wait for ever; the guard makes that a failure.
			guard, stop := context.WithTimeout(context.Background(), 20*time.Second)
			defer stop()
			for i := range 3 {
				v, err := d.Dispatch(guard, "greet", map[string]any{"name": fmt.Sprint(i)})
				if err != nil || v != fmt.Sprintf("hello %d", i) {
					t.Fatalf("a call beside the slow one: %v, %v", v, err)
				}
			}
			select {
			case err := <-slow:
				t.Fatalf("the slow call ended before it was cancelled: %v", err)
			default:
			}
			cancel()
			if err := <-slow; !errors.Is(err, context.Canceled) {
				t.Fatalf("the cancelled call: %v", err)
			}
			waitRecorded(t, u.rec, "sleep:cancelled") // notifications/cancelled reached it
		})
	}
}

// TestTimeoutsFailNoOtherCall: three calls in a row that time out replace
// the session (a command is restarted), but a call in flight on the old
// session is not failed: the old session is closed once its last call
// ends. The next call is served by the new session.
func TestTimeoutsFailNoOtherCall(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			u := newUpstream(t, tr)
			d := u.dispatcher(t, Options{CallTimeout: time.Minute})
			before, err := d.Dispatch(context.Background(), "pid", nil)
			if err != nil {
				t.Fatal(err)
			}
			release := filepath.Join(t.TempDir(), "release")
			t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o600) }) // before the server stops
			inflight := make(chan error, 1)
			go func() {
				v, err := d.Dispatch(context.Background(), "wait", map[string]any{"path": release})
				if err == nil && v != "released" {
					err = fmt.Errorf("answered %v", v)
				}
				inflight <- err
			}()
			waitRecorded(t, u.rec, "wait")
			d.setCallTimeout(200 * time.Millisecond)
			for range maxTimeouts {
				if _, err := d.Dispatch(context.Background(), "sleep", map[string]any{"ms": 600000}); codeOf(err) != sandbox.Timeout {
					t.Fatalf("sleep: %v", err)
				}
			}
			d.setCallTimeout(time.Minute)
			after, err := d.Dispatch(context.Background(), "pid", nil)
			if err != nil {
				t.Fatalf("the next call: %v", err)
			}
			if tr == "stdio" && after == before {
				t.Fatalf("the hung session was not replaced: pid %v", after)
			}
			if err := os.WriteFile(release, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := <-inflight; err != nil {
				t.Fatalf("the call in flight when the session was replaced: %v", err)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes (a log).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// acceptingUpstream starts the test server over transport, refusing every
// protocol revision outside accept (mcptest.Accept).
func acceptingUpstream(t *testing.T, transport string, accept ...string) *upstream {
	t.Helper()
	if transport == "stdio" {
		t.Setenv("MCPTEST_PROTOCOLS", strings.Join(accept, ","))
		return newUpstream(t, "stdio")
	}
	rec := &mcptest.Recorder{}
	srv := mcptest.NewServer(rec, false)
	mcptest.Accept(srv, accept)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return &upstream{rec: rec, url: ts.URL}
}

// TestProtocolFallback: a server that refuses the revision offered is
// offered the older ones the SDK speaks, in turn; the one it accepted is
// logged and told by Protocol. A configured revision is offered first,
// and only older ones after it.
func TestProtocolFallback(t *testing.T) {
	all := mcp.SupportedProtocolVersions()
	oldest := all[len(all)-1]
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			u := acceptingUpstream(t, tr, oldest)
			var logs syncBuffer
			d := u.dispatcher(t, Options{Logger: zerolog.New(&logs), Server: "old"})
			if got := d.Protocol(); got != oldest {
				t.Fatalf("Protocol() = %q, want %q\n%s", got, oldest, logs.String())
			}
			if v, err := d.Dispatch(context.Background(), "greet", map[string]any{"name": "old"}); err != nil || v != "hello old" {
				t.Fatalf("a call on the fallen-back session: %v, %v", v, err)
			}
			if !strings.Contains(logs.String(), `"protocol_version":"`+oldest+`"`) || !strings.Contains(logs.String(), "refused the protocol revision") {
				t.Fatalf("the negotiation is not logged:\n%s", logs.String())
			}

			newer := acceptingUpstream(t, tr, all[0])
			_, err := Open(context.Background(), Source{URL: newer.url, Command: newer.argv, Options: Options{ProtocolVersion: all[1]}})
			if err == nil || !strings.Contains(err.Error(), "refused every protocol revision") {
				t.Fatalf("a revision newer than the one configured was offered: %v", err)
			}
		})
	}
	u := newUpstream(t, "http")
	d := u.dispatcher(t, Options{})
	s, err := d.Session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Protocol(); got == "" || got != s.InitializeResult().ProtocolVersion {
		t.Fatalf("Protocol() = %q, the session's %q", got, s.InitializeResult().ProtocolVersion)
	}
}
