package bench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"runtime/metrics"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/audit"
	neo4jstore "github.com/procgraph/procgraph/graph/neo4j"
	"github.com/procgraph/procgraph/internal/cputime"
	"github.com/procgraph/procgraph/procedures"
)

// statements counts the Neo4j statements the store runs for a context
// carrying countStatements (benchmarks run one operation at a time, so the
// difference around an operation is its count); lastNames holds their names.
var (
	statements atomic.Int64
	stmtNames  atomic.Pointer[[]string]
	// serverTime sums the server's own time of those statements
	// (ResultAvailableAfter + ResultConsumedAfter, whole milliseconds).
	serverTime atomic.Int64
)

// countStatements makes the Neo4j store calls ctx is passed to count their
// statements in statements and stmtNames.
func countStatements(ctx context.Context) context.Context {
	return neo4jstore.WithQueryObserver(ctx, func(name string, available, consumed time.Duration) {
		statements.Add(1)
		serverTime.Add(int64(available + consumed))
		for {
			old := stmtNames.Load()
			var names []string
			if old != nil {
				names = append(slices.Clip(*old), name)
			} else {
				names = []string{name}
			}
			if stmtNames.CompareAndSwap(old, &names) {
				return
			}
		}
	})
}

// pathOp is one operation of BenchmarkWritePath.
type pathOp struct {
	name string
	run  func(i int)
	// prepare, when set, makes run(i)'s arguments before it runs, neither
	// timed nor in its CPU nor its statements (BenchmarkRequestPath).
	prepare func(i int)
	// floor names the floor the operation is compared with ("" none).
	floor         string
	durs          []time.Duration
	cpu           time.Duration
	stmts         int64
	server        time.Duration
	names         []string
	allocs, bytes uint64
	runs          int
}

// BenchmarkWritePath runs the write path and its floors interleaved, on
// each store at each N (-bench.big: 1k and 100k): capture of an existing
// and of a new procedure, a grant and a revoke, through the store and over HTTP,
// store.Find top-25, and on Neo4j the floors in the same process run: a
// single-statement managed write transaction through the official driver
// (ExecuteWrite, MERGE … SET … RETURN) and an empty managed read
// transaction (ExecuteRead, RETURN 1). Each round runs every operation
// reps times, in an order that rotates by round, so the load of a shared
// machine hits every side alike. For each operation it logs the median,
// the ratio to its floor (writes to the write floor, Find to the read
// floor, as medians), the process CPU per operation (getrusage: this
// process is the client too, so the HTTP figures include the client's
// encoding and the loopback), the heap allocations per operation and, on
// Neo4j, the statements it ran (and their names) — the breakdown of
// docs/benchmarks.md.
func BenchmarkWritePath(b *testing.B) {
	for _, n := range sizes() {
		for _, t := range targets(b) {
			t.grow(b, n)
			b.Run(fmt.Sprintf("%s/n=%d", t.name, n), func(b *testing.B) { writePath(b, t, n) })
		}
	}
}

func writePath(b *testing.B, t *target, n int) {
	const reps = 5
	ctx := countStatements(context.Background())
	srv := serve(b, t.store, nil)
	existing := t.fillInput(n / 2)
	granted := twoVersions(b, t, fmt.Sprintf("wpgrant%d", n))
	httpExisting := code(t.ns, fmt.Sprintf("wpex%d", n), "z")
	if st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": httpExisting}); st != 201 && st != 200 {
		b.Fatalf("%d %s", st, body)
	}
	out, err := srv.svc.Capture(ctx, procedures.CaptureRequest{Code: code(t.ns, fmt.Sprintf("wpgr%d", n), "z")})
	if err != nil {
		b.Fatal(err)
	}
	grantPath := "/v1/procedures/" + url.PathEscape(out.Procedure.Name) + "/auto-run"
	// A read-only procedure, granted auto-run, to invoke and to send as a
	// turn (automatic phase: it runs at once).
	if _, err := srv.svc.PutCatalogue(ctx, []procedures.Tool{{Name: t.ns + "get", ReadOnly: true}, {Name: t.ns + "fetch", ReadOnly: true}}, "bench"); err != nil {
		b.Fatal(err)
	}
	readOnly := fmt.Sprintf("x = tools.%sget(task_id=task_id)\nreturn tools.%sfetch(x=x)", t.ns, t.ns)
	ro, err := srv.svc.Capture(ctx, procedures.CaptureRequest{Code: readOnly})
	if err != nil {
		b.Fatal(err)
	}
	roPath := "/v1/procedures/" + url.PathEscape(ro.Procedure.Name)
	if st, body := srv.do(b, "PUT", roPath+"/auto-run", map[string]any{"enabled": true}); st != 200 {
		b.Fatalf("%d %s", st, body)
	}
	round := runID + fmt.Sprint(seq.Add(1))
	ops := []*pathOp{
		{name: "store/capture_existing", floor: "floor/write", run: func(int) {
			in := existing
			in.UsageKey, in.At = key(), time.Now()
			if res, err := t.store.Capture(ctx, in); err != nil || res.Created || !res.Counted {
				b.Fatalf("%+v %v", res, err)
			}
		}},
		{name: "store/capture_new", floor: "floor/write", run: func(i int) {
			in := captureInput([]string{fmt.Sprintf("%swpn%d_%s_%d", t.ns, n, round, i), t.ns + "z"}, "h", key(), time.Now())
			if res, err := t.store.Capture(ctx, in); err != nil || !res.Created {
				b.Fatalf("%+v %v", res, err)
			}
		}},
		{name: "store/grant", floor: "floor/write", run: func(int) {
			g := &procedures.Grant{Enabled: true, GrantedBy: "bench", GrantedAt: time.Now(), CodeHash: "va"}
			if _, err := t.store.SetGrant(ctx, granted, g, "va", nil, decision(audit.KindGrant, granted, "va")); err != nil {
				b.Fatal(err)
			}
		}},
		{name: "store/revoke", floor: "floor/write", run: func(int) {
			if _, err := t.store.SetGrant(ctx, granted, nil, "va", nil, decision(audit.KindRevoke, granted, "va")); err != nil {
				b.Fatal(err)
			}
		}},
		{name: "store/find_top25", floor: "floor/read", run: func(int) {
			if ps, _, err := t.store.Find(ctx, procedures.Query{Limit: 25}); err != nil || len(ps) != 25 {
				b.Fatalf("%d %v", len(ps), err)
			}
		}},
		{name: "http/capture_existing", floor: "floor/write", run: func(int) {
			if st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": httpExisting, "session_id": key()}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		}},
		{name: "http/capture_new", floor: "floor/write", run: func(i int) {
			if st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": code(t.ns, fmt.Sprintf("wphn%d_%s_%d", n, round, i), "z")}); st != 201 {
				b.Fatalf("%d %s", st, body)
			}
		}},
		{name: "http/grant", floor: "floor/write", run: func(int) {
			if st, body := srv.do(b, "PUT", grantPath, map[string]any{"enabled": true}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		}},
		{name: "http/revoke", floor: "floor/write", run: func(int) {
			if st, body := srv.do(b, "PUT", grantPath, map[string]any{"enabled": false}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		}},
		{name: "http/invoke", floor: "floor/write", run: func(int) {
			if st, body := srv.do(b, "POST", roPath+"/invoke", map[string]any{"phase": "automatic", "arguments": map[string]any{"task_id": 7}, "session_id": key()}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		}},
		{name: "http/turn_interactive", floor: "floor/write", run: func(int) {
			// An interactive turn of one call of the granted procedure, no
			// session policy: run at once on its grant.
			if st, body := srv.do(b, "POST", "/v1/turns", map[string]any{"code": "return tools." + ro.Procedure.Name + "(task_id=task_id)", "phase": "interactive", "arguments": map[string]any{"task_id": 7}, "session_id": key()}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		}},
		{name: "http/turn", floor: "floor/write", run: func(int) {
			if st, body := srv.do(b, "POST", "/v1/turns", map[string]any{"code": readOnly, "phase": "automatic", "arguments": map[string]any{"task_id": 7}, "session_id": key()}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		}},
	}
	if t.driver != nil {
		floorTool := t.ns + "floor"
		ops = append(ops,
			&pathOp{name: "floor/write", run: func(int) {
				sess := t.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite, DatabaseName: t.db})
				defer sess.Close(ctx)
				if _, err := neo4j.ExecuteWrite(ctx, sess, func(tx neo4j.ManagedTransaction) (any, error) {
					res, err := tx.Run(ctx, "MERGE (t:Tool {name: $name}) SET t.floor_at = $at RETURN t.floor_at AS at", map[string]any{"name": floorTool, "at": time.Now().UnixNano()})
					if err != nil {
						return nil, err
					}
					return res.Single(ctx)
				}); err != nil {
					b.Fatal(err)
				}
			}},
			&pathOp{name: "floor/read", run: func(int) {
				sess := t.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeRead, DatabaseName: t.db})
				defer sess.Close(ctx)
				if _, err := neo4j.ExecuteRead(ctx, sess, func(tx neo4j.ManagedTransaction) (any, error) {
					res, err := tx.Run(ctx, "RETURN 1 AS one", nil)
					if err != nil {
						return nil, err
					}
					return res.Single(ctx)
				}); err != nil {
					b.Fatal(err)
				}
			}})
	}
	for w := range 3 { // warm up
		for _, op := range ops {
			op.run(w)
		}
	}
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	var load [3]float64
	r := 0
	for b.Loop() {
		for k := range ops {
			op := ops[(k+r)%len(ops)]
			before := statements.Load()
			stmtNames.Store(nil)
			metrics.Read(samples)
			objs, byts := samples[0].Value.Uint64(), samples[1].Value.Uint64()
			cpu0 := cputime.Process()
			for j := range reps {
				start := time.Now()
				op.run(3 + r*reps + j)
				op.durs = append(op.durs, time.Since(start))
			}
			op.cpu += cputime.Process() - cpu0
			metrics.Read(samples)
			op.allocs += samples[0].Value.Uint64() - objs
			op.bytes += samples[1].Value.Uint64() - byts
			op.stmts += statements.Load() - before
			if names := stmtNames.Load(); names != nil && op.names == nil {
				op.names = (*names)[:len(*names)/reps]
			}
			op.runs += reps
		}
		r++
	}
	b.StopTimer()
	load = loadAverage()
	p50 := map[string]time.Duration{}
	for _, op := range ops {
		slices.Sort(op.durs)
		p50[op.name] = op.durs[len(op.durs)/2]
	}
	var tab strings.Builder
	fmt.Fprintf(&tab, "%s n=%d, %d rounds of %d, load average %.2f %.2f %.2f\n", t.name, n, r, reps, load[0], load[1], load[2])
	fmt.Fprintf(&tab, "%-24s %9s %9s %9s %9s %9s %8s  %s\n", "operation", "p50-ms", "p90-ms", "x-floor", "cpu-us", "allocs", "stmts", "statements")
	for _, op := range ops {
		med, p90 := p50[op.name], op.durs[len(op.durs)*9/10]
		ratio := "-"
		if f, ok := p50[op.floor]; ok && f > 0 {
			ratio = fmt.Sprintf("%.2f", float64(med)/float64(f))
			b.ReportMetric(float64(med)/float64(f), op.name+"-x-floor")
		}
		cpu := float64(op.cpu.Microseconds()) / float64(op.runs)
		b.ReportMetric(float64(med.Microseconds())/1000, op.name+"-p50-ms")
		b.ReportMetric(cpu, op.name+"-cpu-us")
		fmt.Fprintf(&tab, "%-24s %9.3f %9.3f %9s %9.0f %9d %8.1f  %s\n", op.name, float64(med.Microseconds())/1000, float64(p90.Microseconds())/1000,
			ratio, cpu, op.allocs/uint64(op.runs), float64(op.stmts)/float64(op.runs), strings.Join(op.names, " "))
	}
	b.Log("\n" + tab.String())
}

// loadAverage reads /proc/loadavg (zeros where it cannot).
func loadAverage() (l [3]float64) {
	data, err := os.ReadFile("/proc/loadavg")
	if err == nil {
		_, _ = fmt.Sscan(string(data), &l[0], &l[1], &l[2])
	}
	return l
}
