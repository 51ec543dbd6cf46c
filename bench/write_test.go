package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
)

var seq atomic.Int64

// runID tells this process's new procedures from those of earlier runs in
// a kept namespace (-bench.keep).
var runID = strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36)

// key returns a usage key no other iteration of this process uses.
func key() string { return fmt.Sprintf("k%d-%d", time.Now().UnixNano(), seq.Add(1)) }

// decision is an audit record for a store-level grant, revoke or promote.
func decision(kind audit.DecisionKind, name, hash string) audit.Decision {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return audit.Decision{ID: audit.NewDecisionID(time.Now()), Kind: kind, Procedure: name, CodeHash: hash,
		Outcome: audit.Allowed, Reason: string(kind), Actor: "bench", At: now, AllowedTools: []string{}}
}

// twoVersions captures a procedure with two succeeded versions (hash "va"
// current, then "vb") and returns its name.
func twoVersions(b *testing.B, t *target, label string) string {
	b.Helper()
	sig := []string{t.ns + label + "_p", t.ns + "z"}
	for _, h := range []string{"va", "vb"} {
		if _, err := t.store.Capture(context.Background(), captureInput(sig, h, key(), time.Now())); err != nil {
			b.Fatal(err)
		}
	}
	return captureInput(sig, "", "", time.Time{}).Name
}

// BenchmarkWrite measures the write path through the store at each N:
// capture of a new and of an existing procedure, grant, revoke, promote.
// Aim (Neo4j, 2 cores): ≤ 5 ms median each at 1k and 100k.
func writeStore(b *testing.B, t *target, n int) {
	ctx := context.Background()
	existing := t.fillInput(n / 2)
	promoted := twoVersions(b, t, fmt.Sprintf("promote%d", n))
	granted := twoVersions(b, t, fmt.Sprintf("grant%d", n))
	prefix := fmt.Sprintf("%s/n=%d/store/", t.name, n)
	b.Run(prefix+"capture_new", func(b *testing.B) {
		loop(b, func(i int) {
			in := captureInput([]string{fmt.Sprintf("%snew%d_%s_%d", t.ns, n, runID, i), t.ns + "z"}, "h", key(), time.Now())
			if res, err := t.store.Capture(ctx, in); err != nil || !res.Created {
				b.Fatalf("%+v %v", res, err)
			}
		})
	})
	b.Run(prefix+"capture_existing", func(b *testing.B) {
		loop(b, func(int) {
			in := existing
			in.UsageKey, in.At = key(), time.Now()
			if res, err := t.store.Capture(ctx, in); err != nil || res.Created || !res.Counted {
				b.Fatalf("%+v %v", res, err)
			}
		})
	})
	b.Run(prefix+"grant", func(b *testing.B) {
		loop(b, func(int) {
			g := &procedures.Grant{Enabled: true, GrantedBy: "bench", GrantedAt: time.Now(), CodeHash: "va"}
			if _, err := t.store.SetGrant(ctx, granted, g, "va", nil, decision(audit.KindGrant, granted, "va")); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run(prefix+"revoke", func(b *testing.B) {
		loop(b, func(int) {
			if _, err := t.store.SetGrant(ctx, granted, nil, "va", nil, decision(audit.KindRevoke, granted, "va")); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run(prefix+"promote", func(b *testing.B) {
		hashes := [2]string{"vb", "va"}
		loop(b, func(i int) {
			h := hashes[i%2]
			if p, err := t.store.Promote(ctx, promoted, h, decision(audit.KindPromote, promoted, h)); err != nil || p.CodeHash != h {
				b.Fatalf("%v %v", p, err)
			}
		})
	})
}

// loop runs op b.N times (i counting from 0), reports the median and the
// 90th percentile of one op as metrics (the aims are medians, and medians
// shrug off the other load of a shared machine) and returns the median.
func loop(b *testing.B, op func(i int)) time.Duration {
	b.Helper()
	durs := make([]time.Duration, 0, b.N)
	i := 0
	for b.Loop() {
		start := time.Now()
		op(i)
		durs = append(durs, time.Since(start))
		i++
	}
	return reportQuantiles(b, durs)
}

// reportQuantiles reports the median and 90th percentile of durs and
// returns the median.
func reportQuantiles(b *testing.B, durs []time.Duration) time.Duration {
	if len(durs) == 0 {
		return 0
	}
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durs[len(durs)*9/10].Microseconds())/1000, "p90-ms")
	return durs[len(durs)/2]
}

// do sends a JSON request and returns the status and body.
func (s *server) do(tb testing.TB, method, path string, body any) (int, []byte) {
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	r, _ := http.NewRequest(method, s.url+path, rd)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(r)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if n := resp.ContentLength; n > 0 {
		data := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, data); err != nil {
			tb.Fatal(err)
		}
		return resp.StatusCode, data
	}
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// code is a block calling the namespace's tools a and b.
func code(ns, a, b string) string {
	return fmt.Sprintf("x = tools.%s%s(task_id=task_id)\nreturn tools.%s%s(x=x)", ns, a, ns, b)
}

// BenchmarkWriteHTTP measures the same writes over loopback HTTP through
// the whole API (schema validation, analysis, classification, the store).
// Aim (Neo4j): ≤ 8 ms; embedded capture ≤ 0.3 ms.
func writeHTTP(b *testing.B, t *target, srv *server, n int) {
	ctx := context.Background()
	prefix := fmt.Sprintf("%s/n=%d/http/", t.name, n)
	existing := code(t.ns, fmt.Sprintf("ex%d", n), "z")
	if st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": existing}); st != 201 && st != 200 { // 200: a kept namespace holds it
		b.Fatalf("%d %s", st, body)
	}
	// A procedure with two succeeded versions (same tools, other code).
	var name string
	var hashes []string
	for _, c := range []string{code(t.ns, fmt.Sprintf("pr%d", n), "z"), "y = 1\n" + code(t.ns, fmt.Sprintf("pr%d", n), "z")} {
		out, err := srv.svc.Capture(ctx, procedures.CaptureRequest{Code: c})
		if err != nil {
			b.Fatal(err)
		}
		name = out.Procedure.Name
		hashes = append(hashes, out.Procedure.CodeHash)
		if len(hashes) == 2 {
			vs, err := srv.svc.Versions(ctx, name)
			if err != nil || len(vs) != 2 {
				b.Fatalf("versions %v %v", vs, err)
			}
			hashes = []string{vs[0].CodeHash, vs[1].CodeHash}
		}
	}
	path := "/v1/procedures/" + url.PathEscape(name)
	b.Run(prefix+"capture_new", func(b *testing.B) {
		loop(b, func(i int) {
			st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": code(t.ns, fmt.Sprintf("hn%d_%s_%d", n, runID, i), "z")})
			if st != 201 {
				b.Fatalf("%d %s", st, body)
			}
		})
	})
	b.Run(prefix+"capture_existing", func(b *testing.B) {
		loop(b, func(int) {
			st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": existing, "session_id": key()})
			if st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		})
	})
	b.Run(prefix+"grant", func(b *testing.B) {
		loop(b, func(int) {
			if st, body := srv.do(b, "PUT", path+"/auto-run", map[string]any{"enabled": true}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		})
	})
	b.Run(prefix+"revoke", func(b *testing.B) {
		loop(b, func(int) {
			if st, body := srv.do(b, "DELETE", path+"/auto-run", map[string]any{}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		})
	})
	b.Run(prefix+"promote", func(b *testing.B) {
		loop(b, func(i int) {
			h := hashes[1-i%2]
			if st, body := srv.do(b, "POST", path+"/versions/"+h+"/promote", map[string]any{}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		})
	})
}

// captureConcurrent captures from 16 clients at once, each capture under
// its own key, through the store and over HTTP, and checks that the
// frequencies grew by exactly the number of captures. Two cases: all 16
// clients on one procedure (procs=1: every capture waits for the one
// before it to commit, so the rate is bounded by commit latency) and each
// client on a procedure of its own (procs=16, the realistic case). Aim
// (Neo4j): ≥ 300 captures/s.
func captureConcurrent(b *testing.B, t *target, srv *server, n int) {
	for _, procs := range []int{1, 16} {
		captureSpread(b, t, srv, n, procs)
	}
}

// captureSpread is captureConcurrent with the clients spread over procs
// procedures (client c captures procedure c mod procs).
func captureSpread(b *testing.B, t *target, srv *server, n, procs int) {
	const clients = 16
	ctx := context.Background()
	ins := make([]procedures.CaptureInput, procs)
	codes := make([]string, procs)
	names := map[string][]string{"store": make([]string, procs), "http": make([]string, procs)}
	for i := range procs {
		sig := []string{fmt.Sprintf("%scc%d_%d_%d", t.ns, n, procs, i), t.ns + "z"}
		ins[i] = captureInput(sig, "h", key(), time.Now())
		if _, err := t.store.Capture(ctx, ins[i]); err != nil {
			b.Fatal(err)
		}
		names["store"][i] = ins[i].Name
		codes[i] = code(t.ns, fmt.Sprintf("hcc%d_%d_%d", n, procs, i), "z")
		out, err := srv.svc.Capture(ctx, procedures.CaptureRequest{Code: codes[i]})
		if err != nil {
			b.Fatal(err)
		}
		names["http"][i] = out.Procedure.Name
	}
	total := func(b *testing.B, via string) int64 {
		var sum int64
		for _, name := range names[via] {
			p, err := t.store.Get(ctx, name)
			if err != nil {
				b.Fatal(err)
			}
			sum += p.Frequency
		}
		return sum
	}
	for _, via := range []string{"store", "http"} {
		b.Run(fmt.Sprintf("%s/n=%d/concurrent/%s/clients=%d/procs=%d", t.name, n, via, clients, procs), func(b *testing.B) {
			before := total(b, via)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for c := range clients {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if via == "store" {
							in := ins[c%procs]
							in.UsageKey, in.At = key(), time.Now()
							if _, err := t.store.Capture(ctx, in); err != nil {
								b.Error(err)
								return
							}
							continue
						}
						if st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": codes[c%procs], "session_id": key()}); st != 200 {
							b.Errorf("%d %s", st, body)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "captures/s")
			if got := total(b, via) - before; got != int64(b.N) {
				b.Fatalf("frequencies grew by %d after %d captures under distinct keys", got, b.N)
			}
		})
	}
}

// BenchmarkStores runs every store benchmark on each store at each N in
// ascending order (the stores only grow): writes through the store, over
// HTTP and concurrently, Find pages, and the planner view. Select a part
// with -bench, e.g. 'Stores/neo4j/n=1000/http' or 'Stores/.*/find'.
func BenchmarkStores(b *testing.B) {
	for _, n := range sizes() {
		for _, t := range targets(b) {
			t.grow(b, n)
			srv := serve(b, t.store, nil)
			writeStore(b, t, n)
			writeHTTP(b, t, srv, n)
			captureConcurrent(b, t, srv, n)
			find(b, t, n)
			plannerView(b, t, srv, n)
		}
	}
}
