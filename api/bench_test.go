package api

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

func benchClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns}, Timeout: time.Minute}
}

// benchPoolEnv returns an env whose runner is the real worker pool (closed
// at cleanup) and the name of readOnlyCode captured as a procedure.
func benchPoolEnv(b *testing.B) (*env, string) {
	b.Helper()
	pool, err := sandbox.NewPool(sandbox.PoolConfig{Size: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pool.Close() })
	e := mustEnv(b, envOpts{runner: pool})
	out, err := e.svc.Capture(context.Background(), procedures.CaptureRequest{Code: readOnlyCode, SessionID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	return e, out.Procedure.Name
}

// BenchmarkListVsHealthz measures GET /v1/procedures (a page of 25 from 10k
// procedures in the embedded store) against GET /healthz on the same server
// over loopback HTTP, and logs the ratio.
func BenchmarkListVsHealthz(b *testing.B) {
	e := mustEnv(b, envOpts{})
	start := time.Now()
	storetest.Fill(b, e.store, 10_000)
	b.Logf("fixture: 10k procedures in %v", time.Since(start).Round(time.Millisecond))
	c := benchClient(4)
	if st, body := e.do(b, c, "GET", "/v1/procedures?limit=1", nil); st != 200 {
		b.Fatalf("%d %s", st, body)
	}
	perOp := map[string]time.Duration{}
	for _, path := range []struct{ name, path string }{{"healthz", "/healthz"}, {"list", "/v1/procedures"}, {"list_exposed", "/v1/procedures?exposed=false"}} {
		b.Run(path.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if st, _ := e.do(b, c, "GET", path.path, nil); st != 200 {
					b.Fatalf("status %d", st)
				}
			}
			perOp[path.name] = b.Elapsed() / time.Duration(b.N)
		})
	}
	if perOp["healthz"] > 0 {
		b.Logf("list/healthz = %.2fx (list %v, healthz %v); list_exposed/healthz = %.2fx", float64(perOp["list"])/float64(perOp["healthz"]),
			perOp["list"], perOp["healthz"], float64(perOp["list_exposed"])/float64(perOp["healthz"]))
	}
}

// BenchmarkCaptureHTTP measures POST /v1/procedures over loopback HTTP, one
// client and 16 concurrent clients (embedded store with NoSync: the API's
// cost, not the disk's).
func BenchmarkCaptureHTTP(b *testing.B) {
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			e := mustEnv(b, envOpts{})
			c := benchClient(clients)
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for range clients {
				wg.Go(func() {
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						st, body := e.do(b, c, "POST", "/v1/procedures", map[string]any{"code": readOnlyCode, "session_id": fmt.Sprintf("s-%d", i)})
						if st != 200 && st != 201 {
							b.Errorf("%d %s", st, body)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			p, err := e.svc.Get(context.Background(), "proc__fetch_logs__get_jobs")
			if err != nil || p.Frequency != int64(b.N) {
				b.Fatalf("frequency %v after %d captures: %v", p, b.N, err)
			}
		})
	}
}

// BenchmarkInvokeHTTP measures a replay end to end over HTTP against the
// same replay through the library (replay.Replayer.Invoke), both in the
// real worker pool, in the same run.
func BenchmarkInvokeHTTP(b *testing.B) {
	e, name := benchPoolEnv(b)
	c := benchClient(4)
	body := map[string]any{"arguments": map[string]any{"task_id": 7}, "phase": "automatic", "session_id": "bench"}
	perOp := map[string]time.Duration{}
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := e.rp.Invoke(context.Background(), replay.InvokeRequest{Name: name, Arguments: map[string]any{"task_id": 7},
				Phase: audit.PhaseAutomatic, SessionID: "bench"})
			if err != nil || res.Status != replay.StatusSucceeded {
				b.Fatalf("%+v %v", res, err)
			}
		}
		perOp["library"] = b.Elapsed() / time.Duration(b.N)
	})
	b.Run("http", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if st, data := e.do(b, c, "POST", "/v1/procedures/"+name+"/invoke", body); st != 200 {
				b.Fatalf("%d %s", st, data)
			}
		}
		perOp["http"] = b.Elapsed() / time.Duration(b.N)
	})
	if perOp["library"] > 0 {
		b.Logf("http %v, library %v: HTTP adds %v per replay", perOp["http"], perOp["library"], perOp["http"]-perOp["library"])
	}
}

// BenchmarkCaptureLiftHTTP measures POST /v1/procedures over loopback HTTP
// (embedded store, NoSync) with lifting on against "lift": false,
// interleaved: each iteration one of each, alternating which goes first;
// same: the same code every time (an existing version both ways); varied:
// a new task id each time.
func BenchmarkCaptureLiftHTTP(b *testing.B) {
	for _, same := range []bool{true, false} {
		b.Run(map[bool]string{true: "same", false: "varied"}[same], func(b *testing.B) {
			e := mustEnv(b, envOpts{})
			if _, err := e.svc.PutCatalogue(context.Background(), storetest.LiftTools, "bench"); err != nil {
				b.Fatal(err)
			}
			c := benchClient(1)
			var lift, plain time.Duration
			post := func(i int, on bool) time.Duration {
				task := 48213
				if !same {
					task += i
				}
				body := map[string]any{"code": storetest.LiftCode(task), "dialect": "python-async", "session_id": fmt.Sprintf("s-%d-%v", i, on), "lift": on}
				start := time.Now()
				if st, data := e.do(b, c, "POST", "/v1/procedures", body); st != 200 && st != 201 {
					b.Fatalf("%d %s", st, data)
				}
				return time.Since(start)
			}
			post(-1, true)
			post(-1, false)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					lift += post(i, true)
					plain += post(i, false)
				} else {
					plain += post(i, false)
					lift += post(i, true)
				}
				i++
			}
			b.ReportMetric(float64(lift.Nanoseconds())/float64(i), "lift-ns/op")
			b.ReportMetric(float64(plain.Nanoseconds())/float64(i), "nolift-ns/op")
			b.ReportMetric(float64(lift)/float64(plain), "lift/nolift")
		})
	}
}
