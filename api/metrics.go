package api

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/procgraph/procgraph/procedures"
)

// Metrics is a small Prometheus text-format registry: labelled counters and
// one latency histogram, enough for procgraph's operations view without a
// client library.
type Metrics struct {
	mu       sync.Mutex
	counters map[string]map[string]float64 // metric -> rendered labels -> value
	help     map[string]string
	latency  map[string]*histogram // route -> histogram
	gauges   []func() []GaugeValue
}

type GaugeValue struct {
	name, help, labels string
	value              float64
}

var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

type histogram struct {
	counts []uint64
	sum    float64
	count  uint64
}

// NewMetrics returns an empty registry.
func NewMetrics() *Metrics {
	return &Metrics{counters: map[string]map[string]float64{}, help: map[string]string{}, latency: map[string]*histogram{}}
}

// Inc adds one to the counter name with the given label pairs.
func (m *Metrics) Inc(name, help string, labels ...string) {
	rendered := renderLabels(labels)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counters[name] == nil {
		m.counters[name] = map[string]float64{}
		m.help[name] = help
	}
	m.counters[name][rendered]++
}

// ObserveRequest records one HTTP request.
func (m *Metrics) ObserveRequest(route, method string, status int, d time.Duration) {
	m.Inc("procgraph_http_requests_total", "HTTP requests by route, method and status.",
		"route", route, "method", method, "status", fmt.Sprint(status))
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.latency[route]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(latencyBuckets))}
		m.latency[route] = h
	}
	s := d.Seconds()
	for i, b := range latencyBuckets {
		if s <= b {
			h.counts[i]++
		}
	}
	h.sum += s
	h.count++
}

// CountDecision counts one decision record by kind, outcome and reason.
func (m *Metrics) CountDecision(d procedures.Decision) {
	m.Inc("procgraph_decisions_total", "Decisions by kind, outcome and reason.",
		"kind", string(d.Kind), "outcome", string(d.Outcome), "reason", d.Reason)
}

// CountRefusal counts the denied decision that err carries in its details
// (a denied invoke, a refused grant or promote), if any.
func (m *Metrics) CountRefusal(err error) {
	var pe *procedures.Error
	if errors.As(err, &pe) {
		if d, ok := pe.Details["decision"].(procedures.Decision); ok {
			m.CountDecision(d)
		}
	}
}

// CountReplay counts one replay that ran, by status and error code.
func (m *Metrics) CountReplay(status, errorCode string) {
	m.Inc("procgraph_replays_total", "Replays by status and error code.", "status", status, "error", errorCode)
}

// AddGauges registers a function read at every scrape.
func (m *Metrics) AddGauges(f func() []GaugeValue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gauges = append(m.gauges, f)
}

// Gauge builds one gauge sample for AddGauges.
func Gauge(name, help string, value float64, labels ...string) GaugeValue {
	return GaugeValue{name: name, help: help, labels: renderLabels(labels), value: value}
}

// WriteTo writes every metric in the Prometheus text format.
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	m.mu.Lock()
	names := make([]string, 0, len(m.counters))
	for n := range m.counters {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n", n, m.help[n], n)
		series := m.counters[n]
		keys := make([]string, 0, len(series))
		for k := range series {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s%s %g\n", n, k, series[k])
		}
	}
	const hn = "procgraph_http_request_duration_seconds"
	fmt.Fprintf(&b, "# HELP %s HTTP request latency by route.\n# TYPE %s histogram\n", hn, hn)
	routes := make([]string, 0, len(m.latency))
	for r := range m.latency {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	for _, r := range routes {
		h := m.latency[r]
		for i, bound := range latencyBuckets {
			fmt.Fprintf(&b, "%s_bucket{route=%s,le=\"%v\"} %d\n", hn, promQuote(r), bound, h.counts[i])
		}
		fmt.Fprintf(&b, "%s_bucket{route=%s,le=\"+Inf\"} %d\n", hn, promQuote(r), h.count)
		fmt.Fprintf(&b, "%s_sum{route=%s} %g\n%s_count{route=%s} %d\n", hn, promQuote(r), h.sum, hn, promQuote(r), h.count)
	}
	gauges := append([]func() []GaugeValue(nil), m.gauges...)
	m.mu.Unlock()
	seen := map[string]bool{}
	for _, f := range gauges {
		for _, g := range f() {
			if !seen[g.name] {
				fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", g.name, g.help, g.name)
				seen[g.name] = true
			}
			v := g.value
			if math.IsNaN(v) {
				v = 0
			}
			fmt.Fprintf(&b, "%s%s %g\n", g.name, g.labels, v)
		}
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

func renderLabels(pairs []string) string {
	if len(pairs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%s=%s", pairs[i], promQuote(pairs[i+1]))
	}
	b.WriteString("}")
	return b.String()
}

// promQuote quotes a label value as the Prometheus text format wants it:
// valid UTF-8, with only backslash, double quote and newline escaped (Go's
// %q would write \t or \xff, which Prometheus rejects).
func promQuote(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v) + `"`
}
