package mcpdispatch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/mcpdispatch/internal/mcptest"
)

// TestNoRetryAfterBreak: a call during which the session breaks fails and
// is never sent again (it may have run), over both transports; the next
// call runs on a fresh session.
func TestNoRetryAfterBreak(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		u := newUpstream(t, "stdio")
		d := u.dispatcher(t, Options{})
		// crash records the call, then the server process exits.
		if _, err := d.Dispatch(context.Background(), "crash", nil); err == nil {
			t.Fatal("a call that crashed the server succeeded")
		}
		if _, err := d.Dispatch(context.Background(), "greet", map[string]any{"name": "after"}); err != nil {
			t.Fatalf("the next call: %v", err)
		}
		if got := u.rec.Tools(); !slices.Equal(got, []string{"crash", "greet"}) {
			t.Fatalf("upstream saw %v, want [crash greet]: a broken call was sent again", got)
		}
	})
	t.Run("http", func(t *testing.T) {
		b := newBreakingUpstream(t, "crash")
		d, err := Open(context.Background(), Source{URL: b.url, Options: Options{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		_, err = d.Dispatch(context.Background(), "crash", nil)
		if err == nil || !strings.Contains(err.Error(), "broke during the call") {
			t.Fatalf("a call whose connection broke: %v", err)
		}
		if _, err := d.Dispatch(context.Background(), "greet", map[string]any{"name": "after"}); err != nil {
			t.Fatalf("the next call: %v", err)
		}
		if n := b.count(); n != 1 {
			t.Fatalf("the broken call reached the upstream %d times, want once", n)
		}
		if got := b.rec.Tools(); !slices.Equal(got, []string{"greet"}) {
			t.Fatalf("upstream ran %v", got)
		}
	})
}

// breakingUpstream is the test MCP server over streamable HTTP, except that
// a tools/call of tool is counted and answered by closing the connection,
// as a server that dies mid-call would.
type breakingUpstream struct {
	rec *mcptest.Recorder
	url string
	mu  sync.Mutex
	n   int
}

func newBreakingUpstream(t *testing.T, tool string) *breakingUpstream {
	t.Helper()
	b := &breakingUpstream{rec: &mcptest.Recorder{}}
	srv := mcptest.NewServer(b.rec, false)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	marker := []byte(`"name":"` + tool + `"`)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) && bytes.Contains(body, marker) {
			b.mu.Lock()
			b.n++
			b.mu.Unlock()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			_ = conn.Close()
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	b.url = ts.URL
	return b
}

func (b *breakingUpstream) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}
