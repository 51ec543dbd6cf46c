package mcpdispatch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// countingTransport counts the response bytes read through it.
type countingTransport struct{ n *atomic.Int64 }

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = countingBody{resp.Body, t.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// TestHTTPResponseBounded: an upstream answering a call with 8 MiB fails
// the call, and procgraph reads no more of the answer than its bound
// (twice MaxResultBytes plus 1 MiB), instead of all of it before checking
// the result's size; the next call works.
func TestHTTPResponseBounded(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "v1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "big", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 8<<20)}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "small", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok": true}`}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	var read atomic.Int64
	const maxResult = 256 << 10
	d, err := NewHTTP(context.Background(), ts.URL, Options{MaxResultBytes: maxResult, HTTPClient: &http.Client{Transport: countingTransport{&read}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	before := read.Load()
	if _, err := d.Dispatch(context.Background(), "big", map[string]any{}); err == nil {
		t.Fatal("an 8 MiB answer was accepted")
	}
	if got := read.Load() - before; got > responseLimit(maxResult)+64<<10 {
		t.Fatalf("read %d bytes of an 8 MiB answer, bound %d", got, responseLimit(maxResult))
	}
	res, err := d.Dispatch(context.Background(), "small", map[string]any{})
	if err != nil {
		t.Fatalf("the next call: %v", err)
	}
	if m, ok := res.(map[string]any); !ok || m["ok"] != true {
		t.Fatalf("the next call: %#v", res)
	}
}

// scriptedBody answers each Read with the next step of its script, then
// io.EOF.
type scriptedBody struct {
	steps []scriptStep
}

type scriptStep struct {
	data string
	err  error
}

func (b *scriptedBody) Read(p []byte) (int, error) {
	if len(b.steps) == 0 {
		return 0, io.EOF
	}
	s := b.steps[0]
	n := copy(p, s.data)
	if n < len(s.data) {
		b.steps[0].data = s.data[n:]
		return n, nil
	}
	b.steps = b.steps[1:]
	return n, s.err
}

func (b *scriptedBody) Close() error { return nil }

// TestLimitedBodyProbe: at the bound, limitedBody probes one byte; whatever
// that probe answers, no byte past the bound reaches the reader, and the
// probe's own error is the one returned.
func TestLimitedBodyProbe(t *testing.T) {
	errBoom := errors.New("connection reset")
	tests := []struct {
		name    string
		steps   []scriptStep
		want    string
		wantErr func(error) bool
	}{
		{
			name:    "exactly max then EOF",
			steps:   []scriptStep{{data: "abcd"}},
			want:    "abcd",
			wantErr: func(err error) bool { return err == nil },
		},
		{
			name:    "probe error then more data",
			steps:   []scriptStep{{data: "abcd"}, {err: errBoom}, {data: "zzzzzzzz"}},
			want:    "abcd",
			wantErr: func(err error) bool { return errors.Is(err, errBoom) },
		},
		{
			name:    "probe reads nothing then more data",
			steps:   []scriptStep{{data: "abcd"}, {}, {data: "zzzzzzzz"}},
			want:    "abcd",
			wantErr: func(err error) bool { return err != nil && strings.Contains(err.Error(), "larger than 4 bytes") },
		},
		{
			name:    "one byte past max",
			steps:   []scriptStep{{data: "abcde"}},
			want:    "abcd",
			wantErr: func(err error) bool { return err != nil && strings.Contains(err.Error(), "larger than 4 bytes") },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &limitedBody{rc: &scriptedBody{steps: tc.steps}, left: 4, max: 4}
			got, err := io.ReadAll(b)
			if string(got) != tc.want {
				t.Errorf("read %q, want %q", got, tc.want)
			}
			if !tc.wantErr(err) {
				t.Errorf("error %v", err)
			}
		})
	}
}
