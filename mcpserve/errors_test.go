package mcpserve

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// leakMarker is in the failure's own text (bbolt's JSON error names the
// stored bytes): what must never reach a caller.
const leakMarker = "procgraph-secret-path"

// mustCorruptStore returns a store whose catalogue record is not JSON, and
// the name of a captured procedure: every read of the catalogue then fails
// with an internal error whose text names the store and the bytes.
func mustCorruptStore(t *testing.T) (*embedded.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.db")
	st, err := embedded.Open(path, embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	svc := procedures.NewService(st, procedures.Options{})
	if _, err := svc.PutCatalogue(t.Context(), []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "fetch_logs", ReadOnly: true}}, "tester"); err != nil {
		t.Fatal(err)
	}
	out, err := svc.Capture(t.Context(), procedures.CaptureRequest{Code: readOnlyCode, SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("catalogue")).Put([]byte("current"), []byte(`{"tools": `+leakMarker))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = embedded.Open(path, embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st, out.Procedure.Name
}

// TestInternalErrorsStayInside: a store failure is answered over MCP (tool
// errors) and over HTTP (the API's error body) alike as "internal error",
// with no trace of the failure's own text, through one translation.
func TestInternalErrorsStayInside(t *testing.T) {
	st, name := mustCorruptStore(t)
	svc := procedures.NewService(st, procedures.Options{})
	// The failure's own text names the stored bytes: the test proves something.
	if _, _, err := svc.Find(t.Context(), procedures.FindRequest{}); fault.ErrorCode(err) != fault.CodeInternal || !strings.Contains(err.Error(), "embedded store") {
		t.Fatalf("the corrupt store answers %v, want an internal error naming the store", err)
	}
	rp := replay.New(svc, pool, &recorder{}, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	// A token with grant: without auth set_procedure_auto_run is not offered.
	authn := auth.NewAuthenticator(&auth.TokensFile{Tokens: []auth.TokenEntry{{Name: "operator", SHA256: auth.HashToken("tok-operator"), Scopes: []string{"read", "grant"}}}})
	h, err := New(Config{Service: svc, Replayer: rp, Phase: audit.PhaseInteractive, Auth: authn})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(api.Config{Service: svc, Replayer: rp})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/", srv)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)

	leaks := func(s string) bool {
		return strings.Contains(s, leakMarker) || strings.Contains(s, "embedded store") || strings.Contains(s, "corrupt")
	}
	t.Run("mcp", func(t *testing.T) {
		c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v1"}, nil)
		s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"tok-operator"}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{FindToolName, map[string]any{}},
			{AutoRunToolName, map[string]any{"name": name, "enabled": true}},
		} {
			res := call(t, s, tc.tool, tc.args)
			b, _ := json.Marshal(res)
			if !res.IsError || text(res) != "internal: internal error" || leaks(string(b)) {
				t.Errorf("%s answered %s; want the generic internal error", tc.tool, b)
			}
			var body struct {
				Error struct {
					Code, Message string
					Details       map[string]any
				}
			}
			sc, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(sc, &body); err != nil || body.Error.Code != "internal" || body.Error.Message != "internal error" || len(body.Error.Details) != 0 {
				t.Errorf("%s: structured content %s, want the generic internal error body", tc.tool, sc)
			}
		}
	})
	t.Run("http", func(t *testing.T) {
		for _, path := range []string{"/v1/procedures", "/v1/tools", "/v1/procedures/" + name} {
			resp, err := http.Get(ts.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := `{"error":{"code":"internal","message":"internal error","details":{}}}`
			if resp.StatusCode != 500 || strings.TrimSpace(string(b)) != want || leaks(string(b)) {
				t.Errorf("GET %s: %d %s; want 500 %s", path, resp.StatusCode, b, want)
			}
		}
	})
}
