package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/internal/cputime"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// BenchmarkInvoke compares one proc__ replay through MCP (client CallTool
// -> mcpserve -> Replayer) with the same invoke over the HTTP API (POST
// /v1/procedures/{name}/invoke), both on loopback, with the in-process
// sandbox, in-process tools and the embedded store (no fsync).
func BenchmarkInvoke(b *testing.B) {
	ctx := context.Background()
	st, err := embedded.Open(filepath.Join(b.TempDir(), "bench.db"), embedded.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := procedures.NewService(st, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "fetch_logs", ReadOnly: true}}, "tester"); err != nil {
		b.Fatal(err)
	}
	out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: readOnlyCode})
	if err != nil {
		b.Fatal(err)
	}
	name := out.Procedure.Name
	d := replay.NewFuncDispatcher(map[string]replay.ToolFunc{
		"get_jobs": func(context.Context, map[string]any) (any, error) {
			return map[string]any{"jobs": []any{"a", "b"}}, nil
		},
		"fetch_logs": func(context.Context, map[string]any) (any, error) { return "log line", nil },
	})
	rp := replay.New(svc, sandbox.NewInProcess(), d, replay.Options{})

	b.Run("mcp", func(b *testing.B) {
		h, err := New(Config{Service: svc, Replayer: rp, Phase: audit.PhaseAutomatic})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(h)
		defer ts.Close()
		s, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		params := &mcp.CallToolParams{Name: name, Arguments: map[string]any{"task_id": 42}}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			res, err := s.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
		}
	})

	b.Run("http", func(b *testing.B) {
		srv, err := api.New(api.Config{Service: svc, Replayer: rp})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		defer ts.Close()
		url := ts.URL + "/v1/procedures/" + name + "/invoke"
		body := []byte(`{"arguments": {"task_id": 42}, "phase": "automatic", "session_id": "bench"}`)
		client := &http.Client{}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			resp, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
	})
}

// BenchmarkTurn compares one run_code turn of two reads over /mcp (a
// ModernRevision tools/call posted as the InvokeCost bench posts it: one
// request, one JSON body back) with the same turn over the HTTP API (POST
// /v1/turns), both on loopback, with the in-process sandbox, in-process
// tools and the embedded store (no fsync): what /mcp's turn path costs
// beyond the HTTP one.
func BenchmarkTurn(b *testing.B) {
	st, err := embedded.Open(filepath.Join(b.TempDir(), "bench.db"), embedded.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := procedures.NewService(st, procedures.Options{})
	if _, err := svc.PutCatalogue(context.Background(), []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "fetch_logs", ReadOnly: true}}, "tester"); err != nil {
		b.Fatal(err)
	}
	d := replay.NewFuncDispatcher(map[string]replay.ToolFunc{
		"get_jobs": func(context.Context, map[string]any) (any, error) {
			return map[string]any{"jobs": []any{"a", "b"}}, nil
		},
		"fetch_logs": func(context.Context, map[string]any) (any, error) { return "log line", nil },
	})
	rp := replay.New(svc, sandbox.NewInProcess(), d, replay.Options{})
	g := gate.New(rp, st, gate.Options{})
	code, _ := json.Marshal(readOnlyCode)
	post := func(b *testing.B, client *http.Client, url, body string, header map[string]string) {
		resp, out := postRaw(b, client, url, body, header)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("succeeded")) || bytes.Contains(out, []byte(`"isError":true`)) {
			b.Fatalf("status %d: %s", resp.StatusCode, out)
		}
	}

	b.Run("mcp", func(b *testing.B) {
		h, err := New(Config{Service: svc, Replayer: rp, Phase: audit.PhaseAutomatic, Gate: g})
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close()
		ts := httptest.NewServer(h)
		defer ts.Close()
		body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"code":` + string(code) +
			`,"arguments":{"task_id":42},"session_id":"bench"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		header := map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "run_code", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": ModernRevision}
		client := &http.Client{}
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cputime.Process()
		for b.Loop() {
			post(b, client, ts.URL, body, header)
		}
		b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
	})

	b.Run("http", func(b *testing.B) {
		srv, err := api.New(api.Config{Service: svc, Replayer: rp, Turns: g})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		defer ts.Close()
		body := `{"code":` + string(code) + `,"arguments":{"task_id":42},"phase":"automatic","session_id":"bench"}`
		client := &http.Client{}
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cputime.Process()
		for b.Loop() {
			post(b, client, ts.URL+"/v1/turns", body, nil)
		}
		b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
	})
}

// BenchmarkPing is a stateful session's ping (2025-11-25, answered as one
// JSON body: serveJSONAnswer) posted raw to the handler on loopback, and
// for comparison a 2026-07-28 server/discover: what the server spends on
// the request an SDK client sends to ping.
func BenchmarkPing(b *testing.B) {
	st, err := embedded.Open(filepath.Join(b.TempDir(), "bench.db"), embedded.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := procedures.NewService(st, procedures.Options{})
	rp := replay.New(svc, sandbox.NewInProcess(), replay.NewFuncDispatcher(nil), replay.Options{})
	h, err := New(Config{Service: svc, Replayer: rp, Phase: audit.PhaseAutomatic})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	ts := httptest.NewServer(h)
	defer ts.Close()
	client := &http.Client{}
	post := func(b *testing.B, header map[string]string, body string) (*http.Response, []byte) {
		h := map[string]string{"Accept": "application/json, text/event-stream"}
		maps.Copy(h, header)
		return postRaw(b, client, ts.URL, body, h)
	}
	resp, out := post(b, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		b.Fatalf("initialize: %d %s", resp.StatusCode, out)
	}
	session := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	post(b, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, c := range []struct {
		name, body, want string
		header           map[string]string
	}{
		{"session-ping", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, `{"jsonrpc":"2.0","id":7,"result":{}}`, session},
		{"discover", `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			`"id":3,"result"`, map[string]string{"Mcp-Method": "server/discover", "Mcp-Protocol-Version": ModernRevision}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cputime.Process()
			for b.Loop() {
				resp, out := post(b, c.header, c.body)
				if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(c.want)) {
					b.Fatalf("%d %s", resp.StatusCode, out)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// postRaw posts body to url as JSON with header, and returns the answer
// and its body, read whole.
func postRaw(b *testing.B, client *http.Client, url, body string, header map[string]string) (*http.Response, []byte) {
	b.Helper()
	r, _ := http.NewRequest("POST", url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	resp, err := client.Do(r)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp, out
}
