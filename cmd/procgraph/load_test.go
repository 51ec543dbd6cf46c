package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The load harness (see docs/benchmarks.md "Load and soak"): a real server process, a
// slow upstream, and vegeta driving captures, finds and invokes.
var (
	loadFlag  = flag.Bool("load", false, "run TestLoad: the sustained invoke rate, then latency at 50% and 90% of it")
	loadStep  = flag.Duration("load.step", 15*time.Second, "how long each load step lasts")
	loadSoak  = flag.Duration("load.soak", 0, "run TestLoadSoak for this long (e.g. 3m)")
	loadRate  = flag.Int("load.rate", 40, "TestLoadSoak's rate, requests/s (captures, finds and invokes mixed)")
	loadDelay = flag.Duration("load.upstream-delay", 20*time.Millisecond, "the slow upstream's delay per tool call")
)

// loadEnv is a server process under load and what the load sent.
type loadEnv struct {
	s  *serverProcess
	up *upstream
	n  atomic.Int64 // unique ids for session ids and arguments
}

// newLoadEnv starts a server process with 2 warm workers in front of a
// slow upstream and captures the procedure the invokes replay.
func newLoadEnv(t *testing.T) *loadEnv {
	up := mustUpstream(t)
	up.setDelay("get_task_jobs_summary", *loadDelay)
	up.setDelay("get_retry_chain", *loadDelay)
	s := mustServeProcess(t, serverOpts{Upstream: up, Data: t.TempDir() + "/p.db", Extra: []string{"--sandbox-workers", "2"}}.args(t))
	mustCaptureName(t, s.server, readOnlyCode, "seed")
	return &loadEnv{s: s, up: up}
}

// target kinds, in the order of a mixed cycle.
const (
	kindInvoke  = "invoke"
	kindCapture = "capture"
	kindFind    = "find"
)

// mixed is the soak's cycle: per 8 requests 5 invokes, 2 finds, 1 capture.
var mixed = []string{kindInvoke, kindFind, kindInvoke, kindCapture, kindInvoke, kindInvoke, kindFind, kindInvoke}

// targeter cycles through kinds, each request with its own session id.
func (e *loadEnv) targeter(kinds []string) vegeta.Targeter {
	hdr := http.Header{"Content-Type": []string{"application/json"}}
	return func(tg *vegeta.Target) error {
		i := e.n.Add(1)
		switch kinds[int(i)%len(kinds)] {
		case kindInvoke:
			body, _ := json.Marshal(map[string]any{"arguments": map[string]any{"task_id": i}, "phase": "automatic", "session_id": fmt.Sprintf("load-%d", i)})
			*tg = vegeta.Target{Method: "POST", URL: e.s.URL + "/v1/procedures/" + readOnlyName + "/invoke", Body: body, Header: hdr}
		case kindCapture:
			body, _ := json.Marshal(map[string]any{"code": readOnlyCode, "session_id": fmt.Sprintf("cap-%d", i)})
			*tg = vegeta.Target{Method: "POST", URL: e.s.URL + "/v1/procedures", Body: body, Header: hdr}
		default:
			*tg = vegeta.Target{Method: "GET", URL: e.s.URL + "/v1/procedures?limit=25"}
		}
		return nil
	}
}

// kindOf tells a result's request kind.
func kindOf(r *vegeta.Result) string {
	switch {
	case strings.HasSuffix(r.URL, "/invoke"):
		return kindInvoke
	case r.Method == "POST":
		return kindCapture
	}
	return kindFind
}

// tally is what one attack got back.
type tally struct {
	mu        sync.Mutex
	byKind    map[string]*vegeta.Metrics
	succeeded int // invokes answered 200 with status succeeded
	failedRun int // invokes answered 200 with status failed
	captured  int // captures answered 200 or 201
	busy      int // 429 busy answers
	bad       []string
}

func newTally() *tally { return &tally{byKind: map[string]*vegeta.Metrics{}} }

// add checks one answer: 2xx, or 429 busy with Retry-After; anything else
// is recorded as bad.
func (ta *tally) add(r *vegeta.Result) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	k := kindOf(r)
	m := ta.byKind[k]
	if m == nil {
		m = &vegeta.Metrics{}
		ta.byKind[k] = m
	}
	m.Add(r)
	switch {
	case r.Code == 429:
		var body struct {
			Error struct {
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		if json.Unmarshal(r.Body, &body) != nil || body.Error.Code != "busy" || body.Error.Details["reason"] != "replay_queue" || r.Headers.Get("Retry-After") == "" {
			ta.bad = append(ta.bad, fmt.Sprintf("429 without busy: %s", r.Body))
		}
		ta.busy++
	case k == kindInvoke && r.Code == 200:
		var body struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(r.Body, &body)
		if body.Status == "succeeded" {
			ta.succeeded++
		} else {
			ta.failedRun++
		}
	case k == kindCapture && (r.Code == 200 || r.Code == 201):
		ta.captured++
	case k == kindFind && r.Code == 200:
	default:
		ta.bad = append(ta.bad, fmt.Sprintf("%s %s: %d %s %.200s", r.Method, r.URL, r.Code, r.Error, r.Body))
	}
}

// attack runs one attack with workers clients (an Attacker serves one
// attack; the connections are kept across attacks) and tallies it.
func attack(workers uint64, tr vegeta.Targeter, p vegeta.Pacer, d time.Duration) (*tally, time.Duration) {
	a := vegeta.NewAttacker(vegeta.Client(loadClient), vegeta.Workers(workers), vegeta.MaxWorkers(workers))
	ta := newTally()
	start := time.Now()
	for r := range a.Attack(tr, p, d, "load") {
		ta.add(r)
	}
	took := time.Since(start)
	for _, m := range ta.byKind {
		m.Close()
	}
	return ta, took
}

// loadClient is the load's HTTP client: keep-alive connections, enough
// idle ones for every worker.
var loadClient = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}

// TestLoad (with -load) measures, against a real server on this machine:
// the sustained invoke rate (16 clients back to back), then p50/p99 at 50%
// and 90% of that rate, and the server's RSS.
func TestLoad(t *testing.T) {
	if !*loadFlag {
		t.Skip("run with -load")
	}
	e := newLoadEnv(t)
	const a = 16
	// Warm up (workers, connections, caches).
	attack(a, e.targeter([]string{kindInvoke}), vegeta.Rate{Freq: 0}, 3*time.Second)

	ta, took := attack(a, e.targeter([]string{kindInvoke}), vegeta.Rate{Freq: 0}, *loadStep)
	if len(ta.bad) > 0 {
		t.Fatalf("%d bad answers, first: %s", len(ta.bad), ta.bad[0])
	}
	sustained := float64(ta.succeeded) / took.Seconds()
	m := ta.byKind[kindInvoke]
	t.Logf("max: %d invokes in %v: %.1f succeeded/s, %d busy, p50 %v p99 %v", m.Requests, took.Round(time.Millisecond), sustained, ta.busy, m.Latencies.P50, m.Latencies.P99)
	for _, frac := range []float64{0.5, 0.9} {
		rate := int(sustained * frac)
		ta, _ := attack(a, e.targeter([]string{kindInvoke}), vegeta.Rate{Freq: rate, Per: time.Second}, *loadStep)
		if len(ta.bad) > 0 {
			t.Fatalf("%d bad answers, first: %s", len(ta.bad), ta.bad[0])
		}
		m := ta.byKind[kindInvoke]
		t.Logf("%.0f%% (%d/s): %d invokes, %d succeeded, %d busy, p50 %v p99 %v max %v", frac*100, rate, m.Requests, ta.succeeded, ta.busy,
			m.Latencies.P50.Round(10*time.Microsecond), m.Latencies.P99.Round(10*time.Microsecond), m.Latencies.Max.Round(time.Millisecond))
	}
	t.Logf("server RSS %d MiB (peak %d MiB); %d sandbox workers alive", e.s.rss(t)>>20, procStatus(t, e.s.cmd.Process.Pid, "VmHWM")>>20, len(e.s.workers(t)))
}

// sample is the server's state at one moment of the soak.
type sample struct {
	at         time.Duration
	rss        int64
	heap       int64 // go_memstats_heap_inuse_bytes: the Go heap, without the store's mapped file
	goroutines int
	workers    int
}

var (
	goroutinesLine = regexp.MustCompile(`(?m)^go_goroutines (\S+)$`)
	heapLine       = regexp.MustCompile(`(?m)^go_memstats_heap_inuse_bytes (\S+)$`)
)

func (e *loadEnv) sample(t *testing.T, at time.Duration) sample {
	return e.sampleAfter(t, at, false)
}

// idleSample samples after the load's keep-alive connections are closed
// (each holds a server goroutine), so that what is left is the server's own.
func (e *loadEnv) idleSample(t *testing.T, at time.Duration) sample {
	return e.sampleAfter(t, at, true)
}

func (e *loadEnv) sampleAfter(t *testing.T, at time.Duration, idle bool) sample {
	if idle {
		loadClient.CloseIdleConnections()
		httpClient.CloseIdleConnections()
		time.Sleep(time.Second)
	}
	text := string(e.s.get(t, "/metrics").Body)
	value := func(re *regexp.Regexp) int64 {
		m := re.FindStringSubmatch(text)
		if m == nil {
			return -1
		}
		f, _ := strconv.ParseFloat(m[1], 64)
		return int64(f)
	}
	return sample{at: at, rss: e.s.rss(t), heap: value(heapLine), goroutines: int(value(goroutinesLine)), workers: len(e.s.workers(t))}
}

// TestLoadSoak (with -load.soak D) drives mixed captures, finds and invokes
// at -load.rate for D against a real server and a slow upstream, then
// checks: every answer 2xx or 429 busy; no count lost (the procedure's
// frequency and use count match what succeeded); memory flat; no goroutine
// or worker leak (after the idle timeout the warm workers are all that is
// left).
func TestLoadSoak(t *testing.T) {
	if *loadSoak <= 0 {
		t.Skip("run with -load.soak 3m")
	}
	e := newLoadEnv(t)
	const a = 32
	pacer := vegeta.Rate{Freq: *loadRate, Per: time.Second}
	warm, _ := attack(a, e.targeter(mixed), pacer, 5*time.Second)
	time.Sleep(2 * time.Second)
	base := e.idleSample(t, 0)

	var samples []sample
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		tick := time.NewTicker(max(*loadSoak/12, time.Second))
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				samples = append(samples, e.sample(t, time.Since(start)))
			}
		}
	})
	ta, took := attack(a, e.targeter(mixed), pacer, *loadSoak)
	close(stop)
	wg.Wait()
	time.Sleep(2 * time.Second)
	end := e.idleSample(t, time.Since(start))
	for _, s := range append(samples, end) {
		t.Logf("t=%-6v rss %3d MiB heap %3d MiB goroutines %4d workers %2d", s.at.Round(time.Second), s.rss>>20, s.heap>>20, s.goroutines, s.workers)
	}
	for _, k := range []string{kindInvoke, kindCapture, kindFind} {
		if m := ta.byKind[k]; m != nil {
			t.Logf("%-7s %6d requests, codes %v, p50 %v p99 %v", k, m.Requests, m.StatusCodes, m.Latencies.P50.Round(10*time.Microsecond), m.Latencies.P99.Round(10*time.Microsecond))
		}
	}
	t.Logf("%v at %d/s: %d invokes succeeded, %d failed runs, %d captures, %d busy", took.Round(time.Second), *loadRate, ta.succeeded, ta.failedRun, ta.captured, ta.busy)

	if len(ta.bad) > 0 {
		sort.Strings(ta.bad)
		t.Errorf("%d answers neither 2xx nor 429 busy; first: %s", len(ta.bad), ta.bad[0])
	}
	if ta.failedRun > 0 || warm.failedRun > 0 {
		t.Errorf("%d replays failed", ta.failedRun+warm.failedRun)
	}
	// No count lost: the seed capture, every capture and every succeeded
	// invoke count once in the frequency; the invokes in the use count.
	p := mustStatus(t, e.s.get(t, "/v1/procedures/"+readOnlyName), 200)
	wantFreq := 1 + warm.captured + warm.succeeded + ta.captured + ta.succeeded
	if num(p["frequency"]) != wantFreq || num(p["use_count"]) != warm.succeeded+ta.succeeded {
		t.Errorf("frequency %v use_count %v, want %d and %d", p["frequency"], p["use_count"], wantFreq, warm.succeeded+ta.succeeded)
	}
	// Memory flat: the end (idle) is within a quarter of the start (idle,
	// after the warm-up), plus 16 MiB for allocator noise.
	if end.rss > base.rss+base.rss/4+16<<20 {
		t.Errorf("server RSS grew from %d MiB to %d MiB", base.rss>>20, end.rss>>20)
	}
	// No worker leak: past the idle timeout only the warm workers remain
	// (2 replay, 1 nested), and /metrics counts the same.
	var live int
	for range 60 {
		time.Sleep(time.Second)
		if live = len(e.s.workers(t)); live == 3 {
			break
		}
	}
	text := string(e.s.get(t, "/metrics").Body)
	reported := metricValue(text, `procgraph_sandbox_workers_live{pool="replay"}`) + metricValue(text, `procgraph_sandbox_workers_live{pool="nested"}`)
	if live != 3 || reported != 3 {
		t.Errorf("%d worker processes (metrics: %v) after the idle timeout, want 3", live, reported)
	}
	// No goroutine leak: with the workers back to the warm ones (each
	// worker has goroutines of its own in the server) and the load's
	// connections closed, what is left is what there was after the warm-up.
	idle := e.idleSample(t, time.Since(start))
	t.Logf("after the idle timeout: rss %d MiB heap %d MiB goroutines %d workers %d", idle.rss>>20, idle.heap>>20, idle.goroutines, idle.workers)
	if idle.goroutines > base.goroutines+8 {
		t.Errorf("goroutines grew from %d (%d workers) to %d (%d workers)", base.goroutines, base.workers, idle.goroutines, idle.workers)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "base rss %d MiB heap %d MiB goroutines %d; end rss %d MiB heap %d MiB goroutines %d", base.rss>>20, base.heap>>20, base.goroutines, end.rss>>20, end.heap>>20, end.goroutines)
	t.Log(buf.String())
}
