package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/embedded"
	neo4jstore "github.com/procgraph/procgraph/graph/neo4j"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/sandbox/sandboxtest"
)

var (
	big   = flag.Bool("bench.big", false, "also run at N = 100k procedures (the fill takes a while on Neo4j)")
	keep  = flag.Bool("bench.keep", false, "on Neo4j, use the namespace "+keptNS+" and keep it after the run (the next run reuses its fill; delete it with testdata/cleanup.cypher)")
	fsync = flag.Bool("bench.sync", false, "the embedded store fsyncs every commit (its default in production); off by default so the figures are the code's, not the disk's")
)

// keptNS is the Neo4j namespace of -bench.keep.
const keptNS = "pgbkeep_"

// sizes are the N the benchmarks run at.
func sizes() []int {
	if *big {
		return []int{1_000, 100_000}
	}
	return []int{1_000}
}

// target is one store under benchmark, with everything this run writes
// under the namespace ns.
type target struct {
	name   string
	store  procedures.Store
	ns     string // prefix of every tool and cause name this run writes
	have   int    // fixture procedures filled so far
	fill   func(tb testing.TB, from, to int)
	driver neo4j.DriverWithContext // Neo4j only: fill and cleanup
	db     string
}

// proc is the prefix of every procedure name this run writes.
func (t *target) proc() string { return procedures.ProcPrefix + t.ns }

// shared holds the targets of this process: every benchmark uses the same
// stores (and namespace), so each N is filled once; TestMain closes them and
// deletes the namespace.
var shared struct {
	once    sync.Once
	ts      []*target
	err     error
	cleanup []func()
}

// pool is the warm worker pool of BenchmarkReplay.
var pool *sandbox.Pool

func TestMain(m *testing.M) {
	if delay, ok := os.LookupEnv(stdioDelayEnv); ok {
		os.Exit(runStdioProxy(delay, os.Args[1:]))
	}
	if os.Getenv(bareHTTPEnv) == "1" {
		os.Exit(runBareHTTP())
	}
	code := sandboxtest.Main(m, sandbox.PoolConfig{Size: 2}, &pool)
	for i := len(shared.cleanup) - 1; i >= 0; i-- {
		shared.cleanup[i]()
	}
	os.Exit(code)
}

// targets returns the embedded store and, with NEO4J_URI, the Neo4j one.
func targets(b *testing.B) []*target {
	b.Helper()
	shared.once.Do(func() {
		var t *target
		if t, shared.err = embeddedTarget(); shared.err != nil {
			return
		}
		shared.ts = append(shared.ts, t)
		if t, shared.err = neo4jTarget(); shared.err == nil && t != nil {
			shared.ts = append(shared.ts, t)
		}
	})
	if shared.err != nil {
		b.Fatal(shared.err)
	}
	if len(shared.ts) == 1 {
		b.Log("NEO4J_URI is not set: Neo4j benchmarks are skipped")
	}
	return shared.ts
}

func namespace() string {
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic(err)
	}
	return "pgb" + hex.EncodeToString(r[:]) + "_"
}

func embeddedTarget() (*target, error) {
	dir, err := os.MkdirTemp("", "procgraph-bench-")
	if err != nil {
		return nil, err
	}
	s, err := embedded.Open(filepath.Join(dir, "bench.db"), embedded.Options{NoSync: !*fsync})
	if err != nil {
		return nil, err
	}
	shared.cleanup = append(shared.cleanup, func() { _ = s.Close(); _ = os.RemoveAll(dir) })
	t := &target{name: "embedded", store: s, ns: namespace()}
	t.fill = func(tb testing.TB, from, to int) {
		for lo := from; lo < to; lo += 2000 {
			hi := min(lo+2000, to)
			ins := make([]procedures.CaptureInput, 0, hi-lo)
			for i := lo; i < hi; i++ {
				ins = append(ins, t.fillInput(i))
			}
			if err := s.CaptureBatch(context.Background(), ins); err != nil {
				tb.Fatalf("fill: %v", err)
			}
		}
		// A search waits for the search index to take in the fill, so that
		// its background work is not in the figures that follow.
		if _, _, err := s.Find(context.Background(), procedures.Query{Search: []string{"benchmark"}, Limit: 1}); err != nil {
			tb.Fatalf("fill: %v", err)
		}
	}
	return t, nil
}

// neo4jTarget opens the Neo4j store at NEO4J_URI (nil without it); its
// cleanup deletes this run's namespace.
func neo4jTarget() (*target, error) {
	uri := os.Getenv("NEO4J_URI")
	if uri == "" {
		return nil, nil
	}
	ctx := context.Background()
	cfg := neo4jstore.Config{URI: uri, Username: os.Getenv("NEO4J_USERNAME"), Password: os.Getenv("NEO4J_PASSWORD"), Database: os.Getenv("NEO4J_DATABASE")}
	s, err := neo4jstore.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("neo4j: %w", err)
	}
	auth := neo4j.NoAuth()
	if cfg.Username != "" {
		auth = neo4j.BasicAuth(cfg.Username, cfg.Password, "")
	}
	d, err := neo4j.NewDriverWithContext(uri, auth)
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	t := &target{name: "neo4j", store: s, ns: namespace(), driver: d, db: cfg.Database}
	if *keep {
		t.ns = keptNS
		recs, err := t.query("count", map[string]any{"proc": t.proc()})
		if err != nil {
			return nil, err
		}
		n, _ := recs[0].Get("procedures")
		have, _ := n.(int64)
		t.have = int(have)
		shared.cleanup = append(shared.cleanup, func() { _ = s.Close(); _ = d.Close(ctx) })
		fmt.Fprintf(os.Stderr, "bench: neo4j namespace %s kept, holding %d procedures\n", t.ns, t.have)
	} else {
		shared.cleanup = append(shared.cleanup, t.deleteNamespace(s))
	}
	t.fill = func(tb testing.TB, from, to int) {
		for lo := from; lo < to; lo += 5000 {
			hi := min(lo+5000, to)
			rows := make([]map[string]any, 0, hi-lo)
			for i := lo; i < hi; i++ {
				in := t.fillInput(i)
				freq := int64(1)
				keys := []string{in.UsageKey}
				if i%10 == 0 {
					freq, keys = 2, append(keys, in.UsageKey+"b")
				}
				rows = append(rows, map[string]any{"name": in.Name, "signature": in.Signature, "summary": in.Version.Summary,
					"frequency": freq, "keys": keys, "at": in.At.UTC(), "hash": in.Version.CodeHash, "code": in.Version.Code})
			}
			if err := t.run("fill", map[string]any{"rows": rows}); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return t, nil
}

// deleteNamespace returns the cleanup that deletes this run's namespace
// and closes s and the driver.
func (t *target) deleteNamespace(s *neo4jstore.Store) func() {
	return func() {
		start := time.Now()
		err := t.run("uncount", map[string]any{"proc": t.proc()})
		if err == nil {
			err = t.run("cleanup", map[string]any{"ns": t.ns, "proc": t.proc()})
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: deleting namespace %s: %v\n", t.ns, err)
		} else {
			fmt.Fprintf(os.Stderr, "bench: deleted neo4j namespace %s in %v\n", t.ns, time.Since(start).Round(time.Millisecond))
		}
		_ = s.Close()
		_ = t.driver.Close(context.Background())
	}
}

// run runs the statement of testdata/<name>.cypher in an implicit
// transaction (cleanup commits in batches).
func (t *target) run(name string, params map[string]any) error {
	_, err := t.query(name, params)
	return err
}

// query runs the statement of testdata/<name>.cypher in an implicit
// transaction and returns its records.
func (t *target) query(name string, params map[string]any) ([]*neo4j.Record, error) {
	text, err := os.ReadFile(filepath.Join("testdata", name+".cypher"))
	if err != nil {
		return nil, err
	}
	stmts := cypher.Split(cypher.Expand(string(text)))
	ctx := context.Background()
	sess := t.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: t.db})
	defer sess.Close(ctx)
	res, err := sess.Run(ctx, stmts[0], params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	recs, err := res.Collect(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return recs, nil
}

// fillInput is fixture procedure i: three tools of three vocabularies of
// this namespace, succeeded, one usage key.
func (t *target) fillInput(i int) procedures.CaptureInput {
	sig := []string{fmt.Sprintf("%sfa_%03d", t.ns, i%200), fmt.Sprintf("%sfb_%03d", t.ns, (i/200)%200), fmt.Sprintf("%sfc_%03d", t.ns, i/40000)}
	return captureInput(sig, fmt.Sprintf("h%d", i), fmt.Sprintf("fill-%d", i), time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Millisecond))
}

// grow makes the namespace hold n fixture procedures.
func (t *target) grow(b *testing.B, n int) {
	b.Helper()
	if t.have >= n {
		return
	}
	start := time.Now()
	t.fill(b, t.have, n)
	b.Logf("%s: filled %d procedures in %v", t.name, n-t.have, time.Since(start).Round(time.Millisecond))
	t.have = n
}

func captureInput(sig []string, hash, key string, at time.Time) procedures.CaptureInput {
	return procedures.CaptureInput{
		Name:      procedures.ProcPrefix + strings.Join(sig, "__"),
		Signature: sig,
		Version: procedures.Version{
			CodeHash: hash, Code: "# " + hash + "\nreturn tools." + sig[0] + "()", Dialect: "starlark",
			Status: procedures.StatusSucceeded, Summary: "benchmark procedure",
		},
		UsageKey: key,
		At:       at,
	}
}

// server is the HTTP API over a store, on loopback.
type server struct {
	url    string
	svc    *procedures.Service
	rp     *replay.Replayer
	client *http.Client
}

// serveOptions are the options of serve's service.
var serveOptions = procedures.Options{AllowMutatingAutorun: true}

// serve starts the HTTP API over s (mutating auto-run on, so that grants
// need no catalogue: benchmarks never replace the shared catalogue), with
// runner replaying and a no-op upstream.
func serve(b *testing.B, s procedures.Store, runner sandbox.Runner) *server {
	b.Helper()
	svc := procedures.NewService(s, serveOptions)
	if runner == nil {
		runner = sandbox.NewInProcess()
	}
	disp := replay.DispatcherFunc(func(ctx context.Context, tool string, args map[string]any) (any, error) {
		return map[string]any{"ok": true}, nil
	})
	rp := replay.New(svc, runner, disp, replay.Options{})
	cfg := api.Config{Service: svc, Replayer: rp}
	if ts, ok := s.(gate.TurnStore); ok {
		cfg.Turns = gate.New(rp, ts, gate.Options{})
	}
	srv, err := api.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	// Each request counts its Neo4j statements (BenchmarkWritePath).
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r.WithContext(countStatements(r.Context())))
	}))
	b.Cleanup(hs.Close)
	return &server{url: hs.URL, svc: svc, rp: rp,
		client: &http.Client{Transport: &http.Transport{MaxIdleConns: 32, MaxIdleConnsPerHost: 32}, Timeout: time.Minute}}
}
