package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/procgraph/procgraph/internal/cputime"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/procedures"
)

var pathOps = flag.String("bench.ops", "", "BenchmarkRequestPath: run only the operations whose name matches this regexp (a profile of one)")

// BenchmarkRequestPath runs each write request over HTTP beside the store
// call it makes: a capture of an existing and of a new procedure (the store
// calls replay the inputs the service makes for the same requests: its
// catalogue, its suggestion's page, the code and its parameters), a grant
// and a revoke (the very call the service makes: the catalogue it holds,
// the grant's binding); beside them the fixed cost of a bare HTTP request
// of a grant's size on the same server (bareHandler), and on Neo4j the
// driver's floors: a one-statement
// write as a managed transaction (ExecuteWrite: BEGIN, then RUN with PULL,
// then COMMIT), as an auto-commit one (RUN with PULL), and the managed
// one behind the bare request (the transport's floor around a
// statement: floor/http_managed's ratio). Interleaved as
// BenchmarkWritePath (rounds of reps, the order rotating); per operation
// the median, the ratio of a request to its store call, this process's CPU,
// the server's own mean time and the statements run. -bench.ops selects
// operations (a CPU profile of one).
func BenchmarkRequestPath(b *testing.B) {
	for _, n := range sizes() {
		for _, t := range targets(b) {
			// Filled only for the sizes and stores that run (-bench
			// selects one).
			b.Run(fmt.Sprintf("%s/n=%d", t.name, n), func(b *testing.B) {
				t.grow(b, n)
				requestPath(b, t, n)
			})
		}
	}
}

func requestPath(b *testing.B, t *target, n int) {
	const reps = 5
	ctx := countStatements(context.Background())
	srv := serve(b, t.store, nil)
	capture := func(label string) *procedures.Procedure {
		out, err := srv.svc.Capture(ctx, procedures.CaptureRequest{Code: code(t.ns, fmt.Sprintf("%s%d", label, n), "z")})
		if err != nil {
			b.Fatal(err)
		}
		return out.Procedure
	}
	// A read-only procedure, granted auto-run, to invoke (its catalogue
	// first: the grants below are prepared under it).
	if _, err := srv.svc.PutCatalogue(ctx, []procedures.Tool{{Name: t.ns + "get", ReadOnly: true}, {Name: t.ns + "fetch", ReadOnly: true}}, "bench"); err != nil {
		b.Fatal(err)
	}
	ro, err := srv.svc.Capture(ctx, procedures.CaptureRequest{Code: fmt.Sprintf("x = tools.%sget(task_id=task_id)\nreturn tools.%sfetch(x=x)", t.ns, t.ns)})
	if err != nil {
		b.Fatal(err)
	}
	roPath := "/v1/procedures/" + url.PathEscape(ro.Procedure.Name)
	if st, body := srv.do(b, "PUT", roPath+"/auto-run", map[string]any{"enabled": true}); st != 200 {
		b.Fatalf("%d %s", st, body)
	}
	viaHTTP, viaStore := capture("rphttp"), capture("rpstore")
	grantPath := "/v1/procedures/" + url.PathEscape(viaHTTP.Name) + "/auto-run"
	// The store call's arguments as the service makes them: its grant's
	// binding (from a grant over HTTP) and the catalogue it holds.
	st, answer := srv.do(b, "PUT", "/v1/procedures/"+url.PathEscape(viaStore.Name)+"/auto-run", map[string]any{"enabled": true})
	if st != 200 {
		b.Fatalf("%d %s", st, answer)
	}
	granted, err := srv.svc.Get(ctx, viaStore.Name)
	if err != nil || granted.Grant == nil {
		b.Fatalf("%+v %v", granted, err)
	}
	binding := granted.Grant.Binding
	cat, err := srv.svc.Catalogue(ctx)
	if err != nil {
		b.Fatal(err)
	}
	// The bare request: the same server, the same body, an answer of the
	// same bytes, nothing else.
	bare := httpServer(b, bareHandler(answer, nil))
	// The store's captures replay the inputs the service makes for the
	// same requests (recorded through a service of its own over the same
	// store): an existing procedure's, and a new one's made before each
	// call.
	recorder := newCaptureRecorder(b, t)
	storeExisting := procedures.CaptureRequest{Code: code(t.ns, fmt.Sprintf("rpsx%d", n), "z")}
	recorder.input(b, storeExisting, false)
	existing := recorder.input(b, storeExisting, true)
	var fresh procedures.CaptureInput
	httpExisting := code(t.ns, fmt.Sprintf("rpex%d", n), "z")
	if st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": httpExisting}); st != 201 && st != 200 {
		b.Fatalf("%d %s", st, body)
	}
	round := runID + fmt.Sprint(seq.Add(1))
	ops := []*pathOp{
		{name: "store/capture_existing", run: func(int) {
			in := existing
			in.UsageKey, in.At = key(), time.Now()
			if res, err := t.store.Capture(ctx, in); err != nil || res.Created || !res.Counted {
				b.Fatalf("%+v %v", res, err)
			}
		}},
		{name: "store/capture_new", prepare: func(i int) {
			fresh = recorder.input(b, procedures.CaptureRequest{Code: code(t.ns, fmt.Sprintf("rpsn%d_%s_%d", n, round, i), "z")}, true)
		}, run: func(i int) {
			if res, err := t.store.Capture(ctx, fresh); err != nil || !res.Created {
				b.Fatalf("%+v %v", res, err)
			}
		}},
		{name: "http/capture_existing", floor: "store/capture_existing", run: func(int) {
			if st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": httpExisting, "session_id": key()}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		}},
		{name: "http/capture_new", floor: "store/capture_new", run: func(i int) {
			if st, body := srv.do(b, "POST", "/v1/procedures", map[string]any{"code": code(t.ns, fmt.Sprintf("rphn%d_%s_%d", n, round, i), "z")}); st != 201 {
				b.Fatalf("%d %s", st, body)
			}
		}},
		{name: "store/grant", run: func(int) {
			g := &procedures.Grant{Enabled: true, GrantedBy: "bench", GrantedAt: time.Now(), CodeHash: viaStore.CodeHash, Binding: binding}
			if _, err := t.store.SetGrant(ctx, viaStore.Name, g, viaStore.CodeHash, cat, decision(audit.KindGrant, viaStore.Name, viaStore.CodeHash)); err != nil {
				b.Fatal(err)
			}
		}},
		{name: "store/revoke", run: func(int) {
			if _, err := t.store.SetGrant(ctx, viaStore.Name, nil, viaStore.CodeHash, cat, decision(audit.KindRevoke, viaStore.Name, viaStore.CodeHash)); err != nil {
				b.Fatal(err)
			}
		}},
		{name: "http/grant", floor: "store/grant", run: func(int) {
			if st, body := srv.do(b, "PUT", grantPath, map[string]any{"enabled": true}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		}},
		{name: "http/revoke", floor: "store/revoke", run: func(int) {
			if st, body := srv.do(b, "PUT", grantPath, map[string]any{"enabled": false}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		}},
		{name: "http/invoke", run: func(int) {
			if st, body := srv.do(b, "POST", roPath+"/invoke", map[string]any{"phase": "automatic", "arguments": map[string]any{"task_id": 7}, "session_id": key()}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		}},
		{name: "http/bare", run: func(int) {
			if st, body := bare.do(b, "PUT", grantPath, map[string]any{"enabled": true}); st != 200 {
				b.Fatalf("%d %s", st, body)
			}
		}},
	}
	if t.driver != nil {
		floorTool := t.ns + "floor"
		stmt := "MERGE (t:Tool {name: $name}) SET t.floor_at = $at RETURN t.floor_at AS at"
		params := func() map[string]any { return map[string]any{"name": floorTool, "at": time.Now().UnixNano()} }
		single := func(res neo4j.ResultWithContext, err error) error {
			if err == nil {
				_, err = res.Single(ctx)
			}
			return err
		}
		managed := func(ctx context.Context) error {
			sess := t.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite, DatabaseName: t.db})
			defer sess.Close(ctx)
			_, err := neo4j.ExecuteWrite(ctx, sess, func(tx neo4j.ManagedTransaction) (bool, error) { return true, single(tx.Run(ctx, stmt, params())) })
			return err
		}
		// The transport's floor around a statement: the bare request
		// whose handler runs floor/managed's write before it answers.
		bareWrite := httpServer(b, bareHandler(answer, managed))
		ops = append(ops,
			&pathOp{name: "floor/managed", run: func(int) {
				if err := managed(ctx); err != nil {
					b.Fatal(err)
				}
			}},
			&pathOp{name: "floor/http_managed", floor: "floor/managed", run: func(int) {
				if st, body := bareWrite.do(b, "PUT", grantPath, map[string]any{"enabled": true}); st != 200 {
					b.Fatalf("%d %s", st, body)
				}
			}},
			&pathOp{name: "floor/autocommit", run: func(int) {
				sess := t.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeWrite, DatabaseName: t.db})
				defer sess.Close(ctx)
				if err := single(sess.Run(ctx, stmt, params())); err != nil {
					b.Fatal(err)
				}
			}})
	}
	if *pathOps != "" {
		re := regexp.MustCompile(*pathOps)
		ops = slices.DeleteFunc(ops, func(op *pathOp) bool { return !re.MatchString(op.name) })
	}
	for w := range 3 { // warm up
		for _, op := range ops {
			if op.prepare != nil {
				op.prepare(w)
			}
			op.run(w)
		}
	}
	r := 0
	for b.Loop() {
		for k := range ops {
			op := ops[(k+r)%len(ops)]
			before, server0 := statements.Load(), serverTime.Load()
			stmtNames.Store(nil)
			var cpu time.Duration
			for j := range reps {
				i := 3 + r*reps + j
				if op.prepare != nil {
					op.prepare(i) // on a context that counts no statement
				}
				cpu0 := cputime.Process()
				start := time.Now()
				op.run(i)
				op.durs = append(op.durs, time.Since(start))
				cpu += cputime.Process() - cpu0
			}
			op.cpu += cpu
			op.stmts += statements.Load() - before
			op.server += time.Duration(serverTime.Load() - server0)
			if names := stmtNames.Load(); names != nil && op.names == nil {
				op.names = (*names)[:len(*names)/reps]
			}
			op.runs += reps
		}
		r++
	}
	b.StopTimer()
	load := loadAverage()
	p50 := map[string]time.Duration{}
	for _, op := range ops {
		slices.Sort(op.durs)
		p50[op.name] = op.durs[len(op.durs)/2]
	}
	var tab strings.Builder
	fmt.Fprintf(&tab, "%s n=%d, %d rounds of %d, load average %.2f %.2f %.2f\n", t.name, n, r, reps, load[0], load[1], load[2])
	fmt.Fprintf(&tab, "%-20s %9s %9s %9s %9s %14s %8s  %s\n", "operation", "p50-ms", "p90-ms", "x-store", "cpu-us", "server-mean-ms", "stmts", "statements")
	for _, op := range ops {
		med, p90 := p50[op.name], op.durs[len(op.durs)*9/10]
		ratio := "-"
		if f, ok := p50[op.floor]; ok && f > 0 {
			ratio = fmt.Sprintf("%.2f", float64(med)/float64(f))
			b.ReportMetric(float64(med)/float64(f), op.name+"-x-store")
		}
		cpu := float64(op.cpu.Microseconds()) / float64(op.runs)
		b.ReportMetric(float64(med.Microseconds())/1000, op.name+"-p50-ms")
		server := "-"
		if op.stmts > 0 {
			server = fmt.Sprintf("%.3f", float64(op.server.Microseconds())/1000/float64(op.runs))
		}
		fmt.Fprintf(&tab, "%-20s %9.3f %9.3f %9s %9.0f %14s %8.1f  %s\n", op.name, float64(med.Microseconds())/1000, float64(p90.Microseconds())/1000,
			ratio, cpu, server, float64(op.stmts)/float64(op.runs), strings.Join(op.names, " "))
	}
	b.Log("\n" + tab.String())
}

// bareHandler reads and decodes a grant's body, runs work (nil: none) and
// answers the bytes answer: a request's fixed cost, with the statement
// work runs.
func bareHandler(answer []byte, work func(context.Context) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Enabled bool `json:"enabled"`
		}
		data, err := io.ReadAll(r.Body)
		if err == nil {
			err = json.Unmarshal(data, &body)
		}
		if err == nil && work != nil {
			err = work(r.Context())
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	})
}

// httpServer serves h on loopback for the benchmark b, with a client as
// serve's.
func httpServer(b *testing.B, h http.Handler) *server {
	b.Helper()
	hs := httptest.NewServer(h)
	b.Cleanup(hs.Close)
	return &server{url: hs.URL, client: &http.Client{Transport: &http.Transport{MaxIdleConns: 32, MaxIdleConnsPerHost: 32}, Timeout: time.Minute}}
}
