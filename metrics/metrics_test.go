package metrics

import (
	"io"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
)

// sampleLine is one sample of the Prometheus text format (label values
// escape only backslash, double quote and newline).
var sampleLine = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*")*\})? [-+]?([0-9.eE+-]+|Inf|NaN)$`)

// scrape serves r's metrics in the text format and returns the text and
// each family's TYPE.
func scrape(t *testing.T, r *Registry) (string, map[string]string) {
	t.Helper()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("scrape: %d %v", rec.Code, rec.Header())
	}
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	types := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(line)
			if _, dup := types[f[2]]; dup {
				t.Errorf("TYPE of %s twice", f[2])
			}
			types[f[2]] = f[3]
		case strings.HasPrefix(line, "# HELP "):
		default:
			if !sampleLine.MatchString(line) {
				t.Errorf("not a Prometheus sample line: %q", line)
			}
		}
	}
	return text, types
}

func TestTextFormat(t *testing.T) {
	m := New()
	for _, d := range []time.Duration{100 * time.Microsecond, 3 * time.Millisecond, 2 * time.Second, time.Minute} {
		m.ObserveRequest("/v1/procedures", "GET", 200, d)
	}
	m.ObserveRequest("/v1/x", "GET", 404, time.Millisecond)
	odd := "quote\" back\\slash\nnewline\ttab é \xff"
	m.CountDecision(audit.Decision{Kind: audit.KindInvoke, Outcome: audit.Denied, Reason: odd})
	m.CountReplay("failed", "tool_failed")
	m.CountReplay("failed", "tool_failed")
	if err := m.AddPools(func() []PoolStats {
		return []PoolStats{{Pool: "a", Idle: 3, Started: 5, Killed: 1}, {Pool: "b", Busy: 4, Live: 4, Crashed: 2}}
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.AddAdmission(func() AdmissionStats {
		return AdmissionStats{Running: 2, Waiting: 1, Admitted: 9, Refused: map[string]int64{"queue": 3, "deadline": 0, "key": 1}}
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.AddBudget(func() BudgetStats { return BudgetStats{InUse: 4096, Refused: 2} }); err != nil {
		t.Fatal(err)
	}
	if err := m.AddSessions(func() SessionStats {
		return SessionStats{Open: 5, Refused: map[string]int64{"per_token": 0, "total": 7}}
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.AddSearchIndex(func() SearchIndexStats { return SearchIndexStats{Pending: 3, Failed: true} }); err != nil {
		t.Fatal(err)
	}
	text, types := scrape(t, m)
	for _, want := range []string{
		`procgraph_decisions_total{kind="invoke",outcome="denied",reason="quote\" back\\slash\nnewline` + "\ttab é \uFFFD" + `"} 1`,
		`procgraph_http_requests_total{method="GET",route="/v1/procedures",status="200"} 4`,
		`procgraph_http_requests_total{method="GET",route="/v1/x",status="404"} 1`,
		`procgraph_http_request_duration_seconds_bucket{route="/v1/procedures",le="0.0005"} 1`,
		`procgraph_http_request_duration_seconds_bucket{route="/v1/procedures",le="0.005"} 2`,
		`procgraph_http_request_duration_seconds_bucket{route="/v1/procedures",le="30"} 3`,
		`procgraph_http_request_duration_seconds_bucket{route="/v1/procedures",le="+Inf"} 4`,
		`procgraph_http_request_duration_seconds_count{route="/v1/procedures"} 4`,
		`procgraph_replays_total{error="tool_failed",status="failed"} 2`,
		`procgraph_sandbox_workers_idle{pool="a"} 3`,
		`procgraph_sandbox_workers_busy{pool="b"} 4`,
		`procgraph_sandbox_workers_live{pool="b"} 4`,
		`procgraph_sandbox_workers_started{pool="a"} 5`,
		`procgraph_sandbox_workers_crashed{pool="b"} 2`,
		`procgraph_sandbox_workers_killed{pool="a"} 1`,
		"\nprocgraph_replays_running 2\n",
		"\nprocgraph_replays_waiting 1\n",
		"\nprocgraph_replays_admitted_total 9\n",
		`procgraph_replays_busy_total{limit="queue"} 3`,
		`procgraph_replays_busy_total{limit="deadline"} 0`,
		`procgraph_replays_busy_total{limit="key"} 1`,
		"\nprocgraph_tool_call_bytes_in_flight 4096\n",
		"\nprocgraph_tool_call_budget_refusals_total 2\n",
		"\nprocgraph_mcp_sessions 5\n",
		`procgraph_mcp_sessions_refused_total{limit="per_token"} 0`,
		`procgraph_mcp_sessions_refused_total{limit="total"} 7`,
		"\nprocgraph_search_index_pending 3\n",
		"\nprocgraph_search_index_failed 1\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q:\n%s", want, text)
		}
	}
	// Every name procgraph exported before client_golang, with its type:
	// dashboards and alerts depend on them. Started and crashed are
	// counters now (they only grow), as they always should have been.
	for name, typ := range map[string]string{
		"procgraph_http_requests_total":             "counter",
		"procgraph_http_request_duration_seconds":   "histogram",
		"procgraph_decisions_total":                 "counter",
		"procgraph_replays_total":                   "counter",
		"procgraph_sandbox_workers_idle":            "gauge",
		"procgraph_sandbox_workers_busy":            "gauge",
		"procgraph_sandbox_workers_started":         "counter",
		"procgraph_sandbox_workers_crashed":         "counter",
		"procgraph_sandbox_workers_live":            "gauge",
		"procgraph_sandbox_workers_killed":          "counter",
		"procgraph_replays_running":                 "gauge",
		"procgraph_replays_waiting":                 "gauge",
		"procgraph_replays_admitted_total":          "counter",
		"procgraph_replays_busy_total":              "counter",
		"procgraph_tool_call_bytes_in_flight":       "gauge",
		"procgraph_tool_call_budget_refusals_total": "counter",
		"procgraph_mcp_sessions":                    "gauge",
		"procgraph_mcp_sessions_refused_total":      "counter",
		"procgraph_search_index_pending":            "gauge",
		"procgraph_search_index_failed":             "gauge",
		// The runtime and process collectors.
		"go_goroutines":                 "gauge",
		"go_memstats_heap_alloc_bytes":  "gauge",
		"process_resident_memory_bytes": "gauge",
		"process_cpu_seconds_total":     "counter",
	} {
		if types[name] != typ {
			t.Errorf("TYPE of %s is %q, want %s", name, types[name], typ)
		}
	}
}

// TestOneSnapshotPerScrape: each source's stats are read once per scrape,
// however many series they feed (each read locks the source and copies its
// maps), and a source given no stats function is refused.
func TestOneSnapshotPerScrape(t *testing.T) {
	m := New()
	var pools, admission, budget, sessions int
	add := []error{
		m.AddPools(func() []PoolStats { pools++; return []PoolStats{{Pool: "replay"}, {Pool: "nested"}} }),
		m.AddAdmission(func() AdmissionStats {
			admission++
			return AdmissionStats{Refused: map[string]int64{"queue": 0, "deadline": 0, "key": 0}}
		}),
		m.AddBudget(func() BudgetStats { budget++; return BudgetStats{} }),
		m.AddSessions(func() SessionStats {
			sessions++
			return SessionStats{Refused: map[string]int64{"per_token": 0, "total": 0}}
		}),
	}
	for _, err := range add {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 3; i++ {
		scrape(t, m)
		if pools != i || admission != i || budget != i || sessions != i {
			t.Fatalf("after %d scrapes: stats read pools %d, admission %d, budget %d, sessions %d times", i, pools, admission, budget, sessions)
		}
	}
	for name, err := range map[string]error{
		"pools": m.AddPools(nil), "admission": m.AddAdmission(nil), "budget": m.AddBudget(nil), "sessions": m.AddSessions(nil),
	} {
		if err == nil {
			t.Errorf("%s: a nil stats function was accepted", name)
		}
	}
}
