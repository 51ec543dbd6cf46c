// Package metrics is procgraph's Prometheus registry (client_golang): HTTP
// requests and their latency, decisions, replays, sandbox pools, and the Go
// runtime and process collectors, served by Handler. The HTTP API and the
// MCP server share one Registry.
package metrics

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/procgraph/procgraph/audit"
)

// The metric names procgraph exports (besides the go_ and process_ ones).
const (
	HTTPRequests   = "procgraph_http_requests_total"
	HTTPDuration   = "procgraph_http_request_duration_seconds"
	Decisions      = "procgraph_decisions_total"
	Replays        = "procgraph_replays_total"
	WorkersIdle    = "procgraph_sandbox_workers_idle"
	WorkersBusy    = "procgraph_sandbox_workers_busy"
	WorkersStarted = "procgraph_sandbox_workers_started"
	WorkersLive    = "procgraph_sandbox_workers_live"
	WorkersCrashed = "procgraph_sandbox_workers_crashed"
	WorkersKilled  = "procgraph_sandbox_workers_killed"

	ReplaysRunning        = "procgraph_replays_running"
	ReplaysWaiting        = "procgraph_replays_waiting"
	ReplaysAdmitted       = "procgraph_replays_admitted_total"
	ReplaysBusy           = "procgraph_replays_busy_total"
	ToolCallBytesInFlight = "procgraph_tool_call_bytes_in_flight"
	ToolCallBudgetRefused = "procgraph_tool_call_budget_refusals_total"
	MCPSessions           = "procgraph_mcp_sessions"
	MCPSessionsRefused    = "procgraph_mcp_sessions_refused_total"
	SearchIndexPending    = "procgraph_search_index_pending"
	SearchIndexFailed     = "procgraph_search_index_failed"
	Recordings            = "procgraph_recordings_total"
	RecordingBytes        = "procgraph_recording_bytes_total"
	Notifications         = "procgraph_notifications_total"
)

// LatencyBuckets are the request-latency histogram's upper bounds, seconds.
var LatencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Registry holds procgraph's metrics. It is safe for concurrent use.
type Registry struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	decisions *prometheus.CounterVec
	replays   *prometheus.CounterVec
	// recordings counts successful runs' recordings by outcome; recBytes
	// the bytes of those kept.
	recordings *prometheus.CounterVec
	recBytes   prometheus.Counter
	// notifications counts webhook notifications by outcome (notify).
	notifications *prometheus.CounterVec
	// upstreams counts the upstream servers' tool calls (upstreams.go).
	upstreams upstreamMetrics
}

// New returns a registry with procgraph's metrics and the Go runtime and
// process collectors.
func New() *Registry {
	r := &Registry{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: HTTPRequests,
			Help: "HTTP requests by route, method and status."}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: HTTPDuration,
			Help: "HTTP request latency by route.", Buckets: LatencyBuckets}, []string{"route"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: Decisions,
			Help: "Decisions by kind, outcome and reason."}, []string{"kind", "outcome", "reason"}),
		replays: prometheus.NewCounterVec(prometheus.CounterOpts{Name: Replays,
			Help: "Replays by status and error code."}, []string{"status", "error"}),
		recordings: prometheus.NewCounterVec(prometheus.CounterOpts{Name: Recordings,
			Help: "Recordings of successful runs by outcome: kept, too_large (over 256 KiB: not kept), unencodable."}, []string{"outcome"}),
		recBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: RecordingBytes,
			Help: "Bytes of the recordings kept (as JSON)."}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{Name: Notifications,
			Help: "Webhook notifications of approvals by outcome: sent, retried (an attempt failed), failed (every attempt), dropped (the queue was full)."}, []string{"outcome"}),
		upstreams: newUpstreamMetrics(),
	}
	r.reg.MustRegister(r.requests, r.latency, r.decisions, r.replays, r.recordings, r.recBytes, r.notifications,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r.reg.MustRegister(r.upstreams.collectors()...)
	return r
}

// Handler serves the registry in the Prometheus exposition formats.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Gatherer is the registry for tests and custom exposition.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// Register adds collectors (e.g. a package's own metrics) to the registry.
func (r *Registry) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := r.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// ObserveRequest records one HTTP request on route (the pattern, never the
// path, so the label set stays bounded).
func (r *Registry) ObserveRequest(route, method string, status int, d time.Duration) {
	route, method = label(route), label(method)
	r.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	r.latency.WithLabelValues(route).Observe(d.Seconds())
}

// CountDecision counts one decision record by kind, outcome and reason
// (procedures.Options.Counter: the service's Recorder calls it once per
// stored record).
func (r *Registry) CountDecision(d audit.Decision) {
	r.decisions.WithLabelValues(label(string(d.Kind)), label(string(d.Outcome)), label(d.Reason)).Inc()
}

// CountReplay counts one replay that ran, by status and error code
// (replay.ReplayCounter).
func (r *Registry) CountReplay(status, errorCode string) {
	r.replays.WithLabelValues(label(status), label(errorCode)).Inc()
}

// CountNotification counts one webhook notification's outcome
// (notify.Config.Count).
func (r *Registry) CountNotification(outcome string) {
	r.notifications.WithLabelValues(label(outcome)).Inc()
}

// label makes a label value valid: client_golang refuses invalid UTF-8.
func label(v string) string { return strings.ToValidUTF8(v, "\uFFFD") }

// errNoStats is returned by AddPools, AddAdmission, AddBudget and
// AddSessions when given nothing to read.
var errNoStats = errors.New("metrics: a collector needs a stats function")

// CountRecording counts one run's recording by outcome and, when kept,
// its bytes (replay.RecordingCounter).
func (r *Registry) CountRecording(outcome string, bytes int) {
	r.recordings.WithLabelValues(label(outcome)).Inc()
	if bytes > 0 {
		r.recBytes.Add(float64(bytes))
	}
}
