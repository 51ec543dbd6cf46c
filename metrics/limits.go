package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// AdmissionStats is the replay admission queue at a scrape: replays running
// and waiting now (gauges), admitted since start, and refused with 429 busy
// since start by the limit that refused them (counters; the source reports
// every limit, 0 included, so each series exists from the start).
type AdmissionStats struct {
	Running, Waiting, Admitted int64
	Refused                    map[string]int64
}

// BudgetStats is the in-flight budget of tool-call bytes at a scrape: bytes
// reserved now (gauge) and tool calls refused since start (counter).
type BudgetStats struct {
	InUse, Refused int64
}

// SessionStats is the MCP sessions at a scrape: open now (gauge) and new
// sessions refused since start by the cap that refused them (counters; the
// source reports every cap, 0 included).
type SessionStats struct {
	Open    int64
	Refused map[string]int64
}

// SearchIndexStats is the embedded store's search indexer at a scrape:
// writes committed and not yet indexed (gauge), and whether an update
// failed (then searches answer 503 until a restart rebuilds the index).
type SearchIndexStats struct {
	Pending int64
	Failed  bool
}

var (
	replaysRunningDesc  = prometheus.NewDesc(ReplaysRunning, "Replays admitted and running.", nil, nil)
	replaysWaitingDesc  = prometheus.NewDesc(ReplaysWaiting, "Replays waiting for a sandbox worker.", nil, nil)
	replaysAdmittedDesc = prometheus.NewDesc(ReplaysAdmitted, "Replays admitted since start.", nil, nil)
	replaysBusyDesc     = prometheus.NewDesc(ReplaysBusy, "Replays refused with 429 busy, by the limit that refused them.", []string{"limit"}, nil)
	inFlightDesc        = prometheus.NewDesc(ToolCallBytesInFlight, "Bytes of tool-call arguments and results reserved in the in-flight budget.", nil, nil)
	budgetRefusedDesc   = prometheus.NewDesc(ToolCallBudgetRefused, "Tool calls refused because they did not fit the in-flight budget.", nil, nil)
	sessionsDesc        = prometheus.NewDesc(MCPSessions, "MCP sessions open (both endpoints).", nil, nil)
	sessionsRefusedDesc = prometheus.NewDesc(MCPSessionsRefused, "New MCP sessions refused with 429 busy, by the cap that refused them.", []string{"limit"}, nil)
	indexPendingDesc    = prometheus.NewDesc(SearchIndexPending, "Committed writes the search index has not applied yet (embedded store).", nil, nil)
	indexFailedDesc     = prometheus.NewDesc(SearchIndexFailed, "1 when a search index update failed: searches answer 503 until a restart rebuilds the index (embedded store).", nil, nil)
)

// AddAdmission reports the replay admission queue: stats is read once per
// scrape.
func (r *Registry) AddAdmission(stats func() AdmissionStats) error {
	return add(r, stats, func(s AdmissionStats, ch chan<- prometheus.Metric) {
		ch <- prometheus.MustNewConstMetric(replaysRunningDesc, prometheus.GaugeValue, float64(s.Running))
		ch <- prometheus.MustNewConstMetric(replaysWaitingDesc, prometheus.GaugeValue, float64(s.Waiting))
		ch <- prometheus.MustNewConstMetric(replaysAdmittedDesc, prometheus.CounterValue, float64(s.Admitted))
		byLimit(ch, replaysBusyDesc, s.Refused)
	}, replaysRunningDesc, replaysWaitingDesc, replaysAdmittedDesc, replaysBusyDesc)
}

// AddBudget reports the in-flight budget of tool-call bytes: stats is read
// once per scrape.
func (r *Registry) AddBudget(stats func() BudgetStats) error {
	return add(r, stats, func(s BudgetStats, ch chan<- prometheus.Metric) {
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(s.InUse))
		ch <- prometheus.MustNewConstMetric(budgetRefusedDesc, prometheus.CounterValue, float64(s.Refused))
	}, inFlightDesc, budgetRefusedDesc)
}

// AddSessions reports the MCP sessions: stats is read once per scrape.
func (r *Registry) AddSessions(stats func() SessionStats) error {
	return add(r, stats, func(s SessionStats, ch chan<- prometheus.Metric) {
		ch <- prometheus.MustNewConstMetric(sessionsDesc, prometheus.GaugeValue, float64(s.Open))
		byLimit(ch, sessionsRefusedDesc, s.Refused)
	}, sessionsDesc, sessionsRefusedDesc)
}

// byLimit sends one counter of desc per limit, in the limits' order.
// AddSearchIndex reports the embedded store's search indexer: stats is
// read once per scrape.
func (r *Registry) AddSearchIndex(stats func() SearchIndexStats) error {
	return add(r, stats, func(s SearchIndexStats, ch chan<- prometheus.Metric) {
		failed := 0.0
		if s.Failed {
			failed = 1
		}
		ch <- prometheus.MustNewConstMetric(indexPendingDesc, prometheus.GaugeValue, float64(s.Pending))
		ch <- prometheus.MustNewConstMetric(indexFailedDesc, prometheus.GaugeValue, failed)
	}, indexPendingDesc, indexFailedDesc)
}

func byLimit(ch chan<- prometheus.Metric, desc *prometheus.Desc, refused map[string]int64) {
	limits := make([]string, 0, len(refused))
	for l := range refused {
		limits = append(limits, l)
	}
	sort.Strings(limits)
	for _, l := range limits {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(refused[l]), label(l))
	}
}

// add registers the collector of one source: stats read once per scrape,
// emit turning that one snapshot into the metrics of descs.
func add[S any](r *Registry, stats func() S, emit func(S, chan<- prometheus.Metric), descs ...*prometheus.Desc) error {
	if stats == nil {
		return errNoStats
	}
	return r.reg.Register(sourceCollector[S]{stats: stats, emit: emit, descs: descs})
}

// sourceCollector is the collector of one source's stats.
type sourceCollector[S any] struct {
	stats func() S
	emit  func(S, chan<- prometheus.Metric)
	descs []*prometheus.Desc
}

func (c sourceCollector[S]) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c sourceCollector[S]) Collect(ch chan<- prometheus.Metric) { c.emit(c.stats(), ch) }
