package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The upstream servers' metrics: calls, errors by failure class and latency
// per server and tool (counted by the replays, replay.ToolCallCounter), and
// each server's state at a scrape (AddUpstreams). A server is its key in the
// upstreams file ("" for the unnamed server of the --upstream-* flags); a
// tool is its catalogue name. Never arguments or results.
const (
	UpstreamCalls        = "procgraph_upstream_calls_total"
	UpstreamCallErrors   = "procgraph_upstream_call_errors_total"
	UpstreamCallDuration = "procgraph_upstream_call_duration_seconds"
	UpstreamState        = "procgraph_upstream_state"
)

// upstreamMetrics are the call metrics of the upstream servers.
type upstreamMetrics struct {
	calls    *prometheus.CounterVec
	errors   *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newUpstreamMetrics() upstreamMetrics {
	return upstreamMetrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: UpstreamCalls,
			Help: "Tool calls sent to an upstream server, by server and tool."}, []string{"server", "tool"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: UpstreamCallErrors,
			Help: "Upstream tool calls that failed, by server, tool and failure class (a run's: tool_error, timeout, invalid_arguments…)."}, []string{"server", "tool", "class"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: UpstreamCallDuration,
			Help: "Upstream tool call latency, by server and tool.", Buckets: LatencyBuckets}, []string{"server", "tool"}),
	}
}

func (u upstreamMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{u.calls, u.errors, u.duration}
}

// CountToolCall counts one upstream tool call of server's tool that took
// d and failed with class ("" when it answered) (replay.ToolCallCounter).
func (r *Registry) CountToolCall(server, tool, class string, d time.Duration) {
	server, tool = label(server), label(tool)
	r.upstreams.calls.WithLabelValues(server, tool).Inc()
	r.upstreams.duration.WithLabelValues(server, tool).Observe(d.Seconds())
	if class != "" {
		r.upstreams.errors.WithLabelValues(server, tool, label(class)).Inc()
	}
}

// UpstreamStats is one upstream server's state at a scrape.
type UpstreamStats struct {
	Server, State string
}

var upstreamStateDesc = prometheus.NewDesc(UpstreamState,
	"1 for each upstream server's state now (ok, degraded, down, unknown), by server.", []string{"server", "state"}, nil)

// AddUpstreams reports each upstream server's state: stats is read once per
// scrape.
func (r *Registry) AddUpstreams(stats func() []UpstreamStats) error {
	return add(r, stats, func(ups []UpstreamStats, ch chan<- prometheus.Metric) {
		for _, u := range ups {
			ch <- prometheus.MustNewConstMetric(upstreamStateDesc, prometheus.GaugeValue, 1, label(u.Server), label(u.State))
		}
	}, upstreamStateDesc)
}
