package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/sandbox"
)

// runMainEnv makes the test binary run main() itself: the SIGTERM test
// starts `serve` as a real subprocess this way.
const runMainEnv = "PROCGRAPH_TEST_RUN_MAIN"

var soak = flag.Bool("soak", false, "run the long soak and load tests")

// neo4jEnv is the NEO4J_* environment the tests started with (TestMain
// removes it from the process's): a test that needs a Neo4j server passes
// it through withEnv (runMainWith).
var neo4jEnv = map[string]string{}

// TestMain makes the test binary a sandbox worker when a Pool re-executes
// it, and procgraph itself when a test starts it as a subprocess.
func TestMain(m *testing.M) {
	if sandbox.IsWorker() {
		os.Exit(sandbox.RunWorker())
	}
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	neo4jOwn = os.Getenv(neo4jOwnEnv) == "1"
	// These tests run the embedded store they configure: a NEO4J_URI or
	// PROCGRAPH_* setting in the environment (CI exports NEO4J_URI for the
	// store tests) must not switch them to another backend.
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "NEO4J_") {
			neo4jEnv[name] = value // for the tests that ask for Neo4j by name
		}
		if strings.HasPrefix(name, "NEO4J_") || strings.HasPrefix(name, "PROCGRAPH_") {
			os.Unsetenv(name)
		}
	}
	// serve registers its operator credential in the user's config
	// directory (registerCredential) and client commands look there: the
	// tests' servers and CLI use a directory of their own.
	config, err := os.MkdirTemp("", "procgraph-config-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", config)
	code := m.Run()
	if storeDump != "" {
		os.RemoveAll(filepath.Dir(storeDump)) // mustStoreDump's
	}
	os.RemoveAll(config)
	os.Exit(code)
}

// catalogueFile is the shared catalogue (a copy lives in examples/).
func catalogueFile(tb testing.TB) string {
	tb.Helper()
	if _, err := os.Stat(catalogueAbs); err != nil {
		tb.Fatalf("the shared catalogue is missing: %v", err)
	}
	return catalogueAbs
}

// fileWriter returns a function that writes a file named name with
// content in dir and returns its path.
func fileWriter(tb testing.TB, dir string) func(name, content string) string {
	return func(name, content string) string {
		tb.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			tb.Fatal(err)
		}
		return p
	}
}

// catalogueAbs is examples/catalogue.json, resolved before any test changes
// directory.
var catalogueAbs = func() string {
	abs, _ := filepath.Abs("../../examples/catalogue.json")
	return abs
}()

// ---- the recording upstream -------------------------------------------------

// upCall is one call the upstream saw.
type upCall struct {
	Tool string
	Args map[string]any
}

// upstream is a recording tool server implementing the upstream-http
// contract. It answers {"result": {"tool", "args"}} unless told to fail or
// to block a tool.
type upstream struct {
	*httptest.Server
	mu    sync.Mutex
	calls []upCall
	fail  map[string]string
	delay map[string]time.Duration
	// failTask, when set, fails every call whose task_id is it: the
	// arguments a caller chose, not the tool, make it fail.
	failTask json.Number
}

func mustUpstream(tb testing.TB) *upstream {
	tb.Helper()
	u := &upstream{fail: map[string]string{}, delay: map[string]time.Duration{}}
	u.Server = httptest.NewServer(http.HandlerFunc(u.handle))
	tb.Cleanup(u.Close)
	return u
}

func (u *upstream) handle(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	u.calls = append(u.calls, upCall{req.Tool, req.Arguments})
	msg, fail := u.fail[req.Tool]
	if id, ok := req.Arguments["task_id"]; ok && u.failTask != "" && fmt.Sprint(id) == u.failTask.String() {
		msg, fail = "no such task", true
	}
	d := u.delay[req.Tool]
	u.mu.Unlock()
	if d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if fail {
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg}})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"result": map[string]any{"tool": req.Tool, "args": req.Arguments,
		"tasks": []any{map[string]any{"task_id": 101}}}})
}

// tools returns the tool names called so far, in order.
func (u *upstream) tools() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := []string{}
	for _, c := range u.calls {
		out = append(out, c.Tool)
	}
	return out
}

func (u *upstream) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls = nil
}

func (u *upstream) setDelay(tool string, d time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.delay[tool] = d
}

// mustReach waits until a call of tool has reached the upstream (a slow
// call in flight); it fails after 10 s.
func (u *upstream) mustReach(tb testing.TB, tool string) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(u.tools(), tool) {
		if time.Now().After(deadline) {
			tb.Fatalf("the call of %s never reached the upstream: %v", tool, u.tools())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// mustSeeNothing fails when any call reached the upstream since the last reset.
func (u *upstream) mustSeeNothing(tb testing.TB, what string) {
	tb.Helper()
	if got := u.tools(); len(got) != 0 {
		tb.Fatalf("%s: the upstream saw %v, want nothing", what, got)
	}
}

// ---- a live procgraph server run by Main ------------------------------------

// logSink collects a server's log lines.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// server is a procgraph serve: the real Main, configured from serve's
// arguments as `procgraph serve` is.
type server struct {
	*Main
	URL  string
	Data string
	args []string
	logs *logSink
	// terminal is what serve told the person at the terminal (Main.Terminal).
	terminal *logSink
	token    string // default bearer token for requests
	// stopping ends the requests send has in flight when Stop begins (a
	// long poll a failed test left held would hold the drain for its
	// whole grace); nil for a server of another process.
	stopping context.Context
	stop     context.CancelFunc
}

// serverOpts configures mustServe. Zero values give: a fresh data file, the
// shared catalogue, upstream (when set), --auth off (no tokens), one
// sandbox worker.
type serverOpts struct {
	Data       string
	Upstream   *upstream
	TokensFile string
	// DefaultAuth serves with auth as serve's default has it (tokens, the
	// file next to the data file) instead of --auth off without TokensFile.
	DefaultAuth   bool
	AllowMutating bool
	NoCatalogue   bool
	Extra         []string
}

func (o serverOpts) args(tb testing.TB) []string {
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", o.Data, "--sandbox-workers", "1"}
	if !o.NoCatalogue {
		args = append(args, "--tools", catalogueFile(tb))
	}
	if o.Upstream != nil {
		args = append(args, "--upstream-http", o.Upstream.URL)
	}
	switch {
	case o.TokensFile != "":
		args = append(args, "--tokens-file", o.TokensFile)
	case !o.DefaultAuth:
		args = append(args, "--auth", "off")
	}
	if o.AllowMutating {
		args = append(args, "--allow-mutating-autorun", "true")
	}
	return overriding(args, o.Extra)
}

// overriding is args (a command, then "--flag value" pairs) without the
// pairs whose flag extra gives, then extra: a test's own value replaces a
// default, since a flag given twice is refused.
func overriding(args, extra []string) []string {
	given := map[string]bool{}
	for _, a := range extra {
		if strings.HasPrefix(a, "--") {
			given[a] = true
		}
	}
	out := []string{}
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "--") && given[args[i]] {
			i++ // and its value
			continue
		}
		out = append(out, args[i])
	}
	return append(out, extra...)
}

// startMain opens a Main configured from args ("serve" and its flags; the
// environment twins apply) and returns it serving; Close runs at cleanup.
func startMain(tb testing.TB, args []string) (*server, error) {
	tb.Helper()
	return startMainWith(tb, args, nil)
}

// startMainWith is startMain with edit applied to the parsed
// configuration (its unexported seams) before Main opens; nil edits
// nothing.
func startMainWith(tb testing.TB, args []string, edit func(*serveConfig)) (*server, error) {
	tb.Helper()
	if len(args) == 0 || args[0] != "serve" {
		tb.Fatalf("startMain needs serve's arguments, got %q", args)
	}
	cfg, err := parseServeConfig(args[1:])
	if err != nil {
		return nil, err
	}
	if edit != nil {
		edit(cfg)
	}
	logs, terminal := &logSink{}, &logSink{}
	m := NewMain(cfg, newLogger(logs, cfg.LogLevel))
	m.Terminal = terminal
	if err := m.Open(context.Background()); err != nil {
		return nil, fmt.Errorf("open: %v\n%s", err, logs.String())
	}
	s := &server{Main: m, URL: m.URL(), args: args, logs: logs, terminal: terminal}
	s.stopping, s.stop = context.WithCancel(context.Background())
	tb.Cleanup(func() { s.Stop(tb) })
	return s, nil
}

// mustServe starts a server for opts (a fresh data file unless set).
func mustServe(tb testing.TB, o serverOpts) *server {
	tb.Helper()
	if o.Data == "" {
		o.Data = filepath.Join(tb.TempDir(), "p.db")
	}
	s, err := startMain(tb, o.args(tb))
	if err != nil {
		tb.Fatal(err)
	}
	s.Data = o.Data
	return s
}

// Stop ends the requests send has in flight, closes Main and requires it
// to close cleanly.
func (s *server) Stop(tb testing.TB) {
	tb.Helper()
	if s.stop != nil {
		s.stop()
	}
	if err := s.Close(); err != nil {
		tb.Errorf("Close: %v\n%s", err, s.logs.String())
	}
}

// ---- HTTP helpers -----------------------------------------------------------

// reply is one HTTP answer.
type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body as an object (numbers as float64).
func (r reply) JSON(tb testing.TB) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		tb.Fatalf("answer %d is not a JSON object: %v\n%s", r.Status, err, r.Body)
	}
	return m
}

// Into decodes the body into v.
func (r reply) Into(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		tb.Fatalf("answer %d does not decode into %T: %v\n%s", r.Status, v, err, r.Body)
	}
}

var httpClient = &http.Client{Timeout: 60 * time.Second}

// req is one request; Body is JSON-encoded unless it is a string or []byte.
type req struct {
	Method, Path string
	Body         any
	Token        *string // nil: the server's default token
	Header       map[string]string
}

func (s *server) send(tb testing.TB, q req) reply {
	tb.Helper()
	var rd io.Reader
	switch b := q.Body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	ctx := context.Background()
	if s.stopping != nil {
		ctx = s.stopping
	}
	r, err := http.NewRequestWithContext(ctx, q.Method, s.URL+q.Path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if rd != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	tok := s.token
	if q.Token != nil {
		tok = *q.Token
	}
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range q.Header {
		switch {
		case k == "Host":
			r.Host = v
		case v == "":
			r.Header.Del(k)
		default:
			r.Header.Set(k, v)
		}
	}
	resp, err := httpClient.Do(r)
	if err != nil && ctx.Err() != nil {
		return reply{} // ended by Stop: no answer
	}
	if err != nil {
		tb.Fatalf("%s %s: %v", q.Method, q.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil && ctx.Err() != nil {
		return reply{} // ended by Stop: no answer
	}
	if err != nil {
		tb.Fatalf("%s %s: reading the answer: %v", q.Method, q.Path, err)
	}
	return reply{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

func (s *server) get(tb testing.TB, path string) reply {
	tb.Helper()
	return s.send(tb, req{Method: "GET", Path: path})
}

func (s *server) post(tb testing.TB, path string, body any) reply {
	tb.Helper()
	return s.send(tb, req{Method: "POST", Path: path, Body: body})
}

// mustStatus requires status and returns the decoded body.
func mustStatus(tb testing.TB, r reply, status int) map[string]any {
	tb.Helper()
	if r.Status != status {
		tb.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r.JSON(tb)
}

// mustError requires the contract's error shape with status and code and
// returns details.
func mustError(tb testing.TB, r reply, status int, code string) map[string]any {
	tb.Helper()
	if r.Status != status {
		tb.Fatalf("status %d, want %d (%s): %s", r.Status, status, code, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		tb.Fatalf("error answer has Content-Type %q", ct)
	}
	var body map[string]map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil || len(body) != 1 || body["error"] == nil {
		tb.Fatalf("error body is not {\"error\": {...}}: %s", r.Body)
	}
	e := body["error"]
	if len(e) != 3 {
		tb.Fatalf("error object has keys other than code, message, details: %s", r.Body)
	}
	if e["code"] != code {
		tb.Fatalf("error code %v, want %s: %s", e["code"], code, r.Body)
	}
	if msg, ok := e["message"].(string); !ok || msg == "" {
		tb.Fatalf("error message missing: %s", r.Body)
	}
	details, ok := e["details"].(map[string]any)
	if !ok {
		tb.Fatalf("error details is not an object: %s", r.Body)
	}
	return details
}

// capture posts a capture body and requires 200 or 201.
func (s *server) mustCapture(tb testing.TB, body map[string]any, header map[string]string) map[string]any {
	tb.Helper()
	r := s.send(tb, req{Method: "POST", Path: "/v1/procedures", Body: body, Header: header})
	if r.Status != 200 && r.Status != 201 {
		tb.Fatalf("capture: status %d: %s", r.Status, r.Body)
	}
	return r.JSON(tb)
}

// mustProc returns the captured procedure's name.
func mustCaptureName(tb testing.TB, s *server, code, session string) string {
	tb.Helper()
	out := s.mustCapture(tb, map[string]any{"code": code, "session_id": session}, nil)
	return out["procedure"].(map[string]any)["name"].(string)
}

func (s *server) invoke(tb testing.TB, name string, body map[string]any) reply {
	tb.Helper()
	return s.post(tb, "/v1/procedures/"+name+"/invoke", body)
}

// decisions returns /v1/decisions?query.
func (s *server) decisions(tb testing.TB, query string) []map[string]any {
	tb.Helper()
	var out struct {
		Decisions []map[string]any `json:"decisions"`
	}
	r := s.get(tb, "/v1/decisions?"+query)
	mustStatus(tb, r, 200)
	r.Into(tb, &out)
	return out.Decisions
}

func (s *server) mustHealthy(tb testing.TB) {
	tb.Helper()
	r := s.send(tb, req{Method: "GET", Path: "/healthz"})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"ok"`) {
		tb.Fatalf("/healthz: %d %s", r.Status, r.Body)
	}
}

// The procedures the end-to-end tests capture (catalogue tools).
const (
	// readOnlyCode composes two read-only tools; parameter task_id.
	readOnlyCode = "a = tools.get_task_jobs_summary(task_id=task_id)\nb = tools.get_retry_chain(task_id=task_id)\nreturn {\"a\": a, \"b\": b}"
	readOnlyName = "proc__get_retry_chain__get_task_jobs_summary"
	// killCode changes state through kill_job.
	killCode = "s = tools.get_task_jobs_summary(task_id=task_id)\nreturn tools.kill_job(panda_id=task_id)"
	killName = "proc__get_task_jobs_summary__kill_job"
)

func ptr[T any](v T) *T { return &v }

func procOf(tb testing.TB, m map[string]any) map[string]any {
	tb.Helper()
	p, ok := m["procedure"].(map[string]any)
	if !ok {
		tb.Fatalf("no procedure in %v", m)
	}
	return p
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

var _ = errors.New
var _ = runtime.GOOS

func timeAfter(seconds int) <-chan time.Time { return time.After(time.Duration(seconds) * time.Second) }
