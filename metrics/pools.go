package metrics

import "github.com/prometheus/client_golang/prometheus"

// PoolStats is one sandbox pool's state at a scrape: idle, busy and live
// workers now (gauges); workers started, crashed during a run, and killed by
// the pool since start (counters).
type PoolStats struct {
	Pool                     string
	Idle, Busy, Live         int64
	Started, Crashed, Killed int64
}

// AddPools reports sandbox pools: stats is read once per scrape.
func (r *Registry) AddPools(stats func() []PoolStats) error {
	return add(r, stats, func(pools []PoolStats, ch chan<- prometheus.Metric) {
		for _, s := range pools {
			pool := label(s.Pool)
			ch <- prometheus.MustNewConstMetric(idleDesc, prometheus.GaugeValue, float64(s.Idle), pool)
			ch <- prometheus.MustNewConstMetric(busyDesc, prometheus.GaugeValue, float64(s.Busy), pool)
			ch <- prometheus.MustNewConstMetric(startedDesc, prometheus.CounterValue, float64(s.Started), pool)
			ch <- prometheus.MustNewConstMetric(liveDesc, prometheus.GaugeValue, float64(s.Live), pool)
			ch <- prometheus.MustNewConstMetric(crashedDesc, prometheus.CounterValue, float64(s.Crashed), pool)
			ch <- prometheus.MustNewConstMetric(killedDesc, prometheus.CounterValue, float64(s.Killed), pool)
		}
	}, idleDesc, busyDesc, startedDesc, liveDesc, crashedDesc, killedDesc)
}

var (
	idleDesc    = prometheus.NewDesc(WorkersIdle, "Idle sandbox workers.", []string{"pool"}, nil)
	busyDesc    = prometheus.NewDesc(WorkersBusy, "Busy sandbox workers.", []string{"pool"}, nil)
	startedDesc = prometheus.NewDesc(WorkersStarted, "Sandbox workers started since start.", []string{"pool"}, nil)
	liveDesc    = prometheus.NewDesc(WorkersLive, "Live sandbox workers (idle, busy or starting).", []string{"pool"}, nil)
	crashedDesc = prometheus.NewDesc(WorkersCrashed, "Sandbox workers that died during a run since start.", []string{"pool"}, nil)
	killedDesc  = prometheus.NewDesc(WorkersKilled, "Sandbox workers the pool killed since start.", []string{"pool"}, nil)
)
