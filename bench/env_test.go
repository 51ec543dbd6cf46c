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
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/procgraph/procgraph/api"
	"github.com/procgraph/procgraph/cypher"
	"github.com/procgraph/procgraph/graph/embedded"
	neo4jstore "github.com/procgraph/procgraph/graph/neo4j"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

var (
	big   = flag.Bool("bench.big", false, "also run at N = 100k procedures (the fill takes a while on Neo4j)")
	fsync = flag.Bool("bench.sync", false, "the embedded store fsyncs every commit (its default in production); off by default so the figures are the code's, not the disk's")
)

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
}

// proc is the prefix of every procedure name this run writes.
func (t *target) proc() string { return procedures.ProcPrefix + t.ns }

// targets returns the embedded store and, with NEO4J_URI, the Neo4j one.
func targets(b *testing.B) []*target {
	b.Helper()
	ts := []*target{embeddedTarget(b)}
	if t := neo4jTarget(b); t != nil {
		ts = append(ts, t)
	}
	return ts
}

func namespace(tb testing.TB) string {
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		tb.Fatal(err)
	}
	return "pgb" + hex.EncodeToString(r[:]) + "_"
}

func embeddedTarget(b *testing.B) *target {
	b.Helper()
	s, err := embedded.Open(filepath.Join(b.TempDir(), "bench.db"), embedded.Options{NoSync: !*fsync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	t := &target{name: "embedded", store: s, ns: namespace(b)}
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
	}
	return t
}

// neo4jTarget opens the Neo4j store at NEO4J_URI (nil without it) and
// deletes this run's namespace at the end.
func neo4jTarget(b *testing.B) *target {
	b.Helper()
	uri := os.Getenv("NEO4J_URI")
	if uri == "" {
		b.Log("NEO4J_URI is not set: Neo4j benchmarks are skipped")
		return nil
	}
	ctx := context.Background()
	cfg := neo4jstore.Config{URI: uri, Username: os.Getenv("NEO4J_USERNAME"), Password: os.Getenv("NEO4J_PASSWORD"), Database: os.Getenv("NEO4J_DATABASE")}
	s, err := neo4jstore.Open(ctx, cfg)
	if err != nil {
		b.Fatalf("neo4j: %v", err)
	}
	b.Cleanup(func() { _ = s.Close() })
	auth := neo4j.NoAuth()
	if cfg.Username != "" {
		auth = neo4j.BasicAuth(cfg.Username, cfg.Password, "")
	}
	d, err := neo4j.NewDriverWithContext(uri, auth)
	if err != nil {
		b.Fatal(err)
	}
	t := &target{name: "neo4j", store: s, ns: namespace(b), driver: d}
	b.Cleanup(func() {
		start := time.Now()
		t.run(b, cfg.Database, "cleanup", map[string]any{"ns": t.ns, "proc": t.proc()})
		b.Logf("neo4j: deleted namespace %s in %v", t.ns, time.Since(start).Round(time.Millisecond))
		_ = d.Close(ctx)
	})
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
			t.run(tb, cfg.Database, "fill", map[string]any{"rows": rows})
		}
	}
	return t
}

// run runs the statement of testdata/<name>.cypher in an implicit
// transaction (cleanup commits in batches).
func (t *target) run(tb testing.TB, db, name string, params map[string]any) {
	tb.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", name+".cypher"))
	if err != nil {
		tb.Fatal(err)
	}
	stmts := cypher.Split(string(text))
	ctx := context.Background()
	sess := t.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: db})
	defer sess.Close(ctx)
	res, err := sess.Run(ctx, stmts[0], params)
	if err == nil {
		_, err = res.Consume(ctx)
	}
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
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

// serve starts the HTTP API over s (mutating auto-run on, so that grants
// need no catalogue: benchmarks never replace the shared catalogue), with
// runner replaying and a no-op upstream.
func serve(b *testing.B, s procedures.Store, runner sandbox.Runner) *server {
	b.Helper()
	svc := procedures.NewService(s, procedures.Options{AllowMutatingAutorun: true})
	if runner == nil {
		runner = sandbox.NewInProcess()
	}
	disp := replay.DispatcherFunc(func(ctx context.Context, tool string, args map[string]any) (any, error) {
		return map[string]any{"ok": true}, nil
	})
	rp := replay.New(svc, runner, disp, replay.Options{})
	srv, err := api.New(api.Config{Service: svc, Replayer: rp})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(hs.Close)
	return &server{url: hs.URL, svc: svc, rp: rp,
		client: &http.Client{Transport: &http.Transport{MaxIdleConns: 32, MaxIdleConnsPerHost: 32}, Timeout: time.Minute}}
}
